package mgk

import (
	"fmt"
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// cacheLimit bounds the number of edge-kernel values cached per pair (and per
// worker), one per pair of undirected edges: 1<<21 float64 is 16 MiB. Above
// it κe is evaluated inside the mat-vec, which is slow but needs no memory. A
// variable so that tests can force the uncached path.
var cacheLimit = 1 << 21

// useReference makes the solver use the reference csrOperator even when the
// edge-kernel table fits, so tests can compare the two.
var useReference = false

// side is one graph of a pair with what the solver needs from it precomputed
// once per call rather than once per pair.
type side struct {
	g *graph.Graph
	// deg holds d_i = Σ_j w_ij, with 1 in place of 0 so isolated nodes keep a
	// finite diagonal (GraphDot's convention).
	deg []float64
	// start holds the start probabilities; nil means all ones.
	start []float64
}

func newSide(g *graph.Graph, start []float64) side {
	d := g.Degrees()
	for i, x := range d {
		if x == 0 {
			d[i] = 1
		}
	}
	return side{g: g, deg: d, start: start}
}

func (s *side) p(i int) float64 {
	if s.start == nil {
		return 1
	}
	return s.start[i]
}

// pairSolver holds one worker's scratch space and the system of the pair it is
// working on. Slices grow to the largest pair seen and are then reused, so the
// solver allocates nothing per pair once warm, and nothing at all inside CG.
//
// The system (D V⁻¹ − W) x = D·1 is not solved as written because a node pair
// with κv = 0 makes V singular. With S = V^½ and x = S y it becomes
//
//	M y = S D 1,  M = D − S W S,
//
// which is symmetric, positive definite whenever the original is, and well
// defined for κv = 0: such a row reads D y = 0, so x = 0 there, which is the
// limit of the original system (its walks cannot pass through that node pair).
// Jacobi-preconditioned CG is invariant under the diagonal scaling S, so the
// iterates match those of CG on the original system where V is regular.
type pairSolver struct {
	a, b *side
	opt  *Options
	// v = κv, s = √v, dd = d⊗d'/(1−q)², diag = Jacobi diagonal of M, inv = 1/diag
	// (CG multiplies by it: a division per entry and iteration costs more).
	v, s, dd, diag, inv []float64
	// y is the solution of the last solve; r, p, ap, t are CG work vectors.
	y, r, p, ap, t []float64
	cache          []float64
	csr            csrOperator
	edge           edgeOperator
	w              productOperator
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// prepare computes V, D, the edge-kernel cache and the preconditioner of the pair
// (a, b). It is the only place the node kernel is evaluated for the pair.
func (ps *pairSolver) prepare(a, b *side, opt *Options) error {
	ps.a, ps.b, ps.opt = a, b, opt
	g, h := a.g, b.g
	n := g.N * h.N
	for _, s := range []*[]float64{&ps.v, &ps.s, &ps.dd, &ps.diag, &ps.inv, &ps.y, &ps.r, &ps.p, &ps.ap, &ps.t} {
		*s = grow(*s, n)
	}
	scale := 1 / ((1 - opt.Q) * (1 - opt.Q))
	for i := 0; i < g.N; i++ {
		gi := g.Node(i)
		for ip := 0; ip < h.N; ip++ {
			k := i*h.N + ip
			v := opt.NodeKernel.Eval(gi, h.Node(ip))
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("mgk: node kernel gave %v for nodes %d and %d; it must be finite and non-negative", v, i, ip)
			}
			ps.v[k], ps.s[k] = v, math.Sqrt(v)
			ps.dd[k] = a.deg[i] * b.deg[ip] * scale
		}
	}

	// The edge kernel is evaluated once per pair of undirected edges into a
	// table with the weights folded in, unless the table would be too large.
	mg, mh := g.NumEdges(), h.NumEdges()
	cached := mg*mh > 0 && mg*mh <= cacheLimit
	if cached {
		ps.cache = grow(ps.cache, mg*mh)
		for e := 0; e < mg; e++ {
			ge, we := g.Edge(e), g.Weight[e]
			row := ps.cache[e*mh : (e+1)*mh]
			for f := range row {
				row[f] = we * h.Weight[f] * opt.EdgeKernel.Eval(ge, h.Edge(f))
			}
		}
	}

	// Jacobi diagonal: M's diagonal is dd − v·W_diag, where W_diag comes only
	// from pairs of self-loops at i and i'.
	copy(ps.diag, ps.dd)
	for e := 0; e < mg; e++ {
		i := int(g.EdgeU[e])
		if i != int(g.EdgeV[e]) {
			continue
		}
		for f := 0; f < mh; f++ {
			ip := int(h.EdgeU[f])
			if ip != int(h.EdgeV[f]) {
				continue
			}
			var w float64
			if cached {
				w = ps.cache[e*mh+f]
			} else {
				w = g.Weight[e] * h.Weight[f] * opt.EdgeKernel.Eval(g.Edge(e), h.Edge(f))
			}
			ps.diag[i*h.N+ip] -= ps.v[i*h.N+ip] * w
		}
	}

	switch {
	case !cached:
		ps.csr = csrOperator{g: g, h: h, ek: opt.EdgeKernel}
		ps.w = &ps.csr
	case useReference:
		ps.csr = csrOperator{g: g, h: h, cache: ps.cache, ek: opt.EdgeKernel}
		ps.w = &ps.csr
	default:
		// Fold in the self-loop factors edgeOperator needs (exact: powers of 2).
		for e := 0; e < mg; e++ {
			le := g.EdgeU[e] == g.EdgeV[e]
			row := ps.cache[e*mh : (e+1)*mh]
			for f := range row {
				if le {
					row[f] *= 0.5
				}
				if h.EdgeU[f] == h.EdgeV[f] {
					row[f] *= 0.5
				}
			}
		}
		ps.edge = edgeOperator{g: g, h: h, cache: ps.cache}
		ps.w = &ps.edge
	}

	for k, d := range ps.diag {
		// A non-positive diagonal means M is not positive definite (a self-loop
		// pair with κv·κe above 1/(1−q)²); CG will then break down and report
		// it. Keep the preconditioner positive so that it does so cleanly.
		if !(d > 0) {
			ps.diag[k] = ps.dd[k]
		}
		ps.inv[k] = 1 / ps.diag[k]
	}
	return nil
}

// apply sets dst = M·src = dd∘src − s∘W(s∘src) and returns srcᵀ·dst, which CG
// needs next and which costs nothing extra in the final pass.
func (ps *pairSolver) apply(dst, src []float64) float64 {
	t, s, dd := ps.t[:len(src)], ps.s[:len(src)], ps.dd[:len(src)]
	for k, x := range src {
		t[k] = s[k] * x
	}
	ps.w.mulW(dst, t)
	dst = dst[:len(src)]
	dot := 0.0
	for k, x := range src {
		y := dd[k]*x - s[k]*dst[k]
		dst[k] = y
		dot += x * y
	}
	return dot
}

// solveResult describes one CG solve.
type solveResult struct {
	iters     int
	residual  float64 // final ‖r‖/‖b‖ (recurrence residual)
	converged bool
}

// cg solves M y = rhs into y by Jacobi-preconditioned conjugate gradients from
// y = 0, stopping when ‖r‖ ≤ tol·‖rhs‖ or after maxIter iterations, or when
// pᵀMp ≤ 0 shows M is not positive definite. It allocates nothing.
func (ps *pairSolver) cg(rhs, y []float64, tol float64, maxIter int) solveResult {
	n := len(rhs)
	r, p, ap, inv, y := ps.r[:n], ps.p[:n], ps.ap[:n], ps.inv[:n], y[:n]
	clear(y)
	bb := 0.0
	for _, x := range rhs {
		bb += x * x
	}
	if bb == 0 {
		return solveResult{converged: true}
	}
	rz := 0.0
	for k, x := range rhs {
		r[k] = x
		p[k] = x * inv[k]
		rz += x * p[k]
	}
	rr, thr := bb, tol*tol*bb
	for it := 0; ; it++ {
		if rr <= thr {
			return solveResult{iters: it, residual: math.Sqrt(rr / bb), converged: true}
		}
		if it >= maxIter {
			return solveResult{iters: it, residual: math.Sqrt(rr / bb)}
		}
		pap := ps.apply(ap, p)
		if !(pap > 0) || math.IsInf(pap, 0) {
			return solveResult{iters: it, residual: math.Sqrt(rr / bb)}
		}
		alpha := rz / pap
		rzNew, rrNew := 0.0, 0.0
		for k := range y {
			y[k] += alpha * p[k]
			rk := r[k] - alpha*ap[k]
			r[k] = rk
			rzNew += rk * rk * inv[k]
			rrNew += rk * rk
		}
		beta := rzNew / rz
		rz, rr = rzNew, rrNew
		// The preconditioned residual z = r∘inv is formed here again rather
		// than stored: a multiply is cheaper than another vector's traffic.
		for k := range p {
			p[k] = r[k]*inv[k] + beta*p[k]
		}
	}
}

// solvePrimal solves for x = S y, the vector whose p-weighted sum is K. With
// Lmin = 0 the right-hand side is S D 1. With Lmin = 1 the solve targets
// x − V·1 directly: it satisfies (D V⁻¹ − W)(x − V·1) = W V·1, i.e. right-hand
// side S W S (S 1), so K is not the difference of two nearly equal numbers
// when walks are short (large q) or weakly matched.
func (ps *pairSolver) solvePrimal() solveResult {
	// The right-hand side lives in ap: cg copies it into r before its first
	// mat-vec overwrites ap, so no extra vector is needed.
	rhs := ps.ap
	if ps.opt.Lmin == 1 {
		ps.w.mulW(rhs, ps.v)
		for k := range rhs {
			rhs[k] *= ps.s[k]
		}
	} else {
		for k := range rhs {
			rhs[k] = ps.s[k] * ps.dd[k]
		}
	}
	return ps.cg(rhs, ps.y, ps.opt.Tol, ps.opt.MaxIter)
}

// x returns the solution at product node k: x_(i,i') with Lmin = 0 and
// x_(i,i') − v_(i,i') with Lmin = 1.
func (ps *pairSolver) x(k int) float64 { return ps.s[k] * ps.y[k] }

// value returns K for the solved pair: Σ p_i p'_i' x(k).
func (ps *pairSolver) value() float64 {
	a, b := ps.a, ps.b
	nh := b.g.N
	sum := 0.0
	for i := 0; i < a.g.N; i++ {
		row := 0.0
		for ip := 0; ip < nh; ip++ {
			k := i*nh + ip
			row += b.p(ip) * ps.s[k] * ps.y[k]
		}
		sum += a.p(i) * row
	}
	return sum
}
