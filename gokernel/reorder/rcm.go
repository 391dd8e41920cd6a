package reorder

import (
	"cmp"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// RCM returns the reverse Cuthill–McKee order of g: a breadth-first numbering
// from a pseudo-peripheral node, visiting neighbours by increasing degree, then
// reversed. It keeps the nonzeros near the diagonal, so they fall into few tiles
// along the tile diagonal. Each connected component is numbered in turn, starting
// with the component holding the lowest-degree node (ties by node index);
// isolated nodes thus come last after the reversal.
func RCM(g *graph.Graph) []int {
	ptr, adj := simpleAdj(g)
	n := g.N
	deg := func(v int32) int32 { return ptr[v+1] - ptr[v] }
	byDegree := func(a, b int32) int {
		if c := cmp.Compare(deg(a), deg(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	starts := make([]int32, n)
	for i := range starts {
		starts[i] = int32(i)
	}
	slices.SortFunc(starts, byDegree)

	b := newBFS(n)
	visited := make([]bool, n)
	order := make([]int32, 0, n)
	for _, s := range starts {
		if visited[s] {
			continue
		}
		s = b.peripheral(s, ptr, adj, nil)
		head := len(order)
		order = append(order, s)
		visited[s] = true
		for head < len(order) {
			u := order[head]
			head++
			first := len(order)
			for _, v := range adj[ptr[u]:ptr[u+1]] {
				if !visited[v] {
					visited[v] = true
					order = append(order, v)
				}
			}
			slices.SortFunc(order[first:], byDegree)
		}
	}
	perm := make([]int, n)
	for k, v := range order {
		perm[n-1-k] = int(v)
	}
	return perm
}

// bfs is reusable breadth-first-search scratch: level numbers stamped with a
// generation so that no clearing pass is needed between searches.
type bfs struct {
	level []int32
	stamp []int32
	gen   int32
	queue []int32
}

func newBFS(n int) *bfs {
	return &bfs{level: make([]int32, n), stamp: make([]int32, n), queue: make([]int32, 0, n)}
}

// run does a breadth-first search from s restricted to nodes with in(v) true
// (all nodes when in is nil) and returns the visit order; levels are in b.level.
func (b *bfs) run(s int32, ptr, adj []int32, in func(int32) bool) []int32 {
	b.gen++
	q := b.queue[:0]
	q = append(q, s)
	b.stamp[s], b.level[s] = b.gen, 0
	for head := 0; head < len(q); head++ {
		u := q[head]
		for _, v := range adj[ptr[u]:ptr[u+1]] {
			if b.stamp[v] == b.gen || (in != nil && !in(v)) {
				continue
			}
			b.stamp[v], b.level[v] = b.gen, b.level[u]+1
			q = append(q, v)
		}
	}
	b.queue = q
	return q
}

// peripheral returns a pseudo-peripheral node of s's component (George and Liu):
// repeatedly jump to a lowest-degree node of the last BFS level while that
// increases the eccentricity. Such a start makes BFS levels narrow, which keeps
// the profile (and the tile band) small.
func (b *bfs) peripheral(s int32, ptr, adj []int32, in func(int32) bool) int32 {
	deg := func(v int32) int32 {
		if in == nil {
			return ptr[v+1] - ptr[v]
		}
		d := int32(0)
		for _, u := range adj[ptr[v]:ptr[v+1]] {
			if in(u) {
				d++
			}
		}
		return d
	}
	q := b.run(s, ptr, adj, in)
	ecc := b.level[q[len(q)-1]]
	for iter := 0; iter < 16; iter++ {
		// Lowest-degree node of the last level, lowest index on ties.
		best := int32(-1)
		for k := len(q) - 1; k >= 0 && b.level[q[k]] == ecc; k-- {
			v := q[k]
			if best < 0 || deg(v) < deg(best) || (deg(v) == deg(best) && v < best) {
				best = v
			}
		}
		q = b.run(best, ptr, adj, in)
		e := b.level[q[len(q)-1]]
		if e <= ecc {
			return s
		}
		s, ecc = best, e
	}
	return s
}
