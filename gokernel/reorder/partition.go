package reorder

import (
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// Partition returns an order from recursive bisection into parts of at most 8
// nodes, each part then filling one tile row, refined to minimize the number of
// non-empty tiles.
//
// A set of s nodes is split into a left part of 8·⌈⌈s/8⌉/2⌉ nodes and the rest,
// so that every part except the very last lies on a tile boundary. Each split
// grows the left side greedily from a pseudo-peripheral node (taking the
// frontier node with most edges into the grown side first), tries a second seed
// at the far end of the first, and refines both with Fiduccia–Mattheyses passes
// that keep the side sizes exact; the split with the smaller edge cut wins.
//
// The edge cut is only a proxy: a cut edge costs a tile only if no other edge
// already touches the same pair of parts. A local search therefore swaps nodes
// between parts whenever that removes a non-empty tile (see refineTiles), until
// no swap helps. Recursive bisection cuts a ring into arcs whose first and last
// still touch, where RCM folds it in two, and exact part sizes can force parts
// made of several pieces; so the same local search is also started from RCM's
// order and from the input order, each cut into runs of 8, and the partition
// with fewest tiles is kept (earlier starts win ties). This multi-start costs
// three refinements but makes Partition never worse than refined RCM or
// refined natural order.
func Partition(g *graph.Graph) []int {
	ptr, adj := simpleAdj(g)
	self := make([]bool, g.N)
	for e := range g.EdgeU {
		if g.EdgeU[e] == g.EdgeV[e] {
			self[g.EdgeU[e]] = true
		}
	}
	p := newPartitioner(g.N, ptr, adj)
	bis := make([]int32, g.N)
	for i := range bis {
		bis[i] = int32(i)
	}
	p.bisect(bis)
	starts := [][]int32{bis, make([]int32, g.N), make([]int32, g.N)}
	for i, v := range RCM(g) {
		starts[1][i] = int32(v)
	}
	for i := range starts[2] {
		starts[2][i] = int32(i)
	}
	var best []int
	bestT := -1
	for _, o := range starts {
		o = refineTiles(o, ptr, adj, self)
		perm := make([]int, g.N)
		for k, v := range o {
			perm[k] = int(v)
		}
		if t, _ := PermutedTileStats(g, perm); bestT < 0 || t < bestT {
			best, bestT = perm, t
		}
	}
	return best
}

// partitioner holds the scratch of the recursive bisection, indexed by node.
type partitioner struct {
	ptr, adj []int32
	b        *bfs
	seg      []int32 // membership stamp: v is in the current segment when seg[v] == gen
	gen      int32
	side     []int8
	best     []int8
	gain     []int32
	degIn    []int32
	locked   []bool
	h        [2]maxHeap
	moves    []int32
}

func newPartitioner(n int, ptr, adj []int32) *partitioner {
	return &partitioner{
		ptr: ptr, adj: adj, b: newBFS(n),
		seg: make([]int32, n), side: make([]int8, n), best: make([]int8, n),
		gain: make([]int32, n), degIn: make([]int32, n), locked: make([]bool, n),
	}
}

func (p *partitioner) in(v int32) bool { return p.seg[v] == p.gen }

// bisect reorders seg in place so that consecutive runs of 8 are the parts.
func (p *partitioner) bisect(seg []int32) {
	if len(seg) <= 8 {
		return
	}
	k := (len(seg) + 7) / 8
	left := 8 * ((k + 1) / 2)
	p.split(seg, left)
	p.bisect(seg[:left])
	p.bisect(seg[left:])
}

// split moves a set of exactly left nodes with a small edge cut to the front of seg.
func (p *partitioner) split(seg []int32, left int) {
	p.gen++
	for _, v := range seg {
		p.seg[v] = p.gen
	}
	for _, v := range seg {
		d := int32(0)
		for _, u := range p.adj[p.ptr[v]:p.ptr[v+1]] {
			if p.in(u) {
				d++
			}
		}
		p.degIn[v] = d
	}
	// Seed at the lowest-degree node's pseudo-peripheral node, as RCM does.
	s := seg[0]
	for _, v := range seg {
		if p.degIn[v] < p.degIn[s] || (p.degIn[v] == p.degIn[s] && v < s) {
			s = v
		}
	}
	s = p.b.peripheral(s, p.ptr, p.adj, p.in)
	q := p.b.run(s, p.ptr, p.adj, p.in)
	seeds := [2]int32{s, q[len(q)-1]}
	bestCut := int32(-1)
	for try := 0; try < 2*len(seeds); try++ {
		seed := seeds[try/2]
		if try >= 2 && seed == seeds[0] {
			break
		}
		if try%2 == 0 {
			p.grow(seg, seed, left)
		} else {
			p.levelSplit(seg, seed, left)
		}
		p.fm(seg, left)
		if c := p.cut(seg); bestCut < 0 || c < bestCut {
			bestCut = c
			for _, v := range seg {
				p.best[v] = p.side[v]
			}
		}
	}
	// Stable partition: side-0 nodes first, each side in its previous order.
	tmp := make([]int32, 0, len(seg))
	for _, v := range seg {
		if p.best[v] == 0 {
			tmp = append(tmp, v)
		}
	}
	for _, v := range seg {
		if p.best[v] == 1 {
			tmp = append(tmp, v)
		}
	}
	copy(seg, tmp)
}

// grow puts size nodes on side 0, adding from seed the frontier node with the
// largest gain 2·(edges into side 0) − (degree in the segment), which prefers
// nodes whose edges mostly stay inside the grown set. When the frontier runs dry
// (a disconnected segment) it restarts from the first unassigned node.
func (p *partitioner) grow(seg []int32, seed int32, size int) {
	for _, v := range seg {
		p.side[v] = 1
		p.gain[v] = -p.degIn[v]
	}
	h := &p.h[0]
	h.reset()
	h.push(p.gain[seed], seed)
	next := 0
	for n := 0; n < size; {
		v := int32(-1)
		for h.len() > 0 {
			g, u := h.pop()
			if p.side[u] == 1 && p.gain[u] == g {
				v = u
				break
			}
		}
		if v < 0 {
			for p.side[seg[next]] == 0 {
				next++
			}
			v = seg[next]
		}
		p.side[v] = 0
		n++
		for _, u := range p.adj[p.ptr[v]:p.ptr[v+1]] {
			if p.in(u) && p.side[u] == 1 {
				p.gain[u] += 2
				h.push(p.gain[u], u)
			}
		}
	}
}

// levelSplit puts on side 0 the first size nodes of a breadth-first order from
// seed (restarting at the first unvisited node of seg when a component ends),
// the level-structure split of Gibbs, Poole and Stockmeyer: on long, thin graphs
// it cuts across the graph where greedy growing may wander.
func (p *partitioner) levelSplit(seg []int32, seed int32, size int) {
	for _, v := range seg {
		p.side[v] = 1
	}
	n, next := 0, 0
	for n < size {
		for _, v := range p.b.run(seed, p.ptr, p.adj, func(u int32) bool { return p.in(u) && p.side[u] == 1 }) {
			if n == size {
				break
			}
			p.side[v] = 0
			n++
		}
		for next < len(seg) && p.side[seg[next]] == 0 {
			next++
		}
		if next < len(seg) {
			seed = seg[next]
		}
	}
}

// cut counts the segment's edges between the two sides.
func (p *partitioner) cut(seg []int32) int32 {
	c := int32(0)
	for _, v := range seg {
		for _, u := range p.adj[p.ptr[v]:p.ptr[v+1]] {
			if u > v && p.in(u) && p.side[u] != p.side[v] {
				c++
			}
		}
	}
	return c
}

// fm runs Fiduccia–Mattheyses passes that move nodes alternately from side 0
// and side 1, so every prefix of even length keeps the sizes exact, and keeps
// the best such prefix. It stops when a pass gains nothing.
func (p *partitioner) fm(seg []int32, left int) {
	if left == 0 || left == len(seg) {
		return
	}
	for pass := 0; pass < 8; pass++ {
		for _, v := range seg {
			g := int32(0)
			for _, u := range p.adj[p.ptr[v]:p.ptr[v+1]] {
				if p.in(u) {
					if p.side[u] != p.side[v] {
						g++
					} else {
						g--
					}
				}
			}
			p.gain[v] = g
			p.locked[v] = false
		}
		p.h[0].reset()
		p.h[1].reset()
		for _, v := range seg {
			p.h[p.side[v]].push(p.gain[v], v)
		}
		p.moves = p.moves[:0]
		var sum, best int32
		bestLen, sinceBest := 0, 0
		limit := 2 * min(left, len(seg)-left)
		for step := 0; step < limit && sinceBest < 64; step++ {
			from := int8(step % 2)
			v := int32(-1)
			h := &p.h[from]
			for h.len() > 0 {
				g, u := h.pop()
				if !p.locked[u] && p.side[u] == from && p.gain[u] == g {
					v = u
					break
				}
			}
			if v < 0 {
				break
			}
			sum += p.gain[v]
			p.side[v] = 1 - from
			p.locked[v] = true
			p.moves = append(p.moves, v)
			for _, u := range p.adj[p.ptr[v]:p.ptr[v+1]] {
				if !p.in(u) || p.locked[u] {
					continue
				}
				if p.side[u] == from {
					p.gain[u] += 2
				} else {
					p.gain[u] -= 2
				}
				p.h[p.side[u]].push(p.gain[u], u)
			}
			sinceBest++
			if step%2 == 1 && sum > best {
				best, bestLen, sinceBest = sum, step+1, 0
			}
		}
		for _, v := range p.moves[bestLen:] {
			p.side[v] = 1 - p.side[v]
		}
		if best <= 0 {
			return
		}
	}
}

// maxHeap is a binary heap of (key, node) with the largest key on top and the
// lowest node on ties, so that pops are deterministic. Stale entries are left
// in and skipped by the caller (lazy deletion).
type maxHeap struct{ a []heapItem }

type heapItem struct{ key, v int32 }

func (h *maxHeap) reset()   { h.a = h.a[:0] }
func (h *maxHeap) len() int { return len(h.a) }

func (x heapItem) above(y heapItem) bool { return x.key > y.key || (x.key == y.key && x.v < y.v) }

func (h *maxHeap) push(key, v int32) {
	h.a = append(h.a, heapItem{key, v})
	i := len(h.a) - 1
	for i > 0 {
		j := (i - 1) / 2
		if !h.a[i].above(h.a[j]) {
			break
		}
		h.a[i], h.a[j] = h.a[j], h.a[i]
		i = j
	}
}

func (h *maxHeap) pop() (key, v int32) {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.a[l].above(h.a[m]) {
			m = l
		}
		if r < last && h.a[r].above(h.a[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
	return top.key, top.v
}

// maxRefineParts bounds the dense part-by-part count matrix of refineTiles
// (1024² int32 = 4 MiB); larger graphs keep their bisection order unrefined.
const maxRefineParts = 1024

// tileCounter tracks, for parts of 8 consecutive positions, how many adjacency
// nonzeros fall in each (part, part) tile, the number of non-empty tiles and the
// sum of squared counts, under node moves.
type tileCounter struct {
	np    int
	cnt   []int32
	part  []int32
	tiles int
	sq    int // Σ cnt², larger when nonzeros crowd into fewer tiles
}

// add changes the count of tile (a, b), and of its mirror (b, a), by d. Only the
// upper triangle is stored; an off-diagonal cell stands for two tiles.
func (t *tileCounter) add(a, b int32, d int32) {
	w := 2
	if a > b {
		a, b = b, a
	} else if a == b {
		w = 1
	}
	c := &t.cnt[int(a)*t.np+int(b)]
	if *c == 0 {
		t.tiles += w
	}
	t.sq += w * int(2*(*c)*d+d*d)
	*c += d
	if *c == 0 {
		t.tiles -= w
	}
}

// move changes v's part to "to", updating the tile counts.
func (t *tileCounter) move(v, to int32, ptr, adj []int32, self []bool) {
	from := t.part[v]
	for _, u := range adj[ptr[v]:ptr[v+1]] {
		pu := t.part[u]
		if pu == from {
			// Both (v,u) and (u,v) sit in the diagonal tile.
			t.add(from, from, -2)
		} else {
			t.add(from, pu, -1)
		}
		if pu == to {
			t.add(to, to, 2)
		} else {
			t.add(to, pu, 1)
		}
	}
	if self[v] {
		t.add(from, from, -1)
		t.add(to, to, 1)
	}
	t.part[v] = to
}

// refineTiles improves order by swapping nodes between parts (8 consecutive
// positions each) when that lowers the tile count, or keeps it and raises the
// sum of squared tile counts: crowding nonzeros into fewer tiles is what later
// lets a swap empty a tile, and it measures better than the edge cut. Only swaps are tried, never moves, so every part but the last stays full
// and aligned on a tile boundary. The lexicographic
// objective strictly decreases, so the search ends.
func refineTiles(order []int32, ptr, adj []int32, self []bool) []int32 {
	n := len(order)
	np := (n + 7) / 8
	if np <= 1 || np > maxRefineParts {
		return order
	}
	t := &tileCounter{np: np, cnt: make([]int32, np*np), part: make([]int32, n)}
	members := make([][]int32, np)
	for k, v := range order {
		t.part[v] = int32(k / 8)
		members[k/8] = append(members[k/8], v)
	}
	for v := int32(0); int(v) < n; v++ {
		for _, u := range adj[ptr[v]:ptr[v+1]] {
			if u > v || t.part[u] == t.part[v] {
				// One add per undirected edge off the diagonal tiles covers its
				// mirror; within a diagonal tile each direction is a nonzero.
				t.add(t.part[v], t.part[u], 1)
			}
		}
		if self[v] {
			t.add(t.part[v], t.part[v], 1)
		}
	}
	better := func(tiles, sq int) bool { return t.tiles < tiles || (t.tiles == tiles && t.sq > sq) }
	var cand []int32
	for pass := 0; pass < 30; pass++ {
		improved := false
		for _, v := range order {
			p := t.part[v]
			// Candidate parts: those holding a neighbour of v.
			cand = cand[:0]
			for _, u := range adj[ptr[v]:ptr[v+1]] {
				if q := t.part[u]; q != p && !slices.Contains(cand, q) {
					cand = append(cand, q)
				}
			}
			for _, q := range cand {
				tiles, sq := t.tiles, t.sq
				done := false
				// Move v once, then try each partner w against it.
				t.move(v, q, ptr, adj, self)
				for wi, w := range members[q] {
					t.move(w, p, ptr, adj, self)
					if better(tiles, sq) {
						members[q][wi] = v
						i := slices.Index(members[p], v)
						members[p][i] = w
						done = true
						break
					}
					t.move(w, q, ptr, adj, self)
				}
				if !done {
					t.move(v, p, ptr, adj, self)
				}
				if done {
					improved = true
					break
				}
			}
		}
		if !improved {
			break
		}
	}
	out := make([]int32, 0, n)
	for _, m := range members {
		out = append(out, m...)
	}
	return out
}
