//go:build goexperiment.simd && amd64

package vec

import (
	"simd/archsimd"
	"unsafe"
)

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

// The two-column versions take two entries, both columns of each, per
// 256-bit vector, through a flat view of the [][2]float64 (entry k's columns
// at 2k and 2k+1); the sweeps take an odd last entry in a 128-bit vector
// (they run once per block of a sweep, on about 20 entries: a call of the
// portable version for the last one cost more than the loop).

// flat returns x's numbers as one slice, entry k's columns at 2k and 2k+1.
func flat(x [][2]float64) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(x))), 2*len(x))
}

// pair2 returns (a1, a2, a1, a2): a1 for column 1 and a2 for column 2 of two
// entries.
func pair2(a1, a2 float64) f4 {
	v := archsimd.BroadcastFloat64x2(a1).SetElem(1, a2)
	return archsimd.BroadcastFloat64x4(0).SetLo(v).SetHi(v)
}

// step2SIMD keeps stepSIMD's four lanes (entries k mod 4) for both columns
// in two accumulators, entries 0, 1 mod 4 in one and 2, 3 in the other, and
// adds them up in hsum's order. With x non-nil it also steps x along t in
// the same loop (Step2Both), as it steps y along p.
func step2SIMD(y, r, p, ap, inv, x, t [][2]float64, alpha1, alpha2 float64) (rz1, rz2 float64) {
	n := len(inv)
	fy, fr, fp, fap, finv := flat(y[:n]), flat(r[:n]), flat(p[:n]), flat(ap[:n]), flat(inv)
	var fx, ft []float64
	if x != nil {
		fx, ft = flat(x[:n]), flat(t[:n])
	}
	al := pair2(alpha1, alpha2)
	// Entries j/2 and j/2+1 of Step's loop for both columns, into z.
	two := func(j int, z f4) f4 {
		st(ld(fp, j).MulAdd(al, ld(fy, j)), fy, j)
		if fx != nil {
			st(ld(ft, j).MulAdd(al, ld(fx, j)), fx, j)
		}
		rv := ld(fr, j).Sub(ld(fap, j).Mul(al))
		st(rv, fr, j)
		return rv.Mul(rv).MulAdd(ld(finv, j), z)
	}
	z01 := archsimd.BroadcastFloat64x4(0)
	z23 := z01
	k := 0
	for ; k+4 <= n; k += 4 {
		z01 = two(2*k, z01)
		z23 = two(2*k+4, z23)
	}
	var v01, v23 [4]float64
	z01.Store(&v01)
	z23.Store(&v23)
	archsimd.ClearAVXUpperBits()
	var t1, t2 float64
	if x != nil {
		t1, t2 = Step2BothGo(y[k:], r[k:], p[k:], ap[k:], inv[k:], x[k:], t[k:], alpha1, alpha2)
	} else {
		t1, t2 = Step2Go(y[k:], r[k:], p[k:], ap[k:], inv[k:], alpha1, alpha2)
	}
	return ((v01[0] + v01[2]) + (v23[0] + v23[2])) + t1, ((v01[1] + v01[3]) + (v23[1] + v23[3])) + t2
}

// weightedNorm2SIMD keeps weightedNormSIMD's lanes for both columns:
// entries k mod 8 < 4 (its first accumulator, lane k mod 4) in a01 (lanes 0,
// 1) and a23 (lanes 2, 3), the others in b01 and b23, two entries of both
// columns per vector.
func weightedNorm2SIMD(r, w [][2]float64) (float64, float64) {
	n := len(w)
	fr, fw := flat(r[:n]), flat(w)
	sq := func(j int, acc f4) f4 {
		x := ld(fr, j)
		return x.Mul(x).MulAdd(ld(fw, j), acc)
	}
	a01 := archsimd.BroadcastFloat64x4(0)
	a23, b01, b23 := a01, a01, a01
	k := 0
	for ; k+8 <= n; k += 8 {
		a01, a23 = sq(2*k, a01), sq(2*k+4, a23)
		b01, b23 = sq(2*k+8, b01), sq(2*k+12, b23)
	}
	if k+4 <= n {
		a01, a23 = sq(2*k, a01), sq(2*k+4, a23)
		k += 4
	}
	var v01, v23 [4]float64
	a01.Add(b01).Store(&v01)
	a23.Add(b23).Store(&v23)
	archsimd.ClearAVXUpperBits()
	t1, t2 := WeightedNorm2Go(r[k:], w[k:])
	c1 := [4]float64{v01[0], v01[2], v23[0], v23[2]}
	c2 := [4]float64{v01[1], v01[3], v23[1], v23[3]}
	return hsum(&c1) + t1, hsum(&c2) + t2
}

func sweepBack2SIMD(t, x, r, dm, inv, acc [][2]float64, beta1, beta2 float64) {
	n := len(dm)
	ft, fx, fr, fdm, finv, facc := flat(t[:n]), flat(x[:n]), flat(r[:n]), flat(dm), flat(inv[:n]), flat(acc[:n])
	b := pair2(beta1, beta2)
	j := 0
	for ; j+4 <= len(fdm); j += 4 {
		xk := ld(fr, j).Mul(ld(fdm, j)).Add(b.Mul(ld(fx, j)))
		st(xk, fx, j)
		st(xk.Add(ld(facc, j)).Mul(ld(finv, j)), ft, j)
	}
	if k := j / 2; k < n {
		xk := archsimd.LoadFloat64x2(&r[k]).Mul(archsimd.LoadFloat64x2(&dm[k])).Add(b.GetLo().Mul(archsimd.LoadFloat64x2(&x[k])))
		xk.Store(&x[k])
		xk.Add(archsimd.LoadFloat64x2(&acc[k])).Mul(archsimd.LoadFloat64x2(&inv[k])).Store(&t[k])
	}
	archsimd.ClearAVXUpperBits()
}

func sweepSolve2SIMD(t, x, inv, acc [][2]float64) {
	n := len(inv)
	ft, fx, finv, facc := flat(t[:n]), flat(x[:n]), flat(inv), flat(acc[:n])
	j := 0
	for ; j+4 <= len(finv); j += 4 {
		st(ld(fx, j).Add(ld(facc, j)).Mul(ld(finv, j)), ft, j)
	}
	if k := j / 2; k < n {
		archsimd.LoadFloat64x2(&x[k]).Add(archsimd.LoadFloat64x2(&acc[k])).Mul(archsimd.LoadFloat64x2(&inv[k])).Store(&t[k])
	}
	archsimd.ClearAVXUpperBits()
}

// sweepForward2SIMD adds each vector's products to the dots entry by entry
// (its lower half, then its upper), the one-column loop's order.
func sweepForward2SIMD(z, t, ap, x, inv, acc [][2]float64) (dot1, dot2 float64) {
	n := len(inv)
	fz, ft, fap, fx, finv, facc := flat(z[:n]), flat(t[:n]), flat(ap[:n]), flat(x[:n]), flat(inv), flat(acc[:n])
	dot := archsimd.BroadcastFloat64x2(0)
	j := 0
	for ; j+4 <= len(finv); j += 4 {
		xk := ld(fx, j)
		a := xk.Add(ld(facc, j)).Mul(ld(finv, j))
		st(a.Sub(ld(ft, j)), fz, j)
		st(a, fap, j)
		p := xk.Mul(a)
		dot = dot.Add(p.GetLo()).Add(p.GetHi())
	}
	if k := j / 2; k < n {
		xk := archsimd.LoadFloat64x2(&x[k])
		a := xk.Add(archsimd.LoadFloat64x2(&acc[k])).Mul(archsimd.LoadFloat64x2(&inv[k]))
		a.Sub(archsimd.LoadFloat64x2(&t[k])).Store(&z[k])
		a.Store(&ap[k])
		dot = dot.Add(xk.Mul(a))
	}
	var d [2]float64
	dot.Store(&d)
	archsimd.ClearAVXUpperBits()
	return d[0], d[1]
}

func squaredDistancesSIMD(dst, x, ys []float64) {
	d := len(x)
	ys = ys[:len(dst)*d]
	for j := range dst {
		y := ys[j*d : j*d+d]
		acc0 := archsimd.BroadcastFloat64x4(0)
		acc1 := acc0
		k := 0
		for ; k+8 <= d; k += 8 {
			t0 := ld(x, k).Sub(ld(y, k))
			t1 := ld(x, k+4).Sub(ld(y, k+4))
			acc0 = acc0.Add(t0.Mul(t0))
			acc1 = acc1.Add(t1.Mul(t1))
		}
		if k+4 <= d {
			t0 := ld(x, k).Sub(ld(y, k))
			acc0 = acc0.Add(t0.Mul(t0))
			k += 4
		}
		var v [4]float64
		acc0.Add(acc1).Store(&v)
		archsimd.ClearAVXUpperBits()
		s := (v[0] + v[1]) + (v[2] + v[3])
		for ; k < d; k++ {
			t := x[k] - y[k]
			s += float64(t * t) // float64(): no fused multiply-add (GOAMD64=v3)
		}
		dst[j] = s
	}
}
