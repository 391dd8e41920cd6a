// Package spkernel computes the shortest-path graph kernel of Borgwardt & Kriegel
// (2005). Each graph is turned once into its shortest-path graph: an edge between
// every pair of distinct connected nodes, labeled with their shortest distance (hop
// counts, or weighted distances read from an edge column). Then
//
//	K(G, G') = Σ over ordered SP edges (u,v) of G and (u',v') of G' of
//	           κnode(u,u') · κlength(d(u,v), d(u',v')) · κnode(v,v'),
//
// so each undirected SP edge counts in both orientations and isolated nodes count
// nothing — GraKeL's ShortestPath convention, which this package reproduces exactly
// for exact-match kernels.
//
// The algorithm follows from the kernels (Options.Method, MethodAuto):
//
//   - exact-match node and length kernels (including "unlabeled" and "exact lengths"):
//     sparse count vectors of (label u, label v, length) triplets, multiplied through
//     an inverted index, so the cost is the number of shared triplets, not |SP|·|SP'|;
//   - exact-match node kernel only: SP edges joined by their end labels, the length
//     kernel evaluated on the length histograms of each label pair;
//   - exact-match lengths only: SP edges hash-joined by length, the node kernel
//     applied to the pairs of equal length;
//   - otherwise FCSP (Xu et al.): per pair the n×n' node-kernel matrix once, then one
//     branch-free pass over all pairs of SP edges.
//
// Pairs are spread over all cores; a pair whose SP-edge product exceeds a measured
// threshold (Options.SplitWork) is instead split over the cores by itself.
//
// A value depends only on its two graphs and the options, bit for bit: the same
// in a symmetric or a cross call, with either graph on either side, among any
// other graphs, for any NJobs. The feature map sums integers, exactly (below
// 2^53); the other methods compute each pair with its graphs in an order given by
// their content (graph.CompareContent), sum in orders fixed by values rather than by ids
// assigned during the call, and cut split pairs into a fixed number of chunks.
package spkernel

import (
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// Method names the pair algorithm.
type Method int

// The pair algorithms; see the package comment. A forced method that does not fit
// the kernels is an error, except MethodFCSP, which fits all.
const (
	MethodAuto Method = iota
	MethodFeatureMap
	MethodLabelJoin
	MethodLengthJoin
	MethodFCSP
)

// String implements fmt.Stringer.
func (m Method) String() string {
	switch m {
	case MethodAuto:
		return "auto"
	case MethodFeatureMap:
		return "feature-map"
	case MethodLabelJoin:
		return "label-join"
	case MethodLengthJoin:
		return "length-join"
	case MethodFCSP:
		return "fcsp"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// DefaultSplitWork is the SP-edge-pair count (|SP|·|SP'|, unordered edges) above
// which one pair is split over all cores instead of running on one: below it,
// goroutine start-up and the pair-level parallelism a split displaces cost more
// than it gains (BenchmarkSplit; measurements in
// benchmarks/log/go_core_measurements.md).
const DefaultSplitWork = 1 << 22

// Options configures the kernel.
type Options struct {
	// NodeKernel compares node feature rows; nil means unlabeled (κnode ≡ 1).
	NodeKernel microkernel.Kernel
	// LengthKernel compares path lengths, passed as 1-column rows (column 0); nil
	// means exact match.
	LengthKernel microkernel.Kernel
	// WeightCol selects the edge lengths: HopCounts, GraphWeight, or an edge feature
	// column. Lengths must be finite and ≥ 0. Note the zero value is column 0.
	WeightCol int
	// NJobs is the number of goroutines; ≤ 0 uses all cores.
	NJobs int
	// Method forces a pair algorithm; MethodAuto chooses from the kernels.
	Method Method
	// APSP forces an all-pairs shortest-path algorithm; Auto chooses per graph.
	APSP Algorithm
	// SplitWork overrides DefaultSplitWork; < 0 never splits a pair.
	SplitWork int64
	// Control, when not nil, can stop the computation and counts the pairs done.
	Control *schedule.Control
}

// Gram writes K(X[i], Y[j]) into out[i*len(Y)+j]. When symmetric, Y is ignored, the
// matrix is len(X)×len(X), and only its upper triangle is computed and mirrored.
func Gram(X, Y []*graph.Graph, symmetric bool, opt Options, out []float64) error {
	all, yOff, err := schedule.Operands(X, Y, symmetric, len(out))
	if err != nil {
		return err
	}
	nx, ny := len(X), len(all)-yOff
	p, err := newPlan(all, nx, opt)
	if err != nil {
		return err
	}
	if p.method == MethodFeatureMap {
		return p.gramFeatures(nx, ny, yOff, symmetric, out)
	}
	return p.gramPairs(nx, ny, yOff, symmetric, out)
}

// Diag writes K(X[i], X[i]) into out[i], the same values Gram puts on its diagonal.
func Diag(X []*graph.Graph, opt Options, out []float64) error {
	if len(out) != len(X) {
		return fmt.Errorf("output has %d entries for %d graphs", len(out), len(X))
	}
	p, err := newPlan(X, len(X), opt)
	if err != nil {
		return err
	}
	if p.method == MethodFeatureMap {
		for i, s := range p.sp {
			v := 0.0
			for k := range s.fn {
				v += 2 * gFactor(s.fa[k], s.fb[k]) * s.fn[k] * s.fn[k]
			}
			out[i] = v * p.scale
		}
		return nil
	}
	return p.diagPairs(out)
}

// gFactor weighs a canonical label pair (a ≤ b): the ordered pairs (a,b) and (b,a)
// are distinct features when a ≠ b but one feature counted twice over when a = b,
// so matching a = b counts carry twice the weight (see the package tests).
func gFactor(a, b int32) float64 {
	if a == b {
		return 2
	}
	return 1
}

// plan holds everything computed once per call: the chosen method, node classes,
// global length ids and each graph's shortest-path data.
type plan struct {
	opt    Options
	method Method
	// scale multiplies every kernel value: the exact-match kernels' constant factors
	// (κnode twice, κlength once), 1 where the kernels are evaluated directly.
	scale  float64
	graphs []*graph.Graph
	sp     []*spGraph

	// Node classes: exact-match classes for the feature-map and label-join methods,
	// or classes of bitwise identical rows for a node-kernel table (nodeTable != nil).
	nClass    int
	nodeTable []float64

	// Lengths: global ids, their values, and a table of the length kernel.
	hop         bool
	lenVal      []float64
	lenTable    []float64
	lengthDirac bool

	// Feature map (MethodFeatureMap): each graph's sparse vector, feature<<32 | count
	// in increasing feature order (one load per entry in the hot loop), and each
	// feature's weight gFactor.
	vec   [][]uint64
	featG []float64
}

// maxTable bounds the side of the node and length kernel tables (8 MiB each).
const maxTable = 1024

// newPlan validates the options, picks the method and preprocesses gs, whose first
// nx graphs are X and the rest Y (messages name graphs within their batch).
func newPlan(gs []*graph.Graph, nx int, opt Options) (*plan, error) {
	p := &plan{opt: opt, graphs: gs, scale: 1}
	if opt.NodeKernel != nil {
		mc := microkernel.MaxCol(opt.NodeKernel)
		for i, g := range gs {
			if g.NodeCols < mc {
				return nil, fmt.Errorf("%s: the node kernel reads feature column %d but the graph has %d node feature columns", schedule.OperandName(i, nx), mc-1, g.NodeCols)
			}
		}
	}
	if opt.LengthKernel != nil && microkernel.MaxCol(opt.LengthKernel) > 1 {
		return nil, fmt.Errorf("the length kernel reads column %d, but a length is a single column 0", microkernel.MaxCol(opt.LengthKernel)-1)
	}
	if opt.WeightCol < GraphWeight {
		return nil, fmt.Errorf("weight column %d: use HopCounts (-1), GraphWeight (-2) or an edge feature column", opt.WeightCol)
	}
	if opt.APSP == BFS && opt.WeightCol != HopCounts {
		return nil, fmt.Errorf("BFS counts hops; weighted lengths need Dijkstra or Floyd–Warshall")
	}
	p.hop = opt.WeightCol == HopCounts

	nd, nodeOK := diracOf(opt.NodeKernel)
	ld, lenOK := diracOf(opt.LengthKernel)
	if opt.LengthKernel == nil {
		ld.cols = []int{0}
	}
	// A length "exact match" must compare the length itself; a constant length kernel
	// is left to the general methods.
	lenOK = lenOK && len(ld.cols) == 1
	p.method = opt.Method
	if p.method == MethodAuto {
		switch {
		case nodeOK && lenOK:
			p.method = MethodFeatureMap
		case nodeOK:
			p.method = MethodLabelJoin
		case lenOK:
			p.method = MethodLengthJoin
		default:
			p.method = MethodFCSP
		}
	}
	switch p.method {
	case MethodFeatureMap:
		if !nodeOK || !lenOK {
			return nil, fmt.Errorf("the feature-map method needs exact-match node and length kernels")
		}
		p.scale = nd.scale * nd.scale * ld.scale
	case MethodLabelJoin:
		if !nodeOK {
			return nil, fmt.Errorf("the label-join method needs an exact-match node kernel")
		}
		p.scale = nd.scale * nd.scale
	case MethodLengthJoin:
		if !lenOK {
			return nil, fmt.Errorf("the length-join method needs an exact-match length kernel")
		}
		p.scale = ld.scale
		p.lengthDirac = true
	case MethodFCSP:
	default:
		return nil, fmt.Errorf("unknown method %v", p.method)
	}

	classes := p.nodeClasses(nd)
	p.sp = make([]*spGraph, len(gs))
	states := make([]apspState, schedule.Workers(opt.NJobs))
	err := schedule.Run(opt.Control, len(gs), opt.NJobs, 4, func(w, i int) error {
		var cls []int32
		if classes != nil {
			cls = classes[i]
		}
		s, err := p.prepGraph(gs[i], cls, &states[w])
		if err != nil {
			return fmt.Errorf("%s: %w", schedule.OperandName(i, nx), err)
		}
		p.sp[i] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := p.globalLengths(); err != nil {
		return nil, err
	}
	if p.method == MethodFeatureMap {
		p.buildIndex()
	}
	return p, nil
}

// nodeClasses assigns class ids to all nodes: exact-match classes for the methods
// built on them, numbered in order of value, else classes of bitwise identical
// feature rows, which let the node kernel be tabulated once (nodeTable) when there
// are few of them. It returns nil when nodes are compared by evaluating the kernel
// on their rows.
func (p *plan) nodeClasses(nd dirac) [][]int32 {
	exact := p.method == MethodFeatureMap || p.method == MethodLabelJoin
	var key *rowKey
	switch {
	case exact:
		key = newRowKey(nd.cols, true)
	case p.opt.NodeKernel == nil:
		key = newRowKey(nil, false)
	default:
		key = newRowKey(seqCols(microkernel.MaxCol(p.opt.NodeKernel)), false)
	}
	classes := make([][]int32, len(p.graphs))
	var repG, repN []int32 // first node of every class, for the table
	for i, g := range p.graphs {
		c := make([]int32, g.N)
		for v := range c {
			id := key.id(g.Node(v))
			if int(id) == len(repG) {
				repG, repN = append(repG, int32(i)), append(repN, int32(v))
			}
			c[v] = id
		}
		classes[i] = c
		if !exact && key.count() > maxTable {
			return nil
		}
	}
	p.nClass = key.count()
	if exact {
		// Renumber the classes in order of their values. The label join sums over
		// the label pairs two graphs share in the order of their class ids; numbered
		// by first appearance, that order, and the value's last bits, would depend on
		// the other graphs of the call.
		order := make([]int32, len(repG))
		for c := range order {
			order[c] = int32(c)
		}
		rep := func(c int32) []float64 { return p.graphs[repG[c]].Node(int(repN[c])) }
		slices.SortFunc(order, func(a, b int32) int { return key.compare(rep(a), rep(b)) })
		rank := make([]int32, len(order))
		for r, c := range order {
			rank[c] = int32(r)
		}
		for _, c := range classes {
			for v, id := range c {
				c[v] = rank[id]
			}
		}
		return classes
	}
	k := p.opt.NodeKernel
	if k == nil {
		k = &microkernel.Constant{C: 1}
	}
	nc := len(repG)
	p.nClass = nc
	p.nodeTable = make([]float64, nc*nc)
	for a := 0; a < nc; a++ {
		xa := p.graphs[repG[a]].Node(int(repN[a]))
		for b := 0; b < nc; b++ {
			p.nodeTable[a*nc+b] = k.Eval(xa, p.graphs[repG[b]].Node(int(repN[b])))
		}
	}
	return classes
}

// spGraph is one graph's shortest-path data. Which fields are filled depends on
// the method: grouped SP edges for the join-by-length and FCSP methods, sorted
// label-pair features for the feature-map and label-join methods.
type spGraph struct {
	n   int
	cls []int32 // node class per node, nil when the node kernel is evaluated on rows

	// Unordered SP edges (u < v) sorted by length; group k holds the edges
	// grpOff[k]..grpOff[k+1]-1, all of length id grpLid[k], groups in increasing length.
	u, v   []int32
	grpLid []int32
	grpOff []int32

	// Features: canonical end classes fa ≤ fb, length id fl, and the number of
	// unordered SP edges fn with them; sorted by (fa, fb, fl).
	fa, fb, fl []int32
	fn         []float64

	// Weighted lengths only: the distinct lengths of this graph, increasing; length
	// ids above are indices into it until globalLengths makes them global.
	local []float64
}

// prepGraph computes the shortest-path graph of g and stores it in the form the
// method reads. Scratch space lives in st and is reused across graphs.
func (p *plan) prepGraph(g *graph.Graph, cls []int32, st *apspState) (*spGraph, error) {
	w, err := edgeLengths(g, p.opt.WeightCol)
	if err != nil {
		return nil, err
	}
	n := g.N
	alg := p.opt.APSP
	if alg == Auto {
		alg = chooseAlgorithm(n, g.NumEdges(), w != nil)
	}
	// The SP edges (u < v, connected) as flat arrays: ends, and a length id per
	// edge. Hop counts are their own ids (d-1); weighted lengths get local ids in
	// increasing order of length, made global later by globalLengths.
	eu, ev, lid := st.eu[:0], st.ev[:0], st.lid[:0]
	s := &spGraph{n: n, cls: cls}
	maxLid := int32(-1)
	if alg == BFS {
		eu, ev, lid, maxLid = st.hopPairs(g, eu, ev, lid)
	} else {
		ed := st.ed[:0]
		emit := func(u int, row []float64) {
			for v := u + 1; v < n; v++ {
				if d := row[v]; !math.IsInf(d, 1) {
					eu, ev, ed = append(eu, int32(u)), append(ev, int32(v)), append(ed, d+0) // -0 → +0
				}
			}
		}
		switch alg {
		case FloydWarshall:
			if cap(st.mat) < n*n {
				st.mat = make([]float64, n*n)
			}
			d := st.mat[:n*n]
			floydWarshall(g, w, d)
			for u := 0; u < n; u++ {
				emit(u, d[u*n:(u+1)*n])
			}
		case Dijkstra:
			if cap(st.row) < n {
				st.row = make([]float64, n)
			}
			row := st.row[:n]
			for u := 0; u < n; u++ {
				st.dijkstra(g, w, u, row)
				emit(u, row)
			}
		default:
			return nil, fmt.Errorf("unknown shortest-path algorithm %v", alg)
		}
		st.ed = ed
		ds := append(st.ds[:0], ed...)
		slices.Sort(ds)
		ds = slices.Compact(ds)
		s.local = slices.Clone(ds)
		st.ds = ds
		for _, d := range ed {
			l, _ := slices.BinarySearch(s.local, d)
			lid = append(lid, int32(l))
		}
		maxLid = int32(len(s.local) - 1)
	}
	st.eu, st.ev, st.lid = eu, ev, lid

	switch p.method {
	case MethodFeatureMap, MethodLabelJoin:
		p.features(s, eu, ev, lid, maxLid, st)
	default:
		groupByLength(s, eu, ev, lid, maxLid)
	}
	return s, nil
}

// groupByLength counting-sorts the SP edges by length id (ids are ordered like the
// lengths they stand for) and records the groups.
func groupByLength(s *spGraph, eu, ev, lid []int32, maxLid int32) {
	nl := int(maxLid) + 1
	off := make([]int32, nl+1)
	for _, l := range lid {
		off[l+1]++
	}
	for k := 0; k < nl; k++ {
		off[k+1] += off[k]
	}
	s.u, s.v = make([]int32, len(eu)), make([]int32, len(eu))
	next := slices.Clone(off[:nl])
	for k, l := range lid {
		at := next[l]
		next[l]++
		s.u[at], s.v[at] = eu[k], ev[k]
	}
	for l := 0; l < nl; l++ {
		if off[l+1] > off[l] {
			s.grpLid = append(s.grpLid, int32(l))
			s.grpOff = append(s.grpOff, off[l])
		}
	}
	s.grpOff = append(s.grpOff, int32(len(eu)))
}

// features counts the SP edges of s by (class u, class v, length), end classes put
// in canonical order. Keys are packed into one integer when they fit, so sorting is
// a plain integer sort.
func (p *plan) features(s *spGraph, eu, ev, lid []int32, maxLid int32, st *apspState) {
	canon := func(k int) (int32, int32) {
		a, b := s.cls[eu[k]], s.cls[ev[k]]
		if a > b {
			a, b = b, a
		}
		return a, b
	}
	emit := func(a, b, l int32, c int) {
		s.fa, s.fb, s.fl = append(s.fa, a), append(s.fb, b), append(s.fl, l)
		s.fn = append(s.fn, float64(c))
	}
	nc, nl := int64(p.nClass), int64(maxLid)+1
	if space := nc * nc * nl; space <= 1<<18 {
		// Few labels and lengths: count in a dense array, then sort only the distinct
		// keys, whose order (a·nc + b)·nl + l is the (a, b, l) order.
		if int64(len(st.counts)) < space {
			st.counts = make([]int32, space)
		}
		keys := st.keys[:0]
		for k := range eu {
			a, b := canon(k)
			key := (int64(a)*nc+int64(b))*nl + int64(lid[k])
			if st.counts[key] == 0 {
				keys = append(keys, uint64(key))
			}
			st.counts[key]++
		}
		slices.Sort(keys)
		for _, key := range keys {
			l, ab := int64(key)%nl, int64(key)/nl
			emit(int32(ab/nc), int32(ab%nc), int32(l), int(st.counts[key]))
			st.counts[key] = 0
		}
		st.keys = keys
		return
	}
	type key struct{ a, b, l int32 }
	keys := make([]key, len(eu))
	for k := range eu {
		a, b := canon(k)
		keys[k] = key{a, b, lid[k]}
	}
	slices.SortFunc(keys, func(x, y key) int {
		switch {
		case x.a != y.a:
			return int(x.a - y.a)
		case x.b != y.b:
			return int(x.b - y.b)
		}
		return int(x.l - y.l)
	})
	for k := 0; k < len(keys); {
		j := k + 1
		for j < len(keys) && keys[j] == keys[k] {
			j++
		}
		emit(keys[k].a, keys[k].b, keys[k].l, j-k)
		k = j
	}
}

// globalLengths gives every distinct length one id across all graphs, rewrites the
// graphs' local ids, and tabulates the length kernel when there are few lengths.
func (p *plan) globalLengths() error {
	if p.hop {
		maxLid := int32(-1)
		for _, s := range p.sp {
			for _, l := range s.grpLid {
				maxLid = max(maxLid, l)
			}
			for _, l := range s.fl {
				maxLid = max(maxLid, l)
			}
		}
		p.lenVal = make([]float64, maxLid+1)
		for l := range p.lenVal {
			p.lenVal[l] = float64(l + 1)
		}
	} else {
		ids := make(map[float64]int32)
		for _, s := range p.sp {
			remap := make([]int32, len(s.local))
			for k, d := range s.local {
				id, ok := ids[d]
				if !ok {
					id = int32(len(p.lenVal))
					ids[d] = id
					p.lenVal = append(p.lenVal, d)
				}
				remap[k] = id
			}
			for k, l := range s.grpLid {
				s.grpLid[k] = remap[l]
			}
			for k, l := range s.fl {
				s.fl[k] = remap[l]
			}
			s.local = nil
		}
	}
	nl := len(p.lenVal)
	if !p.lengthDirac && p.method != MethodFeatureMap && nl <= maxTable {
		k := p.lengthKernel()
		p.lenTable = make([]float64, nl*nl)
		x, y := []float64{0}, []float64{0}
		for a := 0; a < nl; a++ {
			x[0] = p.lenVal[a]
			for b := 0; b < nl; b++ {
				y[0] = p.lenVal[b]
				p.lenTable[a*nl+b] = k.Eval(x, y)
			}
		}
	}
	return nil
}

// lengthKernel returns the length kernel, nil meaning exact match.
func (p *plan) lengthKernel() microkernel.Kernel {
	if p.opt.LengthKernel == nil {
		return &microkernel.KroneckerDelta{H: 0, Width: 1}
	}
	return p.opt.LengthKernel
}
