package schedule

import (
	"errors"
	"fmt"
	"iter"
	"sort"
)

// Shape says which entries of a kernel matrix a Grid holds.
type Shape int

const (
	// Cross holds every entry (i, j) of K(X, Y), a len(X)×len(Y) matrix.
	Cross Shape = iota
	// Upper holds the entries i ≤ j of a symmetric K(X, X); RunPairs mirrors
	// each into (j, i).
	Upper
	// Diagonal holds the entries (i, i) of K(X, X), written to a vector.
	Diagonal
)

// Grid is the set of kernel-matrix entries that RunPairs computes and the order
// in which it hands them out, described by two orders of graphs rather than
// listed: a list of the pairs of a symmetric call on a few thousand graphs would
// take more memory than the matrix.
//
// The entries are visited row by row over Rows. A Cross row i is paired with
// every j of Cols, in that order; an Upper row at position a of Rows is paired
// with Rows[a:], each pair given as (min, max) so that i ≤ j; a Diagonal row i
// is the single entry (i, i).
type Grid struct {
	Shape Shape
	// Rows is the order of the graphs of X, a permutation of [0, len(X)).
	Rows []int
	// Cols is the order of the graphs of Y, a permutation of [0, len(Y)); read
	// only by Cross.
	Cols []int
}

// NewGrid returns the grid of K(X, Y) with nx graphs in X and ny in Y, in row-major
// order: Upper (ny is then ignored) when symmetric, else Cross.
func NewGrid(nx, ny int, symmetric bool) Grid {
	if symmetric {
		return Grid{Shape: Upper, Rows: identity(nx)}
	}
	return Grid{Shape: Cross, Rows: identity(nx), Cols: identity(ny)}
}

// DiagGrid returns the grid of the diagonal of K(X, X) for n graphs.
func DiagGrid(n int) Grid { return Grid{Shape: Diagonal, Rows: identity(n)} }

// GridLargestFirst returns the grid of NewGrid(len(sizeX), len(sizeY), symmetric)
// ordered so that the costliest entries start first when the cost of (i, j) grows
// with both sizeX[i] and sizeY[j] (e.g. their product): rows by decreasing sizeX,
// and in each row the partners by decreasing sizeY (by decreasing sizeX for
// Upper, which ignores sizeY). Ties keep index order. Only the n + m sizes are
// sorted, in time n·log n, where sorting every pair by cost would take seconds
// that nothing could interrupt.
func GridLargestFirst(sizeX, sizeY []float64, symmetric bool) Grid {
	byDecreasing := func(size []float64) []int {
		idx := identity(len(size))
		sort.SliceStable(idx, func(a, b int) bool { return size[idx[a]] > size[idx[b]] })
		return idx
	}
	if symmetric {
		return Grid{Shape: Upper, Rows: byDecreasing(sizeX)}
	}
	return Grid{Shape: Cross, Rows: byDecreasing(sizeX), Cols: byDecreasing(sizeY)}
}

func identity(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// Len returns the number of entries of g.
func (g Grid) Len() int {
	switch g.Shape {
	case Cross:
		return len(g.Rows) * len(g.Cols)
	case Upper:
		return NumPairs(len(g.Rows), 0, true)
	}
	return len(g.Rows)
}

// outLen returns the length of the output of g: a row-major matrix, or a vector
// for Diagonal.
func (g Grid) outLen() int {
	switch g.Shape {
	case Cross:
		return len(g.Rows) * len(g.Cols)
	case Upper:
		return len(g.Rows) * len(g.Rows)
	}
	return len(g.Rows)
}

// cursor walks the entries of a grid from a given position in hand-out order;
// a and b are positions in Rows and in Cols (Cross) or Rows (Upper).
type cursor struct {
	g    *Grid
	a, b int
}

// at returns a cursor on entry k of g's hand-out order.
func (g *Grid) at(k int) cursor {
	switch g.Shape {
	case Cross:
		if len(g.Cols) == 0 {
			return cursor{g, 0, 0}
		}
		return cursor{g, k / len(g.Cols), k % len(g.Cols)}
	case Upper:
		// Row a starts at entry a·n − a(a−1)/2: find the last row starting at or before k.
		n := len(g.Rows)
		start := func(a int) int { return a*n - a*(a-1)/2 }
		a := sort.Search(n, func(a int) bool { return start(a+1) > k })
		return cursor{g, a, a + k - start(a)}
	}
	return cursor{g, k, k}
}

// pair returns the entry under the cursor.
func (c *cursor) pair() (i, j int) {
	switch c.g.Shape {
	case Cross:
		return c.g.Rows[c.a], c.g.Cols[c.b]
	case Upper:
		i, j = c.g.Rows[c.a], c.g.Rows[c.b]
		return min(i, j), max(i, j)
	}
	i = c.g.Rows[c.a]
	return i, i
}

// next moves the cursor to the following entry.
func (c *cursor) next() {
	switch c.g.Shape {
	case Cross:
		if c.b++; c.b == len(c.g.Cols) {
			c.a, c.b = c.a+1, 0
		}
	case Upper:
		if c.b++; c.b == len(c.g.Rows) {
			c.a++
			c.b = c.a
		}
	default:
		c.a++
		c.b = c.a
	}
}

// All yields the entries (i, j) of g in hand-out order.
func (g Grid) All() iter.Seq2[int, int] {
	return func(yield func(i, j int) bool) {
		c := g.at(0)
		for range g.Len() {
			if !yield(c.pair()) {
				return
			}
			c.next()
		}
	}
}

// name names entry (i, j) of g for an error message: "X[i] and Y[j]" (X[j] for
// Upper), or "X[i]" for Diagonal.
func (g *Grid) name(i, j int) string {
	switch g.Shape {
	case Cross:
		return fmt.Sprintf("X[%d] and Y[%d]", i, j)
	case Upper:
		return fmt.Sprintf("X[%d] and X[%d]", i, j)
	}
	return fmt.Sprintf("X[%d]", i)
}

// RunPairs computes the entries of grid g with pair and writes them to out, the
// shared pair loop of the kernels that evaluate a Gram matrix pair by pair.
//
// out is the row-major len(Rows)×len(Cols) matrix for Cross, the len(Rows)×len(Rows)
// matrix for Upper (pair(i, j) is written to (i, j) and (j, i)), and the vector of
// len(Rows) values for Diagonal (pair(i, i) to out[i]); i always indexes X and j
// Y (X when symmetric), as out does. The entries are handed out in g's order, in
// chunks of at least grain entries, to Workers(nJobs) goroutines; each goroutine
// owns one scratch value made by newScratch (the zero S when newScratch is nil)
// and passes it to every pair it computes. Chunks grow to about 1/64 of a
// worker's share, so that handing them out costs nothing beside pairs of a few
// nanoseconds; cancellation is still seen between two pairs.
//
// ctl counts the entries: RunPairs adds g.Len() to its total and marks the
// entries of a chunk done as it ends. The first error stops the hand-out of new
// work and is returned prefixed with the names of the pair's graphs ("X[3] and
// Y[5]: "; "X[3]: " on the diagonal), except ErrCancelled, which is returned
// as is, like a cancellation through ctl. A panic in pair is returned as an
// error wrapping ErrPanic, as by Run.
func RunPairs[S any](ctl *Control, g Grid, nJobs, grain int, newScratch func() S, pair func(s S, i, j int) (float64, error), out []float64) error {
	if len(out) != g.outLen() {
		return fmt.Errorf("output has %d entries for %d kernel values", len(out), g.outLen())
	}
	n, workers := g.Len(), Workers(nJobs)
	ctl.AddTotal(n)
	grain = max(grain, 1, n/(chunksPerWorker*workers))
	scratch := make([]S, workers)
	made := make([]bool, workers)
	ny, nr := len(g.Rows), len(g.Rows)
	if g.Shape == Cross {
		ny = len(g.Cols)
	}
	fail := func(i, j int, err error) error {
		if errors.Is(err, ErrCancelled) {
			return err
		}
		return fmt.Errorf("%s: %w", g.name(i, j), err)
	}
	return Run(ctl, (n+grain-1)/grain, nJobs, 1, func(w, chunk int) error {
		if !made[w] && newScratch != nil {
			scratch[w], made[w] = newScratch(), true
		}
		s := scratch[w]
		k0, k1 := chunk*grain, min(n, (chunk+1)*grain)
		// Row by row from the chunk's first entry (a, b): a the position in
		// Rows, b in Cols (Cross) or Rows (Upper); k counts the entries done.
		c := g.at(k0)
		a, b, k := c.a, c.b, k0
		for ; k < k1; a++ {
			i := g.Rows[a]
			switch g.Shape {
			case Diagonal:
				if ctl.Cancelled() {
					ctl.Done(k - k0)
					return ErrCancelled
				}
				v, err := pair(s, i, i)
				if err != nil {
					ctl.Done(k - k0)
					return fail(i, i, err)
				}
				out[i] = v
				k++
			case Cross:
				row, seg := out[i*ny:i*ny+ny], g.Cols[b:min(ny, b+k1-k)]
				for t, j := range seg {
					if ctl.Cancelled() {
						ctl.Done(k + t - k0)
						return ErrCancelled
					}
					v, err := pair(s, i, j)
					if err != nil {
						ctl.Done(k + t - k0)
						return fail(i, j, err)
					}
					row[j] = v
				}
				k += len(seg)
				b = 0
			case Upper:
				seg := g.Rows[b:min(nr, b+k1-k)]
				for t, j := range seg {
					lo, hi := min(i, j), max(i, j)
					if ctl.Cancelled() {
						ctl.Done(k + t - k0)
						return ErrCancelled
					}
					v, err := pair(s, lo, hi)
					if err != nil {
						ctl.Done(k + t - k0)
						return fail(lo, hi, err)
					}
					out[lo*ny+hi], out[hi*ny+lo] = v, v
				}
				k += len(seg)
				b = a + 1
			}
		}
		ctl.Done(k1 - k0)
		return nil
	})
}

// chunksPerWorker is the number of chunks per worker that RunPairs cuts a large
// grid into (smaller grids into chunks of grain entries): the dynamic hand-out
// balances the workers' loads to about 1/chunksPerWorker of a share, at one
// atomic operation per chunk.
const chunksPerWorker = 64

// List returns the entries of g in hand-out order.
func (g Grid) List() []Pair {
	ps := make([]Pair, 0, g.Len())
	for i, j := range g.All() {
		ps = append(ps, Pair{i, j})
	}
	return ps
}
