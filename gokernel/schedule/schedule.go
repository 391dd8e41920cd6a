// Package schedule runs independent tasks, such as the graph pairs of a Gram
// matrix, on a fixed number of goroutines, handing out work dynamically and
// turning a panic in any task into an error. Run is the general loop; RunPairs,
// built on it, is the pair loop of the kernels that compute a Gram matrix
// entry by entry (a Grid says which entries, in what order).
package schedule

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
)

// Pair is one entry (I, J) of a kernel matrix.
type Pair struct{ I, J int }

// Pairs lists the entries to compute: the upper triangle with diagonal when
// symmetric (n == m is required), every entry otherwise, row by row: the entries
// of NewGrid(n, m, symmetric).
func Pairs(n, m int, symmetric bool) []Pair { return NewGrid(n, m, symmetric).List() }

// NumPairs returns len(Pairs(n, m, symmetric)) without listing them.
func NumPairs(n, m int, symmetric bool) int {
	if symmetric {
		return n * (n + 1) / 2
	}
	return n * m
}

// PairsLargestFirst lists the entries of GridLargestFirst(sizeX, sizeY,
// symmetric) in its order: those Pairs(len(sizeX), len(sizeY), symmetric) lists,
// the costliest first when the cost of (i, j) grows with both sizeX[i] and
// sizeY[j]. When symmetric, sizeY is ignored and each pair is listed once with
// I ≤ J.
func PairsLargestFirst(sizeX, sizeY []float64, symmetric bool) []Pair {
	return GridLargestFirst(sizeX, sizeY, symmetric).List()
}

// LargestFirst sorts pairs by decreasing cost so that the longest tasks start
// first and the last ones to finish are short (a simple longest-processing-time rule).
func LargestFirst(ps []Pair, cost func(Pair) float64) {
	c := make([]float64, len(ps))
	idx := make([]int, len(ps))
	for k, p := range ps {
		c[k], idx[k] = cost(p), k
	}
	sort.SliceStable(idx, func(a, b int) bool { return c[idx[a]] > c[idx[b]] })
	sorted := make([]Pair, len(ps))
	for k, i := range idx {
		sorted[k] = ps[i]
	}
	copy(ps, sorted)
}

// Workers returns the number of goroutines to use for nJobs: all cores when
// nJobs <= 0, else nJobs.
func Workers(nJobs int) int {
	if nJobs <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return nJobs
}

// Run calls task(worker, k) for k in [0, n) on Workers(nJobs) goroutines, handing
// out indices in chunks of grain. worker is in [0, Workers(nJobs)) and lets a task
// reuse per-goroutine scratch space. The first error or panic stops the hand-out
// of new work and is returned; a panic is returned with its stack. When ctl is
// cancelled, no new task starts and Run returns ErrCancelled (ctl may be nil).
func Run(ctl *Control, n, nJobs, grain int, task func(worker, k int) error) error {
	if grain < 1 {
		grain = 1
	}
	w := min(Workers(nJobs), max(1, (n+grain-1)/grain))
	var (
		next    atomic.Int64
		stop    atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		stop.Store(true)
	}
	for t := 0; t < w; t++ {
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					fail(fmt.Errorf("%w: %v\n%s", ErrPanic, r, debug.Stack()))
				}
			}()
			for !stop.Load() {
				if ctl.Cancelled() {
					fail(ErrCancelled)
					return
				}
				start := int(next.Add(int64(grain))) - grain
				if start >= n {
					return
				}
				for k := start; k < min(start+grain, n); k++ {
					if err := task(worker, k); err != nil {
						fail(err)
						return
					}
				}
			}
		}(t)
	}
	wg.Wait()
	return first
}

// OperandName names entry i of the list Operands returns, X followed by Y
// (nx graphs of X), as every error message names graphs: "X[i]" or "Y[j]".
func OperandName(i, nx int) string {
	if i < nx {
		return fmt.Sprintf("X[%d]", i)
	}
	return fmt.Sprintf("Y[%d]", i-nx)
}

// Operands returns the graphs that a kernel matrix K(X, Y) reads — X followed by Y,
// or X alone when symmetric (Y is then ignored and taken to be X) — and the index in
// that list of Y's first graph, after checking that out has len(X)·len(Y) entries.
func Operands[T any](X, Y []T, symmetric bool, outLen int) (all []T, yOff int, err error) {
	if symmetric {
		Y = X
	}
	nx, ny := len(X), len(Y)
	if outLen != nx*ny {
		return nil, 0, fmt.Errorf("output has %d entries for a %d×%d kernel matrix", outLen, nx, ny)
	}
	if symmetric {
		return X, 0, nil
	}
	return append(append(make([]T, 0, nx+ny), X...), Y...), nx, nil
}
