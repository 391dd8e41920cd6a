//go:build !(goexperiment.simd && amd64)

package octile

// SIMD reports whether the vector kernels are in use; never in this build.
const SIMD = false

func gemv8(y *[8]float64, alpha float64, m *[64]float64, x *[8]float64) { gemv8Go(y, alpha, m, x) }
func mv8(z *[8]float64, m *[64]float64, x *[8]float64)                  { mv8Go(z, m, x) }
func axpy8(y *[8]float64, a float64, z *[8]float64)                     { axpy8Go(y, a, z) }
func axpy(a float64, x, y []float64)                                    { axpyGo(a, x, y) }
