package graph

import (
	"cmp"
	"math"
)

// Content order: a total order on graphs (with per-node or per-edge vectors
// that travel with them) that depends on their content alone, never on where
// they are in a call or in memory. Kernels solve each pair in the orientation
// it gives, so that K(G, G') is the same arithmetic, bit for bit, in every
// call: symmetric or not, whichever side each graph is on.
//
// Values are compared as numbers (with -0 before +0), not as bit patterns or
// hashes: a boundary that codes string labels by their rank among the call's
// labels (graphgram's Python side does) gives the same label different codes
// in different calls, but always in the same order, and the content order of
// two graphs is then the same in every call.

// SortableBits maps x to a word whose unsigned order is x's numeric order
// (-0 before +0, NaNs after +Inf or before -Inf by sign).
func SortableBits(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// contentWords calls f with the words of g's content, then of each of extra
// (its length first, so that nil, empty and different splits differ): counts,
// edges (endpoints and weight), edge features and node features, floats as
// SortableBits; the fields CompareContent compares, in its order. The
// adjacency in CSR form follows from these (New builds it).
func contentWords(g *Graph, extra [][]float64, f func(uint64)) {
	floats := func(xs []float64) {
		for _, x := range xs {
			f(SortableBits(x))
		}
	}
	f(uint64(g.N))
	f(uint64(g.NodeCols))
	f(uint64(g.EdgeCols))
	f(uint64(len(g.Weight)))
	for e := range g.Weight {
		f(uint64(uint32(g.EdgeU[e]))<<32 | uint64(uint32(g.EdgeV[e])))
		f(SortableBits(g.Weight[e]))
	}
	floats(g.EdgeFeat)
	floats(g.NodeFeat)
	for _, v := range extra {
		if v == nil {
			f(math.MaxUint64)
			continue
		}
		f(uint64(len(v)))
		floats(v)
	}
}

// CompareContent orders (a, extraA) and (b, extraB) by content: counts,
// edges (endpoints, weight), edge features, node features, then the vectors
// extra (nil before any vector, then by length and values), floats compared
// as numbers (SortableBits). It returns 0 only when the two have the same
// content, bit for bit, so that either orientation of their pair is the same
// arithmetic. Graphs of different sizes differ in the first fields, so most
// comparisons end there.
func CompareContent(a *Graph, extraA [][]float64, b *Graph, extraB [][]float64) int {
	if c := cmp.Or(cmp.Compare(a.N, b.N), cmp.Compare(a.NodeCols, b.NodeCols), cmp.Compare(a.EdgeCols, b.EdgeCols),
		cmp.Compare(len(a.Weight), len(b.Weight))); c != 0 {
		return c
	}
	for e := range a.Weight {
		if c := cmp.Or(cmp.Compare(a.EdgeU[e], b.EdgeU[e]), cmp.Compare(a.EdgeV[e], b.EdgeV[e]),
			cmp.Compare(SortableBits(a.Weight[e]), SortableBits(b.Weight[e]))); c != 0 {
			return c
		}
	}
	if c := cmp.Or(CompareFloats(a.EdgeFeat, b.EdgeFeat), CompareFloats(a.NodeFeat, b.NodeFeat),
		cmp.Compare(len(extraA), len(extraB))); c != 0 {
		return c
	}
	for k := range extraA {
		x, y := extraA[k], extraB[k]
		if x == nil || y == nil {
			if c := cmp.Compare(boolInt(x != nil), boolInt(y != nil)); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(len(x), len(y)); c != 0 {
			return c
		}
		if c := CompareFloats(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// CompareFloats compares x and y (of equal length) value by value, as
// SortableBits: -0 before +0, and the same order under any increasing
// recoding of the values.
func CompareFloats(x, y []float64) int {
	for i := range x {
		if c := cmp.Compare(SortableBits(x[i]), SortableBits(y[i])); c != 0 {
			return c
		}
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ContentFingerprint hashes g's content and the vectors extra (a multiply-xor
// step per content word, then the splitmix64 finalizer): equal content, equal
// fingerprints, in every process. It buckets graphs for an equality test; it
// is no order.
func ContentFingerprint(g *Graph, extra ...[]float64) uint64 {
	h := uint64(14695981039346656037)
	contentWords(g, extra, func(w uint64) {
		h = (h ^ w) * 0x9e3779b97f4a7c15
		h ^= h >> 32
	})
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}
