// Package pyramid computes the pyramid match graph kernel (Nikolentzos,
// Meladianos and Vazirgiannis 2017). Each graph's nodes are embedded in the
// unit hypercube [0, 1]^d: node v's coordinate q is |u_q(v)|, with u_q the
// unit eigenvector of the (weighted, symmetric) adjacency matrix belonging to
// the eigenvalue of q-th largest magnitude. At level j = 0..L−1 each axis is
// cut into 2^j equal cells (a value of exactly 1 falls in the last), and H_j(G)
// counts, for every axis q and cell c, G's nodes whose coordinate q lies in c
// (per node label when there are labels). With I_j the histogram
// intersection Σ min(H_j(G), H_j(G')) of level j, the kernel
//
//	K(G, G') = I_{L−1} + Σ_{j<L−1} 2^{−(L−1−j)} (I_j − I_{j+1})
//	         = 2^{−(L−1)} (I_0 + Σ_{j≥1} 2^{j−1} I_j)
//
// counts the matches found at each level, a match first found at a coarser
// level weighing half as much. Features returns the weighted counts
// w_j·H_j(G) with w_0 = 1 and w_j = 2^{j−1}, exact integers, so that the
// histogram intersection (sparsegram.SumMin) of two rows is 2^{L−1} K
// exactly; Scale is the factor 2^{−(L−1)}.
//
// The eigenvalues are sorted by decreasing magnitude, a positive one before
// a negative one of the same magnitude, then the d kept are ordered by
// decreasing value (axis 0 the largest). A graph with n < d nodes has n
// axes; the others are empty. When an eigenvalue is degenerate (or the d-th
// and (d+1)-th magnitudes tie) the eigenvectors are not unique: the
// coordinates are then whatever basis the symmetric eigensolver (gonum's
// EigenSym) returns for this adjacency matrix — deterministic for the graph
// as numbered, so a pair's value depends only on the two graphs, but they
// may change when the nodes are renumbered. Likewise a coordinate within
// rounding of a cell boundary k/2^j may fall on either side under a
// renumbering.
package pyramid

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"gonum.org/v1/gonum/mat"
)

// MaxLevels and MaxDim bound Options.Levels and Options.Dim.
const (
	MaxLevels = 16
	MaxDim    = 1024
)

// Options configures Features.
type Options struct {
	// Levels is the number L ≥ 1 of grid levels, Dim the dimension d ≥ 1 of
	// the embedding.
	Levels, Dim int
	// NodeLabelCol is the node feature column holding the discrete label
	// (< 0: all nodes alike).
	NodeLabelCol int
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// Scale returns 2^{−(levels−1)}, the factor that turns the histogram
// intersection of two rows of Features into the kernel value.
func Scale(levels int) float64 { return math.Ldexp(1, -(levels - 1)) }

// weight is level j's weight w_j in Features: 1 for j = 0, else 2^{j−1}.
func weight(j int) uint32 { return 1 << max(j-1, 0) }

// Embed returns the coordinates of g's nodes, row-major n × min(n, d): the
// absolute values of the eigenvectors of the d eigenvalues of largest
// magnitude, in decreasing order of eigenvalue (see the package comment).
func Embed(g *graph.Graph, d int) ([]float64, int, error) {
	n := g.N
	if n == 0 {
		return nil, 0, nil
	}
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(n, g.Dense()), true) {
		return nil, 0, fmt.Errorf("the eigendecomposition of the adjacency matrix did not converge")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	// Largest magnitude first, a positive value before its negative; the
	// solver returns ascending values, so the index breaks the remaining
	// (exact) ties deterministically.
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(math.Abs(vals[b]), math.Abs(vals[a])); c != 0 {
			return c
		}
		return cmp.Compare(vals[b], vals[a])
	})
	k := min(n, d)
	idx = idx[:k]
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(vals[b], vals[a]) })
	u := make([]float64, n*k)
	for v := range n {
		for q, e := range idx {
			u[v*k+q] = math.Abs(vecs.At(v, e))
		}
	}
	return u, k, nil
}

// cell returns the cell of coordinate x in [0, 1] on a grid of cells equal
// cells: ⌊x·cells⌋, with x = 1 in the last cell.
func cell(x float64, cells int) int {
	return min(int(math.Floor(x*float64(cells))), cells-1)
}

// Features returns the weighted histograms of the graphs, one row per graph:
// column (label, j, q, c) holds w_j times the number of the graph's nodes of
// that label whose coordinate q lies in cell c of level j. Columns number the
// (label, j, q, c) that occur in the call in increasing order of label value,
// then j, q and c. Graphs are embedded in parallel.
func Features(graphs []*graph.Graph, opt Options) (*sparsegram.Features, error) {
	switch {
	case opt.Levels < 1 || opt.Levels > MaxLevels:
		return nil, fmt.Errorf("levels must be in [1, %d], got %d", MaxLevels, opt.Levels)
	case opt.Dim < 1 || opt.Dim > MaxDim:
		return nil, fmt.Errorf("dimension must be in [1, %d], got %d", MaxDim, opt.Dim)
	}
	if err := graph.CheckLabelColumns(graphs, opt.NodeLabelCol, -1); err != nil {
		return nil, err
	}
	// The largest value, w_{L−1} times a node count, must fit a uint32.
	for g, gr := range graphs {
		if uint64(gr.N)*uint64(weight(opt.Levels-1)) > math.MaxUint32 {
			return nil, fmt.Errorf("graph %d: %d nodes are too many for %d levels", g, gr.N, opt.Levels)
		}
	}
	// The call's label values, sorted: a label's index depends on the values
	// present, never on where they occur.
	var labels []uint64
	if opt.NodeLabelCol >= 0 {
		for _, gr := range graphs {
			for v := range gr.N {
				labels = append(labels, labelBits(gr, v, opt.NodeLabelCol))
			}
		}
		slices.Sort(labels)
		labels = slices.Compact(labels)
	}
	// Graph g's keys (label index, j, q, c), one integer increasing in that
	// order, distinct and sorted, with their weighted counts.
	L, d := opt.Levels, opt.Dim
	perLabel := uint64(d) * (1<<L - 1)
	keys := make([][]uint64, len(graphs))
	vals := make([][]uint32, len(graphs))
	err := schedule.Run(opt.Control, len(graphs), opt.NJobs, 1, func(_, g int) error {
		gr := graphs[g]
		u, k, err := Embed(gr, d)
		if err != nil {
			return fmt.Errorf("graph %d: %w", g, err)
		}
		ks := make([]uint64, 0, gr.N*L*k)
		for v := range gr.N {
			var base uint64
			if opt.NodeLabelCol >= 0 {
				i, _ := slices.BinarySearch(labels, labelBits(gr, v, opt.NodeLabelCol))
				base = uint64(i) * perLabel
			}
			for j := range L {
				cells := 1 << j
				level := base + uint64(d)*uint64(cells-1)
				for q, x := range u[v*k : (v+1)*k] {
					ks = append(ks, level+uint64(q*cells+cell(x, cells)))
				}
			}
		}
		slices.Sort(ks)
		var vs []uint32
		w := 0
		for a := 0; a < len(ks); {
			b := a + 1
			for b < len(ks) && ks[b] == ks[a] {
				b++
			}
			ks[w] = ks[a]
			vs = append(vs, uint32(b-a)*weight(levelOf(ks[a]%perLabel, d)))
			w++
			a = b
		}
		keys[g], vals[g] = ks[:w:w], vs
		return nil
	})
	if err != nil {
		return nil, err
	}
	var distinct []uint64
	for _, ks := range keys {
		distinct = append(distinct, ks...)
	}
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	if len(distinct) > math.MaxInt32 {
		return nil, fmt.Errorf("%d histogram cells are more than the feature matrix holds", len(distinct))
	}
	f := &sparsegram.Features{NumCols: len(distinct), Ptr: make([]int, 1, len(graphs)+1)}
	for g, ks := range keys {
		for _, key := range ks {
			col, _ := slices.BinarySearch(distinct, key)
			f.Col = append(f.Col, int32(col))
		}
		f.Val = append(f.Val, vals[g]...)
		f.Ptr = append(f.Ptr, len(f.Col))
	}
	return f, nil
}

// levelOf returns the level j of a key within one label's block: the j with
// d·(2^j − 1) ≤ key < d·(2^{j+1} − 1).
func levelOf(key uint64, d int) int {
	j := 0
	for key >= uint64(d)*(1<<(j+1)-1) {
		j++
	}
	return j
}

// labelBits returns node v's label value as a key; +0 merges −0 into 0.
func labelBits(g *graph.Graph, v, col int) uint64 {
	return math.Float64bits(g.Node(v)[col] + 0)
}
