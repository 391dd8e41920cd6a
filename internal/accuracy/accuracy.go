// Package accuracy is the one error measure by which graphgram compares a
// computed matrix with its reference: the GPU suite (cuda/gpu_test.go), the
// device self-validation (cuda/selfcheck) and pybind's device tests judge
// their results with it, against the bounds of the accuracy contracts in
// cuda/README.md.
//
// The error of an entry is |got − want| / (|want| + 1e-3·scale), scale the
// largest |value| of the reference (Scale): relative where the true value is
// large, absolute to the matrix's scale where it is near 0, so that a tiny
// entry is not judged alone. With scale 0 it is the plain relative error.
package accuracy

import "math"

// Scale returns the largest |v| over the arrays: Err's scale of a reference
// (a Gram matrix; a Gram matrix and its gradients together).
func Scale(arrays ...[]float64) float64 {
	s := 0.0
	for _, a := range arrays {
		for _, v := range a {
			s = max(s, math.Abs(v))
		}
	}
	return s
}

// Err is the error of the computed entry got against the reference want:
// |got − want| / (|want| + 1e-3·scale), 0 when they are equal, NaN when
// either is NaN (or both are the same infinity's opposites).
func Err(got, want, scale float64) float64 {
	d := math.Abs(got - want)
	if d == 0 {
		return 0
	}
	return d / (math.Abs(want) + 1e-3*scale + 1e-300)
}

// Worst returns the largest Err of got against want (entry for entry, got at
// least as long as want) and its index; the first NaN error, when there is
// one, is returned instead (NaN compares false against every bound, so a
// caller tests !(worst <= bound)). An empty want gives 0 at index 0.
func Worst(got, want []float64, scale float64) (worst float64, at int) {
	for k := range want {
		e := Err(got[k], want[k], scale)
		if math.IsNaN(e) {
			return e, k
		}
		if e > worst {
			worst, at = e, k
		}
	}
	return worst, at
}
