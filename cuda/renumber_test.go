package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
)

// renumberGraphs are molecule-sized graphs and two of 80 and 120 nodes, with
// non-uniform start probabilities on every other graph (nil: uniform).
func renumberGraphs() ([]*graph.Graph, [][]float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	var gs []*graph.Graph
	for _, n := range []int{12, 25, 80, 17, 120} {
		gs = append(gs, testgraphs.Random(rng, n, 2*n, n%2 == 0))
	}
	return gs, testgraphs.Starts(gs, 7)
}

func isPerm(p []int) bool {
	q := slices.Clone(p)
	slices.Sort(q)
	for i, v := range q {
		if v != i {
			return false
		}
	}
	return true
}

// TestRenumberChoosesAndPermutes: graphs of ReorderMinNodes nodes or more
// are renumbered, smaller ones only with ReorderMinPartners partners; a
// renumbered graph is its permutation, its starts follow, and the caller's
// lists are not changed.
func TestRenumberChoosesAndPermutes(t *testing.T) {
	gs, starts := renumberGraphs()
	given := slices.Clone(gs)
	for _, tc := range []struct {
		partners int
		want     []bool // renumbered (when reorder.Best finds a better order)
	}{
		{1, []bool{false, false, true, false, true}},
		{ReorderMinPartners, []bool{true, true, true, true, true}},
	} {
		r, err := renumber(renumbered{graphs: gs, starts: starts}, tc.partners, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gs, given) {
			t.Fatal("renumber changed the caller's list")
		}
		for i, g := range gs {
			p := r.perms[i]
			switch {
			case p == nil && r.graphs[i] != g:
				t.Errorf("partners %d, graph %d: replaced without a permutation", tc.partners, i)
			case p != nil && !tc.want[i]:
				t.Errorf("partners %d, graph %d (%d nodes): renumbered", tc.partners, i, g.N)
			case p != nil:
				h := r.graphs[i]
				if !isPerm(p) || h.N != g.N || h.NumEdges() != g.NumEdges() {
					t.Fatalf("graph %d: %v is not a permutation of its nodes", i, p)
				}
				if (starts[i] == nil) != (r.starts[i] == nil) {
					t.Fatalf("graph %d: starts %v, given %v", i, r.starts[i], starts[i])
				}
				for k, old := range p {
					if !slices.Equal(h.Node(k), g.Node(old)) || starts[i] != nil && r.starts[i][k] != starts[i][old] {
						t.Fatalf("graph %d: node %d is not node %d of the given graph", i, k, old)
					}
				}
			}
		}
		if tc.want[2] && r.perms[2] == nil {
			t.Errorf("partners %d: the 80-node graph was not renumbered", tc.partners)
		}
	}
}

// TestRenumberKeepsValues: the CPU's Gram matrix of the renumbered graphs
// is the given graphs' (node order does not change a kernel value), and
// their nodal matrix mapped back by unpermuteNodal is the given graphs',
// symmetric and not.
func TestRenumberKeepsValues(t *testing.T) {
	gs, starts := renumberGraphs()
	opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[1].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[1].EK),
		Q: 0.1, Accuracy: 1e-12, Solver: mgk.SolverJacobi}
	close := func(what string, got, want []float64) {
		t.Helper()
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-10*math.Abs(want[k])+1e-300 {
				t.Fatalf("%s: entry %d is %v, want %v", what, k, got[k], want[k])
			}
		}
	}
	n := len(gs)
	want := make([]float64, n*n)
	if _, err := mgk.Gram(gs, nil, starts, nil, true, opt, want, nil); err != nil {
		t.Fatal(err)
	}
	rx, _, err := renumberCall(gs, gs, starts, starts, true, false, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, n*n)
	if _, err := mgk.Gram(rx.graphs, nil, rx.starts, nil, true, opt, got, nil); err != nil {
		t.Fatal(err)
	}
	close("Gram", got, want)

	X, Y := gs[:3], gs[1:]
	sX, sY := starts[:3], starts[1:]
	for _, sym := range []bool{true, false} {
		ys, sy := Y, sY
		if sym {
			ys, sy = X, sX
		}
		offX, nX := nodeOffsets(X)
		offY, nY := nodeOffsets(ys)
		want := make([]float64, nX*nY)
		if _, err := mgk.Nodal(X, ys, sX, sy, sym, opt, want); err != nil {
			t.Fatal(err)
		}
		rx, ry, err := renumberCall(X, ys, sX, sy, sym, false, 2)
		if err != nil {
			t.Fatal(err)
		}
		if rx.perms == nil || rx.perms[2] == nil {
			t.Fatal("the 80-node graph was not renumbered: the test maps nothing back")
		}
		got := make([]float64, nX*nY)
		if _, err := mgk.Nodal(rx.graphs, ry.graphs, rx.starts, ry.starts, sym, opt, got); err != nil {
			t.Fatal(err)
		}
		unpermuteNodal(got, rx, ry, offX, offY)
		close("nodal", got, want)
	}
}
