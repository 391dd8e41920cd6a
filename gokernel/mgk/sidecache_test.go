package mgk

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graph/graphtest"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// withSideCache runs f with SideCacheBytes set to limit and an empty cache,
// restoring both after.
func withSideCache(t testing.TB, limit int64, f func()) {
	t.Helper()
	old := SideCacheBytes
	ReleaseSideCache()
	SideCacheBytes = limit
	defer func() { SideCacheBytes = old; ReleaseSideCache() }()
	f()
}

// cacheResults are one composition's results in every mode.
type cacheResults struct{ gram, grad, nodal, diag []float64 }

func computeAll(t *testing.T, X, Y []*graph.Graph, sx, sy [][]float64, opt Options) cacheResults {
	t.Helper()
	n, m := len(X), len(Y)
	r := cacheResults{gram: make([]float64, n*m), grad: make([]float64, n*m*NumParams(opt)), diag: make([]float64, n)}
	k := make([]float64, n*m)
	if _, err := Gram(X, Y, sx, sy, false, opt, r.gram, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := GramGrad(X, Y, sx, sy, false, opt, k, r.grad, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Diag(X, sx, opt, r.diag); err != nil {
		t.Fatal(err)
	}
	nodes := func(gs []*graph.Graph) (c int) {
		for _, g := range gs {
			c += g.N
		}
		return c
	}
	r.nodal = make([]float64, nodes(X)*nodes(Y))
	if _, err := Nodal(X, Y, sx, sy, false, opt, r.nodal); err != nil {
		t.Fatal(err)
	}
	return r
}

func sameResults(t *testing.T, what string, got, want cacheResults) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"gram", got.gram, want.gram}, {"grad", got.grad, want.grad}, {"nodal", got.nodal, want.nodal}, {"diag", got.diag, want.diag}} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %s differs from the uncached call", what, c.name)
		}
	}
}

// TestSideCacheSameValues: a call that finds its graphs' set-up cached returns
// what a call without the cache returns, bit for bit, in every mode, for any
// cache size (one that holds every graph, one that holds a few and empties
// itself, none), with quotients on and off; and it does find them.
func TestSideCacheSameValues(t *testing.T) {
	gs := invarianceGraphs(t)
	starts := randomStarts(gs, 7)
	X, Y := gs[:30], gs[25:]
	sx, sy := starts[:30], starts[25:]
	base := Options{NodeKernel: &microkernel.Product{Terms: []microkernel.Kernel{
		&microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1}, &microkernel.SquareExponential{LengthScale: 1.5, Col: 1, Width: 1}}},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.2, Col: 0, Width: 1}, Q: 0.05, NJobs: 2}
	for _, quot := range []Quotient{QuotientAuto, QuotientOff} {
		opt := base
		opt.Quotient = quot
		var want cacheResults
		withSideCache(t, 0, func() { want = computeAll(t, X, Y, sx, sy, opt) })
		for _, limit := range []int64{SideCacheBytes, 3 * sizeOf(gs[0])} {
			t.Run(fmt.Sprintf("quotient=%v/limit=%d", quot, limit), func(t *testing.T) {
				withSideCache(t, limit, func() {
					first := computeAll(t, X, Y, sx, sy, opt)
					hits := sideCache.hits
					second := computeAll(t, X, Y, sx, sy, opt)
					sameResults(t, "first call", first, want)
					sameResults(t, "second call", second, want)
					if limit == SideCacheBytes && sideCache.hits == hits {
						t.Error("the second call found none of its graphs in the cache")
					}
					if used := SideCacheInUse(); used > limit || used == 0 {
						t.Errorf("the cache holds %d bytes with a limit of %d", used, limit)
					}
				})
			})
		}
	}
}

// TestSideCacheKeepsNoCallerMemory: start probabilities changed in place
// after a call (they may be a view of the caller's memory) are new to the
// next call: the cache keeps copies of them.
func TestSideCacheKeepsNoCallerMemory(t *testing.T) {
	gs := invarianceGraphs(t)
	opt := Options{NodeKernel: &microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.2, Col: 0, Width: 1}, Q: 0.05, NJobs: 2}
	X := gs[:12]
	starts := randomStarts(X, 3)
	withSideCache(t, SideCacheBytes, func() {
		computeAll(t, X, X, starts, starts, opt) // fills the cache
		starts[7][0] *= 2
		got := computeAll(t, X, X, starts, starts, opt)
		var want cacheResults
		withSideCache(t, 0, func() { want = computeAll(t, X, X, starts, starts, opt) })
		sameResults(t, "after a change in place", got, want)
	})
}

// moleculeGraphs returns n random molecule-sized graphs (10 to 39 nodes, a
// random tree and a few ring closures, unit weights, 4 node labels and 3
// edge labels), fixed by seed; few labels give many of them non-trivial
// quotients.
func moleculeGraphs(n int, seed uint64) []*graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 53))
	gs := make([]*graph.Graph, 0, n)
	for len(gs) < n {
		nodes := 10 + rng.IntN(30)
		var edges []int64
		for u := 1; u < nodes; u++ {
			edges = append(edges, int64(rng.IntN(u)), int64(u))
		}
		for range nodes / 8 {
			if u, v := rng.IntN(nodes), rng.IntN(nodes); u+1 < v {
				edges = append(edges, int64(u), int64(v))
			}
		}
		w, ef := make([]float64, len(edges)/2), make([]float64, len(edges)/2)
		for k := range w {
			w[k], ef[k] = 1, float64(rng.IntN(3))
		}
		nf := make([]float64, nodes)
		for k := range nf {
			nf[k] = float64(rng.IntN(4))
		}
		if g, err := graph.New(nodes, edges, w, nf, 1, ef, 1); err == nil { // a repeated closure fails
			gs = append(gs, g)
		}
	}
	return gs
}

// quotientContent is what QuotientOf returns, as graph.CompareContent reads
// it.
func quotientContent(q QuotientGraph) [][]float64 {
	return [][]float64{q.Start, q.ClassWeights, q.Degrees}
}

// TestQuotientOfCache: a second QuotientOf of a graph with the same content
// and start probabilities returns the first one's quotient, the same memory,
// without refining again; a graph or start vector that differs in one value,
// or a start vector changed in place since (the cache keeps a copy), is
// refined anew and gets its own quotient, never the stale one; without the
// cache every call refines.
func TestQuotientOfCache(t *testing.T) {
	g := quotientGraphs(t)[3] // the star: a non-trivial quotient, 2 classes
	// Class-constant starts keep it; every change below splits a class, so
	// that each quotient is a new graph (not g itself) and the memory
	// returned tells a cached quotient from a new one.
	starts := []float64{0.3, 0.7, 0.7, 0.7, 0.7}
	withEdgeFeat := func(g *graph.Graph, ef []float64) *graph.Graph {
		h, err := g.WithFeatures(g.NodeFeat, g.NodeCols, ef, g.EdgeCols)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	changed := func(x []float64, k int) []float64 {
		y := slices.Clone(x)
		y[k] += 0.5
		return y
	}
	inPlace := slices.Clone(starts)
	for _, limit := range []int64{SideCacheBytes, 0} {
		withSideCache(t, limit, func() {
			for _, c := range []struct {
				name   string
				first  func() (*graph.Graph, []float64) // the call that fills the cache
				second func() (*graph.Graph, []float64)
				hit    bool
			}{
				{"same graph", func() (*graph.Graph, []float64) { return g, nil }, func() (*graph.Graph, []float64) { return g, nil }, true},
				{"same graph and starts", func() (*graph.Graph, []float64) { return g, starts }, func() (*graph.Graph, []float64) { return g, slices.Clone(starts) }, true},
				{"a copy of the graph", func() (*graph.Graph, []float64) { return g, nil },
					func() (*graph.Graph, []float64) { return graphtest.WithNodeFeat(g, nil), nil }, true},
				{"a node feature changed", func() (*graph.Graph, []float64) { return g, nil },
					func() (*graph.Graph, []float64) { return graphtest.WithNodeFeat(g, changed(g.NodeFeat, 2)), nil }, false},
				{"an edge feature changed", func() (*graph.Graph, []float64) { return g, nil },
					func() (*graph.Graph, []float64) { return withEdgeFeat(g, changed(g.EdgeFeat, 3)), nil }, false},
				{"a start probability changed", func() (*graph.Graph, []float64) { return g, starts },
					func() (*graph.Graph, []float64) { return g, changed(starts, 1) }, false},
				{"starts given, then none", func() (*graph.Graph, []float64) { return g, starts }, func() (*graph.Graph, []float64) { return g, nil }, false},
				{"starts changed in place", func() (*graph.Graph, []float64) { return g, inPlace },
					func() (*graph.Graph, []float64) { inPlace[0] *= 2; return g, inPlace }, false},
			} {
				ReleaseSideCache()
				hit := c.hit && limit > 0
				g1, s1 := c.first()
				first, err := QuotientOf("X[0]", g1, s1)
				if err != nil {
					t.Fatal(err)
				}
				g2, s2 := c.second()
				want := quotientOf(g2, s2) // uncached, for comparison
				before, hits := refinements.Load(), sideCache.hits
				got, err := QuotientOf("X[1]", g2, s2)
				if err != nil {
					t.Fatal(err)
				}
				refined := refinements.Load() - before
				if hit && (refined != 0 || sideCache.hits != hits+1) || !hit && refined != 1 {
					t.Errorf("limit %d, %s: %d refinements, %d hits; want a hit: %v", limit, c.name, refined, sideCache.hits-hits, hit)
				}
				if graph.CompareContent(got.Graph, quotientContent(got), want.g, want.content()) != 0 {
					t.Errorf("limit %d, %s: the quotient differs from the graph's own", limit, c.name)
				}
				if got.Graph == g2 || len(got.ClassWeights) == 0 {
					t.Fatalf("limit %d, %s: a trivial quotient", limit, c.name)
				}
				if same := got.Graph == first.Graph && &got.ClassWeights[0] == &first.ClassWeights[0]; same != hit {
					t.Errorf("limit %d, %s: the first call's quotient returned: %v, want %v", limit, c.name, same, hit)
				}
			}
		})
	}
}

// TestQuotientOfSharesSolverCache: QuotientOf and the CPU solver share one
// cache: the quotients of a Gram call serve QuotientOf, and QuotientOf's
// serve a later Gram call, which refines nothing, computes what it computes
// without the cache, bit for bit, and completes each graph's entry in place
// of QuotientOf's (one entry a distinct graph).
func TestQuotientOfSharesSolverCache(t *testing.T) {
	gs := append(moleculeGraphs(30, 2), quotientGraphs(t)...)
	starts := randomStarts(gs, 9)
	opt := Options{NodeKernel: &microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.2, Col: 0, Width: 1}, Q: 0.05, NJobs: 2}
	for _, st := range [][][]float64{nil, starts} {
		want := make([]float64, len(gs)*len(gs))
		withSideCache(t, 0, func() {
			if _, err := Gram(gs, nil, st, nil, true, opt, want, nil); err != nil {
				t.Fatal(err)
			}
		})
		start := func(i int) []float64 {
			if st == nil {
				return nil
			}
			return st[i]
		}
		quotients := func() int64 {
			before := refinements.Load()
			for i, g := range gs {
				if _, err := QuotientOf(fmt.Sprintf("X[%d]", i), g, start(i)); err != nil {
					t.Fatal(err)
				}
			}
			return refinements.Load() - before
		}
		gram := func() ([]float64, int64) {
			out := make([]float64, len(gs)*len(gs))
			before := refinements.Load()
			if _, err := Gram(gs, nil, st, nil, true, opt, out, nil); err != nil {
				t.Fatal(err)
			}
			return out, refinements.Load() - before
		}
		withSideCache(t, SideCacheBytes, func() {
			if _, n := gram(); n == 0 {
				t.Fatal("the first Gram call refined nothing")
			}
			if n := quotients(); n != 0 {
				t.Errorf("starts %v: QuotientOf after Gram refined %d graphs, want 0", st != nil, n)
			}
		})
		// The entries in the cache, and how many have their sides.
		count := func() (entries, sided int) {
			for _, list := range sideCache.entries {
				for _, e := range list {
					entries++
					if e.sided {
						sided++
					}
				}
			}
			return entries, sided
		}
		withSideCache(t, SideCacheBytes, func() {
			// One refinement, and one entry, a distinct content (the test
			// graphs repeat some).
			distinct := quotients()
			if entries, sided := count(); distinct < int64(len(gs))-5 || int64(entries) != distinct || sided != 0 {
				t.Errorf("starts %v: the first QuotientOf refined %d of %d graphs, into %d entries, %d with sides",
					st != nil, distinct, len(gs), entries, sided)
			}
			quotientOnly := SideCacheInUse()
			got, n := gram()
			if n != 0 {
				t.Errorf("starts %v: Gram after QuotientOf refined %d graphs, want 0", st != nil, n)
			}
			if !slices.Equal(got, want) {
				t.Errorf("starts %v: Gram after QuotientOf differs from the uncached call", st != nil)
			}
			if entries, sided := count(); int64(entries) != distinct || int64(sided) != distinct || SideCacheInUse() <= quotientOnly {
				t.Errorf("starts %v: %d entries, %d with sides, for %d distinct graphs (%d bytes, %d before the Gram call)",
					st != nil, entries, sided, distinct, SideCacheInUse(), quotientOnly)
			}
		})
		// A cache that holds a few graphs and empties itself: the same values.
		limit := 3 * sizeOf(gs[0])
		withSideCache(t, limit, func() {
			quotients()
			if got, _ := gram(); !slices.Equal(got, want) {
				t.Errorf("starts %v, limit %d: Gram after QuotientOf differs from the uncached call", st != nil, limit)
			}
			quotients()
			if used := SideCacheInUse(); used > limit || used == 0 {
				t.Errorf("starts %v: the cache holds %d bytes with a limit of %d", st != nil, used, limit)
			}
		})
	}
}

// BenchmarkQuotientOf is QuotientOf of 300 molecule-sized graphs, as the CUDA
// bridge asks for them on each call: "refined" refines every graph
// (SideCacheBytes = 0: what every call paid before QuotientOf used the
// cache), "cached" is a call after the first, served from the side cache.
// ns/graph is reported.
func BenchmarkQuotientOf(b *testing.B) {
	gs := moleculeGraphs(300, 3)
	for _, c := range []struct {
		name  string
		limit int64
	}{{"refined", 0}, {"cached", SideCacheBytes}} {
		b.Run(c.name, func(b *testing.B) {
			withSideCache(b, c.limit, func() {
				call := func() {
					for i, g := range gs {
						if _, err := QuotientOf(fmt.Sprintf("X[%d]", i), g, nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				call() // the first call fills the cache
				for b.Loop() {
					call()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(gs)), "ns/graph")
			})
		})
	}
}
