// Package pybind is the flat API that gopy exports to Python as graphgram._ggcore.
//
// It is the Go half of graphgram's one Python↔Go boundary (the Python half is
// graphgram/_backend.py; the layout is in docs/abi.md). Python packs graphs into
// contiguous NumPy arrays at call time and passes, for every array, its address
// and its length; Go views them only for the duration of the call, checks every
// length against what the data declare before reading or writing, copies what
// it keeps, and never holds an address after returning. Kernel parameters cross
// as one JSON document. Every exported function turns a Go panic into an error,
// and every error starts with the name of the Python exception it becomes.
package pybind

import (
	"errors"
	"fmt"
	"runtime/debug"
	"unsafe"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/octile"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// Word offsets of a batch descriptor (docs/abi.md): an address and a length for
// each array, the feature column counts, and a version word first.
const (
	descMagic = iota
	descN
	descNodePtr
	descNodePtrLen
	descEdgePtr
	descEdgePtrLen
	descEdges
	descEdgesLen
	descWeights
	descWeightsLen
	descNodeFeat
	descNodeFeatLen
	descNodeCols
	descEdgeFeat
	descEdgeFeatLen
	descEdgeCols
	descStart
	descStartLen
	descWords
)

// abiVersion is word 0 of every descriptor; a mismatch means the Python package
// and the compiled core come from different versions.
const abiVersion = 0x67670002

// Python exception classes an error maps to (the text before the first ": ").
const (
	valueError        = "ValueError"
	memoryError       = "MemoryError"
	runtimeError      = "RuntimeError"
	keyboardInterrupt = "KeyboardInterrupt"
)

// pyError is an error that names the Python exception it becomes.
type pyError struct {
	class string
	err   error
}

func (e *pyError) Error() string { return e.class + ": " + e.err.Error() }

// inputError marks err as a problem with the caller's input (ValueError).
func inputError(format string, args ...any) error {
	return &pyError{valueError, fmt.Errorf(format, args...)}
}

// classify gives err, returned by a kernel, its Python exception class:
// cancellation becomes KeyboardInterrupt, an internal panic RuntimeError, and
// anything else (the kernels validate their input) ValueError.
func classify(err error) error {
	var pe *pyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return err
	case errors.Is(err, schedule.ErrCancelled):
		return &pyError{keyboardInterrupt, err}
	case errors.Is(err, schedule.ErrPanic):
		return &pyError{runtimeError, err}
	}
	return &pyError{valueError, err}
}

// guard turns a panic in the calling function into a RuntimeError stored in
// *err, and classifies any other error. Use as `defer guard(&err)` in every
// exported function.
func guard(err *error) {
	if r := recover(); r != nil {
		*err = &pyError{runtimeError, fmt.Errorf("graphgram internal error (Go panic): %v\n%s", r, debug.Stack())}
		return
	}
	*err = classify(*err)
}

// foreign turns the address of a NumPy buffer into a pointer. The memory belongs
// to Python's allocator, not to Go's heap, so the garbage collector neither moves
// nor frees it while the call runs; reading the uintptr through memory keeps vet's
// uintptr-to-pointer check, which guards Go-heap objects, out of the way.
func foreign(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }

// view returns the n values of type T at addr, or an error when the buffer is
// missing, misaligned or its length is negative. n == 0 gives an empty slice.
func view[T any](addr uintptr, n int, what string) ([]T, error) {
	var zero T
	switch {
	case n < 0:
		return nil, inputError("%s: negative length %d", what, n)
	case n == 0:
		return nil, nil
	case addr == 0:
		return nil, inputError("%s: null buffer for %d values", what, n)
	case addr%unsafe.Alignof(zero) != 0:
		return nil, inputError("%s: misaligned buffer", what)
	}
	return unsafe.Slice((*T)(foreign(addr)), n), nil
}

// output views a result buffer of exactly want values.
func output[T any](addr uintptr, n, want int, what string) ([]T, error) {
	if n != want {
		return nil, inputError("%s has %d entries, %d are needed", what, n, want)
	}
	return view[T](addr, n, what)
}

// optionalOutput is output for a buffer that may be absent (n == 0).
func optionalOutput[T any](addr uintptr, n, want int, what string) ([]T, error) {
	if n == 0 {
		return nil, nil
	}
	return output[T](addr, n, want, what)
}

// batch is a decoded list of graphs and, when given, their start probabilities.
type batch struct {
	graphs             []*graph.Graph
	starts             [][]float64
	nodeCols, edgeCols int
}

// readBatch decodes the descriptor of descLen words at desc, names the list
// name ("X" or "Y") in errors, and copies the graphs into Go memory. The start
// probabilities stay views (nil when absent): they are read during the call only.
func readBatch(desc uintptr, descLen int, name string) (*batch, error) {
	d, err := view[int64](desc, descLen, name+" descriptor")
	if err != nil {
		return nil, err
	}
	if len(d) != descWords || d[descMagic] != abiVersion {
		return nil, &pyError{runtimeError, fmt.Errorf("%s: batch descriptor of an unknown version (the Python package and the compiled core do not match; reinstall graphgram)", name)}
	}
	n := d[descN]
	if n < 0 || n+1 != d[descNodePtrLen] || n+1 != d[descEdgePtrLen] {
		return nil, inputError("%s: descriptor declares %d graphs with %d node and %d edge offsets", name, n, d[descNodePtrLen], d[descEdgePtrLen])
	}
	arrays := []struct {
		addr, n int64
		what    string
	}{{d[descNodePtr], d[descNodePtrLen], "node_ptr"}, {d[descEdgePtr], d[descEdgePtrLen], "edge_ptr"}, {d[descEdges], d[descEdgesLen], "edges"}}
	var ints [3][]int64
	for k, a := range arrays {
		if ints[k], err = view[int64](uintptr(a.addr), int(a.n), name+" "+a.what); err != nil {
			return nil, err
		}
	}
	weights, err := view[float64](uintptr(d[descWeights]), int(d[descWeightsLen]), name+" weights")
	if err != nil {
		return nil, err
	}
	nodeFeat, err := view[float64](uintptr(d[descNodeFeat]), int(d[descNodeFeatLen]), name+" node features")
	if err != nil {
		return nil, err
	}
	edgeFeat, err := view[float64](uintptr(d[descEdgeFeat]), int(d[descEdgeFeatLen]), name+" edge features")
	if err != nil {
		return nil, err
	}
	b := graph.Batch{NodePtr: ints[0], EdgePtr: ints[1], Edges: ints[2], Weight: weights,
		NodeFeat: nodeFeat, NodeCols: int(d[descNodeCols]), EdgeFeat: edgeFeat, EdgeCols: int(d[descEdgeCols])}
	gs, err := b.Unpack(name)
	if err != nil {
		return nil, inputError("%w", err)
	}
	out := &batch{graphs: gs, nodeCols: b.NodeCols, edgeCols: b.EdgeCols}
	if d[descStartLen] != 0 {
		nodes := ints[0][n]
		if d[descStartLen] != nodes {
			return nil, inputError("%s: %d start probabilities for %d nodes", name, d[descStartLen], nodes)
		}
		all, err := view[float64](uintptr(d[descStart]), int(nodes), name+" start probabilities")
		if err != nil {
			return nil, err
		}
		out.starts = make([][]float64, n)
		for i := range out.starts {
			out.starts[i] = all[ints[0][i]:ints[0][i+1]:ints[0][i+1]]
		}
	}
	return out, nil
}

// operands decodes X and, unless descY is 0 (the symmetric case K(X, X)), Y.
func operands(descX uintptr, descXLen int, descY uintptr, descYLen int) (x, y *batch, symmetric bool, err error) {
	if x, err = readBatch(descX, descXLen, "X"); err != nil {
		return nil, nil, false, err
	}
	if descY == 0 && descYLen == 0 {
		return x, x, true, nil
	}
	if y, err = readBatch(descY, descYLen, "Y"); err != nil {
		return nil, nil, false, err
	}
	if x.nodeCols != y.nodeCols || x.edgeCols != y.edgeCols {
		return nil, nil, false, inputError("X and Y have %d/%d and %d/%d node/edge feature columns: they must be packed together", x.nodeCols, x.edgeCols, y.nodeCols, y.edgeCols)
	}
	return x, y, false, nil
}

// control views the caller's control block (cancel flag, pairs done, pairs in
// total); a zero length means none.
func control(addr uintptr, n int) (*schedule.Control, error) {
	if n == 0 {
		return nil, nil
	}
	words, err := view[int64](addr, n, "control block")
	if err != nil {
		return nil, err
	}
	c, err := schedule.ControlAt(words)
	if err != nil {
		return nil, inputError("%w", err)
	}
	return c, nil
}

// request is what every kernel entry point receives, decoded.
type request struct {
	x, y      *batch
	symmetric bool
	ctl       *schedule.Control
}

// version is set at link time by setup.py (-ldflags -X) from the package's one
// version source, python/graphgram/_version.py.
var version = "unreleased"

// Version returns the version of the Go core.
func Version() string { return version }

// ABIVersion returns the descriptor version word this core expects (docs/abi.md).
func ABIVersion() int { return abiVersion }

// VectorKernels reports whether the solver's AVX2 kernels are in use: the core
// was built with GOEXPERIMENT=simd and the CPU has AVX2 and FMA.
func VectorKernels() bool { return octile.SIMD }

// SelfTestPanic panics inside the guard that every exported function uses. It
// exists so that the test suite can check, through the real extension, that a Go
// panic reaches Python as an exception instead of aborting the interpreter.
func SelfTestPanic() (err error) {
	defer guard(&err)
	var empty []int
	_ = empty[len(empty)]
	return nil
}
