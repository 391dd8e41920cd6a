package rwkernel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"gonum.org/v1/gonum/mat"
)

// randomGraph has n nodes, edge probability pe, weights in [0.5, 1.5) or all 1,
// the odd self-loop, and node features [label in 0..2, float].
func randomGraph(r *rand.Rand, n int, pe float64, weighted bool) *graph.Graph {
	var edges []int64
	var w []float64
	for u := 0; u < n; u++ {
		for v := u; v < n; v++ {
			if r.Float64() >= pe || (u == v && r.IntN(5) != 0) {
				continue
			}
			edges = append(edges, int64(u), int64(v))
			x := 1.0
			if weighted {
				x = 0.5 + r.Float64()
			}
			w = append(w, x)
		}
	}
	nf := make([]float64, 0, 2*n)
	for i := 0; i < n; i++ {
		nf = append(nf, float64(r.IntN(3)), r.NormFloat64())
	}
	g, err := graph.New(n, edges, w, nf, 2, nil, 0)
	if err != nil {
		panic(err)
	}
	return g
}

func randomGraphs(seed uint64, count, maxN int, weighted bool) []*graph.Graph {
	r := rand.New(rand.NewPCG(seed, 3))
	gs := make([]*graph.Graph, count)
	for i := range gs {
		gs[i] = randomGraph(r, 1+r.IntN(maxN), 0.15+0.35*r.Float64(), weighted)
	}
	return gs
}

// product builds W×[(i,k),(j,l)] = A_ij A'_kl κ(i,k) κ(j,l) explicitly.
func product(g, h *graph.Graph, kern microkernel.Kernel) *mat.Dense {
	n, m := g.N, h.N
	a, b := g.Dense(), h.Dense()
	kap := func(i, k int) float64 {
		if kern == nil {
			return 1
		}
		return kern.Eval(g.Node(i), h.Node(k))
	}
	w := mat.NewDense(n*m, n*m, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < m; k++ {
			for j := 0; j < n; j++ {
				for l := 0; l < m; l++ {
					if v := a[i*n+j] * b[k*m+l]; v != 0 {
						w.Set(i*m+k, j*m+l, v*kap(i, k)*kap(j, l))
					}
				}
			}
		}
	}
	return w
}

// reference evaluates the definition with dense linear algebra.
func reference(g, h *graph.Graph, opt Options) float64 {
	if g.N == 0 || h.N == 0 {
		return 0
	}
	w := product(g, h, opt.NodeKernel)
	d, _ := w.Dims()
	ones := mat.NewVecDense(d, nil)
	for k := 0; k < d; k++ {
		ones.SetVec(k, 1)
	}
	var s mat.Dense
	switch {
	case opt.Steps > 0:
		p := mat.NewDense(d, d, nil)
		for k := 0; k < d; k++ {
			p.Set(k, k, 1)
		}
		s.CloneFrom(p)
		mu := 1.0
		for k := 1; k <= opt.Steps; k++ {
			p.Mul(p, w)
			mu *= opt.Lambda
			if opt.Kind == Exponential {
				mu /= float64(k)
			}
			var t mat.Dense
			t.Scale(mu, p)
			s.Add(&s, &t)
		}
	case opt.Kind == Exponential:
		var t mat.Dense
		t.Scale(opt.Lambda, w)
		s.Exp(&t)
	default:
		var t mat.Dense
		t.Scale(-opt.Lambda, w)
		for k := 0; k < d; k++ {
			t.Set(k, k, 1+t.At(k, k))
		}
		var x mat.VecDense
		if err := x.SolveVec(&t, ones); err != nil {
			panic(err)
		}
		return mat.Sum(&x)
	}
	var x mat.VecDense
	x.MulVec(&s, ones)
	return mat.Sum(&x)
}

var nodeKernels = map[string]microkernel.Kernel{
	"none":    nil,
	"label":   microkernel.MustParse(`{"kind":"kronecker_delta","h":0,"col":0}`),
	"label-h": microkernel.MustParse(`{"kind":"kronecker_delta","h":0.3,"col":0}`),
	"float":   microkernel.MustParse(`{"kind":"square_exponential","length_scale":0.7,"col":1}`),
	"const":   microkernel.MustParse(`{"kind":"constant","c":0.8}`),
	"both":    microkernel.MustParse(`{"kind":"product","terms":[{"kind":"kronecker_delta","h":0,"col":0},{"kind":"square_exponential","length_scale":2,"col":1}]}`),
	"norm":    microkernel.MustParse(`{"kind":"normalized","kernel":{"kind":"sum","terms":[{"kind":"kronecker_delta","h":0.5,"col":0},{"kind":"constant","c":0.5}]}}`),
}

func near(a, b, tol float64) bool {
	return a == b || math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// maxRho returns the largest spectral radius among gs.
func maxRho(gs []*graph.Graph) float64 {
	r := 0.0
	for _, g := range gs {
		if g.N > 0 {
			x, _ := spectralRadius(g.Dense(), g.N)
			r = max(r, x)
		}
	}
	return r
}

func TestGramMatchesDefinition(t *testing.T) {
	X := randomGraphs(1, 6, 7, true)
	Y := randomGraphs(2, 3, 7, false)
	empty, _ := graph.New(0, nil, nil, nil, 2, nil, 0)
	lonely, _ := graph.New(3, nil, nil, []float64{0, 0, 1, 0, 0, 1}, 2, nil, 0)
	X = append(X, empty, lonely)
	rho := maxRho(append(append([]*graph.Graph{}, X...), Y...))
	for kname, kern := range nodeKernels {
		for _, kind := range []Kind{Geometric, Exponential} {
			for _, steps := range []int{0, 1, 4} {
				for _, mode := range []string{"auto", "grid", "direct"} {
					opt := Options{NodeKernel: kern, Lambda: 0.6 / (rho * rho), Kind: kind, Steps: steps, NJobs: 2}
					if kind == Exponential {
						opt.Lambda = 0.7
					}
					opt.GridProduct = mode == "grid"
					if mode == "direct" {
						opt.Solver = SolverDirect
					}
					name := fmt.Sprintf("%s/%v/p%d/%s", kname, kind, steps, mode)
					out := make([]float64, len(X)*len(Y))
					if err := Gram(X, Y, false, opt, out); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i := range X {
						for j := range Y {
							if want := reference(X[i], Y[j], opt); !near(out[i*len(Y)+j], want, 1e-12) {
								t.Fatalf("%s: K[%d,%d]=%.17g want %.17g", name, i, j, out[i*len(Y)+j], want)
							}
						}
					}
					sym := make([]float64, len(X)*len(X))
					if err := Gram(X, nil, true, opt, sym); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					diag := make([]float64, len(X))
					if err := Diag(X, opt, diag); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i := range X {
						for j := range X {
							if want := reference(X[i], X[j], opt); !near(sym[i*len(X)+j], want, 1e-12) {
								t.Fatalf("%s: symmetric K[%d,%d]=%.17g want %.17g", name, i, j, sym[i*len(X)+j], want)
							}
						}
						if diag[i] != sym[i*len(X)+i] {
							t.Fatalf("%s: Diag[%d]=%v, Gram has %v", name, i, diag[i], sym[i*len(X)+i])
						}
					}
				}
			}
		}
	}
}

// TestClosedForms: the complete graph K_n has eigenvalues n−1 (eigenvector 1/√n·1)
// and −1 (orthogonal to 1), so K(K_n, K_m) = n·m / (1 − λ(n−1)(m−1)) (geometric)
// and n·m·exp(λ(n−1)(m−1)) (exponential); p steps give Σ_k μ_k (n(n−1)^k)(m(m−1)^k).
func TestClosedForms(t *testing.T) {
	complete := func(n int) *graph.Graph {
		var e []int64
		var w []float64
		for u := 0; u < n; u++ {
			for v := u + 1; v < n; v++ {
				e, w = append(e, int64(u), int64(v)), append(w, 1)
			}
		}
		g, _ := graph.New(n, e, w, nil, 0, nil, 0)
		return g
	}
	gs := []*graph.Graph{complete(2), complete(3), complete(5)}
	lam := 0.05
	out := make([]float64, 9)
	for _, kind := range []Kind{Geometric, Exponential} {
		for _, steps := range []int{0, 3} {
			if err := Gram(gs, nil, true, Options{Lambda: lam, Kind: kind, Steps: steps}, out); err != nil {
				t.Fatal(err)
			}
			for i, n := range []float64{2, 3, 5} {
				for j, m := range []float64{2, 3, 5} {
					x := lam * (n - 1) * (m - 1)
					var want float64
					switch {
					case steps > 0:
						mu, pw := 1.0, 1.0
						for k := 0; k <= steps; k++ {
							want += mu * n * m * pw
							pw *= (n - 1) * (m - 1)
							mu *= lam
							if kind == Exponential {
								mu /= float64(k + 1)
							}
						}
					case kind == Geometric:
						want = n * m / (1 - x)
					default:
						want = n * m * math.Exp(x)
					}
					if got := out[i*3+j]; !near(got, want, 1e-13) {
						t.Errorf("%v p=%d K(K%v,K%v) = %.17g want %.17g", kind, steps, n, m, got, want)
					}
				}
			}
		}
	}
}

// TestLambdaLimit: the error names the largest admissible λ, which works, and
// anything at or above it fails.
func TestLambdaLimit(t *testing.T) {
	gs := randomGraphs(3, 5, 8, false)
	rho := maxRho(gs)
	for _, kern := range []microkernel.Kernel{nil, nodeKernels["label"], microkernel.MustParse(`{"kind":"normalized","kernel":{"kind":"kronecker_delta","h":2,"col":0}}`)} {
		out := make([]float64, len(gs)*len(gs))
		err := Gram(gs, nil, true, Options{NodeKernel: kern, Lambda: 1.0001 / (rho * rho)}, out)
		if !errors.Is(err, ErrLambda) {
			t.Fatalf("%v: got %v, want ErrLambda", kern, err)
		}
		msg := err.Error()
		k := strings.Index(msg, "just below ")
		if k < 0 {
			t.Fatalf("message does not give the limit: %s", msg)
		}
		f := strings.TrimRight(strings.Fields(msg[k+len("just below "):])[0], ".")
		limit, perr := strconv.ParseFloat(f, 64)
		if perr != nil {
			t.Fatalf("cannot parse limit %q in %s", f, msg)
		}
		if kern == nil && !near(limit, 1/(rho*rho), 1e-9) {
			t.Errorf("limit %v, want 1/ρ² = %v", limit, 1/(rho*rho))
		}
		if err := Gram(gs, nil, true, Options{NodeKernel: kern, Lambda: limit * (1 - 1e-6)}, out); err != nil {
			t.Errorf("λ just below the reported limit fails: %v", err)
		}
		if err := Gram(gs, nil, true, Options{NodeKernel: kern, Lambda: limit * (1 + 1e-9)}, out); !errors.Is(err, ErrLambda) {
			t.Errorf("λ just above the reported limit: %v", err)
		}
	}
	// Truncated and exponential series take any λ.
	out := make([]float64, len(gs)*len(gs))
	for _, o := range []Options{{Lambda: 10, Steps: 3}, {Lambda: 10, Kind: Exponential}} {
		if err := Gram(gs, nil, true, o, out); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestErrors(t *testing.T) {
	g := randomGraphs(4, 2, 5, false)
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Lambda: 0}, "lamda must be a positive"},
		{Options{Lambda: -1}, "lamda must be a positive"},
		{Options{Lambda: math.NaN()}, "lamda must be a positive"},
		{Options{Lambda: 0.01, Steps: -2}, "number of steps"},
		{Options{Lambda: 0.01, Kind: 7}, "unknown random-walk kind"},
		{Options{Lambda: 0.01, NodeKernel: microkernel.MustParse(`{"kind":"kronecker_delta","h":0,"col":4}`)}, "reads feature column 4"},
	} {
		err := Gram(g, nil, true, tc.opt, make([]float64, 4))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opt, err, tc.want)
		}
	}
	if err := Gram(g, nil, true, Options{Lambda: 0.01}, make([]float64, 3)); err == nil {
		t.Error("wrong output size accepted")
	}
	big, _ := graph.New(3, []int64{0, 1, 1, 2, 0, 2}, []float64{1, 1, 1}, nil, 0, nil, 0)
	for _, o := range []Options{{Lambda: 1000, Kind: Exponential}, {Lambda: 1e200, Steps: 5}} {
		if err := Gram([]*graph.Graph{big}, nil, true, o, make([]float64, 1)); err == nil || !strings.Contains(err.Error(), "overflows") {
			t.Errorf("%+v: %v, want an overflow error", o, err)
		}
	}
}
