package mgk

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"gonum.org/v1/gonum/mat"
)

// This file holds the test oracle: the product-graph system built explicitly
// from the definition, from the graphs' edge lists (not their CSR form), and
// solved by LU. It shares no code with the solver.

// productPairs calls f(i, j, i', j', w) for every ordered pair of product nodes
// joined through edge e of G and edge f of H, reading both directions of an edge
// and a self-loop once, with w = w_e·w'_f·κe(e, f).
func productPairs(g, h *graph.Graph, ek microkernel.Kernel, f func(i, j, ip, jp int, w float64)) {
	for e := 0; e < g.NumEdges(); e++ {
		u, v := int(g.EdgeU[e]), int(g.EdgeV[e])
		ends := [][2]int{{u, v}, {v, u}}
		if u == v {
			ends = ends[:1]
		}
		for fe := 0; fe < h.NumEdges(); fe++ {
			up, vp := int(h.EdgeU[fe]), int(h.EdgeV[fe])
			endsH := [][2]int{{up, vp}, {vp, up}}
			if up == vp {
				endsH = endsH[:1]
			}
			w := g.Weight[e] * h.Weight[fe] * ek.Eval(g.Edge(e), h.Edge(fe))
			for _, a := range ends {
				for _, b := range endsH {
					f(a[0], a[1], b[0], b[1], w)
				}
			}
		}
	}
}

// denseDegrees is d_i = Σ w over the edges at i, a self-loop once, 1 when 0.
func denseDegrees(g *graph.Graph) []float64 {
	d := make([]float64, g.N)
	for e := range g.Weight {
		u, v := g.EdgeU[e], g.EdgeV[e]
		d[u] += g.Weight[e]
		if u != v {
			d[v] += g.Weight[e]
		}
	}
	for i := range d {
		if d[i] == 0 {
			d[i] = 1
		}
	}
	return d
}

// denseSolve returns the nodal values p_i p'_i' x_(i,i') (x − V1 with Lmin = 1)
// and their sum K, from the system multiplied through by V so that κv = 0 is
// allowed: (D − V W) x = V D 1. With Lmin = 1 it solves for x − V·1, whose
// right-hand side is V W V 1, so the reference suffers no cancellation either.
func denseSolve(t testing.TB, g, h *graph.Graph, pg, ph []float64, opt Options) (float64, []float64) {
	n := g.N * h.N
	if n == 0 {
		return 0, nil
	}
	dg, dh := denseDegrees(g), denseDegrees(h)
	v := make([]float64, n)
	D := make([]float64, n)
	for i := 0; i < g.N; i++ {
		for ip := 0; ip < h.N; ip++ {
			k := i*h.N + ip
			v[k] = opt.NodeKernel.Eval(g.Node(i), h.Node(ip))
			D[k] = dg[i] * dh[ip] / ((1 - opt.Q) * (1 - opt.Q))
		}
	}
	W := mat.NewDense(n, n, nil)
	productPairs(g, h, opt.EdgeKernel, func(i, j, ip, jp int, w float64) {
		r, c := i*h.N+ip, j*h.N+jp
		W.Set(r, c, W.At(r, c)+w)
	})
	A := mat.NewDense(n, n, nil)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			a := -v[r] * W.At(r, c)
			if r == c {
				a += D[r]
			}
			A.Set(r, c, a)
		}
	}
	rhs := mat.NewVecDense(n, nil)
	if opt.Lmin == 1 {
		var wv mat.VecDense
		wv.MulVec(W, mat.NewVecDense(n, append([]float64(nil), v...)))
		for k := 0; k < n; k++ {
			rhs.SetVec(k, v[k]*wv.AtVec(k))
		}
	} else {
		for k := 0; k < n; k++ {
			rhs.SetVec(k, v[k]*D[k])
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(A, rhs); err != nil {
		t.Fatalf("dense solve: %v", err)
	}
	nodal := make([]float64, n)
	K := 0.0
	for i := 0; i < g.N; i++ {
		for ip := 0; ip < h.N; ip++ {
			k := i*h.N + ip
			p := 1.0
			if pg != nil {
				p *= pg[i]
			}
			if ph != nil {
				p *= ph[ip]
			}
			nodal[k] = p * x.AtVec(k)
			K += nodal[k]
		}
	}
	return K, nodal
}

// denseGram is the Gram matrix by denseSolve.
func denseGram(t testing.TB, X, Y []*graph.Graph, sX, sY [][]float64, opt Options) []float64 {
	out := make([]float64, len(X)*len(Y))
	for i := range X {
		for j := range Y {
			out[i*len(Y)+j], _ = denseSolve(t, X[i], Y[j], startOf(sX, i), startOf(sY, j), opt)
		}
	}
	return out
}

func startOf(s [][]float64, i int) []float64 {
	if s == nil {
		return nil
	}
	return s[i]
}

// mustGraph builds a graph or fails the test.
func mustGraph(t testing.TB, n int, edges []int64, w, nf []float64, nc int, ef []float64, ec int) *graph.Graph {
	t.Helper()
	g, err := graph.New(n, edges, w, nf, nc, ef, ec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// randomGraph draws a graph with n nodes, two node feature columns (a label in
// 0..2 and a real attribute) and two edge feature columns (a label in 0..1 and
// a real attribute), weights in [0.25, 1.5), some self-loops, and leaves some
// nodes isolated when sparse.
func randomGraph(t testing.TB, rng *rand.Rand, n int, density float64) *graph.Graph {
	var edges []int64
	var w, ef []float64
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			p := density
			if i == j {
				p = 0.15
			}
			if rng.Float64() < p {
				edges = append(edges, int64(i), int64(j))
				w = append(w, 0.25+1.25*rng.Float64())
				ef = append(ef, float64(rng.IntN(2)), rng.NormFloat64())
			}
		}
	}
	nf := make([]float64, 0, 2*n)
	for i := 0; i < n; i++ {
		nf = append(nf, float64(rng.IntN(3)), rng.NormFloat64())
	}
	return mustGraph(t, n, edges, w, nf, 2, ef, 2)
}

// testGraphs is a fixed mix of random and special graphs: one-node graphs with
// and without a self-loop, an edgeless graph, a disconnected graph, a path, and
// random graphs of several densities.
func testGraphs(t testing.TB) []*graph.Graph {
	rng := rand.New(rand.NewPCG(1, 2))
	gs := []*graph.Graph{
		mustGraph(t, 1, nil, nil, []float64{1, 0.3}, 2, nil, 2),
		mustGraph(t, 1, []int64{0, 0}, []float64{0.7}, []float64{0, -0.2}, 2, []float64{1, 0.5}, 2),
		mustGraph(t, 3, nil, nil, []float64{0, 0, 1, 1, 2, 2}, 2, nil, 2),
		// Two components (0-1, 2-3-4 with a loop at 4) and an isolated node 5.
		mustGraph(t, 6, []int64{0, 1, 2, 3, 3, 4, 4, 4}, []float64{1, 0.5, 2, 0.3},
			[]float64{0, 0, 1, 1, 0, 0.5, 2, -1, 1, 0, 0, 0}, 2,
			[]float64{0, 0, 1, 0.1, 0, -0.2, 1, 1}, 2),
		mustGraph(t, 4, []int64{0, 1, 1, 2, 2, 3}, []float64{1, 1, 1},
			[]float64{0, 0, 0, 0, 0, 0, 0, 0}, 2, []float64{0, 0, 0, 0, 0, 0}, 2),
	}
	for _, nd := range []struct {
		n int
		d float64
	}{{2, 0.9}, {3, 0.6}, {5, 0.3}, {5, 0.7}, {6, 0.15}, {7, 0.4}, {8, 0.25}, {19, 0.15}} {
		gs = append(gs, randomGraph(t, rng, nd.n, nd.d))
	}
	return gs
}

// kernelSets are the node/edge kernel pairs the comparisons run over.
func kernelSets() []struct {
	name   string
	nk, ek microkernel.Kernel
} {
	return []struct {
		name   string
		nk, ek microkernel.Kernel
	}{
		{"constant", &microkernel.Constant{C: 1}, &microkernel.Constant{C: 1}},
		{"labeled", &microkernel.Product{Terms: []microkernel.Kernel{
			&microkernel.KroneckerDelta{H: 0.4, Col: 0, Width: 1},
			&microkernel.SquareExponential{LengthScale: 1.2, Col: 1, Width: 1}}},
			&microkernel.Normalized{K: &microkernel.Sum{Terms: []microkernel.Kernel{
				&microkernel.KroneckerDelta{H: 0.2, Col: 0, Width: 1},
				&microkernel.BrownianBridge{C: 2, Col: 1}}}}},
		// κv = 0 between different labels: V is singular.
		{"delta0", &microkernel.KroneckerDelta{H: 0, Col: 0, Width: 1},
			&microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}},
	}
}

// near reports whether got is within rel of want, relative to want.
func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}
