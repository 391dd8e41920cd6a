// Package vec holds the fused vector loops of the conjugate-gradient solvers:
// each pass over the vectors does all the arithmetic one CG step needs from
// them, so that a step reads every vector as few times as possible; and the
// squared Euclidean distances of optimal-transport ground costs.
//
// Every function has a portable Go version (the *Go names), which is the
// reference; builds with GOEXPERIMENT=simd on amd64 route the exported
// functions to AVX2 versions when the CPU has AVX2 and FMA (see SIMD). The two
// agree to rounding: the vector versions sum in a different order. The
// exception is SquaredDistances, whose versions sum in the same order without
// fused multiply-adds and so agree bit for bit.
package vec

// ShiftedScale sets dst = d∘x − s∘dst and returns xᵀdst: the finish of a
// mat-vec with D − S W S once dst holds W(S x).
func ShiftedScale(dst, d, s, x []float64) float64 {
	if SIMD && len(dst) >= minSIMD {
		return shiftedScaleSIMD(dst, d, s, x)
	}
	return ShiftedScaleGo(dst, d, s, x)
}

// ShiftedScaleGo is the portable ShiftedScale.
func ShiftedScaleGo(dst, d, s, x []float64) float64 {
	d, s, x = d[:len(dst)], s[:len(dst)], x[:len(dst)]
	dot := 0.0
	for k, xk := range x {
		y := d[k]*xk - s[k]*dst[k]
		dst[k] = y
		dot += xk * y
	}
	return dot
}

// Step does the update of a preconditioned CG step with step length alpha:
// y += alpha·p, r −= alpha·ap, and returns rᵀ(inv∘r) and rᵀr for the new r.
func Step(y, r, p, ap, inv []float64, alpha float64) (rz, rr float64) {
	if SIMD && len(y) >= minSIMD {
		return stepSIMD(y, r, p, ap, inv, alpha)
	}
	return StepGo(y, r, p, ap, inv, alpha)
}

// StepGo is the portable Step.
func StepGo(y, r, p, ap, inv []float64, alpha float64) (rz, rr float64) {
	r, p, ap, inv = r[:len(y)], p[:len(y)], ap[:len(y)], inv[:len(y)]
	for k := range y {
		y[k] += alpha * p[k]
		rk := r[k] - alpha*ap[k]
		r[k] = rk
		q := rk * rk
		rz += q * inv[k]
		rr += q
	}
	return rz, rr
}

// Direction sets the next search direction p = inv∘r + beta·p and, in the same
// pass, t = s∘p, the scaled vector the next mat-vec with S W S starts from.
func Direction(p, t, r, inv, s []float64, beta float64) {
	if SIMD && len(p) >= minSIMD {
		directionSIMD(p, t, r, inv, s, beta)
		return
	}
	DirectionGo(p, t, r, inv, s, beta)
}

// DirectionGo is the portable Direction.
func DirectionGo(p, t, r, inv, s []float64, beta float64) {
	t, r, inv, s = t[:len(p)], r[:len(p)], inv[:len(p)], s[:len(p)]
	for k := range p {
		pk := r[k]*inv[k] + beta*p[k]
		p[k] = pk
		t[k] = s[k] * pk
	}
}

// Dot returns aᵀb.
func Dot(a, b []float64) float64 {
	if SIMD && len(a) >= minSIMD {
		return dotSIMD(a, b)
	}
	return DotGo(a, b)
}

// DotGo is the portable Dot.
func DotGo(a, b []float64) float64 {
	b = b[:len(a)]
	s := 0.0
	for k, x := range a {
		s += x * b[k]
	}
	return s
}

// WeightedNorm returns Σ w_k r_k², the preconditioned residual norm of CG.
func WeightedNorm(r, w []float64) float64 {
	if SIMD && len(r) >= minSIMD {
		return weightedNormSIMD(r, w)
	}
	return WeightedNormGo(r, w)
}

// WeightedNormGo is the portable WeightedNorm.
func WeightedNormGo(r, w []float64) float64 {
	w = w[:len(r)]
	s := 0.0
	for k, x := range r {
		s += x * x * w[k]
	}
	return s
}

// SquaredDistances sets dst[j] = Σ_k (x_k − y_jk)² for the rows y_j of ys,
// len(x) values each (ys holds at least len(dst) rows): the ground costs of
// optimal transport. Value k of the first len(x) − len(x) mod 4 goes to lane
// k mod 8, the lanes are added as ((l0 + l4) + (l1 + l5)) + ((l2 + l6) +
// (l3 + l7)), and the last len(x) mod 4 squares in order; both versions
// compute exactly this, so that they agree bit for bit.
func SquaredDistances(dst, x, ys []float64) {
	if SIMD && len(x) >= minSIMD {
		squaredDistancesSIMD(dst, x, ys)
		return
	}
	SquaredDistancesGo(dst, x, ys)
}

// SquaredDistancesGo is the portable SquaredDistances.
func SquaredDistancesGo(dst, x, ys []float64) {
	d := len(x)
	ys = ys[:len(dst)*d]
	for j := range dst {
		y := ys[j*d : j*d+d]
		var l0, l1, l2, l3, l4, l5, l6, l7 float64
		k := 0
		for ; k+8 <= d; k += 8 {
			t0, t1, t2, t3 := x[k]-y[k], x[k+1]-y[k+1], x[k+2]-y[k+2], x[k+3]-y[k+3]
			t4, t5, t6, t7 := x[k+4]-y[k+4], x[k+5]-y[k+5], x[k+6]-y[k+6], x[k+7]-y[k+7]
			l0, l1, l2, l3 = l0+float64(t0*t0), l1+float64(t1*t1), l2+float64(t2*t2), l3+float64(t3*t3)
			l4, l5, l6, l7 = l4+float64(t4*t4), l5+float64(t5*t5), l6+float64(t6*t6), l7+float64(t7*t7)
		}
		if k+4 <= d {
			t0, t1, t2, t3 := x[k]-y[k], x[k+1]-y[k+1], x[k+2]-y[k+2], x[k+3]-y[k+3]
			l0, l1, l2, l3 = l0+float64(t0*t0), l1+float64(t1*t1), l2+float64(t2*t2), l3+float64(t3*t3)
			k += 4
		}
		s := ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7))
		for ; k < d; k++ {
			t := x[k] - y[k]
			s += float64(t * t) // float64(): no fused multiply-add (GOAMD64=v3)
		}
		dst[j] = s
	}
}
