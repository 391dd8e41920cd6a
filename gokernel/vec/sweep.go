package vec

// The block loops of mgk's SGS sweeps, one column.
//
// SweepForward and SweepForward2 return xᵀa summed in four lanes: entry k
// of the first n − n%4 goes to lane k mod 4, the lanes are added as
// (l0 + l1) + (l2 + l3), and the last n%4 entries, summed in order from 0,
// are added to that. The vector and portable versions, and the one- and
// two-column ones, all sum in this order, so that each gives the others'
// bits (GramGrad's K is Gram's).

// SweepBack sets x = r∘dm + beta·x and then t = (x + acc)∘inv: a block of
// the backward sweep fused with CG's direction update.
func SweepBack(t, x, r, dm, inv, acc []float64, beta float64) {
	if SIMD {
		sweepBackSIMD(t, x, r, dm, inv, acc, beta)
		return
	}
	SweepBackGo(t, x, r, dm, inv, acc, beta)
}

// SweepBackGo is the portable SweepBack.
func SweepBackGo(t, x, r, dm, inv, acc []float64, beta float64) {
	n := len(dm)
	t, x, r, inv, acc = t[:n], x[:n], r[:n], inv[:n], acc[:n]
	for k, d := range dm {
		xk := r[k]*d + beta*x[k]
		x[k] = xk
		t[k] = (xk + acc[k]) * inv[k]
	}
}

// SweepSolve sets t = (x + acc)∘inv.
func SweepSolve(t, x, inv, acc []float64) {
	if SIMD {
		sweepSolveSIMD(t, x, inv, acc)
		return
	}
	SweepSolveGo(t, x, inv, acc)
}

// SweepSolveGo is the portable SweepSolve.
func SweepSolveGo(t, x, inv, acc []float64) {
	n := len(inv)
	t, x, acc = t[:n], x[:n], acc[:n]
	for k, v := range inv {
		t[k] = (x[k] + acc[k]) * v
	}
}

// SweepForward sets a = (x + acc)∘inv, then z = a − t and ap = a, and
// returns xᵀa in four lanes (see above). z may be t.
func SweepForward(z, t, ap, x, inv, acc []float64) float64 {
	if SIMD {
		return sweepForwardSIMD(z, t, ap, x, inv, acc)
	}
	return SweepForwardGo(z, t, ap, x, inv, acc)
}

// SweepForwardGo is the portable SweepForward.
func SweepForwardGo(z, t, ap, x, inv, acc []float64) float64 {
	n := len(inv)
	z, t, ap, x, acc = z[:n], t[:n], ap[:n], x[:n], acc[:n]
	var lane [4]float64
	tail := 0.0
	n4 := n - n%4
	for k, v := range inv {
		xk := x[k]
		a := (xk + acc[k]) * v
		z[k] = a - t[k]
		ap[k] = a
		if k < n4 {
			lane[k%4] += xk * a
		} else {
			tail += xk * a
		}
	}
	return hsum(&lane) + tail
}

// hsum returns the sum of v's lanes, (v0 + v1) + (v2 + v3); in the vector
// versions, call it only after ClearAVXUpperBits.
func hsum(v *[4]float64) float64 { return (v[0] + v[1]) + (v[2] + v[3]) }
