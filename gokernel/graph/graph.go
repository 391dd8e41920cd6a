// Package graph holds labeled, weighted, undirected graphs in the form the kernels
// read: a compressed adjacency list (both directions of every edge, a self-loop
// once) with per-node and per-edge feature rows.
package graph

import (
	"fmt"
	"math"
)

// Graph is an undirected graph with non-negative edge weights and float64 feature
// rows on nodes and edges. It is immutable once built by New.
type Graph struct {
	// N is the number of nodes.
	N int
	// Edges lists each undirected edge once as a pair of node indices; U == V is a self-loop.
	EdgeU, EdgeV []int32
	// Weight holds one non-negative weight per edge in Edges.
	Weight []float64
	// NodeFeat holds N rows of NodeCols features, row-major.
	NodeFeat []float64
	// NodeCols is the number of features per node.
	NodeCols int
	// EdgeFeat holds one row of EdgeCols features per edge, row-major.
	EdgeFeat []float64
	// EdgeCols is the number of features per edge.
	EdgeCols int

	// RowPtr, Col, Val and EdgeOf form the symmetric adjacency in CSR form: the
	// neighbours of node i are Col[RowPtr[i]:RowPtr[i+1]] with weights Val[...]
	// and edge indices EdgeOf[...] into the edge arrays. A self-loop appears once.
	RowPtr []int32
	Col    []int32
	Val    []float64
	EdgeOf []int32
}

// New validates its arguments, copies them, and builds the adjacency structure.
// edges holds 2·len(weight) node indices. nodeFeat holds n·nodeCols values and
// edgeFeat len(weight)·edgeCols values. Errors name the offending field.
func New(n int, edges []int64, weight []float64, nodeFeat []float64, nodeCols int, edgeFeat []float64, edgeCols int) (*Graph, error) {
	m := len(weight)
	switch {
	case n < 0:
		return nil, fmt.Errorf("negative node count %d", n)
	case n > math.MaxInt32 || m > math.MaxInt32:
		return nil, fmt.Errorf("%d nodes and %d edges: at most %d of each are supported", n, m, math.MaxInt32)
	case len(edges) != 2*m:
		return nil, fmt.Errorf("edges: %d indices for %d weights", len(edges), m)
	case nodeCols < 0 || len(nodeFeat) != n*nodeCols:
		return nil, fmt.Errorf("node features: %d values for %d nodes × %d columns", len(nodeFeat), n, nodeCols)
	case edgeCols < 0 || len(edgeFeat) != m*edgeCols:
		return nil, fmt.Errorf("edge features: %d values for %d edges × %d columns", len(edgeFeat), m, edgeCols)
	}
	g := &Graph{
		N: n, NodeCols: nodeCols, EdgeCols: edgeCols,
		EdgeU: make([]int32, m), EdgeV: make([]int32, m),
		Weight:   append([]float64(nil), weight...),
		NodeFeat: append([]float64(nil), nodeFeat...),
		EdgeFeat: append([]float64(nil), edgeFeat...),
	}
	for e := 0; e < m; e++ {
		u, v := edges[2*e], edges[2*e+1]
		if u < 0 || v < 0 || u >= int64(n) || v >= int64(n) {
			return nil, fmt.Errorf("edges: edge %d joins nodes %d and %d, outside 0..%d", e, u, v, n-1)
		}
		w := weight[e]
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, fmt.Errorf("weights: edge %d has weight %v; weights must be finite and non-negative", e, w)
		}
		g.EdgeU[e], g.EdgeV[e] = int32(u), int32(v)
	}
	for i, x := range g.NodeFeat {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("node features: node %d column %d is %v", i/nodeCols, i%nodeCols, x)
		}
	}
	for i, x := range g.EdgeFeat {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("edge features: edge %d column %d is %v", i/edgeCols, i%edgeCols, x)
		}
	}
	g.buildCSR()
	return g, nil
}

func (g *Graph) buildCSR() {
	deg := make([]int32, g.N+1)
	for e := range g.EdgeU {
		u, v := g.EdgeU[e], g.EdgeV[e]
		deg[u+1]++
		if u != v {
			deg[v+1]++
		}
	}
	for i := 0; i < g.N; i++ {
		deg[i+1] += deg[i]
	}
	g.RowPtr = deg
	nnz := deg[g.N]
	g.Col = make([]int32, nnz)
	g.Val = make([]float64, nnz)
	g.EdgeOf = make([]int32, nnz)
	next := append([]int32(nil), deg[:g.N]...)
	put := func(i, j int32, e int) {
		k := next[i]
		next[i]++
		g.Col[k], g.Val[k], g.EdgeOf[k] = j, g.Weight[e], int32(e)
	}
	for e := range g.EdgeU {
		u, v := g.EdgeU[e], g.EdgeV[e]
		put(u, v, e)
		if u != v {
			put(v, u, e)
		}
	}
}

// NumEdges returns the number of undirected edges.
func (g *Graph) NumEdges() int { return len(g.Weight) }

// Node returns the feature row of node i.
func (g *Graph) Node(i int) []float64 { return g.NodeFeat[i*g.NodeCols : (i+1)*g.NodeCols] }

// Edge returns the feature row of edge e.
func (g *Graph) Edge(e int) []float64 { return g.EdgeFeat[e*g.EdgeCols : (e+1)*g.EdgeCols] }

// PermuteEdges returns a copy of g whose edge k is edge order[k] of g, with
// its weight and feature row; nodes are unchanged. It panics if order is not
// a permutation of 0..NumEdges()-1.
func (g *Graph) PermuteEdges(order []int) *Graph {
	m := g.NumEdges()
	if len(order) != m {
		panic(fmt.Sprintf("graph: edge order of length %d for %d edges", len(order), m))
	}
	seen := make([]bool, m)
	edges := make([]int64, 2*m)
	weight := make([]float64, m)
	feat := make([]float64, len(g.EdgeFeat))
	c := g.EdgeCols
	for k, e := range order {
		if e < 0 || e >= m || seen[e] {
			panic(fmt.Sprintf("graph: edge order is not a permutation: entry %d is %d", k, e))
		}
		seen[e] = true
		edges[2*k], edges[2*k+1] = int64(g.EdgeU[e]), int64(g.EdgeV[e])
		weight[k] = g.Weight[e]
		copy(feat[k*c:(k+1)*c], g.Edge(e))
	}
	h, err := New(g.N, edges, weight, g.NodeFeat, g.NodeCols, feat, c)
	if err != nil {
		// g was valid and reordering its edges keeps it so.
		panic("graph: edge-permuted graph invalid: " + err.Error())
	}
	return h
}

// WithFeatures returns a new graph with g's nodes, edges and weights and the
// given feature rows (nodeCols per node, edgeCols per edge, in g's edge
// order); it returns New's error when their sizes do not fit g.
func (g *Graph) WithFeatures(nodeFeat []float64, nodeCols int, edgeFeat []float64, edgeCols int) (*Graph, error) {
	edges := make([]int64, 2*len(g.EdgeU))
	for e := range g.EdgeU {
		edges[2*e], edges[2*e+1] = int64(g.EdgeU[e]), int64(g.EdgeV[e])
	}
	return New(g.N, edges, g.Weight, nodeFeat, nodeCols, edgeFeat, edgeCols)
}

// Degrees returns d_i = Σ_j w_ij, a self-loop counted once.
func (g *Graph) Degrees() []float64 {
	d := make([]float64, g.N)
	for i := 0; i < g.N; i++ {
		for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
			d[i] += g.Val[k]
		}
	}
	return d
}

// Dense returns the symmetric weighted adjacency matrix, row-major n×n.
func (g *Graph) Dense() []float64 {
	a := make([]float64, g.N*g.N)
	for e := range g.EdgeU {
		u, v := int(g.EdgeU[e]), int(g.EdgeV[e])
		a[u*g.N+v] += g.Weight[e]
		if u != v {
			a[v*g.N+u] += g.Weight[e]
		}
	}
	return a
}

// Batch is the packed form of a list of graphs described in docs/abi.md: node and
// edge ranges per graph over shared arrays.
type Batch struct {
	NodePtr, EdgePtr []int64
	Edges            []int64
	Weight           []float64
	NodeFeat         []float64
	NodeCols         int
	EdgeFeat         []float64
	EdgeCols         int
}

// Unpack builds one Graph per entry of b, validating each. The arrays must have
// exactly the lengths the pointers declare; an error names the graph as
// name[i] (e.g. "X[3]: ...") or the array at fault.
func (b *Batch) Unpack(name string) ([]*Graph, error) {
	if len(b.NodePtr) != len(b.EdgePtr) || len(b.NodePtr) == 0 {
		return nil, fmt.Errorf("%s: node_ptr has %d entries and edge_ptr %d", name, len(b.NodePtr), len(b.EdgePtr))
	}
	n := len(b.NodePtr) - 1
	if b.NodePtr[0] != 0 || b.EdgePtr[0] != 0 {
		return nil, fmt.Errorf("%s: node_ptr and edge_ptr must start at 0", name)
	}
	for i := 0; i < n; i++ {
		if b.NodePtr[i+1] < b.NodePtr[i] || b.EdgePtr[i+1] < b.EdgePtr[i] {
			return nil, fmt.Errorf("%s[%d]: node or edge range decreases", name, i)
		}
	}
	nodes, edges := b.NodePtr[n], b.EdgePtr[n]
	switch {
	case b.NodeCols < 0 || b.EdgeCols < 0:
		return nil, fmt.Errorf("%s: negative feature column count", name)
	case nodes > math.MaxInt32 || edges > math.MaxInt32:
		return nil, fmt.Errorf("%s: %d nodes and %d edges in all: at most %d of each are supported", name, nodes, edges, math.MaxInt32)
	case int64(len(b.Edges)) != 2*edges:
		return nil, fmt.Errorf("%s: edges has %d entries for %d edges", name, len(b.Edges), edges)
	case int64(len(b.Weight)) != edges:
		return nil, fmt.Errorf("%s: weights has %d entries for %d edges", name, len(b.Weight), edges)
	case int64(len(b.NodeFeat)) != nodes*int64(b.NodeCols):
		return nil, fmt.Errorf("%s: node features have %d entries for %d nodes × %d columns", name, len(b.NodeFeat), nodes, b.NodeCols)
	case int64(len(b.EdgeFeat)) != edges*int64(b.EdgeCols):
		return nil, fmt.Errorf("%s: edge features have %d entries for %d edges × %d columns", name, len(b.EdgeFeat), edges, b.EdgeCols)
	}
	gs := make([]*Graph, n)
	for i := 0; i < n; i++ {
		n0, n1, e0, e1 := int(b.NodePtr[i]), int(b.NodePtr[i+1]), int(b.EdgePtr[i]), int(b.EdgePtr[i+1])
		g, err := New(n1-n0, b.Edges[2*e0:2*e1], b.Weight[e0:e1],
			b.NodeFeat[n0*b.NodeCols:n1*b.NodeCols], b.NodeCols,
			b.EdgeFeat[e0*b.EdgeCols:e1*b.EdgeCols], b.EdgeCols)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", name, i, err)
		}
		gs[i] = g
	}
	return gs, nil
}

// CheckLabelColumns reports the first of graphs whose nodes (edges) lack the
// feature column nodeCol (edgeCol) holding their discrete label, naming the
// graph by its index; a negative column is not checked, and a graph without
// nodes (edges) needs no such column. It is the one check of the explicit
// feature maps' label columns.
func CheckLabelColumns(graphs []*Graph, nodeCol, edgeCol int) error {
	for g, gr := range graphs {
		if nodeCol >= 0 && gr.N > 0 && nodeCol >= gr.NodeCols {
			return fmt.Errorf("graph %d: node label column %d but the nodes have %d feature columns", g, nodeCol, gr.NodeCols)
		}
		if edgeCol >= 0 && gr.NumEdges() > 0 && edgeCol >= gr.EdgeCols {
			return fmt.Errorf("graph %d: edge label column %d but the edges have %d feature columns", g, edgeCol, gr.EdgeCols)
		}
	}
	return nil
}
