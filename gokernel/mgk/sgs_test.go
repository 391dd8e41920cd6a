package mgk

import (
	"math"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

func TestMatchingOrder(t *testing.T) {
	// shared counts the consecutive edges of order (nil: g's own) that share
	// an endpoint.
	shared := func(g *graph.Graph, order []int) int {
		n := 0
		for k := 1; k < g.NumEdges(); k++ {
			e, f := k-1, k
			if order != nil {
				e, f = order[k-1], order[k]
			}
			if g.EdgeU[e] == g.EdgeU[f] || g.EdgeU[e] == g.EdgeV[f] || g.EdgeV[e] == g.EdgeU[f] || g.EdgeV[e] == g.EdgeV[f] {
				n++
			}
		}
		return n
	}
	path := mustGraph(t, 10, []int64{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9}, make([]float64, 9), nil, 0, nil, 0)
	// A benzene ring with a methyl group and a self-loop.
	ring := mustGraph(t, 7, []int64{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 0, 0, 6, 6, 6}, make([]float64, 8), nil, 0, nil, 0)
	star := mustGraph(t, 5, []int64{0, 1, 0, 2, 0, 3, 0, 4}, make([]float64, 4), nil, 0, nil, 0)
	for _, tc := range []struct {
		name string
		g    *graph.Graph
		// most is the number of consecutive edges allowed to share an
		// endpoint after reordering: one per boundary between colours.
		most int
	}{
		{"path", path, 1},
		{"ring", ring, 3},
		{"star", star, 3}, // every edge meets every other: nothing to gain
	} {
		t.Run(tc.name, func(t *testing.T) {
			order := matchingOrder(tc.g)
			if order != nil {
				sorted := slices.Clone(order)
				slices.Sort(sorted)
				for k, e := range sorted {
					if e != k {
						t.Fatalf("order %v is not a permutation", order)
					}
				}
			}
			if got := shared(tc.g, order); got > tc.most {
				t.Errorf("%d consecutive edges share an endpoint (%d before), want at most %d", got, shared(tc.g, nil), tc.most)
			}
		})
	}
	for i, g := range testGraphs(t) {
		order := matchingOrder(g)
		if order == nil {
			continue
		}
		if got := len(order); got != g.NumEdges() {
			t.Errorf("graph %d: order of %d edges for %d", i, got, g.NumEdges())
		}
		if before, after := shared(g, nil), shared(g, order); after > before {
			t.Errorf("graph %d: %d consecutive edges share an endpoint after reordering, %d before", i, after, before)
		}
	}
}

// TestBreakdownReported checks that a system that is not positive definite
// (κv = 30 makes D V⁻¹ − W indefinite on graphs with a cycle) ends its SGS
// solves with a report, not a NaN, in Gram and in GramGrad's lockstep, with
// and without self-loops on either side; and that GramGrad's K is still
// Gram's bit for bit, its primal column having stopped where Gram's did.
func TestBreakdownReported(t *testing.T) {
	ring := []int64{0, 1, 1, 2, 2, 3, 3, 0, 0, 2}
	gs := []*graph.Graph{
		mustGraph(t, 4, ring, []float64{1, 1, 1, 1, 1}, nil, 0, nil, 0),
		mustGraph(t, 4, append(slices.Clone(ring), 1, 1), []float64{1, 1, 1, 1, 1, 0.5}, nil, 0, nil, 0),
		mustGraph(t, 3, []int64{0, 1, 1, 2, 2, 0}, []float64{1, 2, 1}, nil, 0, nil, 0),
	}
	opt := Options{NodeKernel: &microkernel.Constant{C: 30}, EdgeKernel: &microkernel.Constant{C: 1}, Q: 0.5}
	n := len(gs)
	K, KG, G := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n*3)
	bad, err := Gram(gs, nil, nil, nil, true, opt, K, nil)
	if err != nil {
		t.Fatal(err)
	}
	badG, err := GramGrad(gs, nil, nil, nil, true, opt, KG, G, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != n*(n+1)/2 || len(badG) != len(bad) {
		t.Fatalf("%d and %d of %d pairs reported by Gram and GramGrad, want all: %v %v", len(bad), len(badG), n*(n+1)/2, bad, badG)
	}
	for _, u := range append(bad, badG...) {
		if u.Iterations >= DefaultMaxIter {
			t.Errorf("%v: stopped by the iteration cap, not by the breakdown", u)
		}
	}
	for e := range K {
		if K[e] != KG[e] || math.IsNaN(K[e]) {
			t.Errorf("K[%d] = %v (Gram), %v (GramGrad)", e, K[e], KG[e])
		}
	}
}
