package mgk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
)

var qs = []float64{0.001, 0.01, 0.1, 0.5, 0.9}

// randomStarts gives every graph random positive start probabilities.
func randomStarts(gs []*graph.Graph, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := make([][]float64, len(gs))
	for i, g := range gs {
		s[i] = make([]float64, g.N)
		for k := range s[i] {
			s[i][k] = 0.1 + rng.Float64()
		}
	}
	return s
}

// solverModes are the solver settings every path is tested with.
var solverModes = []struct {
	name     string
	solver   Solver
	quotient Quotient
}{
	{"jacobi", SolverJacobi, QuotientOff},
	{"sgs", SolverSGS, QuotientOff},
	{"auto", SolverAuto, QuotientOff},
	{"sgs-quotient", SolverSGS, QuotientOn},
	{"auto-quotient", SolverAuto, QuotientOn},
}

func TestGramAgainstDense(t *testing.T) {
	gs := testGraphs(t)
	for _, ks := range kernelSets() {
		for _, q := range qs {
			for lmin := 0; lmin <= 1; lmin++ {
				for _, withStarts := range []bool{false, true} {
					for _, sm := range solverModes {
						name := fmt.Sprintf("%s/q=%g/lmin=%d/starts=%v/%s", ks.name, q, lmin, withStarts, sm.name)
						t.Run(name, func(t *testing.T) {
							var st [][]float64
							if withStarts {
								st = randomStarts(gs, 3)
							}
							opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: q, Lmin: lmin, NJobs: 2, PackMinEdges: 1, Solver: sm.solver, Quotient: sm.quotient}
							got := make([]float64, len(gs)*len(gs))
							iters := make([]int32, len(got))
							bad, err := Gram(gs, nil, st, nil, true, opt, got, iters)
							if err != nil || len(bad) != 0 {
								t.Fatalf("err %v, unconverged %v", err, bad)
							}
							want := denseGram(t, gs, gs, st, st, opt)
							worst := 0.0
							for k := range want {
								if !near(got[k], want[k], 1e-9) {
									t.Errorf("K[%d][%d] = %.15g, dense %.15g", k/len(gs), k%len(gs), got[k], want[k])
								}
								if want[k] != 0 {
									worst = max(worst, math.Abs(got[k]/want[k]-1))
								}
							}
							maxIt := int32(0)
							for _, it := range iters {
								maxIt = max(maxIt, it)
							}
							t.Logf("worst relative error %.2g, most iterations %d", worst, maxIt)
						})
					}
				}
			}
		}
	}
}

func TestNodalAgainstDense(t *testing.T) {
	gs := testGraphs(t)
	X, Y := gs[:7], gs[5:]
	for _, ks := range kernelSets() {
		for _, q := range qs {
			for lmin := 0; lmin <= 1; lmin++ {
				for _, solver := range []Solver{SolverJacobi, SolverSGS} {
					t.Run(fmt.Sprintf("%s/q=%g/lmin=%d/solver=%d", ks.name, q, lmin, solver), func(t *testing.T) {
						// Single node-pair values are held to 1e-9 relative, which
						// takes a tighter accuracy than K's.
						opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: q, Lmin: lmin, NJobs: 2, PackMinEdges: 1, Solver: solver, Accuracy: 1e-12}
						sX, sY := randomStarts(X, 5), randomStarts(Y, 6)
						for _, sym := range []bool{false, true} {
							Ys, sYs := Y, sY
							if sym {
								Ys, sYs = X, sX
							}
							offX, nX := packedOffsets(X)
							offY, nY := packedOffsets(Ys)
							got := make([]float64, nX*nY)
							if bad, err := Nodal(X, Ys, sX, sYs, sym, opt, got); err != nil || len(bad) != 0 {
								t.Fatalf("err %v, unconverged %v", err, bad)
							}
							for i := range X {
								for j := range Ys {
									_, want := denseSolve(t, X[i], Ys[j], sX[i], sYs[j], opt)
									for a := 0; a < X[i].N; a++ {
										for b := 0; b < Ys[j].N; b++ {
											g := got[(offX[i]+a)*nY+offY[j]+b]
											w := want[a*Ys[j].N+b]
											if !near(g, w, 1e-9) {
												t.Errorf("sym=%v pair (%d,%d) nodes (%d,%d): %.15g, dense %.15g", sym, i, j, a, b, g, w)
											}
										}
									}
								}
							}
						}
					})
				}
			}
		}
	}
}

func packedOffsets(gs []*graph.Graph) ([]int, int) {
	off := make([]int, len(gs))
	t := 0
	for i, g := range gs {
		off[i] = t
		t += g.N
	}
	return off, t
}

// operatorModes are the ways a pair's product can be formed, for tests.
var operatorModes = []struct {
	name string
	op   opKind
	path octile.Path
}{
	{"edge", opEdge, octile.Auto},
	{"csr-cached", opCSRCached, octile.Auto},
	{"csr-uncached", opCSR, octile.Auto},
	{"octile-auto", opOctile, octile.Auto},
	{"octile-tiled", opOctile, octile.Tiled},
	{"octile-factorized", opOctile, octile.Factorized},
	{"octile-explicit", opOctile, octile.Explicit},
	{"octile-eval", opOctile, octile.Eval},
}

// forceMode returns opt with mode's operator forced.
func forceMode(opt Options, op opKind, path octile.Path) Options {
	opt.op, opt.octilePath = op, path
	return opt
}

// TestOperators checks every mat-vec path against the dense W of the pair in
// the solver's node order, for both edge kernels of kernelSets (a Kronecker
// delta, whose classes octile's factorized path uses, and a square exponential
// on a continuous column, which it cannot).
func TestOperators(t *testing.T) {
	gs := testGraphs(t)
	reordered := 0
	for _, g := range gs {
		if s := newSide(g, nil, 1); s.perm != nil {
			reordered++
		}
	}
	if reordered == 0 {
		t.Fatal("no test graph is reordered by packing: the tests do not cover the solver's node order")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ks := range kernelSets()[1:] {
		opt, _ := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.05}.resolve()
		for _, g := range gs {
			for _, h := range gs {
				a, b := newSide(g, nil, 1), newSide(h, nil, 1)
				n := g.N * h.N
				src := make([]float64, n)
				for k := range src {
					src[k] = rng.NormFloat64()
				}
				want := make([]float64, n)
				productPairs(a.g, b.g, ks.ek, func(i, j, ip, jp int, w float64) {
					want[i*h.N+ip] += w * src[j*h.N+jp]
				})
				for _, mode := range operatorModes {
					o := forceMode(opt, mode.op, mode.path)
					var ps pairSolver
					if err := ps.prepare(&a, &b, &o); err != nil {
						t.Fatal(err)
					}
					if a.g.NumEdges()*b.g.NumEdges() > 0 && mode.op == opOctile && ps.w != &ps.oct {
						if mode.path == octile.Factorized || mode.path == octile.Tiled {
							continue // too many edge classes for a class table: a documented refusal
						}
						t.Fatalf("%s: octile refused a %d×%d pair", mode.name, g.N, h.N)
					}
					got := make([]float64, n)
					ps.w.mulW(got, src)
					for k := range got {
						if math.Abs(got[k]-want[k]) > 1e-13*(1+math.Abs(want[k])) {
							t.Errorf("%s %s: graphs %d×%d entry %d: %.17g, dense %.17g", ks.name, mode.name, g.N, h.N, k, got[k], want[k])
						}
					}
				}
			}
		}
	}
}

// TestGramOperatorPaths: the Gram matrix is the same whichever mat-vec is used,
// and the same as with the reference operator.
// The solves are tight (Tol 1e-13) so that the paths agree to 1e-11.
func TestGramOperatorPaths(t *testing.T) {
	gs := testGraphs(t)
	for _, ks := range kernelSets()[1:] {
		opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.05, PackMinEdges: 1, Tol: 1e-13, Solver: SolverJacobi}
		def := make([]float64, len(gs)*len(gs))
		if _, err := Gram(gs, nil, nil, nil, true, forceMode(opt, opReference, octile.Auto), def, nil); err != nil {
			t.Fatal(err)
		}
		for _, sm := range solverModes {
			for _, mode := range operatorModes {
				o := forceMode(opt, mode.op, mode.path)
				o.Solver, o.Quotient = sm.solver, sm.quotient
				got := make([]float64, len(def))
				if _, err := Gram(gs, nil, nil, nil, true, o, got, nil); err != nil {
					t.Fatal(err)
				}
				for k := range def {
					if !near(got[k], def[k], 1e-11) {
						t.Errorf("%s %s %s entry %d: %.15g, reference %.15g", ks.name, sm.name, mode.name, k, got[k], def[k])
					}
				}
			}
		}
	}
}

// unlabeled returns a graph with unit weights, no features and the given edges.
func unlabeled(t testing.TB, n int, edges ...int64) *graph.Graph {
	return mustGraph(t, n, edges, ones(len(edges)/2), nil, 0, nil, 0)
}

func ones(n int) []float64 {
	o := make([]float64, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

func constOpt(q float64) Options {
	return Options{NodeKernel: &microkernel.Constant{C: 1}, EdgeKernel: &microkernel.Constant{C: 1}, Q: q}
}

// TestClosedForm: with Constant(1) kernels and no isolated nodes, x = 1/(q(2−q))
// everywhere, so K = n·n'/(q(2−q)), whatever the graphs' shapes and weights.
func TestClosedForm(t *testing.T) {
	gs := []*graph.Graph{
		unlabeled(t, 2, 0, 1),
		unlabeled(t, 3, 0, 1, 1, 2),
		unlabeled(t, 4, 0, 1, 1, 2, 2, 3, 3, 0, 0, 2),
		unlabeled(t, 5, 0, 1, 2, 3, 3, 4, 4, 2, 2, 2), // two components and a self-loop
		mustGraph(t, 3, []int64{0, 1, 1, 2, 0, 0}, []float64{0.3, 2.5, 1}, nil, 0, nil, 0),
	}
	for _, q := range qs {
		out := make([]float64, len(gs)*len(gs))
		if _, err := Gram(gs, nil, nil, nil, true, constOpt(q), out, nil); err != nil {
			t.Fatal(err)
		}
		for i, g := range gs {
			for j, h := range gs {
				want := float64(g.N*h.N) / (q * (2 - q))
				if got := out[i*len(gs)+j]; !near(got, want, 1e-9) {
					t.Errorf("q=%g K(%d,%d) = %.15g, want %.15g", q, i, j, got, want)
				}
			}
		}
	}
}

// TestGraphDotUnlabeled checks values printed by GraphDot for a 3-star and a
// triangle with Constant(1) kernels: every entry of their 2×2 Gram matrix.
func TestGraphDotUnlabeled(t *testing.T) {
	gs := []*graph.Graph{unlabeled(t, 3, 0, 1, 0, 2), unlabeled(t, 3, 0, 1, 1, 2, 2, 0)}
	for _, tc := range []struct{ q, want float64 }{
		{0.01, 452.2613065}, {0.05, 92.30769231}, {0.1, 47.36842105}, {0.5, 12},
	} {
		out := make([]float64, 4)
		if _, err := Gram(gs, nil, nil, nil, true, constOpt(tc.q), out, nil); err != nil {
			t.Fatal(err)
		}
		for k, got := range out {
			if !near(got, tc.want, 1e-9) {
				t.Errorf("q=%g entry %d = %.10g, GraphDot %.10g", tc.q, k, got, tc.want)
			}
		}
	}
}

// labeledPair is GraphDot's labeled example: node features (hybridization,
// charge), edge features (order, length).
func labeledPair(t testing.TB) []*graph.Graph {
	l1 := mustGraph(t, 3, []int64{0, 1, 0, 2}, []float64{1, 1},
		[]float64{2, 1, 3, -1, 1, 2}, 2, []float64{1, 0.5, 2, 1.0}, 2)
	l2 := mustGraph(t, 2, []int64{0, 1}, []float64{1},
		[]float64{1, 1.0, 1, -1.0}, 2, []float64{2, 1.0}, 2)
	return []*graph.Graph{l1, l2}
}

// labeledNodeKernel is normalized(KroneckerDelta(0.3) on hybridization ×
// (SquareExponential(1.0) on charge + Constant(0.01))).
func labeledNodeKernel() microkernel.Kernel {
	return &microkernel.Normalized{K: &microkernel.Product{Terms: []microkernel.Kernel{
		&microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1},
		&microkernel.Sum{Terms: []microkernel.Kernel{
			&microkernel.SquareExponential{LengthScale: 1.0, Col: 1, Width: 1},
			&microkernel.Constant{C: 0.01}}}}}}
}

// labeledEdgeKernel combines KroneckerDelta(0.3) on order and
// SquareExponential(0.05) on length by sum or product, normalized.
func labeledEdgeKernel(product bool) microkernel.Kernel {
	terms := []microkernel.Kernel{
		&microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1},
		&microkernel.SquareExponential{LengthScale: 0.05, Col: 1, Width: 1}}
	if product {
		return &microkernel.Normalized{K: &microkernel.Product{Terms: terms}}
	}
	return &microkernel.Normalized{K: &microkernel.Sum{Terms: terms}}
}

// TestGraphDotLabeled checks GraphDot's values for the labeled pair. The edge
// kernel that reproduces them is the normalized sum KroneckerDelta(0.3) +
// SquareExponential(0.05), as specified; the product composition gives
// different values (K(L1,L2) = 1.3701 at q = 0.05), which the test also pins so
// that a change of composition cannot pass unnoticed.
func TestGraphDotLabeled(t *testing.T) {
	gs := labeledPair(t)
	for _, tc := range []struct {
		q       float64
		product bool
		want    []float64
		rel     float64
	}{
		{0.05, false, []float64{9.376686029, 1.389743589, 1.389743589, 20.84356587}, 1e-8},
		{0.01, false, []float64{11.00202139, 1.396874008, 1.396874008, 100.8375575}, 1e-8},
		{0.05, true, []float64{9.367454548, 1.370145956, 1.370145956, 20.84356587}, 1e-8},
	} {
		opt := Options{NodeKernel: labeledNodeKernel(), EdgeKernel: labeledEdgeKernel(tc.product), Q: tc.q}
		out := make([]float64, 4)
		if _, err := Gram(gs, nil, nil, nil, true, opt, out, nil); err != nil {
			t.Fatal(err)
		}
		for k := range out {
			if !near(out[k], tc.want[k], tc.rel) {
				t.Errorf("q=%g product=%v entry %d: %.10g, want %.10g", tc.q, tc.product, k, out[k], tc.want[k])
			}
		}
		// The dense oracle agrees too.
		want := denseGram(t, gs, gs, nil, nil, opt)
		for k := range out {
			if !near(out[k], want[k], 1e-9) {
				t.Errorf("q=%g product=%v entry %d: %.15g, dense %.15g", tc.q, tc.product, k, out[k], want[k])
			}
		}
	}
}

func TestSymmetricMatchesFull(t *testing.T) {
	gs := testGraphs(t)
	ks := kernelSets()[1]
	opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.02, Accuracy: 1e-12}
	st := randomStarts(gs, 9)
	sym := make([]float64, len(gs)*len(gs))
	full := make([]float64, len(sym))
	if _, err := Gram(gs, nil, st, nil, true, opt, sym, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Gram(gs, gs, st, st, false, opt, full, nil); err != nil {
		t.Fatal(err)
	}
	for k := range sym {
		i, j := k/len(gs), k%len(gs)
		if sym[k] != sym[j*len(gs)+i] {
			t.Errorf("symmetric output not symmetric at (%d,%d)", i, j)
		}
		if !near(full[k], sym[k], 1e-10) {
			t.Errorf("(%d,%d): full %.15g, symmetric %.15g", i, j, full[k], sym[k])
		}
	}
}

// TestBlockOfUnion: K(X, Y) is the X-by-Y block of K(X ∪ Y), and Diag is its diagonal.
func TestBlockOfUnion(t *testing.T) {
	gs := testGraphs(t)
	X, Y := gs[:5], gs[5:]
	ks := kernelSets()[2]
	opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.1, Lmin: 1}
	all := make([]float64, len(gs)*len(gs))
	if _, err := Gram(gs, nil, nil, nil, true, opt, all, nil); err != nil {
		t.Fatal(err)
	}
	xy := make([]float64, len(X)*len(Y))
	if _, err := Gram(X, Y, nil, nil, false, opt, xy, nil); err != nil {
		t.Fatal(err)
	}
	for i := range X {
		for j := range Y {
			if got, want := xy[i*len(Y)+j], all[i*len(gs)+len(X)+j]; !near(got, want, 1e-10) {
				t.Errorf("K(X,Y)[%d][%d] = %.15g, union block %.15g", i, j, got, want)
			}
		}
	}
	d := make([]float64, len(gs))
	if _, err := Diag(gs, nil, opt, d); err != nil {
		t.Fatal(err)
	}
	for i := range gs {
		if !near(d[i], all[i*len(gs)+i], 1e-12) {
			t.Errorf("Diag[%d] = %.15g, Gram diagonal %.15g", i, d[i], all[i*len(gs)+i])
		}
	}
}

// permute relabels g's nodes by perm (new index of old node i is perm[i]) and
// reverses its edge list, carrying features along.
func permute(t testing.TB, g *graph.Graph, perm []int) *graph.Graph {
	nf := make([]float64, len(g.NodeFeat))
	for i := 0; i < g.N; i++ {
		copy(nf[perm[i]*g.NodeCols:], g.Node(i))
	}
	m := g.NumEdges()
	edges := make([]int64, 0, 2*m)
	w := make([]float64, 0, m)
	ef := make([]float64, 0, len(g.EdgeFeat))
	for e := m - 1; e >= 0; e-- {
		edges = append(edges, int64(perm[g.EdgeV[e]]), int64(perm[g.EdgeU[e]]))
		w = append(w, g.Weight[e])
		ef = append(ef, g.Edge(e)...)
	}
	return mustGraph(t, g.N, edges, w, nf, g.NodeCols, ef, g.EdgeCols)
}

func TestPermutationInvariance(t *testing.T) {
	gs := testGraphs(t)
	rng := rand.New(rand.NewPCG(11, 12))
	ps := make([]*graph.Graph, len(gs))
	for i, g := range gs {
		ps[i] = permute(t, g, rng.Perm(g.N))
	}
	for _, ks := range kernelSets() {
		opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.03, Accuracy: 1e-12}
		a := make([]float64, len(gs)*len(gs))
		b := make([]float64, len(a))
		if _, err := Gram(gs, gs, nil, nil, false, opt, a, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := Gram(gs, ps, nil, nil, false, opt, b, nil); err != nil {
			t.Fatal(err)
		}
		for k := range a {
			if !near(b[k], a[k], 1e-10) {
				t.Errorf("%s entry %d: permuted %.15g, original %.15g", ks.name, k, b[k], a[k])
			}
		}
	}
}

func TestUnconvergedReported(t *testing.T) {
	gs := testGraphs(t)
	ks := kernelSets()[1]
	opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.001, MaxIter: 2}
	out := make([]float64, len(gs)*len(gs))
	iters := make([]int32, len(out))
	bad, err := Gram(gs, nil, nil, nil, true, opt, out, iters)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) == 0 {
		t.Fatal("no unconverged pairs reported with MaxIter = 2")
	}
	for k, u := range bad {
		if u.I > u.J || u.Iterations != 2 || !(u.Residual > opt.Tol) {
			t.Errorf("bad report %+v", u)
		}
		if k > 0 && (bad[k-1].I > u.I || bad[k-1].I == u.I && bad[k-1].J >= u.J) {
			t.Errorf("reports not sorted: %v then %v", bad[k-1], u)
		}
		if iters[u.I*len(gs)+u.J] != 2 {
			t.Errorf("iters[%d][%d] = %d, want 2", u.I, u.J, iters[u.I*len(gs)+u.J])
		}
	}
	// The pairs of edgeless graphs converge at once and must not be reported.
	for _, u := range bad {
		if u.I == 0 && u.J == 0 {
			t.Errorf("one-node pair reported: %v", u)
		}
	}
	if !strings.Contains(bad[0].String(), "iterations") {
		t.Errorf("String() = %q", bad[0].String())
	}
}

func TestBadArguments(t *testing.T) {
	gs := testGraphs(t)[:3]
	unl := []*graph.Graph{unlabeled(t, 2, 0, 1)}
	nk := &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}
	ek := &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}
	good := Options{NodeKernel: nk, EdgeKernel: ek, Q: 0.1}
	with := func(f func(*Options)) Options { o := good; f(&o); return o }
	out := make([]float64, 9)
	for _, tc := range []struct {
		name   string
		X, Y   []*graph.Graph
		sX     [][]float64
		sym    bool
		opt    Options
		out    []float64
		errHas string
	}{
		{"q zero", gs, nil, nil, true, with(func(o *Options) { o.Q = 0 }), out, "stopping probability"},
		{"q one", gs, nil, nil, true, with(func(o *Options) { o.Q = 1 }), out, "stopping probability"},
		{"q NaN", gs, nil, nil, true, with(func(o *Options) { o.Q = math.NaN() }), out, "stopping probability"},
		{"lmin", gs, nil, nil, true, with(func(o *Options) { o.Lmin = 2 }), out, "lmin"},
		{"no node kernel", gs, nil, nil, true, with(func(o *Options) { o.NodeKernel = nil }), out, "node kernel"},
		{"no edge kernel", gs, nil, nil, true, with(func(o *Options) { o.EdgeKernel = nil }), out, "edge kernel"},
		{"negative tol", gs, nil, nil, true, with(func(o *Options) { o.Tol = -1 }), out, "tolerance"},
		{"negative maxiter", gs, nil, nil, true, with(func(o *Options) { o.MaxIter = -1 }), out, "max_iter"},
		{"node column", unl, nil, nil, true, good, make([]float64, 1), "node kernel reads node feature column 0"},
		{"edge column", gs, nil, nil, true, with(func(o *Options) {
			o.EdgeKernel = &microkernel.KroneckerDelta{H: 0.5, Col: 2, Width: 1}
		}), out, "edge kernel reads edge feature column 2"},
		{"out size", gs, nil, nil, true, good, make([]float64, 8), "out has 8"},
		{"symmetric different Y", gs, gs[:2], nil, true, good, out, "same list"},
		{"start length", gs, nil, [][]float64{{1}, {1}, {1, 2}}, true, good, out, "startX[2]"},
		{"start count", gs, nil, [][]float64{{1}}, true, good, out, "startX has 1"},
		{"nil graph", []*graph.Graph{nil}, nil, nil, true, good, make([]float64, 1), "nil"},
		{"negative node kernel", gs, nil, nil, true, with(func(o *Options) {
			o.NodeKernel = &microkernel.Constant{C: -1}
		}), out, "non-negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Gram(tc.X, tc.Y, tc.sX, nil, tc.sym, tc.opt, tc.out, nil)
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %v, want one containing %q", err, tc.errHas)
			}
		})
	}
	if _, err := Diag(gs, nil, good, make([]float64, 2)); err == nil {
		t.Error("Diag accepted a short out")
	}
	if _, err := Nodal(gs, nil, nil, nil, true, good, make([]float64, 3)); err == nil {
		t.Error("Nodal accepted a short out")
	}
}

// TestEmptyGraph: a graph without nodes has kernel 0 with everything.
func TestEmptyGraph(t *testing.T) {
	gs := append([]*graph.Graph{mustGraph(t, 0, nil, nil, nil, 2, nil, 2)}, testGraphs(t)[3:5]...)
	ks := kernelSets()[1]
	opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.1}
	out := make([]float64, 9)
	if _, err := Gram(gs, nil, nil, nil, true, opt, out, nil); err != nil {
		t.Fatal(err)
	}
	for k, x := range out {
		if empty := k < 3 || k%3 == 0; empty != (x == 0) {
			t.Errorf("entry %d = %v", k, x)
		}
	}
}

// TestPanicBecomesError: a graph corrupted after construction (more feature
// columns claimed than stored) makes the kernel read out of range; the panic
// comes back as an error rather than crashing the caller.
func TestPanicBecomesError(t *testing.T) {
	g := mustGraph(t, 2, []int64{0, 1}, []float64{1}, []float64{0, 1}, 1, []float64{0}, 1)
	g.NodeCols = 2
	opt := Options{NodeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 1, Width: 1}, EdgeKernel: &microkernel.Constant{C: 1}, Q: 0.1}
	_, err := Gram([]*graph.Graph{g}, nil, nil, nil, true, opt, make([]float64, 1), nil)
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Errorf("error %v, want a recovered panic", err)
	}
}

// TestPackThreshold: the Gram matrix with the default packing threshold (small
// graphs unpacked, in the caller's order) equals that with every graph packed
// and reordered, to rounding.
func TestPackThreshold(t *testing.T) {
	gs := testGraphs(t)
	for _, ks := range kernelSets() {
		opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.05, NJobs: 2, Tol: 1e-13}
		plain := make([]float64, len(gs)*len(gs))
		if _, err := Gram(gs, nil, nil, nil, true, opt, plain, nil); err != nil {
			t.Fatal(err)
		}
		opt.PackMinEdges = 1
		packed := make([]float64, len(plain))
		if _, err := Gram(gs, nil, nil, nil, true, opt, packed, nil); err != nil {
			t.Fatal(err)
		}
		for k := range plain {
			if !near(plain[k], packed[k], 1e-11) {
				t.Errorf("%s entry %d: unpacked %.15g, packed %.15g", ks.name, k, plain[k], packed[k])
			}
		}
	}
}
