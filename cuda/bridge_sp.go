//go:build cuda

package cuda

// #include <stdlib.h>
// #include "ggcuda.h"
//
// typedef int (*gg_sp_fn)(const ggc_sp_graphs*, const ggc_sp_graphs*, const ggc_mk_program*,
//     const ggc_mk_program*, const ggc_sp_options*, const int32_t*, int64_t, double*, ggc_stats*, char*, size_t);
// static int gg_sp_call(void* fn, const ggc_sp_graphs* x, const ggc_sp_graphs* y, const ggc_mk_program* nk,
//     const ggc_mk_program* lk, const ggc_sp_options* o, const int32_t* pairs, int64_t np, double* out,
//     ggc_stats* st, char* e, size_t n) {
//   return ((gg_sp_fn)fn)(x, y, nk, lk, o, pairs, np, out, st, e, n);
// }
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/graphgram/graphgram/cuda/internal/cgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// ShortestPathGram writes the shortest-path kernel K(X[i], Y[j]) (gokernel/
// spkernel's definition and conventions; opt.Method and opt.APSP are ignored)
// to out[i*len(Y)+j], symmetric as in spkernel.Gram. Pairs of small graphs go
// to the CPU (spkernel, opt.NJobs workers) while the GPU computes the others,
// both at once (see SPHybrid). prec is the GPU's arithmetic (Float32: node-
// kernel matrices, length table and products in float, sums in double; within
// 1e-5 relative of spkernel, see README.md); the CPU part is float64. stats,
// when not nil, receives the GPU's timings. Errors wrap the package's sentinel
// errors as MarginalizedGram's do.
func ShortestPathGram(X, Y []*graph.Graph, symmetric bool, opt spkernel.Options, device int, prec Precision, hybrid SPHybrid, out []float64, stats *Stats) error {
	return shortestPath(callOptions{}, X, Y, symmetric, opt, device, prec, hybrid, out, stats)
}

// shortestPath is ShortestPathGram with the options co.
func shortestPath(co callOptions, X, Y []*graph.Graph, symmetric bool, opt spkernel.Options, device int, prec Precision, hybrid SPHybrid, out []float64, stats *Stats) error {
	if symmetric {
		Y = X
	}
	if prec != Float64 && prec != Float32 {
		return fmt.Errorf("precision must be cuda.Float64 or cuda.Float32, got %d", prec)
	}
	nc, err := spCheck(X, Y, opt, out)
	if err != nil {
		return err
	}
	node, length, err := spPrograms(opt)
	if err != nil {
		return err
	}
	fn, l, err := libFn(&co, "ggc_sp_pairs")
	if err != nil {
		return err
	}
	if _, err := l.devices(); err != nil {
		return err
	}
	if stats != nil {
		*stats = Stats{}
	}
	// Small graphs (for the CPU): SP-edge count below √CPUWork. Counting SP
	// edges needs the shortest paths, which the GPU side computes anyway:
	// estimate with n(n−1)/2, exact for connected graphs and an upper bound.
	work := hybrid.CPUWork
	if work == 0 {
		work = DefaultCPUWork
	}
	lim := math.Sqrt(float64(work))
	small := func(g *graph.Graph) bool { return work > 0 && float64(g.N)*float64(g.N-1)/2 < lim }
	var xs, ys []int
	for i, g := range X {
		if small(g) {
			xs = append(xs, i)
		}
	}
	if symmetric {
		ys = xs
	} else {
		for j, g := range Y {
			if small(g) {
				ys = append(ys, j)
			}
		}
	}
	isSmallX, isSmallY := make([]bool, len(X)), make([]bool, len(Y))
	for _, i := range xs {
		isSmallX[i] = true
	}
	for _, j := range ys {
		isSmallY[j] = true
	}
	var wg sync.WaitGroup
	var cpuErr error
	if len(xs) > 0 && len(ys) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub := make([]float64, len(xs)*len(ys))
			cpuErr = spkernel.Gram(pick(X, xs), pick(Y, ys), symmetric, opt, sub)
			for a, i := range xs {
				for b, j := range ys {
					out[i*len(Y)+j] = sub[a*len(ys)+b]
				}
			}
		}()
	}
	var pairs [][2]int
	for i := range X {
		for j := range Y {
			if (symmetric && j < i) || (isSmallX[i] && isSmallY[j]) {
				continue
			}
			pairs = append(pairs, [2]int{i, j})
		}
	}
	g := &spCall{co: co, fn: fn, l: l, node: &node, length: &length, opt: opt, nc: nc, device: device, prec: prec, stats: stats}
	gpuErr := solveList(span{0, len(pairs)}, func(r span) error { return g.pairs(X, Y, pairs[r.lo:r.hi], out) })
	wg.Wait()
	if err := errors.Join(gpuErr, cpuErr); err != nil {
		return err
	}
	if symmetric {
		for i := range X {
			for j := 0; j < i; j++ {
				out[i*len(X)+j] = out[j*len(X)+i]
			}
		}
	}
	return nil
}

// spCall is the GPU's part of one ShortestPathGram call.
type spCall struct {
	co           callOptions
	fn           unsafe.Pointer
	l            *Library
	node, length *layout.Program
	opt          spkernel.Options
	nc, device   int
	prec         Precision
	stats        *Stats
}

// pairs computes the pairs ps of X × Y in one library call, uploading only
// the graphs they touch, and writes them to out (a piece of solveList).
func (g *spCall) pairs(X, Y []*graph.Graph, ps [][2]int, out []float64) error {
	// The graphs these pairs touch, renumbered.
	xi, yi := map[int]int32{}, map[int]int32{}
	var xl, yl []*graph.Graph
	for _, p := range ps {
		if _, ok := xi[p[0]]; !ok {
			xi[p[0]] = int32(len(xl))
			xl = append(xl, X[p[0]])
		}
		if _, ok := yi[p[1]]; !ok {
			yi[p[1]] = int32(len(yl))
			yl = append(yl, Y[p[1]])
		}
	}
	L, lengths, err := layout.SP([][]*graph.Graph{xl, yl}, g.opt.WeightCol, g.nc, g.opt.NJobs)
	if err != nil {
		return err
	}
	cp := make([]int32, 2*len(ps))
	for k, p := range ps {
		cp[2*k], cp[2*k+1] = xi[p[0]], yi[p[1]]
	}
	res := make([]float64, len(ps))
	if err := g.call(L[0], L[1], lengths, cp, res); err != nil {
		return err
	}
	for k, p := range ps {
		out[p[0]*len(Y)+p[1]] = res[k]
	}
	return nil
}

func (g *spCall) call(X, Y *layout.SPGraphs, lengths []float64, pairs []int32, out []float64) error {
	var p runtime.Pinner
	defer p.Unpin()
	gx, gy := cgraphs.NewSP(X), cgraphs.NewSP(Y)
	defer gx.Free()
	defer gy.Free()
	cx, cy := (*C.ggc_sp_graphs)(gx.C()), (*C.ggc_sp_graphs)(gy.C())
	o := (*C.ggc_sp_options)(C.calloc(1, C.size_t(unsafe.Sizeof(C.ggc_sp_options{}))))
	defer C.free(unsafe.Pointer(o))
	o.device, o.blocks, o.num_lengths = C.int32_t(g.device), C.int32_t(g.co.blocks), C.int32_t(len(lengths))
	o.precision = C.int32_t(g.prec)
	o.lengths = (*C.double)(cgraphs.Pin(&p, lengths))
	o.mem_limit = C.int64_t(g.co.memLimit)
	var st C.ggc_stats
	var buf [512]C.char
	g.co.counted()
	g.l.calls.Lock()
	rc := C.gg_sp_call(g.fn, cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(g.node)), (*C.ggc_mk_program)(unsafe.Pointer(g.length)), o,
		(*C.int32_t)(cgraphs.Pin(&p, pairs)), C.int64_t(len(pairs)/2), (*C.double)(cgraphs.Pin(&p, out)), &st, &buf[0], C.size_t(len(buf)))
	g.l.calls.Unlock()
	if err := statusErr(rc, C.GoString(&buf[0])); err != nil {
		return err
	}
	if s := g.stats; s != nil {
		s.UploadMS += float64(st.upload_ms)
		s.SolveMS += float64(st.solve_ms)
		s.DownloadMS += float64(st.download_ms)
		s.Blocks, s.Threads = max(s.Blocks, int(st.blocks)), int(st.threads)
		s.ScratchBytes = max(s.ScratchBytes, int64(st.scratch_bytes))
		s.WallMS += float64(st.wall_ms)
		s.OverlapMS += float64(st.overlap_ms)
		s.Chunks += int(st.chunks)
		s.Batches++
	}
	return nil
}
