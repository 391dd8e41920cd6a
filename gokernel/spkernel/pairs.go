package spkernel

import (
	"slices"
	"sort"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// splitChunks is the number of pieces a split pair is cut into. It is fixed, not
// taken from the worker count, so that a pair's value is summed in the same order
// whatever NJobs is.
const splitChunks = 64

// pairScratch is per-goroutine working memory for one pair at a time.
type pairScratch struct {
	kn   []float64
	list []groupWeight
	x, y []float64
}

func newScratch() *pairScratch {
	return &pairScratch{x: make([]float64, 1), y: make([]float64, 1)}
}

// groupWeight is a group of the second graph's SP edges and the length-kernel value
// between its length and the current group's length.
type groupWeight struct {
	b int32
	w float64
}

// splitWork returns the threshold above which a pair is split.
func (p *plan) splitWork() int64 {
	switch {
	case p.opt.SplitWork < 0:
		return -1
	case p.opt.SplitWork == 0:
		return DefaultSplitWork
	}
	return p.opt.SplitWork
}

// split reports whether pair (i, j) is computed in splitChunks pieces. It depends
// only on the two graphs, so Gram and Diag agree bit for bit.
func (p *plan) split(i, j int) bool {
	t := p.splitWork()
	if t < 0 || p.method == MethodLabelJoin {
		return false
	}
	return int64(len(p.sp[i].u))*int64(len(p.sp[j].u)) > t
}

// gramPairs computes the kernel pair by pair (all methods but the feature map),
// rows and columns of large graphs first so that the last tasks are short. Split
// pairs are computed first (splitFirst); the pair loop then copies their values.
func (p *plan) gramPairs(nx, ny, yOff int, symmetric bool, out []float64) error {
	size := func(from, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(len(p.sp[from+i].u) + len(p.sp[from+i].fn))
		}
		return s
	}
	return p.runPairs(schedule.GridLargestFirst(size(0, nx), size(yOff, ny), symmetric), yOff, out)
}

// diagPairs writes K(G, G) for every graph, split pairs first.
func (p *plan) diagPairs(out []float64) error {
	return p.runPairs(schedule.DiagGrid(len(p.sp)), 0, out)
}

// runPairs computes the entries of grid, whose columns are the graphs from yOff
// on, into out (see schedule.RunPairs).
func (p *plan) runPairs(grid schedule.Grid, yOff int, out []float64) error {
	split, err := p.splitFirst(grid, yOff)
	if err != nil {
		return err
	}
	return schedule.RunPairs(p.opt.Control, grid, p.opt.NJobs, 1, newScratch, func(ws *pairScratch, i, j int) (float64, error) {
		if split != nil && p.split(i, yOff+j) {
			return split[schedule.Pair{I: i, J: j}], nil
		}
		return p.pair(ws, i, yOff+j, false)
	}, out)
}

// splitFirst computes the pairs of grid that are split, one at a time with all
// workers, and returns their values by entry of the grid; nil when no pair is
// split.
func (p *plan) splitFirst(grid schedule.Grid, yOff int) (map[schedule.Pair]float64, error) {
	t := p.splitWork()
	if t < 0 {
		return nil, nil
	}
	cols, off := grid.Cols, yOff
	if grid.Shape != schedule.Cross {
		cols, off = grid.Rows, 0
	}
	maxX, maxY := 0, 0
	for _, i := range grid.Rows {
		maxX = max(maxX, len(p.sp[i].u))
	}
	for _, j := range cols {
		maxY = max(maxY, len(p.sp[off+j].u))
	}
	if int64(maxX)*int64(maxY) <= t {
		return nil, nil
	}
	ws := newScratch()
	split := map[schedule.Pair]float64{}
	for i, j := range grid.All() {
		if p.split(i, yOff+j) {
			v, err := p.pair(ws, i, yOff+j, true)
			if err != nil {
				return nil, err
			}
			split[schedule.Pair{I: i, J: j}] = v
		}
	}
	return split, nil
}

// pair returns K(graph i, graph j). A split pair is summed in splitChunks pieces,
// in parallel when parallel is set, always added up in chunk order. The pair is
// computed in content order (oriented), so its value does not depend on which
// graph the call puts first.
func (p *plan) pair(ws *pairScratch, i, j int, parallel bool) (float64, error) {
	i, j = p.oriented(i, j)
	a, b := p.sp[i], p.sp[j]
	if p.method == MethodLabelJoin {
		return 2 * p.labelJoin(ws, a, b) * p.scale, nil
	}
	if len(a.u) == 0 || len(b.u) == 0 {
		return 0, nil
	}
	if cap(ws.kn) < a.n*b.n {
		ws.kn = make([]float64, a.n*b.n)
	}
	kn := ws.kn[:a.n*b.n]
	p.nodeMatrix(p.graphs[i], p.graphs[j], a, b, kn)
	if !p.split(i, j) {
		var s float64
		s, ws.list = p.sumRange(a, b, kn, ws, ws.list, 0, len(a.u))
		return 2 * s * p.scale, nil
	}
	ne := len(a.u)
	nc := min(splitChunks, ne)
	part := make([]float64, nc)
	chunk := func(sc *pairScratch, c int) {
		part[c], sc.list = p.sumRange(a, b, kn, sc, sc.list, c*ne/nc, (c+1)*ne/nc)
	}
	if parallel {
		scs := make([]*pairScratch, schedule.Workers(p.opt.NJobs))
		for w := range scs {
			scs[w] = newScratch()
		}
		if err := schedule.Run(p.opt.Control, nc, p.opt.NJobs, 1, func(w, c int) error { chunk(scs[w], c); return nil }); err != nil {
			return 0, err
		}
	} else {
		for c := 0; c < nc; c++ {
			chunk(ws, c)
		}
	}
	s := 0.0
	for _, x := range part {
		s += x
	}
	return 2 * s * p.scale, nil
}

// oriented returns graphs i and j in content order (graph.CompareContent). The
// pair algorithms are not symmetric in their two graphs (sums run over the first
// graph's SP edges outside and the second's inside, a split pair is cut along the
// first graph's edges, base kernels are evaluated as k(first, second)), so
// without it K(G, G') and K(G', G) could differ in the last bits, and a
// symmetric call (which orients pairs by its own schedule) from a cross call.
func (p *plan) oriented(i, j int) (int, int) {
	if i != j && graph.CompareContent(p.graphs[i], nil, p.graphs[j], nil) > 0 {
		return j, i
	}
	return i, j
}

// nodeMatrix fills kn (a.n × b.n) with the node kernel between the nodes of the two
// graphs, from the class table when there is one. Classes are bitwise identical
// rows, so a table entry is exactly the kernel on any two rows of its classes and a
// call that tabulates gives the values of one that does not.
func (p *plan) nodeMatrix(ga, gb *graph.Graph, a, b *spGraph, kn []float64) {
	nb := b.n
	if p.nodeTable != nil {
		nc := p.nClass
		for u := 0; u < a.n; u++ {
			t := p.nodeTable[int(a.cls[u])*nc : int(a.cls[u])*nc+nc]
			row := kn[u*nb : u*nb+nb]
			for v, c := range b.cls {
				row[v] = t[c]
			}
		}
		return
	}
	k := p.opt.NodeKernel
	for u := 0; u < a.n; u++ {
		x := ga.Node(u)
		row := kn[u*nb : u*nb+nb]
		for v := range row {
			row[v] = k.Eval(x, gb.Node(v))
		}
	}
}

// lengthValue returns the length kernel between length ids la and lb.
func (p *plan) lengthValue(ws *pairScratch, la, lb int32) float64 {
	if p.lenTable != nil {
		return p.lenTable[int(la)*len(p.lenVal)+int(lb)]
	}
	ws.x[0], ws.y[0] = p.lenVal[la], p.lenVal[lb]
	return p.lengthKernel().Eval(ws.x, ws.y)
}

// groupWeights lists the groups of b whose length kernel with length id la is
// non-zero, with that value: under exact-match lengths only the group of equal
// length (the hash join), otherwise every group with a non-zero weight.
func (p *plan) groupWeights(ws *pairScratch, la int32, b *spGraph, list []groupWeight) []groupWeight {
	if p.lengthDirac {
		d := p.lenVal[la]
		k := sort.Search(len(b.grpLid), func(k int) bool { return p.lenVal[b.grpLid[k]] >= d })
		if k < len(b.grpLid) && b.grpLid[k] == la {
			list = append(list, groupWeight{int32(k), 1})
		}
		return list
	}
	for k, lb := range b.grpLid {
		if w := p.lengthValue(ws, la, lb); w != 0 {
			list = append(list, groupWeight{int32(k), w})
		}
	}
	return list
}

// sumRange returns Σ over SP edges e in [e0, e1) of a and all SP edges e' of b of
// κlength(e, e') · (kn[u,u']·kn[v,v'] + kn[u,v']·kn[v,u']): each unordered pair of
// unordered SP edges stands for the four ordered ones, two of each product, which
// the caller's factor 2 restores. The innermost loop has no branches: the length
// weight is hoisted to the group of e', and groups of zero weight are skipped
// before it.
func (p *plan) sumRange(a, b *spGraph, kn []float64, ws *pairScratch, list []groupWeight, e0, e1 int) (float64, []groupWeight) {
	nb := b.n
	total := 0.0
	ga := sort.Search(len(a.grpLid), func(k int) bool { return int(a.grpOff[k+1]) > e0 })
	for ; ga < len(a.grpLid) && int(a.grpOff[ga]) < e1; ga++ {
		list = p.groupWeights(ws, a.grpLid[ga], b, list[:0])
		if len(list) == 0 {
			continue
		}
		lo, hi := max(e0, int(a.grpOff[ga])), min(e1, int(a.grpOff[ga+1]))
		for e := lo; e < hi; e++ {
			u, v := int(a.u[e])*nb, int(a.v[e])*nb
			ku, kv := kn[u:u+nb], kn[v:v+nb]
			acc := 0.0
			for _, gw := range list {
				b0, b1 := b.grpOff[gw.b], b.grpOff[gw.b+1]
				bu, bv := b.u[b0:b1], b.v[b0:b1]
				bv = bv[:len(bu)]
				s := 0.0
				for t, x := range bu {
					y := bv[t]
					s += ku[x]*kv[y] + ku[y]*kv[x]
				}
				acc += gw.w * s
			}
			total += acc
		}
	}
	return total, list
}

// labelJoin returns Σ over canonical label pairs t shared by a and b of
// g(t) · Σ_{lengths l, l'} n_t(l) · n'_t(l') · κlength(l, l'), half the kernel
// before scaling (see gFactor).
func (p *plan) labelJoin(ws *pairScratch, a, b *spGraph) float64 {
	total := 0.0
	ia, ib := 0, 0
	for ia < len(a.fn) && ib < len(b.fn) {
		ka := [2]int32{a.fa[ia], a.fb[ia]}
		kb := [2]int32{b.fa[ib], b.fb[ib]}
		ea, eb := ia+1, ib+1
		for ea < len(a.fn) && a.fa[ea] == ka[0] && a.fb[ea] == ka[1] {
			ea++
		}
		for eb < len(b.fn) && b.fa[eb] == kb[0] && b.fb[eb] == kb[1] {
			eb++
		}
		switch c := slices.Compare(ka[:], kb[:]); {
		case c < 0:
			ia = ea
		case c > 0:
			ib = eb
		default:
			s := 0.0
			for x := ia; x < ea; x++ {
				for y := ib; y < eb; y++ {
					s += a.fn[x] * b.fn[y] * p.lengthValue(ws, a.fl[x], b.fl[y])
				}
			}
			total += gFactor(ka[0], ka[1]) * s
			ia, ib = ea, eb
		}
	}
	return total
}
