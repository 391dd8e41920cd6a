//go:build cgo

// Package hostref builds the CUDA library's arithmetic headers
// (cuda/include/gg) for the host with g++ and exposes them to Go, so that tests
// can compare them with gokernel/microkernel, gokernel/octile and gokernel/mgk
// on machines without a GPU. It is for tests only.
package hostref

// #cgo CFLAGS: -I${SRCDIR}/../include
// #cgo CXXFLAGS: -std=c++20 -O2 -pthread -Wall -Wextra -Werror -I${SRCDIR}/../include
// #cgo LDFLAGS: -lstdc++ -lm -pthread
// #include <stdlib.h>
// #include "hostref.h"
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/graphgram/graphgram/cuda/internal/cgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
)

// MkEval64 evaluates program p on rows x and y in float64.
func MkEval64(p *layout.Program, x, y []float64) float64 {
	return float64(C.hr_mk_eval64((*C.ggc_mk_program)(unsafe.Pointer(p)), (*C.double)(&x[0]), (*C.double)(&y[0])))
}

// MkEvalD64 returns program p's value on rows x and y and its derivative with
// respect to hyperparameter t, in float64.
func MkEvalD64(p *layout.Program, x, y []float64, t int) (v, d float64) {
	var cd C.double
	v = float64(C.hr_mk_eval_d64((*C.ggc_mk_program)(unsafe.Pointer(p)), (*C.double)(&x[0]), (*C.double)(&y[0]), C.int(t), &cd))
	return v, float64(cd)
}

// MkEvalD32 is MkEvalD64 in float32.
func MkEvalD32(p *layout.Program, x, y []float32, t int) (v, d float32) {
	var cd C.float
	v = float32(C.hr_mk_eval_d32((*C.ggc_mk_program)(unsafe.Pointer(p)), (*C.float)(&x[0]), (*C.float)(&y[0]), C.int(t), &cd))
	return v, float32(cd)
}

// MkEval32 evaluates program p on rows x and y in float32.
func MkEval32(p *layout.Program, x, y []float32) float32 {
	return float32(C.hr_mk_eval32((*C.ggc_mk_program)(unsafe.Pointer(p)), (*C.float)(&x[0]), (*C.float)(&y[0])))
}

// TilePair64 runs the dense and the sparse primitive on one tile pair: masks ma
// and mb, nonzero bits pa and pb, weights wa and wb, κe per nonzero pair in
// kappa (len(pa)·len(pb), row-major), input block X (64). It returns the two
// 8×8 outputs, indexed 8r + r'.
func TilePair64(ma uint64, pa []uint8, wa []float64, mb uint64, pb []uint8, wb []float64, kappa, X []float64) (yd, ys []float64) {
	yd, ys = make([]float64, 64), make([]float64, 64)
	pa, pb, wa, wb, kappa = nonEmpty(pa), nonEmpty(pb), nonEmpty(wa), nonEmpty(wb), nonEmpty(kappa)
	C.hr_tile_pair64(C.uint64_t(ma), (*C.uint8_t)(&pa[:1][0]), (*C.double)(&wa[:1][0]), C.uint64_t(mb), (*C.uint8_t)(&pb[:1][0]),
		(*C.double)(&wb[:1][0]), (*C.double)(&kappa[:1][0]), (*C.double)(&X[0]), (*C.double)(&yd[0]), (*C.double)(&ys[0]))
	return
}

// TilePair32 is TilePair64 in float32.
func TilePair32(ma uint64, pa []uint8, wa []float32, mb uint64, pb []uint8, wb []float32, kappa, X []float32) (yd, ys []float32) {
	yd, ys = make([]float32, 64), make([]float32, 64)
	pa, pb, wa, wb, kappa = nonEmpty(pa), nonEmpty(pb), nonEmpty(wa), nonEmpty(wb), nonEmpty(kappa)
	C.hr_tile_pair32(C.uint64_t(ma), (*C.uint8_t)(&pa[:1][0]), (*C.float)(&wa[:1][0]), C.uint64_t(mb), (*C.uint8_t)(&pb[:1][0]),
		(*C.float)(&wb[:1][0]), (*C.float)(&kappa[:1][0]), (*C.float)(&X[0]), (*C.float)(&yd[0]), (*C.float)(&ys[0]))
	return
}

// optional returns the C pointer to an optional output's first entry, or NULL
// for an empty one.
func optional[T, CT any](s []T) *CT {
	if len(s) == 0 {
		return nil
	}
	return (*CT)(unsafe.Pointer(&s[0]))
}

func nonEmpty[T any](s []T) []T {
	if cap(s) == 0 {
		return make([]T, 0, 1)
	}
	return s
}

// MulW sets y = W·x for graph ga of A and graph gb of B, the edge kernel
// tabulated over edge classes (table) or evaluated in the product.
func MulW(A *layout.Graphs, ga int, B *layout.Graphs, gb int, edge *layout.Program, table bool, x, y []float64) {
	ca, cb := cgraphs.New(A), cgraphs.New(B)
	defer ca.Free()
	defer cb.Free()
	x, y = nonEmpty(x), nonEmpty(y)
	C.hr_mulw((*C.ggc_graphs)(ca.C()), C.int(ga), (*C.ggc_graphs)(cb.C()), C.int(gb), (*C.ggc_mk_program)(unsafe.Pointer(edge)), cbool(table),
		(*C.double)(&x[:1][0]), (*C.double)(&y[:1][0]))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Options mirrors ggc_mgk_options.
type Options struct {
	Q, Tol                                                     float64
	Lmin, MaxIter, Symmetric, Precision, Device, Blocks, Flags int32
	// StageLimit is ggc_mgk_options.stage_limit: 0 stages every pair whose
	// tiles fit the (emulated) device's shared memory, > 0 caps the bytes,
	// < 0 stages none.
	StageLimit int32
	MemLimit   int64
	AdjTol     float64
}

// Emulator runs the CUDA library's device kernels on host threads, one
// std::thread per CUDA thread (cuda/emu/emu.h), in one of two builds chosen
// per value, so that tests of both builds may run side by side.
type Emulator struct {
	// GPUSizes selects the kernels built with the GPU's 256 threads a block
	// (emu256.cc) rather than the emulation's smaller blocks (emu.cc, the
	// zero value), which are cheaper in host threads.
	GPUSizes bool
}

// Staged returns the number of pairs of the build's latest Gram or GramGrad
// call that the solver blocks read from shared memory.
func (em Emulator) Staged() int64 {
	if em.GPUSizes {
		return int64(C.hr_emu256_staged())
	}
	return int64(C.hr_emu_staged())
}

// Threads returns the block sizes of the build: the solvers (mgk_solve,
// mgk_gsolve), mgk_prep and mgk_gterms, and the shortest-path kernels.
func (em Emulator) Threads() [3]int {
	var t [3]C.int
	if em.GPUSizes {
		C.hr_emu256_threads(&t[0])
	} else {
		C.hr_emu_threads(&t[0])
	}
	return [3]int{int(t[0]), int(t[1]), int(t[2])}
}

// emuGPUSizes is the build the package-level Emu functions run
// (SetEmuGPUSizes).
var emuGPUSizes atomic.Bool

// emulator returns the Emulator of the package-level Emu functions.
func emulator() Emulator { return Emulator{GPUSizes: emuGPUSizes.Load()} }

// SetEmuGPUSizes makes the package-level Emu functions run the kernels built
// with the GPU's block sizes (on) or the emulation's smaller ones (off, the
// default), and returns the previous setting.
//
// Deprecated: the setting is process-wide, so that tests changing it cannot
// run in parallel with the others; use an Emulator value, whose GPUSizes
// field chooses the build of its own calls.
func SetEmuGPUSizes(on bool) bool { return emuGPUSizes.Swap(on) }

// EmuStaged is Emulator.Staged of the build SetEmuGPUSizes selected.
func EmuStaged() int64 { return emulator().Staged() }

// EmuThreads is Emulator.Threads of the build SetEmuGPUSizes selected.
func EmuThreads() [3]int { return emulator().Threads() }

// EmuSeed returns the emulator's base seed ($GGCUDA_EMU_SEED, default 1),
// which fixes the order of blocks and threads; a failure reproduces with it.
func EmuSeed() uint64 { return uint64(C.hr_emu_seed()) }

// Planted-defect kernels of emu_planted.cc (tests of the emulator).
const (
	PlantedCounterAtomic     = iota // persistent job loop, atomic counter
	PlantedCounterRacy              // the same with a non-atomic read-modify-write
	PlantedExchangeSync             // shared-memory exchange between warps with __syncthreads
	PlantedExchangeNoSync           // the same without it
	PlantedExitBeforeBarrier        // half the block exits before a __syncthreads
	PlantedTwoBarriers              // the halves wait at different __syncthreads
	PlantedExitBeforeShuffle        // a lane exits before a shuffle
)

// EmuPlanted runs planted kernel which iters times with blocks blocks of
// threads threads on the emulator and returns the number of wrong results.
// The divergence kernels abort the process instead (the emulator's check).
func EmuPlanted(which, blocks, threads, iters int) int64 {
	return int64(C.hr_emu_planted(C.int(which), C.int(blocks), C.int(threads), C.int(iters)))
}

// Sizes returns the sizes of the Go mirrors of the C API's structs and of the
// structs themselves: Program, ggc_mk_program, Options, ggc_mgk_options,
// Instr, ggc_mk_instr.
func Sizes() [6]uintptr {
	return [6]uintptr{unsafe.Sizeof(layout.Program{}), unsafe.Sizeof(C.ggc_mk_program{}),
		unsafe.Sizeof(Options{}), unsafe.Sizeof(C.ggc_mgk_options{}),
		unsafe.Sizeof(layout.Instr{}), unsafe.Sizeof(C.ggc_mk_instr{})}
}

// Gram runs the host twin of the device solver: out[i*ny+j] = K(X[i], Y[j]),
// iters negative for unconverged solves. iters and resid are optional (nil),
// otherwise as long as out.
func Gram(X, Y *layout.Graphs, node, edge *layout.Program, opt Options, table bool, out []float64, iters []int32, resid []float64) error {
	// Optional outputs are NULL when not wanted: C writes every entry of them.
	pi, pr := optional[int32, C.int32_t](iters), optional[float64, C.double](resid)
	out = nonEmpty(out)
	return gramCall(X, Y, func(cx, cy *C.ggc_graphs, e *C.char, n C.size_t) C.int {
		return C.hr_mgk_gram(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(edge)),
			(*C.ggc_mgk_options)(unsafe.Pointer(&opt)), cbool(table), (*C.double)(&out[:1][0]), pi, pr, e, n)
	})
}

// EmuGram is Emulator.Gram of the build SetEmuGPUSizes selected.
func EmuGram(X, Y *layout.Graphs, node, edge *layout.Program, opt Options, chunkWords int64, out []float64, iters []int32) error {
	return emulator().Gram(X, Y, node, edge, opt, chunkWords, out, iters)
}

// Gram runs the CUDA library's Gram kernels (src/mgk.cuh) on host threads,
// with chunks of at most chunkWords of work space and opt.Blocks persistent
// blocks (0: 3).
func (em Emulator) Gram(X, Y *layout.Graphs, node, edge *layout.Program, opt Options, chunkWords int64, out []float64, iters []int32) error {
	pi := optional[int32, C.int32_t](iters)
	out = nonEmpty(out)
	return gramCall(X, Y, func(cx, cy *C.ggc_graphs, e *C.char, n C.size_t) C.int {
		if em.GPUSizes {
			return C.hr_emu256_gram(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(edge)),
				(*C.ggc_mgk_options)(unsafe.Pointer(&opt)), C.int64_t(chunkWords), (*C.double)(&out[:1][0]), pi, e, n)
		}
		return C.hr_emu_gram(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(edge)),
			(*C.ggc_mgk_options)(unsafe.Pointer(&opt)), C.int64_t(chunkWords), (*C.double)(&out[:1][0]), pi, e, n)
	})
}

// EmuSP is Emulator.SP of the build SetEmuGPUSizes selected.
func EmuSP(X, Y *layout.SPGraphs, node, length *layout.Program, lengths []float64, pairs []int32, blocks int, chunkWords int64, precision int) ([]float64, error) {
	return emulator().SP(X, Y, node, length, lengths, pairs, blocks, chunkWords, precision)
}

// SP runs the shortest-path kernels (src/sp.cuh) on host threads for the
// pairs (pairs[2k], pairs[2k+1]) of X × Y (Y nil: X), in precision 64 or 32,
// in chunks of at most chunkWords of node-kernel matrices (an error when one
// pair needs more).
func (em Emulator) SP(X, Y *layout.SPGraphs, node, length *layout.Program, lengths []float64, pairs []int32, blocks int, chunkWords int64, precision int) ([]float64, error) {
	gx := cgraphs.NewSP(X)
	defer gx.Free()
	cx := (*C.ggc_sp_graphs)(gx.C())
	cy := cx
	if Y != nil {
		gy := cgraphs.NewSP(Y)
		defer gy.Free()
		cy = (*C.ggc_sp_graphs)(gy.C())
	}
	out := make([]float64, max(len(pairs)/2, 1))
	pairs, lengths = nonEmpty(pairs), nonEmpty(lengths)
	var rc C.int
	if em.GPUSizes {
		rc = C.hr_emu256_sp(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(length)),
			(*C.double)(&lengths[:1][0]), C.int(len(lengths)), (*C.int32_t)(&pairs[:1][0]), C.int64_t(len(pairs)/2),
			C.int(blocks), C.int64_t(chunkWords), C.int(precision), (*C.double)(&out[0]))
	} else {
		rc = C.hr_emu_sp(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(length)),
			(*C.double)(&lengths[:1][0]), C.int(len(lengths)), (*C.int32_t)(&pairs[:1][0]), C.int64_t(len(pairs)/2),
			C.int(blocks), C.int64_t(chunkWords), C.int(precision), (*C.double)(&out[0]))
	}
	if rc != 0 {
		return nil, fmt.Errorf("hr_emu_sp: status %d (a pair needs more than %d words)", int(rc), chunkWords)
	}
	return out[:len(pairs)/2], nil
}

// gramCall runs one of the C Gram functions with X, Y (nil: X) in C memory;
// f gets the C graphs and an error buffer.
func gramCall(X, Y *layout.Graphs, f func(cx, cy *C.ggc_graphs, errbuf *C.char, n C.size_t) C.int) error {
	gx := cgraphs.New(X)
	defer gx.Free()
	var cy *C.ggc_graphs
	if Y != nil {
		gy := cgraphs.New(Y)
		defer gy.Free()
		cy = (*C.ggc_graphs)(gy.C())
	}
	var errbuf [256]C.char
	if rc := f((*C.ggc_graphs)(gx.C()), cy, &errbuf[0], C.size_t(len(errbuf))); rc != 0 {
		return errors.New(C.GoString(&errbuf[0]))
	}
	return nil
}

// GramGrad runs the serial host twin of the device gradient: out as Gram,
// grad[(i*ny+j)*np+k] = ∂K/∂θ_k with np = 1 + node.NParams + edge.NParams,
// iters (optional) the iterations of both solves, negative when either did
// not converge.
func GramGrad(X, Y *layout.Graphs, node, edge *layout.Program, opt Options, table bool, out, grad []float64, iters []int32) error {
	pi := optional[int32, C.int32_t](iters)
	out, grad = nonEmpty(out), nonEmpty(grad)
	return gramCall(X, Y, func(cx, cy *C.ggc_graphs, e *C.char, n C.size_t) C.int {
		return C.hr_mgk_gram_grad(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(edge)),
			(*C.ggc_mgk_options)(unsafe.Pointer(&opt)), cbool(table), (*C.double)(&out[:1][0]), (*C.double)(&grad[:1][0]), pi, e, n)
	})
}

// EmuGramGrad is Emulator.GramGrad of the build SetEmuGPUSizes selected.
func EmuGramGrad(X, Y *layout.Graphs, node, edge *layout.Program, opt Options, chunkWords int64, out, grad []float64, iters []int32) error {
	return emulator().GramGrad(X, Y, node, edge, opt, chunkWords, out, grad, iters)
}

// GramGrad runs the device gradient kernels (mgk_prep, mgk_gsolve,
// mgk_gterms) on host threads, as Gram runs the Gram kernels.
func (em Emulator) GramGrad(X, Y *layout.Graphs, node, edge *layout.Program, opt Options, chunkWords int64, out, grad []float64, iters []int32) error {
	pi := optional[int32, C.int32_t](iters)
	out, grad = nonEmpty(out), nonEmpty(grad)
	return gramCall(X, Y, func(cx, cy *C.ggc_graphs, e *C.char, n C.size_t) C.int {
		if em.GPUSizes {
			return C.hr_emu256_gram_grad(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(edge)),
				(*C.ggc_mgk_options)(unsafe.Pointer(&opt)), C.int64_t(chunkWords), (*C.double)(&out[:1][0]), (*C.double)(&grad[:1][0]), pi, e, n)
		}
		return C.hr_emu_gram_grad(cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(node)), (*C.ggc_mk_program)(unsafe.Pointer(edge)),
			(*C.ggc_mgk_options)(unsafe.Pointer(&opt)), C.int64_t(chunkWords), (*C.double)(&out[:1][0]), (*C.double)(&grad[:1][0]), pi, e, n)
	})
}
