package mgk

import (
	"fmt"
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/octile"
	"github.com/graphgram/graphgram/gokernel/vec"
)

// Edge-kernel tables (one float64 per pair of undirected edges, weights folded
// in) may take cacheBudget bytes in all, shared equally by the workers, and
// never less than minCacheEntries per worker. The default, 1 GiB, lets two
// workers keep the whole table of a pair of 1000-atom protein graphs (about
// 6500 edges each), where κe would otherwise be evaluated again in every CG
// iteration; above the limit κe is evaluated inside the mat-vec, which is slow
// but needs no memory.
const (
	cacheBudget     = 1 << 30
	minCacheEntries = 1 << 21
)

// newSolvers returns one pairSolver per worker, each allowed its share of
// cacheBudget.
func newSolvers(nw int) []pairSolver {
	solvers := make([]pairSolver, nw)
	for w := range solvers {
		solvers[w].cacheLimit = max(minCacheEntries, cacheBudget/8/max(nw, 1))
	}
	return solvers
}

// side is one graph of a pair with what the solver needs from it precomputed
// once per call rather than once per pair.
type side struct {
	// g is the graph in the node order the solver works in: that of pk when the
	// graph could be packed (reordered for fewer tiles), else the caller's.
	g *graph.Graph
	// pk is g packed into octiles, nil when packing failed (repeated edges with
	// different features); perm maps solver node k to the caller's node
	// perm[k], nil for the identity.
	pk   *octile.Graph
	perm []int
	// deg holds d_i = Σ_j w_ij, with 1 in place of 0 so isolated nodes keep a
	// finite diagonal (GraphDot's convention).
	deg []float64
	// invDeg holds 1/deg: the SGS set-up multiplies by it instead of
	// dividing by every d_i d'_i'.
	invDeg []float64
	// start holds the start probabilities in solver order; nil means all ones.
	start []float64
	// sw lists g's edges by endpoint for the Gauss–Seidel sweeps.
	sw sweepLists
	// nlab and elab number g's distinct node and edge feature rows; nrep and
	// erep give a node and an edge of each label. The kernels are evaluated
	// once per pair of labels.
	nlab, nrep, elab, erep []int32
	// ngl and egl give the call-wide id of each node and edge label, nil
	// when the call has no table for that kernel (labels.go).
	ngl, egl []int32
	// runs lists g's nodes and edges by label for GramGrad's contraction.
	runs labelRuns
	// cw holds, for a quotient graph, √|class| of each node (solver order);
	// nil means all ones (no quotient).
	cw []float64
}

// content is what the solver reads of s beside its graph, for the content
// order (graph.CompareContent).
func (s *side) content() [][]float64 { return [][]float64{s.start, s.cw, s.deg} }

// pairOrder returns the pair (a, b) in content order, and whether that
// swapped them. Every pair is solved in this orientation, so that K(G, G')
// is the same arithmetic, bit for bit, in every call: symmetric or not,
// whichever side each graph is on and whatever else the call holds (the
// other orientation is the same value in exact arithmetic only).
func pairOrder(a, b *side) (first, second *side, swapped bool) {
	if a != b && graph.CompareContent(a.g, a.content(), b.g, b.content()) > 0 {
		return b, a, true
	}
	return a, b, false
}

// defaultPackMinEdges is the edge count from which a graph is packed into
// octiles: choose only plans octile for pairs with octileMinPairs edge pairs or
// more, so smaller graphs are left unpacked (and in the caller's order) unless
// paired with much larger ones, and the set-up of small-molecule sets stays
// cheap.
var defaultPackMinEdges = int(math.Ceil(math.Sqrt(octileMinPairs)))

// newSide packs g (reordered by octile.PackReordered) when it has at least
// packMin edges and precomputes its degrees, permuting start to the packed
// order.
func newSide(g *graph.Graph, start []float64, packMin int) side {
	return newQuotientSide(quotient{g: g, start: start}, packMin)
}

// newQuotientSide is newSide for a graph's quotient, whose degrees and class
// weights come with it (and are permuted with its nodes when it is packed).
func newQuotientSide(q quotient, packMin int) side {
	s := side{g: q.g, start: q.start, cw: q.cw}
	permute := func(x []float64, perm []int) []float64 {
		if x == nil || perm == nil {
			return x
		}
		y := make([]float64, len(x))
		for k, from := range perm {
			y[k] = x[from]
		}
		return y
	}
	if q.g.NumEdges() >= packMin {
		if pk, err := octile.PackReordered(q.g); err == nil {
			s.g, s.pk, s.perm = pk.G, pk, pk.Perm
			s.start = permute(q.start, pk.Perm)
			s.cw = permute(q.cw, pk.Perm)
		}
	}
	if s.pk == nil {
		// Unpacked graphs are the ones the sweeps run on (octile keeps its
		// own edge order).
		if order := matchingOrder(s.g); order != nil {
			s.g = s.g.PermuteEdges(order)
		}
	}
	if q.deg != nil {
		s.deg = permute(q.deg, s.perm)
	} else {
		s.deg = s.g.Degrees()
	}
	s.invDeg = make([]float64, len(s.deg))
	for i, x := range s.deg {
		if x == 0 {
			s.deg[i] = 1
		}
		s.invDeg[i] = 1 / s.deg[i]
	}
	s.sw = newSweepLists(s.g)
	s.nlab, s.nrep = rowLabels(s.g.N, s.g.Node)
	s.elab, s.erep = rowLabels(s.g.NumEdges(), s.g.Edge)
	s.runs = newLabelRuns(s.g, s.nlab, len(s.nrep), s.elab, len(s.erep))
	return s
}

// rowLabels numbers the distinct feature rows of n items: lab[i] is item i's
// label, rep[l] an item carrying label l.
func rowLabels(n int, row func(int) []float64) (lab, rep []int32) {
	lab = make([]int32, n)
	ids := map[string]int32{}
	var buf []byte
	for i := range n {
		buf = appendFloats(buf[:0], row(i)...)
		l, ok := ids[string(buf)]
		if !ok {
			l = int32(len(rep))
			ids[string(buf)] = l
			rep = append(rep, int32(i))
		}
		lab[i] = l
	}
	return lab, rep
}

// node returns the caller's index of solver node k.
func (s *side) node(k int) int {
	if s.perm == nil {
		return k
	}
	return s.perm[k]
}

// c returns √|class| of solver node i, 1 for a graph that is not a quotient.
func (s *side) c(i int) float64 {
	if s.cw == nil {
		return 1
	}
	return s.cw[i]
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
	// a and b are the pair's sides in content order (graph.CompareContent);
	// swapped reports that a is the call's Y graph and b its X graph.
	a, b    *side
	swapped bool
	opt     *Options
	// cacheLimit caps the edge-kernel table of this worker, in entries; 0
	// means minCacheEntries.
	cacheLimit int
	// v = κv, s = √v, dd = d⊗d'/(1−q)², diag = Jacobi diagonal of M, inv = 1/diag
	// (CG multiplies by it: a division per entry and iteration costs more).
	v, s, dd, diag, inv []float64
	// sol is the solution x = S y of the last primal solve (see cg); r, p,
	// ap, t, z are CG work vectors.
	sol, r, p, ap, t, z []float64
	cache               []float64
	// sgs reports that the pair is solved with symmetric Gauss–Seidel on the
	// edge table (sgs.go); acc, dk, xdm, xinv, dkIsDm, loopRows and loopOff
	// are its sweeps' scratch and diagonals (xdm and xinv doubled in il
	// instead on a twoCol worker).
	sgs      bool
	acc      []float64
	dk       []float64
	xdm      []float64
	xinv     []float64
	dkIsDm   bool
	loopRows []float64
	loopOff  []int32
	// cols are the two-column solvers' column states, ap2 the adjoint's
	// right-hand side; il holds their two columns side by side (sgs2.go).
	cols [2]sgsCol
	ap2  []float64
	il   interleaved
	// cw is the product of the sides' class weights (quotient graphs), nil
	// when neither side is a quotient.
	cw, cwBuf []float64
	// vPos reports κv > 0 on every node pair (GramGrad then needs no
	// product with W beyond the solves).
	vPos bool
	// kv and ke hold κv and κe per pair of node and edge labels, skv √κv
	// and kvInv 1/κv (0 where κv = 0).
	kv, skv, kvInv, ke []float64
	// tab holds the call's base-kernel tables (nil pointers: none).
	tab *labelTables
	// twoCol reports that the worker solves its pairs in lockstep
	// (GramGrad): fill and loopDiagonals then write il.dm and il.inv too.
	twoCol bool
	// gs is the gradient's scratch space (GramGrad only).
	gs gradScratch
	// tol and gradTol are the residual tolerances of this pair's primal
	// solve for K and of the solves the gradients read (gradTolFor).
	tol, gradTol float64
	csr          csrOperator
	edge         edgeOperator
	oct          octileOperator
	w            productOperator
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
	for _, s := range []*[]float64{&ps.v, &ps.s, &ps.dd, &ps.diag, &ps.inv, &ps.sol, &ps.r, &ps.p, &ps.ap, &ps.t, &ps.z} {
		*s = grow(*s, n)
	}
	op := ps.choose(a, b, opt)
	ps.sgs = op == opEdge && opt.Solver != SolverJacobi
	ps.tol, ps.gradTol = tolFor(opt, ps.sgs), gradTolFor(opt, ps.sgs)
	if ps.sgs {
		ps.dk = grow(ps.dk, n)
		if ps.twoCol {
			ps.il.dm, ps.il.inv = grow2(ps.il.dm, n), grow2(ps.il.inv, n)
		} else {
			ps.xdm, ps.xinv = grow(ps.xdm, n), grow(ps.xinv, n)
		}
	}

	scale := 1 / ((1 - opt.Q) * (1 - opt.Q))
	if err := ps.nodeKernels(a, b, opt); err != nil {
		return err
	}
	ps.fill(scale)

	mg, mh := g.NumEdges(), h.NumEdges()
	cached := op == opEdge || op == opCSRCached
	if cached {
		// The edge kernel is evaluated once per pair of undirected edges into
		// a table with the weights folded in.
		ps.edgeKernels(a, b, opt)
		lh := len(b.erep)
		ps.cache = grow(ps.cache, mg*mh)
		hw, hl := h.Weight[:mh], b.elab[:mh]
		for e := 0; e < mg; e++ {
			ke, we := ps.ke[int(a.elab[e])*lh:(int(a.elab[e])+1)*lh], g.Weight[e]
			row := ps.cache[e*mh : (e+1)*mh]
			for f := range row {
				row[f] = we * hw[f] * ke[hl[f]]
			}
		}
	}

	if ps.sgs {
		ps.loopDiagonals()
	} else {
		ps.jacobiDiagonal(cached)
	}

	switch op {
	case opOctile:
		ps.w = &ps.oct
	case opCSR:
		ps.csr = csrOperator{g: g, h: h, ek: opt.EdgeKernel}
		ps.w = &ps.csr
	case opCSRCached:
		ps.csr = csrOperator{g: g, h: h, cache: ps.cache, ek: opt.EdgeKernel}
		ps.w = &ps.csr
	case opEdge:
		// Fold in the self-loop factors edgeOperator needs (exact: powers of
		// 2): a half for a loop of G (its rows) and for a loop of H (its
		// columns).
		for _, e := range a.sw.loop {
			for f, c := range ps.cache[int(e)*mh : (int(e)+1)*mh] {
				ps.cache[int(e)*mh+f] = 0.5 * c
			}
		}
		if len(b.sw.loop) > 0 {
			for e := range mg {
				row := ps.cache[e*mh : (e+1)*mh]
				for _, f := range b.sw.loop {
					row[f] *= 0.5
				}
			}
		}
		ps.edge = edgeOperator{g: g, h: h, cache: ps.cache}
		ps.w = &ps.edge
	}
	if ps.sgs {
		ps.prepareSGS()
	}
	return nil
}

// nodeKernels sets kv = κv and skv = √κv per pair of node labels of (a, b),
// from the call's table when it has one, and vPos.
func (ps *pairSolver) nodeKernels(a, b *side, opt *Options) error {
	g, h := a.g, b.g
	lg, lh := len(a.nrep), len(b.nrep)
	ps.kv, ps.skv = grow(ps.kv, lg*lh), grow(ps.skv, lg*lh)
	if t := ps.nodeTable(a, b); t != nil {
		for la, ga := range a.ngl {
			for lb, gb := range b.ngl {
				e := t.at(ga, gb, ps.swapped)
				ps.kv[la*lh+lb], ps.skv[la*lh+lb] = t.val[e], t.root[e]
			}
		}
	} else {
		for la := range lg {
			gi := g.Node(int(a.nrep[la]))
			for lb := range lh {
				v := opt.NodeKernel.Eval(gi, h.Node(int(b.nrep[lb])))
				if !(v >= 0) || math.IsInf(v, 0) {
					return fmt.Errorf("mgk: node kernel gave %v for nodes %d and %d; it must be finite and non-negative", v, a.nrep[la], b.nrep[lb])
				}
				ps.kv[la*lh+lb], ps.skv[la*lh+lb] = v, math.Sqrt(v)
			}
		}
	}
	ps.vPos = true
	for _, v := range ps.kv[:lg*lh] {
		ps.vPos = ps.vPos && v > 0
	}
	return nil
}

// edgeKernels sets ke = κe per pair of edge labels of (a, b), from the
// call's table when it has one.
func (ps *pairSolver) edgeKernels(a, b *side, opt *Options) {
	g, h := a.g, b.g
	lg, lh := len(a.erep), len(b.erep)
	ps.ke = grow(ps.ke, lg*lh)
	if t := ps.edgeTable(a, b); t != nil {
		for la, ga := range a.egl {
			for lb, gb := range b.egl {
				ps.ke[la*lh+lb] = t.val[t.at(ga, gb, ps.swapped)]
			}
		}
	} else {
		for la := range lg {
			ge := g.Edge(int(a.erep[la]))
			for lb := range lh {
				ps.ke[la*lh+lb] = opt.EdgeKernel.Eval(ge, h.Edge(int(b.erep[lb])))
			}
		}
	}
}

// fill sets v = κv, s = √κv, dd = d⊗d'/(1−q)² (scale = 1/(1−q)²) and the
// quotient weights cw for every node pair, and, for SGS, the diagonals xdm,
// xinv (doubled in il on a twoCol worker) and dk of a pair without self-loop
// pairs (loopDiagonals corrects the others), from the per-label values and
// the sides' inverse degrees: no division per node pair.
func (ps *pairSolver) fill(scale float64) {
	a, b := ps.a, ps.b
	nh := b.g.N
	lh := len(b.nrep)
	if ps.sgs {
		ps.kvInv = grow(ps.kvInv, len(ps.kv))
		for l, v := range ps.kv {
			ps.kvInv[l] = 0
			if v > 0 {
				ps.kvInv[l] = 1 / v
			}
		}
	}
	ps.cw = nil
	if a.cw != nil || b.cw != nil {
		ps.cwBuf = grow(ps.cwBuf, a.g.N*nh)
		ps.cw = ps.cwBuf
	}
	bl, bd, bi := b.nlab[:nh], b.deg[:nh], b.invDeg[:nh]
	for i := 0; i < a.g.N; i++ {
		row := int(a.nlab[i]) * lh
		kv, skv := ps.kv[row:row+lh], ps.skv[row:row+lh]
		di := a.deg[i] * scale
		base := i * nh
		vs, ds := ps.v[base:base+nh], ps.dd[base:base+nh]
		if ps.cw != nil {
			ca, cs := a.c(i), ps.cw[base:base+nh]
			for ip := range cs {
				cs[ip] = ca * b.c(ip)
			}
		}
		if !ps.sgs {
			ss := ps.s[base : base+nh]
			for ip, l := range bl {
				vs[ip], ss[ip] = kv[l], skv[l]
				ds[ip] = di * bd[ip]
			}
			continue
		}
		// Without self-loop pairs M's diagonal is dd: xdm = dk = dd/v and
		// xinv = v/dd (0 where v = 0). The SGS solver needs no s (its masks
		// read v), and dk only where G has self-loops.
		kvInv := ps.kvInv[row : row+lh]
		ii := a.invDeg[i] / scale
		if ps.twoCol {
			// The two-column solvers read the diagonals doubled only.
			// Element by element: a [2]float64 literal is built on the
			// stack and copied with a 16-byte load that its two 8-byte
			// stores cannot forward (a stall per entry).
			dm2, inv2 := ps.il.dm[base:base+nh], ps.il.inv[base:base+nh]
			for ip, l := range bl {
				v, d := kv[l], di*bd[ip]
				vs[ip], ds[ip] = v, d
				dm, inv := d*kvInv[l], v*(ii*bi[ip])
				dm2[ip][0], dm2[ip][1] = dm, dm
				inv2[ip][0], inv2[ip][1] = inv, inv
			}
			if len(a.sw.loop) > 0 {
				dk := ps.dk[base : base+nh]
				for ip := range dk {
					dk[ip] = dm2[ip][0]
				}
			}
			continue
		}
		xdm, xinv := ps.xdm[base:base+nh], ps.xinv[base:base+nh]
		for ip, l := range bl {
			v, d := kv[l], di*bd[ip]
			vs[ip], ds[ip] = v, d
			xdm[ip] = d * kvInv[l]
			xinv[ip] = v * (ii * bi[ip])
		}
		if len(a.sw.loop) > 0 {
			copy(ps.dk[base:base+nh], xdm)
		}
	}
	ps.dkIsDm = true
}

// jacobiDiagonal sets the Jacobi diagonal diag and its inverse inv. M's
// diagonal is dd − v·W_diag, where W_diag comes only from pairs of
// self-loops at i and i'. A non-positive diagonal means M is not positive
// definite (a self-loop pair with κv·κe above 1/(1−q)²); CG will then break
// down and report it. The preconditioner is kept positive so that it does so
// cleanly.
func (ps *pairSolver) jacobiDiagonal(cached bool) {
	g, h := ps.a.g, ps.b.g
	mh := h.NumEdges()
	copy(ps.diag, ps.dd)
	for _, e := range ps.a.sw.loop {
		i := int(g.EdgeU[e])
		for _, f := range ps.b.sw.loop {
			ip := int(h.EdgeU[f])
			var w float64
			if cached {
				w = ps.cache[int(e)*mh+int(f)]
			} else {
				w = g.Weight[e] * h.Weight[f] * ps.opt.EdgeKernel.Eval(g.Edge(int(e)), h.Edge(int(f)))
			}
			ps.diag[i*h.N+ip] -= ps.v[i*h.N+ip] * w
		}
	}
	for k, d := range ps.diag {
		if !(d > 0) {
			ps.diag[k] = ps.dd[k]
		}
		ps.inv[k] = 1 / ps.diag[k]
	}
}

// apply sets dst = M·src = dd∘src − s∘W(s∘src) and returns srcᵀ·dst, which CG
// needs next and which costs nothing extra in the final pass. ssrc must hold
// s∘src already: CG forms it in the same pass as the search direction.
func (ps *pairSolver) apply(dst, src, ssrc []float64) float64 {
	ps.w.mulW(dst, ssrc)
	return vec.ShiftedScale(dst[:len(src)], ps.dd[:len(src)], ps.s[:len(src)], src)
}

// solveResult describes one CG solve.
type solveResult struct {
	iters     int
	residual  float64 // final ‖r‖/‖b‖ (recurrence residual)
	converged bool
}

// cg solves M y = S u for x = S y with the pair's solver (cgSGS when ps.sgs,
// else cgJacobi), writing x. In the original variables this is
// (D V⁻¹ − W) x = u on the node pairs with v > 0 and x = 0 elsewhere; the
// solvers take u and return x so that no entry is scaled by s on the way in
// and divided by it on the way out.
func (ps *pairSolver) cg(u, x []float64, tol float64, maxIter int) solveResult {
	if ps.sgs {
		return ps.cgSGS(u, x, tol, maxIter)
	}
	return ps.cgJacobi(u, x, tol, maxIter)
}

// cgJacobi solves M y = S u by Jacobi-preconditioned conjugate gradients from
// y = 0 and writes x = S y to x (see cg), stopping when ‖r‖ ≤ tol·‖S u‖ or
// after maxIter iterations, or when pᵀMp ≤ 0 shows M is not positive
// definite. It allocates nothing; u may alias ps.ap. Each iteration makes
// three passes over the vectors besides the product with W (see package vec):
// finish the mat-vec, update y and r, form the next p.
func (ps *pairSolver) cgJacobi(u, x []float64, tol float64, maxIter int) solveResult {
	res := ps.jacobi(u, x, tol, maxIter)
	for k, s := range ps.s[:len(u)] {
		x[k] *= s
	}
	return res
}

// jacobi is cgJacobi's iteration, leaving y in y.
func (ps *pairSolver) jacobi(u, y []float64, tol float64, maxIter int) solveResult {
	n := len(u)
	r, p, ap, t, inv, y := ps.r[:n], ps.p[:n], ps.ap[:n], ps.t[:n], ps.inv[:n], y[:n]
	clear(y)
	for k, s := range ps.s[:n] {
		r[k] = s * u[k]
	}
	bb := vec.Dot(r, r)
	if bb == 0 {
		return solveResult{converged: true}
	}
	// The first direction is inv∘r: Direction with beta = 0 on a zeroed p.
	clear(p)
	vec.Direction(p, t, r, inv, ps.s[:n], 0)
	rz := vec.Dot(r, p)
	rr, thr := bb, tol*tol*bb
	for it := 0; ; it++ {
		// A cancelled solve stops early; schedule.Run then discards the result.
		if it&7 == 7 && ps.opt.Control.Cancelled() {
			return solveResult{iters: it, residual: math.Sqrt(rr / bb)}
		}
		if rr <= thr {
			return solveResult{iters: it, residual: math.Sqrt(rr / bb), converged: true}
		}
		if it >= maxIter {
			return solveResult{iters: it, residual: math.Sqrt(rr / bb)}
		}
		pap := ps.apply(ap, p, t)
		if !(pap > 0) || math.IsInf(pap, 0) {
			return solveResult{iters: it, residual: math.Sqrt(rr / bb)}
		}
		alpha := rz / pap
		rzNew, rrNew := vec.Step(y, r, p, ap, inv, alpha)
		beta := rzNew / rz
		rz, rr = rzNew, rrNew
		// The preconditioned residual z = r∘inv is formed here again rather
		// than stored: a multiply is cheaper than another vector's traffic.
		vec.Direction(p, t, r, inv, ps.s[:n], beta)
	}
}

// solvePrimal solves for x = S y, the vector whose p-weighted sum is K. With
// Lmin = 0 the right-hand side is D 1 (u of cg). With Lmin = 1 the solve
// targets x − V·1 directly: it satisfies (D V⁻¹ − W)(x − V·1) = W V·1, i.e.
// u = W V·1, so K is not the difference of two nearly equal numbers when walks
// are short (large q) or weakly matched.
func (ps *pairSolver) solvePrimal() solveResult {
	return ps.cg(ps.primalRHS(), ps.sol, ps.tol, ps.opt.MaxIter)
}

// primalRHS forms the right-hand side of solvePrimal in ap: cg copies it
// into r before its first mat-vec overwrites ap, so no extra vector is needed.
// Without class weights and with Lmin = 0 it is dd itself (the solvers only
// read their right-hand sides).
func (ps *pairSolver) primalRHS() []float64 {
	rhs := ps.ap
	if ps.opt.Lmin == 1 {
		src := ps.v[:len(rhs)]
		if ps.cw != nil {
			// A quotient's right-hand side is that of the class-constant
			// vector, weighted by √|class|: W (c∘v).
			src = ps.r[:len(rhs)]
			for k := range src {
				src[k] = ps.cw[k] * ps.v[k]
			}
		}
		ps.w.mulW(rhs, src)
	} else {
		if ps.cw == nil {
			return ps.dd[:len(rhs)]
		}
		for k := range rhs {
			rhs[k] = ps.dd[k] * ps.cw[k]
		}
	}
	return rhs
}

// c returns the class weight of product node k (1 without a quotient).
func (ps *pairSolver) c(k int) float64 {
	if ps.cw == nil {
		return 1
	}
	return ps.cw[k]
}

// x returns the solution at product node k: x_(i,i') with Lmin = 0 and
// x_(i,i') − v_(i,i') with Lmin = 1.
func (ps *pairSolver) x(k int) float64 { return ps.sol[k] }

// fullX returns the full x at product node k, in the quotient's weighting
// (x̃ = c∘x): x(k), with the length-0 term c·v added back when Lmin = 1.
func (ps *pairSolver) fullX(k int) float64 {
	if ps.opt.Lmin == 1 {
		return ps.x(k) + ps.c(k)*ps.v[k]
	}
	return ps.x(k)
}

// value returns K for the solved pair: Σ p_i p'_i' x(k), each block's sum
// in partial sums (a single running sum is a chain of additions as long as
// the block).
func (ps *pairSolver) value() float64 {
	a, b := ps.a, ps.b
	nh := b.g.N
	sum := 0.0
	for i := 0; i < a.g.N; i++ {
		x := ps.sol[i*nh : (i+1)*nh]
		var row float64
		switch {
		case b.start == nil && ps.cw == nil:
			row = sum4(x)
		case b.start == nil:
			row = vec.Dot(ps.cw[i*nh:(i+1)*nh], x)
		default:
			for ip, xk := range x {
				row += b.start[ip] * ps.c(i*nh+ip) * xk
			}
		}
		sum += a.p(i) * row
	}
	return sum
}

// sum4 returns Σ x in four partial sums.
func sum4(x []float64) float64 {
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(x); k += 4 {
		s0, s1, s2, s3 = s0+x[k], s1+x[k+1], s2+x[k+2], s3+x[k+3]
	}
	for ; k < len(x); k++ {
		s0 += x[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// Residual tolerances per unit of Options.Accuracy, measured on the full
// MUTAG, NCI1 and ENZYMES Gram matrices
// (benchmarks/log/mgk_solver_issue10.md): the largest relative error of K
// over all pairs stayed below a quarter of the accuracy asked for.
const (
	jacobiTolPerAccuracy = 0.1
	sgsTolPerAccuracy    = 1.0
)

// gradTolFactor sets the tolerance of the solves GramGrad's gradients read
// (gradTolFor): their errors are linear in the residuals, up to about 40× the
// tolerance for a small component on the test graphs at q = 0.8 (fewest
// iterations), so tol = gradTolFactor·GradAccuracy, scaled like Gram's by
// solver.
const gradTolFactor = 0.01

// tolFor returns the residual tolerance of a pair's solves: opt.Tol when set,
// else the one derived from opt.Accuracy for the solver in use.
func tolFor(opt *Options, sgs bool) float64 {
	if opt.Tol > 0 {
		return opt.Tol
	}
	f := jacobiTolPerAccuracy
	if sgs {
		f = sgsTolPerAccuracy
	}
	return accuracyTol(opt, f)
}

// accuracyTol returns the tolerance f·Accuracy, scaled by opt.tolScale when set.
func accuracyTol(opt *Options, f float64) float64 {
	if opt.tolScale > 0 {
		f *= opt.tolScale
	}
	return f * opt.Accuracy
}

// JacobiTolerance returns the residual tolerance a Jacobi-preconditioned CG
// solve needs to meet opt's accuracy contract (opt.Tol when set), for other
// backends of this kernel (the CUDA bridge); opt is resolved as Check returns it.
func JacobiTolerance(opt Options) float64 { return tolFor(&opt, false) }

// JacobiAdjointTolerance returns the residual tolerance of GramGrad's adjoint
// solves with Jacobi-preconditioned CG (opt.Tol when set), for other backends
// of the gradient (the CUDA bridge); opt is resolved as Check returns it.
func JacobiAdjointTolerance(opt Options) float64 { return gradTolFor(&opt, false) }

// gradTolFor is tolFor for the solves of GramGrad's gradients: its adjoint
// solves, and on SGS pairs its primal ones too (K then comes from both, dual.go).
func gradTolFor(opt *Options, sgs bool) float64 {
	if opt.Tol > 0 {
		return opt.Tol
	}
	f := jacobiTolPerAccuracy
	if sgs {
		f = sgsTolPerAccuracy
	}
	return f * gradTolFactor * opt.GradAccuracy
}
