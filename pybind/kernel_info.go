package pybind

import (
	"encoding/json"
)

// kindInfo is what KernelInfo reports of a feature kind (docs/abi.md).
type kindInfo struct {
	// Features is the kind's name, Options the key of its own parameters in
	// Compute's JSON ("" when it has none).
	Features string `json:"features"`
	Options  string `json:"options"`
	// Semirings lists the semirings it accepts.
	Semirings []string `json:"semirings"`
	// Bounds gives, for each bounded integer parameter (named as in the JSON),
	// its smallest and largest value, both included.
	Bounds map[string][2]int `json:"bounds"`
	// FeatureScale is the factor of every feature row for the given options
	// (mode "features" also returns it per row, with the row scale).
	FeatureScale float64 `json:"feature_scale"`
	// FeatureMap tells whether mode "features" gives the kernel's feature map
	// (F Fᵀ = K); NoFeatureMap says why not when it does not.
	FeatureMap   bool   `json:"feature_map"`
	NoFeatureMap string `json:"no_feature_map"`
	// Blocks tells whether the kernel is a sum over blocks of feature matrices
	// (a rule applied to each block's product) rather than one product.
	Blocks bool `json:"blocks"`
	// Classes are the graphlets of the columns of "graphlets" for the given k.
	Classes []graphletClass `json:"classes,omitempty"`
}

// kernelInfo describes kind (named name) with the options it holds.
func kernelInfo(name string, kind featureKind) (kindInfo, error) {
	key, _ := kind.options()
	why := kind.noFeatureMap()
	i := kindInfo{Features: name, Options: key, Semirings: kind.semirings(), Bounds: map[string][2]int{},
		FeatureScale: kind.featureScale(), FeatureMap: why == "", NoFeatureMap: why,
		Blocks: kind.blocks(&explicitCall{}) != nil}
	return i, kind.describe(&i)
}

// KernelInfo returns, as JSON, what the Go core's rules say of the feature kind
// kind of the explicit-feature kernels (docs/abi.md): the semirings it
// accepts, the bounds of its integer parameters, its feature rows' scale and
// whether mode "features" is its feature map (or why not), and for
// "graphlets" the graphlets of its columns. params holds the kind's own
// options as Compute takes them (the object under its options key), all or
// some of them, or "" for none: the scale and the columns depend on them.
// Python reads every bound and scale here instead of restating them.
func KernelInfo(kind, params string) (info string, err error) {
	defer guard(&err)
	k, err := lookupKind(kind)
	if err != nil {
		return "", err
	}
	if err := decodeOptions(kind, k, json.RawMessage(params), false); err != nil {
		return "", err
	}
	i, err := kernelInfo(kind, k)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(i)
	return string(b), err
}

// WLMaxIterations is the bound on the Weisfeiler–Lehman kernels' n_iter.
//
// Deprecated: use KernelInfo ("wl": bounds["n_iter"]).
func WLMaxIterations() int { return registeredBound("wl", "n_iter") }

// PropagationMaxRounds is the bound on the propagation kernels' t_max.
//
// Deprecated: use KernelInfo ("propagation": bounds["t_max"]).
func PropagationMaxRounds() int { return registeredBound("propagation", "t_max") }

// HashFeatureScale is the factor of the hash graph kernel's feature rows with
// hashes labellings: 1/√T.
//
// Deprecated: use KernelInfo ("hash" with {"hashes": T}: feature_scale).
func HashFeatureScale(hashes int) float64 {
	return (&hashKind{h: hashParams{Hashes: hashes}}).featureScale()
}

// PyramidFeatureScale is the factor of the pyramid match kernel's feature rows
// with levels levels, √(pyramid.Scale(levels)).
//
// Deprecated: use KernelInfo ("pyramid" with {"L": levels}: feature_scale).
func PyramidFeatureScale(levels int) float64 {
	return (&pyramidKind{o: pyramidParams{L: levels}}).featureScale()
}

// GraphletClasses returns the graphlets of size k in the graphlet kernel's
// column order, as JSON: a list of {"edges": [[i, j], ...], "connected": bool}
// ([] for a k out of range).
//
// Deprecated: use KernelInfo ("graphlets" with {"k": k}: classes).
func GraphletClasses(k int) string {
	b, _ := json.Marshal(graphletClasses(k))
	return string(b)
}

// registeredBound is the upper bound of parameter param of the registered kind name.
func registeredBound(name, param string) int {
	i, err := kernelInfo(name, featureKinds[name]())
	if err != nil {
		panic(err)
	}
	return i.Bounds[param][1]
}
