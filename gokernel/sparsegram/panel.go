package sparsegram

// The dense panel is a matrix product C = A Bᵀ (or its min-add analogue) of
// the panel columns of X (A, nx×F) and Y (B, ny×F) in float32: integers up
// to 2^24 are exact in float32 and choosePanel keeps every panel sum below
// that, so the float32 kernels return exact counts at twice the SIMD width of
// float64. The layout is the classic GEMM packing: A in slivers of mr rows
// stored k-major ([F][mr]), B in micro-panels of nr columns ([F][nr]), so a
// kernel reads both operands sequentially and keeps the mr×nr output tile in
// registers for all F steps.

// mr is the number of rows of an output tile. Go's register allocator uses
// 15 vector registers (X15 is its zero register), not AVX-512's 32: a 6×32
// tile (12 accumulators, 2 B vectors, a broadcast) spilled to the stack on
// every step and ran at ~20% of the 4×32 tile's speed per multiply-add,
// which fits in 11 registers.
const mr = 4

// maxNR is the widest micro-panel any kernel uses.
const maxNR = 32

// tileKernel computes one mr×nr output tile from a packed A sliver (F·mr
// values) and a packed B micro-panel (F·nr values) into t[r*nr+c].
type tileKernel func(ap, bp []float32, F int, t *[mr * maxNR]float32)

// panel holds the packed panel operands.
type panel struct {
	F      int
	nr     int
	ap, bp []float32
	kern   tileKernel
}

// packA packs the rows of f into slivers of mr; col maps a column to its panel
// index or -1.
func packA(f *Features, col []int32, F int) []float32 {
	ns := (f.Rows() + mr - 1) / mr
	ap := make([]float32, ns*F*mr)
	for i := range f.Rows() {
		s := ap[(i/mr)*F*mr:]
		for k := f.Ptr[i]; k < f.Ptr[i+1]; k++ {
			if p := col[f.Col[k]]; p >= 0 {
				s[int(p)*mr+i%mr] = float32(f.Val[k])
			}
		}
	}
	return ap
}

// packB packs the rows of f into micro-panels of nr.
func packB(f *Features, col []int32, F, nr int) []float32 {
	np := (f.Rows() + nr - 1) / nr
	bp := make([]float32, np*F*nr)
	for j := range f.Rows() {
		s := bp[(j/nr)*F*nr:]
		for k := f.Ptr[j]; k < f.Ptr[j+1]; k++ {
			if p := col[f.Col[k]]; p >= 0 {
				s[int(p)*nr+j%nr] = float32(f.Val[k])
			}
		}
	}
	return bp
}

// prodGo is the portable SumProduct tile kernel (any nr ≤ maxNR).
func prodGo(nr int) tileKernel {
	return func(ap, bp []float32, F int, t *[mr * maxNR]float32) {
		var acc [mr * maxNR]float32
		for k := range F {
			a := ap[k*mr : k*mr+mr]
			b := bp[k*nr : k*nr+nr]
			for r, x := range a {
				if x == 0 {
					continue
				}
				row := acc[r*nr : r*nr+nr]
				for c, y := range b {
					row[c] += x * y
				}
			}
		}
		*t = acc
	}
}

// minGo is the portable SumMin tile kernel.
func minGo(nr int) tileKernel {
	return func(ap, bp []float32, F int, t *[mr * maxNR]float32) {
		var acc [mr * maxNR]float32
		for k := range F {
			a := ap[k*mr : k*mr+mr]
			b := bp[k*nr : k*nr+nr]
			for r, x := range a {
				if x == 0 {
					continue
				}
				row := acc[r*nr : r*nr+nr]
				for c, y := range b {
					row[c] += min(x, y)
				}
			}
		}
		*t = acc
	}
}

// kernelSet says which tile kernels the engine may use: the zero value the
// best the CPU has, the others for tests, so that every kernel the CPU can
// run is tested in a GOEXPERIMENT=simd build.
type kernelSet int

const (
	bestKernels     kernelSet = iota
	noAVX512Kernels           // the AVX2 ones on an AVX-512 machine
	portableKernels
)

// tuning holds the engine's test overrides: an unexported field of Options,
// so that tests set them per call and can run in parallel.
type tuning struct {
	// panel, when panelForced, is the panel width to use (as far as columns allow).
	panel       int
	panelForced bool
	kernels     kernelSet
	// blockHook, when set, is called at the start of every block.
	blockHook func(b int)
}

// kernelFor returns the tile kernel and its nr for s: the SIMD ones when
// available and allowed by k, else the portable ones.
func kernelFor(s Semiring, k kernelSet) (tileKernel, int) {
	if k != portableKernels {
		if kern, nr := simdKernel(s, k != noAVX512Kernels); kern != nil {
			return kern, nr
		}
	}
	if s == SumMin {
		return minGo(16), 16
	}
	return prodGo(16), 16
}

// simdLanes returns the float32 lanes of the SIMD kernels kernelFor uses (1
// for the portable ones).
func simdLanes(k kernelSet) int {
	if k != portableKernels {
		if kern, nr := simdKernel(SumProduct, k != noAVX512Kernels); kern != nil {
			return nr / 2
		}
	}
	return 1
}
