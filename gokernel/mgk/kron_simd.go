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
	for i := range n {
		lo, hi := g.rowPtr[i], g.rowPtr[i+1]
		d := dst[i*nh : (i+1)*nh]
		for c := 0; c < nh; c += 4 {
			acc := archsimd.BroadcastFloat64x4(0)
			for k := lo; k < hi; k++ {
				j := int(g.col[k])*st + c
				r := archsimd.LoadFloat64x4((*[4]float64)(o.rtot[j : j+4]))
				acc = r.MulAdd(archsimd.BroadcastFloat64x4(o.ca[k]), acc)
				if sl := o.gslot[k]; sl >= 0 {
					j2 := int(sl)*nn + j
					r2 := archsimd.LoadFloat64x4((*[4]float64)(o.rs[j2 : j2+4]))
					acc = r2.MulAdd(archsimd.BroadcastFloat64x4(o.cb[k]), acc)
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
