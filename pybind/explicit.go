package pybind

import (
	"fmt"
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
	// vertex histogram) or "edges" (edge label histogram).
	Features     string `json:"features"`
	NIter        int    `json:"n_iter"`
	NodeLabelCol int    `json:"node_label_col"`
	EdgeLabelCol int    `json:"edge_label_col"`
	// Semiring is "product" (Σ x·y) or "min" (Σ min(x, y)).
	Semiring string `json:"semiring"`
	// Hash configures features "hash" (the hash graph kernel).
	Hash  *hashParams `json:"hash"`
	NJobs int         `json:"n_jobs"`
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

// explicit computes an explicit-feature kernel: the feature maps of the call's
// graphs (package wl, one label dictionary over X ∪ Y), then their product
// over the semiring (package sparsegram).
func explicit(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	var p explicitParams
	if err := decode(params, &p); err != nil {
		return err
	}
	opt := sparsegram.Options{NJobs: p.NJobs, Control: r.ctl}
	switch p.Semiring {
	case "product":
		opt.Semiring = sparsegram.SumProduct
	case "min":
		opt.Semiring = sparsegram.SumMin
	default:
		return inputError("semiring must be 'product' or 'min', got %q", p.Semiring)
	}
	wlOpt := wl.Options{Iterations: p.NIter, NodeLabelCol: p.NodeLabelCol, EdgeLabelCol: p.EdgeLabelCol,
		NJobs: p.NJobs, Control: r.ctl}
	// The hash graph kernel averages its T hashed WL kernels: the product of
	// the concatenated features, scaled by 1/T.
	scale := 1.0
	if p.Features == "hash" {
		if p.Hash == nil {
			return inputError("features 'hash' needs the hash parameters")
		}
		scale = 1 / float64(max(p.Hash.Hashes, 1))
	}
	features := func(gs []*graph.Graph) (*sparsegram.Features, error) {
		switch p.Features {
		case "wl":
			return wl.Features(gs, wlOpt)
		case "edges":
			return wl.EdgeFeatures(gs, p.EdgeLabelCol)
		case "hash":
			h := p.Hash
			return wl.HashFeatures(gs, wl.HashOptions{WL: wlOpt, AttrCol: h.AttrCol, AttrWidth: h.AttrWidth,
				Projections: h.Projections, Offsets: h.Offsets, Hashes: h.Hashes, PerHash: h.PerHash, BinWidth: h.BinWidth})
		}
		return nil, inputError("features must be 'wl', 'edges' or 'hash', got %q", p.Features)
	}
	scaled := func(err error, out []float64) error {
		if err == nil && scale != 1 {
			for i := range out {
				out[i] *= scale
			}
		}
		return err
	}
	gpu, err := p.gpu(warn)
	if err != nil {
		return err
	}
	if gpu && mode != "gram" {
		cpuOnly(fmt.Sprintf("mode %q of the explicit-feature kernels", mode), warn)
	}
	// product is the Gram matrix of the features: on the GPU in mode "gram"
	// when one is used (exact: equal to the CPU's entry for entry), on the CPU
	// otherwise or when the GPU cannot take the call (onCPU's convention).
	product := func(X, Y *sparsegram.Features, symmetric bool, out []float64) error {
		if gpu {
			err := cuda.ExplicitGram(X, Y, symmetric, opt.Semiring, p.DeviceIndex, out, nil)
			if !onCPU(err, warn) {
				return err
			}
		}
		return sparsegram.Gram(X, Y, symmetric, opt, out)
	}
	if mode == "features" {
		if !r.symmetric {
			return inputError("features takes one list of graphs")
		}
		f, err := features(r.x.graphs)
		if err != nil {
			return err
		}
		return writeFeatures(f, b)
	}
	return graphKernel(mode, r, b,
		func(X, Y []*graph.Graph, symmetric bool, _ struct{}, out []float64) error {
			if symmetric {
				f, err := features(X)
				if err != nil {
					return err
				}
				return scaled(product(f, nil, true, out), out)
			}
			f, err := features(append(slices.Clip(X), Y...))
			if err != nil {
				return err
			}
			return scaled(product(rowRange(f, 0, len(X)), rowRange(f, len(X), len(X)+len(Y)), false, out), out)
		},
		func(X []*graph.Graph, _ struct{}, out []float64) error {
			f, err := features(X)
			if err != nil {
				return err
			}
			return scaled(sparsegram.Diag(f, opt, out), out)
		}, struct{}{})
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
