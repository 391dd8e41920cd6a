package oddsth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graph/graphtest"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// visits is the definition written out: for every root, BFS distances, and
// for every reached node its tree visit as a canonical string (label, then
// its children's strings sorted), counted.
func visits(g *graph.Graph, h int) map[string]int {
	out := map[string]int{}
	for r := range g.N {
		dist := map[int]int{r: 0}
		queue := []int{r}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, w := range g.Col[g.RowPtr[u]:g.RowPtr[u+1]] {
				if _, ok := dist[int(w)]; !ok && (h == 0 || dist[u] < h) {
					dist[int(w)] = dist[u] + 1
					queue = append(queue, int(w))
				}
			}
		}
		var tree func(v int) string
		tree = func(v int) string {
			seen := map[int]bool{}
			var kids []string
			for _, w := range g.Col[g.RowPtr[v]:g.RowPtr[v+1]] {
				if d, ok := dist[int(w)]; ok && d == dist[v]+1 && !seen[int(w)] {
					seen[int(w)] = true
					kids = append(kids, tree(int(w)))
				}
			}
			slices.Sort(kids)
			return fmt.Sprintf("%v(%s)", g.Node(v)[0], strings.Join(kids, ","))
		}
		for v := range dist {
			out[tree(v)]++
		}
	}
	return out
}

func TestFeaturesAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var gs []*graph.Graph
	for range 15 {
		gs = append(gs, graphtest.RandomLabelled(rng, 1+rng.IntN(9), 0.3, 0.1, 3))
	}
	gs = append(gs, graphtest.Labelled(0, nil, nil), graphtest.Labelled(3, []int64{0, 1, 0, 1, 1, 2}, []float64{1, 1, 2}))
	for _, h := range []int{0, 1, 2, 3} {
		f, err := Features(gs, Options{Height: h, NodeLabelCol: 0})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(gs)*len(gs))
		if err := sparsegram.Gram(f, nil, true, sparsegram.Options{}, out); err != nil {
			t.Fatal(err)
		}
		ref := make([]map[string]int, len(gs))
		for i, g := range gs {
			ref[i] = visits(g, h)
		}
		for i := range gs {
			for j := range gs {
				want := 0
				for k, c := range ref[i] {
					want += c * ref[j][k]
				}
				if got := out[i*len(gs)+j]; got != float64(want) {
					t.Fatalf("h=%d: K[%d][%d] = %v, want %d", h, i, j, got, want)
				}
			}
		}
	}
}

// TestRenumbering checks that the features do not depend on how a graph's
// nodes are numbered.
func TestRenumbering(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	g := graphtest.RandomLabelled(rng, 12, 0.3, 0.1, 3)
	perm := rng.Perm(g.N)
	var edges []int64
	for e := range g.NumEdges() {
		edges = append(edges, int64(perm[g.EdgeV[e]]), int64(perm[g.EdgeU[e]]))
	}
	nl := make([]float64, g.N)
	for v := range g.N {
		nl[perm[v]] = g.Node(v)[0]
	}
	p := graphtest.Labelled(g.N, edges, nl)
	for _, h := range []int{0, 2} {
		f, err := Features([]*graph.Graph{g, p}, Options{Height: h, NodeLabelCol: 0})
		if err != nil {
			t.Fatal(err)
		}
		a, b := f.Ptr[1], f.Ptr[2]
		if !slices.Equal(f.Col[:a], f.Col[a:b]) || !slices.Equal(f.Val[:a], f.Val[a:b]) {
			t.Fatalf("h=%d: a renumbered graph has other features", h)
		}
	}
}

func TestFeaturesErrors(t *testing.T) {
	g := graphtest.Labelled(2, []int64{0, 1}, []float64{0, 1})
	for _, opt := range []Options{{Height: -1}, {Height: MaxHeight + 1}, {Height: 2, NodeLabelCol: 1}} {
		if _, err := Features([]*graph.Graph{g}, opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
}
