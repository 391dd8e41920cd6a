// Package propagation computes the explicit feature maps of the propagation
// kernel (Neumann, Garnett, Bauckhage and Kersting 2016, "Propagation kernels:
// efficient graph kernels from propagated information"): every node carries a
// vector — a distribution over discrete labels, or its continuous attributes —
// that is propagated along the edges by the row-normalized adjacency
// T = D⁻¹A for a number of rounds; in each round the vectors are hashed to
// bins by a locality-sensitive hash, and a graph's feature vector counts its
// nodes per (round, bin). The dot product of two feature vectors is the kernel
// Σ_t Σ_bins c_t(G, bin)·c_t(G', bin), so the Gram matrix is sparsegram's
// SumProduct of exact integer counts.
//
// The hash functions (the projection coefficients and offsets) are inputs:
// the caller derives them from the label values and a seed, so that a kernel
// value depends only on its two graphs. Bins are numbered over the graphs of
// one call, as package wl numbers labels; no dictionary outlives the call.
package propagation

import (
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MaxRounds bounds the number of hashed rounds: each adds one bin per node to
// the features, and propagation smooths the vectors towards their stationary
// values within a few dozen steps on real graphs.
const MaxRounds = 1000

// Options configures Labels: the propagation kernel on discrete node labels.
type Options struct {
	// Rounds is t_max ≥ 1: rounds 0..t_max−1 are hashed, with one
	// propagation step between two rounds.
	Rounds int
	// BinWidth is the width w of a hash bin (> 0).
	BinWidth float64
	// LabelCol is the node feature column holding the label.
	LabelCol int
	// Labels lists the label values that occur, in increasing order; a node's
	// label is its index k in Labels.
	Labels []float64
	// Coef holds Rounds·len(Labels) projection coefficients, row-major by
	// round: the hash of round t maps a distribution p to
	// ⌊(Σ_k f(p_k)·Coef[t][k] + Offsets[t]) / BinWidth⌋.
	Coef []float64
	// Offsets holds one offset per round, in [0, BinWidth).
	Offsets []float64
	// Sqrt hashes the square roots of the probabilities, f(p) = √p (the
	// Hellinger distance); otherwise f(p) = p (total variation).
	Sqrt bool
	// Unlabeled is the index in Labels of the value that marks an unlabelled
	// node, or −1 for none. An unlabelled node starts with the uniform
	// distribution over the labels of its own graph's labelled nodes (the zero
	// vector if there are none).
	Unlabeled int
	// Clamp runs label propagation instead of label diffusion: after every
	// propagation step the labelled nodes are reset to their one-hot
	// distribution (the partially labelled graphs' scheme of the paper).
	Clamp bool
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// AttrOptions configures Attributes: the propagation kernel on continuous node
// attributes.
type AttrOptions struct {
	// Rounds is t_max ≥ 1, as in Options.
	Rounds int
	// BinWidth is the width w of a hash bin (> 0).
	BinWidth float64
	// AttrCol and AttrWidth locate the attribute vector x of each node in the
	// node feature rows.
	AttrCol, AttrWidth int
	// Coef and Offsets hold Rounds·AttrWidth values each, row-major by round:
	// the hash of round t maps x to the vector of bins
	// ⌊(x_d·Coef[t][d] + Offsets[t][d]) / BinWidth⌋, d < AttrWidth.
	Coef, Offsets []float64
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// Labels returns the propagation kernel's feature matrix of graphs with
// discrete node labels: node v of graph G starts with the one-hot
// distribution of its label, P₀; P_{t+1} = T P_t with T = D⁻¹A the weighted
// adjacency normalized by rows (a node without edges of positive weight gets
// the zero row, so its distribution vanishes), the labelled rows reset to P₀
// when Clamp is set. Row g counts, for every round t < Rounds, the nodes of
// graph g per bin of the round-t hash of their distributions; the columns
// number the (round, bin) pairs of the call.
func Labels(graphs []*graph.Graph, opt Options) (*sparsegram.Features, error) {
	nl := len(opt.Labels)
	switch {
	case opt.Rounds < 1 || opt.Rounds > MaxRounds:
		return nil, fmt.Errorf("rounds must be in [1, %d], got %d", MaxRounds, opt.Rounds)
	case !(opt.BinWidth > 0) || math.IsInf(opt.BinWidth, 0):
		return nil, fmt.Errorf("bin width must be a positive finite number, got %v", opt.BinWidth)
	case len(opt.Coef) != opt.Rounds*nl:
		return nil, fmt.Errorf("%d coefficients for %d rounds × %d labels", len(opt.Coef), opt.Rounds, nl)
	case len(opt.Offsets) != opt.Rounds:
		return nil, fmt.Errorf("%d offsets for %d rounds", len(opt.Offsets), opt.Rounds)
	case opt.Unlabeled < -1 || opt.Unlabeled >= nl:
		return nil, fmt.Errorf("unlabeled index %d outside the %d labels", opt.Unlabeled, nl)
	case !slices.IsSorted(opt.Labels) || len(slices.Compact(slices.Clone(opt.Labels))) != nl:
		return nil, fmt.Errorf("the label values must be distinct and increasing")
	}
	if opt.LabelCol < 0 {
		return nil, fmt.Errorf("node label column %d: the propagation kernel needs node labels", opt.LabelCol)
	}
	if err := graph.CheckLabelColumns(graphs, opt.LabelCol, -1); err != nil {
		return nil, err
	}
	return run(graphs, opt.Rounds, 1, opt.NJobs, opt.Control, func(g int, gr *graph.Graph, keys []int64) error {
		return labelKeys(g, gr, &opt, keys)
	})
}

// labelKeys writes the bins of graph gr's nodes, round after round, to keys
// (Rounds·N values).
func labelKeys(g int, gr *graph.Graph, opt *Options, keys []int64) error {
	n := gr.N
	// The graph's own labels, in increasing order of value: the columns of its
	// distributions. The sums over them run in this order, which is the same
	// in every call, so the hashes are too.
	idx := make([]int, n) // index in opt.Labels, or -1 when unlabelled
	var local []int
	for v := range n {
		x := gr.Node(v)[opt.LabelCol]
		k, ok := slices.BinarySearch(opt.Labels, x)
		if !ok {
			return fmt.Errorf("graph %d node %d: label value %v not in the label table", g, v, x)
		}
		if k == opt.Unlabeled {
			idx[v] = -1
			continue
		}
		idx[v] = k
		local = append(local, k)
	}
	slices.Sort(local)
	local = slices.Compact(local)
	nk := len(local)
	col := make([]int, n) // column of a labelled node's label
	p := make([]float64, n*nk)
	for v := range n {
		row := p[v*nk : (v+1)*nk]
		if idx[v] < 0 {
			for j := range row {
				row[j] = 1 / float64(nk)
			}
			continue
		}
		col[v], _ = slices.BinarySearch(local, idx[v])
		row[col[v]] = 1
	}
	next := make([]float64, n*nk)
	coef := make([]float64, nk)
	for t := range opt.Rounds {
		for j, k := range local {
			coef[j] = opt.Coef[t*len(opt.Labels)+k]
		}
		for v := range n {
			s := 0.0
			for j, pj := range p[v*nk : (v+1)*nk] {
				if opt.Sqrt {
					pj = math.Sqrt(pj)
				}
				s += pj * coef[j]
			}
			b, err := bin(s, opt.Offsets[t], opt.BinWidth)
			if err != nil {
				return fmt.Errorf("graph %d node %d round %d: %w", g, v, t, err)
			}
			keys[t*n+v] = b
		}
		if t == opt.Rounds-1 {
			break
		}
		propagate(gr, p, next, nk)
		p, next = next, p
		if opt.Clamp {
			for v := range n {
				if idx[v] >= 0 {
					row := p[v*nk : (v+1)*nk]
					clear(row)
					row[col[v]] = 1
				}
			}
		}
	}
	return nil
}

// Attributes returns the propagation kernel's feature matrix of graphs with
// continuous node attributes: P₀ holds the attribute vectors, P_{t+1} = T P_t
// (T as in Labels), and row g counts, for every round t < Rounds, the nodes of
// graph g per bin vector of the round-t hash; the columns number the
// (round, bin vector) pairs of the call.
func Attributes(graphs []*graph.Graph, opt AttrOptions) (*sparsegram.Features, error) {
	d := opt.AttrWidth
	switch {
	case opt.Rounds < 1 || opt.Rounds > MaxRounds:
		return nil, fmt.Errorf("rounds must be in [1, %d], got %d", MaxRounds, opt.Rounds)
	case !(opt.BinWidth > 0) || math.IsInf(opt.BinWidth, 0):
		return nil, fmt.Errorf("bin width must be a positive finite number, got %v", opt.BinWidth)
	case d < 1 || len(opt.Coef) != opt.Rounds*d || len(opt.Offsets) != opt.Rounds*d:
		return nil, fmt.Errorf("%d coefficients and %d offsets for %d rounds × %d attribute columns",
			len(opt.Coef), len(opt.Offsets), opt.Rounds, d)
	}
	for g, gr := range graphs {
		if gr.N > 0 && (opt.AttrCol < 0 || opt.AttrCol+d > gr.NodeCols) {
			return nil, fmt.Errorf("graph %d: attribute columns [%d, %d) but the nodes have %d feature columns", g, opt.AttrCol, opt.AttrCol+d, gr.NodeCols)
		}
	}
	return run(graphs, opt.Rounds, d, opt.NJobs, opt.Control, func(g int, gr *graph.Graph, keys []int64) error {
		n := gr.N
		p := make([]float64, n*d)
		for v := range n {
			copy(p[v*d:(v+1)*d], gr.Node(v)[opt.AttrCol:opt.AttrCol+d])
		}
		next := make([]float64, n*d)
		for t := range opt.Rounds {
			for v := range n {
				for k, x := range p[v*d : (v+1)*d] {
					b, err := bin(x*opt.Coef[t*d+k], opt.Offsets[t*d+k], opt.BinWidth)
					if err != nil {
						return fmt.Errorf("graph %d node %d round %d attribute column %d: %w", g, v, t, k, err)
					}
					keys[(t*n+v)*d+k] = b
				}
			}
			if t < opt.Rounds-1 {
				propagate(gr, p, next, d)
				p, next = next, p
			}
		}
		return nil
	})
}

// bin is ⌊(s + b)/w⌋, or an error when that is not a finite number an int64 holds.
func bin(s, b, w float64) (int64, error) {
	h := math.Floor((s + b) / w)
	if !(math.Abs(h) < 1<<62) {
		return 0, fmt.Errorf("bin index %v of the value %v is not representable (NaN, infinite, or too large for the bin width %v)", h, s, w)
	}
	return int64(h), nil
}

// propagate sets out = T p for the n×k row-major matrix p of graph gr, with
// T = D⁻¹A: row v of out is Σ_u (A_vu / d_v) p_u over v's neighbours in
// adjacency order, d_v = Σ_u A_vu; zero when d_v is 0.
func propagate(gr *graph.Graph, p, out []float64, k int) {
	clear(out)
	for v := range gr.N {
		d := 0.0
		for q := gr.RowPtr[v]; q < gr.RowPtr[v+1]; q++ {
			d += gr.Val[q]
		}
		if !(d > 0) {
			continue
		}
		row := out[v*k : (v+1)*k]
		for q := gr.RowPtr[v]; q < gr.RowPtr[v+1]; q++ {
			a := gr.Val[q] / d
			if a == 0 {
				continue
			}
			u := int(gr.Col[q])
			for j, x := range p[u*k : (u+1)*k] {
				row[j] += a * x
			}
		}
	}
}

// run computes the bins of every graph's nodes in parallel (keysOf writes
// graph g's Rounds·N bins of width values each, round-major), then numbers the
// distinct (round, bins) keys of the call in order of first appearance and
// counts them per graph.
func run(graphs []*graph.Graph, rounds, width, nJobs int, ctl *schedule.Control,
	keysOf func(g int, gr *graph.Graph, keys []int64) error) (*sparsegram.Features, error) {
	start := make([]int, len(graphs)+1) // graph g's keys are [start[g], start[g+1]) of keys, in units of width
	for g, gr := range graphs {
		start[g+1] = start[g] + rounds*gr.N
	}
	keys := make([]int64, start[len(graphs)]*width)
	err := schedule.Run(ctl, len(graphs), nJobs, 16, func(_, g int) error {
		return keysOf(g, graphs[g], keys[start[g]*width:start[g+1]*width])
	})
	if err != nil {
		return nil, err
	}
	f := &sparsegram.Features{Ptr: make([]int, 1, len(graphs)+1)}
	ids := make([]int32, 0, rounds*64)
	var number func(t int, key []int64) (int32, error)
	if width == 1 {
		seen := map[[2]int64]int32{}
		number = func(t int, key []int64) (int32, error) {
			k := [2]int64{int64(t), key[0]}
			id, ok := seen[k]
			if !ok {
				if len(seen) == math.MaxInt32 {
					return 0, fmt.Errorf("more than 2^31 distinct bins")
				}
				id = int32(len(seen))
				seen[k] = id
				f.NumCols++
			}
			return id, nil
		}
	} else {
		seen := map[string]int32{}
		buf := make([]byte, 8*(width+1))
		number = func(t int, key []int64) (int32, error) {
			putWord(buf, uint64(t))
			for i, x := range key {
				putWord(buf[8*(i+1):], uint64(x))
			}
			id, ok := seen[string(buf)]
			if !ok {
				if len(seen) == math.MaxInt32 {
					return 0, fmt.Errorf("more than 2^31 distinct bins")
				}
				id = int32(len(seen))
				seen[string(buf)] = id
				f.NumCols++
			}
			return id, nil
		}
	}
	for g, gr := range graphs {
		if g%256 == 0 && ctl.Cancelled() {
			return nil, schedule.ErrCancelled
		}
		ids = ids[:0]
		for r := start[g]; r < start[g+1]; r++ {
			id, err := number((r-start[g])/max(gr.N, 1), keys[r*width:(r+1)*width])
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		f.AppendRow(ids)
	}
	return f, nil
}

// putWord writes x little-endian to b[:8].
func putWord(b []byte, x uint64) {
	for i := range 8 {
		b[i] = byte(x >> (8 * i))
	}
}
