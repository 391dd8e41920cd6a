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

// The bounds of the accuracy contracts (cuda/README.md, "Precision" and the
// self-validation), as the tests and the device self-validation apply them
// to Err: the largest error a computed entry may have against its reference.
// A float64 bound is set by the reference's own accuracy; a float32 bound by
// single precision's rounding and its solver's residual floor.
const (
	// MGK64 bounds a marginalized-kernel value (Gram, Diag, Nodal) computed
	// in float64 against the CPU's (mgk.Gram and its kin): the CPU solver's
	// default accuracy, mgk.DefaultAccuracy, 1e-9 relative. A device that
	// solves to the same contract stays within it (host twin: worst 5e-16).
	MGK64 = 1e-9
	// MGK32 bounds the same in float32: single precision stores and solves
	// to a relative residual of max(tol, 1e-6), so values agree with
	// float64 to 1e-4 relative (host twin: worst 7e-6, q ≥ 0.01).
	MGK32 = 1e-4
	// MGKCheck64 and MGKCheck32 bound a marginalized-kernel value against
	// the CPU's own default-accuracy solve rather than a converged
	// reference, where both sides carry their solver's error and a false
	// alarm would mark a healthy device failed: MGK64 and MGK32 widened
	// tenfold. The device self-validation (cuda/selfcheck) and pybind's
	// emulated nodal test apply them, scale the reference's (Scale).
	MGKCheck64 = 1e-8
	MGKCheck32 = 1e-3
	// Grad64 and Grad32 bound the gradient of a marginalized-kernel value,
	// scale the largest |K| or |∂K| of the test matrix (so a component that
	// cancels to about 0 is judged on its siblings' scale), both sides
	// solving to a residual of 1e-12: float64 agrees to mgk's default
	// gradient accuracy, mgk.DefaultGradAccuracy (host twin: worst 5.1e-12);
	// float32 accumulates in float (host twin: worst 6.9e-5).
	Grad64 = 1e-6
	Grad32 = 1e-3
	// GradCheck64 bounds the same float64 gradient when both sides stop at
	// the default gradient accuracy (1e-6 each) instead of a residual of
	// 1e-12: Grad64 widened tenfold, as MGKCheck64 widens MGK64.
	GradCheck64 = 1e-5
	// SP64 and SP32 bound a shortest-path-kernel value against spkernel's:
	// float64 adds the same nonnegative terms in another order (about 1e-16
	// per step); float32 rounds each term and partial sum in float, at most
	// about 2.3e-6 relative (host-emulated kernels: worst 1.5e-7).
	SP64 = 1e-12
	SP32 = 1e-5
)

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
