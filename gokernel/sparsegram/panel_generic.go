//go:build !(goexperiment.simd && amd64)

package sparsegram

// simdKernel returns no kernel: this build has no SIMD kernels.
func simdKernel(Semiring, bool) (tileKernel, int) { return nil, 0 }
