package spkernel

import (
	"cmp"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// dirac describes a base kernel of the form scale·[x_c = y_c for every c in cols]:
// an exact-match kernel, possibly over several columns and scaled. Such kernels
// turn the shortest-path kernel into a dot product of count vectors, so
// recognising them lets Gram skip the |SP|·|SP'| loop.
type dirac struct {
	cols  []int // sorted, distinct; empty: every pair matches (a constant kernel)
	scale float64
}

// diracOf reports whether k is a (scaled) exact-match kernel. nil is the constant 1
// ("unlabeled"). Products multiply scales and join columns; normalizing a
// positive-scaled exact match gives the plain exact match.
func diracOf(k microkernel.Kernel) (dirac, bool) {
	switch k := k.(type) {
	case nil:
		return dirac{scale: 1}, true
	case *microkernel.Constant:
		return dirac{scale: k.C}, true
	case *microkernel.KroneckerDelta:
		if k.H != 0 {
			return dirac{}, false
		}
		d := dirac{scale: 1}
		for c := k.Col; c < k.Col+k.Width; c++ {
			d.cols = append(d.cols, c)
		}
		return d, true
	case *microkernel.Product:
		d := dirac{scale: 1}
		for _, t := range k.Terms {
			td, ok := diracOf(t)
			if !ok {
				return dirac{}, false
			}
			d.scale *= td.scale
			d.cols = append(d.cols, td.cols...)
		}
		slices.Sort(d.cols)
		d.cols = slices.Compact(d.cols)
		return d, true
	case *microkernel.Normalized:
		d, ok := diracOf(k.K)
		if !ok {
			return dirac{}, false
		}
		// k(x,x) = scale for every x, so the normalized kernel is the bare match,
		// or identically 0 when scale ≤ 0 (Normalized's convention).
		if d.scale > 0 {
			d.scale = 1
		} else {
			d.scale, d.cols = 0, nil
		}
		return d, true
	}
	return dirac{}, false
}

// rowKey maps feature rows (restricted to some columns) to dense class ids, in
// order of first appearance. With fold set, rows equal in value on those columns
// share a class: -0 and +0 are one value, as for the exact-match kernels, which
// compare with ==. Without it rows must be equal bit for bit, so that a kernel
// evaluated on one row of a class gives exactly its value on every other row of
// the class, whatever kernel it is.
type rowKey struct {
	cols  []int
	fold  bool
	one   map[uint64]int32
	multi map[string]int32
	buf   []byte
}

func newRowKey(cols []int, fold bool) *rowKey {
	r := &rowKey{cols: cols, fold: fold}
	if len(cols) == 1 {
		r.one = make(map[uint64]int32)
	} else {
		r.multi = make(map[string]int32)
	}
	return r
}

// bits returns the key bits of x: those of +0 for -0 when folding.
func (r *rowKey) bits(x float64) uint64 {
	if r.fold {
		x += 0 // -0 → +0
	}
	return math.Float64bits(x)
}

// id returns the class of row, assigning the next free id to an unseen value.
func (r *rowKey) id(row []float64) int32 {
	switch len(r.cols) {
	case 0:
		return 0
	case 1:
		x := r.bits(row[r.cols[0]])
		id, ok := r.one[x]
		if !ok {
			id = int32(len(r.one))
			r.one[x] = id
		}
		return id
	}
	r.buf = r.buf[:0]
	for _, c := range r.cols {
		b := r.bits(row[c])
		for s := 0; s < 64; s += 8 {
			r.buf = append(r.buf, byte(b>>s))
		}
	}
	id, ok := r.multi[string(r.buf)]
	if !ok {
		id = int32(len(r.multi))
		r.multi[string(r.buf)] = id
	}
	return id
}

// compare orders rows by their values on the key's columns, in column order.
// Rows of different classes of a folding key never compare equal (features are
// never NaN: graph.New rejects them).
func (r *rowKey) compare(x, y []float64) int {
	for _, c := range r.cols {
		if d := cmp.Compare(x[c], y[c]); d != 0 {
			return d
		}
	}
	return 0
}

// count returns the number of classes assigned so far.
func (r *rowKey) count() int {
	switch len(r.cols) {
	case 0:
		return 1
	case 1:
		return len(r.one)
	}
	return len(r.multi)
}

// seqCols returns 0, 1, …, n-1.
func seqCols(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = i
	}
	return c
}
