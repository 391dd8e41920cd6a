package mgk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// quotientGraphs are graphs with non-trivial quotients and WL-equivalent
// pairs: a 6-cycle and two triangles (equivalent, not isomorphic), a labelled
// 6-cycle, a star with a self-loop at its centre, plus the test graphs and
// permuted copies of some of them (equivalent to their originals).
func quotientGraphs(t testing.TB) []*graph.Graph {
	c6 := mustGraph(t, 6, []int64{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 0}, ones(6), make([]float64, 12), 2, make([]float64, 12), 2)
	c33 := mustGraph(t, 6, []int64{0, 1, 1, 2, 2, 0, 3, 4, 4, 5, 5, 3}, ones(6), make([]float64, 12), 2, make([]float64, 12), 2)
	lab := mustGraph(t, 6, []int64{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 0}, ones(6),
		[]float64{0, 0.5, 1, 0, 0.5, 1, 1, 0, 1, 0, 1, 0}, 2,
		[]float64{0, 1, 0, 1, 0, 1, 2, 2, 2, 2, 2, 2}, 2)
	star := mustGraph(t, 5, []int64{0, 1, 0, 2, 0, 3, 0, 4, 0, 0}, []float64{1, 1, 1, 1, 0.5},
		[]float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 2, []float64{0, 1, 0, 1, 0, 1, 0, 1, 1, 0}, 2)
	gs := append([]*graph.Graph{c6, c33, lab, star}, testGraphs(t)...)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, g := range gs[4:8] {
		gs = append(gs, permute(t, g, rng.Perm(g.N)))
	}
	return gs
}

// TestQuotientShrinks: the quotients are smaller where they should be;
// WL-equivalent graphs (C6 and two triangles) get quotients with the same
// content, bit for bit, and permuted copies the same classes.
func TestQuotientShrinks(t *testing.T) {
	gs := quotientGraphs(t)
	qs := make([]quotient, len(gs))
	for i, g := range gs {
		qs[i] = quotientOf(g, nil)
	}
	for _, tc := range []struct{ g, classes int }{{0, 1}, {1, 1}, {3, 2}} {
		if n := qs[tc.g].g.N; n != tc.classes {
			t.Errorf("graph %d: %d classes, want %d", tc.g, n, tc.classes)
		}
	}
	same := func(a, b *quotient) bool { return graph.CompareContent(a.g, a.content(), b.g, b.content()) == 0 }
	if !same(&qs[0], &qs[1]) {
		t.Error("C6 and 2×C3 have different quotients")
	}
	for k := range 4 {
		a, b := qs[4+k], qs[len(gs)-4+k]
		ca, cb := slices.Sorted(slices.Values(a.cw)), slices.Sorted(slices.Values(b.cw))
		if a.g.N != b.g.N || !slices.Equal(ca, cb) {
			t.Errorf("test graph %d and its permutation have different classes: %v and %v", k, ca, cb)
		}
	}
	// Start probabilities that differ within a class split it.
	if n := quotientOf(gs[0], []float64{1, 2, 1, 2, 1, 2}).g.N; n != 2 {
		t.Errorf("C6 with alternating starts: %d classes, want 2", n)
	}
}

// TestQuotientMatchesFull: Gram, Diag, Nodal-free GramGrad and unconverged
// reports are the same with and without the quotient, for every solver, with
// and without start probabilities.
func TestQuotientMatchesFull(t *testing.T) {
	gs := quotientGraphs(t)
	n := len(gs)
	for _, ks := range kernelSets() {
		for _, lmin := range []int{0, 1} {
			for _, withStarts := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/lmin=%d/starts=%v", ks.name, lmin, withStarts), func(t *testing.T) {
					var st [][]float64
					if withStarts {
						st = randomStarts(gs, 8)
						// Class-constant starts on C6 keep its quotient.
						st[0] = []float64{0.7, 0.7, 0.7, 0.7, 0.7, 0.7}
						st[1] = st[0]
					}
					base := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.05, Lmin: lmin, Tol: 1e-13, NJobs: 2}
					ref := base
					ref.Solver, ref.Quotient = SolverJacobi, QuotientOff
					want := make([]float64, n*n)
					if _, err := Gram(gs, nil, st, nil, true, ref, want, nil); err != nil {
						t.Fatal(err)
					}
					wantD := make([]float64, n)
					if _, err := Diag(gs, st, ref, wantD); err != nil {
						t.Fatal(err)
					}
					np := NumParams(base)
					wantG := make([]float64, n*n*np)
					if _, err := GramGrad(gs, nil, st, nil, true, ref, make([]float64, n*n), wantG, nil); err != nil {
						t.Fatal(err)
					}
					for _, sm := range solverModes {
						o := base
						o.Solver, o.Quotient = sm.solver, sm.quotient
						got := make([]float64, n*n)
						if _, err := Gram(gs, nil, st, nil, true, o, got, nil); err != nil {
							t.Fatal(err)
						}
						// Not symmetric: X and Y refined together, each deduplicated.
						var stY [][]float64
						if st != nil {
							stY = st[2:]
						}
						full := make([]float64, n*(n-2))
						if _, err := Gram(gs, gs[2:], st, stY, false, o, full, nil); err != nil {
							t.Fatal(err)
						}
						gotD := make([]float64, n)
						if _, err := Diag(gs, st, o, gotD); err != nil {
							t.Fatal(err)
						}
						gotK, gotG := make([]float64, n*n), make([]float64, n*n*np)
						if _, err := GramGrad(gs, nil, st, nil, true, o, gotK, gotG, nil); err != nil {
							t.Fatal(err)
						}
						for k := range want {
							i, j := k/n, k%n
							if !near(got[k], want[k], 1e-11) || !near(gotK[k], want[k], 1e-11) {
								t.Errorf("%s K[%d][%d] = %.15g (GramGrad %.15g), reference %.15g", sm.name, i, j, got[k], gotK[k], want[k])
							}
							if j >= 2 && !near(full[i*(n-2)+j-2], want[k], 1e-11) {
								t.Errorf("%s non-symmetric K[%d][%d] = %.15g, reference %.15g", sm.name, i, j, full[i*(n-2)+j-2], want[k])
							}
							for p := range np {
								w, g := wantG[k*np+p], gotG[k*np+p]
								if math.Abs(g-w) > 1e-9*(math.Abs(w)+1e-3) {
									t.Errorf("%s ∂K[%d][%d]/∂θ%d = %.12g, reference %.12g", sm.name, i, j, p, g, w)
								}
							}
						}
						for i := range wantD {
							if !near(gotD[i], wantD[i], 1e-11) {
								t.Errorf("%s diag %d = %.15g, reference %.15g", sm.name, i, gotD[i], wantD[i])
							}
						}
					}
				})
			}
		}
	}
}

// TestQuotientUnconverged: unconverged pairs are reported for every entry a
// deduplicated pair stands for.
func TestQuotientUnconverged(t *testing.T) {
	gs := quotientGraphs(t)
	n := len(gs)
	ks := kernelSets()[1]
	for _, quo := range []Quotient{QuotientOff, QuotientOn} {
		opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.001, MaxIter: 1, Quotient: quo}
		bad, err := Gram(gs, nil, nil, nil, true, opt, make([]float64, n*n), nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[schedule.Pair]bool{}
		for _, u := range bad {
			seen[schedule.Pair{I: u.I, J: u.J}] = true
		}
		// C6 and 2×C3 are one quotient: (0,0), (0,1) and (1,1) stand or fall
		// together.
		if seen[schedule.Pair{I: 0, J: 0}] != seen[schedule.Pair{I: 1, J: 1}] || seen[schedule.Pair{I: 0, J: 0}] != seen[schedule.Pair{I: 0, J: 1}] {
			t.Errorf("quotient %d: equivalent pairs reported differently", quo)
		}
		if len(bad) == 0 {
			t.Errorf("quotient %d: nothing reported", quo)
		}
	}
}
