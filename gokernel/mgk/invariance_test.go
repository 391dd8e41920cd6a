package mgk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graph/graphtest"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// invarianceGraphs are 40 molecule-like graphs with many distinct labels (40
// node labels, 8 edge labels, a continuous column on each), so that label
// numbering by first appearance differs between calls; two rings with equal
// labels (non-trivial quotients); and a content copy of graph 3 (a distinct
// *graph.Graph with the same content).
func invarianceGraphs(t testing.TB) []*graph.Graph {
	rng := rand.New(rand.NewPCG(32, 1))
	var gs []*graph.Graph
	for len(gs) < 37 {
		n := 3 + rng.IntN(20)
		var edges []int64
		var w, ef []float64
		for i := 1; i < n; i++ { // a tree, plus a few ring closures
			edges = append(edges, int64(rng.IntN(i)), int64(i))
		}
		for range rng.IntN(3) {
			if a, b := rng.IntN(n), rng.IntN(n); a < b {
				edges = append(edges, int64(a), int64(b))
			}
		}
		for range len(edges) / 2 {
			w = append(w, 0.5+rng.Float64())
			ef = append(ef, float64(rng.IntN(8)), rng.NormFloat64())
		}
		nf := make([]float64, 0, 2*n)
		for range n {
			nf = append(nf, float64(rng.IntN(40)), rng.NormFloat64())
		}
		g, err := graph.New(n, edges, w, nf, 2, ef, 2)
		if err != nil {
			continue // a repeated ring closure
		}
		gs = append(gs, g)
	}
	ring := func(n int, label float64) *graph.Graph {
		var edges []int64
		for i := range n {
			edges = append(edges, int64(i), int64((i+1)%n))
		}
		nf := make([]float64, 2*n)
		for i := range n {
			nf[2*i] = label
		}
		return mustGraph(t, n, edges, ones(n), nf, 2, make([]float64, 2*n), 2)
	}
	return append(gs, ring(6, 1), ring(9, 2), graphtest.WithNodeFeat(gs[3], nil))
}

// invarianceCall is a call's composition: X and Y index the reference list
// (Y nil: symmetric on X), with the call's NJobs.
type invarianceCall struct {
	name  string
	x, y  []int
	nJobs int
}

func invarianceCalls(n int) []invarianceCall {
	rng := rand.New(rand.NewPCG(32, 2))
	rev := graphtest.Seq(0, n)
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return []invarianceCall{
		{"subset", graphtest.Seq(5, 17), nil, 2},
		{"cross", graphtest.Seq(0, 12), graphtest.Seq(28, n), 2},
		{"cross swapped", graphtest.Seq(28, n), graphtest.Seq(0, 12), 2},
		{"permuted", rng.Perm(n), nil, 2},
		{"reversed cross", rev[:20], rev[15:], 2},
		{"duplicates", []int{3, 7, 3, n - 1, 7, 37}, nil, 2},
		{"duplicates cross", []int{n - 1, 3, 38}, []int{3, 7, 3, 38, 37}, 2},
		{"same list, not symmetric", graphtest.Seq(0, 15), graphtest.Seq(0, 15), 2},
		{"column", graphtest.Seq(0, n), []int{9}, 2},
		{"one job", graphtest.Seq(0, n), nil, 1},
	}
}

// TestValueIndependentOfCall: K(G, G'), its gradient and the node-pair
// similarities depend on G, G' and the options alone, bit for bit: not on
// the other graphs of the call, their order, duplicates, the side each graph
// is on or NJobs (issue #32). Each call's entries are compared with == to the
// entries of one symmetric call on all the graphs.
func TestValueIndependentOfCall(t *testing.T) {
	gs := invarianceGraphs(t)
	n := len(gs)
	starts := randomStarts(gs, 32)
	sets := []struct {
		name   string
		nk, ek microkernel.Kernel
		starts [][]float64
	}{
		{"labels", &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}, &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}, nil},
		{"labels+continuous, starts", &microkernel.Product{Terms: []microkernel.Kernel{
			&microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1}, &microkernel.SquareExponential{LengthScale: 1.5, Col: 1, Width: 1}}},
			&microkernel.Normalized{K: &microkernel.Sum{Terms: []microkernel.Kernel{
				&microkernel.KroneckerDelta{H: 0.2, Col: 0, Width: 1}, &microkernel.BrownianBridge{C: 2, Col: 1}}}}, starts},
		{"continuous", &microkernel.SquareExponential{LengthScale: 0.8, Col: 1, Width: 1},
			&microkernel.SquareExponential{LengthScale: 1.1, Col: 1, Width: 1}, nil},
	}
	pick := func(idx []int, src [][]float64) [][]float64 {
		if src == nil {
			return nil
		}
		out := make([][]float64, len(idx))
		for k, i := range idx {
			out[k] = src[i]
		}
		return out
	}
	for _, ks := range sets {
		for _, lmin := range []int{0, 1} {
			opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.05, Lmin: lmin, NJobs: 2}
			np := NumParams(opt)
			refK, refG := make([]float64, n*n), make([]float64, n*n*np)
			if _, err := GramGrad(gs, nil, ks.starts, nil, true, opt, refK, refG, nil); err != nil {
				t.Fatal(err)
			}
			ref := make([]float64, n*n)
			if _, err := Gram(gs, nil, ks.starts, nil, true, opt, ref, nil); err != nil {
				t.Fatal(err)
			}
			for _, c := range invarianceCalls(n) {
				t.Run(fmt.Sprintf("%s/lmin=%d/%s", ks.name, lmin, c.name), func(t *testing.T) {
					o := opt
					o.NJobs = c.nJobs
					X, sx := graphtest.Pick(gs, c.x), pick(c.x, ks.starts)
					yi, Y, sy, sym := c.y, graphtest.Pick(gs, c.y), pick(c.y, ks.starts), c.y == nil
					if sym {
						yi, Y, sy = c.x, nil, nil
					}
					m := len(yi)
					K, KG, G := make([]float64, len(X)*m), make([]float64, len(X)*m), make([]float64, len(X)*m*np)
					if _, err := Gram(X, Y, sx, sy, sym, o, K, nil); err != nil {
						t.Fatal(err)
					}
					if _, err := GramGrad(X, Y, sx, sy, sym, o, KG, G, nil); err != nil {
						t.Fatal(err)
					}
					diffK, diffG := 0, 0
					for a, i := range c.x {
						for b, j := range yi {
							if K[a*m+b] != ref[i*n+j] {
								diffK++
								if diffK == 1 {
									t.Errorf("K(X[%d], Y[%d]) = %.17g, the reference's (%d, %d) %.17g", a, b, K[a*m+b], i, j, ref[i*n+j])
								}
							}
							if KG[a*m+b] != refK[i*n+j] {
								diffG++
							}
							for p := range np {
								if g, w := G[(a*m+b)*np+p], refG[(i*n+j)*np+p]; g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
									diffG++
								}
							}
						}
					}
					if diffK+diffG > 0 {
						t.Errorf("%d K entries and %d GramGrad entries (K or ∂K) of %d differ from the reference's", diffK, diffG, len(K))
					}
				})
			}
			// Diag and DiagGrad are the reference's diagonals.
			d, dk, dg := make([]float64, n), make([]float64, n), make([]float64, n*np)
			if _, err := Diag(gs, ks.starts, opt, d); err != nil {
				t.Fatal(err)
			}
			if _, err := DiagGrad(gs, ks.starts, opt, dk, dg); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if d[i] != ref[i*n+i] || dk[i] != refK[i*n+i] {
					t.Errorf("%s/lmin=%d: Diag[%d] = %.17g and DiagGrad's %.17g, the Gram's %.17g", ks.name, lmin, i, d[i], dk[i], ref[i*n+i])
				}
				if !slices.Equal(dg[i*np:(i+1)*np], refG[(i*n+i)*np:(i*n+i+1)*np]) {
					t.Errorf("%s/lmin=%d: DiagGrad's gradient of %d differs from GramGrad's", ks.name, lmin, i)
				}
			}
		}
	}
}

// TestNodalIndependentOfCall: the node-pair similarities of a pair are the
// same bits in a symmetric call and in a cross call with the sides swapped.
func TestNodalIndependentOfCall(t *testing.T) {
	gs := invarianceGraphs(t)[:12]
	opt := Options{NodeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}, Q: 0.05, NJobs: 2}
	off, total := make([]int, len(gs)+1), 0
	for i, g := range gs {
		off[i], total = total, total+g.N
	}
	off[len(gs)] = total
	ref := make([]float64, total*total)
	if _, err := Nodal(gs, nil, nil, nil, true, opt, ref); err != nil {
		t.Fatal(err)
	}
	// Y = gs[0:6] × X = gs[6:12]: every block has its sides swapped.
	X, Y := gs[6:], gs[:6]
	nx, ny := total-off[6], off[6]
	out := make([]float64, nx*ny)
	if _, err := Nodal(X, Y, nil, nil, false, opt, out); err != nil {
		t.Fatal(err)
	}
	diff := 0
	for r := range nx {
		for c := range ny {
			if out[r*ny+c] != ref[(off[6]+r)*total+c] {
				diff++
			}
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d node-pair values differ from the symmetric call's", diff, nx*ny)
	}
}
