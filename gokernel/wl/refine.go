package wl

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// refine computes the rounds of Labels; with ordered, each round is numbered
// in content order (Labels), else by first appearance (Features, whose counts
// do not depend on the numbers, and which skips the sort).
func refine(graphs []*graph.Graph, opt Options, ordered bool) (rounds [][]int32, n int, err error) {
	if opt.Iterations < 0 || opt.Iterations > MaxIterations {
		return nil, 0, fmt.Errorf("iterations must be in [0, %d], got %d", MaxIterations, opt.Iterations)
	}
	if opt.start != nil {
		opt.NodeLabelCol = -1 // not read
	}
	if err := checkColumns(graphs, opt); err != nil {
		return nil, 0, err
	}
	start := make([]int, len(graphs)+1) // graph g's nodes are [start[g], start[g+1]) of the call
	for g, gr := range graphs {
		start[g+1] = start[g] + gr.N
	}
	rounds = make([][]int32, opt.Iterations+1)
	var next int32
	if opt.start != nil {
		if len(opt.start) != start[len(graphs)] {
			return nil, 0, fmt.Errorf("%d start labels for %d nodes", len(opt.start), start[len(graphs)])
		}
		rounds[0], next = compress(opt.start)
	} else {
		rounds[0], next = initialLabels(graphs, start, opt.NodeLabelCol)
	}
	var edgeLab []int32 // per graph-local edge, over the call; nil without edge labels
	var edgeStart []int
	if opt.EdgeLabelCol >= 0 {
		edgeLab, edgeStart = edgeLabels(graphs, opt.EdgeLabelCol)
	}
	r := newRefiner(graphs, start, edgeLab, edgeStart, opt)
	for i := 1; i <= opt.Iterations; i++ {
		if rounds[i], next, err = r.round(rounds[i-1], next); err != nil {
			return nil, 0, err
		}
		if ordered {
			r.orderByContent(rounds[i])
		}
	}
	return rounds, int(next), nil
}

// orderByContent renumbers a round's labels (numbered by first appearance by
// round) in the order of their signatures, keeping the set of numbers the
// round used: the signatures round left in r.sig are in terms of the previous
// round's labels, already in content order, so the order found is the same in
// every call.
func (r *refiner) orderByContent(labels []int32) {
	holder := map[int32]int{} // a node of each label
	for u, l := range labels {
		if _, ok := holder[l]; !ok {
			holder[l] = u
		}
	}
	used := make([]int32, 0, len(holder))
	for l := range holder {
		used = append(used, l)
	}
	slices.Sort(used)
	byContent := slices.Clone(used)
	slices.SortFunc(byContent, func(a, b int32) int {
		ua, ub := holder[a], holder[b]
		return slices.Compare(r.sig[r.sigStart[ua]:r.sigStart[ua+1]], r.sig[r.sigStart[ub]:r.sigStart[ub+1]])
	})
	to := make(map[int32]int32, len(used))
	for k, l := range byContent {
		to[l] = used[k]
	}
	for u, l := range labels {
		labels[u] = to[l]
	}
}

// initialLabels numbers the distinct round-0 values (labels or degrees) of
// all nodes in increasing order of value; it returns the labels and their count.
func initialLabels(graphs []*graph.Graph, start []int, col int) ([]int32, int32) {
	vals := make([]float64, start[len(graphs)])
	for g, gr := range graphs {
		for v := 0; v < gr.N; v++ {
			if col >= 0 {
				vals[start[g]+v] = gr.Node(v)[col]
			} else {
				vals[start[g]+v] = float64(gr.RowPtr[v+1] - gr.RowPtr[v])
			}
		}
	}
	return compress(vals)
}

// edgeLabels numbers the distinct edge labels of all graphs; lab[estart[g]+e]
// is the label of edge e of graph g.
func edgeLabels(graphs []*graph.Graph, col int) (lab []int32, estart []int) {
	estart = make([]int, len(graphs)+1)
	for g, gr := range graphs {
		estart[g+1] = estart[g] + gr.NumEdges()
	}
	vals := make([]float64, estart[len(graphs)])
	for g, gr := range graphs {
		for e := 0; e < gr.NumEdges(); e++ {
			vals[estart[g]+e] = gr.Edge(e)[col]
		}
	}
	lab, _ = compress(vals)
	return lab, estart
}

// compress maps each value to the rank of its value among the distinct values.
func compress(vals []float64) ([]int32, int32) {
	distinct := slices.Clone(vals)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	out := make([]int32, len(vals))
	for i, v := range vals {
		k, _ := slices.BinarySearch(distinct, v)
		out[i] = int32(k)
	}
	return out, int32(len(distinct))
}

// refiner runs refinement rounds over all graphs of a call. Its signature
// arrays are laid out once and reused by every round.
type refiner struct {
	graphs    []*graph.Graph
	start     []int
	edgeLab   []int32
	edgeStart []int
	opt       Options
	// A node's signature is [its label, then its sorted neighbour entries]: one
	// int32 per neighbour, or two (edge label, neighbour label) with edge
	// labels. Node u's is sig[sigStart[u]:sigStart[u+1]], its hash hash[u].
	width    int
	sigStart []int
	sig      []int32
	hash     []uint64
}

func newRefiner(graphs []*graph.Graph, start []int, edgeLab []int32, edgeStart []int, opt Options) *refiner {
	r := &refiner{graphs: graphs, start: start, edgeLab: edgeLab, edgeStart: edgeStart, opt: opt, width: 1}
	if edgeLab != nil {
		r.width = 2
	}
	nodes := start[len(graphs)]
	r.sigStart = make([]int, nodes+1)
	for g, gr := range graphs {
		for v := 0; v < gr.N; v++ {
			u := start[g] + v
			r.sigStart[u+1] = r.sigStart[u] + 1 + r.width*int(gr.RowPtr[v+1]-gr.RowPtr[v])
		}
	}
	r.sig = make([]int32, r.sigStart[nodes])
	r.hash = make([]uint64, nodes)
	return r
}

// round computes the next labels from prev, numbering new labels from next on;
// it returns them and the next free label.
func (r *refiner) round(prev []int32, next int32) ([]int32, int32, error) {
	width, sigStart, sig, hash := r.width, r.sigStart, r.sig, r.hash
	hashOf := r.opt.hash
	if hashOf == nil {
		hashOf = hashSig
	}
	err := schedule.Run(r.opt.Control, len(r.graphs), r.opt.NJobs, 16, func(_, g int) error {
		gr := r.graphs[g]
		for v := 0; v < gr.N; v++ {
			u := r.start[g] + v
			s := sig[sigStart[u]:sigStart[u+1]]
			s[0] = prev[u]
			nb := s[1:]
			for k, p := 0, gr.RowPtr[v]; p < gr.RowPtr[v+1]; k, p = k+1, p+1 {
				w := prev[r.start[g]+int(gr.Col[p])]
				if width == 1 {
					nb[k] = w
				} else {
					nb[2*k], nb[2*k+1] = r.edgeLab[r.edgeStart[g]+int(gr.EdgeOf[p])], w
				}
			}
			if width == 1 {
				sortInts(nb)
			} else {
				sortPairs(nb)
			}
			hash[u] = hashOf(s)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	// Number the signatures by first appearance. Equal hashes are compared in
	// full: a signature whose hash another one took first is numbered through
	// an exact map of its words, so a collision never merges two labels.
	// (Sharding this loop by hash over the cores measured no faster on 2
	// cores: the map work is small next to the scans it adds.)
	labels := make([]int32, len(prev))
	base := next
	holder := make([]int, 0, len(prev)/4) // holder[l-base]: a node whose signature is label l
	first := newHashTable(len(prev) / 4)
	var collided map[string]int32
	newLabel := func(u int) (int32, error) {
		if next == math.MaxInt32 {
			return 0, errors.New("more than 2^31 distinct labels")
		}
		holder = append(holder, u)
		next++
		return next - 1, nil
	}
	for u := range prev {
		s := sig[sigStart[u]:sigStart[u+1]]
		l, ok := first.get(hash[u])
		switch {
		case !ok:
			if l, err = newLabel(u); err != nil {
				return nil, 0, err
			}
			first.put(hash[u], l)
		case !slices.Equal(sig[sigStart[holder[l-base]]:sigStart[holder[l-base]+1]], s):
			if collided == nil {
				collided = map[string]int32{}
			}
			key := sigKey(s)
			if l, ok = collided[key]; !ok {
				if l, err = newLabel(u); err != nil {
					return nil, 0, err
				}
				collided[key] = l
			}
		}
		labels[u] = l
	}
	return labels, next, nil
}
