package rwkernel

import (
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// Content order. The arithmetic of a pair is not symmetric in its two graphs:
// the product graph's nodes are numbered row-major over (G, G'), which orders
// every sum of the solvers, and the spectral sums nest the first graph's terms
// outside the second's (only the walk-count sums are symmetric). The pair's
// value must not depend on which side of a call each graph is on, nor on their
// positions (a symmetric call solves (i, j) with i < j), so pair solves every
// pair with its graphs in content order (graph.CompareContent): an order given
// by the two graphs' content alone, which compares feature values as numbers,
// so that it also survives the Python side's coding of string labels by their
// rank among the call's labels. Two graphs with equal content give the same
// arithmetic in either orientation.

// contentRanks returns the rank of each of gs in content order, equal graphs
// (graph.CompareContent = 0) sharing a rank. A rank depends on the call, but
// rank[i] < rank[j] exactly when graph i comes before graph j in content order,
// which depends on the two graphs alone. Sorting once per call costs n·log n
// comparisons of graphs, and pair then compares two integers rather than two
// graphs.
func contentRanks(gs []*graph.Graph) []int32 {
	idx := make([]int32, len(gs))
	for k := range idx {
		idx[k] = int32(k)
	}
	cmp := func(a, b int32) int { return graph.CompareContent(gs[a], nil, gs[b], nil) }
	slices.SortFunc(idx, cmp)
	rank := make([]int32, len(gs))
	r := int32(0)
	for k, i := range idx {
		if k > 0 && cmp(idx[k-1], i) != 0 {
			r++
		}
		rank[i] = r
	}
	return rank
}
