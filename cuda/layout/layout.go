// Package layout turns graphs and base kernels into the flat arrays of the C API
// of graphgram's CUDA library (cuda/include/ggcuda.h): graphs packed into
// octiles by gokernel/octile and concatenated, base kernels compiled to the
// postfix programs of cuda/include/gg/mk.h. It is pure Go, shared by the cgo
// bridge (package cuda) and the host tests (package cuda/hostref).
package layout

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
)

// Limits of a compiled program; they match GGC_MK_MAX_INSTR and GGC_MK_MAX_STACK.
const (
	MaxInstr = 24
	MaxStack = 6
)

// Program opcodes, as enum ggc_mk_op.
const (
	OpConstant          = 1
	OpKroneckerDelta    = 2
	OpSquareExponential = 3
	OpBrownianBridge    = 4
	OpSum               = 5
	OpProduct           = 6
	OpNormalized        = 7
)

// Descriptor fields per graph, as GGC_DESC_*.
const (
	DescN = iota
	DescNT
	DescNode0
	DescTilePtr0
	DescClass0
	DescNClass
	DescNNZ
	_
	DescFields
)

// ErrUnsupported marks inputs this build of the CUDA library cannot take (a
// base kernel outside the compiled-in set or too large a program, a graph the
// octile layout cannot hold); callers use the CPU for them.
var ErrUnsupported = errors.New("not supported by the CUDA backend")

// Instr is ggc_mk_instr. Pidx is the index of a leaf's hyperparameter in
// microkernel's EvalGrad order (-1 for the other operations): the device
// differentiates with respect to parameter t by seeding the leaf whose Pidx
// is t.
type Instr struct {
	Op, Col, Width, Nargs int32
	Pidx, Pad             int32
	Param                 float64
}

// Program is ggc_mk_program: same size and field order. NParams is the
// kernel's NumParams.
type Program struct {
	N, Self, MaxCol, NParams int32
	Ins                      [MaxInstr]Instr
}

// Compile translates k into a program, or returns an error wrapping
// ErrUnsupported when k is not one of microkernel's kernels or is too large.
func Compile(k microkernel.Kernel) (Program, error) {
	var p Program
	depth, maxDepth := 0, 0
	// leaf gives the next leaf its hyperparameter index: every compiled-in
	// leaf has exactly one, numbered depth-first as microkernel's EvalGrad
	// numbers them, which is the order a postfix program meets its leaves.
	leaf := func(in Instr) Instr {
		in.Pidx = p.NParams
		p.NParams++
		return in
	}
	var emit func(k microkernel.Kernel) error
	push := func(in Instr, pop int) error {
		if int(p.N) >= MaxInstr {
			return fmt.Errorf("base kernel has more than %d operations: %w", MaxInstr, ErrUnsupported)
		}
		p.Ins[p.N] = in
		p.N++
		depth += 1 - pop
		maxDepth = max(maxDepth, depth)
		return nil
	}
	emit = func(k microkernel.Kernel) error {
		switch k := k.(type) {
		case *microkernel.Constant:
			return push(leaf(Instr{Op: OpConstant, Param: k.C}), 0)
		case *microkernel.KroneckerDelta:
			return push(leaf(Instr{Op: OpKroneckerDelta, Col: int32(k.Col), Width: int32(k.Width), Param: k.H}), 0)
		case *microkernel.SquareExponential:
			return push(leaf(Instr{Op: OpSquareExponential, Col: int32(k.Col), Width: int32(k.Width), Param: k.LengthScale}), 0)
		case *microkernel.BrownianBridge:
			return push(leaf(Instr{Op: OpBrownianBridge, Col: int32(k.Col), Width: 1, Param: k.C}), 0)
		case *microkernel.Sum, *microkernel.Product:
			terms, op := []microkernel.Kernel(nil), int32(OpSum)
			if s, ok := k.(*microkernel.Sum); ok {
				terms = s.Terms
			} else {
				terms, op = k.(*microkernel.Product).Terms, OpProduct
			}
			if len(terms) == 0 {
				return fmt.Errorf("empty sum or product: %w", ErrUnsupported)
			}
			for _, t := range terms {
				if err := emit(t); err != nil {
					return err
				}
			}
			return push(Instr{Op: op, Nargs: int32(len(terms)), Pidx: -1}, len(terms))
		case *microkernel.Normalized:
			if err := emit(k.K); err != nil {
				return err
			}
			p.Self = 1
			return push(Instr{Op: OpNormalized, Pidx: -1}, 0)
		case nil:
			return fmt.Errorf("nil base kernel: %w", ErrUnsupported)
		}
		return fmt.Errorf("base kernel %T is not compiled into the CUDA library: %w", k, ErrUnsupported)
	}
	if err := emit(k); err != nil {
		return p, err
	}
	if maxDepth > MaxStack {
		return p, fmt.Errorf("base kernel nests %d values deep, the CUDA library holds %d: %w", maxDepth, MaxStack, ErrUnsupported)
	}
	if int(p.NParams) != k.NumParams() {
		// A compiled-in kernel whose parameters are not one per leaf: the
		// device's gradient numbering would be wrong.
		return p, fmt.Errorf("base kernel has %d hyperparameters, its program %d leaves: %w", k.NumParams(), p.NParams, ErrUnsupported)
	}
	p.MaxCol = int32(microkernel.MaxCol(k))
	return p, nil
}

// Graphs is ggc_graphs with Go slices: a list of graphs packed into octiles
// and concatenated. Slices have capacity at least 1 so that a pointer to their
// first element always exists.
type Graphs struct {
	NumGraphs                                                   int
	NodeCols, EdgeCols                                          int32
	TotalNodes, TotalTiles, TotalNZ, TotalClasses, TotalTilePtr int64
	Desc                                                        []int64
	TilePtr, TileCol                                            []int32
	Mask                                                        []uint64
	NzPtr                                                       []int32
	NzPos                                                       []uint8
	NzW                                                         []float64
	NzClass                                                     []int32
	ClassFeat, NodeFeat, Deg, Start, ClassWeight                []float64
	LoopNz                                                      []int32
	// Quotients counts the graphs packed with class weights (PackQuotients);
	// without any, ClassWeight (all ones) is not handed to the library.
	Quotients int
	// Packed holds the octile form of each graph (for tests and costs).
	Packed []*octile.Graph
}

// Pack packs gs in their own node order (the Gram matrix does not depend on
// it). Feature rows are copied with strides nodeCols and edgeCols, which must
// cover the columns the kernels read; columns beyond a graph's own are zero.
// starts may be nil, or hold nil entries, for all ones. A graph the octile
// layout cannot hold (two edges joining the same nodes with different
// features) gives an error wrapping ErrUnsupported.
func Pack(gs []*graph.Graph, starts [][]float64, nodeCols, edgeCols int) (*Graphs, error) {
	return PackQuotients(gs, starts, nil, nil, nodeCols, edgeCols)
}

// PackQuotients is Pack for graphs some of which are colour-refinement
// quotients (mgk.QuotientOf): degs[i] and weights[i] hold quotient i's
// original degrees and class weights √|class| (nil, or nil entries, for a
// graph as given: its own degrees and weights of one).
func PackQuotients(gs []*graph.Graph, starts, degs, weights [][]float64, nodeCols, edgeCols int) (*Graphs, error) {
	at := func(v [][]float64, gi int) []float64 {
		if v == nil {
			return nil
		}
		return v[gi]
	}
	L := &Graphs{NumGraphs: len(gs), NodeCols: int32(nodeCols), EdgeCols: int32(edgeCols)}
	L.Desc = make([]int64, DescFields*max(len(gs), 1))
	L.NzPtr = []int32{0}
	for gi, g := range gs {
		pk, err := octile.Pack(g)
		if err != nil {
			return nil, fmt.Errorf("graph %d: %v: %w", gi, err, ErrUnsupported)
		}
		L.Packed = append(L.Packed, pk)
		if len(L.NzPos)+pk.NNZ() > math.MaxInt32 || len(L.TileCol)+pk.NumTiles() > math.MaxInt32-1 {
			return nil, fmt.Errorf("more than 2³¹ tiles or nonzeros in one batch: %w", ErrUnsupported)
		}
		d := L.Desc[gi*DescFields:]
		d[DescN], d[DescNT] = int64(g.N), int64(pk.NT)
		d[DescNode0], d[DescTilePtr0] = L.TotalNodes, int64(len(L.TilePtr))
		d[DescClass0], d[DescNClass], d[DescNNZ] = L.TotalClasses, int64(pk.NumClass), int64(pk.NNZ())
		tile0, nz0 := int32(len(L.TileCol)), int32(len(L.NzPos))
		for _, t := range pk.TilePtr {
			L.TilePtr = append(L.TilePtr, tile0+t)
		}
		L.TileCol = append(L.TileCol, pk.TileCol...)
		L.Mask = append(L.Mask, pk.Mask...)
		for _, k := range pk.NzPtr[1:] {
			L.NzPtr = append(L.NzPtr, nz0+k)
		}
		L.NzPos = append(L.NzPos, pk.Pos...)
		L.NzW = append(L.NzW, pk.Weight...)
		L.NzClass = append(L.NzClass, pk.Class...)
		for _, e := range pk.ClassEdge {
			row := make([]float64, edgeCols)
			copy(row, g.Edge(int(e)))
			L.ClassFeat = append(L.ClassFeat, row...)
		}
		loops := make([]int32, g.N)
		for i := range loops {
			loops[i] = -1
		}
		for t := 0; t < pk.NumTiles(); t++ {
			if pk.TileRow[t] != pk.TileCol[t] {
				continue
			}
			for k := pk.NzPtr[t]; k < pk.NzPtr[t+1]; k++ {
				if r, c := pk.Pos[k]/8, pk.Pos[k]%8; r == c {
					loops[8*int(pk.TileRow[t])+int(r)] = nz0 + k
				}
			}
		}
		L.LoopNz = append(L.LoopNz, loops...)
		deg := at(degs, gi)
		if deg == nil {
			deg = g.Degrees()
		} else {
			deg = slices.Clone(deg)
		}
		cw := at(weights, gi)
		if cw != nil {
			L.Quotients++
		}
		for i := 0; i < g.N; i++ {
			row := make([]float64, nodeCols)
			copy(row, g.Node(i))
			L.NodeFeat = append(L.NodeFeat, row...)
			if deg[i] == 0 {
				deg[i] = 1
			}
			p := 1.0
			if starts != nil && starts[gi] != nil {
				p = starts[gi][i]
			}
			L.Start = append(L.Start, p)
			c := 1.0
			if cw != nil {
				c = cw[i]
			}
			L.ClassWeight = append(L.ClassWeight, c)
		}
		L.Deg = append(L.Deg, deg...)
		L.TotalNodes += int64(g.N)
		L.TotalClasses += int64(pk.NumClass)
	}
	L.TotalTiles, L.TotalNZ, L.TotalTilePtr = int64(len(L.TileCol)), int64(len(L.NzPos)), int64(len(L.TilePtr))
	// Capacity at least one everywhere.
	L.TilePtr, L.TileCol, L.NzClass, L.LoopNz = pad(L.TilePtr), pad(L.TileCol), pad(L.NzClass), pad(L.LoopNz)
	L.Mask, L.NzPos = pad(L.Mask), pad(L.NzPos)
	L.NzW, L.ClassFeat, L.NodeFeat, L.Deg, L.Start = pad(L.NzW), pad(L.ClassFeat), pad(L.NodeFeat), pad(L.Deg), pad(L.Start)
	L.ClassWeight = pad(L.ClassWeight)
	return L, nil
}

func pad[T any](s []T) []T {
	if cap(s) == 0 {
		return make([]T, 0, 1)
	}
	return s
}

// N returns the node count of graph i.
func (L *Graphs) N(i int) int { return int(L.Desc[i*DescFields+DescN]) }

// Cost estimates the work of pair (i of a, j of b) as the solver's cost model
// does: the product of adjacency sizes plus nodes.
func Cost(a *Graphs, i int, b *Graphs, j int) float64 {
	na, nb := a.Desc[i*DescFields+DescNNZ]+a.Desc[i*DescFields+DescN], b.Desc[j*DescFields+DescNNZ]+b.Desc[j*DescFields+DescN]
	return float64(na) * float64(nb)
}
