package mgk

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// withSideCache runs f with SideCacheBytes set to limit and an empty cache,
// restoring both after.
func withSideCache(t *testing.T, limit int64, f func()) {
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
