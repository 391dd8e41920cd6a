package mgk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// BenchmarkWarmStart measures what starting each pair's solve from its
// solution at nearby hyperparameters would save (issue #38: consecutive
// likelihood evaluations of a GP fit differ a little in θ). For pairs of
// MUTAG graphs at q = 0.1 and 0.01, θ = (log q, log h_node, log h_edge) is
// moved by a random step of length δ; the primal system at the new θ is solved to the gradients'
// tolerance (GramGrad's solves stop there) from zero ("cold") and from the
// old θ's solution x₀ ("warm": A δx = u − A x₀ from zero, stopping at the
// same absolute preconditioned residual as the cold solve). Reported: the
// mean iterations of each, per δ. The warm solutions are checked against the
// cold ones (K to 1e-6).
func BenchmarkWarmStart(b *testing.B) {
	gs := mutagFull(b)
	gs = gs[:min(40, len(gs))]
	const h0 = 0.5
	for _, tc := range []struct{ q0, delta float64 }{
		{0.1, 0.01}, {0.1, 0.03}, {0.1, 0.1}, {0.1, 0.3}, {0.1, 1}, {0.01, 0.01}, {0.01, 0.1}, {0.01, 1},
	} {
		q0, delta := tc.q0, tc.delta
		b.Run(fmt.Sprintf("q=%v/delta=%v", q0, delta), func(b *testing.B) {
			var cold, warm, pairs int
			for b.Loop() {
				rng := rand.New(rand.NewPCG(1, 2))
				cold, warm, pairs = 0, 0, 0
				for i := 0; i < len(gs); i += 2 {
					for j := 1; j < len(gs); j += 3 {
						d := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
						norm := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
						step := func(k int, x float64) float64 { return x * math.Exp(delta*d[k]/norm) }
						c, w, ok := warmStartIters(b, gs[i], gs[j], [3]float64{q0, h0, h0},
							[3]float64{min(step(0, q0), 0.9), min(step(1, h0), 1), min(step(2, h0), 1)})
						if ok {
							cold, warm, pairs = cold+c, warm+w, pairs+1
						}
					}
				}
			}
			b.ReportMetric(float64(cold)/float64(pairs), "cold-iters")
			b.ReportMetric(float64(warm)/float64(pairs), "warm-iters")
		})
	}
}

// warmStartIters solves the pair (g, h) at θ₀ = (q, h_node, h_edge), then at
// θ₁ cold and warm from θ₀'s solution, and returns both iteration counts; ok
// is false for a pair not solved with symmetric Gauss–Seidel.
func warmStartIters(b *testing.B, g, h *graph.Graph, t0, t1 [3]float64) (cold, warm int, ok bool) {
	a, c := newSide(g, nil, defaultPackMinEdges), newSide(h, nil, defaultPackMinEdges)
	options := func(t [3]float64) Options {
		o, err := Options{
			NodeKernel: &microkernel.KroneckerDelta{H: t[1], Col: 0, Width: 1},
			EdgeKernel: &microkernel.KroneckerDelta{H: t[2], Col: 0, Width: 1},
			Q:          t[0],
		}.resolve()
		if err != nil {
			b.Fatal(err)
		}
		return o
	}
	var ps pairSolver
	n := g.N * h.N
	o0, o1 := options(t0), options(t1)
	if err := ps.prepare(&a, &c, &o0); err != nil {
		b.Fatal(err)
	}
	if !ps.sgs || ps.cw != nil || o0.Lmin != 0 {
		return 0, 0, false
	}
	x0 := make([]float64, n)
	if res := ps.cg(ps.primalRHS(), x0, ps.gradTol, o0.MaxIter); !res.converged {
		b.Fatalf("θ₀ solve: %+v", res)
	}
	if err := ps.prepare(&a, &c, &o1); err != nil {
		b.Fatal(err)
	}
	rhs := append([]float64(nil), ps.primalRHS()...)
	resCold := ps.cg(rhs, ps.sol[:n], ps.gradTol, o1.MaxIter)
	kCold := ps.value()
	// r₀ = u − (D V⁻¹ − W) x₀ where v > 0 (cg's system), 0 elsewhere.
	wx, r0 := make([]float64, n), make([]float64, n)
	ps.w.mulW(wx, x0)
	for k := range r0 {
		if ps.v[k] > 0 {
			r0[k] = rhs[k] - ps.dd[k]/ps.v[k]*x0[k] + wx[k]
		}
	}
	// The warm solve stops at the cold one's absolute preconditioned residual.
	rz0 := func(u []float64) float64 {
		col := ps.col1(make([]float64, n), n)
		ps.start(col, u, 1)
		return col.rz0
	}
	tol := ps.gradTol * math.Sqrt(rz0(rhs)/rz0(r0))
	dx := make([]float64, n)
	resWarm := ps.cg(r0, dx, tol, o1.MaxIter)
	for k := range dx {
		ps.sol[k] = x0[k] + dx[k]
	}
	if kWarm := ps.value(); !resCold.converged || !resWarm.converged || math.Abs(kWarm-kCold) > 1e-6*math.Abs(kCold) {
		b.Fatalf("cold %+v K %v, warm %+v K %v", resCold, kCold, resWarm, kWarm)
	}
	return resCold.iters, resWarm.iters, true
}
