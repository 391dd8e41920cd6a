//go:build cgo

// Package cgraphs hands packed graphs (cuda/layout) to the C API of
// libggcuda.so (include/ggcuda.h): it builds the API's ggc_graphs and
// ggc_sp_graphs structs in C memory, pointing at the layout's Go slices,
// pinned until Free. The Go bridge (package cuda) and the host tests
// (cuda/hostref) both pass graphs through it.
//
// cgo gives each package its own Go type for a C struct, so the structs are
// returned as unsafe.Pointer, for the caller to convert to its own
// *C.ggc_graphs or *C.ggc_sp_graphs.
package cgraphs

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #include <stdlib.h>
// #include "ggcuda.h"
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/graphgram/graphgram/cuda/layout"
)

// Pin pins the first element of s with p and returns its address, or nil
// when s has no backing array (an empty list, which C does not read).
func Pin[T any](p *runtime.Pinner, s []T) unsafe.Pointer {
	if cap(s) == 0 {
		return nil
	}
	q := &s[:1][0]
	p.Pin(q)
	return unsafe.Pointer(q)
}

// Graphs is a ggc_graphs or a ggc_sp_graphs in C memory pointing at pinned
// Go slices.
type Graphs struct {
	c      unsafe.Pointer
	pinner runtime.Pinner
}

// alloc allocates g's struct, zeroed, in C memory.
func alloc[T any](g *Graphs) *T {
	var t T
	g.c = C.calloc(1, C.size_t(unsafe.Sizeof(t)))
	return (*T)(g.c)
}

// New returns L as a ggc_graphs; the caller frees it with Free once the
// library call that reads it has returned.
func New(L *layout.Graphs) *Graphs {
	g := &Graphs{}
	c, p := alloc[C.ggc_graphs](g), &g.pinner
	c.num_graphs = C.int32_t(L.NumGraphs)
	c.node_cols, c.edge_cols = C.int32_t(L.NodeCols), C.int32_t(L.EdgeCols)
	c.total_nodes, c.total_tiles, c.total_nz = C.int64_t(L.TotalNodes), C.int64_t(L.TotalTiles), C.int64_t(L.TotalNZ)
	c.total_classes, c.total_tileptr = C.int64_t(L.TotalClasses), C.int64_t(L.TotalTilePtr)
	c.desc = (*C.int64_t)(Pin(p, L.Desc))
	c.tile_ptr = (*C.int32_t)(Pin(p, L.TilePtr))
	c.tile_col = (*C.int32_t)(Pin(p, L.TileCol))
	c.mask = (*C.uint64_t)(Pin(p, L.Mask))
	c.nz_ptr = (*C.int32_t)(Pin(p, L.NzPtr))
	c.nz_pos = (*C.uint8_t)(Pin(p, L.NzPos))
	c.nz_w = (*C.double)(Pin(p, L.NzW))
	c.nz_class = (*C.int32_t)(Pin(p, L.NzClass))
	c.class_feat = (*C.double)(Pin(p, L.ClassFeat))
	c.node_feat = (*C.double)(Pin(p, L.NodeFeat))
	c.deg = (*C.double)(Pin(p, L.Deg))
	c.start = (*C.double)(Pin(p, L.Start))
	c.loop_nz = (*C.int32_t)(Pin(p, L.LoopNz))
	if L.Quotients > 0 {
		c.cw = (*C.double)(Pin(p, L.ClassWeight))
	}
	return g
}

// NewSP returns L as a ggc_sp_graphs; the caller frees it with Free once
// the library call that reads it has returned.
func NewSP(L *layout.SPGraphs) *Graphs {
	g := &Graphs{}
	c, p := alloc[C.ggc_sp_graphs](g), &g.pinner
	c.num_graphs, c.node_cols = C.int32_t(L.NumGraphs), C.int32_t(L.NodeCols)
	c.total_nodes, c.total_sp = C.int64_t(L.TotalNodes), C.int64_t(L.TotalSP)
	c.node_off = (*C.int64_t)(Pin(p, L.NodeOff))
	c.sp_off = (*C.int64_t)(Pin(p, L.SPOff))
	c.sp_u = (*C.int32_t)(Pin(p, L.U))
	c.sp_v = (*C.int32_t)(Pin(p, L.V))
	c.sp_len = (*C.int32_t)(Pin(p, L.Len))
	c.node_feat = (*C.double)(Pin(p, L.NodeFeat))
	return g
}

// C returns the struct's address, the const ggc_graphs* (New) or const
// ggc_sp_graphs* (NewSP) to pass to the library.
func (g *Graphs) C() unsafe.Pointer { return g.c }

// Free unpins the slices and frees the C struct.
func (g *Graphs) Free() {
	g.pinner.Unpin()
	C.free(g.c)
}
