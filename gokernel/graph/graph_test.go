package graph

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		edges    []int64
		w, nf    []float64
		nc       int
		ef       []float64
		ec       int
		contains string
	}{
		{"negative n", -1, nil, nil, nil, 0, nil, 0, "negative node count"},
		{"odd edges", 2, []int64{0}, []float64{1}, nil, 0, nil, 0, "edges: 1 indices for 1 weights"},
		{"node feature count", 2, nil, nil, []float64{1}, 1, nil, 0, "node features: 1 values"},
		{"edge feature count", 2, []int64{0, 1}, []float64{1}, nil, 0, []float64{1, 2}, 1, "edge features: 2 values"},
		{"node out of range", 2, []int64{0, 2}, []float64{1}, nil, 0, nil, 0, "edge 0 joins nodes 0 and 2"},
		{"negative node", 2, []int64{-1, 1}, []float64{1}, nil, 0, nil, 0, "outside 0..1"},
		{"negative weight", 2, []int64{0, 1}, []float64{-1}, nil, 0, nil, 0, "weight -1"},
		{"NaN weight", 2, []int64{0, 1}, []float64{math.NaN()}, nil, 0, nil, 0, "weight NaN"},
		{"Inf weight", 2, []int64{0, 1}, []float64{math.Inf(1)}, nil, 0, nil, 0, "weight +Inf"},
		{"NaN node feature", 2, nil, nil, []float64{0, 1, 2, math.NaN()}, 2, nil, 0, "node 1 column 1 is NaN"},
		{"Inf edge feature", 2, []int64{0, 1}, []float64{1}, nil, 0, []float64{math.Inf(-1)}, 1, "edge 0 column 0 is -Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.n, tc.edges, tc.w, tc.nf, tc.nc, tc.ef, tc.ec)
			if err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %v, want one containing %q", err, tc.contains)
			}
		})
	}
}

// neighbours returns node i's (neighbour, weight, edge) triples, sorted.
func neighbours(g *Graph, i int) [][3]float64 {
	var out [][3]float64
	for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
		out = append(out, [3]float64{float64(g.Col[k]), g.Val[k], float64(g.EdgeOf[k])})
	}
	slices.SortFunc(out, func(a, b [3]float64) int {
		for c := range a {
			if a[c] != b[c] {
				if a[c] < b[c] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	return out
}

func TestCSRDegreesDense(t *testing.T) {
	// 0–1 (w 2), 1–2 (w 0.5), a self-loop at 2 (w 3), node 3 isolated, and a
	// parallel edge 0–1 (w 1).
	g, err := New(4, []int64{0, 1, 2, 1, 2, 2, 1, 0}, []float64{2, 0.5, 3, 1},
		[]float64{10, 11, 12, 13}, 1, []float64{0, 1, 2, 3, 4, 5, 6, 7}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if g.NumEdges() != 4 || len(g.Col) != 7 {
		t.Fatalf("NumEdges %d, adjacency entries %d; want 4 and 7 (self-loop once)", g.NumEdges(), len(g.Col))
	}
	for _, tc := range []struct {
		node int
		want [][3]float64
	}{
		{0, [][3]float64{{1, 1, 3}, {1, 2, 0}}},
		{1, [][3]float64{{0, 1, 3}, {0, 2, 0}, {2, 0.5, 1}}},
		{2, [][3]float64{{1, 0.5, 1}, {2, 3, 2}}},
		{3, nil},
	} {
		if got := neighbours(g, tc.node); !slices.Equal(got, tc.want) {
			t.Errorf("node %d neighbours %v, want %v", tc.node, got, tc.want)
		}
	}
	if got, want := g.Degrees(), []float64{3, 3.5, 3.5, 0}; !slices.Equal(got, want) {
		t.Errorf("Degrees %v, want %v", got, want)
	}
	wantDense := []float64{
		0, 3, 0, 0,
		3, 0, 0.5, 0,
		0, 0.5, 3, 0,
		0, 0, 0, 0,
	}
	if got := g.Dense(); !slices.Equal(got, wantDense) {
		t.Errorf("Dense %v, want %v", got, wantDense)
	}
	if got := g.Node(2); !slices.Equal(got, []float64{12}) {
		t.Errorf("Node(2) = %v", got)
	}
	if got := g.Edge(3); !slices.Equal(got, []float64{6, 7}) {
		t.Errorf("Edge(3) = %v", got)
	}
}

func TestNewCopies(t *testing.T) {
	w := []float64{1}
	nf := []float64{5, 6}
	g, err := New(2, []int64{0, 1}, w, nf, 1, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	w[0], nf[0] = 9, 9
	if g.Weight[0] != 1 || g.NodeFeat[0] != 5 || g.Val[0] != 1 {
		t.Error("New kept a reference to its arguments")
	}
}

func TestEmptyGraphs(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		g, err := New(n, nil, nil, nil, 0, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.RowPtr) != n+1 || len(g.Col) != 0 || len(g.Degrees()) != n {
			t.Errorf("n=%d: RowPtr %v Col %v", n, g.RowPtr, g.Col)
		}
	}
}

func TestUnpack(t *testing.T) {
	// Graph 0: 2 nodes, edge 0–1. Graph 1: 1 node, no edge. Graph 2: 3 nodes,
	// edges 0–2 and a loop at 1.
	b := Batch{
		NodePtr:  []int64{0, 2, 3, 6},
		EdgePtr:  []int64{0, 1, 1, 3},
		Edges:    []int64{0, 1, 0, 2, 1, 1},
		Weight:   []float64{1, 2, 3},
		NodeFeat: []float64{0, 1, 2, 3, 4, 5},
		NodeCols: 1,
		EdgeFeat: []float64{7, 8, 9},
		EdgeCols: 1,
	}
	gs, err := b.Unpack("X")
	if err != nil {
		t.Fatal(err)
	}
	for k, tc := range []struct {
		n     int
		edges []int32
		nf    []float64
		ef    []float64
		w     []float64
	}{
		{2, []int32{0, 1}, []float64{0, 1}, []float64{7}, []float64{1}},
		{1, nil, []float64{2}, nil, nil},
		{3, []int32{0, 2, 1, 1}, []float64{3, 4, 5}, []float64{8, 9}, []float64{2, 3}},
	} {
		g := gs[k]
		var edges []int32
		for e := range g.EdgeU {
			edges = append(edges, g.EdgeU[e], g.EdgeV[e])
		}
		if g.N != tc.n || !slices.Equal(edges, tc.edges) || !slices.Equal(g.NodeFeat, tc.nf) ||
			!slices.Equal(g.EdgeFeat, tc.ef) || !slices.Equal(g.Weight, tc.w) {
			t.Errorf("graph %d: n %d edges %v nf %v ef %v w %v", k, g.N, edges, g.NodeFeat, g.EdgeFeat, g.Weight)
		}
	}

	for _, tc := range []struct {
		name     string
		mutate   func(b *Batch)
		contains string
	}{
		{"ptr lengths", func(b *Batch) { b.EdgePtr = b.EdgePtr[:3] }, "X: node_ptr has 4 entries and edge_ptr 3"},
		{"empty", func(b *Batch) { b.NodePtr, b.EdgePtr = nil, nil }, "node_ptr has 0"},
		{"not from zero", func(b *Batch) { b.NodePtr = []int64{1, 2, 3, 6} }, "must start at 0"},
		{"decreasing nodes", func(b *Batch) { b.NodePtr = []int64{0, 2, 1, 6} }, "X[1]: node or edge range decreases"},
		{"edges beyond", func(b *Batch) { b.EdgePtr = []int64{0, 1, 1, 4} }, "X: edges has 6 entries for 4 edges"},
		{"node features short", func(b *Batch) { b.NodeFeat = b.NodeFeat[:5] }, "X: node features have 5 entries for 6 nodes"},
		{"edge features long", func(b *Batch) { b.EdgeFeat = append(b.EdgeFeat, 1) }, "X: edge features have 4 entries"},
		{"weights short", func(b *Batch) { b.Weight = b.Weight[:2] }, "X: weights has 2 entries for 3 edges"},
		{"negative columns", func(b *Batch) { b.NodeCols = -1 }, "negative feature column count"},
		{"huge", func(b *Batch) { b.NodePtr = []int64{0, 2, 3, 1 << 40} }, "at most"},
		{"bad edge", func(b *Batch) { b.Edges = []int64{0, 1, 0, 3, 1, 1} }, "X[2]: edges: edge 0 joins nodes 0 and 3"},
		{"bad weight", func(b *Batch) { b.Weight = []float64{1, -2, 3} }, "X[2]: weights"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := b
			c.NodePtr = slices.Clone(b.NodePtr)
			c.Edges = slices.Clone(b.Edges)
			c.Weight = slices.Clone(b.Weight)
			c.EdgeFeat = slices.Clone(b.EdgeFeat)
			tc.mutate(&c)
			_, err := c.Unpack("X")
			if err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %v, want one containing %q", err, tc.contains)
			}
		})
	}
}

// FuzzUnpack feeds arbitrary pointer arrays and lengths to Unpack: it must
// return graphs or an error, never panic, and what it returns must be consistent.
func FuzzUnpack(f *testing.F) {
	f.Add([]byte{0, 2, 3, 6}, []byte{0, 1, 1, 3}, []byte{0, 1, 0, 2, 1, 1}, 1.0, 1, 1)
	f.Add([]byte{0, 0}, []byte{0, 0}, []byte{}, 0.0, 0, 0)
	f.Add([]byte{0, 5, 2}, []byte{0, 1, 9}, []byte{4, 4, 0}, -1.0, 2, -1)
	f.Fuzz(func(t *testing.T, nodePtr, edgePtr, edges []byte, w float64, nodeCols, edgeCols int) {
		toI := func(b []byte) []int64 {
			out := make([]int64, len(b))
			for i, x := range b {
				out[i] = int64(int8(x))
			}
			return out
		}
		b := Batch{NodePtr: toI(nodePtr), EdgePtr: toI(edgePtr), Edges: toI(edges), NodeCols: nodeCols % 4, EdgeCols: edgeCols % 4}
		if len(b.EdgePtr) > 0 {
			if m := b.EdgePtr[len(b.EdgePtr)-1]; m >= 0 && m < 256 {
				b.Weight = make([]float64, m)
				for i := range b.Weight {
					b.Weight[i] = w
				}
				if b.EdgeCols > 0 {
					b.EdgeFeat = make([]float64, int(m)*b.EdgeCols)
				}
			}
		}
		if len(b.NodePtr) > 0 && b.NodeCols > 0 {
			if nn := b.NodePtr[len(b.NodePtr)-1]; nn >= 0 && nn < 256 {
				b.NodeFeat = make([]float64, int(nn)*b.NodeCols)
			}
		}
		gs, err := b.Unpack("X")
		if err != nil {
			return
		}
		if len(gs) != len(b.NodePtr)-1 {
			t.Fatalf("%d graphs from %d pointers", len(gs), len(b.NodePtr))
		}
		for i, g := range gs {
			if g.N != int(b.NodePtr[i+1]-b.NodePtr[i]) || len(g.RowPtr) != g.N+1 {
				t.Fatalf("graph %d: %d nodes, RowPtr %d", i, g.N, len(g.RowPtr))
			}
		}
	})
}

func TestPermuteEdges(t *testing.T) {
	// A triangle with a pendant edge and a self-loop, two edge feature columns.
	g, err := New(4, []int64{0, 1, 1, 2, 2, 0, 2, 3, 3, 3}, []float64{1, 2, 3, 4, 5},
		[]float64{10, 11, 12, 13}, 1, []float64{0, 1, 10, 11, 20, 21, 30, 31, 40, 41}, 2)
	if err != nil {
		t.Fatal(err)
	}
	order := []int{3, 0, 4, 2, 1}
	h := g.PermuteEdges(order)
	for k, e := range order {
		if h.EdgeU[k] != g.EdgeU[e] || h.EdgeV[k] != g.EdgeV[e] || h.Weight[k] != g.Weight[e] || !slices.Equal(h.Edge(k), g.Edge(e)) {
			t.Errorf("edge %d: got (%d, %d, %v, %v), want edge %d of g", k, h.EdgeU[k], h.EdgeV[k], h.Weight[k], h.Edge(k), e)
		}
	}
	if !slices.Equal(h.Dense(), g.Dense()) || !slices.Equal(h.Degrees(), g.Degrees()) || !slices.Equal(h.NodeFeat, g.NodeFeat) {
		t.Error("reordering the edges changed the adjacency, the degrees or the node features")
	}
	for i := 0; i < h.N; i++ {
		for k := h.RowPtr[i]; k < h.RowPtr[i+1]; k++ {
			e := h.EdgeOf[k]
			if u, v := h.EdgeU[e], h.EdgeV[e]; (u != int32(i) && v != int32(i)) || h.Val[k] != h.Weight[e] {
				t.Errorf("CSR entry %d of node %d points at edge %d (%d, %d)", k, i, e, u, v)
			}
		}
	}
	for _, bad := range [][]int{{0, 1, 2, 3}, {0, 1, 2, 3, 3}, {0, 1, 2, 3, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("order %v: no panic", bad)
				}
			}()
			g.PermuteEdges(bad)
		}()
	}
}

func TestWithFeatures(t *testing.T) {
	g, err := New(3, []int64{0, 1, 1, 2, 2, 2}, []float64{0.5, 1, 2}, []float64{1, 2, 3}, 1, []float64{7, 8, 9}, 1)
	if err != nil {
		t.Fatal(err)
	}
	h, err := g.WithFeatures([]float64{4, 5, 6, 7, 8, 9}, 2, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if h.N != 3 || !slices.Equal(h.EdgeU, g.EdgeU) || !slices.Equal(h.EdgeV, g.EdgeV) || !slices.Equal(h.Weight, g.Weight) ||
		!slices.Equal(h.RowPtr, g.RowPtr) || !slices.Equal(h.Col, g.Col) {
		t.Errorf("structure changed: edges %v %v weights %v", h.EdgeU, h.EdgeV, h.Weight)
	}
	if h.NodeCols != 2 || !slices.Equal(h.Node(1), []float64{6, 7}) || h.EdgeCols != 0 || len(h.EdgeFeat) != 0 {
		t.Errorf("features: node %v (%d cols), edge %v (%d cols)", h.NodeFeat, h.NodeCols, h.EdgeFeat, h.EdgeCols)
	}
	if _, err := g.WithFeatures([]float64{1, 2}, 1, nil, 0); err == nil {
		t.Error("2 node feature values for 3 nodes: no error")
	}
}
