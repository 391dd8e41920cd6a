//go:build !(goexperiment.simd && amd64)

package vec

// SIMD reports whether the vector versions are in use; never in this build.
const SIMD = false

const minSIMD = 0

func shiftedScaleSIMD(dst, d, s, x []float64) float64 { return ShiftedScaleGo(dst, d, s, x) }
func stepSIMD(y, r, p, ap, inv []float64, alpha float64) (float64, float64) {
	return StepGo(y, r, p, ap, inv, alpha)
}
func directionSIMD(p, t, r, inv, s []float64, beta float64)  { DirectionGo(p, t, r, inv, s, beta) }
func dotSIMD(a, b []float64) float64                         { return DotGo(a, b) }
func squaredDistancesSIMD(dst, x, ys []float64)              { SquaredDistancesGo(dst, x, ys) }
func weightedNormSIMD(r, w []float64) float64                { return WeightedNormGo(r, w) }
func weightedNorm2SIMD(r, w [][2]float64) (float64, float64) { return WeightedNorm2Go(r, w) }
func step2SIMD(y, r, p, ap, inv, x, t [][2]float64, alpha1, alpha2 float64) (float64, float64) {
	if x != nil {
		return Step2BothGo(y, r, p, ap, inv, x, t, alpha1, alpha2)
	}
	return Step2Go(y, r, p, ap, inv, alpha1, alpha2)
}
func sweepBack2SIMD(t, x, r, dm, inv, acc [][2]float64, beta1, beta2 float64) {
	SweepBack2Go(t, x, r, dm, inv, acc, beta1, beta2)
}
func sweepSolve2SIMD(t, x, inv, acc [][2]float64) {
	SweepSolve2Go(t, x, inv, acc)
}
func sweepForward2SIMD(z, t, ap, x, inv, acc [][2]float64) (float64, float64) {
	return SweepForward2Go(z, t, ap, x, inv, acc)
}
