package wl

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// randomGraph has n nodes with labels in [0, nl) (column 0) and a second,
// continuous column; edges with labels in [0, el) (column 0); some self-loops
// and isolated nodes.
func randomGraph(rng *rand.Rand, n, nl, el int) *graph.Graph {
	var edges []int64
	var w, ef []float64
	for u := 0; u < n; u++ {
		for v := u; v < n; v++ {
			p := 0.25
			if u == v {
				p = 0.1
			}
			if u == n-1 || v == n-1 { // the last node stays isolated
				continue
			}
			if rng.Float64() < p {
				edges = append(edges, int64(u), int64(v))
				w = append(w, 1+rng.Float64())
				ef = append(ef, float64(rng.IntN(el)), rng.NormFloat64())
			}
		}
	}
	nf := make([]float64, 0, 2*n)
	for v := 0; v < n; v++ {
		nf = append(nf, float64(rng.IntN(nl)*7-3), rng.NormFloat64())
	}
	g, err := graph.New(n, edges, w, nf, 2, ef, 2)
	if err != nil {
		panic(err)
	}
	return g
}

func randomGraphs(seed uint64, count int) []*graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	gs := make([]*graph.Graph, count)
	for i := range gs {
		gs[i] = randomGraph(rng, rng.IntN(12), 3, 2)
	}
	return gs
}

// referenceHistograms is an independent WL: string labels built from the
// definition, one map of label → count per round and graph.
func referenceHistograms(gs []*graph.Graph, h, nodeCol, edgeCol int) [][]map[string]int {
	out := make([][]map[string]int, len(gs))
	labels := make([][]string, len(gs))
	for g, gr := range gs {
		labels[g] = make([]string, gr.N)
		for v := range gr.N {
			if nodeCol >= 0 {
				labels[g][v] = fmt.Sprint(gr.Node(v)[nodeCol])
			} else {
				labels[g][v] = fmt.Sprint("deg", gr.RowPtr[v+1]-gr.RowPtr[v])
			}
		}
	}
	for round := 0; round <= h; round++ {
		for g := range gs {
			hist := map[string]int{}
			for _, l := range labels[g] {
				hist[l]++
			}
			out[g] = append(out[g], hist)
		}
		next := make([][]string, len(gs))
		for g, gr := range gs {
			next[g] = make([]string, gr.N)
			for v := range gr.N {
				var nb []string
				for e := range gr.NumEdges() {
					u, w := int(gr.EdgeU[e]), int(gr.EdgeV[e])
					var other int
					switch {
					case u == v:
						other = w
					case w == v:
						other = u
					default:
						continue
					}
					entry := labels[g][other]
					if edgeCol >= 0 {
						entry = fmt.Sprint(gr.Edge(e)[edgeCol]) + "~" + entry
					}
					nb = append(nb, entry)
				}
				slices.Sort(nb)
				next[g][v] = "(" + labels[g][v] + "|" + strings.Join(nb, ",") + ")"
			}
		}
		labels = next
	}
	return out
}

func referenceKernel(a, b []map[string]int, s sparsegram.Semiring) float64 {
	sum := 0
	for r := range a {
		for l, ca := range a[r] {
			if s == sparsegram.SumMin {
				sum += min(ca, b[r][l])
			} else {
				sum += ca * b[r][l]
			}
		}
	}
	return float64(sum)
}

func TestFeaturesAgainstReference(t *testing.T) {
	gs := randomGraphs(1, 40)
	for _, tc := range []struct {
		name             string
		h, nodeCol, edge int
	}{
		{"vertex histogram", 0, 0, -1},
		{"h=1", 1, 0, -1},
		{"h=3", 3, 0, -1},
		{"h=3 degrees", 3, -1, -1},
		{"h=2 edge labels", 2, 0, 0},
		{"h=4 degrees, edge labels", 4, -1, 0},
	} {
		for _, collide := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s collide=%v", tc.name, collide), func(t *testing.T) {
				opt := Options{Iterations: tc.h, NodeLabelCol: tc.nodeCol, EdgeLabelCol: tc.edge, NJobs: 3}
				if collide {
					opt.hash = func(s []int32) uint64 { return uint64(len(s) % 2) }
				}
				f, err := Features(gs, opt)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Validate(); err != nil {
					t.Fatal(err)
				}
				ref := referenceHistograms(gs, tc.h, tc.nodeCol, tc.edge)
				for _, s := range []sparsegram.Semiring{sparsegram.SumProduct, sparsegram.SumMin} {
					n := len(gs)
					got := make([]float64, n*n)
					if err := sparsegram.Gram(f, nil, true, sparsegram.Options{Semiring: s}, got); err != nil {
						t.Fatal(err)
					}
					for i := range n {
						for j := range n {
							if want := referenceKernel(ref[i], ref[j], s); got[i*n+j] != want {
								t.Fatalf("semiring %d: K[%d][%d] = %v, reference %v", s, i, j, got[i*n+j], want)
							}
						}
					}
				}
			})
		}
	}
}

// TestJointDictionary: features of X ∪ Y computed together give K(X, Y) as
// the rows of the joint call, whatever labels occur in Y only.
func TestJointDictionary(t *testing.T) {
	X, Y := randomGraphs(2, 10), randomGraphs(3, 7)
	all := append(slices.Clone(X), Y...)
	f, err := Features(all, Options{Iterations: 3, NodeLabelCol: 0, EdgeLabelCol: -1})
	if err != nil {
		t.Fatal(err)
	}
	ref := referenceHistograms(all, 3, 0, -1)
	n := len(all)
	got := make([]float64, n*n)
	if err := sparsegram.Gram(f, nil, true, sparsegram.Options{}, got); err != nil {
		t.Fatal(err)
	}
	for i := range X {
		for j := range Y {
			if want := referenceKernel(ref[i], ref[len(X)+j], sparsegram.SumProduct); got[i*n+len(X)+j] != want {
				t.Fatalf("K(X[%d], Y[%d]) = %v, want %v", i, j, got[i*n+len(X)+j], want)
			}
		}
	}
}

func TestEdgeFeatures(t *testing.T) {
	gs := randomGraphs(4, 20)
	f, err := EdgeFeatures(gs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	for g, gr := range gs {
		want := map[float64]uint32{}
		for e := range gr.NumEdges() {
			want[gr.Edge(e)[0]] += 2
			if gr.EdgeU[e] == gr.EdgeV[e] {
				want[gr.Edge(e)[0]]-- // a self-loop once
			}
		}
		total := uint32(0)
		for _, c := range want {
			total += c
		}
		got := uint32(0)
		for k := f.Ptr[g]; k < f.Ptr[g+1]; k++ {
			got += f.Val[k]
		}
		if got != total || f.Ptr[g+1]-f.Ptr[g] != len(want) {
			t.Fatalf("graph %d: %d entries totalling %d, want %d labels totalling %d", g, f.Ptr[g+1]-f.Ptr[g], got, len(want), total)
		}
	}
}

func TestErrors(t *testing.T) {
	gs := randomGraphs(5, 3)
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Iterations: -1}, "iterations"},
		{Options{Iterations: MaxIterations + 1}, "iterations"},
		{Options{NodeLabelCol: 5, EdgeLabelCol: -1}, "node label column 5"},
		{Options{NodeLabelCol: 0, EdgeLabelCol: 9}, "edge label column 9"},
	} {
		if _, err := Features(gs, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.opt, err, tc.want)
		}
	}
	ctl := schedule.NewControl()
	ctl.Cancel()
	if _, err := Features(gs, Options{Iterations: 2, EdgeLabelCol: -1, Control: ctl}); err != schedule.ErrCancelled {
		t.Errorf("cancelled: error %v", err)
	}
}

// TestHashFeatures: with one hash whose bucket is the same for every node and
// no discrete label, the features are those of WL from a constant start; bad
// options are errors.
func TestHashFeatures(t *testing.T) {
	gs := randomGraphs(6, 15)
	base := HashOptions{WL: Options{Iterations: 2, NodeLabelCol: -1, EdgeLabelCol: -1}, AttrCol: 1, AttrWidth: 1,
		Projections: []float64{0}, Offsets: []float64{0.5}, Hashes: 1, PerHash: 1, BinWidth: 1}
	f, err := HashFeatures(gs, base)
	if err != nil {
		t.Fatal(err)
	}
	constant := make([]float64, 0)
	for _, gr := range gs {
		constant = append(constant, make([]float64, gr.N)...)
	}
	want, err := Features(gs, Options{Iterations: 2, EdgeLabelCol: -1, start: constant})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Ptr, want.Ptr) || !slices.Equal(f.Col, want.Col) || !slices.Equal(f.Val, want.Val) {
		t.Errorf("constant hash: features differ from WL on a constant start")
	}
	for _, tc := range []struct {
		name string
		mod  func(*HashOptions)
		want string
	}{
		{"no hashes", func(o *HashOptions) { o.Hashes = 0 }, "hashes"},
		{"projection count", func(o *HashOptions) { o.Projections = nil }, "projection values"},
		{"offset count", func(o *HashOptions) { o.Offsets = []float64{1, 2} }, "offsets"},
		{"bin width", func(o *HashOptions) { o.BinWidth = 0 }, "bin width"},
		{"attribute columns", func(o *HashOptions) { o.AttrCol = 2 }, "attribute columns"},
	} {
		o := base
		tc.mod(&o)
		if _, err := HashFeatures(gs, o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestLabelsOrderIndependentOfCall checks Labels' promise: the labels of the
// same graphs compare the same way whatever else the call holds, in whatever
// order, with and without edge labels.
func TestLabelsOrderIndependentOfCall(t *testing.T) {
	for _, edgeCol := range []int{-1, 0} {
		X, other := randomGraphs(11, 8), randomGraphs(12, 9)
		opt := Options{Iterations: 3, NodeLabelCol: 0, EdgeLabelCol: edgeCol}
		alone, _, err := Labels(X, opt)
		if err != nil {
			t.Fatal(err)
		}
		// X reversed, after other graphs: its node v of graph g sits at offset[g] + v.
		mixed := append(slices.Clone(other), X...)
		slices.Reverse(mixed[len(other):])
		within, _, err := Labels(mixed, opt)
		if err != nil {
			t.Fatal(err)
		}
		var pos []int // pos[u]: X's node u (numbered as in alone) in the mixed call
		offset := 0
		for _, g := range other {
			offset += g.N
		}
		starts := make([]int, len(X))
		for k := len(X) - 1; k >= 0; k-- { // mixed holds X[len-1], ..., X[0]
			starts[k] = offset
			offset += X[k].N
		}
		for g := range X {
			for v := 0; v < X[g].N; v++ {
				pos = append(pos, starts[g]+v)
			}
		}
		for i := range alone {
			for u := range pos {
				for w := range pos {
					a := cmp.Compare(alone[i][u], alone[i][w])
					if b := cmp.Compare(within[i][pos[u]], within[i][pos[w]]); a != b {
						t.Fatalf("edge col %d, round %d: nodes %d and %d compare %d alone and %d in another call",
							edgeCol, i, u, w, a, b)
					}
				}
			}
		}
	}
}
