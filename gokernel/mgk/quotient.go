package mgk

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// The colour-refinement quotient.
//
// Colour refinement (1-WL) on node feature rows and start probabilities, with
// edges told apart by feature row and weight, ends in an equitable partition:
// every node of class A has the same weighted number N_AB(ℓ) of neighbours in
// class B through edges of label ℓ. The solution x of a pair is then constant
// on pairs of classes (the system maps class-constant vectors to class-constant
// vectors and has a unique solution), so it can be solved on classes × classes
// unknowns. Writing c_A = √|A| and x̃_(A,A') = c_A c_A' x_(A,A'), the reduced
// system is the kernel's system on the quotient graph with edge weights
// √(N_AB(ℓ) N_BA(ℓ)) (a self-loop of weight N_AA(ℓ) within a class), the
// original degrees, and the constant vector 1 replaced by c⊗c':
//
//	(D V⁻¹ − W̃) x̃ = D (c⊗c'),  K = Σ p_A p'_A' c_A c_A' x̃_(A,A'),
//
// exact in exact arithmetic. Each graph is refined alone, with colours named
// by the rank of their signature among the graph's own (not by first
// appearance in a call), so that a graph's quotient, and hence every value
// computed on it, depends on the graph alone; WL-equivalent graphs (a graph
// and its permutations, C6 and two triangles) still get identical quotients
// when their class weights sum alike, and Gram then solves one of them.

// quotient is one graph's reduction: the quotient graph (or the graph itself
// when refinement leaves every node alone), and what newSide needs.
type quotient struct {
	g     *graph.Graph
	start []float64 // class start probabilities; nil = all ones
	deg   []float64 // original degrees per class; nil when g is the original
	cw    []float64 // √|class|; nil when g is the original
}

// content is what the solver reads of q beside its graph (as side.content).
func (q *quotient) content() [][]float64 { return [][]float64{q.start, q.cw, q.deg} }

// rankBy names items 0..n-1 by the rank of their value among the distinct
// values, compare ordering the values: names that depend on the values
// alone, not on the order of the items. It returns the names and how many
// there are.
func rankBy(n int, compare func(a, b int32) int) ([]int32, int) {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, compare)
	ids := make([]int32, n)
	r := int32(0)
	for k, i := range idx {
		if k > 0 && compare(idx[k-1], i) != 0 {
			r++
		}
		ids[i] = r
	}
	return ids, int(r) + min(n, 1)
}

// refinements counts quotientOf's refinements (for the tests: a quotient
// found in the side cache is not refined again).
var refinements atomic.Int64

// quotientOf refines g alone (start probabilities start, nil for all ones)
// and returns its quotient.
func quotientOf(g *graph.Graph, start []float64) quotient {
	refinements.Add(1)
	// Initial colours: start probability and node feature row; edge labels:
	// weight and feature row; ranked by value. -0 and 0 are told apart,
	// which only costs a merge.
	p := func(i int32) float64 {
		if start == nil {
			return 1
		}
		return start[i]
	}
	col, count := rankBy(g.N, func(a, b int32) int {
		return cmp.Or(cmp.Compare(graph.SortableBits(p(a)), graph.SortableBits(p(b))), graph.CompareFloats(g.Node(int(a)), g.Node(int(b))))
	})
	elab, _ := rankBy(g.NumEdges(), func(a, b int32) int {
		return cmp.Or(cmp.Compare(graph.SortableBits(g.Weight[a]), graph.SortableBits(g.Weight[b])), graph.CompareFloats(g.Edge(int(a)), g.Edge(int(b))))
	})
	// Rounds until the number of colours stops growing: the partition is
	// then stable (at once when every node has its own colour). A node's
	// signature, its neighbours' (edge label, colour) sorted, lies in sig
	// where its adjacency lies in Col.
	sig := make([]int64, len(g.Col))
	for count < g.N {
		for i := range g.N {
			s := sig[g.RowPtr[i]:g.RowPtr[i+1]]
			for k := range s {
				e := int(g.RowPtr[i]) + k
				s[k] = int64(elab[g.EdgeOf[e]])<<32 | int64(col[g.Col[e]])
			}
			slices.Sort(s)
		}
		next, n := rankBy(g.N, func(a, b int32) int {
			return cmp.Or(cmp.Compare(col[a], col[b]),
				slices.Compare(sig[g.RowPtr[a]:g.RowPtr[a+1]], sig[g.RowPtr[b]:g.RowPtr[b+1]]))
		})
		col = next
		if n == count {
			break
		}
		count = n
	}
	return buildQuotient(g, start, col, elab)
}

// buildQuotient forms the quotient of g under the stable colouring col, with
// classes in increasing colour order.
func buildQuotient(g *graph.Graph, start []float64, col, elab []int32) quotient {
	colours := slices.Clone(col)
	slices.Sort(colours)
	colours = slices.Compact(colours)
	nc := len(colours)
	size := make([]int, nc)
	rep := make([]int, nc)
	cls := make([]int32, g.N)
	for i := g.N - 1; i >= 0; i-- {
		a, _ := slices.BinarySearch(colours, col[i])
		cls[i] = int32(a)
		size[a]++
		rep[a] = i
	}
	if nc == g.N {
		return quotient{g: g, start: start}
	}
	// N_AB(ℓ) from each class's representative, keyed by (B, ℓ).
	type bl struct{ b, l int32 }
	nab := make([]map[bl]float64, nc)
	edgeOf := map[int32]int{} // label → an edge carrying it
	for a := range nc {
		nab[a] = map[bl]float64{}
		r := rep[a]
		for k := g.RowPtr[r]; k < g.RowPtr[r+1]; k++ {
			e := int(g.EdgeOf[k])
			l := elab[e]
			nab[a][bl{cls[g.Col[k]], l}] += g.Val[k]
			edgeOf[l] = e
		}
	}
	var ends []int64
	var wts, efeat []float64
	for a := range nc {
		keys := make([]bl, 0, len(nab[a]))
		for k := range nab[a] {
			if int(k.b) >= a {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(x, y bl) int {
			if x.b != y.b {
				return int(x.b - y.b)
			}
			return int(x.l - y.l)
		})
		for _, k := range keys {
			w := nab[a][k]
			if int(k.b) != a {
				w = math.Sqrt(w * nab[k.b][bl{int32(a), k.l}])
			}
			ends = append(ends, int64(a), int64(k.b))
			wts = append(wts, w)
			efeat = append(efeat, g.Edge(edgeOf[k.l])...)
		}
	}
	nfeat := make([]float64, 0, nc*g.NodeCols)
	deg := make([]float64, nc)
	cw := make([]float64, nc)
	gdeg := g.Degrees()
	var st []float64
	if start != nil {
		st = make([]float64, nc)
	}
	for a := range nc {
		nfeat = append(nfeat, g.Node(rep[a])...)
		deg[a] = gdeg[rep[a]]
		cw[a] = math.Sqrt(float64(size[a]))
		if st != nil {
			st[a] = start[rep[a]]
		}
	}
	qg, err := graph.New(nc, ends, wts, nfeat, g.NodeCols, efeat, g.EdgeCols)
	if err != nil {
		// Cannot happen: the quotient's parts come from a valid graph.
		panic("mgk: quotient graph: " + err.Error())
	}
	return quotient{g: qg, start: st, deg: deg, cw: cw}
}

// QuotientGraph is a graph's colour-refinement quotient as the solvers use
// it, for other backends of the kernel (the CUDA bridge). Solving the
// kernel's system on Graph with the original degrees Degrees in place of
// Graph's own, the right-hand side weighted by ClassWeights (c_A = √|A| for
// each node pair's two classes) and K = Σ p_A p'_A' c_A c_A' x̃ gives the
// original graph's values (see quotient.go's package comment).
type QuotientGraph struct {
	// Graph is the quotient, or the graph itself when refinement leaves
	// every node in a class of its own (Degrees and ClassWeights then nil).
	Graph *graph.Graph
	// Start holds the classes' start probabilities (nil: all ones).
	Start []float64
	// Degrees holds each class's degree in the original graph.
	Degrees []float64
	// ClassWeights holds √|A| for each class A.
	ClassWeights []float64
}

// QuotientOf returns g's quotient under colour refinement on node, edge and
// start-probability values (start nil: all ones), the one Gram, Diag and
// GramGrad solve on; it depends on g and start alone. name (e.g. "X[3]")
// names g in the error returned for a graph corrupted after construction.
//
// The quotient is kept in the solvers' cache of prepared graphs
// (SideCacheBytes), keyed by g's content and start: a later QuotientOf, Gram,
// Diag or GramGrad of a graph with the same content and start probabilities
// (the same graph, or an equal one) takes it from there instead of refining
// again, and QuotientOf takes those calls' quotients. What it returns is then
// shared with the cache and other callers: read it, never write to it (Graph
// may be an equal graph met earlier, Start a copy of an equal start).
func QuotientOf(name string, g *graph.Graph, start []float64) (QuotientGraph, error) {
	q, err := safely(name, func() quotient { return sideCache.quotient(g, start) })
	if err != nil {
		return QuotientGraph{}, err
	}
	return QuotientGraph{Graph: q.g, Start: q.start, Degrees: q.deg, ClassWeights: q.cw}, nil
}
