package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// peelCores is the definition: the k-core is what is left after removing,
// again and again, the nodes of degree < k; a node's core number is the
// largest k whose core holds it.
func peelCores(n int, edges [][2]int) []int32 {
	core := make([]int32, n)
	for k := 1; ; k++ {
		alive := make([]bool, n)
		for v := range alive {
			alive[v] = core[v] == int32(k-1)
		}
		for changed := true; changed; {
			changed = false
			deg := make([]int, n)
			for _, e := range edges {
				if e[0] != e[1] && alive[e[0]] && alive[e[1]] {
					deg[e[0]]++
					deg[e[1]]++
				}
			}
			for v := range alive {
				if alive[v] && deg[v] < k {
					alive[v], changed = false, true
				}
			}
		}
		any := false
		for v := range alive {
			if alive[v] {
				core[v], any = int32(k), true
			}
		}
		if !any {
			return core
		}
	}
}

func TestCoreNumbers(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		edges [][2]int
		want  []int32
	}{
		{"empty", 0, nil, []int32{}},
		{"isolated", 2, nil, []int32{0, 0}},
		{"self-loop", 1, [][2]int{{0, 0}}, []int32{0}},
		{"path", 3, [][2]int{{0, 1}, {1, 2}}, []int32{1, 1, 1}},
		{"triangle with tail", 4, [][2]int{{0, 1}, {1, 2}, {0, 2}, {2, 3}}, []int32{2, 2, 2, 1}},
		{"K4 and a pendant", 5, [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {3, 4}, {4, 4}}, []int32{3, 3, 3, 3, 1}},
	} {
		g := fromPairs(t, c.n, c.edges)
		if got := g.CoreNumbers(); !slices.Equal(got, c.want) {
			t.Errorf("%s: core numbers %v, want %v", c.name, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(30)
		var edges [][2]int
		seen := map[[2]int]bool{}
		for range rng.IntN(4 * n) {
			u, v := rng.IntN(n), rng.IntN(n)
			if u > v {
				u, v = v, u
			}
			if !seen[[2]int{u, v}] {
				seen[[2]int{u, v}] = true
				edges = append(edges, [2]int{u, v})
			}
		}
		if got, want := fromPairs(t, n, edges).CoreNumbers(), peelCores(n, edges); !slices.Equal(got, want) {
			t.Fatalf("trial %d: core numbers %v, want %v (edges %v)", trial, got, want, edges)
		}
	}
}

func fromPairs(t *testing.T, n int, edges [][2]int) *Graph {
	t.Helper()
	flat := make([]int64, 0, 2*len(edges))
	for _, e := range edges {
		flat = append(flat, int64(e[0]), int64(e[1]))
	}
	g, err := New(n, flat, make([]float64, len(edges)), nil, 0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func BenchmarkCoreNumbers(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 10000
	var flat []int64
	for range 3 * n {
		u, v := rng.IntN(n), rng.IntN(n)
		if u != v {
			flat = append(flat, int64(u), int64(v))
		}
	}
	// Duplicates are refused by Python, not by New; they only make degrees larger here.
	g, err := New(n, flat, make([]float64, len(flat)/2), nil, 0, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		g.CoreNumbers()
	}
}
