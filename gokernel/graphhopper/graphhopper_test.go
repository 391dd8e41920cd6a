package graphhopper

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// randomGraph returns a graph of n nodes, each edge present with probability p,
// and node features (a label in {0, 1, 2}, two reals).
func randomGraph(r *rand.Rand, n int, p float64) *graph.Graph {
	var edges []int64
	var w []float64
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			if r.Float64() < p {
				edges = append(edges, int64(u), int64(v))
				w = append(w, 1)
			}
		}
	}
	nf := make([]float64, 3*n)
	for v := 0; v < n; v++ {
		nf[3*v], nf[3*v+1], nf[3*v+2] = float64(r.IntN(3)), r.NormFloat64(), r.NormFloat64()
	}
	g, err := graph.New(n, edges, w, nf, 3, nil, 0)
	if err != nil {
		panic(err)
	}
	return g
}

func randomGraphs(seed uint64, count, maxN int) []*graph.Graph {
	r := rand.New(rand.NewPCG(seed, 3))
	gs := make([]*graph.Graph, count)
	for i := range gs {
		gs[i] = randomGraph(r, r.IntN(maxN+1), 0.1+0.4*r.Float64())
	}
	return gs
}

// bruteWeights enumerates every simple path by depth-first search and counts,
// for the shortest ones (length equal to the BFS distance of its ends), the
// position of each node on it: M[v][a][b] as a map keyed by [3]int{v, a, b}.
func bruteWeights(g *graph.Graph) map[[3]int]float64 {
	n := g.N
	adj := make([][]bool, n)
	for i := range adj {
		adj[i] = make([]bool, n)
	}
	for e := range g.EdgeU {
		adj[g.EdgeU[e]][g.EdgeV[e]], adj[g.EdgeV[e]][g.EdgeU[e]] = true, true
	}
	dist := make([][]int, n)
	for s := range dist {
		dist[s] = make([]int, n)
		for i := range dist[s] {
			dist[s][i] = -1
		}
		dist[s][s] = 0
		q := []int{s}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			for v := 0; v < n; v++ {
				if adj[u][v] && u != v && dist[s][v] < 0 {
					dist[s][v] = dist[s][u] + 1
					q = append(q, v)
				}
			}
		}
	}
	m := map[[3]int]float64{}
	var path []int
	on := make([]bool, n)
	var dfs func(u int)
	dfs = func(u int) {
		path = append(path, u)
		on[u] = true
		if len(path)-1 == dist[path[0]][u] {
			for a, v := range path {
				m[[3]int{v, a, len(path) - 1}]++
			}
		}
		for v := 0; v < n; v++ {
			if adj[u][v] && !on[v] {
				dfs(v)
			}
		}
		on[u] = false
		path = path[:len(path)-1]
	}
	for s := 0; s < n; s++ {
		dfs(s)
	}
	return m
}

// reference is the kernel by its definition, from bruteWeights.
func reference(g, h *graph.Graph, k microkernel.Kernel) float64 {
	mg, mh := bruteWeights(g), bruteWeights(h)
	s := 0.0
	for kg, x := range mg {
		for kh, y := range mh {
			if kg[1] != kh[1] || kg[2] != kh[2] {
				continue
			}
			kv := 1.0
			if k != nil {
				kv = k.Eval(g.Node(kg[0]), h.Node(kh[0]))
			}
			s += x * y * kv
		}
	}
	return s
}

var nodeKernels = map[string]microkernel.Kernel{
	"none":     nil,
	"dot":      microkernel.MustParse(`{"kind":"dot_product","sigma_0":0.5,"col":1,"width":2}`),
	"dot-prod": microkernel.MustParse(`{"kind":"product","terms":[{"kind":"dot_product","sigma_0":0,"col":1,"width":2}]}`),
	"gauss":    microkernel.MustParse(`{"kind":"square_exponential","length_scale":0.7,"col":1,"width":2}`),
	"label":    microkernel.MustParse(`{"kind":"kronecker_delta","h":0,"col":0}`),
	"mixed":    microkernel.MustParse(`{"kind":"product","terms":[{"kind":"kronecker_delta","h":0.3,"col":0},{"kind":"square_exponential","length_scale":1.5,"col":1,"width":2}]}`),
}

func TestWeightsBrute(t *testing.T) {
	for i, g := range randomGraphs(1, 40, 9) {
		m, delta, err := Weights(g)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteWeights(g)
		tr := Tri(delta)
		for v := 0; v < g.N; v++ {
			for b := 0; b < delta; b++ {
				for a := 0; a <= b; a++ {
					if got, w := m[v*tr+Tri(b)+a], want[[3]int{v, a, b}]; got != w {
						t.Fatalf("graph %d: M(%d)[%d][%d] = %v, want %v", i, v, a, b, got, w)
					}
				}
			}
		}
	}
}

func TestWeightsPath(t *testing.T) {
	// The path 0-1-2: node 1 is the one-node path, the start of 1-0 and 1-2,
	// the end of 0-1 and 2-1, and the middle of 0-1-2 and 2-1-0.
	g, err := graph.New(3, []int64{0, 1, 1, 2}, []float64{1, 1}, nil, 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, delta, _ := Weights(g)
	if delta != 3 {
		t.Fatalf("delta = %d, want 3", delta)
	}
	want := []float64{1, 2, 2, 0, 2, 0} // (0,0) (0,1) (1,1) (0,2) (1,2) (2,2)
	got := m[6:12]
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("M(1) = %v, want %v", got, want)
		}
	}
}

func TestGramReference(t *testing.T) {
	gs := randomGraphs(2, 12, 8)
	for name, k := range nodeKernels {
		out := make([]float64, len(gs)*len(gs))
		if err := Gram(gs, nil, true, Options{NodeKernel: k}, out); err != nil {
			t.Fatal(err)
		}
		for i, g := range gs {
			for j, h := range gs {
				want := reference(g, h, k)
				if got := out[i*len(gs)+j]; math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("%s: K(%d, %d) = %v, want %v", name, i, j, got, want)
				}
			}
		}
	}
}

// TestValueIndependentOfCall checks that K(G, G') is the same float64 bit for
// bit in a symmetric call, in cross calls with either graph on either side and
// the graphs shuffled, for any NJobs, and from Diag.
func TestValueIndependentOfCall(t *testing.T) {
	gs := randomGraphs(3, 14, 9)
	n := len(gs)
	for name, k := range nodeKernels {
		ref := make([]float64, n*n)
		if err := Gram(gs, nil, true, Options{NodeKernel: k, NJobs: 1}, ref); err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(4, 4))
		for trial := 0; trial < 3; trial++ {
			px, py := r.Perm(n)[:5], r.Perm(n)[:7]
			x, y := make([]*graph.Graph, len(px)), make([]*graph.Graph, len(py))
			for a, i := range px {
				x[a] = gs[i]
			}
			for b, j := range py {
				y[b] = gs[j]
			}
			out := make([]float64, len(x)*len(y))
			if err := Gram(x, y, false, Options{NodeKernel: k, NJobs: 1 + trial}, out); err != nil {
				t.Fatal(err)
			}
			for a, i := range px {
				for b, j := range py {
					if out[a*len(y)+b] != ref[i*n+j] {
						t.Fatalf("%s: K(%d, %d) = %v in a cross call, %v in the symmetric one", name, i, j, out[a*len(y)+b], ref[i*n+j])
					}
				}
			}
		}
		d := make([]float64, n)
		if err := Diag(gs, Options{NodeKernel: k, NJobs: 2}, d); err != nil {
			t.Fatal(err)
		}
		for i := range d {
			if d[i] != ref[i*n+i] {
				t.Fatalf("%s: Diag[%d] = %v, Gram %v", name, i, d[i], ref[i*n+i])
			}
		}
	}
}

func TestBadOutput(t *testing.T) {
	gs := randomGraphs(5, 3, 4)
	if err := Gram(gs, nil, true, Options{}, make([]float64, 8)); err == nil {
		t.Error("Gram accepted a short output")
	}
	if err := Diag(gs, Options{}, make([]float64, 2)); err == nil {
		t.Error("Diag accepted a short output")
	}
}

func BenchmarkGram(b *testing.B) {
	gs := randomGraphs(6, 60, 40)
	out := make([]float64, len(gs)*len(gs))
	for _, name := range []string{"dot", "gauss"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if err := Gram(gs, nil, true, Options{NodeKernel: nodeKernels[name]}, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
