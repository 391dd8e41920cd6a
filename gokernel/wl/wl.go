// Package wl computes the explicit feature maps of the Weisfeiler–Lehman
// family (Shervashidze et al. 2011; Kriege et al. 2016) and of the vertex and
// edge label histograms: sparse count vectors, one per graph, whose products
// over a semiring (package sparsegram) are the kernels; graphgram's
// explicit-feature kernels (Python's WeisfeilerLehmanKernel and the histogram
// and hash kernels) are these maps.
//
// Labels are numbered over all the graphs of one call, so that the feature
// vectors of X and Y share one dictionary by construction; no dictionary
// outlives the call.
package wl

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MaxIterations bounds Options.Iterations: each iteration adds one label per
// node to the features, and colour refinement stabilises after at most as
// many iterations as the largest graph has nodes (in practice a handful).
const MaxIterations = 100

// Options configures Features.
type Options struct {
	// Iterations is h ≥ 0: the labels of refinement rounds 0..h are counted
	// (h = 0 is the vertex label histogram).
	Iterations int
	// NodeLabelCol is the node feature column holding the discrete label; -1
	// starts from the node degrees (number of incident edges, a self-loop
	// counted once).
	NodeLabelCol int
	// start, when not nil, holds the round-0 label of every node of the call,
	// graph after graph, instead of NodeLabelCol: HashFeatures' hashed labels.
	start []float64
	// hash, when not nil, replaces hashSig for the signatures (tests force
	// collisions with it).
	hash func([]int32) uint64
	// EdgeLabelCol, when ≥ 0, is the edge feature column holding the edge
	// label: a node's new label then refines by the multiset of (edge label,
	// neighbour label) pairs instead of the multiset of neighbour labels.
	EdgeLabelCol int
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// Features returns the Weisfeiler–Lehman feature matrix of graphs: row g
// counts, for every round i in 0..h, the nodes of graph g that carry each
// label of round i. Round 0 labels are the distinct values of the label
// column (or the degrees); the round-i label of node v is the pair (its round
// i−1 label, the sorted multiset of its neighbours' round i−1 labels — with
// edge labels, of the (edge label, neighbour label) pairs), numbered by first
// appearance. Every round numbers its labels after the previous round's, so
// the dot product of two rows is the WL subtree kernel and their histogram
// intersection the WL optimal-assignment kernel. A self-loop makes a node its
// own neighbour once.
func Features(graphs []*graph.Graph, opt Options) (*sparsegram.Features, error) {
	rounds, n, err := refine(graphs, opt, false)
	if err != nil {
		return nil, err
	}
	start := make([]int, len(graphs)+1) // graph g's nodes are [start[g], start[g+1]) of the call
	for g, gr := range graphs {
		start[g+1] = start[g] + gr.N
	}
	return histogram(graphs, start, rounds, n, opt)
}

// Labels returns the Weisfeiler–Lehman labels of the nodes of graphs:
// rounds[i][u] is the label of node u in round i, the nodes of the call
// numbered graph after graph, and every label of all rounds is below n. Two
// nodes of the call carry equal labels in round i exactly when their round-i
// signatures are equal, whatever else the call holds. The numbers depend on
// the call, but not their order: each round's labels are numbered in the
// order of their signatures' content (round 0 by value, round i by the
// round-(i − 1) label, then the sorted neighbour entries, compared
// lexicographically), so two labels compare the same way in every call that
// holds both. The WL framework (Shervashidze et al. 2011) evaluates a base
// kernel on the graphs relabeled by each round; a base kernel whose
// arithmetic follows the order of label values (the marginalized kernel's
// content order) then computes each pair the same way in every call.
func Labels(graphs []*graph.Graph, opt Options) (rounds [][]int32, n int, err error) {
	return refine(graphs, opt, true)
}

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

func checkColumns(graphs []*graph.Graph, opt Options) error {
	return graph.CheckLabelColumns(graphs, opt.NodeLabelCol, opt.EdgeLabelCol)
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

// hashTable maps 64-bit hashes to labels by open addressing with linear
// probing (half the time of a Go map here); it grows at half load.
type hashTable struct {
	keys []uint64
	vals []int32 // -1: empty
	n    int
}

func newHashTable(expected int) *hashTable {
	size := 16
	for size < 2*expected {
		size *= 2
	}
	t := &hashTable{keys: make([]uint64, size), vals: make([]int32, size)}
	for i := range t.vals {
		t.vals[i] = -1
	}
	return t
}

// slot returns where h is, or the empty slot where it would go.
func (t *hashTable) slot(h uint64) int {
	mask := len(t.keys) - 1
	i := int(h>>32^h) & mask
	for t.vals[i] >= 0 && t.keys[i] != h {
		i = (i + 1) & mask
	}
	return i
}

func (t *hashTable) get(h uint64) (int32, bool) {
	i := t.slot(h)
	return t.vals[i], t.vals[i] >= 0
}

func (t *hashTable) put(h uint64, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		old := *t
		*t = *newHashTable(len(old.keys))
		for i, ov := range old.vals {
			if ov >= 0 {
				t.put(old.keys[i], ov)
			}
		}
	}
	i := t.slot(h)
	t.keys[i], t.vals[i] = h, v
	t.n++
}

// sortInts sorts s: by insertion for the short neighbour lists of most graphs
// (slices.Sort's set-up costs more there), else slices.Sort.
func sortInts(s []int32) {
	if len(s) > 16 {
		slices.Sort(s)
		return
	}
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i - 1
		for j >= 0 && s[j] > x {
			s[j+1] = s[j]
			j--
		}
		s[j+1] = x
	}
}

// sortPairs sorts the (a, b) pairs of s = [a0 b0 a1 b1 ...] lexicographically.
func sortPairs(s []int32) {
	n := len(s) / 2
	// Insertion sort: neighbour lists are short (molecules: ≤ 4–6 entries);
	// a long list falls back to a packed 64-bit sort.
	if n <= 16 {
		for i := 1; i < n; i++ {
			a, b := s[2*i], s[2*i+1]
			j := i - 1
			for j >= 0 && (s[2*j] > a || s[2*j] == a && s[2*j+1] > b) {
				s[2*j+2], s[2*j+3] = s[2*j], s[2*j+1]
				j--
			}
			s[2*j+2], s[2*j+3] = a, b
		}
		return
	}
	packed := make([]uint64, n)
	for i := range packed {
		packed[i] = uint64(uint32(s[2*i]))<<32 | uint64(uint32(s[2*i+1]))
	}
	slices.Sort(packed)
	for i, p := range packed {
		s[2*i], s[2*i+1] = int32(p>>32), int32(uint32(p))
	}
}

// sigKey is the bytes of a signature, a map key.
func sigKey(s []int32) string {
	b := make([]byte, 4*len(s))
	for i, x := range s {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return string(b)
}

// hashSig is a 64-bit hash of a signature (FNV-style mixing of whole words).
func hashSig(s []int32) uint64 {
	h := uint64(len(s)) * 0x9e3779b97f4a7c15
	for _, x := range s {
		h ^= uint64(uint32(x))
		h *= 0x100000001b3
		h ^= h >> 29
	}
	return h
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
