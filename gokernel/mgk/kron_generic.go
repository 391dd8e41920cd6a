//go:build !(goexperiment.simd && amd64)

package mgk

// kronRows is kronRowsGo where the SIMD build is off.
func kronRows(o *kronOperator, dst []float64) { kronRowsGo(o, dst) }

// kronSum is kronSumGo where the SIMD build is off.
func kronSum(dst, fs []float64, k int) { kronSumGo(dst, fs, k) }
