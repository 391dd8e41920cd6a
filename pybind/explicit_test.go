package pybind

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/graphgram/graphgram/gokernel/graphlet"
	"github.com/graphgram/graphgram/gokernel/nhash"
	"github.com/graphgram/graphgram/gokernel/nspdk"
	"github.com/graphgram/graphgram/gokernel/oddsth"
	"github.com/graphgram/graphgram/gokernel/propagation"
	"github.com/graphgram/graphgram/gokernel/pyramid"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// kernelInfoOf decodes KernelInfo(kind, params), failing the test on an error.
func kernelInfoOf(t *testing.T, kind, params string) kindInfo {
	t.Helper()
	s, err := KernelInfo(kind, params)
	if err != nil {
		t.Fatalf("KernelInfo(%q, %q): %v", kind, params, err)
	}
	var i kindInfo
	if err := json.Unmarshal([]byte(s), &i); err != nil {
		t.Fatalf("KernelInfo(%q, %q) = %s: %v", kind, params, s, err)
	}
	return i
}

// TestKernelInfoEveryKind asks KernelInfo about every registered kind: each
// answers with its name, options key, semirings, bounds, scale and feature
// map as the Go packages define them.
func TestKernelInfoEveryKind(t *testing.T) {
	both, product, minimum := []string{"product", "min"}, []string{"product"}, []string{"min"}
	want := map[string]struct {
		options   string
		semirings []string
		bounds    map[string][2]int
		featMap   bool
		blocks    bool
	}{
		"wl":    {"", both, map[string][2]int{"n_iter": {0, wl.MaxIterations}}, true, false},
		"edges": {"", both, map[string][2]int{}, true, false},
		"hash": {"hash", both, map[string][2]int{"n_iter": {0, wl.MaxIterations}, "hashes": {1, wl.MaxHashes},
			"per_hash": {1, wl.MaxPerHash}}, true, false},
		"nh":               {"nh", minimum, map[string][2]int{"rounds": {1, nhash.MaxRounds}, "bits": {1, nhash.MaxBits}}, false, true},
		"graphlets":        {"graphlets", both, map[string][2]int{"k": {graphlet.MinK, graphlet.MaxK}, "samples": {1, graphlet.MaxSamples}}, true, false},
		"propagation":      {"propagation", both, map[string][2]int{"t_max": {1, propagation.MaxRounds}}, true, false},
		"propagation_attr": {"propagation", both, map[string][2]int{"t_max": {1, propagation.MaxRounds}}, true, false},
		"nspdk":            {"nspdk", product, map[string][2]int{"r": {0, nspdk.MaxRadius}, "d": {0, nspdk.MaxDistance}}, false, true},
		"pyramid":          {"pyramid", minimum, map[string][2]int{"L": {1, pyramid.MaxLevels}, "d": {1, pyramid.MaxDim}}, true, false},
		"oddsth":           {"oddsth", both, map[string][2]int{"h": {1, oddsth.MaxHeight}}, true, false},
	}
	if len(want) != len(featureKinds) {
		t.Fatalf("%d kinds registered, %d expected here", len(featureKinds), len(want))
	}
	for name := range featureKinds {
		w, ok := want[name]
		if !ok {
			t.Fatalf("kind %q has no row in this test", name)
		}
		for _, params := range []string{"", "{}", "null"} {
			i := kernelInfoOf(t, name, params)
			if i.Features != name || i.Options != w.options || !slices.Equal(i.Semirings, w.semirings) ||
				!reflect.DeepEqual(i.Bounds, w.bounds) || i.FeatureMap != w.featMap || i.Blocks != w.blocks ||
				(i.NoFeatureMap == "") != w.featMap || (name != "pyramid" && i.FeatureScale != 1) || i.Classes != nil {
				t.Errorf("KernelInfo(%q, %q) = %+v, want %+v", name, params, i, w)
			}
		}
	}
}

// TestKernelInfoScalesAndClasses checks the scales and graphlets KernelInfo
// gives for a kind's options, and that the deprecated exports, now wrappers,
// still return what they did.
func TestKernelInfoScalesAndClasses(t *testing.T) {
	if WLMaxIterations() != wl.MaxIterations || PropagationMaxRounds() != propagation.MaxRounds {
		t.Errorf("WLMaxIterations %d, PropagationMaxRounds %d", WLMaxIterations(), PropagationMaxRounds())
	}
	for _, T := range []int{0, 1, 3, 20, 777, wl.MaxHashes} {
		old := 1 / math.Sqrt(float64(max(T, 1)))
		i := kernelInfoOf(t, "hash", fmt.Sprintf(`{"hashes": %d}`, T))
		if HashFeatureScale(T) != old || i.FeatureScale != old {
			t.Errorf("hash T=%d: HashFeatureScale %v, KernelInfo %v, want %v", T, HashFeatureScale(T), i.FeatureScale, old)
		}
	}
	for L := 1; L <= pyramid.MaxLevels; L++ {
		old := math.Sqrt(pyramid.Scale(L))
		i := kernelInfoOf(t, "pyramid", fmt.Sprintf(`{"L": %d, "d": 3}`, L))
		if PyramidFeatureScale(L) != old || i.FeatureScale != old {
			t.Errorf("pyramid L=%d: PyramidFeatureScale %v, KernelInfo %v, want %v", L, PyramidFeatureScale(L), i.FeatureScale, old)
		}
	}
	for k := 0; k <= graphlet.MaxK+1; k++ {
		// The former export, inline.
		type class struct {
			Edges     [][2]int `json:"edges"`
			Connected bool     `json:"connected"`
		}
		old := make([]class, graphlet.NumClasses(k))
		for c := range old {
			old[c].Edges, old[c].Connected = graphlet.Class(k, c)
			if old[c].Edges == nil {
				old[c].Edges = [][2]int{}
			}
		}
		b, _ := json.Marshal(old)
		if GraphletClasses(k) != string(b) {
			t.Errorf("GraphletClasses(%d) = %s, want %s", k, GraphletClasses(k), b)
		}
		s, err := KernelInfo("graphlets", fmt.Sprintf(`{"k": %d, "frequencies": true}`, k))
		switch {
		case k == 0 || k >= graphlet.MinK && k <= graphlet.MaxK:
			var i struct {
				Classes json.RawMessage `json:"classes"`
			}
			if err != nil || json.Unmarshal([]byte(s), &i) != nil || (k > 0 && string(i.Classes) != string(b)) || (k == 0 && i.Classes != nil) {
				t.Errorf("KernelInfo graphlets k=%d: %s, %v; want classes %s", k, s, err, b)
			}
		case err == nil || !strings.HasPrefix(err.Error(), "ValueError: graphlet size k must be in [3, 5]"):
			t.Errorf("KernelInfo graphlets k=%d: %s, %v; want a ValueError", k, s, err)
		}
	}
	for _, c := range []struct{ kind, params, err string }{
		{"nope", "", "ValueError: features must be one of 'edges', 'graphlets', 'hash', 'nh', 'nspdk', 'oddsth', 'propagation', 'propagation_attr', 'pyramid', 'wl', got \"nope\""},
		{"wl", `{"n_iter": 3}`, `ValueError: features "wl" takes no parameters of its own`},
		{"hash", `{"hashes": 3, "typo": 1}`, `ValueError: kernel parameters: json: unknown field "typo"`},
		{"hash", `[1]`, "ValueError: kernel parameters: json: cannot unmarshal array"},
	} {
		if _, err := KernelInfo(c.kind, c.params); err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("KernelInfo(%q, %q): %v, want %s", c.kind, c.params, err, c.err)
		}
	}
}

// explicitInts runs an int64 mode ("features", "core_numbers", "wl_labels")
// of the explicit kernel on x, with a float64 row-factor buffer of factors
// entries (0: none).
func explicitInts(mode, params string, x *packed, words, factors int) ([]int64, []float64, error) {
	out := make([]int64, words)
	rows := make([]float64, factors+1)
	_, err := Compute("explicit", mode, params, uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), 0, 0,
		uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, uintptr(unsafe.Pointer(&rows[0])), factors, 0, 0)
	return out, rows[:factors], err
}

// TestExplicitParams checks the decoding of the explicit kernel's parameters:
// what earlier Python versions sent (n_iter for every kind, core_numbers
// through a WL kernel) gives what the current ones send, and the errors.
func TestExplicitParams(t *testing.T) {
	x := testBatch(9)
	const oddOld = `{"features": "oddsth", "n_iter": 0, "node_label_col": 0, "edge_label_col": -1, "semiring": "product", "n_jobs": 1, "oddsth": {"h": 2}}`
	const oddNew = `{"features": "oddsth", "node_label_col": 0, "edge_label_col": -1, "semiring": "product", "n_jobs": 1, "oddsth": {"h": 2}}`
	a, _ := explicitCompute(t, "gram", oddOld, x, nil)
	b, _ := explicitCompute(t, "gram", oddNew, x, nil)
	if !slices.Equal(a, b) {
		t.Errorf("oddsth with and without n_iter: %v and %v", a, b)
	}
	n := int(x.nodePtr[len(x.nodePtr)-1])
	const coreOld = `{"features": "wl", "n_iter": 0, "node_label_col": -1, "edge_label_col": -1, "semiring": "product", "n_jobs": 1, "device": "cpu"}`
	old, _, err1 := explicitInts("core_numbers", coreOld, x, n, 0)
	plain, _, err2 := explicitInts("core_numbers", `{"n_jobs": 1, "device": "cpu"}`, x, n, 0)
	if err1 != nil || err2 != nil || !slices.Equal(old, plain) {
		t.Errorf("core_numbers: %v %v, %v %v", old, err1, plain, err2)
	}
	// Mode "features" writes each row's factor where a buffer is given.
	const graphlets = `{"features": "graphlets", "node_label_col": -1, "edge_label_col": -1, "semiring": "product",
		"graphlets": {"k": 3, "frequencies": %t}}`
	for _, freq := range []bool{false, true} {
		words := 2 + 10 + 2*9*4
		f, rows, err := explicitInts("features", fmt.Sprintf(graphlets, freq), x, words, 9)
		if err != nil {
			t.Fatal(err)
		}
		nnz := int(f[0])
		ptr, val := f[2:12], f[12+nnz:12+2*nnz]
		for r := range 9 {
			var sum int64
			for _, v := range val[ptr[r]:ptr[r+1]] {
				sum += v
			}
			want := 1.0
			if freq {
				want = 1 / float64(max(sum, 1))
			}
			if rows[r] != want {
				t.Errorf("frequencies %t, row %d: factor %v, want %v", freq, r, rows[r], want)
			}
		}
	}
	const hash = `{"features": "hash", "n_iter": 1, "node_label_col": -1, "edge_label_col": -1, "semiring": "product",
	"hash": {"attr_col": 0, "attr_width": 1, "projections": [0.7, -1.3, 0.4], "offsets": [0.1, 0.5, 0.9],
	"hashes": 3, "per_hash": 1, "bin_width": 1.0}}`
	if _, rows, err := explicitInts("features", hash, x, 1000, 9); err != nil || rows[4] != HashFeatureScale(3) {
		t.Errorf("hash row factors %v, %v", rows, err)
	}
	if _, _, err := explicitInts("features", hash, x, 1000, 4); err == nil {
		t.Error("a row-factor buffer of the wrong size was accepted")
	}
	for _, c := range []struct{ mode, params, err string }{
		{"gram", `{"features": "wl", "semiring": "sum"}`, "ValueError: semiring must be 'product' or 'min', got \"sum\""},
		{"gram", `{"features": "wl2", "semiring": "min"}`, "ValueError: features must be one of 'edges'"},
		{"gram", `{"features": "nh", "semiring": "product", "nh": {}}`, `ValueError: features "nh" needs semiring 'min', got "product"`},
		{"gram", `{"features": "nspdk", "semiring": "min"}`, `ValueError: features "nspdk" needs semiring 'product', got "min"`},
		{"gram", `{"features": "pyramid", "semiring": "min"}`, `ValueError: features "pyramid" needs the pyramid parameters`},
		{"gram", `{"features": "hash", "semiring": "min", "hash": null}`, `ValueError: features "hash" needs the hash parameters`},
		{"gram", `{"features": "wl", "semiring": "min", "nh": {"rounds": 1}}`, `ValueError: features "wl" takes no "nh" parameters`},
		{"gram", `{"features": "wl", "semiring": "min", "typo": 1}`, `ValueError: kernel parameters: json: unknown field "typo"`},
		{"gram", `{"features": "oddsth", "semiring": "min", "oddsth": {"hh": 1}}`, `ValueError: kernel parameters: json: unknown field "hh"`},
		{"gram", `{"semiring": "min"}`, `ValueError: features must be one of`},
		{"features", `{"features": "nspdk", "semiring": "product", "nspdk": {"r": 1, "d": 1}}`, `ValueError: features "nspdk" has no exact integer feature map`},
		{"features", `{"features": "nh", "semiring": "min", "nh": {"rounds": 1, "bits": 4}}`, `ValueError: features "nh" has no explicit feature map`},
		{"wl_labels", `{"features": "edges", "semiring": "min"}`, `ValueError: wl_labels needs features 'wl', got "edges"`},
	} {
		var err error
		if c.mode == "gram" {
			out := make([]float64, 81)
			_, err = Compute("explicit", c.mode, c.params, uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), 0, 0,
				uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, 0, 0, 0, 0)
		} else {
			_, _, err = explicitInts(c.mode, c.params, x, 1000, 0)
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%s %s: %v, want %s", c.mode, c.params, err, c.err)
		}
	}
}
