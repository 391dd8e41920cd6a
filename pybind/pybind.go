// Package pybind is the flat API that gopy exports to Python as graphgram._ggcore.
// Arrays cross as addresses of NumPy buffers (uintptr) and lengths; base kernels
// cross as JSON expressions. The layouts are documented in docs/abi.md. Nothing
// here keeps a pointer to Python memory after a call returns, and every exported
// function turns a Go panic into an error, which gopy raises as RuntimeError.
package pybind

import (
	"fmt"
	"runtime/debug"
	"unsafe"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
)

// Word offsets of a batch descriptor (docs/abi.md).
const (
	descN = iota
	descNodePtr
	descEdgePtr
	descEdges
	descWeights
	descNodeFeat
	descNodeCols
	descEdgeFeat
	descEdgeCols
	descLen
)

// foreign turns the address of a NumPy buffer into a pointer. The memory belongs
// to Python's allocator, not to Go's heap, so the garbage collector neither moves
// nor frees it while the call runs; reading the uintptr through memory keeps vet's
// uintptr-to-pointer check, which guards Go-heap objects, out of the way.
func foreign(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }

// f64s views n float64 values at addr without copying.
func f64s(addr uintptr, n int) []float64 {
	if n == 0 || addr == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(foreign(addr)), n)
}

// i64s views n int64 values at addr without copying.
func i64s(addr uintptr, n int) []int64 {
	if n == 0 || addr == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(foreign(addr)), n)
}

// i32s views n int32 values at addr without copying.
func i32s(addr uintptr, n int) []int32 {
	if n == 0 || addr == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(foreign(addr)), n)
}

// readBatch copies the graphs described by the descriptor at desc into Go memory.
func readBatch(desc uintptr) ([]*graph.Graph, error) {
	if desc == 0 {
		return nil, fmt.Errorf("null batch descriptor")
	}
	d := i64s(desc, descLen)
	n := int(d[descN])
	if n < 0 {
		return nil, fmt.Errorf("batch descriptor: negative graph count %d", n)
	}
	b := graph.Batch{
		NodePtr:  i64s(uintptr(d[descNodePtr]), n+1),
		EdgePtr:  i64s(uintptr(d[descEdgePtr]), n+1),
		NodeCols: int(d[descNodeCols]),
		EdgeCols: int(d[descEdgeCols]),
	}
	if len(b.NodePtr) != n+1 || len(b.EdgePtr) != n+1 {
		return nil, fmt.Errorf("batch descriptor: missing node_ptr or edge_ptr")
	}
	nodes, edges := int(b.NodePtr[n]), int(b.EdgePtr[n])
	b.Edges = i64s(uintptr(d[descEdges]), 2*edges)
	b.Weight = f64s(uintptr(d[descWeights]), edges)
	b.NodeFeat = f64s(uintptr(d[descNodeFeat]), nodes*b.NodeCols)
	b.EdgeFeat = f64s(uintptr(d[descEdgeFeat]), edges*b.EdgeCols)
	return b.Unpack()
}

// readKernel parses a base-kernel expression and checks that the feature rows it
// will read have enough columns; what names the kernel in messages.
func readKernel(what, spec string, cols int) (microkernel.Kernel, error) {
	k, err := microkernel.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if mc := microkernel.MaxCol(k); mc > cols {
		return nil, fmt.Errorf("%s reads feature column %d but the graphs have %d", what, mc-1, cols)
	}
	return k, nil
}

// guard turns a panic in the calling function into an error stored in *err.
// Use as `defer guard(&err)` in every exported function.
func guard(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("graphgram internal error (Go panic): %v\n%s", r, debug.Stack())
	}
}

// Version returns the version of the Go core.
func Version() string { return "0.1.0" }

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
