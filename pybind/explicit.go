package pybind

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/autodevice"
	"github.com/graphgram/graphgram/cuda/costmodel"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graphlet"
	"github.com/graphgram/graphgram/gokernel/nhash"
	"github.com/graphgram/graphgram/gokernel/nspdk"
	"github.com/graphgram/graphgram/gokernel/oddsth"
	"github.com/graphgram/graphgram/gokernel/pyramid"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// explicitParams are the parameters of the explicit-feature kernels
// (docs/abi.md): a feature map and the semiring that combines two maps.
type explicitParams struct {
	deviceParams
	// Features is "wl" (Weisfeiler–Lehman label counts; n_iter 0 is the
	// vertex histogram), "edges" (edge label histogram), "hash" (the hash
	// graph kernel), "nh" (the neighborhood hash kernel), "graphlets" (the
	// graphlet kernel), "propagation" or "propagation_attr" (propagation
	// kernel), "nspdk" (the neighborhood subgraph pairwise distance kernel),
	// "pyramid" (the pyramid match kernel), "oddsth" (the ODD-ST_h kernel).
	Features     string `json:"features"`
	NIter        int    `json:"n_iter"`
	NodeLabelCol int    `json:"node_label_col"`
	EdgeLabelCol int    `json:"edge_label_col"`
	// Semiring is "product" (Σ x·y) or "min" (Σ min(x, y)).
	Semiring string `json:"semiring"`
	// Hash configures features "hash" (the hash graph kernel).
	Hash *hashParams `json:"hash"`
	// NH configures features "nh", Graphlets features "graphlets".
	NH        *nhParams       `json:"nh"`
	Graphlets *graphletParams `json:"graphlets"`
	// Propagation configures features "propagation" and "propagation_attr".
	Propagation *propagationParams `json:"propagation"`
	// NSPDK configures features "nspdk".
	NSPDK *nspdkParams `json:"nspdk"`
	// Pyramid configures features "pyramid".
	Pyramid *pyramidParams `json:"pyramid"`
	// ODDSTh configures features "oddsth".
	ODDSTh *oddsthParams `json:"oddsth"`
	NJobs  int           `json:"n_jobs"`
}

// oddsthParams are the ODD-ST_h kernel's settings (oddsth.Options): the DAG
// height h, 0 for unbounded.
type oddsthParams struct {
	H int `json:"h"`
}

// pyramidParams are the pyramid match kernel's settings (pyramid.Options):
// L levels, dimension d.
type pyramidParams struct {
	L int `json:"L"`
	D int `json:"d"`
}

// PyramidFeatureScale is the factor of the pyramid match kernel's feature rows
// with levels levels, √(pyramid.Scale(levels)): the Gram and diagonal entries
// are scaled by pyramid.Scale (newExplicitCall), so F Fᵀ is the same kernel.
func PyramidFeatureScale(levels int) float64 { return math.Sqrt(pyramid.Scale(levels)) }

// nspdkParams are the NSPDK's settings (nspdk.Options): radius r and distance d.
type nspdkParams struct {
	R int `json:"r"`
	D int `json:"d"`
}

// nhParams are the neighborhood hash kernel's settings (nhash.Options): the
// initial bit string of every label value of the call, drawn by Python from
// the label's value and the kernel's random_state.
type nhParams struct {
	Rounds         int       `json:"rounds"`
	Bits           int       `json:"bits"`
	CountSensitive bool      `json:"count_sensitive"`
	LabelValues    []float64 `json:"label_values"`
	LabelBits      []uint64  `json:"label_bits"`
}

// graphletParams are the graphlet kernel's settings (graphlet.Options).
type graphletParams struct {
	K         int    `json:"k"`
	Samples   int    `json:"samples"`
	Connected bool   `json:"connected"`
	Seed      uint64 `json:"seed"`
	// Frequencies divides each graph's counts by their sum (frequencyScale).
	Frequencies bool `json:"frequencies"`
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

// GraphletClasses returns the graphlets of size k in the graphlet kernel's
// column order, as JSON: a list of {"edges": [[i, j], ...], "connected": bool}.
func GraphletClasses(k int) string {
	type class struct {
		Edges     [][2]int `json:"edges"`
		Connected bool     `json:"connected"`
	}
	out := make([]class, graphlet.NumClasses(k))
	for c := range out {
		out[c].Edges, out[c].Connected = graphlet.Class(k, c)
		if out[c].Edges == nil {
			out[c].Edges = [][2]int{}
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// frequencyScale is the graphlet kernel's frequency rule, its one place: a
// graph's graphlet counts are divided by their sum (the number of subsets
// counted or samples kept), so that K(G, G') = Σ_c f_c(G) f_c(G'). A graph
// without graphlets keeps its empty row (scale 1).
func frequencyScale(f *sparsegram.Features) []float64 {
	s := make([]float64, f.Rows())
	for r := range s {
		var sum uint64
		for _, v := range f.Val[f.Ptr[r]:f.Ptr[r+1]] {
			sum += uint64(v)
		}
		s[r] = float64(max(sum, 1))
	}
	return s
}

// explicit computes an explicit-feature kernel: the feature maps of the call's
// graphs (package wl, one label dictionary over X ∪ Y), then their product
// over the semiring (package sparsegram).
func explicit(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	var p explicitParams
	if err := decode(params, &p); err != nil {
		return err
	}
	c, err := newExplicitCall(mode, &p, r, warn)
	if err != nil {
		return err
	}
	if c.gpu && mode != "gram" {
		cpuOnly(fmt.Sprintf("mode %q of the explicit-feature kernels", mode), warn)
	}
	if mode == "wl_labels" || mode == "core_numbers" {
		all := r.x.graphs
		if !r.symmetric {
			all = append(slices.Clip(all), r.y.graphs...)
		}
		return nodeLabels(mode, c, all, b)
	}
	if mode == "features" {
		if !r.symmetric {
			return inputError("features takes one list of graphs")
		}
		if p.Features == "nh" || p.Features == "nspdk" {
			return inputError("features %q: the kernel is no product of one feature map", p.Features)
		}
		parts, err := c.features(r.x.graphs)
		if err != nil {
			return err
		}
		return writeFeatures(parts[0], b)
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
	// hash graph kernel, pyramid.Scale for the pyramid match kernel, 1 for
	// the others.
	scale float64
	gpu   bool
	warn  *warnings
}

func newExplicitCall(mode string, p *explicitParams, r *request, warn *warnings) (*explicitCall, error) {
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
	switch {
	case p.Features == "hash" && p.Hash == nil:
		return nil, inputError("features 'hash' needs the hash parameters")
	case p.Features == "hash":
		c.scale = hashGramScale(p.Hash.Hashes)
	case p.Features == "nh" && (p.NH == nil || p.Semiring != "min"):
		return nil, inputError("features 'nh' needs the nh parameters and semiring 'min'")
	case p.Features == "nspdk" && (p.NSPDK == nil || p.Semiring != "product"):
		return nil, inputError("features 'nspdk' needs the nspdk parameters and semiring 'product'")
	case p.Features == "pyramid" && (p.Pyramid == nil || p.Semiring != "min"):
		return nil, inputError("features 'pyramid' needs the pyramid parameters and semiring 'min'")
	case p.Features == "pyramid":
		c.scale = pyramid.Scale(p.Pyramid.L)
	case p.Features == "oddsth" && p.ODDSTh == nil:
		return nil, inputError("features 'oddsth' needs the oddsth parameters")
	case p.Features == "graphlets" && p.Graphlets == nil:
		return nil, inputError("features 'graphlets' needs the graphlets parameters")
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

// features is the feature map of gs, one label dictionary over all of them:
// one matrix, or for the neighborhood hash kernel one per round.
func (c *explicitCall) features(gs []*graph.Graph) ([]*sparsegram.Features, error) {
	one := func(f *sparsegram.Features, err error) ([]*sparsegram.Features, error) {
		return []*sparsegram.Features{f}, err
	}
	switch c.p.Features {
	case "wl":
		return one(wl.Features(gs, c.wlOpt))
	case "edges":
		return one(wl.EdgeFeatures(gs, c.p.EdgeLabelCol))
	case "hash":
		h := c.p.Hash
		return one(wl.HashFeatures(gs, wl.HashOptions{WL: c.wlOpt, AttrCol: h.AttrCol, AttrWidth: h.AttrWidth,
			Projections: h.Projections, Offsets: h.Offsets, Hashes: h.Hashes, PerHash: h.PerHash, BinWidth: h.BinWidth}))
	case "nh":
		h := c.p.NH
		return nhash.Features(gs, nhash.Options{Rounds: h.Rounds, Bits: h.Bits, CountSensitive: h.CountSensitive,
			NodeLabelCol: c.p.NodeLabelCol, LabelValues: h.LabelValues, LabelBits: h.LabelBits,
			NJobs: c.p.NJobs, Control: c.opt.Control})
	case "graphlets":
		h := c.p.Graphlets
		return one(graphlet.Features(gs, graphlet.Options{K: h.K, Samples: h.Samples, Connected: h.Connected,
			Seed: h.Seed, NJobs: c.p.NJobs, Control: c.opt.Control}))
	case "propagation", "propagation_attr":
		return one(c.propagationFeatures(gs, c.p.Features == "propagation_attr"))
	case "nspdk":
		return nspdk.Features(gs, nspdk.Options{Radius: c.p.NSPDK.R, Distance: c.p.NSPDK.D,
			NodeLabelCol: c.p.NodeLabelCol, EdgeLabelCol: c.p.EdgeLabelCol, Control: c.opt.Control})
	case "pyramid":
		return one(pyramid.Features(gs, pyramid.Options{Levels: c.p.Pyramid.L, Dim: c.p.Pyramid.D,
			NodeLabelCol: c.p.NodeLabelCol, NJobs: c.p.NJobs, Control: c.opt.Control}))
	case "oddsth":
		return one(oddsth.Features(gs, oddsth.Options{Height: c.p.ODDSTh.H, NodeLabelCol: c.p.NodeLabelCol,
			Control: c.opt.Control}))
	}
	return nil, inputError("features must be 'wl', 'edges', 'hash', 'nh', 'graphlets', 'propagation', 'propagation_attr', 'nspdk', 'pyramid' or 'oddsth', got %q", c.p.Features)
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
	if rule := c.blocks(); rule != nil {
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
	if c.p.Features == "graphlets" && c.p.Graphlets.Frequencies {
		sx := frequencyScale(fx)
		sy := sx
		if !symmetric {
			sy = frequencyScale(fy)
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

// blocks returns the call's block rule, or nil for a kernel that is one product.
func (c *explicitCall) blocks() *blockRule {
	switch c.p.Features {
	case "nh":
		// c/(n + n' − c) with n, n' the node counts, averaged over the rounds.
		return &blockRule{sizes: nodeCounts, add: nhash.Accumulate, finish: nhash.Average}
	case "nspdk":
		// c/√(K_b(G, G) K_b(G', G')), summed over the blocks.
		return &blockRule{sizes: c.selfProducts, add: nspdk.Accumulate, finish: func([]float64, int) {}}
	}
	return nil
}

// nodeCounts returns the node count of each graph, as float64.
func nodeCounts(_ *sparsegram.Features, gs []*graph.Graph) ([]float64, error) {
	n := make([]float64, len(gs))
	for g, gr := range gs {
		n[g] = float64(gr.N)
	}
	return n, nil
}

// selfProducts returns each row's product with itself.
func (c *explicitCall) selfProducts(f *sparsegram.Features, _ []*graph.Graph) ([]float64, error) {
	out := make([]float64, f.Rows())
	return out, sparsegram.Diag(f, c.opt, out)
}

// diag is K(x, x) for each graph of X (graphKernel's contract), on the CPU.
func (c *explicitCall) diag(X []*graph.Graph, _ struct{}, out []float64) error {
	parts, err := c.features(X)
	if err != nil {
		return err
	}
	if rule := c.blocks(); rule != nil {
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
	if c.p.Features == "graphlets" && c.p.Graphlets.Frequencies {
		for i, s := range frequencyScale(parts[0]) {
			out[i] /= s * s
		}
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
// "core_numbers", every node's core number.
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
