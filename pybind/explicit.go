package pybind

import (
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// explicitParams are the parameters of the explicit-feature kernels
// (docs/abi.md): a feature map and the semiring that combines two maps.
type explicitParams struct {
	deviceParams
	// Features is "wl" (Weisfeiler–Lehman label counts; n_iter 0 is the
	// vertex histogram), "edges" (edge label histogram), "hash" (hash graph
	// kernel), "propagation" or "propagation_attr" (propagation kernel).
	Features     string `json:"features"`
	NIter        int    `json:"n_iter"`
	NodeLabelCol int    `json:"node_label_col"`
	EdgeLabelCol int    `json:"edge_label_col"`
	// Semiring is "product" (Σ x·y) or "min" (Σ min(x, y)).
	Semiring string `json:"semiring"`
	// Hash configures features "hash" (the hash graph kernel).
	Hash *hashParams `json:"hash"`
	// Propagation configures features "propagation" and "propagation_attr".
	Propagation *propagationParams `json:"propagation"`
	NJobs       int                `json:"n_jobs"`
}

// hashParams are the hash graph kernel's hash functions (wl.HashOptions).
type hashParams struct {
	AttrCol     int       `json:"attr_col"`
	AttrWidth   int       `json:"attr_width"`
	Projections []float64 `json:"projections"`
	Offsets     []float64 `json:"offsets"`
	Hashes      int       `json:"hashes"`
	PerHash     int       `json:"per_hash"`
	BinWidth    float64   `json:"bin_width"`
}

// WLMaxIterations is the bound on the Weisfeiler–Lehman kernels' n_iter
// (wl.MaxIterations), which Python checks before packing.
func WLMaxIterations() int { return wl.MaxIterations }

// The hash graph kernel averages its T hashed WL kernels. Both halves of that
// rule live here: the Gram and diagonal entries are scaled by hashGramScale,
// and Python scales the feature rows it gets as counts by HashFeatureScale, so
// that F Fᵀ is the same average.
func hashGramScale(hashes int) float64 { return 1 / float64(max(hashes, 1)) }

// HashFeatureScale is the factor of the hash graph kernel's feature rows with
// hashes labellings: 1/√T.
func HashFeatureScale(hashes int) float64 { return 1 / math.Sqrt(float64(max(hashes, 1))) }

// explicit computes an explicit-feature kernel: the feature maps of the call's
// graphs (package wl, one label dictionary over X ∪ Y), then their product
// over the semiring (package sparsegram).
func explicit(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	var p explicitParams
	if err := decode(params, &p); err != nil {
		return err
	}
	c, err := newExplicitCall(&p, r, warn)
	if err != nil {
		return err
	}
	if c.gpu && mode != "gram" {
		cpuOnly(fmt.Sprintf("mode %q of the explicit-feature kernels", mode), warn)
	}
	if mode == "features" {
		if !r.symmetric {
			return inputError("features takes one list of graphs")
		}
		f, err := c.features(r.x.graphs)
		if err != nil {
			return err
		}
		return writeFeatures(f, b)
	}
	return graphKernel(mode, r, b, c.gram, c.diag, struct{}{})
}

// explicitCall is one call of an explicit-feature kernel: its options, and
// whether the Gram product goes to the GPU.
type explicitCall struct {
	p     *explicitParams
	opt   sparsegram.Options
	wlOpt wl.Options
	// scale multiplies every Gram and diagonal entry: hashGramScale for the
	// hash graph kernel, 1 for the others.
	scale float64
	gpu   bool
	warn  *warnings
}

func newExplicitCall(p *explicitParams, r *request, warn *warnings) (*explicitCall, error) {
	c := &explicitCall{p: p, opt: sparsegram.Options{NJobs: p.NJobs, Control: r.ctl}, scale: 1, warn: warn,
		wlOpt: wl.Options{Iterations: p.NIter, NodeLabelCol: p.NodeLabelCol, EdgeLabelCol: p.EdgeLabelCol,
			NJobs: p.NJobs, Control: r.ctl}}
	switch p.Semiring {
	case "product":
		c.opt.Semiring = sparsegram.SumProduct
	case "min":
		c.opt.Semiring = sparsegram.SumMin
	default:
		return nil, inputError("semiring must be 'product' or 'min', got %q", p.Semiring)
	}
	if p.Features == "hash" {
		if p.Hash == nil {
			return nil, inputError("features 'hash' needs the hash parameters")
		}
		c.scale = hashGramScale(p.Hash.Hashes)
	}
	var err error
	c.gpu, err = p.gpu(warn)
	return c, err
}

// features is the feature map of gs, one label dictionary over all of them.
func (c *explicitCall) features(gs []*graph.Graph) (*sparsegram.Features, error) {
	switch c.p.Features {
	case "wl":
		return wl.Features(gs, c.wlOpt)
	case "edges":
		return wl.EdgeFeatures(gs, c.p.EdgeLabelCol)
	case "hash":
		h := c.p.Hash
		return wl.HashFeatures(gs, wl.HashOptions{WL: c.wlOpt, AttrCol: h.AttrCol, AttrWidth: h.AttrWidth,
			Projections: h.Projections, Offsets: h.Offsets, Hashes: h.Hashes, PerHash: h.PerHash, BinWidth: h.BinWidth})
	case "propagation", "propagation_attr":
		return c.propagationFeatures(gs, c.p.Features == "propagation_attr")
	}
	return nil, inputError("features must be 'wl', 'edges', 'hash', 'propagation' or 'propagation_attr', got %q", c.p.Features)
}

// product is the Gram matrix of the features: on the GPU when one is used
// (exact: equal to the CPU's entry for entry), on the CPU otherwise or when
// the GPU cannot take the call (onCPU's convention).
func (c *explicitCall) product(X, Y *sparsegram.Features, symmetric bool, out []float64) error {
	if c.gpu {
		err := cuda.ExplicitGram(X, Y, symmetric, c.opt.Semiring, c.p.DeviceIndex, out, nil)
		if !onCPU(err, c.warn) {
			return err
		}
	}
	return sparsegram.Gram(X, Y, symmetric, c.opt, out)
}

// gram is K(X, Y) (graphKernel's contract): the features of X, or of X ∪ Y
// split back into its two row ranges, and their product.
func (c *explicitCall) gram(X, Y []*graph.Graph, symmetric bool, _ struct{}, out []float64) error {
	if symmetric {
		f, err := c.features(X)
		if err != nil {
			return err
		}
		return c.scaled(c.product(f, nil, true, out), out)
	}
	f, err := c.features(append(slices.Clip(X), Y...))
	if err != nil {
		return err
	}
	return c.scaled(c.product(rowRange(f, 0, len(X)), rowRange(f, len(X), len(X)+len(Y)), false, out), out)
}

// diag is K(x, x) for each graph of X (graphKernel's contract), on the CPU.
func (c *explicitCall) diag(X []*graph.Graph, _ struct{}, out []float64) error {
	f, err := c.features(X)
	if err != nil {
		return err
	}
	return c.scaled(sparsegram.Diag(f, c.opt, out), out)
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

// rowRange returns rows [lo, hi) of f as a matrix of its own, sharing f's
// column and value arrays.
func rowRange(f *sparsegram.Features, lo, hi int) *sparsegram.Features {
	ptr := make([]int, hi-lo+1)
	for i := range ptr {
		ptr[i] = f.Ptr[lo+i] - f.Ptr[lo]
	}
	return &sparsegram.Features{NumCols: f.NumCols, Ptr: ptr, Col: f.Col[f.Ptr[lo]:f.Ptr[hi]], Val: f.Val[f.Ptr[lo]:f.Ptr[hi]]}
}
