// Package reorder renumbers the nodes of a graph so that its adjacency matrix,
// cut into 8×8 tiles (the octile format of package octile), has few non-empty
// tiles and those tiles are dense. The cost of a tiled product-graph mat-vec
// grows with the number of non-empty tile pairs, so fewer, denser tiles mean less
// work and better vector-unit use.
//
// Four orders are offered: the natural one (the input numbering), reverse
// Cuthill–McKee (RCM), a recursive bisection into parts of 8 nodes refined to
// minimize the tiles touched by cut edges (Partition), and the row clustering of
// Jiang et al. (LSH): Jaccard similarity of adjacency rows, MinHash/LSH candidate
// pairs and greedy union-find clustering up to 8 rows. Best tries them all.
//
// # Permutation convention
//
// Every order is returned as a permutation perm of length g.N with
// perm[new] = old: node perm[k] of the input becomes node k of the output, so
// Permute(g, perm).Node(k) is g.Node(perm[k]). A vector v indexed by the
// reordered nodes maps back as orig[perm[k]] = v[k].
//
// All orders are deterministic: ties are broken by node index and the hashing in
// LSH uses a fixed seed, so the same graph always gives the same order.
package reorder

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// Method names a node order.
type Method int

// The node orders, listed from cheapest to most expensive to compute; Best
// breaks ties in favour of the cheaper one.
const (
	Natural Method = iota
	ByRCM
	ByLSH
	ByPartition
)

// Methods lists every Method in increasing cost, the order Best tries them.
var Methods = []Method{Natural, ByRCM, ByLSH, ByPartition}

// String returns the method's short name: natural, rcm, lsh or partition.
func (m Method) String() string {
	switch m {
	case Natural:
		return "natural"
	case ByRCM:
		return "rcm"
	case ByLSH:
		return "lsh"
	case ByPartition:
		return "partition"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Order returns the permutation computed by m with default options.
func Order(g *graph.Graph, m Method) []int {
	switch m {
	case Natural:
		return Identity(g.N)
	case ByRCM:
		return RCM(g)
	case ByLSH:
		return LSH(g, LSHOptions{})
	case ByPartition:
		return Partition(g)
	}
	panic(fmt.Sprintf("reorder: unknown method %d", int(m)))
}

// Best computes every order in Methods and returns the one whose permuted
// adjacency has the fewest non-empty tiles, with its method. Ties go to the
// cheaper method, so a graph that no order improves keeps its natural order.
func Best(g *graph.Graph) ([]int, Method) {
	var best []int
	bestM, bestT := Natural, -1
	for _, m := range Methods {
		p := Order(g, m)
		t, _ := PermutedTileStats(g, p)
		if bestT < 0 || t < bestT {
			best, bestM, bestT = p, m, t
		}
	}
	return best, bestM
}

// Identity returns the permutation 0, 1, …, n-1.
func Identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// Inverse returns inv with inv[perm[k]] = k, that is inv[old] = new. It panics
// if perm is not a permutation of 0..len(perm)-1.
func Inverse(perm []int) []int {
	inv := make([]int, len(perm))
	for i := range inv {
		inv[i] = -1
	}
	for k, old := range perm {
		if old < 0 || old >= len(perm) || inv[old] >= 0 {
			panic(fmt.Sprintf("reorder: not a permutation: entry %d is %d", k, old))
		}
		inv[old] = k
	}
	return inv
}

// Permute returns a relabeled copy of g in which node k is node perm[k] of g.
// Node feature rows move with their nodes; edges keep their index, so weights
// and edge feature rows are carried unchanged and only the endpoints are
// renamed. It panics if perm is not a permutation of 0..g.N-1.
func Permute(g *graph.Graph, perm []int) *graph.Graph {
	if len(perm) != g.N {
		panic(fmt.Sprintf("reorder: permutation of length %d for %d nodes", len(perm), g.N))
	}
	inv := Inverse(perm)
	m := g.NumEdges()
	edges := make([]int64, 2*m)
	for e := 0; e < m; e++ {
		edges[2*e] = int64(inv[g.EdgeU[e]])
		edges[2*e+1] = int64(inv[g.EdgeV[e]])
	}
	nf := make([]float64, len(g.NodeFeat))
	c := g.NodeCols
	for k, old := range perm {
		copy(nf[k*c:(k+1)*c], g.NodeFeat[old*c:(old+1)*c])
	}
	h, err := graph.New(g.N, edges, g.Weight, nf, c, g.EdgeFeat, g.EdgeCols)
	if err != nil {
		// g was valid and a permutation keeps it so.
		panic("reorder: permuted graph invalid: " + err.Error())
	}
	return h
}

// TileStats returns the number of non-empty 8×8 tiles of g's adjacency matrix
// (node i in tile row i/8) and their mean density: distinct stored positions
// divided by 64 per tile, averaged over the non-empty tiles (0 when there are
// none). A self-loop fills one diagonal position.
func TileStats(g *graph.Graph) (tiles int, meanDensity float64) {
	return PermutedTileStats(g, nil)
}

// PermutedTileStats returns TileStats(Permute(g, perm)) without building the
// permuted graph. A nil perm means the natural order.
func PermutedTileStats(g *graph.Graph, perm []int) (tiles int, meanDensity float64) {
	var inv []int
	if perm != nil {
		inv = Inverse(perm)
	}
	at := func(i int) int {
		if inv == nil {
			return i
		}
		return inv[i]
	}
	nt := (g.N + 7) / 8
	mark := make([]int, nt)
	mask := make([]uint64, nt)
	var used []int
	nnz := 0
	for it := 0; it < nt; it++ {
		used = used[:0]
		for r := 0; r < 8 && 8*it+r < g.N; r++ {
			old := 8*it + r
			if perm != nil {
				old = perm[old]
			}
			for k := g.RowPtr[old]; k < g.RowPtr[old+1]; k++ {
				j := at(int(g.Col[k]))
				jt := j / 8
				if mark[jt] != it+1 {
					mark[jt], mask[jt] = it+1, 0
					used = append(used, jt)
				}
				mask[jt] |= 1 << uint(8*r+j%8)
			}
		}
		tiles += len(used)
		for _, jt := range used {
			nnz += bits.OnesCount64(mask[jt])
		}
	}
	if tiles == 0 {
		return 0, 0
	}
	return tiles, float64(nnz) / float64(64*tiles)
}

// simpleAdj returns the adjacency of g without self-loops or repeated
// neighbours, each row sorted: the neighbours of v are adj[ptr[v]:ptr[v+1]].
// The orders only look at structure, so weights and multiplicities are dropped.
func simpleAdj(g *graph.Graph) (ptr, adj []int32) {
	ptr = make([]int32, g.N+1)
	adj = make([]int32, 0, len(g.Col))
	for v := 0; v < g.N; v++ {
		start := len(adj)
		for k := g.RowPtr[v]; k < g.RowPtr[v+1]; k++ {
			if u := g.Col[k]; int(u) != v {
				adj = append(adj, u)
			}
		}
		row := adj[start:]
		slices.Sort(row)
		adj = adj[:start+len(slices.Compact(row))]
		ptr[v+1] = int32(len(adj))
	}
	return ptr, adj
}
