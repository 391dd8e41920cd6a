package wl

import (
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MaxHashes and MaxPerHash bound HashOptions.Hashes and HashOptions.PerHash:
// each hash function adds a WL refinement of every graph, each projection a
// word of every node's round-0 key.
const (
	MaxHashes  = 10000
	MaxPerHash = 64
)

// HashOptions configures HashFeatures: the hash graph kernel's discretisation
// of continuous node attributes (Morris, Kriege, Kersting and Mutzel 2016).
type HashOptions struct {
	// WL configures the Weisfeiler–Lehman refinement run on every hashed
	// labelling; its NodeLabelCol (≥ 0) joins the hash as a discrete label, -1
	// for none.
	WL Options
	// AttrCol and AttrWidth locate the continuous attribute vector of each
	// node in the node feature rows.
	AttrCol, AttrWidth int
	// Projections holds Hashes·PerHash rows of AttrWidth values, row-major:
	// the random directions a of the p-stable hash ⌊(a·x + b)/BinWidth⌋.
	Projections []float64
	// Offsets holds Hashes·PerHash values b in [0, BinWidth).
	Offsets []float64
	// Hashes is the number T of hash functions (1..MaxHashes); PerHash the
	// number of projections concatenated into one hash (a cell of a grid rather
	// than a slab of space; 1..MaxPerHash).
	Hashes, PerHash int
	// BinWidth is the width of a bucket along a projection (> 0).
	BinWidth float64
}

// HashFeatures returns the hash graph kernel's feature matrix: for every hash
// function t, the nodes of each graph are labelled by (their discrete label,
// the bucket ⌊(a·x + b)/w⌋ of their attribute vector x along each of the
// hash's projections) and refined by Weisfeiler–Lehman as Features does; the
// T feature matrices are concatenated, each numbering its labels after the
// previous one's. The dot product of two rows is Σ_t K_WL,t, T times the hash
// graph kernel with the WL subtree base kernel.
func HashFeatures(graphs []*graph.Graph, opt HashOptions) (*sparsegram.Features, error) {
	switch {
	case opt.Hashes < 1 || opt.Hashes > MaxHashes || opt.PerHash < 1 || opt.PerHash > MaxPerHash:
		return nil, fmt.Errorf("hashes and projections per hash must be in [1, %d] and [1, %d], got %d and %d",
			MaxHashes, MaxPerHash, opt.Hashes, opt.PerHash)
	case opt.AttrWidth < 1 || len(opt.Projections) != opt.Hashes*opt.PerHash*opt.AttrWidth:
		return nil, fmt.Errorf("%d projection values for %d×%d projections of width %d", len(opt.Projections), opt.Hashes, opt.PerHash, opt.AttrWidth)
	case len(opt.Offsets) != opt.Hashes*opt.PerHash:
		return nil, fmt.Errorf("%d offsets for %d×%d projections", len(opt.Offsets), opt.Hashes, opt.PerHash)
	case !(opt.BinWidth > 0) || math.IsInf(opt.BinWidth, 0):
		return nil, fmt.Errorf("bin width must be a positive finite number, got %v", opt.BinWidth)
	}
	nodes := 0
	for g, gr := range graphs {
		if gr.N > 0 && (opt.AttrCol < 0 || opt.AttrCol+opt.AttrWidth > gr.NodeCols) {
			return nil, fmt.Errorf("graph %d: attribute columns [%d, %d) but the nodes have %d feature columns", g, opt.AttrCol, opt.AttrCol+opt.AttrWidth, gr.NodeCols)
		}
		nodes += gr.N
	}
	if err := checkColumns(graphs, opt.WL); err != nil {
		return nil, err
	}
	out := &sparsegram.Features{Ptr: make([]int, len(graphs)+1)}
	parts := make([]*sparsegram.Features, opt.Hashes)
	key := make([]int64, 0, nodes*(opt.PerHash+1))
	for t := range opt.Hashes {
		// The round-0 label of a node: (its discrete label, its PerHash buckets), numbered.
		key = key[:0]
		for _, gr := range graphs {
			for v := range gr.N {
				if opt.WL.NodeLabelCol >= 0 {
					key = append(key, int64(math.Float64bits(gr.Node(v)[opt.WL.NodeLabelCol])))
				}
				x := gr.Node(v)[opt.AttrCol : opt.AttrCol+opt.AttrWidth]
				for p := range opt.PerHash {
					row := t*opt.PerHash + p
					a := opt.Projections[row*opt.AttrWidth : (row+1)*opt.AttrWidth]
					dot := opt.Offsets[row]
					for k, xk := range x {
						dot += a[k] * xk
					}
					key = append(key, int64(math.Floor(dot/opt.BinWidth)))
				}
			}
		}
		wlOpt := opt.WL
		wlOpt.start = tupleLabels(key, nodes)
		var err error
		if parts[t], err = Features(graphs, wlOpt); err != nil {
			return nil, err
		}
	}
	// Concatenate the T matrices row by row, shifting each one's columns.
	for g := range graphs {
		shift := 0
		for _, f := range parts {
			for k := f.Ptr[g]; k < f.Ptr[g+1]; k++ {
				out.Col = append(out.Col, f.Col[k]+int32(shift))
				out.Val = append(out.Val, f.Val[k])
			}
			shift += f.NumCols
		}
		out.Ptr[g+1] = len(out.Col)
		out.NumCols = shift
	}
	if out.NumCols > math.MaxInt32 {
		return nil, fmt.Errorf("%d features: more than 2^31", out.NumCols)
	}
	return out, nil
}

// tupleLabels numbers the n equal-length tuples of key (n rows) by their
// distinct values, returned as float64 round-0 labels.
func tupleLabels(key []int64, n int) []float64 {
	labels := make([]float64, n)
	if n == 0 {
		return labels
	}
	w := len(key) / n
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	row := func(i int) []int64 { return key[i*w : (i+1)*w] }
	slices.SortFunc(order, func(a, b int) int { return slices.Compare(row(a), row(b)) })
	id := 0
	for k, i := range order {
		if k > 0 && !slices.Equal(row(order[k-1]), row(i)) {
			id++
		}
		labels[i] = float64(id)
	}
	return labels
}
