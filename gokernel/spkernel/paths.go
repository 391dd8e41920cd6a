package spkernel

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// Where edge lengths come from (Options.WeightCol).
const (
	// HopCounts measures paths in edges, ignoring weights and features.
	HopCounts = -1
	// GraphWeight reads lengths from Graph.Weight rather than a feature column.
	GraphWeight = -2
)

// Algorithm names an all-pairs shortest-path method.
type Algorithm int

// The all-pairs shortest-path methods. Auto picks BFS for hop counts and, for
// weighted graphs, Floyd–Warshall or Dijkstra from a cost model (chooseAlgorithm).
const (
	Auto Algorithm = iota
	BFS
	Dijkstra
	FloydWarshall
)

// String implements fmt.Stringer.
func (a Algorithm) String() string {
	switch a {
	case Auto:
		return "auto"
	case BFS:
		return "bfs"
	case Dijkstra:
		return "dijkstra"
	case FloydWarshall:
		return "floyd-warshall"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// edgeLengths returns the length of every edge of g, or nil for hop counts. Lengths
// must be non-negative: Dijkstra's and Floyd–Warshall's answers are shortest paths
// only then, and a negative cycle has no shortest path at all. Zero is allowed (two
// distinct nodes at distance 0 still form a shortest-path edge of length 0).
func edgeLengths(g *graph.Graph, weightCol int) ([]float64, error) {
	switch {
	case weightCol == HopCounts:
		return nil, nil
	case weightCol == GraphWeight:
		// graph.New already rejects negative, NaN and infinite weights.
		return g.Weight, nil
	case weightCol < 0 || weightCol >= g.EdgeCols:
		return nil, fmt.Errorf("weight column %d does not exist: the graphs have %d edge feature columns", weightCol, g.EdgeCols)
	}
	m := g.NumEdges()
	w := make([]float64, m)
	for e := 0; e < m; e++ {
		x := g.EdgeFeat[e*g.EdgeCols+weightCol]
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("edge %d (%d–%d) has length %v; shortest-path lengths must be finite and non-negative",
				e, g.EdgeU[e], g.EdgeV[e], x)
		}
		w[e] = x
	}
	return w, nil
}

// chooseAlgorithm picks the all-pairs method for a graph with n nodes and m edges.
// Floyd–Warshall does n³ branch-free updates, Dijkstra about n·(2m+n)·log₂n heap
// and relaxation steps, each about 10 times dearer (BenchmarkAPSP; measurements in
// benchmarks/log/go_core_measurements.md), so Floyd–Warshall wins on small and on
// dense graphs. Its n×n matrix caps it at 2048 nodes (32 MiB).
func chooseAlgorithm(n, m int, weighted bool) Algorithm {
	if !weighted {
		return BFS
	}
	if n <= 2048 && n*n <= 10*(2*m+n)*bits.Len(uint(n)) {
		return FloydWarshall
	}
	return Dijkstra
}

// AllPairs returns the n×n matrix of shortest-path lengths of g, row-major, +Inf
// where no path exists and 0 on the diagonal. weightCol is HopCounts, GraphWeight
// or an edge feature column. It is the reference form of what the kernel computes
// and lets tests compare the three algorithms.
func AllPairs(g *graph.Graph, weightCol int, alg Algorithm) ([]float64, error) {
	w, err := edgeLengths(g, weightCol)
	if err != nil {
		return nil, err
	}
	if alg == Auto {
		alg = chooseAlgorithm(g.N, g.NumEdges(), w != nil)
	}
	n := g.N
	d := make([]float64, n*n)
	switch alg {
	case FloydWarshall:
		floydWarshall(g, w, d)
	case BFS, Dijkstra:
		var s apspState
		for src := 0; src < n; src++ {
			if alg == BFS {
				s.bfs(g, src, d[src*n:(src+1)*n])
			} else {
				s.dijkstra(g, w, src, d[src*n:(src+1)*n])
			}
		}
	default:
		return nil, fmt.Errorf("unknown shortest-path algorithm %v", alg)
	}
	return d, nil
}

// apspState is per-goroutine scratch space reused across sources and graphs.
type apspState struct {
	queue []int32
	heap  distHeap
	done  []bool
	// Buffers of prepGraph: a distance row or matrix, the SP edges and their
	// length ids, distinct lengths, and packed feature keys.
	row, mat []float64
	hops     []int32
	eu, ev   []int32
	ed       []float64
	lid      []int32
	ds       []float64
	keys     []uint64
	counts   []int32
	adj      []uint64 // bitset adjacency for hopPairs
	vis, cur []uint64
	nxt      []uint64
}

// bfs writes hop counts from src into row (len n); unreachable nodes get +Inf.
// Hop counts ignore edge lengths even when the graph has them.
func (s *apspState) bfs(g *graph.Graph, src int, row []float64) {
	if cap(s.hops) < g.N {
		s.hops = make([]int32, g.N)
	}
	h := s.hops[:g.N]
	s.bfsHops(g, src, h)
	for i, x := range h {
		row[i] = float64(x)
		if x < 0 {
			row[i] = math.Inf(1)
		}
	}
}

// bfsHops writes hop counts from src into hops (len n), -1 where unreachable.
// Integers keep the hot loop of the unweighted kernel free of float tests.
func (s *apspState) bfsHops(g *graph.Graph, src int, hops []int32) {
	for i := range hops {
		hops[i] = -1
	}
	s.queue = append(s.queue[:0], int32(src))
	hops[src] = 0
	for h := 0; h < len(s.queue); h++ {
		u := s.queue[h]
		du := hops[u] + 1
		for _, v := range g.Col[g.RowPtr[u]:g.RowPtr[u+1]] {
			if hops[v] < 0 {
				hops[v] = du
				s.queue = append(s.queue, v)
			}
		}
	}
}

// bitsetMaxN is the largest graph whose hop counts hopPairs computes with bitset
// frontiers: each BFS level then costs one OR of a ⌈n/64⌉-word adjacency row per
// frontier node, cheaper than queue-based BFS while rows are a few words long.
const bitsetMaxN = 256

// hopPairs appends every pair u < v of connected nodes and its hop count minus one
// to eu, ev and lid, in increasing u, then increasing distance. Graphs up to
// bitsetMaxN nodes use bit-parallel BFS, larger ones queue-based BFS.
func (s *apspState) hopPairs(g *graph.Graph, eu, ev, lid []int32) ([]int32, []int32, []int32, int32) {
	n := g.N
	maxLid := int32(-1)
	if n > bitsetMaxN {
		if cap(s.hops) < n {
			s.hops = make([]int32, n)
		}
		h := s.hops[:n]
		for u := 0; u < n; u++ {
			s.bfsHops(g, u, h)
			for v := u + 1; v < n; v++ {
				if d := h[v]; d > 0 {
					eu, ev, lid = append(eu, int32(u)), append(ev, int32(v)), append(lid, d-1)
					maxLid = max(maxLid, d-1)
				}
			}
		}
		return eu, ev, lid, maxLid
	}
	if n <= 64 {
		return s.hopPairs64(g, eu, ev, lid)
	}
	w := (n + 63) / 64
	s.adj = slices.Grow(s.adj[:0], n*w)[:n*w]
	clear(s.adj)
	for e := range g.EdgeU {
		u, v := int(g.EdgeU[e]), int(g.EdgeV[e])
		s.adj[u*w+v/64] |= 1 << (v % 64)
		s.adj[v*w+u/64] |= 1 << (u % 64)
	}
	s.vis = slices.Grow(s.vis[:0], w)[:w]
	s.cur = slices.Grow(s.cur[:0], w)[:w]
	s.nxt = slices.Grow(s.nxt[:0], w)[:w]
	vis, cur, nxt := s.vis, s.cur, s.nxt
	for u := 0; u < n; u++ {
		clear(vis)
		clear(cur)
		vis[u/64] |= 1 << (u % 64)
		cur[u/64] |= 1 << (u % 64)
		for d := int32(0); ; d++ {
			clear(nxt)
			for k, word := range cur {
				for ; word != 0; word &= word - 1 {
					row := s.adj[(k*64+bits.TrailingZeros64(word))*w:]
					for x := range nxt {
						nxt[x] |= row[x]
					}
				}
			}
			found := false
			for x := range nxt {
				nxt[x] &^= vis[x]
				vis[x] |= nxt[x]
				found = found || nxt[x] != 0
			}
			if !found {
				break
			}
			// Emit the new nodes above u: in word u/64, drop bits 0..u%64
			// (a shift by 64 is 0 in Go, so u%64 = 63 clears the whole word).
			for k := u / 64; k < w; k++ {
				word := nxt[k]
				if k == u/64 {
					word &^= 1<<(u%64+1) - 1
				}
				for ; word != 0; word &= word - 1 {
					eu, ev, lid = append(eu, int32(u)), append(ev, int32(k*64+bits.TrailingZeros64(word))), append(lid, d)
				}
			}
			maxLid = max(maxLid, d)
			cur, nxt = nxt, cur
		}
	}
	s.cur, s.nxt = cur, nxt
	return eu, ev, lid, maxLid
}

// hopPairs64 is hopPairs for graphs of at most 64 nodes: every node set is one
// machine word, so a BFS level is a handful of register operations.
func (s *apspState) hopPairs64(g *graph.Graph, eu, ev, lid []int32) ([]int32, []int32, []int32, int32) {
	n := g.N
	s.adj = slices.Grow(s.adj[:0], n)[:n]
	adj := s.adj
	clear(adj)
	for e := range g.EdgeU {
		u, v := g.EdgeU[e], g.EdgeV[e]
		adj[u] |= 1 << v
		adj[v] |= 1 << u
	}
	maxLid := int32(-1)
	for u := 0; u < n; u++ {
		vis := uint64(1) << u
		cur := vis
		above := ^uint64(0) << u << 1 // nodes v > u; 0 for u = 63
		for d := int32(0); ; d++ {
			var nxt uint64
			for c := cur; c != 0; c &= c - 1 {
				nxt |= adj[bits.TrailingZeros64(c)]
			}
			nxt &^= vis
			if nxt == 0 {
				break
			}
			vis |= nxt
			for e := nxt & above; e != 0; e &= e - 1 {
				eu, ev, lid = append(eu, int32(u)), append(ev, int32(bits.TrailingZeros64(e))), append(lid, d)
			}
			maxLid = max(maxLid, d)
			cur = nxt
		}
	}
	return eu, ev, lid, maxLid
}

// dijkstra writes shortest distances from src into row with a binary heap and lazy
// deletion; w holds one non-negative length per edge (hop counts when nil).
func (s *apspState) dijkstra(g *graph.Graph, w []float64, src int, row []float64) {
	for i := range row {
		row[i] = math.Inf(1)
	}
	if cap(s.done) < g.N {
		s.done = make([]bool, g.N)
	}
	done := s.done[:g.N]
	clear(done)
	row[src] = 0
	s.heap = append(s.heap[:0], distItem{0, int32(src)})
	for len(s.heap) > 0 {
		it := s.heap.pop()
		u := it.node
		if done[u] {
			continue
		}
		done[u] = true
		for k := g.RowPtr[u]; k < g.RowPtr[u+1]; k++ {
			v := g.Col[k]
			l := 1.0
			if w != nil {
				l = w[g.EdgeOf[k]]
			}
			if nd := it.d + l; nd < row[v] {
				row[v] = nd
				s.heap.push(distItem{nd, v})
			}
		}
	}
}

// floydWarshall fills d (n×n) with all shortest distances. The inner loop is a plain
// min over a contiguous row, which the compiler keeps branch-light.
func floydWarshall(g *graph.Graph, w []float64, d []float64) {
	n := g.N
	for i := range d {
		d[i] = math.Inf(1)
	}
	for i := 0; i < n; i++ {
		d[i*n+i] = 0
	}
	for e := range g.EdgeU {
		u, v := int(g.EdgeU[e]), int(g.EdgeV[e])
		if u == v {
			continue
		}
		l := 1.0
		if w != nil {
			l = w[e]
		}
		// Parallel edges: the shortest one counts.
		if l < d[u*n+v] {
			d[u*n+v], d[v*n+u] = l, l
		}
	}
	for k := 0; k < n; k++ {
		rk := d[k*n : (k+1)*n]
		for i := 0; i < n; i++ {
			dik := d[i*n+k]
			if math.IsInf(dik, 1) {
				continue
			}
			ri := d[i*n : (i+1)*n]
			for j, dkj := range rk {
				ri[j] = min(ri[j], dik+dkj)
			}
		}
	}
}

type distItem struct {
	d    float64
	node int32
}

// distHeap is a binary min-heap of tentative distances for Dijkstra, written out
// rather than through container/heap so that pushes do not box items.
type distHeap []distItem

func (h *distHeap) push(it distItem) {
	a := append(*h, it)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].d <= a[i].d {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
	*h = a
}

func (h *distHeap) pop() distItem {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(a) && a[l].d < a[m].d {
			m = l
		}
		if r < len(a) && a[r].d < a[m].d {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
