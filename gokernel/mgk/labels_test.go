package mgk

import (
	"math"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// TestLabelTablesExact checks that the call-wide base-kernel tables change no
// bit of K or of its gradient: every kernel set of the comparisons, symmetric
// and rectangular, Gram and GramGrad, with the tables (default budget, and an
// unlimited one so that the tables are built even where they do not pay)
// against per-pair evaluation (budget 0).
func TestLabelTablesExact(t *testing.T) {
	for _, gs := range [][]*graph.Graph{testGraphs(t), discreteGraphs(t)} {
		labelTablesExact(t, gs)
	}
}

func labelTablesExact(t *testing.T, gs []*graph.Graph) {
	X, Y := gs[:9], gs[4:]
	for _, ks := range kernelSets() {
		opt := Options{NodeKernel: ks.nk, EdgeKernel: ks.ek, Q: 0.2}
		for _, sym := range []bool{true, false} {
			y, m := Y, len(Y)
			if sym {
				y, m = nil, len(X)
			}
			type result struct{ k, gk, grad []float64 }
			compute := func(budget int) result {
				opt := opt
				opt.labelTableBudget = budget
				r := result{make([]float64, len(X)*m), make([]float64, len(X)*m), make([]float64, len(X)*m*NumParams(opt))}
				if _, err := Gram(X, y, nil, nil, sym, opt, r.k, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := GramGrad(X, y, nil, nil, sym, opt, r.gk, r.grad, nil); err != nil {
					t.Fatal(err)
				}
				return r
			}
			want := compute(-1)
			for _, budget := range []int{0, math.MaxInt} {
				got := compute(budget)
				for name, pair := range map[string][2][]float64{"K": {got.k, want.k}, "GramGrad K": {got.gk, want.gk}, "grad": {got.grad, want.grad}} {
					for i := range pair[0] {
						if math.Float64bits(pair[0][i]) != math.Float64bits(pair[1][i]) {
							t.Fatalf("%s sym=%v budget %d: %s[%d] = %v with tables, %v without", ks.name, sym, budget, name, i, pair[0][i], pair[1][i])
						}
					}
				}
			}
		}
	}
}

// TestLabelTablesBuilt checks when the tables are built: for discrete labels
// repeated across graphs, with gradients as asked; not when they cost more
// evaluations than the pairs (every row distinct) or exceed the budget; and a
// node kernel with a negative value builds none, so that the pair reports it.
func TestLabelTablesBuilt(t *testing.T) {
	gs := discreteGraphs(t)
	sides := func(opt *Options) sideSet {
		xs, _, o, err := setup(gs, nil, nil, nil, true, *opt)
		if err != nil {
			t.Fatal(err)
		}
		*opt = o
		return xs
	}
	ks := kernelSets()
	delta := Options{NodeKernel: ks[2].nk, EdgeKernel: ks[2].ek, Q: 0.2}
	xs := sides(&delta)
	pairs := len(xs.sides) * (len(xs.sides) + 1) / 2
	tabs := buildLabelTables(xs, xs, true, pairs, &delta, true)
	if tabs.node == nil || tabs.edge == nil || tabs.node.grad == nil || len(tabs.node.val) != 3*3 || len(tabs.edge.val) != 2*2 {
		t.Fatalf("discrete labels: tables %+v %+v, want 3×3 node and 2×2 edge tables with gradients", tabs.node, tabs.edge)
	}
	for _, s := range xs.sides {
		if len(s.ngl) != len(s.nrep) || len(s.egl) != len(s.erep) {
			t.Fatalf("side without call-wide label ids: %v %v", s.ngl, s.egl)
		}
	}
	if tabs := buildLabelTables(xs, xs, true, pairs, &delta, false); tabs.node.grad != nil {
		t.Fatal("a value table carries gradients")
	}
	labeled := Options{NodeKernel: ks[1].nk, EdgeKernel: ks[1].ek, Q: 0.2}
	gs = testGraphs(t)
	xl := sides(&labeled)
	if tabs := buildLabelTables(xl, xl, true, 1, &labeled, false); tabs.node != nil || tabs.edge != nil {
		t.Fatal("continuous features: tables built for a single pair")
	}
	small := delta
	small.labelTableBudget = 8
	if tabs := buildLabelTables(xs, xs, true, pairs, &small, false); tabs.node != nil {
		t.Fatal("table built beyond the budget")
	}
	gs = discreteGraphs(t)
	neg := Options{NodeKernel: &microkernel.Constant{C: -1}, EdgeKernel: ks[2].ek, Q: 0.2, labelTableBudget: math.MaxInt}
	xn := sides(&neg)
	if tabs := buildLabelTables(xn, xn, true, pairs, &neg, false); tabs.node != nil {
		t.Fatal("table built for a negative node kernel")
	}
	out := make([]float64, len(gs)*len(gs))
	if _, err := Gram(gs, nil, nil, nil, true, neg, out, nil); err == nil {
		t.Fatal("negative node kernel accepted")
	}
}

// discreteGraphs is testGraphs with the real-valued feature columns zeroed:
// labels then repeat across graphs, as atoms and bonds do.
func discreteGraphs(t testing.TB) []*graph.Graph {
	var out []*graph.Graph
	for _, g := range testGraphs(t) {
		nf, ef := append([]float64(nil), g.NodeFeat...), append([]float64(nil), g.EdgeFeat...)
		for i := 1; i < len(nf); i += 2 {
			nf[i] = 0
		}
		for i := 1; i < len(ef); i += 2 {
			ef[i] = 0
		}
		h, err := g.WithFeatures(nf, 2, ef, 2)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}
