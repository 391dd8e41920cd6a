// Package octiletest provides the graphs that the octile and reorder tests,
// benchmarks and the tilestats command run on: seeded random graphs with edge
// cases (self-loops, isolated nodes), Newman–Watts–Strogatz and Barabási–Albert
// generators, and a minimal reader for the TU benchmark format.
//
// Generated graphs carry one node feature column (an integer label) and two edge
// feature columns: an integer label in column 0, for Kronecker-delta edge
// kernels, and a continuous value in [0, 1) in column 1, for kernels whose
// values are all distinct.
package octiletest

import (
	"fmt"
	"math/rand/v2"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// EdgeCols is the number of edge feature columns of generated graphs.
const EdgeCols = 2

// builder accumulates a simple graph with a seeded source for features.
type builder struct {
	n      int
	rng    *rand.Rand
	labels int
	edges  []int64
	weight []float64
	efeat  []float64
	seen   map[[2]int]bool
	unit   bool
}

func newBuilder(n int, seed uint64, labels int, unitWeights bool) *builder {
	return &builder{n: n, rng: rand.New(rand.NewPCG(seed, 0x6f6374696c65)), labels: max(labels, 1),
		seen: make(map[[2]int]bool), unit: unitWeights}
}

func (b *builder) has(u, v int) bool { return b.seen[[2]int{min(u, v), max(u, v)}] }

// add adds edge {u, v} once, with a random weight unless unit weights were
// asked for, and random edge features.
func (b *builder) add(u, v int) {
	k := [2]int{min(u, v), max(u, v)}
	if b.seen[k] {
		return
	}
	b.seen[k] = true
	w := 1.0
	if !b.unit {
		w = 0.5 + b.rng.Float64()
	}
	b.edges = append(b.edges, int64(u), int64(v))
	b.weight = append(b.weight, w)
	b.efeat = append(b.efeat, float64(b.rng.IntN(b.labels)), b.rng.Float64())
}

func (b *builder) graph() *graph.Graph {
	nf := make([]float64, b.n)
	for i := range nf {
		nf[i] = float64(b.rng.IntN(3))
	}
	g, err := graph.New(b.n, b.edges, b.weight, nf, 1, b.efeat, EdgeCols)
	if err != nil {
		panic(err)
	}
	return g
}

// RandomSpec describes an Erdős–Rényi-style test graph.
type RandomSpec struct {
	// N is the number of nodes.
	N int
	// P is the probability of each edge {u, v}, u ≠ v.
	P float64
	// SelfLoops is the probability of a self-loop on each node.
	SelfLoops float64
	// Isolated nodes, chosen at random, lose all their edges.
	Isolated int
	// EdgeLabels is the number of distinct edge labels (at least 1).
	EdgeLabels int
	// Seed seeds the generator.
	Seed uint64
}

// Random returns a graph drawn from spec, with weights in [0.5, 1.5).
func Random(spec RandomSpec) *graph.Graph {
	b := newBuilder(spec.N, spec.Seed, spec.EdgeLabels, false)
	iso := make(map[int]bool)
	for len(iso) < min(spec.Isolated, spec.N) {
		iso[b.rng.IntN(spec.N)] = true
	}
	for u := 0; u < spec.N; u++ {
		if !iso[u] && b.rng.Float64() < spec.SelfLoops {
			b.add(u, u)
		}
		for v := u + 1; v < spec.N; v++ {
			if !iso[u] && !iso[v] && b.rng.Float64() < spec.P {
				b.add(u, v)
			}
		}
	}
	return b.graph()
}

// NewmanWattsStrogatz returns the small-world graph of Newman and Watts as
// networkx builds it: a ring of n nodes each joined to its k/2 (integer division)
// nearest neighbours on either side, then, for every ring edge (u, v), with
// probability p a shortcut from u to a uniformly chosen node that is neither u
// nor already a neighbour of u. Edge labels take 3 values; weights are 1.
func NewmanWattsStrogatz(n, k int, p float64, seed uint64) *graph.Graph {
	b := newBuilder(n, seed, 3, true)
	var ring [][2]int
	for j := 1; j <= k/2; j++ {
		for u := 0; u < n; u++ {
			v := (u + j) % n
			if u != v && !b.has(u, v) {
				b.add(u, v)
				ring = append(ring, [2]int{u, v})
			}
		}
	}
	for _, e := range ring {
		if b.rng.Float64() >= p {
			continue
		}
		u := e[0]
		deg := 0
		for w := 0; w < n; w++ {
			if w != u && b.has(u, w) {
				deg++
			}
		}
		if deg >= n-1 {
			continue
		}
		for {
			w := b.rng.IntN(n)
			if w != u && !b.has(u, w) {
				b.add(u, w)
				break
			}
		}
	}
	return b.graph()
}

// BarabasiAlbert returns a preferential-attachment graph as networkx builds it:
// a star on m+1 nodes, then each new node joined to m distinct existing nodes
// drawn with probability proportional to their degree. Edge labels take 3
// values; weights are 1.
func BarabasiAlbert(n, m int, seed uint64) *graph.Graph {
	if m < 1 || m >= n {
		panic(fmt.Sprintf("octiletest: Barabási–Albert needs 1 ≤ m < n, got m=%d n=%d", m, n))
	}
	b := newBuilder(n, seed, 3, true)
	// repeated lists each node once per incident edge end, for degree-biased draws.
	var repeated []int
	for v := 1; v <= m; v++ {
		b.add(0, v)
		repeated = append(repeated, 0, v)
	}
	for u := m + 1; u < n; u++ {
		targets := make(map[int]bool, m)
		var order []int
		for len(order) < m {
			t := repeated[b.rng.IntN(len(repeated))]
			if !targets[t] {
				targets[t] = true
				order = append(order, t)
			}
		}
		for _, t := range order {
			b.add(u, t)
			repeated = append(repeated, u, t)
		}
	}
	return b.graph()
}

// WithEdgeFeatures returns a copy of g whose edges carry the two generated
// feature columns: g's first edge feature column, if any, as the label (else a
// random label in 0..labels-1) and a random value in [0, 1). It lets real data
// sets run the same edge kernels as generated graphs.
func WithEdgeFeatures(g *graph.Graph, labels int, seed uint64) *graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 0x65646765))
	m := g.NumEdges()
	ef := make([]float64, m*EdgeCols)
	for e := 0; e < m; e++ {
		if g.EdgeCols > 0 {
			ef[2*e] = g.Edge(e)[0]
		} else {
			ef[2*e] = float64(rng.IntN(max(labels, 1)))
		}
		ef[2*e+1] = rng.Float64()
	}
	h, err := g.WithFeatures(g.NodeFeat, g.NodeCols, ef, EdgeCols)
	if err != nil {
		panic(err)
	}
	return h
}

// ReadShared reads the data set name from the shared data sets (tudataset.Open:
// the error wraps fs.ErrNotExist when they are absent), with labels only
// (tudataset.Dataset.LabelsOnly).
func ReadShared(name string) ([]*graph.Graph, error) {
	ds, err := tudataset.Open(name)
	if err != nil {
		return nil, err
	}
	return ds.LabelsOnly()
}
