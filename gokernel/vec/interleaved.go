package vec

// Two columns side by side.
//
// The functions with a 2 suffix work on two vectors stored side by side, as
// one [][2]float64 (entry k of column c at [k][c]), and take their per-entry
// weights (dm, inv) the same way, the same weight twice: one vector load then
// serves both columns. For each column they do exactly the arithmetic of the
// one-column code they stand for, operation for operation and in the same
// order, so that a solve run beside another gives, bit for bit, what it gives
// alone: Step2 is Step on each column (and Step2Go StepGo), WeightedNorm2
// WeightedNorm (and WeightedNorm2Go WeightedNormGo), and the Sweep
// functions and Blocks2.Scatter (scatter.go) are the loops of the SGS sweeps
// of package mgk, written there for one column (the tests restate them).

// SweepBack2 sets, in both columns, x = r∘dm + beta·x (beta1 and beta2)
// and then t = (x + acc)∘inv: a block of the backward sweep fused with CG's
// direction update.
func SweepBack2(t, x, r, dm, inv, acc [][2]float64, beta1, beta2 float64) {
	if SIMD {
		sweepBack2SIMD(t, x, r, dm, inv, acc, beta1, beta2)
		return
	}
	SweepBack2Go(t, x, r, dm, inv, acc, beta1, beta2)
}

// SweepBack2Go is the portable SweepBack2.
func SweepBack2Go(t, x, r, dm, inv, acc [][2]float64, beta1, beta2 float64) {
	n := len(dm)
	t, x, r, inv, acc = t[:n], x[:n], r[:n], inv[:n], acc[:n]
	for k, d := range dm {
		x1 := r[k][0]*d[0] + beta1*x[k][0]
		x2 := r[k][1]*d[1] + beta2*x[k][1]
		x[k][0], x[k][1] = x1, x2
		t[k][0], t[k][1] = (x1+acc[k][0])*inv[k][0], (x2+acc[k][1])*inv[k][1]
	}
}

// SweepSolve2 sets t = (x + acc)∘inv in both columns.
func SweepSolve2(t, x, inv, acc [][2]float64) {
	if SIMD {
		sweepSolve2SIMD(t, x, inv, acc)
		return
	}
	SweepSolve2Go(t, x, inv, acc)
}

// SweepSolve2Go is the portable SweepSolve2.
func SweepSolve2Go(t, x, inv, acc [][2]float64) {
	n := len(inv)
	t, x, acc = t[:n], x[:n], acc[:n]
	for k, v := range inv {
		t[k][0], t[k][1] = (x[k][0]+acc[k][0])*v[0], (x[k][1]+acc[k][1])*v[1]
	}
}

// SweepForward2 sets, in both columns, a = (x + acc)∘inv, then z = a − t and
// ap = a, and returns both columns' xᵀa, each summed in entry order. z may
// be t.
func SweepForward2(z, t, ap, x, inv, acc [][2]float64) (dot1, dot2 float64) {
	if SIMD {
		return sweepForward2SIMD(z, t, ap, x, inv, acc)
	}
	return SweepForward2Go(z, t, ap, x, inv, acc)
}

// SweepForward2Go is the portable SweepForward2.
func SweepForward2Go(z, t, ap, x, inv, acc [][2]float64) (dot1, dot2 float64) {
	n := len(inv)
	z, t, ap, x, acc = z[:n], t[:n], ap[:n], x[:n], acc[:n]
	for k, v := range inv {
		x1, x2 := x[k][0], x[k][1]
		a1 := (x1 + acc[k][0]) * v[0]
		a2 := (x2 + acc[k][1]) * v[1]
		z[k][0], z[k][1] = a1-t[k][0], a2-t[k][1]
		ap[k][0], ap[k][1] = a1, a2
		dot1 += x1 * a1
		dot2 += x2 * a2
	}
	return dot1, dot2
}

// Step2 is Step on two columns with step lengths alpha1 and alpha2: it
// returns each column's rᵀ(inv∘r), with the bits Step gives
// for that column alone.
func Step2(y, r, p, ap, inv [][2]float64, alpha1, alpha2 float64) (rz1, rz2 float64) {
	if SIMD && len(inv) >= minSIMD {
		return step2SIMD(y, r, p, ap, inv, nil, nil, alpha1, alpha2)
	}
	return Step2Go(y, r, p, ap, inv, alpha1, alpha2)
}

// Step2Go is the portable Step2: StepGo on each column.
func Step2Go(y, r, p, ap, inv [][2]float64, alpha1, alpha2 float64) (rz1, rz2 float64) {
	n := len(inv)
	y, r, p, ap = y[:n], r[:n], p[:n], ap[:n]
	for k, w := range inv {
		y[k][0] += alpha1 * p[k][0]
		y[k][1] += alpha2 * p[k][1]
		r1 := r[k][0] - alpha1*ap[k][0]
		r2 := r[k][1] - alpha2*ap[k][1]
		r[k][0], r[k][1] = r1, r2
		rz1 += r1 * r1 * w[0]
		rz2 += r2 * r2 * w[1]
	}
	return rz1, rz2
}

// Step2Both is Step2 on y with directions p, which it equals bit for bit (y,
// r and the sums), and besides it steps x along t with the same lengths:
// x += alpha∘t, each column as Step2 steps y. One pass serves a solve that
// keeps its iterate in two coordinates (package mgk's lockstep).
func Step2Both(y, r, p, ap, inv, x, t [][2]float64, alpha1, alpha2 float64) (rz1, rz2 float64) {
	if SIMD && len(inv) >= minSIMD {
		return step2SIMD(y, r, p, ap, inv, x, t, alpha1, alpha2)
	}
	return Step2BothGo(y, r, p, ap, inv, x, t, alpha1, alpha2)
}

// Step2BothGo is the portable Step2Both.
func Step2BothGo(y, r, p, ap, inv, x, t [][2]float64, alpha1, alpha2 float64) (rz1, rz2 float64) {
	n := len(inv)
	x, t = x[:n], t[:n]
	for k := range x {
		x[k][0] += alpha1 * t[k][0]
		x[k][1] += alpha2 * t[k][1]
	}
	return Step2Go(y, r, p, ap, inv, alpha1, alpha2)
}

// WeightedNorm2 is WeightedNorm on two columns: each column's Σ r²·w, with
// the bits WeightedNorm gives for that column alone.
func WeightedNorm2(r, w [][2]float64) (float64, float64) {
	if SIMD && len(w) >= minSIMD {
		return weightedNorm2SIMD(r, w)
	}
	return WeightedNorm2Go(r, w)
}

// WeightedNorm2Go is the portable WeightedNorm2: WeightedNormGo on each column.
func WeightedNorm2Go(r, w [][2]float64) (s1, s2 float64) {
	r = r[:len(w)]
	for k, v := range w {
		s1 += r[k][0] * r[k][0] * v[0]
		s2 += r[k][1] * r[k][1] * v[1]
	}
	return s1, s2
}
