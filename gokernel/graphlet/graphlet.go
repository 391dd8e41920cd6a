// Package graphlet computes the graphlet kernel's explicit feature map
// (Shervashidze, Vishwanathan, Petri, Mehlhorn and Borgwardt 2009): each graph
// becomes the vector of counts of its k-node induced subgraphs (graphlets,
// k = 3, 4 or 5) by isomorphism class, counted over all C(n, k) node subsets
// or over random samples of k nodes.
//
// The isomorphism classes of graphs on k nodes (4, 11 and 34 for k = 3, 4,
// 5, connected and disconnected) are numbered once, by a table built at
// start-up, so that column c means the same graphlet in every call: the
// feature vectors of two calls are comparable.
package graphlet

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MinK and MaxK bound the graphlet size k; MaxSamples bounds Options.Samples
// (a sample index is 32 bits).
const (
	MinK       = 3
	MaxK       = 5
	MaxSamples = math.MaxUint32
)

// A graphlet on k nodes is coded by its adjacency bits: pair (i, j), i < j,
// is bit j(j−1)/2 + i, so that adding node j to nodes 0..j−1 adds the bits
// from j(j−1)/2 on (the enumeration builds codes incrementally).
func pairBit(i, j int) uint { return uint(j*(j-1)/2 + i) }

// class is one isomorphism class of graphs on k nodes.
type class struct {
	canon     uint32 // the smallest code of the class
	edges     int
	connected bool
}

// table holds, for one k, the class of every code and the classes in column order.
type table struct {
	classOf []int16 // code → column
	classes []class
}

var tables [MaxK + 1]table

func init() {
	for k := MinK; k <= MaxK; k++ {
		tables[k] = buildTable(k)
	}
}

// buildTable numbers the isomorphism classes on k nodes: by number of edges,
// then by smallest code.
func buildTable(k int) table {
	npairs := k * (k - 1) / 2
	perms := permutations(k)
	canon := make([]uint32, 1<<npairs)
	for code := range canon {
		best := uint32(math.MaxUint32)
		for _, p := range perms {
			best = min(best, permute(uint32(code), p))
		}
		canon[code] = best
	}
	var classes []class
	for code, c := range canon {
		if uint32(code) == c {
			classes = append(classes, class{canon: c, edges: bits.OnesCount32(c), connected: connectedCode(c, k)})
		}
	}
	slices.SortFunc(classes, func(a, b class) int {
		return cmp.Or(cmp.Compare(a.edges, b.edges), cmp.Compare(a.canon, b.canon))
	})
	col := map[uint32]int16{}
	for i, c := range classes {
		col[c.canon] = int16(i)
	}
	t := table{classOf: make([]int16, len(canon)), classes: classes}
	for code, c := range canon {
		t.classOf[code] = col[c]
	}
	return t
}

// permutations lists the permutations of 0..k−1.
func permutations(k int) [][]int {
	var out [][]int
	var rec func(p []int, used int)
	rec = func(p []int, used int) {
		if len(p) == k {
			out = append(out, slices.Clone(p))
			return
		}
		for v := range k {
			if used&(1<<v) == 0 {
				rec(append(p, v), used|1<<v)
			}
		}
	}
	rec(nil, 0)
	return out
}

// permute relabels node i of code as p[i].
func permute(code uint32, p []int) uint32 {
	var out uint32
	for j := 1; j < len(p); j++ {
		for i := range j {
			if code>>pairBit(i, j)&1 != 0 {
				a, b := min(p[i], p[j]), max(p[i], p[j])
				out |= 1 << pairBit(a, b)
			}
		}
	}
	return out
}

func hasEdge(code uint32, i, j int) bool {
	return code>>pairBit(min(i, j), max(i, j))&1 != 0
}

// connectedCode says whether the graph on k nodes coded by code is connected.
func connectedCode(code uint32, k int) bool {
	seen := 1
	for changed := true; changed; {
		changed = false
		for i := range k {
			for j := range k {
				if i != j && seen&(1<<i) != 0 && seen&(1<<j) == 0 && hasEdge(code, i, j) {
					seen |= 1 << j
					changed = true
				}
			}
		}
	}
	return seen == 1<<k-1
}

// NumClasses returns the number of isomorphism classes of graphs on k nodes
// (the number of feature columns): 4, 11 or 34 for k = 3, 4, 5.
func NumClasses(k int) int {
	if k < MinK || k > MaxK {
		return 0
	}
	return len(tables[k].classes)
}

// Class returns the graphlet of column c for size k: its edges as node pairs
// (i, j), i < j, of nodes 0..k−1, and whether it is connected.
func Class(k, c int) (edges [][2]int, connected bool) {
	cl := tables[k].classes[c]
	for j := 1; j < k; j++ {
		for i := range j {
			if hasEdge(cl.canon, i, j) {
				edges = append(edges, [2]int{i, j})
			}
		}
	}
	return edges, cl.connected
}

// Options configures Features.
type Options struct {
	// K is the graphlet size, MinK..MaxK.
	K int
	// Samples is the number of k-node subsets drawn per graph (uniformly, with
	// replacement between draws; at most MaxSamples); 0 counts all C(n, k)
	// subsets exactly.
	Samples int
	// Connected counts only the connected graphlets (the other columns stay
	// empty; a sample that falls on a disconnected one is not counted).
	Connected bool
	// Seed, with each graph's structure (StructureHash), seeds the samples
	// drawn from that graph: a graph's features do not depend on the call.
	Seed uint64
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// Features returns the graphlet count matrix of graphs: row g counts, for
// every isomorphism class c of graphs on K nodes (column c, Class), the
// K-node subsets of graph g's nodes whose induced subgraph is in class c —
// all of them, or those among Samples random draws. Self-loops, edge weights
// and features play no part. A graph with fewer than K nodes has an empty
// row. Exact counts must fit 32 bits: C(n, K) < 2^32 (n ≤ 2,954 for K = 3,
// 568 for K = 4, 222 for K = 5), or Features returns an error naming the graph.
func Features(graphs []*graph.Graph, opt Options) (*sparsegram.Features, error) {
	if opt.K < MinK || opt.K > MaxK {
		return nil, fmt.Errorf("graphlet size k must be in [%d, %d], got %d", MinK, MaxK, opt.K)
	}
	if opt.Samples < 0 || opt.Samples > MaxSamples {
		return nil, fmt.Errorf("samples must be in [0, 2^32), got %d", opt.Samples)
	}
	if opt.Samples == 0 {
		for g, gr := range graphs {
			if binomial(gr.N, opt.K) > math.MaxUint32 {
				return nil, fmt.Errorf("graph %d: %d nodes have more than 2^32 subsets of %d nodes to count exactly; sample them instead", g, gr.N, opt.K)
			}
		}
	}
	t := &tables[opt.K]
	rows := make([][]uint32, len(graphs))
	err := schedule.Run(opt.Control, len(graphs), opt.NJobs, 1, func(_, g int) error {
		counts := make([]uint32, len(t.classes))
		gr := graphs[g]
		if gr.N >= opt.K {
			codes := make([]uint64, 1<<(opt.K*(opt.K-1)/2))
			if opt.Samples == 0 {
				exact(gr, opt.K, codes)
			} else {
				sample(gr, opt.K, opt.Samples, opt.Seed, codes)
			}
			for code, n := range codes {
				counts[t.classOf[code]] += uint32(n)
			}
		}
		if opt.Connected {
			for c, cl := range t.classes {
				if !cl.connected {
					counts[c] = 0
				}
			}
		}
		rows[g] = counts
		return nil
	})
	if err != nil {
		return nil, err
	}
	f := &sparsegram.Features{NumCols: len(t.classes), Ptr: make([]int, 1, len(graphs)+1)}
	for _, counts := range rows {
		for c, n := range counts {
			if n > 0 {
				f.Col = append(f.Col, int32(c))
				f.Val = append(f.Val, n)
			}
		}
		f.Ptr = append(f.Ptr, len(f.Col))
	}
	return f, nil
}

// binomial is C(n, k), saturated at MaxUint64 / 2.
func binomial(n, k int) uint64 {
	if k < 0 || k > n {
		return 0
	}
	r := uint64(1)
	for i := 1; i <= k; i++ {
		hi, lo := bits.Mul64(r, uint64(n-k+i))
		if hi != 0 || lo > math.MaxUint64/2 {
			return math.MaxUint64 / 2
		}
		r = lo / uint64(i)
	}
	return r
}

// adjacency is a dense bit matrix of a graph's edges, self-loops left out.
type adjacency struct {
	words int
	bits  []uint64
}

func newAdjacency(gr *graph.Graph) adjacency {
	a := adjacency{words: (gr.N + 63) / 64}
	a.bits = make([]uint64, gr.N*a.words)
	for e := range gr.EdgeU {
		u, v := int(gr.EdgeU[e]), int(gr.EdgeV[e])
		if u != v {
			a.bits[u*a.words+v/64] |= 1 << (v % 64)
			a.bits[v*a.words+u/64] |= 1 << (u % 64)
		}
	}
	return a
}

func (a adjacency) has(u, v int) bool { return a.bits[u*a.words+v/64]>>(v%64)&1 != 0 }

// exact adds to codes[code] the number of k-subsets v0 < … < v(k−1) of gr's
// nodes whose induced subgraph has that code (node i of the code is v_i).
func exact(gr *graph.Graph, k int, codes []uint64) {
	a := newAdjacency(gr)
	var v [MaxK]int
	var rec func(d, from int, code uint32)
	rec = func(d, from int, code uint32) {
		if d == k {
			codes[code]++
			return
		}
		shift := pairBit(0, d)
		for x := from; x <= gr.N-(k-d); x++ {
			var add uint32
			for i := range d {
				if a.has(v[i], x) {
					add |= 1 << i
				}
			}
			v[d] = x
			rec(d+1, x+1, code|add<<shift)
		}
	}
	rec(0, 0, 0)
}

// sample adds to codes the codes of samples random k-subsets of gr's nodes,
// drawn from a generator seeded by seed and gr's structure.
func sample(gr *graph.Graph, k, samples int, seed uint64, codes []uint64) {
	rng := rand.New(rand.NewPCG(seed, StructureHash(gr)))
	nb := neighbours(gr)
	var v [MaxK]int
	for range samples {
		// Floyd's algorithm: k distinct nodes, uniformly.
		for d := range k {
			j := gr.N - k + d
			x := rng.IntN(j + 1)
			if slices.Contains(v[:d], x) {
				x = j
			}
			v[d] = x
		}
		var code uint32
		for j := 1; j < k; j++ {
			for i := range j {
				if _, ok := slices.BinarySearch(nb[v[i]], int32(v[j])); ok {
					code |= 1 << pairBit(i, j)
				}
			}
		}
		codes[code]++
	}
}

// neighbours returns each node's neighbours, sorted, self-loops left out.
func neighbours(gr *graph.Graph) [][]int32 {
	nb := make([][]int32, gr.N)
	for u := range gr.N {
		for _, w := range gr.Col[gr.RowPtr[u]:gr.RowPtr[u+1]] {
			if int(w) != u {
				nb[u] = append(nb[u], w)
			}
		}
		slices.Sort(nb[u])
	}
	return nb
}

// StructureHash is a 64-bit hash of gr's node count and edge set (each edge
// as its sorted endpoint pair, in sorted order; self-loops included, weights
// and features not): the same for the same graph in every call and process,
// whatever order its edges were listed in.
func StructureHash(gr *graph.Graph) uint64 {
	pairs := make([]uint64, len(gr.EdgeU))
	for e := range pairs {
		u, v := uint64(uint32(gr.EdgeU[e])), uint64(uint32(gr.EdgeV[e]))
		pairs[e] = min(u, v)<<32 | max(u, v)
	}
	slices.Sort(pairs)
	h := uint64(14695981039346656037)
	mix := func(w uint64) {
		for range 8 {
			h ^= w & 0xff
			h *= 1099511628211
			w >>= 8
		}
	}
	mix(uint64(gr.N))
	for _, p := range pairs {
		mix(p)
	}
	return h
}
