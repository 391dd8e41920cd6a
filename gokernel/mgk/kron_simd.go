//go:build goexperiment.simd && amd64

package mgk

import (
	"simd/archsimd"

	"github.com/graphgram/graphgram/gokernel/vec"
)

// kronRows is kronRowsGo four lanes at a time, each chunk of a row of Y
// accumulated in a register over the row's entries of A (rtot and rs have
// padded rows, so every load is a whole vector).
func kronRows(o *kronOperator, dst []float64) {
	if !vec.SIMD || o.nh < 4 {
		kronRowsGo(o, dst)
		return
	}
	n, nh, st := o.n, o.nh, o.stride
	nn := n * st
	g := o.g
	rp, col := g.rowPtr[:n+1], g.col
	ca, cb, gslot := o.ca[:len(col)], o.cb[:len(col)], o.gslot[:len(col)]
	rtot, rs := o.rtot[:nn], o.rs
	for i := range n {
		lo, hi := int(rp[i]), int(rp[i+1])
		d := dst[i*nh : (i+1)*nh]
		for c := 0; c < nh; c += 4 {
			acc := archsimd.BroadcastFloat64x4(0)
			for k := lo; k < hi; k++ {
				j := int(col[k])*st + c
				acc = archsimd.LoadFloat64x4((*[4]float64)(rtot[j:j+4])).MulAdd(archsimd.BroadcastFloat64x4(ca[k]), acc)
				if sl := int(gslot[k]); sl >= 0 {
					j2 := sl*nn + j
					acc = archsimd.LoadFloat64x4((*[4]float64)(rs[j2:j2+4])).MulAdd(archsimd.BroadcastFloat64x4(cb[k]), acc)
				}
			}
			if c+4 <= nh {
				acc.Store((*[4]float64)(d[c : c+4]))
			} else {
				acc.StoreSlicePart(d[c:])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}

// kronSum is kronSumGo four lanes at a time (len(dst) is a multiple of 4:
// rows are padded to the stride).
func kronSum(dst, fs []float64, k int) {
	nn := len(dst)
	if !vec.SIMD || nn%4 != 0 {
		kronSumGo(dst, fs, k)
		return
	}
	fs = fs[:k*nn]
	for c := 0; c < nn; c += 4 {
		acc := archsimd.LoadFloat64x4((*[4]float64)(fs[c : c+4]))
		for sl := 1; sl < k; sl++ {
			acc = acc.Add(archsimd.LoadFloat64x4((*[4]float64)(fs[sl*nn+c : sl*nn+c+4])))
		}
		acc.Store((*[4]float64)(dst[c : c+4]))
	}
	archsimd.ClearAVXUpperBits()
}
