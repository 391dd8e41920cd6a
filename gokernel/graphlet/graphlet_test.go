package graphlet

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

func randomGraph(rng *rand.Rand, n int, p float64) *graph.Graph {
	var edges []int64
	var w []float64
	for u := range n {
		for v := u; v < n; v++ {
			if rng.Float64() < p || (u == v && rng.Float64() < 0.1) {
				edges = append(edges, int64(u), int64(v))
				w = append(w, 1)
			}
		}
	}
	g, err := graph.New(n, edges, w, nil, 0, nil, 0)
	if err != nil {
		panic(err)
	}
	return g
}

func TestClasses(t *testing.T) {
	for _, tc := range []struct{ k, all, connected int }{{3, 4, 2}, {4, 11, 6}, {5, 34, 21}} {
		if got := NumClasses(tc.k); got != tc.all {
			t.Errorf("k=%d: %d classes, want %d", tc.k, got, tc.all)
		}
		conn := 0
		for c := range NumClasses(tc.k) {
			edges, ok := Class(tc.k, c)
			if ok {
				conn++
			}
			// Column order: by number of edges.
			if c > 0 {
				prev, _ := Class(tc.k, c-1)
				if len(prev) > len(edges) {
					t.Errorf("k=%d: column %d has fewer edges than column %d", tc.k, c, c-1)
				}
			}
		}
		if conn != tc.connected {
			t.Errorf("k=%d: %d connected classes, want %d", tc.k, conn, tc.connected)
		}
	}
	if NumClasses(2) != 0 || NumClasses(6) != 0 {
		t.Error("NumClasses outside [3, 5] must be 0")
	}
}

// isomorphic compares two graphs on k nodes, given as adjacency predicates, by
// trying every bijection (independent of the package's tables).
func isomorphic(k int, a, b func(i, j int) bool) bool {
	for _, p := range permutations(k) {
		ok := true
		for i := 0; i < k && ok; i++ {
			for j := i + 1; j < k && ok; j++ {
				ok = a(i, j) == b(p[i], p[j])
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// referenceCounts counts every k-subset's class by comparing its induced
// subgraph with each class representative.
func referenceCounts(gr *graph.Graph, k int) []uint32 {
	adj := map[[2]int]bool{}
	for e := range gr.EdgeU {
		u, v := int(gr.EdgeU[e]), int(gr.EdgeV[e])
		adj[[2]int{u, v}], adj[[2]int{v, u}] = u != v, u != v
	}
	counts := make([]uint32, NumClasses(k))
	var sub []int
	var rec func(from int)
	rec = func(from int) {
		if len(sub) == k {
			in := func(i, j int) bool { return adj[[2]int{sub[i], sub[j]}] }
			for c := range counts {
				edges, _ := Class(k, c)
				rep := func(i, j int) bool {
					return slices.Contains(edges, [2]int{min(i, j), max(i, j)})
				}
				if isomorphic(k, in, rep) {
					counts[c]++
					return
				}
			}
			panic("no class")
		}
		for x := from; x < gr.N; x++ {
			sub = append(sub, x)
			rec(x + 1)
			sub = sub[:len(sub)-1]
		}
	}
	rec(0)
	return counts
}

func dense(f *sparsegram.Features, r int) []uint32 {
	row := make([]uint32, f.NumCols)
	for p := f.Ptr[r]; p < f.Ptr[r+1]; p++ {
		row[f.Col[p]] = f.Val[p]
	}
	return row
}

func TestExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var gs []*graph.Graph
	for i := range 12 {
		gs = append(gs, randomGraph(rng, 2+i%9, 0.3+0.05*float64(i%5)))
	}
	for k := MinK; k <= MaxK; k++ {
		for _, connected := range []bool{false, true} {
			f, err := Features(gs, Options{K: k, Connected: connected})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Validate(); err != nil {
				t.Fatal(err)
			}
			for g, gr := range gs {
				want := referenceCounts(gr, k)
				if connected {
					for c := range want {
						if _, ok := Class(k, c); !ok {
							want[c] = 0
						}
					}
				} else {
					var sum uint64
					for _, n := range want {
						sum += uint64(n)
					}
					if sum != binomial(gr.N, k) {
						t.Fatalf("reference sum %d, want C(%d, %d)", sum, gr.N, k)
					}
				}
				if got := dense(f, g); !slices.Equal(got, want) {
					t.Errorf("k=%d connected=%v graph %d (n=%d): %v, want %v", k, connected, g, gr.N, got, want)
				}
			}
		}
	}
}

func TestSampling(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gr := randomGraph(rng, 14, 0.35)
	const samples = 200000
	for k := MinK; k <= MaxK; k++ {
		ex, err := Features([]*graph.Graph{gr}, Options{K: k})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Features([]*graph.Graph{gr, gr}, Options{K: k, Samples: samples, Seed: 9, NJobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		a, b := dense(f, 0), dense(f, 1)
		if !slices.Equal(a, b) {
			t.Fatalf("k=%d: one graph, two different samples", k)
		}
		total := float64(binomial(gr.N, k))
		var sum uint32
		for c, n := range a {
			sum += n
			p := float64(dense(ex, 0)[c]) / total
			// 6 standard deviations of a binomial proportion.
			if tol := 6 * math.Sqrt(p*(1-p)/samples); math.Abs(float64(n)/samples-p) > tol+1e-12 {
				t.Errorf("k=%d class %d: frequency %.4f, exact %.4f", k, c, float64(n)/samples, p)
			}
		}
		if sum != samples {
			t.Errorf("k=%d: %d samples counted, want %d", k, sum, samples)
		}
		other, _ := Features([]*graph.Graph{gr}, Options{K: k, Samples: samples, Seed: 10})
		if slices.Equal(dense(other, 0), a) {
			t.Errorf("k=%d: seeds 9 and 10 drew the same counts", k)
		}
	}
}

// The samples of a graph depend on its structure, not on how its edges are listed.
func TestSamplingEdgeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gr := randomGraph(rng, 12, 0.4)
	edges := make([]int64, 0, 2*len(gr.EdgeU))
	for e := len(gr.EdgeU) - 1; e >= 0; e-- {
		edges = append(edges, int64(gr.EdgeV[e]), int64(gr.EdgeU[e]))
	}
	rev, err := graph.New(gr.N, edges, gr.Weight, nil, 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if StructureHash(gr) != StructureHash(rev) {
		t.Fatal("StructureHash depends on the edge order")
	}
	f, _ := Features([]*graph.Graph{gr, rev}, Options{K: 4, Samples: 1000, Seed: 1})
	if !slices.Equal(dense(f, 0), dense(f, 1)) {
		t.Error("the same graph with its edges reversed drew different samples")
	}
}

func TestErrors(t *testing.T) {
	big, _ := graph.New(300, nil, nil, nil, 0, nil, 0)
	for _, tc := range []struct {
		opt Options
		gs  []*graph.Graph
	}{
		{Options{K: 2}, nil},
		{Options{K: 6}, nil},
		{Options{K: 3, Samples: -1}, nil},
		{Options{K: 5}, []*graph.Graph{big}},
	} {
		if _, err := Features(tc.gs, tc.opt); err == nil {
			t.Errorf("%+v: no error", tc.opt)
		}
	}
	if _, err := Features([]*graph.Graph{big}, Options{K: 5, Samples: 10}); err != nil {
		t.Errorf("sampling a large graph: %v", err)
	}
}
