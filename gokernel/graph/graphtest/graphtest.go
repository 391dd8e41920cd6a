// Package graphtest builds graphs for tests and fuzz targets of the packages
// that read graphs.
package graphtest

import (
	"math/rand/v2"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// FromBytes builds a graph from fuzz bytes: b[0] picks the node count (1 to
// 48), the following pairs of bytes are edge endpoints (repeats dropped) with
// weights cycling through 1, 2, 3, 4. It returns nil for empty input.
func FromBytes(b []byte) *graph.Graph {
	if len(b) == 0 {
		return nil
	}
	n := int(b[0]%48) + 1
	seen := map[[2]int64]bool{}
	var edges []int64
	var w []float64
	for k := 1; k+1 < len(b); k += 2 {
		u, v := int64(b[k])%int64(n), int64(b[k+1])%int64(n)
		if u > v {
			u, v = v, u
		}
		if !seen[[2]int64{u, v}] {
			seen[[2]int64{u, v}] = true
			edges = append(edges, u, v)
			w = append(w, float64(1+len(w)%4))
		}
	}
	g, err := graph.New(n, edges, w, nil, 0, nil, 0)
	if err != nil {
		panic(err) // FromBytes only builds valid graphs
	}
	return g
}

// Pick returns gs[idx[0]], gs[idx[1]], …: a call's graph list drawn from a
// reference list; nil for nil idx (a symmetric call's Y).
func Pick(gs []*graph.Graph, idx []int) []*graph.Graph {
	if idx == nil {
		return nil
	}
	out := make([]*graph.Graph, len(idx))
	for k, i := range idx {
		out[k] = gs[i]
	}
	return out
}

// Seq returns a, a+1, …, b−1.
func Seq(a, b int) []int {
	s := make([]int, b-a)
	for k := range s {
		s[k] = a + k
	}
	return s
}

// WithNodeFeat returns a new graph with g's nodes, edges, weights and edge
// features and the node feature rows nf (g's when nil): with nil, a copy of g
// equal in content but not in memory.
func WithNodeFeat(g *graph.Graph, nf []float64) *graph.Graph {
	if nf == nil {
		nf = g.NodeFeat
	}
	// New copies its arguments.
	h, err := g.WithFeatures(nf, g.NodeCols, g.EdgeFeat, g.EdgeCols)
	if err != nil {
		panic(err)
	}
	return h
}

// Labelled builds the graph of n nodes with the given edges (pairs of node
// indices), unit weights and one node feature column holding labels.
func Labelled(n int, edges []int64, labels []float64) *graph.Graph {
	w := make([]float64, len(edges)/2)
	for i := range w {
		w[i] = 1
	}
	g, err := graph.New(n, edges, w, labels, 1, nil, 0)
	if err != nil {
		panic(err)
	}
	return g
}

// RandomLabelled builds a random Labelled graph of n nodes: each pair of
// distinct nodes joined with probability pEdge, each node given a self-loop
// with probability pLoop and a label drawn from 0..labels−1.
func RandomLabelled(rng *rand.Rand, n int, pEdge, pLoop float64, labels int) *graph.Graph {
	var edges []int64
	for u := range n {
		for v := u; v < n; v++ {
			if (u != v && rng.Float64() < pEdge) || (u == v && rng.Float64() < pLoop) {
				edges = append(edges, int64(u), int64(v))
			}
		}
	}
	nl := make([]float64, n)
	for v := range nl {
		nl[v] = float64(rng.IntN(labels))
	}
	return Labelled(n, edges, nl)
}
