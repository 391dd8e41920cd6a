package wl

import (
	"fmt"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// EdgeFeatures returns the edge label histogram of graphs: row g counts the
// edges of graph g by the label in edge feature column col, each edge in both
// orientations and a self-loop once (the counts of GraKeL's EdgeHistogram).
func EdgeFeatures(graphs []*graph.Graph, col int) (*sparsegram.Features, error) {
	for g, gr := range graphs {
		if gr.NumEdges() > 0 && col >= gr.EdgeCols {
			return nil, fmt.Errorf("graph %d: edge label column %d but the edges have %d feature columns", g, col, gr.EdgeCols)
		}
	}
	lab, estart := edgeLabels(graphs, col)
	n := int32(0)
	for _, l := range lab {
		n = max(n, l+1)
	}
	f := &sparsegram.Features{NumCols: int(n), Ptr: make([]int, 1, len(graphs)+1)}
	var ids []int32
	for g, gr := range graphs {
		ids = ids[:0]
		for e := 0; e < gr.NumEdges(); e++ {
			ids = append(ids, lab[estart[g]+e])
			if gr.EdgeU[e] != gr.EdgeV[e] {
				ids = append(ids, lab[estart[g]+e])
			}
		}
		f.AppendRow(ids)
	}
	return f, nil
}

// histogram builds the feature rows: for each graph, its nodes' labels of all
// rounds, counted. A counting sort by label lists, for every label in
// increasing order, the graphs of the nodes that carry it in increasing graph
// order; each run of one graph is one entry, appended to that graph's row,
// which so comes out sorted by label. Linear in the nodes and labels.
func histogram(graphs []*graph.Graph, start []int, rounds [][]int32, numCols int, opt Options) (*sparsegram.Features, error) {
	if opt.Control.Cancelled() {
		return nil, schedule.ErrCancelled
	}
	nodes := start[len(graphs)]
	graphOf := make([]int32, nodes)
	for g := range graphs {
		for u := start[g]; u < start[g+1]; u++ {
			graphOf[u] = int32(g)
		}
	}
	bucket := make([]int, numCols+1) // label l's nodes are byLabel[bucket[l]:bucket[l+1]]
	for _, lab := range rounds {
		for _, l := range lab {
			bucket[l+1]++
		}
	}
	for l := range numCols {
		bucket[l+1] += bucket[l]
	}
	byLabel := make([]int32, bucket[numCols])
	next := slices.Clone(bucket[:numCols])
	for _, lab := range rounds {
		for u, l := range lab {
			byLabel[next[l]] = graphOf[u]
			next[l]++
		}
	}
	// Entries per graph, then the rows.
	f := &sparsegram.Features{NumCols: numCols, Ptr: make([]int, len(graphs)+1)}
	runs := func(visit func(l int32, g int32, count uint32)) {
		for l := range numCols {
			seg := byLabel[bucket[l]:bucket[l+1]]
			for a := 0; a < len(seg); {
				b := a + 1
				for b < len(seg) && seg[b] == seg[a] {
					b++
				}
				visit(int32(l), seg[a], uint32(b-a))
				a = b
			}
		}
	}
	runs(func(_ int32, g int32, _ uint32) { f.Ptr[g+1]++ })
	for g := range graphs {
		f.Ptr[g+1] += f.Ptr[g]
	}
	f.Col = make([]int32, f.Ptr[len(graphs)])
	f.Val = make([]uint32, len(f.Col))
	fill := slices.Clone(f.Ptr[:len(graphs)])
	runs(func(l int32, g int32, count uint32) {
		f.Col[fill[g]], f.Val[fill[g]] = l, count
		fill[g]++
	})
	return f, nil
}
