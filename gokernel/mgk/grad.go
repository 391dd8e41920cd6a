package mgk

import (
	"fmt"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// NumParams returns the number of hyperparameters GramGrad differentiates:
// q, then the node kernel's, then the edge kernel's (microkernel order).
func NumParams(opt Options) int {
	n := 1
	if opt.NodeKernel != nil {
		n += opt.NodeKernel.NumParams()
	}
	if opt.EdgeKernel != nil {
		n += opt.EdgeKernel.NumParams()
	}
	return n
}

// gradScratch is the per-worker memory of the gradient, beside pairSolver's.
type gradScratch struct {
	x, u, wx, wu []float64
	gv, ge       []float64 // one kernel gradient
	cn, ce       []float64 // coefficients per pair of node / edge labels
	g            []float64 // the pair's gradient
}

// labelRuns lists a graph's nodes and edges label by label, so that the
// gradient's contraction sums each label's share in a register instead of
// adding every term to its label's bin in memory (a chain of stores and
// loads when consecutive nodes or edges share a label, as in molecules).
type labelRuns struct {
	// nodes[nodePtr[l]:nodePtr[l+1]] are the nodes with label l.
	nodes, nodePtr []int32
	// ends[edgePtr[l]:edgePtr[l+1]] are the endpoints u | v<<32 of the edges
	// with label l, and weight their weights, halved for a self-loop (whose
	// two directions the contraction counts twice).
	ends    []uint64
	weight  []float64
	edgePtr []int32
}

// newLabelRuns lists g's nodes and edges by their labels nlab (nl of them)
// and elab (el of them).
func newLabelRuns(g *graph.Graph, nlab []int32, nl int, elab []int32, el int) labelRuns {
	var r labelRuns
	r.nodes, r.nodePtr = byLabel(nlab, nl)
	order, ptr := byLabel(elab, el)
	r.ends, r.weight, r.edgePtr = make([]uint64, len(order)), make([]float64, len(order)), ptr
	for q, f := range order {
		u, v := g.EdgeU[f], g.EdgeV[f]
		w := g.Weight[f]
		if u == v {
			w *= 0.5
		}
		r.ends[q], r.weight[q] = uint64(uint32(u))|uint64(uint32(v))<<32, w
	}
	return r
}

// byLabel sorts the items 0, 1, … by their labels lab (n of them), in order
// within a label: the items with label l are order[ptr[l]:ptr[l+1]].
func byLabel(lab []int32, n int) (order, ptr []int32) {
	ptr = make([]int32, n+1)
	for _, l := range lab {
		ptr[l+1]++
	}
	for l := range n {
		ptr[l+1] += ptr[l]
	}
	order = make([]int32, len(lab))
	next := append([]int32(nil), ptr[:n]...)
	for i, l := range lab {
		order[next[l]] = int32(i)
		next[l]++
	}
	return order, ptr
}

// GramGrad is Gram plus the gradient of every entry with respect to the raw
// hyperparameters θ = (q, node-kernel parameters, edge-kernel parameters):
// grad[(i*len(Y)+j)*NumParams(opt) + k] = ∂K(X[i], Y[j])/∂θ_k. iters, when
// non-nil, receives the iterations of both solves of each entry. An entry is
// reported unconverged when either solve is; Residual is then the larger.
//
// The gradient is found by the adjoint method, one extra solve per pair. The
// system is used in the form A x = c with A = D − V W and c = V D·1 (the
// defining system multiplied by V, valid when κv = 0 somewhere), K = pᵀx. With
// Aᵀλ = p and u = V λ, u solves the symmetric system (D V⁻¹ − W) u = p on the
// node pairs with v > 0 (and is 0 elsewhere), while λ = (p + W u)/D where v = 0.
// Then
//
//	dK = Σ λ∘dv∘(D·1 + W x) + Σ dD∘(u − λ∘x) + uᵀ dW x  (− Σ p∘dv with Lmin = 1),
//
// with dD = 2D/(1−q) for q, dv = ∂κv for node parameters and dW = w w' ∂κe for
// edge parameters.
func GramGrad(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt Options, out, grad []float64, iters []int32) ([]Unconverged, error) {
	xs, ys, o, err := setup(X, Y, startX, startY, symmetric, opt)
	if err != nil {
		return nil, err
	}
	n, m := len(X), len(Y)
	if symmetric {
		m = n
	}
	np := NumParams(o)
	switch {
	case len(out) != n*m:
		return nil, fmt.Errorf("mgk: out has %d entries for a %d×%d Gram matrix", len(out), n, m)
	case len(grad) != n*m*np:
		return nil, fmt.Errorf("mgk: grad has %d entries for a %d×%d Gram matrix with %d parameters", len(grad), n, m, np)
	case iters != nil && len(iters) != n*m:
		return nil, fmt.Errorf("mgk: iters has %d entries for a %d×%d Gram matrix", len(iters), n, m)
	}
	ps := largestFirst(xs, ys, symmetric)
	return runPairs(xs, ys, ps, &o, true, true, func(s *pairSolver, p schedule.Pair) (solveResult, error) {
		k, g, res, adj := s.valueGrad(&o, np)
		forMembers(xs, ys, p, symmetric, func(i, j int, _ bool) {
			out[i*m+j] = k
			copy(grad[(i*m+j)*np:(i*m+j+1)*np], g)
			if iters != nil {
				iters[i*m+j] = int32(res.iters + adj.iters)
			}
		})
		return merged(res, adj), nil
	}, memberPairs(xs, ys, symmetric))
}

// DiagGrad writes K(X[i], X[i]) to out[i] and its gradient with respect to the
// raw hyperparameters to grad[i*NumParams(opt):(i+1)*NumParams(opt)]: the
// diagonal of GramGrad(X, X) (same solves, same values), solving the self
// pairs only. Normalized kernels need it for the gradient of a rectangular
// block K(X, Y), whose normalization reads both diagonals.
func DiagGrad(X []*graph.Graph, startX [][]float64, opt Options, out, grad []float64) ([]Unconverged, error) {
	xs, o, err := diagSetup(X, startX, opt, out, func(o *Options) error {
		if np := NumParams(*o); len(grad) != len(X)*np {
			return fmt.Errorf("mgk: grad has %d entries for %d graphs with %d parameters", len(grad), len(X), np)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	np := NumParams(o)
	ps := selfPairs(xs)
	return runPairs(xs, xs, ps, &o, true, true, func(s *pairSolver, p schedule.Pair) (solveResult, error) {
		k, g, res, adj := s.valueGrad(&o, np)
		for _, i := range xs.members[p.I] {
			out[i] = k
			copy(grad[i*np:(i+1)*np], g)
		}
		return merged(res, adj), nil
	}, selfMembers(xs))
}

// valueGrad solves the pair s is set up for, primal and adjoint, and returns
// K, its gradient (s's scratch, valid until the next solve) and both solves' results.
func (s *pairSolver) valueGrad(o *Options, np int) (float64, []float64, solveResult, solveResult) {
	s.gs.g = grow(s.gs.g, np)
	g := s.gs.g
	var res, adj solveResult
	var k float64
	if s.sgs {
		// Primal and adjoint in lockstep, sharing the sweeps, both to the
		// gradients' tolerance: K comes from both (dual.go).
		s.gs.grow(len(s.sol))
		k, res, adj = s.lockstep(s.sol, s.gs.u, s.gradTol, s.gradTol)
		if !o.dualValues() {
			k = s.value() // K from the primal, solved to Options.Tol, as Gram takes it
		}
		s.gradient(&s.gs, g, &adj)
	} else {
		res = s.solvePrimal()
		k = s.value()
		adj = s.gradient(&s.gs, g, nil)
	}
	return k, g, res, adj
}

// merged is the report of an entry computed by two solves: unconverged when
// either is, with the larger residual and the iterations of both.
func merged(res, adj solveResult) solveResult {
	res.iters += adj.iters
	res.converged = res.converged && adj.converged
	res.residual = max(res.residual, adj.residual)
	return res
}

// grow sizes gs's vectors for n product nodes.
func (gs *gradScratch) grow(n int) {
	for _, s := range []*[]float64{&gs.x, &gs.u, &gs.wx, &gs.wu} {
		*s = grow(*s, n)
	}
}

// adjointRHS writes the adjoint's right-hand side c∘p⊗p' (unscaled, see cg) to dst.
func (ps *pairSolver) adjointRHS(dst []float64) []float64 {
	a, b := ps.a, ps.b
	nh := b.g.N
	rhs := dst[:a.g.N*nh]
	for i := 0; i < a.g.N; i++ {
		row, pi := rhs[i*nh:(i+1)*nh], a.p(i)
		if ps.cw == nil {
			for ip := range row {
				row[ip] = pi * b.p(ip)
			}
			continue
		}
		cw := ps.cw[i*nh : (i+1)*nh]
		for ip := range row {
			row[ip] = cw[ip] * pi * b.p(ip)
		}
	}
	return rhs
}

// gradient writes ∂K/∂θ of the pair solved last into g and returns the
// result of the adjoint solve. With solved non-nil the adjoint solution is in
// gs.u already (lockstep) and solved is its result.
func (ps *pairSolver) gradient(gs *gradScratch, g []float64, solved *solveResult) solveResult {
	a, b, opt := ps.a, ps.b, ps.opt
	G, H := a.g, b.g
	nh := H.N
	N := G.N * nh
	gs.grow(N)
	nv, ne := opt.NodeKernel.NumParams(), opt.EdgeKernel.NumParams()
	gs.gv, gs.ge = grow(gs.gv, nv), grow(gs.ge, ne)
	clear(g)

	// Without v > 0 everywhere, W x and W u come from products with W,
	// which need the full x (fullX) whole first.
	if !ps.vPos {
		for k := range gs.x {
			gs.x[k] = ps.fullX(k)
		}
		ps.w.mulW(gs.wx, gs.x)
	}

	// Adjoint: (D − S W S) ũ = S (c∘p⊗p'); cg returns u = S ũ. The
	// right-hand side lives in ap, as in solvePrimal.
	var adj solveResult
	if solved != nil {
		adj = *solved
	} else {
		adj = ps.cg(ps.adjointRHS(ps.ap), gs.u, ps.gradTol, opt.MaxIter)
	}
	if !ps.vPos {
		// W u is needed where v = 0 only, where λ is not u/v.
		ps.w.mulW(gs.wu, gs.u)
	}

	// One pass over the product nodes gives λ, the gradient of q (dD =
	// 2D/(1−q)) and the node kernel's weights per pair of node labels, and,
	// with v > 0 everywhere, x and W x on the way: W x then follows from the
	// solved system (D V⁻¹ − W) x = D c (full x; with Lmin = 1 the solved
	// part x' gives W x = D V⁻¹ x' exactly) instead of a product with W. Its
	// error is the primal's residual, below the solve's tolerance, which the
	// gradients' accuracy allows 1000 times over.
	gn := g[1 : 1+nv]
	lg, lh := len(a.nrep), len(b.nrep)
	gs.cn = grow(gs.cn, lg*lh)
	clear(gs.cn)
	dq := 0.0
	runs := &b.runs
	for i := 0; i < G.N; i++ {
		row := gs.cn[int(a.nlab[i])*lh:]
		kv := ps.kv[int(a.nlab[i])*lh:]
		for l := range lh {
			sum := 0.0
			nodes := runs.nodes[runs.nodePtr[l]:runs.nodePtr[l+1]]
			if v := kv[l]; ps.vPos {
				// v is the same on the run: λ = u/v and W x = (d/v)·x' with
				// one division per run.
				vInv := 1 / v
				for _, ip := range nodes {
					k := i*nh + int(ip)
					d, c, sol := ps.dd[k], ps.c(k), ps.sol[k]
					x, wx := sol, d*vInv*sol
					if opt.Lmin == 1 {
						x += c * v
					} else {
						wx -= d * c
					}
					gs.x[k] = x
					lam := gs.u[k] * vInv
					dq += d * (c*gs.u[k] - lam*x)
					cn := lam * (d*c + wx)
					if opt.Lmin == 1 {
						cn -= c * c * a.p(i) * b.p(int(ip))
					}
					sum += cn
				}
			} else {
				for _, ip := range nodes {
					k := i*nh + int(ip)
					d, c, x, wx := ps.dd[k], ps.c(k), gs.x[k], gs.wx[k]
					var lam float64
					if v > 0 {
						lam = gs.u[k] / v
					} else {
						lam = (c*a.p(i)*b.p(int(ip)) + gs.wu[k]) / d
					}
					dq += d * (c*gs.u[k] - lam*x)
					cn := lam * (d*c + wx)
					if opt.Lmin == 1 {
						cn -= c * c * a.p(i) * b.p(int(ip))
					}
					sum += cn
				}
			}
			row[l] += sum
		}
	}
	g[0] = dq * 2 / (1 - opt.Q)

	// Node kernel, one gradient evaluation per pair of node labels.
	contract(gn, gs.cn, lg, lh, ps.nodeTable(a, b), a.ngl, b.ngl, ps.swapped, gs.gv, func(la, lb int) {
		opt.NodeKernel.EvalGrad(G.Node(int(a.nrep[la])), H.Node(int(b.nrep[lb])), gs.gv)
	})

	// Edge kernel: uᵀ dW x summed per pair of undirected edges, over the
	// directed product entries that pair makes (a self-loop has one
	// direction), collected per pair of edge labels and differentiated once
	// per label pair.
	gE := g[1+nv:]
	lg, lh = len(a.erep), len(b.erep)
	gs.ce = grow(gs.ce, lg*lh)
	clear(gs.ce)
	for e := 0; e < G.NumEdges(); e++ {
		ae, be := int(G.EdgeU[e]), int(G.EdgeV[e])
		ua, ub := gs.u[ae*nh:(ae+1)*nh], gs.u[be*nh:(be+1)*nh]
		xa, xb := gs.x[ae*nh:(ae+1)*nh], gs.x[be*nh:(be+1)*nh]
		row := gs.ce[int(a.elab[e])*lh:]
		for l := range lh {
			q0, q1 := runs.edgePtr[l], runs.edgePtr[l+1]
			ends, w := runs.ends[q0:q1], runs.weight[q0:q1]
			sum := 0.0
			if ae != be {
				for q, ab := range ends {
					af, bf := uint32(ab), ab>>32
					sum += (ua[af]*xb[bf] + ua[bf]*xb[af] + ub[bf]*xa[af] + ub[af]*xa[bf]) * w[q]
				}
			} else {
				// A self-loop of G: its two directions coincide.
				for q, ab := range ends {
					af, bf := uint32(ab), ab>>32
					sum += (ua[af]*xb[bf] + ua[bf]*xb[af]) * w[q]
				}
			}
			row[l] += sum * G.Weight[e]
		}
	}
	contract(gE, gs.ce, lg, lh, ps.edgeTable(a, b), a.egl, b.egl, ps.swapped, gs.ge, func(la, lb int) {
		opt.EdgeKernel.EvalGrad(G.Edge(int(a.erep[la])), H.Edge(int(b.erep[lb])), gs.ge)
	})
	return adj
}

// contract adds Σ c[la, lb]·∂κ(la, lb) over the lg×lh label pairs to g. The
// kernel's gradients come from the call's table t (ids ga, gb) when there is
// one (swapped as in kernelTable.at), else from evalGrad(la, lb), which
// writes them to scratch.
func contract(g, c []float64, lg, lh int, t *kernelTable, ga, gb []int32, swapped bool, scratch []float64, evalGrad func(la, lb int)) {
	np := len(g)
	if t != nil && t.grad == nil {
		t = nil // a table of values only
	}
	for la := range lg {
		for lb := range lh {
			w := c[la*lh+lb]
			if w == 0 {
				continue
			}
			d := scratch
			if t != nil {
				e := t.at(ga[la], gb[lb], swapped)
				d = t.grad[e*np : (e+1)*np]
			} else {
				evalGrad(la, lb)
			}
			for k, x := range d {
				g[k] += w * x
			}
		}
	}
}
