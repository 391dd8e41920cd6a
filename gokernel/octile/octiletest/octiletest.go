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
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	edges := make([]int64, 2*m)
	ef := make([]float64, m*EdgeCols)
	for e := 0; e < m; e++ {
		edges[2*e], edges[2*e+1] = int64(g.EdgeU[e]), int64(g.EdgeV[e])
		if g.EdgeCols > 0 {
			ef[2*e] = g.Edge(e)[0]
		} else {
			ef[2*e] = float64(rng.IntN(max(labels, 1)))
		}
		ef[2*e+1] = rng.Float64()
	}
	h, err := graph.New(g.N, edges, g.Weight, g.NodeFeat, g.NodeCols, ef, EdgeCols)
	if err != nil {
		panic(err)
	}
	return h
}

// ReadShared reads the data set name from tudataset.Dir, the shared data sets
// (the error wraps fs.ErrNotExist when they are absent).
func ReadShared(name string) ([]*graph.Graph, error) {
	dir, err := tudataset.Dir()
	if err != nil {
		return nil, err
	}
	return ReadTU(dir, name)
}

// ReadTU reads data set name from dir/name in the TU format: name_A.txt (one
// "i, j" line per directed edge, 1-based global node ids, each undirected edge
// in both directions), name_graph_indicator.txt (the 1-based graph of each
// node), and optionally name_node_labels.txt and name_edge_labels.txt (one
// integer per node, per line of name_A.txt). Each undirected edge is kept once,
// from its first line; labels become feature column 0 of nodes and edges.
// Weights are 1.
func ReadTU(dir, name string) ([]*graph.Graph, error) {
	base := filepath.Join(dir, name, name)
	ind, err := readInts(base+"_graph_indicator.txt", 1)
	if err != nil {
		return nil, err
	}
	adj, err := readInts(base+"_A.txt", 2)
	if err != nil {
		return nil, err
	}
	nodeLab, err := readOptional(base+"_node_labels.txt", len(ind))
	if err != nil {
		return nil, err
	}
	edgeLab, err := readOptional(base+"_edge_labels.txt", len(adj)/2)
	if err != nil {
		return nil, err
	}
	ng := 0
	for _, g := range ind {
		ng = max(ng, int(g))
	}
	first := make([]int, ng+2) // first[g] = first global node (0-based) of graph g (1-based)
	for i := range first {
		first[i] = -1
	}
	for i := len(ind) - 1; i >= 0; i-- {
		first[ind[i]] = i
	}
	type acc struct {
		edges []int64
		ef    []float64
		seen  map[[2]int64]bool
	}
	accs := make([]acc, ng+1)
	for l := 0; l < len(adj)/2; l++ {
		u, v := adj[2*l]-1, adj[2*l+1]-1
		if u < 0 || v < 0 || int(u) >= len(ind) || int(v) >= len(ind) || ind[u] != ind[v] {
			return nil, fmt.Errorf("%s_A.txt line %d: edge %d, %d outside the nodes or across graphs", name, l+1, u+1, v+1)
		}
		gi := ind[u]
		a := &accs[gi]
		if a.seen == nil {
			a.seen = make(map[[2]int64]bool)
		}
		k := [2]int64{min(u, v), max(u, v)}
		if a.seen[k] {
			continue
		}
		a.seen[k] = true
		off := int64(first[gi])
		a.edges = append(a.edges, u-off, v-off)
		if edgeLab != nil {
			a.ef = append(a.ef, float64(edgeLab[l]))
		}
	}
	gs := make([]*graph.Graph, 0, ng)
	for gi := 1; gi <= ng; gi++ {
		if first[gi] < 0 {
			return nil, fmt.Errorf("%s: graph %d has no nodes", name, gi)
		}
		n := 0
		for i := first[gi]; i < len(ind) && int(ind[i]) == gi; i++ {
			n++
		}
		var nf []float64
		nc := 0
		if nodeLab != nil {
			nc = 1
			for i := 0; i < n; i++ {
				nf = append(nf, float64(nodeLab[first[gi]+i]))
			}
		}
		ec := 0
		if edgeLab != nil {
			ec = 1
		}
		a := accs[gi]
		w := make([]float64, len(a.edges)/2)
		for i := range w {
			w[i] = 1
		}
		g, err := graph.New(n, a.edges, w, nf, nc, a.ef, ec)
		if err != nil {
			return nil, fmt.Errorf("%s graph %d: %w", name, gi, err)
		}
		gs = append(gs, g)
	}
	return gs, nil
}

func readOptional(path string, want int) ([]int64, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, nil
	}
	v, err := readInts(path, 1)
	if err != nil {
		return nil, err
	}
	if len(v) != want {
		return nil, fmt.Errorf("%s: %d values, want %d", path, len(v), want)
	}
	return v, nil
}

// readInts reads a file of lines of per integers separated by commas or spaces.
func readInts(path string, per int) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.FieldsFunc(sc.Text(), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if len(fields) == 0 {
			continue
		}
		if len(fields) != per {
			return nil, fmt.Errorf("%s line %d: %d fields, want %d", path, line, len(fields), per)
		}
		for _, s := range fields {
			x, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, line, err)
			}
			out = append(out, x)
		}
	}
	return out, sc.Err()
}
