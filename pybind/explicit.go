package pybind

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/autodevice"
	"github.com/graphgram/graphgram/cuda/costmodel"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// featureKinds is the registry of the explicit-feature kernels' feature maps:
// the name Python sends as "features", and the kind that serves it. Each kind
// lives in a file of its own (kind_*.go); adding one is a Go package, that
// file, a Python module and a line here.
var featureKinds = map[string]func() featureKind{
	"wl":               newKind[wlKind],
	"edges":            newKind[edgesKind],
	"hash":             newKind[hashKind],
	"nh":               newKind[nhKind],
	"graphlets":        newKind[graphletKind],
	"propagation":      newKind[propagationKind],
	"propagation_attr": newKind[propagationAttrKind],
	"nspdk":            newKind[nspdkKind],
	"pyramid":          newKind[pyramidKind],
	"oddsth":           newKind[oddsthKind],
}

// newKind returns a new kind of type T, its options zero until decoded.
func newKind[T any, P interface {
	*T
	featureKind
}]() featureKind {
	return P(new(T))
}

// featureKind is one feature map of the explicit-feature kernels and every
// rule that goes with it. A value holds the options of one call (or of one
// KernelInfo question); kindDefaults gives the common answers.
type featureKind interface {
	// options returns the key of the kind's own parameters in the JSON
	// document and where they decode to; "" and nil for a kind without any.
	options() (key string, dst any)
	// semirings lists the semirings the kind's product may use.
	semirings() []string
	// features is the feature map of gs, one label dictionary over all of
	// them: one matrix, or one per block for a kind with a block rule.
	features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error)
	// gramScale multiplies every Gram and diagonal entry of a kernel that is
	// one product.
	gramScale() float64
	// featureScale multiplies every feature row (after the unary expansion
	// of semiring "min"), so that F Fᵀ is the kernel: √gramScale, computed
	// as the kernel's own rule says.
	featureScale() float64
	// rowScale divides each row of f (both factors of a Gram entry, the two
	// of a diagonal entry, and the features' rows) by its entry; nil: none.
	rowScale(f *sparsegram.Features) []float64
	// blocks is the rule of a kernel summed over blocks of feature matrices;
	// nil for one product.
	blocks(c *explicitCall) *blockRule
	// noFeatureMap is "" when the features of mode "features" are the
	// kernel's feature map (F Fᵀ = K), else why there is none, as a phrase
	// that follows "has": "no ... feature map: because ...".
	noFeatureMap() string
	// describe adds the kind's bounds, and what else its options fix, to i.
	describe(i *kindInfo) error
}

// kindDefaults are the answers of a kind without options, scales or blocks
// that accepts both semirings: embedded by the kinds, which override.
type kindDefaults struct{}

func (kindDefaults) options() (string, any)                  { return "", nil }
func (kindDefaults) semirings() []string                     { return []string{"product", "min"} }
func (kindDefaults) gramScale() float64                      { return 1 }
func (kindDefaults) featureScale() float64                   { return 1 }
func (kindDefaults) rowScale(*sparsegram.Features) []float64 { return nil }
func (kindDefaults) blocks(*explicitCall) *blockRule         { return nil }
func (kindDefaults) noFeatureMap() string                    { return "" }
func (kindDefaults) describe(*kindInfo) error                { return nil }

// one is the features of a kind that is one product: its one matrix.
func one(f *sparsegram.Features, err error) ([]*sparsegram.Features, error) {
	return []*sparsegram.Features{f}, err
}

// explicitParams are the parameters of the explicit-feature kernels that
// every kind shares (docs/abi.md); a kind's own are in the object under its
// options key, which the kind decodes.
type explicitParams struct {
	deviceParams
	// Features names the kind (featureKinds). It may be absent in mode
	// "core_numbers", which reads no feature map.
	Features string `json:"features"`
	// NIter is the Weisfeiler–Lehman rounds of "wl" and "hash" (0, the
	// vertex histogram, when absent); the other kinds ignore it.
	NIter        int `json:"n_iter"`
	NodeLabelCol int `json:"node_label_col"`
	EdgeLabelCol int `json:"edge_label_col"`
	// Semiring is "product" (Σ x·y) or "min" (Σ min(x, y)).
	Semiring string `json:"semiring"`
	NJobs    int    `json:"n_jobs"`
}

// optionKeys are the keys of the kinds' own parameters.
var optionKeys = func() map[string]bool {
	keys := map[string]bool{}
	for _, k := range featureKinds {
		if key, _ := k().options(); key != "" {
			keys[key] = true
		}
	}
	return keys
}()

// kindNames lists the registered kinds for messages, sorted.
func kindNames() string {
	names := slices.Sorted(maps.Keys(featureKinds))
	return "'" + strings.Join(names, "', '") + "'"
}

// lookupKind returns a new kind named name.
func lookupKind(name string) (featureKind, error) {
	newKind, ok := featureKinds[name]
	if !ok {
		return nil, inputError("features must be one of %s, got %q", kindNames(), name)
	}
	return newKind(), nil
}

// decodeOptions decodes a kind's own parameters raw (nil when absent) into
// kind; absent or null is an error for a kind that has options (need) and
// anything but that for one that has none.
func decodeOptions(name string, kind featureKind, raw json.RawMessage, need bool) error {
	key, dst := kind.options()
	absent := len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
	switch {
	case key == "" && !absent && string(bytes.TrimSpace(raw)) != "{}":
		return inputError("features %q takes no parameters of its own", name)
	case key == "" || (absent && !need):
		return nil
	case absent:
		return inputError("features %q needs the %s parameters", name, key)
	}
	return decode(raw, dst)
}

// decodeExplicit reads a call's parameters: the common ones, then the kind's
// own (under its key; another kind's key is an error) and their checks. The
// kind is nil for mode "core_numbers" without features.
func decodeExplicit(mode string, params []byte) (*explicitParams, featureKind, error) {
	var doc map[string]json.RawMessage
	if err := decode(params, &doc); err != nil {
		return nil, nil, err
	}
	own := map[string]json.RawMessage{}
	for key := range optionKeys {
		if raw, ok := doc[key]; ok {
			own[key] = raw
			delete(doc, key)
		}
	}
	// The rest, strictly, as one document again (keys quoted as JSON, values as sent).
	var common bytes.Buffer
	common.WriteByte('{')
	for key, raw := range doc {
		if common.Len() > 1 {
			common.WriteByte(',')
		}
		quoted, _ := json.Marshal(key)
		common.Write(quoted)
		common.WriteByte(':')
		common.Write(raw)
	}
	common.WriteByte('}')
	p := &explicitParams{}
	if err := decode(common.Bytes(), p); err != nil {
		return nil, nil, err
	}
	if p.Features == "" && mode == "core_numbers" && len(own) == 0 {
		return p, nil, nil
	}
	if p.Semiring != "product" && p.Semiring != "min" {
		return nil, nil, inputError("semiring must be 'product' or 'min', got %q", p.Semiring)
	}
	kind, err := lookupKind(p.Features)
	if err != nil {
		return nil, nil, err
	}
	key, _ := kind.options()
	for other := range own {
		if other != key {
			return nil, nil, inputError("features %q takes no %q parameters", p.Features, other)
		}
	}
	if ok := kind.semirings(); !slices.Contains(ok, p.Semiring) {
		return nil, nil, inputError("features %q needs semiring '%s', got %q", p.Features, strings.Join(ok, "' or '"), p.Semiring)
	}
	if err := decodeOptions(p.Features, kind, own[key], true); err != nil {
		return nil, nil, err
	}
	return p, kind, nil
}

// explicit computes an explicit-feature kernel: the feature maps of the call's
// graphs (one label dictionary over X ∪ Y), then their product over the
// semiring (package sparsegram), as the call's kind says.
func explicit(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	p, kind, err := decodeExplicit(mode, params)
	if err != nil {
		return err
	}
	c, err := newExplicitCall(mode, p, kind, r, warn)
	if err != nil {
		return err
	}
	if c.gpu != nil && mode != "gram" {
		cpuOnly(fmt.Sprintf("mode %q of the explicit-feature kernels", mode), warn)
	}
	if mode == "wl_labels" || mode == "core_numbers" {
		all := r.x.graphs
		if !r.symmetric {
			all = append(slices.Clip(all), r.y.graphs...)
		}
		return nodeLabels(mode, c, all, b)
	}
	if kind == nil {
		return inputError("mode %q needs features", mode)
	}
	if mode == "features" {
		if !r.symmetric {
			return inputError("features takes one list of graphs")
		}
		if why := kind.noFeatureMap(); why != "" {
			return inputError("features %q has %s", p.Features, why)
		}
		parts, err := c.features(r.x.graphs)
		if err != nil {
			return err
		}
		if err := writeFeatures(parts[0], b); err != nil {
			return err
		}
		return writeRowFactors(c, parts[0], b)
	}
	return graphKernel(mode, r, b, c.gram, c.diag, struct{}{})
}

// explicitCall is one call of an explicit-feature kernel: its kind and
// options, and the CUDA library whose GPU computes the Gram product (nil:
// the CPU).
type explicitCall struct {
	p     *explicitParams
	kind  featureKind // nil for mode "core_numbers" without features
	opt   sparsegram.Options
	wlOpt wl.Options
	// scale multiplies every Gram and diagonal entry (kind.gramScale()).
	scale float64
	gpu   *cuda.Library
	warn  *warnings
}

func newExplicitCall(mode string, p *explicitParams, kind featureKind, r *request, warn *warnings) (*explicitCall, error) {
	c := &explicitCall{p: p, kind: kind, opt: sparsegram.Options{NJobs: p.NJobs, Control: r.ctl}, scale: 1, warn: warn,
		wlOpt: wl.Options{Iterations: p.NIter, NodeLabelCol: p.NodeLabelCol, EdgeLabelCol: p.EdgeLabelCol,
			NJobs: p.NJobs, Control: r.ctl}}
	switch p.Semiring {
	case "product":
		c.opt.Semiring = sparsegram.SumProduct
	case "min":
		c.opt.Semiring = sparsegram.SumMin
	}
	if kind != nil {
		c.scale = kind.gramScale()
	}
	var work func() costmodel.Workload // only the Gram product has a device path
	if mode == "gram" {
		work = func() costmodel.Workload {
			return autodevice.WorkloadOf(costmodel.Explicit, r.x.graphs, r.y.graphs, r.symmetric)
		}
	}
	var err error
	c.gpu, err = p.gpu(warn, work, p.NJobs)
	return c, err
}

// features is the feature map of gs, one label dictionary over all of them.
func (c *explicitCall) features(gs []*graph.Graph) ([]*sparsegram.Features, error) {
	return c.kind.features(c, gs)
}

// product is the Gram matrix of the features: on the GPU when one is used
// (exact: equal to the CPU's entry for entry), on the CPU otherwise or when
// the GPU cannot take the call (onCPU's convention).
func (c *explicitCall) product(X, Y *sparsegram.Features, symmetric bool, out []float64) error {
	if c.gpu != nil {
		err := c.gpu.ExplicitGram(X, Y, symmetric, c.opt.Semiring, c.p.DeviceIndex, out, nil)
		if !onCPU(err, c.warn) {
			return err
		}
	}
	return sparsegram.Gram(X, Y, symmetric, c.opt, out)
}

// gram is K(X, Y) (graphKernel's contract): the features of X, or of X ∪ Y
// split back into its two row ranges, and their product.
func (c *explicitCall) gram(X, Y []*graph.Graph, symmetric bool, _ struct{}, out []float64) error {
	all := X
	if !symmetric {
		all = append(slices.Clip(X), Y...)
	}
	parts, err := c.features(all)
	if err != nil {
		return err
	}
	split := func(f *sparsegram.Features) (*sparsegram.Features, *sparsegram.Features) {
		if symmetric {
			return f, nil
		}
		return rowRange(f, 0, len(X)), rowRange(f, len(X), len(X)+len(Y))
	}
	if rule := c.kind.blocks(c); rule != nil {
		// The blocks' products, each turned into its term as it comes.
		inter := make([]float64, len(out))
		clear(out)
		for _, f := range parts {
			fx, fy := split(f)
			if err := c.product(fx, fy, symmetric, inter); err != nil {
				return err
			}
			nx, err := rule.sizes(fx, X)
			if err != nil {
				return err
			}
			ny := nx
			if !symmetric {
				if ny, err = rule.sizes(fy, Y); err != nil {
					return err
				}
			}
			rule.add(out, inter, nx, ny)
		}
		rule.finish(out, len(parts))
		return nil
	}
	fx, fy := split(parts[0])
	if err := c.scaled(c.product(fx, fy, symmetric, out), out); err != nil {
		return err
	}
	if sx := c.kind.rowScale(fx); sx != nil {
		sy := sx
		if !symmetric {
			sy = c.kind.rowScale(fy)
		}
		for i, a := range sx {
			for j, b := range sy {
				out[i*len(sy)+j] /= a * b
			}
		}
	}
	return nil
}

// blockRule is how a kernel summed over blocks of feature matrices (the
// neighborhood hash kernel's rounds, the NSPDK's (radius, distance) blocks)
// turns each block's product matrix into its term: sizes gives each graph's
// size in a block (the rows f of graphs gs), add adds the block's term given
// the products and sizes, finish completes the sum of the blocks.
type blockRule struct {
	sizes  func(f *sparsegram.Features, gs []*graph.Graph) ([]float64, error)
	add    func(out, inter, nx, ny []float64)
	finish func(out []float64, blocks int)
}

// diag is K(x, x) for each graph of X (graphKernel's contract), on the CPU.
func (c *explicitCall) diag(X []*graph.Graph, _ struct{}, out []float64) error {
	parts, err := c.features(X)
	if err != nil {
		return err
	}
	if rule := c.kind.blocks(c); rule != nil {
		inter := make([]float64, len(out))
		clear(out)
		for _, f := range parts {
			if err := sparsegram.Diag(f, c.opt, inter); err != nil {
				return err
			}
			n, err := rule.sizes(f, X)
			if err != nil {
				return err
			}
			for i := range out {
				rule.add(out[i:i+1], inter[i:i+1], n[i:i+1], n[i:i+1])
			}
		}
		rule.finish(out, len(parts))
		return nil
	}
	if err := c.scaled(sparsegram.Diag(parts[0], c.opt, out), out); err != nil {
		return err
	}
	for i, s := range c.kind.rowScale(parts[0]) {
		out[i] /= s * s
	}
	return nil
}

// scaled applies scale to out unless err is set, and returns err.
func (c *explicitCall) scaled(err error, out []float64) error {
	if err == nil && c.scale != 1 {
		for i := range out {
			out[i] *= c.scale
		}
	}
	return err
}

// writeFeatures packs f into the int64 buffer out (docs/abi.md): nnz, the
// number of columns, then Ptr, Col and Val. Python sized out from a bound on
// nnz; the words after the last count are left as they are.
func writeFeatures(f *sparsegram.Features, b buffers) error {
	out, err := view[int64](b.out, b.outLen, "out")
	if err != nil {
		return err
	}
	nnz := len(f.Col)
	if need := 2 + len(f.Ptr) + 2*nnz; need > len(out) {
		return &pyError{runtimeError, fmt.Errorf("the feature matrix needs %d words, Python allocated %d", need, len(out))}
	}
	out[0], out[1] = int64(nnz), int64(f.NumCols)
	w := out[2:]
	for i, p := range f.Ptr {
		w[i] = int64(p)
	}
	w = w[len(f.Ptr):]
	for k := range nnz {
		w[k], w[nnz+k] = int64(f.Col[k]), int64(f.Val[k])
	}
	return nil
}

// writeRowFactors writes the factor of each feature row, featureScale()
// divided by the row's rowScale entry, into the float64 buffer grad when
// Python passed one (docs/abi.md: mode "features").
func writeRowFactors(c *explicitCall, f *sparsegram.Features, b buffers) error {
	out, err := optionalOutput[float64](b.grad, b.gradLen, f.Rows(), "row factors")
	if err != nil || out == nil {
		return err
	}
	scale, rows := c.kind.featureScale(), c.kind.rowScale(f)
	for r := range out {
		out[r] = scale
		if rows != nil {
			out[r] = scale / rows[r]
		}
	}
	return nil
}

// rowRange returns rows [lo, hi) of f as a matrix of its own, sharing f's
// column and value arrays.
func rowRange(f *sparsegram.Features, lo, hi int) *sparsegram.Features {
	ptr := make([]int, hi-lo+1)
	for i := range ptr {
		ptr[i] = f.Ptr[lo+i] - f.Ptr[lo]
	}
	return &sparsegram.Features{NumCols: f.NumCols, Ptr: ptr, Col: f.Col[f.Ptr[lo]:f.Ptr[hi]], Val: f.Val[f.Ptr[lo]:f.Ptr[hi]]}
}

// nodeLabels writes one int64 per node of gs (X, then Y), graph after graph, into the out
// buffer (docs/abi.md), for the kernel frameworks that Python builds over a
// base kernel: "wl_labels", the Weisfeiler–Lehman label of every node in
// rounds 0..n_iter (round after round; one numbering over all of gs), or
// "core_numbers", every node's core number (no feature map: features may be
// absent).
func nodeLabels(mode string, c *explicitCall, gs []*graph.Graph, b buffers) error {
	nodes := 0
	for _, g := range gs {
		nodes += g.N
	}
	if mode == "core_numbers" {
		out, err := output[int64](b.out, b.outLen, nodes, "out")
		if err != nil {
			return err
		}
		k := 0
		for _, g := range gs {
			for _, x := range g.CoreNumbers() {
				out[k] = int64(x)
				k++
			}
		}
		return nil
	}
	if c.p.Features != "wl" {
		return inputError("wl_labels needs features 'wl', got %q", c.p.Features)
	}
	rounds, _, err := wl.Labels(gs, c.wlOpt)
	if err != nil {
		return err
	}
	out, err := output[int64](b.out, b.outLen, len(rounds)*nodes, "out")
	if err != nil {
		return err
	}
	for i, lab := range rounds {
		for u, l := range lab {
			out[i*nodes+u] = int64(l)
		}
	}
	return nil
}
