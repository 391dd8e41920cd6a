// Package graphhopper computes the GraphHopper kernel of Feragen et al. (2013),
// "Scalable kernels for graphs with continuous attributes":
//
//	K(G, G') = Σ_{v ∈ V} Σ_{v' ∈ V'} ⟨M(v), M'(v')⟩ · κnode(v, v'),
//
// where M(v)[a][b] counts the shortest paths of G with b edges (b+1 nodes) on
// which v is node a (0-based), over all ordered pairs of end nodes, every
// distinct shortest path counted and the one-node path (v) included; paths are
// measured in hops and never cross connected components. Only a ≤ b can be
// non-zero, so each M(v) is stored as its upper triangle, entry (a, b) at
// Tri(b)+a: the rows of a graph with a smaller diameter are then a prefix of
// those of a larger one, and no padding to a common size is needed. These are
// the values of GraKeL's GraphHopper.
//
// When the node kernel is linear (nil, meaning κnode ≡ 1, or a DotProduct) the
// kernel is an inner product of explicit features Φ(G) = Σ_v M(v) ⊗ (x_v, σ0),
// computed once per graph; any other node kernel is summed pair by pair over
// the n·n' node pairs.
//
// A value depends only on its two graphs and the options, bit for bit: each
// pair is computed with its graphs in the order graph.CompareContent gives,
// and feature maps are summed in index order.
package graphhopper

import (
	"fmt"
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// Options configures the kernel.
type Options struct {
	// NodeKernel compares node feature rows; nil means κnode ≡ 1.
	NodeKernel microkernel.Kernel
	// NJobs is the number of goroutines; ≤ 0 uses all cores.
	NJobs int
	// Control, when not nil, can stop the computation and counts the pairs done.
	Control *schedule.Control
}

// Tri returns b(b+1)/2, the offset of column b's entries in a packed upper
// triangle; a δ×δ triangle holds Tri(δ) entries.
func Tri(b int) int { return b * (b + 1) / 2 }

// Weights returns the path-position counts M of g: g.N rows of Tri(delta)
// values, row v holding M(v)[a][b] at Tri(b)+a, with delta the largest hop
// distance between connected nodes plus one (0 for the empty graph).
func Weights(g *graph.Graph) (m []float64, delta int, err error) {
	n := g.N
	d, err := spkernel.AllPairs(g, spkernel.HopCounts, spkernel.BFS)
	if err != nil {
		return nil, 0, err
	}
	for _, x := range d {
		if !math.IsInf(x, 1) {
			delta = max(delta, int(x)+1)
		}
	}
	t := Tri(delta)
	m = make([]float64, n*t)
	order := make([]int32, 0, n)
	sigma := make([]float64, n)
	des := make([]float64, n*delta)
	nbrs := func(v int32) []int32 { return g.Col[g.RowPtr[v]:g.RowPtr[v+1]] }
	for j := 0; j < n; j++ {
		row := d[j*n : (j+1)*n]
		// The nodes reachable from j by increasing distance (counting sort).
		order = order[:0]
		for level := 0; level < delta; level++ {
			found := false
			for v, x := range row {
				if x == float64(level) {
					order, found = append(order, int32(v)), true
				}
			}
			if !found {
				break
			}
		}
		// sigma[v]: the shortest paths from j to v, through the parents of v.
		for _, v := range order {
			if int(v) == j {
				sigma[v] = 1
				continue
			}
			s := 0.0
			for _, u := range nbrs(v) {
				if row[u] == row[v]-1 {
					s += sigma[u]
				}
			}
			sigma[v] = s
		}
		// des[v][l]: the shortest-path continuations of l edges away from j
		// starting at v, through the children of v.
		for k := len(order) - 1; k >= 0; k-- {
			v := order[k]
			dv := des[int(v)*delta : (int(v)+1)*delta]
			clear(dv)
			dv[0] = 1
			for _, w := range nbrs(v) {
				if row[w] != row[v]+1 {
					continue
				}
				dw := des[int(w)*delta : (int(w)+1)*delta]
				for l := 1; l < delta; l++ {
					dv[l] += dw[l-1]
				}
			}
		}
		for _, v := range order {
			a := int(row[v])
			mv := m[int(v)*t : (int(v)+1)*t]
			dv := des[int(v)*delta : (int(v)+1)*delta]
			for l := 0; a+l < delta; l++ {
				mv[Tri(a+l)+a] += sigma[v] * dv[l]
			}
		}
	}
	return m, delta, nil
}

// linearKernel reports whether k is linear in each argument (nil, a
// DotProduct, or a product of one DotProduct), returning its columns and σ0.
func linearKernel(k microkernel.Kernel) (lin bool, col, width int, sigma0 float64) {
	switch k := k.(type) {
	case nil:
		return true, 0, 0, 1
	case *microkernel.DotProduct:
		return true, k.Col, k.Width, k.Sigma0
	case *microkernel.Product:
		if len(k.Terms) == 1 {
			return linearKernel(k.Terms[0])
		}
	}
	return false, 0, 0, 0
}

// prepared is one graph's data for the kernel.
type prepared struct {
	g     *graph.Graph
	m     []float64 // Weights, n rows of t values
	t     int
	phi   []float64 // explicit features (linear node kernels)
	width int       // columns of phi per triangle entry
}

// prepare computes the weights (and features, for linear node kernels) of
// every graph, in parallel.
func prepare(gs []*graph.Graph, nx int, opt Options) ([]prepared, bool, error) {
	lin, col, width, sigma0 := linearKernel(opt.NodeKernel)
	ps := make([]prepared, len(gs))
	err := schedule.Run(opt.Control, len(gs), opt.NJobs, 1, func(_, i int) error {
		g := gs[i]
		m, delta, err := Weights(g)
		if err != nil {
			return fmt.Errorf("%s: %w", schedule.OperandName(i, nx), err)
		}
		p := prepared{g: g, m: m, t: Tri(delta)}
		if lin {
			p.width = width + 1
			p.phi = make([]float64, p.t*p.width)
			for v := 0; v < g.N; v++ {
				mv := m[v*p.t : (v+1)*p.t]
				var x []float64
				if width > 0 {
					x = g.Node(v)[col : col+width]
				}
				for t, c := range mv {
					if c == 0 {
						continue
					}
					f := p.phi[t*p.width : (t+1)*p.width]
					for k, xv := range x {
						f[k] += c * xv
					}
					f[width] += c
				}
			}
			for t := 0; t < p.t; t++ {
				p.phi[t*p.width+width] *= sigma0
			}
			p.m = nil
		}
		ps[i] = p
		return nil
	})
	return ps, lin, err
}

// pair returns K(a, b).
func pair(a, b *prepared, k microkernel.Kernel) float64 {
	if a.phi != nil {
		n := min(len(a.phi), len(b.phi))
		s := 0.0
		for i, x := range a.phi[:n] {
			s += x * b.phi[i]
		}
		return s
	}
	if graph.CompareContent(a.g, nil, b.g, nil) > 0 {
		a, b = b, a
	}
	t := min(a.t, b.t)
	s := 0.0
	for v := 0; v < a.g.N; v++ {
		mv := a.m[v*a.t : v*a.t+t]
		xv := a.g.Node(v)
		for w := 0; w < b.g.N; w++ {
			mw := b.m[w*b.t : w*b.t+t]
			if c := dot(mv, mw); c != 0 {
				s += c * k.Eval(xv, b.g.Node(w))
			}
		}
	}
	return s
}

// dot returns Σ x[i]·y[i] (len(y) ≥ len(x)), summed in four interleaved
// partial sums, a fixed order.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Gram writes K(X[i], Y[j]) into out[i*len(Y)+j]. When symmetric, Y is ignored,
// the matrix is len(X)×len(X), and only its upper triangle is computed and
// mirrored.
func Gram(X, Y []*graph.Graph, symmetric bool, opt Options, out []float64) error {
	all, yOff, err := schedule.Operands(X, Y, symmetric, len(out))
	if err != nil {
		return err
	}
	nx, ny := len(X), len(all)-yOff
	ps, _, err := prepare(all, nx, opt)
	if err != nil {
		return err
	}
	return schedule.RunPairs(opt.Control, schedule.NewGrid(nx, ny, symmetric), opt.NJobs, 16, nil,
		func(_ struct{}, i, j int) (float64, error) {
			return pair(&ps[i], &ps[yOff+j], opt.NodeKernel), nil
		}, out)
}

// Diag writes K(X[i], X[i]) into out[i], the same values Gram puts on its
// diagonal.
func Diag(X []*graph.Graph, opt Options, out []float64) error {
	if len(out) != len(X) {
		return fmt.Errorf("output has %d entries for %d graphs", len(out), len(X))
	}
	ps, _, err := prepare(X, len(X), opt)
	if err != nil {
		return err
	}
	return schedule.RunPairs(opt.Control, schedule.DiagGrid(len(X)), opt.NJobs, 1, nil,
		func(_ struct{}, i, _ int) (float64, error) { return pair(&ps[i], &ps[i], opt.NodeKernel), nil }, out)
}
