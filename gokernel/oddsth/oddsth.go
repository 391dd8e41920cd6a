// Package oddsth computes the ODD-ST_h kernel (Da San Martino, Navarin and
// Sperduti 2012): each graph is decomposed into one DAG per node r, the
// breadth-first DAG rooted at r (the edges from each level to the next,
// levels 0..h, or all levels when h is unbounded), and every node v of every
// DAG contributes one feature, the tree visit of the DAG from v (the DAG
// below v unfolded into a tree: v's label with the tree visits of its
// children). With φ_t(G) the number of pairs (r, v) of G whose tree visit is
// t, the kernel is Σ_t φ_t(G) φ_t(G'), the subtree kernel with weight 1
// summed over all pairs of DAGs.
//
// A tree visit is identified by its content: the node's label with the
// multiset of its children's tree visits (children are unordered: two
// visits are the same feature when their labels agree and their children can
// be matched one to one). Identities are exact, numbered over the call in
// order of first appearance without hashing, so counts are exact and a
// pair's value does not depend on the other graphs of the call.
package oddsth

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MaxHeight bounds Options.Height.
const MaxHeight = 1000

// Options configures Features.
type Options struct {
	// Height h ≥ 1 is the largest depth of a DAG; 0 leaves it unbounded.
	Height int
	// NodeLabelCol is the node feature column holding the discrete label
	// (< 0: all nodes alike).
	NodeLabelCol int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// Features returns the tree-visit counts of the graphs, one row per graph,
// columns numbering the tree visits that occur in the call. The graphs are
// processed one after another (the dictionary of tree visits is shared).
func Features(graphs []*graph.Graph, opt Options) (*sparsegram.Features, error) {
	if opt.Height < 0 || opt.Height > MaxHeight {
		return nil, fmt.Errorf("height must be in [0, %d] (0: unbounded), got %d", MaxHeight, opt.Height)
	}
	if err := graph.CheckLabelColumns(graphs, opt.NodeLabelCol, -1); err != nil {
		return nil, err
	}
	x := &extractor{opt: opt, ids: map[string]int32{}}
	f := &sparsegram.Features{Ptr: make([]int, 1, len(graphs)+1)}
	var row []int32
	err := schedule.Run(opt.Control, len(graphs), 1, 1, func(_, g int) error {
		var err error
		if row, err = x.graph(graphs[g], row[:0]); err != nil {
			return fmt.Errorf("graph %d: %w", g, err)
		}
		f.AppendRow(row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.NumCols = len(x.ids)
	return f, nil
}

// extractor holds the call's dictionary of tree visits and one graph's
// scratch space.
type extractor struct {
	opt Options
	// ids numbers the tree visits: the key is the node label's bits and the
	// sorted ids of the children's visits.
	ids map[string]int32

	level    []int32 // BFS level from the current root, -1 when unreached
	order    []int32 // the reached nodes in BFS order
	visit    []int32 // the id of each reached node's tree visit
	children []int32
	key      []byte
}

// graph appends the id of the tree visit of every node of every DAG of gr to row.
func (x *extractor) graph(gr *graph.Graph, row []int32) ([]int32, error) {
	n := gr.N
	x.level = slices.Grow(x.level[:0], n)[:n]
	x.visit = slices.Grow(x.visit[:0], n)[:n]
	for r := range n {
		for i := range x.level {
			x.level[i] = -1
		}
		x.level[r] = 0
		x.order = append(x.order[:0], int32(r))
		for h := 0; h < len(x.order); h++ {
			u := x.order[h]
			if x.opt.Height > 0 && int(x.level[u]) >= x.opt.Height {
				break
			}
			for _, w := range gr.Col[gr.RowPtr[u]:gr.RowPtr[u+1]] {
				if x.level[w] < 0 {
					x.level[w] = x.level[u] + 1
					x.order = append(x.order, w)
				}
			}
		}
		// Deepest first: a node's children (its neighbours one level down)
		// have their ids when it is reached.
		for k := len(x.order) - 1; k >= 0; k-- {
			v := x.order[k]
			x.children = x.children[:0]
			if x.opt.Height == 0 || int(x.level[v]) < x.opt.Height {
				for _, w := range gr.Col[gr.RowPtr[v]:gr.RowPtr[v+1]] {
					if x.level[w] == x.level[v]+1 {
						x.children = append(x.children, w)
					}
				}
			}
			// Parallel edges give one child.
			slices.Sort(x.children)
			x.children = slices.Compact(x.children)
			for i, w := range x.children {
				x.children[i] = x.visit[w]
			}
			slices.Sort(x.children)
			id, err := x.intern(x.label(gr, int(v)), x.children)
			if err != nil {
				return row, err
			}
			x.visit[v] = id
			row = append(row, id)
		}
	}
	return row, nil
}

// label returns node v's label as bits; +0 merges −0 into 0.
func (x *extractor) label(gr *graph.Graph, v int) uint64 {
	if x.opt.NodeLabelCol < 0 {
		return 0
	}
	return math.Float64bits(gr.Node(v)[x.opt.NodeLabelCol] + 0)
}

// intern returns the id of the tree visit with the given label and sorted
// children's ids, numbering it when new.
func (x *extractor) intern(label uint64, children []int32) (int32, error) {
	x.key = binary.LittleEndian.AppendUint64(x.key[:0], label)
	for _, c := range children {
		x.key = binary.LittleEndian.AppendUint32(x.key, uint32(c))
	}
	if id, ok := x.ids[string(x.key)]; ok {
		return id, nil
	}
	if len(x.ids) == math.MaxInt32 {
		return 0, fmt.Errorf("more than %d distinct tree visits", math.MaxInt32)
	}
	id := int32(len(x.ids))
	x.ids[string(x.key)] = id
	return id, nil
}
