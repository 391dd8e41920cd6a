package mgk

import (
	"math"

	"github.com/graphgram/graphgram/gokernel/vec"
)

// Two solves in one pass.
//
// lockstep (GramGrad) and dualValue (Gram, dual.go) run a pair's primal and
// adjoint solves side by side, entry k of column c at [k][c]: the sweeps
// read the edge table, the edge lists and the diagonals once for both
// columns, and each update of the scatter moves two adjacent numbers in one
// vector operation. Every column's recurrences (r̂, p, α, β) are still those
// of cgSGS alone, operation for operation and in the same order (the
// two-column functions of package vec for the common blocks, backBlockX and
// fwdBlockX for blocks with loop rows).

// interleaved holds the two columns' vectors and the sweeps' diagonals xdm
// and xinv twice (one entry per product node; written by fill and
// loopDiagonals, in place of xdm and xinv, on a twoCol worker), and the
// sweeps' block accumulator (one per node of H).
type interleaved struct {
	r, p, ap, t, z, y, dm, inv, acc [][2]float64
	// yh holds lockstep's split-coordinate iterates until K is taken.
	yh [][2]float64
}

// grow2 is grow for two-column vectors.
func grow2(s [][2]float64, n int) [][2]float64 {
	if cap(s) < n {
		return make([][2]float64, n)
	}
	return s[:n]
}

// lockstep solves the pair's primal (to tol1, into x) and adjoint (to tol2,
// into u) systems as cgSGS would solve each, and returns their results and
// K from both, corrected (dual.go), at the first iterate
// where the product of their relative residuals is at most τ (or where
// either breaks down short of it, as dualValue stops there). Until then
// neither column stops on its own tolerance, and the split-coordinate
// iterates accumulate in il.yh as dualValue's do in il.y (Step2Both is Step2
// there, bit for bit), so that K is dualValue's, bit for bit; x accumulates
// in il.y beside them. After it a column done before the other (or broken
// down) is frozen, its lane stepping with alpha = 0, while the other goes
// on. The sweeps' diagonals, doubled, are il.dm and il.inv, which fill and
// loopDiagonals write for a twoCol worker.
func (ps *pairSolver) lockstep(x, u []float64, tol1, tol2 float64) (K float64, res1, res2 solveResult) {
	c1, c2, chat, thr := ps.startDual(x, u)
	n := len(chat)
	il := &ps.il
	il.yh = grow2(il.yh, n)
	clear(il.yh)
	valued := false
	maxIter, ctl := ps.opt.MaxIter, ps.opt.Control
	cols := [2]*sgsCol{c1, c2}
	// A column that converges first keeps its x in its lane: its further
	// steps have alpha = 0, which leaves y as it is. One that stops
	// otherwise (breakdown, the iteration cap, cancellation) is copied out
	// at once, as its lane's later values are not to be trusted.
	var copied [2]bool
	ownTolerances := func() { c1.thr, c2.thr = tol1*tol1*c1.rz0, tol2*tol2*c2.rz0 }
	check := func() {
		if !valued && c1.rz*c2.rz <= thr {
			K, valued = dualSum(chat, il.yh, il.r), true
			ownTolerances()
		}
		for c, col := range cols {
			if col.check(maxIter, ctl); col.done && !col.res.converged && !copied[c] {
				copied[c] = true
				column(il.y, col.y, c)
			}
		}
	}
	check()
	for !c1.done || !c2.done {
		// A done column steps with beta = alpha = 0.
		var beta, alpha [2]float64
		for c, col := range cols {
			if !col.done {
				beta[c] = col.beta
			}
		}
		ps.backwardX(beta[0], beta[1])
		pap1, pap2 := ps.forwardX(false)
		if !valued && !(stepOK(pap1) && stepOK(pap2)) {
			// A breakdown short of τ: K is this iterate's, where dualValue
			// stops, and a column that goes on does so to its own
			// tolerance (τ is out of reach alone).
			K, valued = dualSum(chat, il.yh, il.r), true
			ownTolerances()
		}
		for c, pap := range [2]float64{pap1, pap2} {
			switch col := cols[c]; {
			case col.done:
			case !stepOK(pap):
				col.breakDown()
				copied[c] = true
				column(il.y, col.y, c)
			default:
				alpha[c] = col.rz / pap
			}
		}
		var rz1, rz2 float64
		if valued {
			rz1, rz2 = vec.Step2(il.y, il.r, il.t, il.ap, il.dm, alpha[0], alpha[1])
		} else {
			rz1, rz2 = vec.Step2Both(il.yh, il.r, il.p, il.ap, il.dm, il.y, il.t, alpha[0], alpha[1])
		}
		for c, rz := range [2]float64{rz1, rz2} {
			if col := cols[c]; !col.done {
				col.beta, col.rz = rz/col.rz, rz
				col.it++
			}
		}
		check()
	}
	if !valued {
		// Stopped short of τ by the iteration cap or cancellation, as
		// dualValue does: the last iterate's value.
		K = dualSum(chat, il.yh, il.r)
	}
	// x of the columns not copied yet is in their lanes: both in one pass
	// when neither was, with finish's zeros where v = 0.
	if !copied[0] && !copied[1] {
		y1, y2 := c1.y[:n], c2.y[:n]
		for k, v := range ps.v[:n] {
			if v > 0 {
				y1[k], y2[k] = il.y[k][0], il.y[k][1]
			} else {
				y1[k], y2[k] = 0, 0
			}
		}
		return K, c1.res, c2.res
	}
	for c, col := range cols {
		if !copied[c] {
			column(il.y, col.y, c)
		}
		ps.finish(col)
	}
	return K, c1.res, c2.res
}

// startDual sets up the pair's primal (primalRHS) and adjoint (adjointRHS,
// in ps.ap2) solves from y = 0, their solutions to go to x and u (nil for
// dualValue, which keeps its iterates in il.y only): the column states
// ps.cols, opened with no tolerance of their own, and the interleaved
// vectors, as start does for one: r̂ = E⁻¹ b (b in p, 0 where v = 0) and a
// zeroed p, so that the first direction is Dm∘r̂ (backward's update with
// beta = 0). It returns the columns, ĉ (the adjoint's first r̂, written over
// ps.ap2) and the threshold of dual.go's stopping test for the product of
// the columns' r̂ᵀ Dm r̂: τ² times that product at the start.
func (ps *pairSolver) startDual(x, u []float64) (c1, c2 *sgsCol, chat []float64, thr float64) {
	if !ps.twoCol {
		panic("mgk: two columns on a worker set up without twoCol (its doubled diagonals are not written)")
	}
	n := len(ps.sol)
	ps.ap2 = grow(ps.ap2, n)
	rhs1, rhs2 := ps.primalRHS(), ps.adjointRHS(ps.ap2)
	c1, c2 = &ps.cols[0], &ps.cols[1]
	*c1, *c2 = sgsCol{y: x}, sgsCol{y: u}
	il := &ps.il
	for _, v := range []*[][2]float64{&il.r, &il.p, &il.ap, &il.t, &il.z, &il.y} {
		*v = grow2(*v, n)
	}
	il.acc = grow2(il.acc, ps.b.g.N)
	for k, v := range ps.v[:n] {
		// Element by element, as fill writes il.dm.
		if v > 0 {
			il.p[k][0], il.p[k][1] = rhs1[k], rhs2[k]
		} else {
			il.p[k][0], il.p[k][1] = 0, 0
		}
	}
	clear(il.y)
	ps.forwardX(true)
	rz1, rz2 := vec.WeightedNorm2(il.r, il.dm)
	clear(il.p)
	column(il.r, rhs2, 1)
	c1.open(rz1, 0)
	c2.open(rz2, 0)
	tau := accuracyTol(ps.opt, dualTolPerAccuracy)
	return c1, c2, rhs2, tau * tau * rz1 * rz2
}

// stepOK reports whether pᵀÂp lets CG step (see step).
func stepOK(pap float64) bool { return pap > 0 && !math.IsInf(pap, 0) }

// blocksX returns the two-column scatter of a sweep over G's edge lists
// ptr, edges, to (up or down) through the pair's edge table.
func (ps *pairSolver) blocksX(ptr, edges, to []int32) vec.Blocks2 {
	return vec.Blocks2{C: ps.cache, Ends: ps.b.sw.ends, Ptr: ptr, Rows: edges, Blocks: to}
}

// backwardX is backward for the two columns, with their betas.
func (ps *pairSolver) backwardX(beta1, beta2 float64) {
	nh := ps.b.g.N
	il := &ps.il
	acc := il.acc[:nh]
	sw := &ps.a.sw
	up := ps.blocksX(sw.upPtr, sw.up, sw.upTo)
	for i := ps.a.g.N - 1; i >= 0; i-- {
		up.Scatter(acc, il.t, i)
		b, e := i*nh, (i+1)*nh
		t, inv := il.t[b:e], il.inv[b:e]
		if lr := ps.loopRow(i); lr != nil {
			ps.backBlockX(i, lr, acc, t, il.p[b:e], il.r[b:e], beta1, beta2)
		} else {
			vec.SweepBack2(t, il.p[b:e], il.r[b:e], il.dm[b:e], inv, acc, beta1, beta2)
		}
	}
}

// backBlockX is backBlock for the two columns of a block with loop rows lr:
// the direction update x = dm∘r + beta·x first, then t = (x + acc +
// lr-products with t's later entries)∘inv from the last entry to the first.
func (ps *pairSolver) backBlockX(i int, lr []float64, acc, t, x, r [][2]float64, beta1, beta2 float64) {
	h := ps.b.g
	nh := h.N
	base := i * nh
	inv, dm := ps.il.inv[base:base+nh], ps.il.dm[base:base+nh]
	for ip := range x[:nh] {
		x[ip][0], x[ip][1] = r[ip][0]*dm[ip][0]+beta1*x[ip][0], r[ip][1]*dm[ip][1]+beta2*x[ip][1]
	}
	for ip := nh - 1; ip >= 0; ip-- {
		sum := acc[ip]
		for kp := h.RowPtr[ip]; kp < h.RowPtr[ip+1]; kp++ {
			if jp := int(h.Col[kp]); jp > ip {
				w := lr[h.EdgeOf[kp]]
				sum[0] += w * t[jp][0]
				sum[1] += w * t[jp][1]
			}
		}
		t[ip][0], t[ip][1] = (x[ip][0]+sum[0])*inv[ip][0], (x[ip][1]+sum[1])*inv[ip][1]
	}
}

// forwardX is forward for the two columns: with rhs it solves E r̂ = p into
// r (and z), else it sets ap = Â p from t = E⁻ᵀ p (kept) and returns both
// columns' pᵀÂp, summed block by block as forward sums them.
func (ps *pairSolver) forwardX(rhs bool) (float64, float64) {
	nh := ps.b.g.N
	il := &ps.il
	acc := il.acc[:nh]
	out := il.ap
	if rhs {
		out = il.r
	}
	sw := &ps.a.sw
	down := ps.blocksX(sw.downPtr, sw.down, sw.downTo)
	pap1, pap2 := 0.0, 0.0
	for i := 0; i < ps.a.g.N; i++ {
		down.Scatter(acc, il.z, i)
		b, e := i*nh, (i+1)*nh
		z, t, p, inv := il.z[b:e], il.t[b:e], il.p[b:e], il.inv[b:e]
		var s1, s2 float64
		switch lr := ps.loopRow(i); {
		case lr != nil || !rhs && !ps.dkIsDm:
			s1, s2 = ps.fwdBlockX(i, lr, acc, out[b:e], z, t, p, rhs)
		case rhs:
			vec.SweepSolve2(z, p, inv, acc)
			copy(out[b:e], z)
		default:
			s1, s2 = vec.SweepForward2(z, t, out[b:e], p, inv, acc)
		}
		pap1 += s1
		pap2 += s2
	}
	return pap1, pap2
}

// fwdBlockX is fwdBlock for the two columns of a block with loop rows lr (nil:
// none) or dk ≠ Dm: its general loop, entry by entry.
func (ps *pairSolver) fwdBlockX(i int, lr []float64, acc, ap, z, t, x [][2]float64, rhs bool) (pap1, pap2 float64) {
	h := ps.b.g
	nh := h.N
	base := i * nh
	inv, dk := ps.il.inv[base:base+nh], ps.dk[base:base+nh]
	for ip := range nh {
		a := acc[ip]
		if lr != nil {
			for kp := h.RowPtr[ip]; kp < h.RowPtr[ip+1]; kp++ {
				if jp := int(h.Col[kp]); jp < ip {
					w := lr[h.EdgeOf[kp]]
					a[0] += w * z[jp][0] // written already
					a[1] += w * z[jp][1]
				}
			}
		}
		if rhs {
			z0, z1 := (x[ip][0]+a[0])*inv[ip][0], (x[ip][1]+a[1])*inv[ip][1]
			z[ip][0], z[ip][1], ap[ip][0], ap[ip][1] = z0, z1, z0, z1
			continue
		}
		for c := range 2 {
			tk := t[ip][c]
			zk := (x[ip][c] - dk[ip]*tk + a[c]) * inv[ip][c]
			z[ip][c] = zk
			ap[ip][c] = tk + zk
		}
		pap1 += x[ip][0] * ap[ip][0]
		pap2 += x[ip][1] * ap[ip][1]
	}
	return pap1, pap2
}

// column copies column c of x into xc.
func column(x [][2]float64, xc []float64, c int) {
	xc = xc[:len(x)]
	for k, v := range x {
		xc[k] = v[c]
	}
}
