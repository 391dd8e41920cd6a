package mgk

import (
	"math"

	"github.com/graphgram/graphgram/gokernel/vec"
)

// K from two half-converged solves.
//
// K = cᵀ x with A x = b, where b is the primal right-hand side (primalRHS)
// and c = c∘p⊗p' the adjoint's (adjointRHS), A symmetric. With approximate
// solutions x_k of A x = b and u_k of A u = c, and r_k = b − A x_k,
//
//	K = cᵀ x_k + u_kᵀ r_k + (u − u_k)ᵀ r_k,
//
// and the last term is (u − u_k)ᵀ A (x − x_k): the error of the corrected
// value cᵀ x_k + u_kᵀ r_k is the product of the two solves' errors, where
// cᵀ x_k alone errs by the primal's. This is the adjoint (dual-weighted)
// correction of a functional (Pierce and Giles, SIAM Review 42, 2000); for
// CG on cᵀA⁻¹b, Strakoš and Tichý (SIAM J. Sci. Comput. 33, 2011). Both
// solves, run in lockstep on the two-column sweeps (sgs2.go), stop when the
// product of their relative preconditioned residuals reaches τ: each near
// √τ, which CG reaches in about 0.6 of the iterations that one solve to the
// same accuracy takes (benchmarks/log/gradients_issue21.md).
//
// In SGS's split coordinates (sgs.go), Â = E⁻¹ A E⁻ᵀ, x = E⁻ᵀ x̂, ĉ = E⁻¹ c
// and r̂ = E⁻¹ r, the corrected value is
//
//	K ≈ ĉᵀ x̂_k + û_kᵀ r̂_k,
//
// and CG's iterates x̂ and û accumulate from its directions alone (x̂ += α p):
// no sweep maps them back, as cgSGS's x = E⁻ᵀ x̂ needs t. ĉ is the adjoint
// column's first residual r̂₀.

// dualTolPerAccuracy sets τ = dualTolPerAccuracy·Accuracy, the product of the
// two solves' relative residuals at which dualValue stops. The largest
// relative error of K came to 0.9–1.4 τ on the MUTAG, ENZYMES, NCI1 and
// PROTEINS Grams at q = 0.01 and 0.001 (TestCalibrateAccuracy) and on
// replayed molecule Grams at q = 0.01 to 0.5
// (benchmarks/log/gradients_issue21.md), so 0.25 keeps it below 0.37 × the
// accuracy, near one solve's 0.1–0.26 ×.
const dualTolPerAccuracy = 0.25

// dualValues reports whether Gram and Diag take their values from dualValue
// on SGS pairs: whenever the tolerance is derived from Accuracy. An explicit
// Tol is a residual tolerance of the primal solve, and keeps its meaning.
func (o *Options) dualValues() bool {
	return o.Tol == 0 && o.Solver != SolverJacobi
}

// solveValue solves the pair for K alone: through dualValue on SGS pairs
// when o.dualValues, else by the primal solve.
func (ps *pairSolver) solveValue() (float64, solveResult) {
	if ps.sgs && ps.opt.dualValues() {
		return ps.dualValue()
	}
	res := ps.solvePrimal()
	return ps.value(), res
}

// dualValue returns the corrected K of the primal and adjoint solves run in
// lockstep to τ (see the top of this file), their split-coordinate iterates
// accumulating in the lanes of il.y. Its result's iterations are the
// lockstep's (each one product with Â on two vectors), its residual the
// product of the two columns' relative residuals; it is unconverged when
// either column breaks down (M not positive definite), at the iteration cap,
// or on cancellation. GramGrad's lockstep takes the same value, bit for bit.
func (ps *pairSolver) dualValue() (float64, solveResult) {
	c1, c2, chat, thr := ps.startDual(nil, nil)
	il := &ps.il
	res := solveResult{converged: true}
	maxIter, ctl := ps.opt.MaxIter, ps.opt.Control
	for c1.rz*c2.rz > thr {
		if res.iters >= maxIter || (res.iters&7 == 7 && ctl.Cancelled()) {
			res.converged = false
			break
		}
		ps.backwardX(c1.beta, c2.beta)
		pap1, pap2 := ps.forwardX(false)
		if !stepOK(pap1) || !stepOK(pap2) {
			res.converged = false
			break
		}
		rz1, rz2 := vec.Step2(il.y, il.r, il.p, il.ap, il.dm, c1.rz/pap1, c2.rz/pap2)
		c1.beta, c1.rz = rz1/c1.rz, rz1
		c2.beta, c2.rz = rz2/c2.rz, rz2
		res.iters++
	}
	if c1.rz*c2.rz > 0 {
		res.residual = math.Sqrt(c1.rz / c1.rz0 * (c2.rz / c2.rz0))
	}
	return dualSum(chat, il.y, il.r), res
}

// dualSum returns ĉᵀ x̂ + ûᵀ r̂ with x̂, û the two columns of y and r̂ the
// first of r, in four partial sums.
func dualSum(chat []float64, y, r [][2]float64) float64 {
	y, r = y[:len(chat)], r[:len(chat)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+2 <= len(chat); k += 2 {
		s0 += chat[k] * y[k][0]
		s1 += y[k][1] * r[k][0]
		s2 += chat[k+1] * y[k+1][0]
		s3 += y[k+1][1] * r[k+1][0]
	}
	if k < len(chat) {
		s0 += chat[k] * y[k][0]
		s1 += y[k][1] * r[k][0]
	}
	return (s0 + s2) + (s1 + s3)
}
