package pybind

import (
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// wlKind is features "wl": the Weisfeiler–Lehman label counts of rounds
// 0..n_iter (n_iter 0 is the vertex histogram), from the node label column or
// the degrees, with the edge label column joining the refinement when set.
type wlKind struct{ kindDefaults }

func (wlKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	return one(wl.Features(gs, c.wlOpt))
}

func (wlKind) describe(i *kindInfo) error {
	i.Bounds["n_iter"] = [2]int{0, wl.MaxIterations}
	return nil
}

// edgesKind is features "edges": the edge label histogram.
type edgesKind struct{ kindDefaults }

func (edgesKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	return one(wl.EdgeFeatures(gs, c.p.EdgeLabelCol))
}

// hashKind is features "hash", the hash graph kernel: T hashed labellings of
// the continuous attributes, each refined by Weisfeiler–Lehman (n_iter), the
// T count vectors concatenated. The kernel averages the T WL kernels; both
// halves of that rule live here: the Gram and diagonal entries are scaled by
// 1/T, the feature rows by 1/√T, so that F Fᵀ is the same average.
type hashKind struct {
	kindDefaults
	h hashParams
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

func (k *hashKind) options() (string, any) { return "hash", &k.h }

func (k *hashKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	h := k.h
	return one(wl.HashFeatures(gs, wl.HashOptions{WL: c.wlOpt, AttrCol: h.AttrCol, AttrWidth: h.AttrWidth,
		Projections: h.Projections, Offsets: h.Offsets, Hashes: h.Hashes, PerHash: h.PerHash, BinWidth: h.BinWidth}))
}

func (k *hashKind) gramScale() float64 { return 1 / float64(max(k.h.Hashes, 1)) }

func (k *hashKind) featureScale() float64 { return 1 / math.Sqrt(float64(max(k.h.Hashes, 1))) }

func (*hashKind) describe(i *kindInfo) error {
	i.Bounds["n_iter"] = [2]int{0, wl.MaxIterations}
	i.Bounds["hashes"] = [2]int{1, wl.MaxHashes}
	i.Bounds["per_hash"] = [2]int{1, wl.MaxPerHash}
	return nil
}
