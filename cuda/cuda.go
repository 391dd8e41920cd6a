// Package cuda is graphgram's GPU backend seen from Go: the marginalized graph
// kernel solved on a CUDA device by libggcuda.so, the library built ahead of
// time from this directory by build.py (see README.md).
//
// The library is opened at run time with dlopen, so a binary built with the
// `cuda` build tag runs unchanged on machines without CUDA: Available then says
// why the GPU cannot be used, and the caller uses the CPU (gokernel). Without
// the tag every entry point returns ErrNotBuilt. Nothing under gokernel/
// depends on this package.
//
// A library is a value chosen per call: Open(path) returns the *Library at
// path (loaded once a path and process; "" is $GRAPHGRAM_CUDA_LIB, else
// "libggcuda.so" through the dynamic loader's search path), whose methods
// compute on its devices. The package-level functions of the same names use
// the library of the deprecated SetLibraryPath, else that default lookup.
package cuda

import (
	"errors"
	"fmt"

	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// Precision selects the device arithmetic.
type Precision int

const (
	// Float64 agrees with the CPU backend to 1e-9 relative.
	Float64 Precision = 64
	// Float32 solves to a relative residual of at least Float32MinTol; Gram
	// entries then agree with the float64 CPU backend to about 1e-4 relative
	// (see README.md).
	Float32 Precision = 32
)

// Float32MinTol is the tightest PCG tolerance used in float32.
const Float32MinTol = 1e-6

var (
	// ErrNotBuilt: this binary was built without the cuda build tag.
	ErrNotBuilt = errors.New("graphgram was built without CUDA (only the x86-64 Linux wheels have it, not the aarch64 or Windows ones; from source on Linux, build with GRAPHGRAM_CUDA=1: Go build tag cuda)")
	// ErrNoLibrary: libggcuda.so could not be opened.
	ErrNoLibrary = errors.New("graphgram's CUDA library could not be loaded")
	// ErrNoDevice: the library loaded but no usable CUDA device (no driver,
	// no device, bad index); the error text names the CUDA error.
	ErrNoDevice = errors.New("no usable CUDA device")
	// ErrUnsupported: the inputs are outside what this build of the library
	// supports (a base kernel outside the compiled-in set, a graph the octile
	// layout cannot hold); callers use the CPU, with a warning.
	ErrUnsupported = layout.ErrUnsupported
	// ErrOutOfMemory: device memory was exhausted even after splitting the
	// work into single pairs.
	ErrOutOfMemory = errors.New("CUDA device memory exhausted")
	// ErrLaunchTimeout: the driver stopped a kernel that ran longer than its
	// watchdog allows (cudaErrorLaunchTimeout: a GPU that also drives a
	// display). The device's context is lost for the rest of the process;
	// the error text names the device and the pairs of the launch.
	ErrLaunchTimeout = errors.New("a CUDA kernel ran longer than the display driver's watchdog allows")
)

// LaunchTerms bounds the work of one launch of the marginalized kernel's
// persistent solver, in product-matrix terms of one mat-vec summed over the
// launch's pairs, Σ (nnz+n)(nnz'+n'): larger Gram blocks are split before
// they are launched, so that no kernel runs long enough for a display
// driver's watchdog (about 2 s on Windows, 5 s under X) to stop it. At ~50 CG
// iterations of ~4 flops per term, 2^27 terms are ~3·10^10 flops, well under
// a second on any device of compute capability 7.5 or later in float64; the
// value is a guess to be measured on hardware (cuda/README.md). 0 or less
// disables the split. A call reads it once, when it starts; the package's
// tests bound one call's launches through that call's own options instead of
// changing it, so that they may run in parallel.
var LaunchTerms int64 = 1 << 27

// Device describes one CUDA device.
type Device struct {
	Index           int
	Name            string
	Major, Minor    int // compute capability
	Memory          int64
	MultiProcessors int
}

// Stats are timings (CUDA events, milliseconds) and sizes of one call; the
// sums over the batches when the work was split.
type Stats struct {
	UploadMS, SolveMS, DownloadMS float64
	Blocks, Threads               int
	ScratchBytes                  int64
	// WallMS is the time from the first upload to the last download, and
	// OverlapMS = max(0, UploadMS+SolveMS+DownloadMS−WallMS) the time hidden by
	// running transfers and stages on separate streams (ShortestPathGram's
	// pipeline; zero where they run on one stream). Chunks is the number of
	// chunks the pairs were cut into (ShortestPathGram).
	WallMS, OverlapMS float64
	Chunks            int
	// Batches is the number of library calls the work took (more than one
	// when device memory ran out and the work was split).
	Batches int
	// StagedPairs is the number of pairs (MarginalizedGram and friends) whose
	// solver block staged the pair's tiles in shared memory once and read
	// them from there in every mat-vec; the others read global memory.
	StagedPairs int
	// WarpPairs is the number of pairs (MarginalizedGram and Nodal) solved
	// one warp a pair (mgk_solve_warp), WidePairs by a grid of blocks each
	// (mgk_wide_*); the others one block a pair.
	WarpPairs, WidePairs int
	// DenseCols is the number of feature columns ExplicitGram multiplied as
	// a dense panel (the largest over the batches); the others took the
	// sparse path.
	DenseCols int
	// QuotientNodes and GivenNodes (MarginalizedGram, GramGrad) are the
	// nodes of the call's graphs as solved (colour-refinement quotients,
	// unless mgk.QuotientOff) and as given: the systems are
	// (QuotientNodes/GivenNodes)² the size, per pair, on average.
	QuotientNodes, GivenNodes int
}

// prepare validates a MarginalizedGram call: resolved options, compiled base
// kernels and, for a symmetric call, Y = X. outLen is the length of the Gram
// output, checked against len(X)·len(Y); -1 when there is none (Diag).
func prepare(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, prec Precision, outLen int) (o mgk.Options, node, edge layout.Program, nodeCols, edgeCols int, err error) {
	if prec != Float64 && prec != Float32 {
		err = fmt.Errorf("cuda: precision %d must be 64 or 32", prec)
		return
	}
	// The same checks and defaults as the CPU solver's.
	if o, Y, err = mgk.Check(X, Y, startX, startY, symmetric, opt); err != nil {
		return
	}
	// The device runs Jacobi-preconditioned CG: the tolerance the accuracy
	// contract asks of it.
	o.Tol = mgk.JacobiTolerance(o)
	if prec == Float32 {
		o.Tol = max(o.Tol, Float32MinTol)
	}
	if outLen >= 0 && outLen != len(X)*len(Y) {
		err = fmt.Errorf("mgk: out has %d entries for a %d×%d Gram matrix", outLen, len(X), len(Y))
		return
	}
	nodeCols, edgeCols = max(microkernel.MaxCol(o.NodeKernel), 1), max(microkernel.MaxCol(o.EdgeKernel), 1)
	if node, err = layout.Compile(o.NodeKernel); err != nil {
		err = fmt.Errorf("node kernel: %w", err)
		return
	}
	if edge, err = layout.Compile(o.EdgeKernel); err != nil {
		err = fmt.Errorf("edge kernel: %w", err)
	}
	return
}

// DefaultCPUWork is the SP-edge-pair count |SP(G)|·|SP(G')| below which
// ShortestPathGram leaves a pair to the CPU workers (both graphs small: such
// pairs cost less than their share of a kernel launch and of the transfers).
// It is a first guess, not a measurement: no GPU has run this code yet.
const DefaultCPUWork = 1 << 14

// SPHybrid configures ShortestPathGram's hybrid scheduling.
type SPHybrid struct {
	// CPUWork: pairs of graphs whose SP-edge counts are both below
	// √CPUWork go to gokernel/spkernel on the CPU (opt.NJobs workers) while
	// the GPU does all the others, at the same time. 0 means
	// DefaultCPUWork; negative sends every pair to the GPU.
	CPUWork int64
}

// spPrograms compiles the node and length kernels of the shortest-path
// kernel: nil node kernel → constant 1, nil length kernel → exact match.
func spPrograms(opt spkernel.Options) (node, length layout.Program, err error) {
	nk, lk := opt.NodeKernel, opt.LengthKernel
	if nk == nil {
		nk = &microkernel.Constant{C: 1}
	}
	if lk == nil {
		lk = &microkernel.KroneckerDelta{H: 0, Col: 0, Width: 1}
	}
	if node, err = layout.Compile(nk); err != nil {
		return node, length, fmt.Errorf("node kernel: %w", err)
	}
	if length, err = layout.Compile(lk); err != nil {
		return node, length, fmt.Errorf("length kernel: %w", err)
	}
	return
}

// spCheck validates a ShortestPathGram call as spkernel does and returns the
// node feature stride.
func spCheck(X, Y []*graph.Graph, opt spkernel.Options, out []float64) (int, error) {
	if len(out) != len(X)*len(Y) {
		return 0, fmt.Errorf("output has %d entries for a %d×%d Gram matrix", len(out), len(X), len(Y))
	}
	nc := 1
	if opt.NodeKernel != nil {
		nc = max(1, microkernel.MaxCol(opt.NodeKernel))
		for _, l := range [][]*graph.Graph{X, Y} {
			for i, g := range l {
				if g == nil {
					return 0, fmt.Errorf("graph %d is nil", i)
				}
				if g.NodeCols < microkernel.MaxCol(opt.NodeKernel) {
					return 0, fmt.Errorf("graph %d: the node kernel reads feature column %d but the graph has %d node feature columns", i, nc-1, g.NodeCols)
				}
			}
		}
	}
	if opt.LengthKernel != nil && microkernel.MaxCol(opt.LengthKernel) > 1 {
		return 0, fmt.Errorf("the length kernel reads column %d, but a length is a single column 0", microkernel.MaxCol(opt.LengthKernel)-1)
	}
	if opt.WeightCol < spkernel.GraphWeight {
		return 0, fmt.Errorf("weight column %d: use HopCounts (-1), GraphWeight (-2) or an edge feature column", opt.WeightCol)
	}
	return nc, nil
}
