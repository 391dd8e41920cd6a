package cuda

import (
	"github.com/graphgram/graphgram/gokernel/graph"
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
// those worth it renumbered, and their start probabilities in the same
// order. perms[i] is nil for a graph kept as given; else node k of
// graphs[i] is node perms[i][k] of the caller's graph.
type renumbered struct {
	graphs []*graph.Graph
	starts [][]float64
	perms  [][]int
}

// renumber returns gs and starts (nil, or nil entries: uniform) with the
// graphs worth it renumbered (ReorderMinNodes, ReorderMinPartners; partners
// is how many graphs the call pairs each of gs with), on nJobs goroutines.
// A graph's kernel values do not depend on its node order, so a Gram
// matrix, its gradient and its diagonal need no mapping back; nodal
// matrices do (unpermuteNodal).
func renumber(gs []*graph.Graph, starts [][]float64, partners, nJobs int) (renumbered, error) {
	r := renumbered{graphs: gs, starts: starts}
	worth := func(g *graph.Graph) bool {
		return g != nil && (g.N >= ReorderMinNodes || partners >= ReorderMinPartners)
	}
	some := false
	for _, g := range gs {
		some = some || worth(g)
	}
	if !some {
		return r, nil
	}
	r.graphs, r.perms = make([]*graph.Graph, len(gs)), make([][]int, len(gs))
	if starts != nil {
		r.starts = make([][]float64, len(starts))
	}
	err := schedule.Run(nil, len(gs), nJobs, 16, func(_, i int) error {
		g := gs[i]
		var s []float64
		if starts != nil {
			s = starts[i]
		}
		if worth(g) {
			if perm, m := reorder.Best(g); m != reorder.Natural {
				r.perms[i] = perm
				g = reorder.Permute(g, perm)
				if s != nil {
					p := make([]float64, len(s))
					for k, old := range perm {
						p[k] = s[old]
					}
					s = p
				}
			}
		}
		r.graphs[i] = g
		if starts != nil {
			r.starts[i] = s
		}
		return nil
	})
	return r, err
}

// RenumberForDevice returns gs renumbered as the device renumbers the graphs
// of a call that pairs each of them with partners graphs (the caller's own
// graph where it is kept as given): what cuda/cmd/mgkcost counts.
func RenumberForDevice(gs []*graph.Graph, partners int) ([]*graph.Graph, error) {
	r, err := renumber(gs, nil, partners, 0)
	return r.graphs, err
}

// renumberCall renumbers both sides of a call of X × Y (Y is X when
// symmetric, and so is its result), each graph by its partners on the other
// side.
func renumberCall(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, nJobs int) (rx, ry renumbered, err error) {
	if rx, err = renumber(X, startX, len(Y), nJobs); err != nil || symmetric {
		return rx, rx, err
	}
	ry, err = renumber(Y, startY, len(X), nJobs)
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
