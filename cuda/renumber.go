package cuda

import (
	"fmt"
	"slices"

	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/reorder"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// When the device renumbers a graph's nodes before packing it, as the CPU
// solver does (reorder.Best: the order of fewest non-empty 8×8 tiles): when
// it has at least ReorderMinNodes nodes, or the call pairs it with at least
// ReorderMinPartners graphs. The device's mat-vec visits every tile pair of
// two tile rows, so fewer, fuller tiles are less work: renumbering cuts the
// tile pairs of a mat-vec 2.4× on 200 molecule-sized graphs, 2.2× on NCI1,
// 4.0× on PROTEINS and 3.9× on six graphs of 300-550 nodes
// (cuda/cmd/mgkcost; cuda/README.md, "Where the time goes"). It costs about
// 0.2-0.6 ms a molecule and 150-200 ms a 500-node graph on one core. At the
// device rate measured on 200 molecules (about 10⁹ tile-pair visits a
// second, 17 CG iterations) a molecule's renumbering pays back over about
// 900 partners; a large graph's within its first pair, whose solve holds
// one block for seconds. Both thresholds are estimates from one GPU run.
const (
	ReorderMinNodes    = 64
	ReorderMinPartners = 1024
)

// renumbered is one side of a call as the device computes it: the graphs,
// each replaced by its colour-refinement quotient where the call asks for
// one (quotients), those worth it renumbered (renumber), with their start
// probabilities in the same order. degs[i] and weights[i] hold quotient
// i's original degrees and class weights (nil for a graph as given; degs
// and weights nil when none is a quotient). perms[i] is nil for a graph
// kept in its node order; else node k of graphs[i] is node perms[i][k] of
// the graph before renumbering.
type renumbered struct {
	graphs        []*graph.Graph
	starts        [][]float64
	degs, weights [][]float64
	perms         [][]int
}

// part returns the graphs r of s (perms left out: only nodal matrices need
// them, for the whole call).
func (s renumbered) part(r span) renumbered {
	return renumbered{graphs: part(s.graphs, r), starts: part(s.starts, r), degs: part(s.degs, r), weights: part(s.weights, r)}
}

// pack packs s's graphs for the library (layout.PackQuotients).
func (s renumbered) pack(nodeCols, edgeCols int) (*layout.Graphs, error) {
	return layout.PackQuotients(s.graphs, s.starts, s.degs, s.weights, nodeCols, edgeCols)
}

// quotients returns gs and starts (nil, or nil entries: uniform), with
// each graph replaced by its colour-refinement quotient (mgk.QuotientOf,
// which depends on the graph alone) when refine is set, on nJobs
// goroutines; side ("X" or "Y") names the graphs in errors. The device then
// solves smaller systems with the CPU's values: K is unchanged in exact
// arithmetic, and the CPU solves the same quotients.
func quotients(gs []*graph.Graph, starts [][]float64, side string, refine bool, nJobs int) (renumbered, error) {
	r := renumbered{graphs: gs, starts: starts}
	if !refine {
		return r, nil
	}
	q := make([]mgk.QuotientGraph, len(gs))
	err := schedule.Run(nil, len(gs), nJobs, 16, func(_, i int) error {
		var s []float64
		if starts != nil {
			s = starts[i]
		}
		var err error
		q[i], err = mgk.QuotientOf(fmt.Sprintf("%s[%d]", side, i), gs[i], s)
		return err
	})
	if err != nil {
		return r, err
	}
	r.graphs, r.starts = make([]*graph.Graph, len(gs)), make([][]float64, len(gs))
	r.degs, r.weights = make([][]float64, len(gs)), make([][]float64, len(gs))
	for i, qi := range q {
		r.graphs[i], r.starts[i], r.degs[i], r.weights[i] = qi.Graph, qi.Start, qi.Degrees, qi.ClassWeights
	}
	return r, nil
}

// renumber returns s with the graphs worth it renumbered (ReorderMinNodes,
// ReorderMinPartners; partners is how many graphs the call pairs each of
// s's with), their per-node values permuted alike, on nJobs goroutines. A
// graph's kernel values do not depend on its node order, so a Gram matrix,
// its gradient and its diagonal need no mapping back; nodal matrices do
// (unpermuteNodal).
func renumber(s renumbered, partners, nJobs int) (renumbered, error) {
	worth := func(g *graph.Graph) bool {
		return g != nil && (g.N >= ReorderMinNodes || partners >= ReorderMinPartners)
	}
	if !slices.ContainsFunc(s.graphs, worth) {
		return s, nil
	}
	r := renumbered{graphs: make([]*graph.Graph, len(s.graphs)), perms: make([][]int, len(s.graphs))}
	values := []*[][]float64{&r.starts, &r.degs, &r.weights}
	for k, v := range [][][]float64{s.starts, s.degs, s.weights} {
		if v != nil {
			*values[k] = make([][]float64, len(v))
		}
	}
	err := schedule.Run(nil, len(s.graphs), nJobs, 16, func(_, i int) error {
		g := s.graphs[i]
		var perm []int
		if worth(g) {
			if p, m := reorder.Best(g); m != reorder.Natural {
				perm = p
				g = reorder.Permute(g, perm)
			}
		}
		r.graphs[i], r.perms[i] = g, perm
		for k, v := range [][][]float64{s.starts, s.degs, s.weights} {
			if v == nil {
				continue
			}
			x := v[i]
			if x != nil && perm != nil {
				y := make([]float64, len(x))
				for k, old := range perm {
					y[k] = x[old]
				}
				x = y
			}
			(*values[k])[i] = x
		}
		return nil
	})
	return r, err
}

// RenumberForDevice returns gs as the device solves the graphs of a Gram
// call (uniform start probabilities, the default quotient mode) that pairs
// each of them with partners graphs: each graph's colour-refinement
// quotient, renumbered where that pays (the caller's own graph where
// neither applies). What cuda/cmd/mgkcost counts.
func RenumberForDevice(gs []*graph.Graph, partners int) ([]*graph.Graph, error) {
	r, err := quotients(gs, nil, "X", true, 0)
	if err == nil {
		r, err = renumber(r, partners, 0)
	}
	return r.graphs, err
}

// renumberCall prepares both sides of a call of X × Y (Y is X when
// symmetric, and so is its result): quotients when refine is set, then each
// graph renumbered by its partners on the other side.
func renumberCall(X, Y []*graph.Graph, startX, startY [][]float64, symmetric, refine bool, nJobs int) (rx, ry renumbered, err error) {
	if rx, err = quotients(X, startX, "X", refine, nJobs); err == nil {
		rx, err = renumber(rx, len(Y), nJobs)
	}
	if err != nil || symmetric {
		return rx, rx, err
	}
	if ry, err = quotients(Y, startY, "Y", refine, nJobs); err == nil {
		ry, err = renumber(ry, len(X), nJobs)
	}
	return rx, ry, err
}

// unpermuteNodal puts a nodal matrix computed on renumbered graphs back in
// the caller's node order, in place: out has the nodes of rows' graphs as
// rows and of cols' as columns, graph after graph (offsets offX, offY).
func unpermuteNodal(out []float64, rows, cols renumbered, offX, offY []int) {
	nY := 0
	if n := len(cols.graphs); n > 0 {
		nY = offY[n-1] + cols.graphs[n-1].N
	}
	if cols.perms != nil && nY > 0 {
		colMap := make([]int, nY) // packed column → the caller's column
		for j, g := range cols.graphs {
			for k := range g.N {
				colMap[offY[j]+k] = offY[j] + k
				if p := cols.perms[j]; p != nil {
					colMap[offY[j]+k] = offY[j] + p[k]
				}
			}
		}
		tmp := make([]float64, nY)
		for r := 0; r+nY <= len(out); r += nY {
			copy(tmp, out[r:r+nY])
			for c, v := range tmp {
				out[r+colMap[c]] = v
			}
		}
	}
	if rows.perms == nil {
		return
	}
	for i, g := range rows.graphs {
		p := rows.perms[i]
		if p == nil {
			continue
		}
		band := make([]float64, g.N*nY)
		copy(band, out[offX[i]*nY:(offX[i]+g.N)*nY])
		for k := range g.N {
			copy(out[(offX[i]+p[k])*nY:(offX[i]+p[k]+1)*nY], band[k*nY:(k+1)*nY])
		}
	}
}

// nodeOffsets returns the first row of each graph in a nodal matrix (nodes
// graph after graph) and the total node count.
func nodeOffsets(gs []*graph.Graph) ([]int, int) {
	off := make([]int, len(gs))
	t := 0
	for i, g := range gs {
		off[i] = t
		t += g.N
	}
	return off, t
}
