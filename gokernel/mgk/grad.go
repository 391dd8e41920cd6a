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
	x, u, wx, wu, lam []float64
	gv, ge            []float64 // one kernel gradient
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
	n, m := len(xs), len(ys)
	np := NumParams(o)
	switch {
	case len(out) != n*m:
		return nil, fmt.Errorf("mgk: out has %d entries for a %d×%d Gram matrix", len(out), n, m)
	case len(grad) != n*m*np:
		return nil, fmt.Errorf("mgk: grad has %d entries for a %d×%d Gram matrix with %d parameters", len(grad), n, m, np)
	case iters != nil && len(iters) != n*m:
		return nil, fmt.Errorf("mgk: iters has %d entries for a %d×%d Gram matrix", len(iters), n, m)
	}
	ps := schedule.Pairs(n, m, symmetric)
	schedule.LargestFirst(ps, func(p schedule.Pair) float64 { return cost(&xs[p.I], &ys[p.J]) })
	nw := schedule.Workers(o.NJobs)
	solvers := newSolvers(nw)
	scratch := make([]gradScratch, nw)
	bad := make([][]Unconverged, nw)
	err = schedule.Run(len(ps), o.NJobs, 1, func(w, k int) error {
		p := ps[k]
		s := &solvers[w]
		if err := s.prepare(&xs[p.I], &ys[p.J], &o); err != nil {
			return fmt.Errorf("pair (%d, %d): %w", p.I, p.J, err)
		}
		res := s.solvePrimal()
		out[p.I*m+p.J] = s.value()
		g := grad[(p.I*m+p.J)*np : (p.I*m+p.J+1)*np]
		adj := s.gradient(&scratch[w], g)
		if symmetric {
			out[p.J*m+p.I] = out[p.I*m+p.J]
			copy(grad[(p.J*m+p.I)*np:(p.J*m+p.I+1)*np], g)
		}
		it := res.iters + adj.iters
		if iters != nil {
			iters[p.I*m+p.J] = int32(it)
			if symmetric {
				iters[p.J*m+p.I] = int32(it)
			}
		}
		if !res.converged || !adj.converged {
			bad[w] = append(bad[w], Unconverged{I: p.I, J: p.J, Iterations: it, Residual: max(res.residual, adj.residual)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mergeUnconverged(bad), nil
}

// gradient writes ∂K/∂θ of the pair solved last into g and returns the result
// of the adjoint solve.
func (ps *pairSolver) gradient(gs *gradScratch, g []float64) solveResult {
	a, b, opt := ps.a, ps.b, ps.opt
	G, H := a.g, b.g
	nh := H.N
	N := G.N * nh
	for _, s := range []*[]float64{&gs.x, &gs.u, &gs.wx, &gs.wu, &gs.lam} {
		*s = grow(*s, N)
	}
	nv, ne := opt.NodeKernel.NumParams(), opt.EdgeKernel.NumParams()
	gs.gv, gs.ge = grow(gs.gv, nv), grow(gs.ge, ne)
	clear(g)

	// The full x (with the length-0 term V·1 added back when Lmin = 1).
	for k := range gs.x {
		gs.x[k] = ps.x(k)
		if opt.Lmin == 1 {
			gs.x[k] += ps.v[k]
		}
	}

	// Adjoint: (D − S W S) ũ = S p, u = S ũ; p here is p ⊗ p'. The right-hand
	// side lives in ap, as in solvePrimal.
	rhs := ps.ap[:N]
	for i := 0; i < G.N; i++ {
		for ip := 0; ip < nh; ip++ {
			k := i*nh + ip
			rhs[k] = ps.s[k] * a.p(i) * b.p(ip)
		}
	}
	adj := ps.cg(rhs, gs.u, ps.tol, opt.MaxIter)
	for k := range gs.u {
		gs.u[k] *= ps.s[k]
	}
	ps.w.mulW(gs.wx, gs.x)
	ps.w.mulW(gs.wu, gs.u)
	for i := 0; i < G.N; i++ {
		for ip := 0; ip < nh; ip++ {
			k := i*nh + ip
			if ps.v[k] > 0 {
				gs.lam[k] = gs.u[k] / ps.v[k]
			} else {
				gs.lam[k] = (a.p(i)*b.p(ip) + gs.wu[k]) / ps.dd[k]
			}
		}
	}

	// q: dD = 2D/(1−q).
	dq := 0.0
	for k, d := range ps.dd {
		dq += d * (gs.u[k] - gs.lam[k]*gs.x[k])
	}
	g[0] = dq * 2 / (1 - opt.Q)

	// Node kernel.
	gn := g[1 : 1+nv]
	for i := 0; i < G.N; i++ {
		gi := G.Node(i)
		for ip := 0; ip < nh; ip++ {
			k := i*nh + ip
			opt.NodeKernel.EvalGrad(gi, H.Node(ip), gs.gv)
			c := gs.lam[k] * (ps.dd[k] + gs.wx[k])
			if opt.Lmin == 1 {
				c -= a.p(i) * b.p(ip)
			}
			for t, d := range gs.gv {
				gn[t] += c * d
			}
		}
	}

	// Edge kernel: uᵀ dW x summed per pair of undirected edges, over the
	// directed product entries that pair makes (a self-loop has one direction).
	gE := g[1+nv:]
	for e := 0; e < G.NumEdges(); e++ {
		ae, be := int(G.EdgeU[e]), int(G.EdgeV[e])
		for f := 0; f < H.NumEdges(); f++ {
			af, bf := int(H.EdgeU[f]), int(H.EdgeV[f])
			c := gs.u[ae*nh+af]*gs.x[be*nh+bf] + gs.u[ae*nh+bf]*gs.x[be*nh+af]
			if ae != be {
				c += gs.u[be*nh+bf]*gs.x[ae*nh+af] + gs.u[be*nh+af]*gs.x[ae*nh+bf]
			}
			if af == bf {
				// The two H directions coincide; the sum above counted each twice.
				c *= 0.5
			}
			if c == 0 {
				continue
			}
			c *= G.Weight[e] * H.Weight[f]
			opt.EdgeKernel.EvalGrad(G.Edge(e), H.Edge(f), gs.ge)
			for t, d := range gs.ge {
				gE[t] += c * d
			}
		}
	}
	return adj
}
