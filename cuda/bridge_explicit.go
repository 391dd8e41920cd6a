//go:build cuda

package cuda

// #include <stdlib.h>
// #include "ggcuda.h"
//
// typedef int (*gg_explicit_fn)(const ggc_csr*, const ggc_csr*, const ggc_explicit_options*, double*, ggc_stats*,
//     char*, size_t);
// static int gg_explicit_call(void* fn, const ggc_csr* x, const ggc_csr* y, const ggc_explicit_options* o,
//     double* out, ggc_stats* st, char* e, size_t n) {
//   return ((gg_explicit_fn)fn)(x, y, o, out, st, e, n);
// }
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/graphgram/graphgram/cuda/internal/cgraphs"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// ExplicitGram writes K(X[i], Y[j]) to out[i*Y.Rows()+j] on CUDA device
// device, as sparsegram.Gram does on the CPU: Σ_f X[i][f]·Y[j][f] for
// sparsegram.SumProduct, Σ_f min(X[i][f], Y[j][f]) for sparsegram.SumMin; with
// symmetric, Y is ignored and taken to be X. The result is exact and equal to
// sparsegram.Gram's entry for entry: the device sums in 64-bit integers
// (wrapping as sparsegram's int64 sums do) and converts each sum to float64
// once. stats, when not nil, receives the timings and the dense panel's
// width. When device memory runs out, the rows are split into blocks computed
// in turn. Errors wrap the package's sentinel errors as MarginalizedGram's
// do; invalid feature matrices are plain errors, worded as sparsegram's.
func ExplicitGram(X, Y *sparsegram.Features, symmetric bool, semiring sparsegram.Semiring, device int, out []float64, stats *Stats) error {
	return explicitGram(callOptions{}, X, Y, symmetric, semiring, device, out, stats)
}

// explicitGram is ExplicitGram with the options co.
func explicitGram(co callOptions, X, Y *sparsegram.Features, symmetric bool, semiring sparsegram.Semiring, device int, out []float64, stats *Stats) error {
	if symmetric {
		Y = X
	}
	if X == nil || Y == nil {
		return errors.New("sparsegram: nil feature matrix")
	}
	var sr C.int32_t
	switch semiring {
	case sparsegram.SumProduct:
		sr = C.GGC_SUM_PRODUCT
	case sparsegram.SumMin:
		sr = C.GGC_SUM_MIN
	default:
		return fmt.Errorf("sparsegram: unknown semiring %d", semiring)
	}
	// The library indexes host arrays with the columns: check the matrices
	// first, once.
	if err := X.Validate(); err != nil {
		return err
	}
	if !symmetric {
		if err := Y.Validate(); err != nil {
			return err
		}
	}
	if X.NumCols != Y.NumCols {
		return fmt.Errorf("sparsegram: X has %d feature columns and Y %d; build both from one dictionary", X.NumCols, Y.NumCols)
	}
	nx, ny := X.Rows(), Y.Rows()
	if len(out) != nx*ny {
		return fmt.Errorf("sparsegram: output has %d entries for a %d×%d kernel matrix", len(out), nx, ny)
	}
	if nx > math.MaxInt32 || ny > math.MaxInt32 {
		return fmt.Errorf("sparsegram: %d×%d rows: at most %d a side on the GPU", nx, ny, math.MaxInt32)
	}
	fn, l, err := libFn(&co, "ggc_explicit_gram")
	if err != nil {
		return err
	}
	if _, err := l.devices(); err != nil {
		return err
	}
	if stats != nil {
		*stats = Stats{}
	}
	c := &explicitCall{co: co, fn: fn, l: l, X: X, Y: Y, px: ptr64(X), py: ptr64(Y), semiring: sr, device: device, out: out, ny: ny, stats: stats}
	return solveBlocks(c, span{0, nx}, span{0, ny}, symmetric)
}

// ptr64 is f.Ptr as the C API's int64 row pointers.
func ptr64(f *sparsegram.Features) []int64 {
	p := make([]int64, len(f.Ptr))
	for i, v := range f.Ptr {
		p[i] = int64(v)
	}
	return p
}

// explicitCall is one ExplicitGram call.
type explicitCall struct {
	co       callOptions
	fn       unsafe.Pointer
	l        *Library
	X, Y     *sparsegram.Features
	px, py   []int64
	semiring C.int32_t
	device   int
	out      []float64
	ny       int
	stats    *Stats
}

// solve computes rows x of X against rows y of Y (symmetric: the same rows
// of X) into out (see pairBlocks).
func (c *explicitCall) solve(x, y span, symmetric bool) error {
	n, m := x.len(), y.len()
	whole := n*m == len(c.out)
	res := c.out
	if !whole {
		res = make([]float64, n*m)
	}
	err := c.call(x.lo, x.hi, y.lo, y.hi, symmetric, res)
	if err != nil || whole {
		return err
	}
	for a := 0; a < n; a++ {
		copy(c.out[(x.lo+a)*c.ny+y.lo:(x.lo+a)*c.ny+y.hi], res[a*m:(a+1)*m])
	}
	return nil
}

// mirror copies the entries of rows x × y to y × x.
func (c *explicitCall) mirror(x, y span) {
	for i := x.lo; i < x.hi; i++ {
		for j := y.lo; j < y.hi; j++ {
			c.out[j*c.ny+i] = c.out[i*c.ny+j]
		}
	}
}

// call runs one ggc_explicit_gram on rows [x0, x1) of X and [y0, y1) of Y
// (symmetric: Y is X's rows [x0, x1)), writing the n×m result to out.
func (c *explicitCall) call(x0, x1, y0, y1 int, symmetric bool, out []float64) error {
	var p runtime.Pinner
	defer p.Unpin()
	// Rows of a matrix: its row pointers from row lo on, its whole column
	// and value arrays (ggc_csr's ptr indexes them directly).
	csr := func(f *sparsegram.Features, ptr []int64, lo, hi int) *C.ggc_csr {
		r := (*C.ggc_csr)(C.calloc(1, C.size_t(unsafe.Sizeof(C.ggc_csr{}))))
		r.num_rows, r.num_cols = C.int32_t(hi-lo), C.int64_t(f.NumCols)
		r.ptr = (*C.int64_t)(cgraphs.Pin(&p, ptr[lo:]))
		r.col = (*C.int32_t)(cgraphs.Pin(&p, f.Col))
		r.val = (*C.uint32_t)(cgraphs.Pin(&p, f.Val))
		return r
	}
	cx := csr(c.X, c.px, x0, x1)
	defer C.free(unsafe.Pointer(cx))
	var cy *C.ggc_csr
	if !symmetric {
		cy = csr(c.Y, c.py, y0, y1)
		defer C.free(unsafe.Pointer(cy))
	}
	o := C.ggc_explicit_options{device: C.int32_t(c.device), semiring: c.semiring, panel: C.int32_t(c.co.panel),
		mem_limit: C.int64_t(c.co.memLimit)}
	if symmetric {
		o.symmetric = 1
	}
	var st C.ggc_stats
	var buf [512]C.char
	c.co.counted()
	c.l.calls.Lock()
	rc := C.gg_explicit_call(c.fn, cx, cy, &o, (*C.double)(cgraphs.Pin(&p, out)), &st, &buf[0], C.size_t(len(buf)))
	c.l.calls.Unlock()
	if err := statusErr(rc, C.GoString(&buf[0])); err != nil {
		return err
	}
	if s := c.stats; s != nil {
		s.UploadMS += float64(st.upload_ms)
		s.SolveMS += float64(st.solve_ms)
		s.DownloadMS += float64(st.download_ms)
		s.WallMS += float64(st.wall_ms)
		s.Blocks, s.Threads = max(s.Blocks, int(st.blocks)), int(st.threads)
		s.ScratchBytes = max(s.ScratchBytes, int64(st.scratch_bytes))
		s.Chunks += int(st.chunks)
		s.DenseCols = max(s.DenseCols, int(st.dense_cols))
		s.Batches++
	}
	return nil
}
