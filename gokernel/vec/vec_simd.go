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
