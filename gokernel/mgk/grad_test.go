package mgk

import (
	"fmt"
	"math"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// params returns pointers to the hyperparameters of k in microkernel order
// (depth-first over the leaves), so a test can perturb them in place.
func params(k microkernel.Kernel) []*float64 {
	switch k := k.(type) {
	case *microkernel.Constant:
		return []*float64{&k.C}
	case *microkernel.KroneckerDelta:
		return []*float64{&k.H}
	case *microkernel.SquareExponential:
		return []*float64{&k.LengthScale}
	case *microkernel.BrownianBridge:
		return []*float64{&k.C}
	case *microkernel.Sum:
		var ps []*float64
		for _, t := range k.Terms {
			ps = append(ps, params(t)...)
		}
		return ps
	case *microkernel.Product:
		var ps []*float64
		for _, t := range k.Terms {
			ps = append(ps, params(t)...)
		}
		return ps
	case *microkernel.Normalized:
		return params(k.K)
	}
	panic(fmt.Sprintf("unknown kernel %T", k))
}

// fdGrad is the finite-difference gradient of the dense K(g, h) with respect to
// (q, node parameters, edge parameters): central differences with steps
// rel·|θ| and half that (rel when θ = 0), combined by Richardson extrapolation
// so the truncation error is O(step⁴). That matters near the edge of
// convergence (Constant(1) kernels at q = 0.01 are 2% from a singular system),
// where plain central differences are off by 1e-7.
func fdGrad(t *testing.T, g, h *graph.Graph, pg, ph []float64, opt Options, rel float64) []float64 {
	ptrs := append([]*float64{&opt.Q}, params(opt.NodeKernel)...)
	ptrs = append(ptrs, params(opt.EdgeKernel)...)
	out := make([]float64, len(ptrs))
	for k, p := range ptrs {
		x := *p
		step := rel * math.Abs(x)
		if step == 0 {
			step = rel
		}
		central := func(s float64) float64 {
			*p = x + s
			kp, _ := denseSolve(t, g, h, pg, ph, opt)
			*p = x - s
			km, _ := denseSolve(t, g, h, pg, ph, opt)
			*p = x
			return (kp - km) / (2 * s)
		}
		out[k] = (4*central(step/2) - central(step)) / 3
	}
	return out
}

func TestGramGradFiniteDifferences(t *testing.T) {
	gs := testGraphs(t)
	gs = []*graph.Graph{gs[1], gs[3], gs[4], gs[7], gs[9], gs[11]}
	st := randomStarts(gs, 13)
	for _, ks := range kernelSets() {
		for _, q := range []float64{0.01, 0.3, 0.8} {
			for lmin := 0; lmin <= 1; lmin++ {
				t.Run(fmt.Sprintf("%s/q=%g/lmin=%d", ks.name, q, lmin), func(t *testing.T) {
					opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: q, Lmin: lmin, PackMinEdges: 1}
					np := NumParams(opt)
					n := len(gs)
					K := make([]float64, n*n)
					G := make([]float64, n*n*np)
					iters := make([]int32, n*n)
					if bad, err := GramGrad(gs, nil, st, nil, true, opt, K, G, iters); err != nil || len(bad) > 0 {
						t.Fatalf("err %v, unconverged %v", err, bad)
					}
					plain := make([]float64, n*n)
					if _, err := Gram(gs, nil, st, nil, true, opt, plain, nil); err != nil {
						t.Fatal(err)
					}
					// Finite differences first, to know the scale of the whole
					// gradient: a component that vanishes exactly (K = 0 at
					// h = 0, say) is checked against an absolute floor of 1e-9
					// of that scale, above the O(step²) error of the differences.
					fds := make([][]float64, n*n)
					worstRel := 0.0
					defer func() { t.Logf("worst relative difference %.2g", worstRel) }()
					gscale := 0.0
					kd := make([]float64, n*n)
					for i := range gs {
						for j := range gs {
							kd[i*n+j], _ = denseSolve(t, gs[i], gs[j], st[i], st[j], opt)
							fds[i*n+j] = fdGrad(t, gs[i], gs[j], st[i], st[j], opt, 1e-4)
							for _, x := range fds[i*n+j] {
								gscale = max(gscale, math.Abs(x))
							}
						}
					}
					for i := range gs {
						for j := range gs {
							e := i*n + j
							// GramGrad's K is Gram's, bit for bit, and meets the
							// accuracy.
							if K[e] != plain[e] || !near(K[e], kd[e], 1e-9) {
								t.Errorf("GramGrad K[%d][%d] = %.15g, Gram %.15g, dense %.15g", i, j, K[e], plain[e], kd[e])
							}
							for k, want := range fds[e] {
								if math.Abs(want) > 1e-3*gscale {
									worstRel = max(worstRel, math.Abs(G[e*np+k]/want-1))
								}
								if got := G[e*np+k]; math.Abs(got-want) > 1e-6*math.Abs(want)+1e-9*gscale {
									t.Errorf("∂K[%d][%d]/∂θ%d = %.10g, finite differences %.10g", i, j, k, got, want)
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestGramGradGraphDot differentiates the GraphDot labeled example, whose
// kernels have five and two hyperparameters, against finite differences.
func TestGramGradGraphDot(t *testing.T) {
	gs := labeledPair(t)
	opt := Options{NodeKernel: labeledNodeKernel(), EdgeKernel: labeledEdgeKernel(false), Q: 0.05}
	np := NumParams(opt)
	if np != 1+3+2 {
		t.Fatalf("NumParams = %d, want 6", np)
	}
	K := make([]float64, 4)
	G := make([]float64, 4*np)
	if _, err := GramGrad(gs, nil, nil, nil, true, opt, K, G, nil); err != nil {
		t.Fatal(err)
	}
	for i := range gs {
		for j := range gs {
			fd := fdGrad(t, gs[i], gs[j], nil, nil, opt, 1e-4)
			for k, want := range fd {
				if got := G[(i*2+j)*np+k]; math.Abs(got-want) > 1e-6*math.Abs(want)+1e-9 {
					t.Errorf("∂K[%d][%d]/∂θ%d = %.10g, finite differences %.10g", i, j, k, got, want)
				}
			}
		}
	}
}

func TestGramGradArguments(t *testing.T) {
	gs := testGraphs(t)[:2]
	opt := constOpt(0.1)
	if _, err := GramGrad(gs, nil, nil, nil, true, opt, make([]float64, 4), make([]float64, 4), nil); err == nil {
		t.Error("short grad accepted")
	}
	if _, err := GramGrad(gs, nil, nil, nil, true, opt, make([]float64, 4), make([]float64, 12), nil); err != nil {
		t.Error(err)
	}
	if _, err := GramGrad(gs, nil, nil, nil, true, Options{}, make([]float64, 4), make([]float64, 4), nil); err == nil {
		t.Error("invalid options accepted")
	}
	// Unconverged solves are reported with both solves' iterations.
	big := testGraphs(t)[9:]
	opt.MaxIter, opt.Q = 1, 0.001
	n := len(big)
	bad, err := GramGrad(big, nil, nil, nil, true, opt, make([]float64, n*n), make([]float64, n*n*3), nil)
	if err != nil || len(bad) == 0 {
		t.Fatalf("err %v, unconverged %v", err, bad)
	}
	for _, u := range bad {
		if u.Iterations > 2 {
			t.Errorf("%v: more than 2 iterations with MaxIter = 1", u)
		}
	}
}

// TestDiagGrad checks DiagGrad against the diagonal of GramGrad: the same
// solves, so the same values bit for bit, graphs repeated in X included; and
// its buffer checks.
func TestDiagGrad(t *testing.T) {
	gs := testGraphs(t)
	gs = append(gs, gs[0], gs[3]) // duplicates share one solve
	opt := Options{NodeKernel: labeledNodeKernel(), EdgeKernel: labeledEdgeKernel(false), Q: 0.05}
	if _, _, err := Check(gs, nil, nil, nil, true, opt); err != nil {
		opt = constOpt(0.1) // graphs without the labels the labeled kernels read
	}
	n, np := len(gs), NumParams(opt)
	K := make([]float64, n*n)
	G := make([]float64, n*n*np)
	if _, err := GramGrad(gs, nil, nil, nil, true, opt, K, G, nil); err != nil {
		t.Fatal(err)
	}
	d := make([]float64, n)
	dg := make([]float64, n*np)
	if _, err := DiagGrad(gs, nil, opt, d, dg); err != nil {
		t.Fatal(err)
	}
	for i := range gs {
		if d[i] != K[i*n+i] {
			t.Errorf("K[%d][%d] = %v, DiagGrad %v", i, i, K[i*n+i], d[i])
		}
		for k := 0; k < np; k++ {
			if got, want := dg[i*np+k], G[(i*n+i)*np+k]; got != want {
				t.Errorf("∂K[%d][%d]/∂θ%d = %v, DiagGrad %v", i, i, k, want, got)
			}
		}
	}
	if _, err := DiagGrad(gs, nil, opt, d, dg[1:]); err == nil {
		t.Error("short grad accepted")
	}
	if _, err := DiagGrad(gs, nil, opt, d[1:], dg); err == nil {
		t.Error("short out accepted")
	}
}
