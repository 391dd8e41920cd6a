package mgk

import (
	"math"
	"math/bits"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/vec"
)

// Symmetric Gauss–Seidel preconditioning in Eisenstat's form.
//
// Split M = D − S W S (pairSolver) as M = L + Dm + Lᵀ with Dm its diagonal and
// L its strictly lower part in the solver's node order (product node i·n' + i'
// grouped by G's node i), and let E = Dm + L. The SGS preconditioner is
// P = E Dm⁻¹ Eᵀ, and CG preconditioned by P is CG on
//
//	Â ŷ = E⁻¹ b,  Â = E⁻¹ M E⁻ᵀ,  y = E⁻ᵀ ŷ,
//
// preconditioned by Dm (z = Dm∘r̂). Since M = E + Eᵀ − Dm,
//
//	Â p = t + E⁻¹ (p − Dm t),  t = E⁻ᵀ p,
//
// so one product with Â is a backward sweep (Eᵀ's strictly upper part) and a
// forward sweep (L), which together visit every pair of undirected edges once
// with two updates each: the four updates of one W product, in two passes.
// CG stops on the preconditioned residual √(r̂ᵀ Dm r̂), relative to its start.
// CG's iterate is kept as x = E⁻ᵀ ŷ itself: its step ŷ += α p is x += α t,
// with t = E⁻ᵀ p from the iteration's backward sweep, so no sweep maps ŷ back
// at the end (one sweep of the 10–35 a pair takes).
//
// Edge pairs are processed grouped by G's node: the backward sweep over G's
// nodes from last to first gathers, for the block of node i, the products over
// G's edges to nodes j > i (already final), and the forward sweep those to
// nodes j < i. A self-loop of G couples product nodes within one block
// (i, a') ↔ (i, b'); those entries are handled point by point inside the
// block, in H's node order, through H's adjacency.
//
// The sweeps work on the unscaled system A x = S⁻¹b, A = S⁻¹ M S⁻¹ =
// D V⁻¹ − W (symmetric), x = S y: SGS preconditioning is invariant under
// diagonal scaling, so the iterates and the stopping test are those of the
// scaled system, and the sweeps save every multiplication by s and the vector
// s∘t. A node pair with v = 0 has x = 0 (its row of M reads D y = 0); it gets
// a zero inverse diagonal and zero Dm, so that every vector stays 0 there and
// CG runs on the other rows only.
//
// When the preconditioner's diagonal Dp had to be made positive (M is then not
// positive definite and CG will report a breakdown), the identity reads
// M = E + Eᵀ − (2Dp − Dm) and dk holds 2Dp − Dm.

// sweepLists holds a graph's edges grouped by endpoint for the sweeps: for
// node i, the edges to higher-numbered nodes (up) and to lower ones (down)
// with their other endpoints, and its self-loops.
type sweepLists struct {
	// ends lists the edges' endpoints for the sweeps over the other graph of
	// a pair (scatter, and vec.Blocks2 in lockstep).
	ends                  vec.Ends
	upPtr, up, upTo       []int32
	downPtr, down, downTo []int32
	loopPtr, loop         []int32
}

func newSweepLists(g *graph.Graph) sweepLists {
	var s sweepLists
	s.upPtr = make([]int32, g.N+1)
	s.downPtr = make([]int32, g.N+1)
	s.loopPtr = make([]int32, g.N+1)
	for e := range g.NumEdges() {
		u, v := g.EdgeU[e], g.EdgeV[e]
		switch {
		case u == v:
			s.loopPtr[u+1]++
		default:
			s.upPtr[min(u, v)+1]++
			s.downPtr[max(u, v)+1]++
		}
	}
	for i := 0; i < g.N; i++ {
		s.upPtr[i+1] += s.upPtr[i]
		s.downPtr[i+1] += s.downPtr[i]
		s.loopPtr[i+1] += s.loopPtr[i]
	}
	s.up = make([]int32, s.upPtr[g.N])
	s.upTo = make([]int32, s.upPtr[g.N])
	s.down = make([]int32, s.downPtr[g.N])
	s.downTo = make([]int32, s.downPtr[g.N])
	s.loop = make([]int32, s.loopPtr[g.N])
	s.ends = vec.NewEnds(g.EdgeU, g.EdgeV, g.N)

	nu := append([]int32(nil), s.upPtr[:g.N]...)
	nd := append([]int32(nil), s.downPtr[:g.N]...)
	nl := append([]int32(nil), s.loopPtr[:g.N]...)
	for e := range g.NumEdges() {
		u, v := g.EdgeU[e], g.EdgeV[e]
		if u == v {
			s.loop[nl[u]] = int32(e)
			nl[u]++
			continue
		}
		lo, hi := min(u, v), max(u, v)
		s.up[nu[lo]], s.upTo[nu[lo]] = int32(e), hi
		nu[lo]++
		s.down[nd[hi]], s.downTo[nd[hi]] = int32(e), lo
		nd[hi]++
	}
	return s
}

// matchingOrder returns an order of g's edges in which they come as
// matchings: greedy edge colouring gives each edge the smallest colour not yet
// used at either endpoint, and the edges are listed colour by colour (in their
// order within a colour). The sweeps' scatter updates the two endpoints of
// the other graph's edges one edge after another: listed as matchings,
// consecutive edges touch different entries, so no update waits for the
// previous one's store (13 % of Gram time on drug-size molecules, where the
// edges of a ring or chain otherwise follow each other). It returns nil when
// the order is unchanged.
func matchingOrder(g *graph.Graph) []int {
	m := g.NumEdges()
	used := make([]uint64, g.N) // colours in use at each node, bit c for colour c < 64
	colour := make([]int, m)
	sorted := true
	for e := range m {
		u, v := g.EdgeU[e], g.EdgeV[e]
		free := ^(used[u] | used[v])
		c := 63 // nodes of degree 64 and more share the last colour
		if free != 0 {
			c = bits.TrailingZeros64(free)
		}
		colour[e] = c
		used[u] |= 1 << c
		used[v] |= 1 << c
		sorted = sorted && (e == 0 || colour[e-1] <= c)
	}
	if sorted {
		return nil
	}
	order := make([]int, m)
	for e := range order {
		order[e] = e
	}
	slices.SortStableFunc(order, func(a, b int) int { return colour[a] - colour[b] })
	return order
}

// loopDiagonals corrects the SGS diagonals fill set for the node pairs
// (i, i') where both nodes carry self-loops, the only entries of M's diagonal
// other than dd: with Dm = dd − v·Σ w_e w'_f κe over the pairs of loops
// (before edgeOperator's halving), the preconditioner's diagonal Dp is Dm, or
// dd where Dm ≤ 0 (M is then not positive definite, and CG will report the
// breakdown; a positive Dp keeps that clean), and xdm = Dp/v, xinv = v/Dp,
// dk = (2Dp − Dm)/v (0 where v = 0), xdm and xinv doubled in il on a twoCol
// worker. ps.diag holds the loop sums (scratch).
func (ps *pairSolver) loopDiagonals() {
	a, b := ps.a, ps.b
	if len(a.sw.loop) == 0 || len(b.sw.loop) == 0 {
		return
	}
	g, h := a.g, b.g
	mh := h.NumEdges()
	at := func(e, f int32) int { return int(g.EdgeU[e])*h.N + int(h.EdgeU[f]) }
	for _, e := range a.sw.loop {
		for _, f := range b.sw.loop {
			ps.diag[at(e, f)] = 0
		}
	}
	for _, e := range a.sw.loop {
		for _, f := range b.sw.loop {
			ps.diag[at(e, f)] += ps.cache[int(e)*mh+int(f)]
		}
	}
	// A node pair with several loop pairs is recomputed once per pair, each
	// time from the same sums.
	for _, e := range a.sw.loop {
		for _, f := range b.sw.loop {
			k := at(e, f)
			v, dd := ps.v[k], ps.dd[k]
			var xdm, xinv float64
			ps.dk[k] = 0
			if v > 0 {
				dm := dd - v*ps.diag[k]
				dp := dm
				if !(dm > 0) {
					dp = dd
					ps.dkIsDm = false
				}
				xdm, xinv, ps.dk[k] = dp/v, v/dp, (2*dp-dm)/v
			}
			if ps.twoCol {
				dm, inv := &ps.il.dm[k], &ps.il.inv[k]
				dm[0], dm[1], inv[0], inv[1] = xdm, xdm, xinv, xinv
			} else {
				ps.xdm[k], ps.xinv[k] = xdm, xinv
			}
		}
	}
}

// prepareSGS sets up the sweeps of the pair once prepare has filled the edge
// table (with edgeOperator's self-loop factors) and the diagonals: the work
// vectors, and for every node of G with self-loops the summed table row
// w_e·w'_f·κe over its loops (H's self-loops zeroed: they lie on the
// diagonal).
func (ps *pairSolver) prepareSGS() {
	g, h := ps.a.g, ps.b.g
	mh := h.NumEdges()
	ps.acc = grow(ps.acc, h.N)
	sw := &ps.a.sw
	ps.loopOff = ps.loopOff[:0]
	ps.loopRows = ps.loopRows[:0]
	if len(sw.loop) == 0 {
		return
	}
	for i := 0; i < g.N; i++ {
		if sw.loopPtr[i] == sw.loopPtr[i+1] {
			ps.loopOff = append(ps.loopOff, -1)
			continue
		}
		off := len(ps.loopRows)
		ps.loopOff = append(ps.loopOff, int32(off))
		for range mh {
			ps.loopRows = append(ps.loopRows, 0)
		}
		row := ps.loopRows[off : off+mh]
		for _, e := range sw.loop[sw.loopPtr[i]:sw.loopPtr[i+1]] {
			for f, c := range ps.cache[int(e)*mh : (int(e)+1)*mh] {
				if h.EdgeU[f] != h.EdgeV[f] {
					row[f] += 2 * c // undo the table's ½ for G's loop
				}
			}
		}
	}
}

// loopRow returns the summed self-loop row of G's node i, nil when i has none.
func (ps *pairSolver) loopRow(i int) []float64 {
	if len(ps.loopOff) == 0 || ps.loopOff[i] < 0 {
		return nil
	}
	mh := ps.b.g.NumEdges()
	o := int(ps.loopOff[i])
	return ps.loopRows[o : o+mh]
}

// scatter adds to acc, for block i, the products of the table rows of the G
// edges listed in ptr/edges/to (i's up or down edges) with the blocks of x
// at their other ends: acc[a'] += c·x_j[b'], acc[b'] += c·x_j[a'].
func (ps *pairSolver) scatter(i int, ptr, edges, to []int32, acc, x []float64) {
	nh, mh := ps.b.g.N, ps.b.g.NumEdges()
	hab := ps.b.sw.ends.Packed()[:mh]
	for k := ptr[i]; k < ptr[i+1]; k++ {
		e, j := int(edges[k]), int(to[k])
		xj := x[j*nh : (j+1)*nh]
		for f, c := range ps.cache[e*mh : (e+1)*mh] {
			ab := hab[f]
			a, b := uint32(ab), ab>>32
			acc[a] += c * xj[b]
			acc[b] += c * xj[a]
		}
	}
}

// backward solves Eᵀ t = src (unscaled) after forming, block by block, the
// next search direction src = dm∘r + beta·src (CG's direction update, fused
// into the sweep to save a pass over the vectors).
func (ps *pairSolver) backward(t, src, r []float64, beta float64) {
	nh := ps.b.g.N
	sw := &ps.a.sw
	acc := ps.acc[:nh]
	for i := ps.a.g.N - 1; i >= 0; i-- {
		clear(acc)
		ps.scatter(i, sw.upPtr, sw.up, sw.upTo, acc, t)
		ps.backBlock(i, acc, t, src, r, beta)
	}
}

// backBlock finishes block i of backward once acc holds the products with
// the blocks j > i.
func (ps *pairSolver) backBlock(i int, acc, t, src, r []float64, beta float64) {
	h := ps.b.g
	nh := h.N
	base := i * nh
	ti, xi, ii := t[base:base+nh], src[base:base+nh], ps.xinv[base:base+nh]
	ri, di := r[base:base+nh], ps.xdm[base:base+nh]
	lr := ps.loopRow(i)
	if lr == nil {
		for ip, a := range acc {
			x := ri[ip]*di[ip] + beta*xi[ip]
			xi[ip] = x
			ti[ip] = (x + a) * ii[ip]
		}
		return
	}
	for ip, x := range xi {
		xi[ip] = ri[ip]*di[ip] + beta*x
	}
	for ip := nh - 1; ip >= 0; ip-- {
		sum := acc[ip]
		for kp := h.RowPtr[ip]; kp < h.RowPtr[ip+1]; kp++ {
			if jp := int(h.Col[kp]); jp > ip {
				sum += lr[h.EdgeOf[kp]] * ti[jp]
			}
		}
		ti[ip] = (xi[ip] + sum) * ii[ip]
	}
}

// forward solves E z = src − dk∘t (unscaled) into z and sets ap = t + z,
// returning srcᵀap: with src = p and t = E⁻ᵀ p on entry, ap = Â p, and t is
// kept for the step (x += α t). With rhs set it solves E ap = src (the
// transformed right-hand side), using z as scratch, and returns 0.
func (ps *pairSolver) forward(ap, z, t, src []float64, rhs bool) float64 {
	nh := ps.b.g.N
	sw := &ps.a.sw
	acc := ps.acc[:nh]
	pap := 0.0
	for i := 0; i < ps.a.g.N; i++ {
		clear(acc)
		ps.scatter(i, sw.downPtr, sw.down, sw.downTo, acc, z)
		pap += ps.fwdBlock(i, acc, ap, z, t, src, rhs)
	}
	return pap
}

// fwdBlock finishes block i of forward once acc holds the products with the
// blocks j < i, and returns the block's share of srcᵀap.
func (ps *pairSolver) fwdBlock(i int, acc, ap, z, t, src []float64, rhs bool) float64 {
	h := ps.b.g
	nh := h.N
	base := i * nh
	zi, ti, xi, ii, oi, di := z[base:base+nh], t[base:base+nh], src[base:base+nh], ps.xinv[base:base+nh], ap[base:base+nh], ps.dk[base:base+nh]
	pap := 0.0
	if lr := ps.loopRow(i); lr != nil {
		for ip := 0; ip < nh; ip++ {
			for kp := h.RowPtr[ip]; kp < h.RowPtr[ip+1]; kp++ {
				if jp := int(h.Col[kp]); jp < ip {
					acc[ip] += lr[h.EdgeOf[kp]] * zi[jp] // written already
				}
			}
			if rhs {
				zk := (xi[ip] + acc[ip]) * ii[ip]
				zi[ip], oi[ip] = zk, zk
				continue
			}
			tk := ti[ip]
			zk := (xi[ip] - di[ip]*tk + acc[ip]) * ii[ip]
			zi[ip] = zk
			oi[ip] = tk + zk
			pap += xi[ip] * oi[ip]
		}
		return pap
	}
	if rhs {
		for ip, a := range acc {
			zk := (xi[ip] + a) * ii[ip]
			zi[ip], oi[ip] = zk, zk
		}
		return 0
	}
	if ps.dkIsDm {
		// dk·inv = 1: z = (x + a)·inv − t and ap = t + z = (x + a)·inv.
		for ip, a := range acc {
			x := xi[ip]
			ak := (x + a) * ii[ip]
			zi[ip] = ak - ti[ip]
			oi[ip] = ak
			pap += x * ak
		}
		return pap
	}
	for ip, a := range acc {
		tk := ti[ip]
		zk := (xi[ip] - di[ip]*tk + a) * ii[ip]
		zi[ip] = zk
		ak := tk + zk
		oi[ip] = ak
		pap += xi[ip] * ak
	}
	return pap
}

// sgsCol is the state of one CG solve in cgSGS: its vectors (unscaled) and
// scalars. y accumulates the solution x itself: x = E⁻ᵀ ŷ, and each step
// ŷ += α p is x += α t with t = E⁻ᵀ p, which the backward sweep computes, so
// no sweep is needed at the end. lockstep and dualValue run two side by side.
type sgsCol struct {
	r, p, ap, t, z, y []float64
	rz, rz0, thr      float64
	beta              float64
	it                int
	done              bool
	res               solveResult
}

// start sets c up for M y = S u from y = 0 (u = rhs, see cg): r̂ = E⁻¹ u on
// the unscaled system (u goes through p), and reports whether there is
// anything to solve.
func (ps *pairSolver) start(c *sgsCol, rhs []float64, tol float64) {
	ps.load(c, rhs)
	ps.forward(c.r, c.z, c.t, c.p, true)
	ps.begin(c, tol)
	// The first direction is Dm∘r̂: backward's update with beta = 0 on a
	// zeroed p.
	clear(c.p)
}

// load clears c's solution and puts the right-hand side u in p (0 where v = 0).
func (ps *pairSolver) load(c *sgsCol, rhs []float64) {
	v := ps.v[:len(rhs)]
	clear(c.y)
	for k, b := range rhs {
		if v[k] > 0 {
			c.p[k] = b
		} else {
			c.p[k] = 0
		}
	}
}

// begin finishes start once r̂ is in c.r.
func (ps *pairSolver) begin(c *sgsCol, tol float64) {
	c.open(vec.WeightedNorm(c.r, ps.xdm), tol)
}

// open sets c's scalars for its first iteration, with rz = r̂ᵀ Dm r̂.
func (c *sgsCol) open(rz, tol float64) {
	c.rz = rz
	c.beta, c.it, c.done = 0, 0, false
	c.rz0, c.thr = c.rz, tol*tol*c.rz
	if c.rz == 0 {
		c.done, c.res = true, solveResult{converged: true}
	}
}

// check ends c when it has converged, run out of iterations, or the
// computation was cancelled through ctl (schedule.Run then discards the result).
func (c *sgsCol) check(maxIter int, ctl *schedule.Control) {
	switch {
	case c.done:
	case c.rz <= c.thr:
		c.done, c.res = true, solveResult{iters: c.it, residual: math.Sqrt(c.rz / c.rz0), converged: true}
	case c.it >= maxIter || (c.it&7 == 7 && ctl.Cancelled()):
		c.done, c.res = true, solveResult{iters: c.it, residual: math.Sqrt(c.rz / c.rz0)}
	}
}

// breakDown ends c on a breakdown (pᵀÂp ≤ 0: M is not positive definite).
func (c *sgsCol) breakDown() {
	c.done, c.res = true, solveResult{iters: c.it, residual: math.Sqrt(c.rz / c.rz0)}
}

// step finishes an iteration of c once ap = Â p and pap = pᵀÂp.
func (ps *pairSolver) step(c *sgsCol, pap float64) {
	if !stepOK(pap) {
		c.breakDown()
		return
	}
	alpha := c.rz / pap
	rzNew, _ := vec.Step(c.y, c.r, c.t, c.ap, ps.xdm[:len(c.y)], alpha)
	c.beta = rzNew / c.rz
	c.rz = rzNew
	c.it++
}

// finish leaves x (the unscaled system's, which is what cg returns) in c.y,
// exactly 0 where v = 0.
func (ps *pairSolver) finish(c *sgsCol) solveResult {
	for k, v := range ps.v[:len(c.y)] {
		if v == 0 {
			c.y[k] = 0
		}
	}
	return c.res
}

// col1 returns the column state on the solver's own vectors.
func (ps *pairSolver) col1(y []float64, n int) *sgsCol {
	c := &ps.cols[0]
	c.r, c.p, c.ap, c.t, c.z, c.y = ps.r[:n], ps.p[:n], ps.ap[:n], ps.t[:n], ps.z[:n], y[:n]
	return c
}

// cgSGS solves M y = S rhs for x = S y (see cg) by CG preconditioned with
// symmetric Gauss–Seidel (see the top of this file), from y = 0, stopping when
// the preconditioned residual has dropped by tol, after maxIter iterations, or
// when p̂ᵀÂp̂ ≤ 0 shows M is not positive definite. It works on the unscaled
// system throughout. It allocates nothing; rhs may alias ps.ap.
func (ps *pairSolver) cgSGS(rhs, y []float64, tol float64, maxIter int) solveResult {
	if ps.twoCol {
		panic("mgk: a one-column SGS solve on a twoCol worker (its diagonals are written doubled only)")
	}
	c := ps.col1(y, len(rhs))
	ps.start(c, rhs, tol)
	ps.run1(c, maxIter)
	return ps.finish(c)
}

// run1 iterates c alone until it is done.
func (ps *pairSolver) run1(c *sgsCol, maxIter int) {
	for c.check(maxIter, ps.opt.Control); !c.done; c.check(maxIter, ps.opt.Control) {
		ps.backward(c.t, c.p, c.r, c.beta)
		ps.step(c, ps.forward(c.ap, c.z, c.t, c.p, false))
	}
}
