// Package wwl computes the Wasserstein Weisfeiler–Lehman graph distance
// (Togninalli et al., "Wasserstein Weisfeiler-Lehman Graph Kernels", NeurIPS
// 2019): every graph becomes the set of its nodes' embeddings over h
// Weisfeiler–Lehman rounds, and the distance of two graphs is the earth
// mover's distance between their node sets, each node of a graph with n nodes
// weighing 1/n (package emd).
//
// Discrete labels: a node's embedding is the sequence of its WL labels in
// rounds 0..h (package wl), and the ground distance between two nodes the
// normalized Hamming distance, the fraction of the h+1 rounds in which their
// labels differ. The distance is then an exact rational, k / ((h+1)·n·n′) for
// an integer k computed without rounding, and is rounded once.
//
// Continuous attributes: round 0 is the attribute vector x⁰(v), and
//
//	x^{i+1}(v) = ½ (x^i(v) + (1/deg v) Σ_{u ∈ N(v)} x^i(u)),
//
// (the neighbour sum is empty, so 0, for an isolated node; a self-loop makes a
// node its own neighbour once; edge weights are not read); the embedding is
// the concatenation of rounds 0..h and the ground distance Euclidean.
//
// Nodes of one graph with equal embeddings are merged into one point of their
// summed mass, which leaves the distance unchanged and makes the transport
// problems of molecules small. A distance depends only on its two graphs and
// the options, bit for bit, whatever else the call holds.
package wwl

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/emd"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/vec"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// Options configures Distances and Diag.
type Options struct {
	// Iterations is the number h ≥ 0 of WL rounds (at most wl.MaxIterations).
	Iterations int
	// Continuous selects the continuous variant, reading AttrWidth attribute
	// columns from AttrCol; otherwise the discrete variant reads the label in
	// NodeLabelCol (-1: the node degrees).
	Continuous bool
	// NodeLabelCol is the node feature column of the discrete label.
	NodeLabelCol int
	// AttrCol and AttrWidth are the attribute columns of the continuous variant.
	AttrCol, AttrWidth int
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control reports progress (one unit per pair) and stops the computation
	// between pairs; nil for none.
	Control *schedule.Control
}

// embedding is a graph's node set with equal embeddings merged: np points of
// dim values each (labels or floats), sorted, with their multiplicities.
type embedding struct {
	n      int     // nodes of the graph
	labels []int32 // np × dim, discrete variant
	attrs  []float64
	count  []int64
	dim    int
}

func (e *embedding) points() int { return len(e.count) }

// Distances writes the WWL distance D(X[i], Y[j]) to out[i·len(Y)+j]; when
// symmetric, Y is ignored and taken to be X, and the upper triangle is
// computed and mirrored.
func Distances(X, Y []*graph.Graph, symmetric bool, opt Options, out []float64) error {
	all, yOff, err := schedule.Operands(X, Y, symmetric, len(out))
	if err != nil {
		return err
	}
	emb, err := embed(all, len(X), opt)
	if err != nil {
		return err
	}
	nx, ny := len(X), len(all)-yOff
	size := func(from, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(emb[from+i].points())
		}
		return s
	}
	grid := schedule.GridLargestFirst(size(0, nx), size(yOff, ny), symmetric)
	return schedule.RunPairs(opt.Control, grid, opt.NJobs, 16, newWorker, func(w *worker, i, j int) (float64, error) {
		return w.distance(emb[i], emb[yOff+j], opt)
	}, out)
}

// Diag writes D(X[i], X[i]) to out[i], computed as Distances computes it (it
// is 0 up to the rounding of continuous attributes' transport).
func Diag(X []*graph.Graph, opt Options, out []float64) error {
	if len(out) != len(X) {
		return fmt.Errorf("out has %d entries for %d graphs", len(out), len(X))
	}
	emb, err := embed(X, len(X), opt)
	if err != nil {
		return err
	}
	return schedule.RunPairs(opt.Control, schedule.DiagGrid(len(X)), opt.NJobs, 16, newWorker, func(w *worker, i, _ int) (float64, error) {
		return w.distance(emb[i], emb[i], opt)
	}, out)
}

// worker is one goroutine's working memory.
type worker struct {
	solver emd.Solver
	icost  []int64
	fcost  []float64
	a, b   []int64
}

func newWorker() *worker { return new(worker) }

// distance returns the WWL distance between two embedded graphs.
func (w *worker) distance(p, q *embedding, opt Options) (float64, error) {
	if opt.Continuous && compare(p, q) > 0 {
		p, q = q, p // a content order, so that D(G, G') and D(G', G) agree bit for bit
	}
	np, nq := p.points(), q.points()
	w.a, w.b = slices.Grow(w.a[:0], np)[:np], slices.Grow(w.b[:0], nq)[:nq]
	for i, c := range p.count {
		w.a[i] = c * int64(q.n)
	}
	for j, c := range q.count {
		w.b[j] = c * int64(p.n)
	}
	nm := float64(p.n) * float64(q.n)
	if !opt.Continuous {
		w.icost = costs(p.labels, q.labels, p.dim, w.icost, func(x, y []int32) int64 {
			var k int64
			for r, l := range x {
				if l != y[r] {
					k++
				}
			}
			return k
		})
		total, err := w.solver.Transport(w.icost, w.a, w.b)
		if err != nil {
			return 0, err
		}
		return float64(total) / (float64(p.dim) * nm), nil
	}
	w.fcost = euclidean(p.attrs, q.attrs, p.dim, w.fcost)
	total, err := w.solver.TransportFloat(w.fcost, w.a, w.b)
	if err != nil {
		return 0, err
	}
	return total / nm, nil
}

// costs fills dst (grown as needed) with the ground costs f(x, y) between the
// rows x of p and y of q, dim values each, row-major.
func costs[T, C any](p, q []T, dim int, dst []C, f func(x, y []T) C) []C {
	np, nq := len(p)/dim, len(q)/dim
	dst = slices.Grow(dst[:0], np*nq)[:np*nq]
	for i := 0; i < np; i++ {
		x := p[i*dim : i*dim+dim]
		for j := 0; j < nq; j++ {
			dst[i*nq+j] = f(x, q[j*dim:j*dim+dim])
		}
	}
	return dst
}

// euclidean fills dst (grown as needed) with the Euclidean distances between
// the rows of p and q, dim values each, row-major (the squares summed by
// vec.SquaredDistances, the same bits on every CPU of one build).
func euclidean(p, q []float64, dim int, dst []float64) []float64 {
	np, nq := len(p)/dim, len(q)/dim
	dst = slices.Grow(dst[:0], np*nq)[:np*nq]
	for i := 0; i < np; i++ {
		out := dst[i*nq : i*nq+nq]
		vec.SquaredDistances(out, p[i*dim:i*dim+dim], q)
		for j, s := range out {
			out[j] = math.Sqrt(s)
		}
	}
	return dst
}

// compare orders embeddings by content.
func compare(p, q *embedding) int {
	if c := cmp.Or(cmp.Compare(p.n, q.n), cmp.Compare(p.points(), q.points())); c != 0 {
		return c
	}
	if c := slices.Compare(p.attrs, q.attrs); c != 0 {
		return c
	}
	return slices.Compare(p.count, q.count)
}

// embed computes the merged node embeddings of graphs (nx of them are X, the
// rest Y, for error messages).
func embed(graphs []*graph.Graph, nx int, opt Options) ([]*embedding, error) {
	if opt.Iterations < 0 || opt.Iterations > wl.MaxIterations {
		return nil, fmt.Errorf("iterations must be in [0, %d], got %d", wl.MaxIterations, opt.Iterations)
	}
	for g, gr := range graphs {
		if gr.N == 0 {
			return nil, fmt.Errorf("graph %s has no nodes: the Wasserstein distance compares node sets, which must not be empty",
				schedule.OperandName(g, nx))
		}
	}
	emb := make([]*embedding, len(graphs))
	if opt.Continuous {
		if opt.AttrWidth < 1 {
			return nil, fmt.Errorf("the continuous variant needs at least one attribute column, got %d", opt.AttrWidth)
		}
		err := schedule.Run(opt.Control, len(graphs), opt.NJobs, 8, func(_, g int) error {
			e, err := continuous(graphs[g], opt)
			if err != nil {
				return fmt.Errorf("graph %s: %w", schedule.OperandName(g, nx), err)
			}
			emb[g] = e
			return nil
		})
		return emb, err
	}
	rounds, _, err := wl.Labels(graphs, wl.Options{Iterations: opt.Iterations, NodeLabelCol: opt.NodeLabelCol,
		EdgeLabelCol: -1, NJobs: opt.NJobs, Control: opt.Control})
	if err != nil {
		return nil, err
	}
	d := opt.Iterations + 1
	start := 0
	for g, gr := range graphs {
		seq := make([]int32, gr.N*d)
		for u := 0; u < gr.N; u++ {
			for r := range rounds {
				seq[u*d+r] = rounds[r][start+u]
			}
		}
		start += gr.N
		e := &embedding{n: gr.N, dim: d}
		e.labels, e.count = merge(seq, gr.N, d, slices.Compare[[]int32])
		emb[g] = e
	}
	return emb, nil
}

// continuous propagates a graph's attributes and merges equal embeddings.
func continuous(g *graph.Graph, opt Options) (*embedding, error) {
	wd := opt.AttrWidth
	if opt.AttrCol < 0 || opt.AttrCol+wd > g.NodeCols {
		return nil, fmt.Errorf("attribute columns [%d, %d) but the nodes have %d feature columns", opt.AttrCol, opt.AttrCol+wd, g.NodeCols)
	}
	h := opt.Iterations
	d := wd * (h + 1)
	x := make([]float64, g.N*d) // node u's embedding is x[u*d : u*d+d], round i at offset i*wd
	for u := 0; u < g.N; u++ {
		row := g.Node(u)[opt.AttrCol : opt.AttrCol+wd]
		for c, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("node %d: attribute %d is %v; attributes must be finite", u, c, v)
			}
		}
		copy(x[u*d:], row)
	}
	for i := 1; i <= h; i++ {
		for u := 0; u < g.N; u++ {
			nb := g.Col[g.RowPtr[u]:g.RowPtr[u+1]]
			dst := x[u*d+i*wd : u*d+i*wd+wd]
			src := x[u*d+(i-1)*wd : u*d+i*wd]
			for c := range dst {
				s := 0.0
				for _, v := range nb {
					s += x[int(v)*d+(i-1)*wd+c]
				}
				if len(nb) > 0 {
					s /= float64(len(nb))
				}
				dst[c] = 0.5 * (src[c] + s)
			}
		}
	}
	e := &embedding{n: g.N, dim: d}
	e.attrs, e.count = merge(x, g.N, d, func(a, b []float64) int { return slices.Compare(a, b) })
	return e, nil
}

// merge sorts the n rows of dim values in v and merges equal ones, returning
// the distinct rows and their multiplicities.
func merge[T any](v []T, n, dim int, compare func(a, b []T) int) ([]T, []int64) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	row := func(i int) []T { return v[i*dim : i*dim+dim] }
	slices.SortStableFunc(idx, func(a, b int) int { return compare(row(a), row(b)) })
	var rows []T
	var count []int64
	for k, i := range idx {
		if k > 0 && compare(row(idx[k-1]), row(i)) == 0 {
			count[len(count)-1]++
			continue
		}
		rows = append(rows, row(i)...)
		count = append(count, 1)
	}
	return rows, count
}
