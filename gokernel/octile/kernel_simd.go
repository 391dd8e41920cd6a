//go:build goexperiment.simd && amd64

package octile

import "simd/archsimd"

// SIMD reports whether the vector kernels are in use: built with
// GOEXPERIMENT=simd and run on a CPU with AVX2 and FMA.
var SIMD = archsimd.X86.AVX2() && archsimd.X86.FMA()

// Each vector kernel ends with ClearAVXUpperBits (VZEROUPPER): Go's scalar
// floating point uses legacy SSE encodings, and running them with dirty upper
// YMM halves cost about 1 µs per call on the development machine. For the same
// reason the kernels avoid scalar loads between vector instructions, which
// rules out broadcasting x[c] from memory and favours the row-major,
// horizontal-add formulation below.

func gemv8(y *[8]float64, alpha float64, m *[64]float64, x *[8]float64) {
	if SIMD {
		gemv8SIMD(y, alpha, m, x)
		return
	}
	gemv8Go(y, alpha, m, x)
}

func mv8(z *[8]float64, m *[64]float64, x *[8]float64) {
	if SIMD {
		mv8SIMD(z, m, x)
		return
	}
	mv8Go(z, m, x)
}

func axpy8(y *[8]float64, a float64, z *[8]float64) {
	if SIMD {
		axpy8SIMD(y, a, z)
		return
	}
	axpy8Go(y, a, z)
}

func axpy(a float64, x, y []float64) {
	if SIMD {
		axpySIMD(a, x, y)
		return
	}
	axpyGo(a, x, y)
}

// row4 returns the four row sums (M·x)[r0..r0+3] of a row-major 8×8 M: per row
// a 4-wide multiply and fused multiply-add, then horizontal adds and a lane
// swap to gather the four sums in one vector.
func row4(m *[64]float64, r0 int, xlo, xhi archsimd.Float64x4) archsimd.Float64x4 {
	p := func(r int) archsimd.Float64x4 {
		lo := archsimd.LoadFloat64x4((*[4]float64)(m[8*r : 8*r+4]))
		hi := archsimd.LoadFloat64x4((*[4]float64)(m[8*r+4 : 8*r+8]))
		return hi.Mul(xhi).Add(lo.Mul(xlo))
	}
	// h01 = [p0₀+p0₁, p1₀+p1₁, p0₂+p0₃, p1₂+p1₃], likewise h23.
	h01 := p(r0).AddPairsGrouped(p(r0 + 1))
	h23 := p(r0 + 2).AddPairsGrouped(p(r0 + 3))
	// Low lanes of both plus high lanes of both: [s0, s1, s2, s3].
	return h01.Select128FromPair(0, 2, h23).Add(h01.Select128FromPair(1, 3, h23))
}

// gemv8SIMD is gemv8Go on 4-wide vectors.
func gemv8SIMD(y *[8]float64, alpha float64, m *[64]float64, x *[8]float64) {
	xlo := archsimd.LoadFloat64x4((*[4]float64)(x[0:4]))
	xhi := archsimd.LoadFloat64x4((*[4]float64)(x[4:8]))
	a := archsimd.BroadcastFloat64x4(alpha)
	ylo := archsimd.LoadFloat64x4((*[4]float64)(y[0:4]))
	yhi := archsimd.LoadFloat64x4((*[4]float64)(y[4:8]))
	row4(m, 0, xlo, xhi).MulAdd(a, ylo).Store((*[4]float64)(y[0:4]))
	row4(m, 4, xlo, xhi).MulAdd(a, yhi).Store((*[4]float64)(y[4:8]))
	archsimd.ClearAVXUpperBits()
}

// mv8SIMD is mv8Go on 4-wide vectors.
func mv8SIMD(z *[8]float64, m *[64]float64, x *[8]float64) {
	xlo := archsimd.LoadFloat64x4((*[4]float64)(x[0:4]))
	xhi := archsimd.LoadFloat64x4((*[4]float64)(x[4:8]))
	row4(m, 0, xlo, xhi).Store((*[4]float64)(z[0:4]))
	row4(m, 4, xlo, xhi).Store((*[4]float64)(z[4:8]))
	archsimd.ClearAVXUpperBits()
}

// axpy8SIMD is axpy8Go on two 4-wide vectors.
func axpy8SIMD(y *[8]float64, a float64, z *[8]float64) {
	b := archsimd.BroadcastFloat64x4(a)
	zlo := archsimd.LoadFloat64x4((*[4]float64)(z[0:4]))
	zhi := archsimd.LoadFloat64x4((*[4]float64)(z[4:8]))
	zlo.MulAdd(b, archsimd.LoadFloat64x4((*[4]float64)(y[0:4]))).Store((*[4]float64)(y[0:4]))
	zhi.MulAdd(b, archsimd.LoadFloat64x4((*[4]float64)(y[4:8]))).Store((*[4]float64)(y[4:8]))
	archsimd.ClearAVXUpperBits()
}

// axpySIMD is axpyGo four elements at a time.
func axpySIMD(a float64, x, y []float64) {
	y = y[:len(x)]
	b := archsimd.BroadcastFloat64x4(a)
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := archsimd.LoadFloat64x4((*[4]float64)(x[i : i+4]))
		w := archsimd.LoadFloat64x4((*[4]float64)(y[i : i+4]))
		v.MulAdd(b, w).Store((*[4]float64)(y[i : i+4]))
	}
	archsimd.ClearAVXUpperBits()
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}
