//go:build goexperiment.simd && amd64

package vec

import "simd/archsimd"

// SIMD reports whether the vector versions are in use: built with
// GOEXPERIMENT=simd and run on a CPU with AVX2 and FMA.
var SIMD = archsimd.X86.AVX2() && archsimd.X86.FMA()

// minSIMD is the shortest vector the AVX2 versions take; below it the set-up
// and the scalar tail cost more than they save.
const minSIMD = 8

// The loops below run four lanes at a time and hand the last len%4 elements to
// the portable versions after ClearAVXUpperBits (VZEROUPPER): Go's scalar
// floating point uses legacy SSE encodings, which are slow while the upper
// halves of the YMM registers are dirty.

type f4 = archsimd.Float64x4

func ld(s []float64, k int) f4 { return archsimd.LoadFloat64x4((*[4]float64)(s[k : k+4])) }

func st(v f4, s []float64, k int) { v.Store((*[4]float64)(s[k : k+4])) }

// hsum returns the sum of v's lanes; call it only after ClearAVXUpperBits.
func hsum(v *[4]float64) float64 { return (v[0] + v[1]) + (v[2] + v[3]) }

func shiftedScaleSIMD(dst, d, s, x []float64) float64 {
	n := len(dst)
	d, s, x = d[:n], s[:n], x[:n]
	acc := archsimd.BroadcastFloat64x4(0)
	k := 0
	for ; k+4 <= n; k += 4 {
		xk := ld(x, k)
		y := ld(d, k).Mul(xk).Sub(ld(s, k).Mul(ld(dst, k)))
		st(y, dst, k)
		acc = xk.MulAdd(y, acc)
	}
	var a [4]float64
	acc.Store(&a)
	archsimd.ClearAVXUpperBits()
	return hsum(&a) + ShiftedScaleGo(dst[k:], d[k:], s[k:], x[k:])
}

func stepSIMD(y, r, p, ap, inv []float64, alpha float64) (rz, rr float64) {
	n := len(y)
	r, p, ap, inv = r[:n], p[:n], ap[:n], inv[:n]
	al := archsimd.BroadcastFloat64x4(alpha)
	zacc := archsimd.BroadcastFloat64x4(0)
	racc := zacc
	k := 0
	for ; k+4 <= n; k += 4 {
		st(ld(p, k).MulAdd(al, ld(y, k)), y, k)
		rk := ld(r, k).Sub(ld(ap, k).Mul(al))
		st(rk, r, k)
		q := rk.Mul(rk)
		zacc = q.MulAdd(ld(inv, k), zacc)
		racc = racc.Add(q)
	}
	var za, ra [4]float64
	zacc.Store(&za)
	racc.Store(&ra)
	archsimd.ClearAVXUpperBits()
	rz, rr = StepGo(y[k:], r[k:], p[k:], ap[k:], inv[k:], alpha)
	return hsum(&za) + rz, hsum(&ra) + rr
}

func directionSIMD(p, t, r, inv, s []float64, beta float64) {
	n := len(p)
	t, r, inv, s = t[:n], r[:n], inv[:n], s[:n]
	b := archsimd.BroadcastFloat64x4(beta)
	k := 0
	for ; k+4 <= n; k += 4 {
		pk := ld(p, k).MulAdd(b, ld(r, k).Mul(ld(inv, k)))
		st(pk, p, k)
		st(pk.Mul(ld(s, k)), t, k)
	}
	archsimd.ClearAVXUpperBits()
	DirectionGo(p[k:], t[k:], r[k:], inv[k:], s[k:], beta)
}

func dotSIMD(a, b []float64) float64 {
	n := len(a)
	b = b[:n]
	acc0 := archsimd.BroadcastFloat64x4(0)
	acc1 := acc0
	k := 0
	for ; k+8 <= n; k += 8 {
		acc0 = ld(a, k).MulAdd(ld(b, k), acc0)
		acc1 = ld(a, k+4).MulAdd(ld(b, k+4), acc1)
	}
	if k+4 <= n {
		acc0 = ld(a, k).MulAdd(ld(b, k), acc0)
		k += 4
	}
	var v [4]float64
	acc0.Add(acc1).Store(&v)
	archsimd.ClearAVXUpperBits()
	return hsum(&v) + DotGo(a[k:], b[k:])
}

func weightedNormSIMD(r, w []float64) float64 {
	n := len(r)
	w = w[:n]
	acc0 := archsimd.BroadcastFloat64x4(0)
	acc1 := acc0
	k := 0
	for ; k+8 <= n; k += 8 {
		r0, r1 := ld(r, k), ld(r, k+4)
		acc0 = r0.Mul(r0).MulAdd(ld(w, k), acc0)
		acc1 = r1.Mul(r1).MulAdd(ld(w, k+4), acc1)
	}
	if k+4 <= n {
		r0 := ld(r, k)
		acc0 = r0.Mul(r0).MulAdd(ld(w, k), acc0)
		k += 4
	}
	var v [4]float64
	acc0.Add(acc1).Store(&v)
	archsimd.ClearAVXUpperBits()
	return hsum(&v) + WeightedNormGo(r[k:], w[k:])
}

// The two-column versions run both columns of an entry in one 128-bit
// vector (VEX-encoded, which leaves the upper halves clean).

type f2 = archsimd.Float64x2

func bc2(x float64) f2 { return archsimd.BroadcastFloat64x2(x) }

func scatter2SIMD(acc, x [][2]float64, c []float64, ends []uint64) {
	ends = ends[:len(c)]
	for f, cf := range c {
		ab := ends[f]
		pa, pb := &acc[uint32(ab)], &acc[ab>>32]
		xa, xb := archsimd.LoadFloat64x2(&x[uint32(ab)]), archsimd.LoadFloat64x2(&x[ab>>32])
		cv := bc2(cf)
		archsimd.LoadFloat64x2(pa).Add(cv.Mul(xb)).Store(pa)
		archsimd.LoadFloat64x2(pb).Add(cv.Mul(xa)).Store(pb)
	}
}

// step2SIMD keeps stepSIMD's four lanes (entries k mod 4) as four two-column
// accumulators and adds them up in hsum's order.
func step2SIMD(y, r, p, ap, inv [][2]float64, alpha1, alpha2 float64) (rz1, rz2 float64) {
	n := len(inv)
	y, r, p, ap = y[:n], r[:n], p[:n], ap[:n]
	al := bc2(alpha1).SetElem(1, alpha2)
	// Entry k of Step's loop for both columns, into accumulator z.
	one := func(k int, z f2) f2 {
		yk, rk := &y[k], &r[k]
		archsimd.LoadFloat64x2(&p[k]).MulAdd(al, archsimd.LoadFloat64x2(yk)).Store(yk)
		rv := archsimd.LoadFloat64x2(rk).Sub(archsimd.LoadFloat64x2(&ap[k]).Mul(al))
		rv.Store(rk)
		return rv.Mul(rv).MulAdd(archsimd.LoadFloat64x2(&inv[k]), z)
	}
	z0 := bc2(0)
	z1, z2, z3 := z0, z0, z0
	k := 0
	for ; k+4 <= n; k += 4 {
		z0 = one(k, z0)
		z1 = one(k+1, z1)
		z2 = one(k+2, z2)
		z3 = one(k+3, z3)
	}
	var v0, v1, v2, v3 [2]float64
	z0.Store(&v0)
	z1.Store(&v1)
	z2.Store(&v2)
	z3.Store(&v3)
	archsimd.ClearAVXUpperBits()
	t1, t2 := Step2Go(y[k:], r[k:], p[k:], ap[k:], inv[k:], alpha1, alpha2)
	return ((v0[0] + v1[0]) + (v2[0] + v3[0])) + t1, ((v0[1] + v1[1]) + (v2[1] + v3[1])) + t2
}

func sweepBack2SIMD(t, x, r, dm, inv, acc [][2]float64, beta1, beta2 float64) {
	n := len(dm)
	t, x, r, inv, acc = t[:n], x[:n], r[:n], inv[:n], acc[:n]
	b := bc2(beta1).SetElem(1, beta2)
	for k := range dm {
		xk := archsimd.LoadFloat64x2(&r[k]).Mul(archsimd.LoadFloat64x2(&dm[k])).Add(b.Mul(archsimd.LoadFloat64x2(&x[k])))
		xk.Store(&x[k])
		xk.Add(archsimd.LoadFloat64x2(&acc[k])).Mul(archsimd.LoadFloat64x2(&inv[k])).Store(&t[k])
	}
}

func sweepSolve2SIMD(t, x, inv, acc [][2]float64) {
	n := len(inv)
	t, x, acc = t[:n], x[:n], acc[:n]
	for k := range inv {
		archsimd.LoadFloat64x2(&x[k]).Add(archsimd.LoadFloat64x2(&acc[k])).Mul(archsimd.LoadFloat64x2(&inv[k])).Store(&t[k])
	}
}

func sweepForward2SIMD(z, t, ap, x, inv, acc [][2]float64) (dot1, dot2 float64) {
	n := len(inv)
	z, t, ap, x, acc = z[:n], t[:n], ap[:n], x[:n], acc[:n]
	dot := bc2(0)
	for k := range inv {
		xk := archsimd.LoadFloat64x2(&x[k])
		a := xk.Add(archsimd.LoadFloat64x2(&acc[k])).Mul(archsimd.LoadFloat64x2(&inv[k]))
		a.Sub(archsimd.LoadFloat64x2(&t[k])).Store(&z[k])
		a.Store(&ap[k])
		dot = dot.Add(xk.Mul(a))
	}
	var d [2]float64
	dot.Store(&d)
	return d[0], d[1]
}
