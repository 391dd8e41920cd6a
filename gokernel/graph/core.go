package graph

// CoreNumbers returns the core number of every node of g: the largest k such
// that the node belongs to the k-core, the maximal subgraph whose nodes all
// have degree ≥ k within it. Degrees count distinct neighbours other than the
// node itself, so a self-loop adds nothing (a loop does not make a node
// harder to peel). It runs the bucket algorithm of Batagelj and Zaversnik
// (2003) in O(N + E); the core framework (Nikolentzos et al. 2018) compares
// graphs by their i-cores, the nodes of core number ≥ i.
func (g *Graph) CoreNumbers() []int32 {
	n := g.N
	deg := make([]int32, n)
	maxDeg := int32(0)
	for v := 0; v < n; v++ {
		for p := g.RowPtr[v]; p < g.RowPtr[v+1]; p++ {
			if int(g.Col[p]) != v {
				deg[v]++
			}
		}
		maxDeg = max(maxDeg, deg[v])
	}
	// Nodes sorted by degree (bin[d]: where degree d starts), pos[v] v's place.
	bin := make([]int32, maxDeg+2)
	for _, d := range deg {
		bin[d+1]++
	}
	for d := int32(0); d <= maxDeg; d++ {
		bin[d+1] += bin[d]
	}
	order := make([]int32, n)
	pos := make([]int32, n)
	fill := append([]int32(nil), bin[:maxDeg+1]...)
	for v, d := range deg {
		pos[v] = fill[d]
		order[pos[v]] = int32(v)
		fill[d]++
	}
	// Peel the node of least current degree; each neighbour of higher degree
	// moves one down, swapped to the front of its bin.
	for i := 0; i < n; i++ {
		v := order[i]
		for p := g.RowPtr[v]; p < g.RowPtr[v+1]; p++ {
			u := g.Col[p]
			if u == v || deg[u] <= deg[v] {
				continue
			}
			du := deg[u]
			w := order[bin[du]] // the first node of u's bin
			if u != w {
				pos[u], pos[w] = pos[w], pos[u]
				order[pos[u]], order[pos[w]] = u, w
			}
			bin[du]++
			deg[u]--
		}
	}
	return deg
}
