package sparsegram

import (
	"cmp"
	"slices"
)

// RowOrder says in which order the engine processes the rows.
type RowOrder int

const (
	// DefaultOrder is the measured best, currently KeepOrder (see Options.Order).
	DefaultOrder RowOrder = iota
	// KeepOrder processes rows in the caller's order.
	KeepOrder
	// MinHashOrder groups rows whose sparse (non-panel) features are alike,
	// by sorting on MinHash signatures, so that consecutive rows reuse the
	// same inverted lists and fill nearby output columns (the row-reordering
	// idea of Jiang et al., PPoPP 2020). The result is in the caller's order.
	MinHashOrder
)

// minHashes is the signature length: rows sort by their first minimum, ties
// (rows sharing the feature of least hash) by the next, and so on.
const minHashes = 4

// minHashOrder returns the rows of f ordered by their MinHash signatures over
// the columns where panelCol is -1; empty rows go last, ties by row.
func minHashOrder(f *Features, panelCol []int32) []int32 {
	n := f.Rows()
	sig := make([][minHashes]uint64, n)
	for r := range n {
		s := &sig[r]
		for h := range s {
			s[h] = ^uint64(0)
		}
		for k := f.Ptr[r]; k < f.Ptr[r+1]; k++ {
			c := f.Col[k]
			if panelCol[c] >= 0 {
				continue
			}
			for h := range s {
				s[h] = min(s[h], mix64(uint64(c)^(uint64(h+1)*0x9e3779b97f4a7c15)))
			}
		}
	}
	rows := identity(n)
	slices.SortFunc(rows, func(a, b int32) int {
		for h := range minHashes {
			if c := cmp.Compare(sig[a][h], sig[b][h]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	})
	return rows
}

func identity(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}

// mix64 is the splitmix64 finalizer, a fast bijective hash of 64-bit words.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// defaultOrder is what DefaultOrder means. BenchmarkOrder (symmetric Gram of
// ~4,100 rows, default panel, NJobs = all 2 cores, load average ~1 from
// another job, GOEXPERIMENT=simd with AVX-512; median of 3), keep vs MinHash:
//
//	NCI1 WL (h = 5)  SumProduct 48 vs 84 ms, SumMin 46 vs 89 ms
//	NCI1-like        SumProduct 54 vs 110 ms, SumMin 57 vs 112 ms
//	no panel, NCI1   SumProduct 83 vs 148 ms, SumMin 129 vs 145 ms (best of 5)
//
// Grouping rows does not pay here: the inverted lists already stream, the
// output row being scattered into stays in cache in either order, and a
// permuted order turns the tile stores and the mirror into scattered writes
// over the 134 MB result. So rows are kept in the caller's order.
const defaultOrder = KeepOrder
