package spkernel

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

// invarianceGraphs returns count random graphs (randomGraph) with node column 0
// drawn from labels distinct values instead of three when labels > 0. Many labels
// make class numbers assigned in order of first appearance differ from call to
// call.
func invarianceGraphs(seed uint64, count, maxN, labels int) []*graph.Graph {
	gs := randomGraphs(seed, count, maxN)
	if labels == 0 {
		return gs
	}
	r := rand.New(rand.NewPCG(seed, 13))
	for i, g := range gs {
		nf := slices.Clone(g.NodeFeat)
		for v := 0; v < g.N; v++ {
			nf[v*g.NodeCols] = float64(r.IntN(labels))
		}
		gs[i] = graphtest.WithNodeFeat(g, nf)
	}
	return gs
}

// TestValueIndependentOfCall checks that K(G, G') is the same float64, bit for
// bit, whatever else the call holds: which side each graph is on, symmetric or
// cross call, the other graphs, their order, duplicates (the same graph twice,
// or an equal copy), NJobs, and Diag. Every entry of each call is compared with
// the matching entry of the symmetric Gram matrix of all graphs A ∪ B.
func TestValueIndependentOfCall(t *testing.T) {
	conv := microkernel.MustParse(`{"kind":"convolution","col":0,"width":2,"values":[0.5,1.7],"kernel":{"kind":"square_exponential","length_scale":1,"col":0}}`)
	dot := microkernel.MustParse(`{"kind":"dot_product","sigma_0":0.5,"col":1}`)
	label03 := microkernel.MustParse(`{"kind":"product","terms":[{"kind":"constant","c":0.3},{"kind":"kronecker_delta","h":0,"col":0}]}`)
	for _, tc := range []struct {
		name   string
		labels int // distinct values of node column 0; 0 keeps randomGraph's three
		// wide is the number of sparse 400-node graphs added to A: with them a call
		// holds more distinct node rows than a node-kernel table takes (maxTable),
		// without them fewer, so tabulated and evaluated node kernels meet.
		wide int
		opt  Options
		want Method
	}{
		{"fcsp/float/weighted", 0, 0, Options{NodeKernel: nodeKernels["float"], LengthKernel: lengthKernels["gauss"], WeightCol: 1}, MethodFCSP},
		{"fcsp/float/no table", 0, 3, Options{NodeKernel: nodeKernels["float"], LengthKernel: lengthKernels["gauss"], WeightCol: 1}, MethodFCSP},
		{"fcsp/float/split", 0, 0, Options{NodeKernel: nodeKernels["float"], LengthKernel: lengthKernels["gauss"], WeightCol: 1, SplitWork: 40}, MethodFCSP},
		{"fcsp/both/hops", 40, 0, Options{NodeKernel: nodeKernels["both"], LengthKernel: lengthKernels["brownian"], WeightCol: HopCounts}, MethodFCSP},
		{"fcsp/dot/weighted", 0, 0, Options{NodeKernel: dot, LengthKernel: lengthKernels["gauss"], WeightCol: 0}, MethodFCSP},
		{"fcsp/convolution", 0, 0, Options{NodeKernel: conv, LengthKernel: lengthKernels["brownian"], WeightCol: 1}, MethodFCSP},
		{"length-join/float/weighted", 0, 0, Options{NodeKernel: nodeKernels["float"], WeightCol: 0}, MethodLengthJoin},
		{"length-join/float/split", 0, 0, Options{NodeKernel: nodeKernels["float"], WeightCol: HopCounts, SplitWork: 40}, MethodLengthJoin},
		{"label-join/many/weighted", 50, 0, Options{NodeKernel: nodeKernels["label"], LengthKernel: lengthKernels["gauss"], WeightCol: 1}, MethodLabelJoin},
		{"label-join/many/hops", 12, 0, Options{NodeKernel: nodeKernels["normlabel"], LengthKernel: lengthKernels["gauss"], WeightCol: HopCounts}, MethodLabelJoin},
		{"feature-map/many/hops", 50, 0, Options{NodeKernel: nodeKernels["label"], WeightCol: HopCounts}, MethodFeatureMap},
		{"feature-map/many/weighted", 50, 0, Options{NodeKernel: label03, LengthKernel: lengthKernels["exact2"], WeightCol: 0}, MethodFeatureMap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			A := invarianceGraphs(21, 16, 14, tc.labels)
			B := invarianceGraphs(22, 11, 14, tc.labels)
			empty, _ := graph.New(0, nil, nil, nil, 2, nil, 2)
			A = append(A, empty)
			r := rand.New(rand.NewPCG(23, 23))
			for range tc.wide {
				A = append(A, randomGraph(r, 400, 0.5/400))
			}
			U := append(slices.Clone(A), B...)
			na, nb, nu := len(A), len(B), len(U)
			opt := tc.opt
			opt.NJobs = 2
			if p, err := newPlan(U, nu, opt); err != nil {
				t.Fatal(err)
			} else if p.method != tc.want {
				t.Fatalf("method %v, want %v", p.method, tc.want)
			}
			ref := make([]float64, nu*nu)
			if err := Gram(U, nil, true, opt, ref); err != nil {
				t.Fatal(err)
			}
			// check runs Gram on xs and ys, the graphs of U at xi (rows) and yi
			// (columns), symmetric when ys is nil, and compares every entry with
			// ref bit for bit.
			check := func(name string, o Options, xs []*graph.Graph, xi []int, ys []*graph.Graph, yi []int) {
				t.Helper()
				sym := ys == nil
				if sym {
					ys, yi = xs, xi
				}
				out := make([]float64, len(xs)*len(ys))
				if err := Gram(xs, ys, sym, o, out); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				diff, first := 0, ""
				for a, i := range xi {
					for b, j := range yi {
						got, want := out[a*len(ys)+b], ref[i*nu+j]
						if math.Float64bits(got) != math.Float64bits(want) {
							if diff == 0 {
								first = fmt.Sprintf("K[%d,%d] = %v, the symmetric call over A ∪ B has K[%d,%d] = %v", a, b, got, i, j, want)
							}
							diff++
						}
					}
				}
				if diff > 0 {
					t.Errorf("%s: %d of %d entries differ; first %s", name, diff, len(out), first)
				}
			}
			seq := func(a, b int) []int {
				s := make([]int, b-a)
				for k := range s {
					s[k] = a + k
				}
				return s
			}
			ai, bi := seq(0, na), seq(na, nu)

			check("cross K(B, A)", opt, B, bi, A, ai)
			check("cross K(A, B)", opt, A, ai, B, bi)
			perm := rand.New(rand.NewPCG(5, 5)).Perm(nu)
			check("permuted", opt, graphtest.Pick(U, perm), perm, nil, nil)
			check("permuted cross", opt, graphtest.Pick(U, perm[:nu/2]), perm[:nu/2], graphtest.Pick(U, perm[nu/2:]), perm[nu/2:])
			var sub []int
			for k := 0; k < nu; k += 3 {
				sub = append(sub, k)
			}
			if tc.wide > 0 {
				pu, _ := newPlan(U, nu, opt)
				ps, _ := newPlan(graphtest.Pick(U, sub), len(sub), opt)
				if pu.nodeTable != nil || ps.nodeTable == nil {
					t.Fatalf("node-kernel tables: %v for all graphs, %v for the subset; want none, one", pu.nodeTable != nil, ps.nodeTable != nil)
				}
			}
			check("subset", opt, graphtest.Pick(U, sub), sub, nil, nil)
			check("subset cross", opt, graphtest.Pick(U, sub[:3]), sub[:3], B, bi)
			// Duplicates: the same *Graph twice, and equal copies of others.
			dup := []int{3, 3, na, 0, na + 1, 3, nu - 1, 1, 0}
			dg := graphtest.Pick(U, dup)
			dg[4], dg[8] = graphtest.WithNodeFeat(U[na+1], U[na+1].NodeFeat), graphtest.WithNodeFeat(U[0], U[0].NodeFeat)
			check("duplicates", opt, dg, dup, nil, nil)
			check("duplicates cross", opt, dg, dup, graphtest.Pick(U, perm), perm)
			for _, nj := range []int{1, 3} {
				o := opt
				o.NJobs = nj
				check(fmt.Sprintf("NJobs=%d", nj), o, U, seq(0, nu), nil, nil)
				check(fmt.Sprintf("NJobs=%d cross K(B, A)", nj), o, B, bi, A, ai)
			}
			diag := make([]float64, nb)
			if err := Diag(B, opt, diag); err != nil {
				t.Fatal(err)
			}
			for j, v := range diag {
				if want := ref[(na+j)*nu+na+j]; math.Float64bits(v) != math.Float64bits(want) {
					t.Errorf("Diag(B)[%d] = %v, the symmetric call has %v", j, v, want)
				}
			}
		})
	}
}
