// Package testgraphs makes the random graphs and base kernels that the host
// tests (cuda/hostref) and the GPU suite (package cuda) compare backends on.
package testgraphs

import (
	"math/rand/v2"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// Cols is the number of node and edge feature columns: 0 and 1 small integer
// labels, 2 and 3 reals.
const Cols = 4

// Row returns a random feature row.
func Row(rng *rand.Rand) []float64 {
	return []float64{float64(rng.IntN(3)), float64(rng.IntN(2)), rng.NormFloat64(), 2 * rng.Float64()}
}

// Random returns a graph of n nodes with up to m distinct random edges
// (self-loops when loops), random weights and features.
func Random(rng *rand.Rand, n, m int, loops bool) *graph.Graph {
	var edges []int64
	var w, ef []float64
	seen := map[[2]int]bool{}
	for k := 0; k < m && n > 0; k++ {
		u, v := rng.IntN(n), rng.IntN(n)
		if u == v && !loops {
			continue
		}
		if u > v {
			u, v = v, u
		}
		if seen[[2]int{u, v}] {
			continue
		}
		seen[[2]int{u, v}] = true
		edges = append(edges, int64(u), int64(v))
		w = append(w, 0.2+rng.Float64())
		ef = append(ef, Row(rng)...)
	}
	var nf []float64
	for i := 0; i < n; i++ {
		nf = append(nf, Row(rng)...)
	}
	g, err := graph.New(n, edges, w, nf, Cols, ef, Cols)
	if err != nil {
		panic(err)
	}
	return g
}

// EdgeCases returns graphs covering the edge cases: one node with and without
// a self-loop, edgeless, n not a multiple of 8, self-loops, a dense graph
// (tile pairs with ≥ 256 nonzero pairs, the dense primitive) and larger sparse
// ones.
func EdgeCases(seed uint64) []*graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 9))
	return []*graph.Graph{
		Random(rng, 1, 0, false),
		Random(rng, 1, 1, true),
		Random(rng, 5, 0, false),
		Random(rng, 7, 10, true),
		Random(rng, 13, 30, true),
		Random(rng, 8, 28, false),
		Random(rng, 21, 40, false),
		Random(rng, 45, 80, true),
	}
}

// Dense returns a graph whose 8×8 tiles are mostly full.
func Dense(seed uint64, n int) *graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 10))
	return Random(rng, n, n*n, true)
}

// Starts returns random positive start probabilities for every other graph
// (nil entries elsewhere).
func Starts(gs []*graph.Graph, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 14))
	return everyOther(gs, func(*graph.Graph, int) float64 { return 0.1 + rng.Float64() })
}

// everyOther returns start probabilities p(g, k) for node k of every other
// graph g of gs (odd positions), nil entries elsewhere.
func everyOther(gs []*graph.Graph, p func(g *graph.Graph, k int) float64) [][]float64 {
	s := make([][]float64, len(gs))
	for i, g := range gs {
		if i%2 == 0 {
			continue
		}
		s[i] = make([]float64, g.N)
		for k := range s[i] {
			s[i][k] = p(g, k)
		}
	}
	return s
}

// KernelSet is a node and an edge kernel, as JSON.
type KernelSet struct {
	Name   string
	NK, EK string
}

// KernelSets covers constant, labelled and continuous (normalized) kernels.
var KernelSets = []KernelSet{
	{"constant", `{"kind":"constant","c":1}`, `{"kind":"constant","c":1}`},
	{"labels", `{"kind":"kronecker_delta","h":0.3,"col":0}`, `{"kind":"kronecker_delta","h":0.5,"col":1}`},
	{"continuous", `{"kind":"product","terms":[{"kind":"kronecker_delta","h":0.3,"col":0},{"kind":"square_exponential","length_scale":1.5,"col":2}]}`,
		`{"kind":"normalized","kernel":{"kind":"sum","terms":[{"kind":"brownian_bridge","c":3,"col":3},{"kind":"constant","c":0.5}]}}`},
}

// Parse parses a kernel that is known to be valid.
func Parse(spec string) microkernel.Kernel {
	k, err := microkernel.Parse(spec)
	if err != nil {
		panic(err)
	}
	return k
}

// Symmetric returns graphs whose colour-refinement quotients are smaller
// than they are (nodes and edges repeat their features, weights and
// neighbourhoods exactly): a cycle with alternating labels, a star with a
// self-loop on its centre, a path, two triangles, a ring of ReorderMin-sized
// length with pendant nodes (large enough for the device to renumber it),
// and a graph of one node per class (a control whose quotient is itself).
// Features come from a fixed row per label, so every graph's nodes share
// rows with the others' and pairs have nonzero kernels.
func Symmetric(ring int) []*graph.Graph {
	row := func(l int) []float64 {
		return []float64{float64(l % 3), float64(l % 2), 0.25 * float64(l), 0.5 + 0.5*float64(l)}
	}
	build := func(n int, edges [][2]int, weight func(e int) float64, label func(i int) int, edgeLabel func(e int) int) *graph.Graph {
		var ends []int64
		var w, ef, nf []float64
		for e, uv := range edges {
			ends = append(ends, int64(uv[0]), int64(uv[1]))
			w = append(w, weight(e))
			ef = append(ef, row(edgeLabel(e))...)
		}
		for i := range n {
			nf = append(nf, row(label(i))...)
		}
		g, err := graph.New(n, ends, w, nf, Cols, ef, Cols)
		if err != nil {
			panic(err)
		}
		return g
	}
	cycle := func(n int) [][2]int {
		var e [][2]int
		for i := range n {
			e = append(e, [2]int{i, (i + 1) % n})
		}
		return e
	}
	one := func(int) float64 { return 1 }
	var gs []*graph.Graph
	gs = append(gs, build(6, cycle(6), one, func(i int) int { return i % 2 }, func(int) int { return 1 }))
	star := [][2]int{{0, 0}}
	for i := 1; i <= 5; i++ {
		star = append(star, [2]int{0, i})
	}
	gs = append(gs, build(6, star, func(e int) float64 { return 0.5 + 0.25*float64(min(e, 1)) },
		func(i int) int { return min(i, 1) * 2 }, func(e int) int { return min(e, 1) }))
	gs = append(gs, build(5, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}, one, func(i int) int { return min(i, 4-i) }, func(int) int { return 0 }))
	gs = append(gs, build(6, [][2]int{{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3}}, func(int) float64 { return 0.7 },
		func(int) int { return 1 }, func(int) int { return 2 }))
	var ringEdges [][2]int
	for i := range ring {
		ringEdges = append(ringEdges, [2]int{i, (i + 1) % ring}, [2]int{i, ring + i})
	}
	gs = append(gs, build(2*ring, ringEdges, func(e int) float64 { return 1 + 0.5*float64(e%2) },
		func(i int) int { return 3 * min(i/ring, 1) }, func(e int) int { return e % 2 }))
	gs = append(gs, build(4, [][2]int{{0, 1}, {1, 2}, {2, 3}}, one, func(i int) int { return i }, func(int) int { return 0 }))
	return gs
}

// SymmetricStarts returns start probabilities for gs that repeat with the
// node features (so they keep the quotients of Symmetric's graphs), on
// every other graph (nil entries elsewhere).
func SymmetricStarts(gs []*graph.Graph) [][]float64 {
	return everyOther(gs, func(g *graph.Graph, k int) float64 { return 0.2 + 0.3*g.Node(k)[3] })
}
