// Package vec holds the fused vector loops of the conjugate-gradient solvers:
// each pass over the vectors does all the arithmetic one CG step needs from
// them, so that a step reads every vector as few times as possible.
//
// Every function has a portable Go version (the *Go names), which is the
// reference; builds with GOEXPERIMENT=simd on amd64 route the exported
// functions to AVX2 versions when the CPU has AVX2 and FMA (see SIMD). The two
// agree to rounding: the vector versions sum in a different order.
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
