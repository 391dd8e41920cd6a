package reorder

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graph/graphtest"
	"github.com/graphgram/graphgram/gokernel/octile/octiletest"
)

// testGraphs covers the edge cases every order must handle.
func testGraphs(t *testing.T) map[string]*graph.Graph {
	t.Helper()
	mk := func(n int, edges []int64) *graph.Graph {
		m := len(edges) / 2
		w := make([]float64, m)
		ef := make([]float64, m)
		for i := range w {
			w[i], ef[i] = 1+float64(i), float64(i%3)
		}
		nf := make([]float64, n)
		for i := range nf {
			nf[i] = float64(i)
		}
		g, err := graph.New(n, edges, w, nf, 1, ef, 1)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	path := func(n int) []int64 {
		var e []int64
		for i := 0; i+1 < n; i++ {
			e = append(e, int64(i), int64(i+1))
		}
		return e
	}
	star := func(n int) []int64 {
		var e []int64
		for i := 1; i < n; i++ {
			e = append(e, 0, int64(i))
		}
		return e
	}
	return map[string]*graph.Graph{
		"empty":         mk(0, nil),
		"one":           mk(1, nil),
		"one-selfloop":  mk(1, []int64{0, 0}),
		"isolated-9":    mk(9, nil),
		"path-16":       mk(16, path(16)),
		"path-27":       mk(27, path(27)),
		"star-20":       mk(20, star(20)),
		"two-triangles": mk(7, []int64{0, 1, 1, 2, 2, 0, 4, 5, 5, 6, 6, 4, 3, 3}),
		"random-45": octiletest.Random(octiletest.RandomSpec{N: 45, P: 0.08, SelfLoops: 0.1,
			Isolated: 3, EdgeLabels: 3, Seed: 1}),
		"random-dense-30": octiletest.Random(octiletest.RandomSpec{N: 30, P: 0.5, SelfLoops: 0.5, Seed: 2}),
		"nws-96":          octiletest.NewmanWattsStrogatz(96, 3, 0.1, 3),
		"ba-96":           octiletest.BarabasiAlbert(96, 6, 4),
	}
}

// shuffled returns g with its nodes in a random order, so that orders have
// something to recover.
func shuffled(g *graph.Graph, seed uint64) *graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := Identity(g.N)
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	return Permute(g, p)
}

// bruteTiles counts tiles and distinct nonzeros from the dense matrix.
func bruteTiles(g *graph.Graph) (int, float64) {
	a := g.Dense()
	nt := (g.N + 7) / 8
	tiles, nnz := 0, 0
	for ti := 0; ti < nt; ti++ {
		for tj := 0; tj < nt; tj++ {
			c := 0
			for i := 8 * ti; i < min(8*ti+8, g.N); i++ {
				for j := 8 * tj; j < min(8*tj+8, g.N); j++ {
					if a[i*g.N+j] != 0 {
						c++
					}
				}
			}
			if c > 0 {
				tiles++
				nnz += c
			}
		}
	}
	if tiles == 0 {
		return 0, 0
	}
	return tiles, float64(nnz) / float64(64*tiles)
}

func TestOrders(t *testing.T) {
	for name, g := range testGraphs(t) {
		for _, sh := range []bool{false, true} {
			if sh {
				g = shuffled(g, 11)
				name += "/shuffled"
			}
			bestT := -1
			for _, m := range Methods {
				p := Order(g, m)
				if len(p) != g.N {
					t.Fatalf("%s %v: permutation of length %d for %d nodes", name, m, len(p), g.N)
				}
				Inverse(p) // panics if not a permutation
				if q := Order(g, m); !slices.Equal(p, q) {
					t.Errorf("%s %v: not deterministic", name, m)
				}
				h := Permute(g, p)
				checkPermuted(t, name+"/"+m.String(), g, h, p)
				tiles, dens := TileStats(h)
				bt, bd := bruteTiles(h)
				if tiles != bt || dens != bd {
					t.Errorf("%s %v: TileStats = %d, %v; brute force %d, %v", name, m, tiles, dens, bt, bd)
				}
				if pt, pd := PermutedTileStats(g, p); pt != tiles || pd != dens {
					t.Errorf("%s %v: PermutedTileStats = %d, %v; want %d, %v", name, m, pt, pd, tiles, dens)
				}
				if bestT < 0 || tiles < bestT {
					bestT = tiles
				}
			}
			bp, bm := Best(g)
			if bt, _ := PermutedTileStats(g, bp); bt != bestT {
				t.Errorf("%s: Best (%v) has %d tiles, fewest is %d", name, bm, bt, bestT)
			}
		}
	}
}

// checkPermuted checks that h is g relabeled by perm, features included.
func checkPermuted(t *testing.T, name string, g, h *graph.Graph, perm []int) {
	t.Helper()
	a, b := g.Dense(), h.Dense()
	for i := 0; i < g.N; i++ {
		for j := 0; j < g.N; j++ {
			if b[i*g.N+j] != a[perm[i]*g.N+perm[j]] {
				t.Fatalf("%s: adjacency (%d,%d) = %v, want %v", name, i, j, b[i*g.N+j], a[perm[i]*g.N+perm[j]])
			}
		}
		if !slices.Equal(h.Node(i), g.Node(perm[i])) {
			t.Fatalf("%s: node %d features %v, want %v", name, i, h.Node(i), g.Node(perm[i]))
		}
	}
	if !slices.Equal(h.Weight, g.Weight) || !slices.Equal(h.EdgeFeat, g.EdgeFeat) {
		t.Fatalf("%s: edge weights or features changed", name)
	}
	inv := Inverse(perm)
	for e := range g.EdgeU {
		if int(h.EdgeU[e]) != inv[g.EdgeU[e]] || int(h.EdgeV[e]) != inv[g.EdgeV[e]] {
			t.Fatalf("%s: edge %d joins %d-%d, want %d-%d", name, e, h.EdgeU[e], h.EdgeV[e], inv[g.EdgeU[e]], inv[g.EdgeV[e]])
		}
	}
}

// TestRecovers checks that the structured orders undo a shuffle of graphs whose
// best tiling is known.
func TestRecovers(t *testing.T) {
	gs := testGraphs(t)
	for _, tc := range []struct {
		graph    string
		method   Method
		maxTiles int
	}{
		// A path of 16 has a tridiagonal matrix: 2 diagonal tiles and 2 corners.
		{"path-16", ByRCM, 4},
		{"path-16", ByPartition, 4},
		{"path-27", ByRCM, 10},
		{"path-27", ByPartition, 10},
		// Two triangles and a self-loop fit one tile whatever the order.
		{"two-triangles", ByLSH, 1},
	} {
		g := shuffled(gs[tc.graph], 5)
		tiles, _ := PermutedTileStats(g, Order(g, tc.method))
		if tiles > tc.maxTiles {
			t.Errorf("%s %v: %d tiles, want at most %d", tc.graph, tc.method, tiles, tc.maxTiles)
		}
	}
}

func TestRCMBandwidth(t *testing.T) {
	g := shuffled(testGraphs(t)["path-27"], 3)
	p := RCM(g)
	inv := Inverse(p)
	for e := range g.EdgeU {
		if d := inv[g.EdgeU[e]] - inv[g.EdgeV[e]]; d > 1 || d < -1 {
			t.Fatalf("RCM of a path has an edge %d positions off the diagonal", d)
		}
	}
}

func TestPermutePanics(t *testing.T) {
	g := testGraphs(t)["path-16"]
	for _, p := range [][]int{{0, 1}, append(Identity(15), 3)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Permute(%v) did not panic", p)
				}
			}()
			Permute(g, p)
		}()
	}
}

func TestMethodString(t *testing.T) {
	for m, want := range map[Method]string{Natural: "natural", ByRCM: "rcm", ByLSH: "lsh", ByPartition: "partition", 9: "Method(9)"} {
		if m.String() != want {
			t.Errorf("Method(%d).String() = %q, want %q", int(m), m.String(), want)
		}
	}
}

// FuzzReorder checks that every method returns a permutation of the nodes on
// any graph, and that Best's permutation is one of them.
func FuzzReorder(f *testing.F) {
	f.Add([]byte{5, 0, 1, 1, 2, 2, 3, 3, 4})
	f.Add([]byte{40, 1, 30, 2, 29, 7, 7, 8, 39})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {
		g := graphtest.FromBytes(b)
		if g == nil {
			return
		}
		for _, m := range append([]Method{Natural}, Methods...) {
			p := Order(g, m)
			if len(p) != g.N || len(Inverse(p)) != g.N {
				t.Fatalf("%v: %d entries for %d nodes", m, len(p), g.N)
			}
			seen := make([]bool, g.N)
			for _, v := range p {
				if v < 0 || v >= g.N || seen[v] {
					t.Fatalf("%v: not a permutation: %v", m, p)
				}
				seen[v] = true
			}
		}
		if p, _ := Best(g); len(p) != g.N {
			t.Fatalf("Best: %d entries", len(p))
		}
	})
}
