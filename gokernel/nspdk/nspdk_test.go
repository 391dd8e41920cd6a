package nspdk

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

func mustGraph(t testing.TB, n int, edges []int64, labels, edgeLabels []float64) *graph.Graph {
	w := make([]float64, len(edges)/2)
	for i := range w {
		w[i] = 1
	}
	ec := 0
	if edgeLabels != nil {
		ec = 1
	}
	g, err := graph.New(n, edges, w, labels, 1, edgeLabels, ec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func randomGraph(t testing.TB, rng *rand.Rand, n int) *graph.Graph {
	var edges []int64
	var el []float64
	for u := range n {
		for v := u; v < n; v++ {
			if (u != v && rng.Float64() < 0.35) || (u == v && rng.Float64() < 0.1) {
				edges = append(edges, int64(u), int64(v))
				el = append(el, float64(rng.IntN(2)))
			}
		}
	}
	nl := make([]float64, n)
	for v := range nl {
		nl[v] = float64(rng.IntN(3))
	}
	return mustGraph(t, n, edges, nl, el)
}

// permuted renumbers g's nodes by perm (node v becomes perm[v]) and reverses
// its edge list.
func permuted(t testing.TB, g *graph.Graph, perm []int) *graph.Graph {
	var edges []int64
	var el []float64
	for e := g.NumEdges() - 1; e >= 0; e-- {
		edges = append(edges, int64(perm[g.EdgeV[e]]), int64(perm[g.EdgeU[e]]))
		el = append(el, g.Edge(e)[0])
	}
	nl := make([]float64, g.N)
	for v := range g.N {
		nl[perm[v]] = g.Node(v)[0]
	}
	return mustGraph(t, g.N, edges, nl, el)
}

// row returns row i of f as (column, count) pairs.
func row(f *sparsegram.Features, i int) [][2]int64 {
	var out [][2]int64
	for k := f.Ptr[i]; k < f.Ptr[i+1]; k++ {
		out = append(out, [2]int64{int64(f.Col[k]), int64(f.Val[k])})
	}
	return out
}

func TestPath(t *testing.T) {
	// The path 0–1–2, one label, r = d = 1: radius-0 classes A (all nodes);
	// radius 1: B (the ends' two-node balls), C (the middle's three-node ball,
	// where the ends' distance 2 exceeds d).
	g := mustGraph(t, 3, []int64{0, 1, 1, 2}, []float64{5, 5, 5}, nil)
	fs, err := Features([]*graph.Graph{g}, Options{Radius: 1, Distance: 1, NodeLabelCol: 0, EdgeLabelCol: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]int][]int64{
		{0, 0}: {3},    // (A, A) three times
		{1, 0}: {1, 2}, // (B, B) twice, (C, C) once
		{0, 1}: {4},    // four ordered adjacent pairs (A, A)
		{1, 1}: {2, 2}, // (B, C) and (C, B) twice each
	}
	if len(fs) != Blocks(1, 1) {
		t.Fatalf("%d blocks, want %d", len(fs), Blocks(1, 1))
	}
	for rd, counts := range want {
		var got []int64
		for _, p := range row(fs[Block(1, rd[0], rd[1])], 0) {
			got = append(got, p[1])
		}
		slices.Sort(got)
		if !slices.Equal(got, counts) {
			t.Errorf("block (ρ, δ) = %v: counts %v, want %v", rd, got, counts)
		}
	}
}

// TestInvariance checks that a graph and its renumbering get the same row in
// every block, and that other graphs in the call change no pair's product.
func TestInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var gs []*graph.Graph
	for range 12 {
		gs = append(gs, randomGraph(t, rng, rng.IntN(9)))
	}
	var twins []*graph.Graph
	for _, g := range gs {
		twins = append(twins, permuted(t, g, rng.Perm(g.N)))
	}
	opt := Options{Radius: 2, Distance: 3, NodeLabelCol: 0, EdgeLabelCol: 0}
	fs, err := Features(append(slices.Clone(gs), twins...), opt)
	if err != nil {
		t.Fatal(err)
	}
	small, err := Features(gs[:3], opt)
	if err != nil {
		t.Fatal(err)
	}
	for b, f := range fs {
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
		all := make([]float64, f.Rows()*f.Rows())
		if err := sparsegram.Gram(f, f, true, sparsegram.Options{Semiring: sparsegram.SumProduct}, all); err != nil {
			t.Fatal(err)
		}
		part := make([]float64, 9)
		if err := sparsegram.Gram(small[b], small[b], true, sparsegram.Options{Semiring: sparsegram.SumProduct}, part); err != nil {
			t.Fatal(err)
		}
		n := len(gs)
		for i := range n {
			if !slices.Equal(row(f, i), row(f, n+i)) {
				t.Errorf("block %d, graph %d: renumbered row %v, want %v", b, i, row(f, n+i), row(f, i))
			}
			for j := range 3 {
				if i < 3 && all[i*2*n+j] != part[i*3+j] {
					t.Errorf("block %d: K(%d, %d) = %v in the large call, %v in the small one", b, i, j, all[i*2*n+j], part[i*3+j])
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	g := mustGraph(t, 2, []int64{0, 1}, []float64{0, 1}, nil)
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Radius: -1}, "radius must be"},
		{Options{Radius: MaxRadius + 1}, "radius must be"},
		{Options{Distance: MaxDistance + 1}, "distance must be"},
		{Options{NodeLabelCol: 3, EdgeLabelCol: -1}, "graph 0: node label column 3"},
		{Options{NodeLabelCol: 0, EdgeLabelCol: 0}, "graph 0: edge label column 0"},
	} {
		if _, err := Features([]*graph.Graph{g}, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opt, err, tc.want)
		}
	}
}

func TestAccumulate(t *testing.T) {
	out := []float64{1, 1, 1, 1}
	Accumulate(out, []float64{4, 0, 3, 0}, []float64{4, 9}, []float64{4, 0})
	want := []float64{1 + 4/math.Sqrt(16), 1, 1 + 3/math.Sqrt(36), 1}
	if !slices.Equal(out, want) {
		t.Errorf("Accumulate: %v, want %v", out, want)
	}
}
