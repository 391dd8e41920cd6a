package mgk

import (
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
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
