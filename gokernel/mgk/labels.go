package mgk

import (
	"encoding/binary"
	"math"

	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// Base-kernel tables: a call evaluates the node (edge) kernel, and for
// GramGrad its gradient, once per pair of distinct feature rows of X and Y
// rather than once per pair of labels of every graph pair. Molecules have a
// few dozen distinct atoms and bonds over a whole data set but 5–15 per
// molecule, so each pair of molecules otherwise re-evaluates 50–200 product
// kernels (and, for GramGrad, their gradients) that the call has evaluated
// before; with the tables a pair's set-up copies them.
//
// A table holds nx·ny values and, for GramGrad, nx·ny·NumParams gradients.
// It is built only when that fits the budget (Options.labelTableBudget,
// defaultLabelTableBudget entries) and costs fewer evaluations than the pairs
// would make without it (Σ over pairs of labels·labels'), so graphs with
// continuous features (every row distinct) keep the per-pair evaluation.
const defaultLabelTableBudget = 1 << 22

// tableBudget is the most entries a label table may hold in this call.
func (o *Options) tableBudget() int {
	switch {
	case o.labelTableBudget < 0:
		return 0
	case o.labelTableBudget == 0:
		return defaultLabelTableBudget
	}
	return o.labelTableBudget
}

// kernelTable is one base kernel evaluated on every pair of X's and Y's
// distinct feature rows: val[gx·ny + gy], and grad[(gx·ny + gy)·np + t] for
// the np hyperparameters when gradients are asked for (nil otherwise).
type kernelTable struct {
	ny, np int
	val    []float64
	root   []float64 // √val, for the node kernel (pairSolver.s)
	grad   []float64
}

// at is the index in val of the label pair (ga, gb) of the pair being
// solved, ga of its first side. The table's rows are X's labels, so a pair
// solved the other way round (Y's graph first: swapped, see
// pairSolver.swapped) reads the transposed entry; that is the value the
// pair's own evaluation gives, since the base kernels are symmetric bit for
// bit (microkernel's TestEvalSymmetric).
func (t *kernelTable) at(ga, gb int32, swapped bool) int {
	if swapped {
		ga, gb = gb, ga
	}
	return int(ga)*t.ny + int(gb)
}

// labelTables are a call's node- and edge-kernel tables; either may be nil
// (built per pair instead).
type labelTables struct {
	node, edge *kernelTable
}

// labeler gives dense ids to byte strings, in order of first appearance.
// The ids only index the call's tables: no sum runs in their order.
type labeler map[string]int32

func (l labeler) id(b []byte) int32 {
	if v, ok := l[string(b)]; ok {
		return v
	}
	v := int32(len(l))
	l[string(b)] = v
	return v
}

// appendFloats appends the bits of xs: a key for equality of rows.
func appendFloats(b []byte, xs ...float64) []byte {
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// globalLabels numbers the distinct rows of a side set's labels: for each
// side, ids[s][l] is the call-wide id of the side's label l, and rows[id] is
// the feature row of id.
func globalLabels(ss []side, rep func(s *side) []int32, row func(s *side, i int) []float64) (ids [][]int32, rows [][]float64) {
	ids = make([][]int32, len(ss))
	seen := labeler{}
	var buf []byte
	for k := range ss {
		s := &ss[k]
		r := rep(s)
		ids[k] = make([]int32, len(r))
		for l, i := range r {
			x := row(s, int(i))
			buf = appendFloats(buf[:0], x...)
			id := seen.id(buf)
			if int(id) == len(rows) {
				rows = append(rows, x)
			}
			ids[k][l] = id
		}
	}
	return ids, rows
}

// newKernelTable evaluates k (and its gradient when grad is set) on rows
// xr × yr, with √ of each value when root is set. It returns nil when a value
// is negative or not finite: the pairs' own evaluation then reports which.
func newKernelTable(k microkernel.Kernel, xr, yr [][]float64, grad, root bool) *kernelTable {
	t := &kernelTable{ny: len(yr), val: make([]float64, len(xr)*len(yr))}
	if grad {
		t.np = k.NumParams()
		t.grad = make([]float64, len(t.val)*t.np)
	}
	for a, x := range xr {
		for b, y := range yr {
			e := a*len(yr) + b
			var v float64
			if grad {
				v = k.EvalGrad(x, y, t.grad[e*t.np:(e+1)*t.np])
			} else {
				v = k.Eval(x, y)
			}
			if root && (!(v >= 0) || math.IsInf(v, 0)) {
				return nil
			}
			t.val[e] = v
		}
	}
	if root {
		t.root = make([]float64, len(t.val))
		for e, v := range t.val {
			t.root[e] = math.Sqrt(v)
		}
	}
	return t
}

// buildLabelTables numbers the labels of xs and ys call-wide (side.ngl,
// side.egl) and builds the tables that pay for themselves (see
// Options.tableBudget), with gradients when grad is set. symmetric means ys is
// xs.
func buildLabelTables(xs, ys sideSet, symmetric bool, nPairs int, opt *Options, grad bool) labelTables {
	var tabs labelTables
	build := func(k microkernel.Kernel, rep func(s *side) []int32, row func(s *side, i int) []float64, set func(s *side, ids []int32), node bool) *kernelTable {
		if k == nil {
			return nil
		}
		xid, xr := globalLabels(xs.sides, rep, row)
		yid, yr := xid, xr
		if !symmetric {
			yid, yr = globalLabels(ys.sides, rep, row)
		}
		// Evaluations without the table: Σ over pairs of lg·lh, estimated
		// from the mean label counts.
		mean := func(ids [][]int32) float64 {
			n := 0
			for _, l := range ids {
				n += len(l)
			}
			return float64(n) / float64(max(1, len(ids)))
		}
		entries := len(xr) * len(yr)
		np := 0
		if grad {
			np = k.NumParams()
		}
		if entries*(1+np) > opt.tableBudget() || float64(entries) > mean(xid)*mean(yid)*float64(nPairs) {
			return nil
		}
		t := newKernelTable(k, xr, yr, grad, node)
		if t == nil {
			return nil
		}
		for i := range xs.sides {
			set(&xs.sides[i], xid[i])
		}
		if !symmetric {
			for j := range ys.sides {
				set(&ys.sides[j], yid[j])
			}
		}
		return t
	}
	tabs.node = build(opt.NodeKernel, func(s *side) []int32 { return s.nrep },
		func(s *side, i int) []float64 { return s.g.Node(i) }, func(s *side, ids []int32) { s.ngl = ids }, true)
	tabs.edge = build(opt.EdgeKernel, func(s *side) []int32 { return s.erep },
		func(s *side, i int) []float64 { return s.g.Edge(i) }, func(s *side, ids []int32) { s.egl = ids }, false)
	return tabs
}

// nodeTable returns the call's node-kernel table when it covers the pair
// (a, b), else nil.
func (ps *pairSolver) nodeTable(a, b *side) *kernelTable {
	if ps.tab == nil || ps.tab.node == nil || a.ngl == nil || b.ngl == nil {
		return nil
	}
	return ps.tab.node
}

// edgeTable is nodeTable for the edge kernel.
func (ps *pairSolver) edgeTable(a, b *side) *kernelTable {
	if ps.tab == nil || ps.tab.edge == nil || a.egl == nil || b.egl == nil {
		return nil
	}
	return ps.tab.edge
}

// sameSides reports whether xs and ys are one side set (a symmetric call, or
// Diag), whose labels are then numbered once.
func sameSides(xs, ys sideSet) bool {
	return len(xs.sides) == len(ys.sides) && (len(xs.sides) == 0 || &xs.sides[0] == &ys.sides[0])
}
