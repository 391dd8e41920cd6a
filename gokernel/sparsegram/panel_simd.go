//go:build goexperiment.simd && amd64

package sparsegram

import "simd/archsimd"

// simdKernel returns the AVX-512 tile kernels (nr = 32, two 16-lane vectors)
// on CPUs with AVX-512, the AVX2 ones (nr = 16, two 8-lane vectors) on CPUs
// with AVX2 and FMA (or AVX-512 ones, when avx512 is false), and nil
// otherwise. Each keeps its 4×nr tile in 8 accumulators; an A value is
// broadcast and combined with both B vectors.
func simdKernel(s Semiring, avx512 bool) (tileKernel, int) {
	switch {
	case archsimd.X86.AVX512() && avx512:
		if s == SumMin {
			return min512, 32
		}
		return prod512, 32
	case archsimd.X86.AVX2() && archsimd.X86.FMA():
		if s == SumMin {
			return min256, 16
		}
		return prod256, 16
	}
	return nil, 0
}

type v16 = archsimd.Float32x16

func ld16(s []float32) v16 { return archsimd.LoadFloat32x16((*[16]float32)(s[:16])) }
func bc16(x float32) v16   { return archsimd.BroadcastFloat32x16(x) }

func prod512(ap, bp []float32, F int, t *[mr * maxNR]float32) {
	z := bc16(0)
	c00, c01, c10, c11 := z, z, z, z
	c20, c21, c30, c31 := z, z, z, z
	ap, bp = ap[:F*mr], bp[:F*32]
	for k := 0; k < F; k++ {
		a := ap[k*mr : k*mr+mr]
		b := bp[k*32 : k*32+32]
		b0, b1 := ld16(b[0:]), ld16(b[16:])
		x := bc16(a[0])
		c00, c01 = x.MulAdd(b0, c00), x.MulAdd(b1, c01)
		x = bc16(a[1])
		c10, c11 = x.MulAdd(b0, c10), x.MulAdd(b1, c11)
		x = bc16(a[2])
		c20, c21 = x.MulAdd(b0, c20), x.MulAdd(b1, c21)
		x = bc16(a[3])
		c30, c31 = x.MulAdd(b0, c30), x.MulAdd(b1, c31)
	}
	store512(t, c00, c01, c10, c11, c20, c21, c30, c31)
}

func min512(ap, bp []float32, F int, t *[mr * maxNR]float32) {
	z := bc16(0)
	c00, c01, c10, c11 := z, z, z, z
	c20, c21, c30, c31 := z, z, z, z
	ap, bp = ap[:F*mr], bp[:F*32]
	for k := 0; k < F; k++ {
		a := ap[k*mr : k*mr+mr]
		b := bp[k*32 : k*32+32]
		b0, b1 := ld16(b[0:]), ld16(b[16:])
		x := bc16(a[0])
		c00, c01 = c00.Add(x.Min(b0)), c01.Add(x.Min(b1))
		x = bc16(a[1])
		c10, c11 = c10.Add(x.Min(b0)), c11.Add(x.Min(b1))
		x = bc16(a[2])
		c20, c21 = c20.Add(x.Min(b0)), c21.Add(x.Min(b1))
		x = bc16(a[3])
		c30, c31 = c30.Add(x.Min(b0)), c31.Add(x.Min(b1))
	}
	store512(t, c00, c01, c10, c11, c20, c21, c30, c31)
}

func store512(t *[mr * maxNR]float32, c ...v16) {
	for i, v := range c {
		v.Store((*[16]float32)(t[i*16 : i*16+16]))
	}
	// Scalar float code after this uses legacy SSE encodings, slow while the
	// upper halves of the vector registers are dirty.
	archsimd.ClearAVXUpperBits()
}

type v8 = archsimd.Float32x8

func ld8(s []float32) v8 { return archsimd.LoadFloat32x8((*[8]float32)(s[:8])) }
func bc8(x float32) v8   { return archsimd.BroadcastFloat32x8(x) }

func prod256(ap, bp []float32, F int, t *[mr * maxNR]float32) {
	z := bc8(0)
	c00, c01, c10, c11 := z, z, z, z
	c20, c21, c30, c31 := z, z, z, z
	ap, bp = ap[:F*mr], bp[:F*16]
	for k := 0; k < F; k++ {
		a := ap[k*mr : k*mr+mr]
		b := bp[k*16 : k*16+16]
		b0, b1 := ld8(b[0:]), ld8(b[8:])
		x := bc8(a[0])
		c00, c01 = x.MulAdd(b0, c00), x.MulAdd(b1, c01)
		x = bc8(a[1])
		c10, c11 = x.MulAdd(b0, c10), x.MulAdd(b1, c11)
		x = bc8(a[2])
		c20, c21 = x.MulAdd(b0, c20), x.MulAdd(b1, c21)
		x = bc8(a[3])
		c30, c31 = x.MulAdd(b0, c30), x.MulAdd(b1, c31)
	}
	store256(t, c00, c01, c10, c11, c20, c21, c30, c31)
}

func min256(ap, bp []float32, F int, t *[mr * maxNR]float32) {
	z := bc8(0)
	c00, c01, c10, c11 := z, z, z, z
	c20, c21, c30, c31 := z, z, z, z
	ap, bp = ap[:F*mr], bp[:F*16]
	for k := 0; k < F; k++ {
		a := ap[k*mr : k*mr+mr]
		b := bp[k*16 : k*16+16]
		b0, b1 := ld8(b[0:]), ld8(b[8:])
		x := bc8(a[0])
		c00, c01 = c00.Add(x.Min(b0)), c01.Add(x.Min(b1))
		x = bc8(a[1])
		c10, c11 = c10.Add(x.Min(b0)), c11.Add(x.Min(b1))
		x = bc8(a[2])
		c20, c21 = c20.Add(x.Min(b0)), c21.Add(x.Min(b1))
		x = bc8(a[3])
		c30, c31 = c30.Add(x.Min(b0)), c31.Add(x.Min(b1))
	}
	store256(t, c00, c01, c10, c11, c20, c21, c30, c31)
}

func store256(t *[mr * maxNR]float32, c ...v8) {
	for i, v := range c {
		v.Store((*[8]float32)(t[i*8 : i*8+8]))
	}
	archsimd.ClearAVXUpperBits()
}
