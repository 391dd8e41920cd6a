package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for k := range v {
		v[k] = rng.Float64()*2 - 1
	}
	return v
}

func close(a, b, scale float64) bool { return math.Abs(a-b) <= 1e-14*scale }

func sameVec(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for k := range want {
		if !close(got[k], want[k], 1+math.Abs(want[k])) {
			t.Fatalf("%s[%d] = %v, want %v", what, k, got[k], want[k])
		}
	}
}

// TestAgainstGo checks every exported function against its portable version
// on lengths that exercise the vector body, the scalar tail and the
// short-vector cut-off. Under GOEXPERIMENT=simd on an AVX2 machine this tests
// the vector code; otherwise both sides are the portable code.
func TestAgainstGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 41; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a, b, c, d, e := randVec(rng, n), randVec(rng, n), randVec(rng, n), randVec(rng, n), randVec(rng, n)
			cp := func(v []float64) []float64 { return append([]float64(nil), v...) }

			g, w := cp(c), cp(c)
			dg, dw := ShiftedScale(g, a, b, d), ShiftedScaleGo(w, a, b, d)
			sameVec(t, "ShiftedScale", g, w)
			if !close(dg, dw, float64(n)) {
				t.Fatalf("ShiftedScale dot = %v, want %v", dg, dw)
			}

			yg, yw, rg, rw := cp(a), cp(a), cp(b), cp(b)
			zg, sg := Step(yg, rg, c, d, e, 0.37)
			zw, sw := StepGo(yw, rw, c, d, e, 0.37)
			sameVec(t, "Step y", yg, yw)
			sameVec(t, "Step r", rg, rw)
			if !close(zg, zw, float64(n)) || !close(sg, sw, float64(n)) {
				t.Fatalf("Step sums = %v, %v, want %v, %v", zg, sg, zw, sw)
			}

			pg, pw, tg, tw := cp(a), cp(a), make([]float64, n), make([]float64, n)
			Direction(pg, tg, b, c, d, -0.8)
			DirectionGo(pw, tw, b, c, d, -0.8)
			sameVec(t, "Direction p", pg, pw)
			sameVec(t, "Direction t", tg, tw)

			if got, want := Dot(a, b), DotGo(a, b); !close(got, want, float64(n)) {
				t.Fatalf("Dot = %v, want %v", got, want)
			}
			if got, want := WeightedNorm(a, b), WeightedNormGo(a, b); !close(got, want, float64(n)) {
				t.Fatalf("WeightedNorm = %v, want %v", got, want)
			}
		})
	}
}

// TestStepValues checks Step against values worked out by hand.
func TestStepValues(t *testing.T) {
	y := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	r := []float64{1, 1, 1, 1, 1, 1, 1, 1, 2}
	p := []float64{1, 0, 0, 0, 0, 0, 0, 0, 1}
	ap := []float64{0, 0, 0, 0, 0, 0, 0, 0, 2}
	inv := []float64{2, 2, 2, 2, 2, 2, 2, 2, 0.5}
	rz, rr := Step(y, r, p, ap, inv, 0.5)
	// y gains 0.5 at 0 and 8; r loses 1 at 8: r = (1,…,1, 1).
	if y[0] != 1.5 || y[8] != 9.5 || r[8] != 1 || rz != 8*2+0.5 || rr != 9 {
		t.Fatalf("Step: y %v r %v rz %v rr %v", y, r, rz, rr)
	}
}

func benchVecs(n int) [6][]float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	var v [6][]float64
	for k := range v {
		v[k] = randVec(rng, n)
	}
	return v
}

// BenchmarkStep measures Step and StepGo on MUTAG-sized (324) and
// NCI1-sized (900) product vectors.
func BenchmarkStep(b *testing.B) {
	for _, n := range []int{324, 900} {
		v := benchVecs(n)
		b.Run(fmt.Sprintf("dispatch/%d", n), func(b *testing.B) {
			for b.Loop() {
				Step(v[0], v[1], v[2], v[3], v[4], 1e-9)
			}
		})
		b.Run(fmt.Sprintf("go/%d", n), func(b *testing.B) {
			for b.Loop() {
				StepGo(v[0], v[1], v[2], v[3], v[4], 1e-9)
			}
		})
	}
}

// BenchmarkDirection measures Direction and DirectionGo.
func BenchmarkDirection(b *testing.B) {
	for _, n := range []int{324, 900} {
		v := benchVecs(n)
		b.Run(fmt.Sprintf("dispatch/%d", n), func(b *testing.B) {
			for b.Loop() {
				Direction(v[0], v[1], v[2], v[3], v[4], 0.5)
			}
		})
		b.Run(fmt.Sprintf("go/%d", n), func(b *testing.B) {
			for b.Loop() {
				DirectionGo(v[0], v[1], v[2], v[3], v[4], 0.5)
			}
		})
	}
}

// BenchmarkShiftedScale measures ShiftedScale and ShiftedScaleGo.
func BenchmarkShiftedScale(b *testing.B) {
	for _, n := range []int{324, 900} {
		v := benchVecs(n)
		b.Run(fmt.Sprintf("dispatch/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(v[5], v[0])
				ShiftedScale(v[5], v[1], v[2], v[3])
			}
		})
		b.Run(fmt.Sprintf("go/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(v[5], v[0])
				ShiftedScaleGo(v[5], v[1], v[2], v[3])
			}
		})
	}
}

// TestSquaredDistances checks SquaredDistances bit for bit against its
// portable version (under GOEXPERIMENT=simd on an AVX2 machine, the vector
// code) on lengths through the 8-wide body, the 4-wide step and the tail, and
// both against a plain sum to rounding.
func TestSquaredDistances(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for d := 1; d <= 41; d++ {
		x, ys := randVec(rng, d), randVec(rng, 5*d)
		got, want := make([]float64, 5), make([]float64, 5)
		SquaredDistances(got, x, ys)
		SquaredDistancesGo(want, x, ys)
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("d=%d row %d: %v, portable %v (bit for bit)", d, j, got[j], want[j])
			}
			s := 0.0
			for k, v := range x {
				u := v - ys[j*d+k]
				s += u * u
			}
			if !close(got[j], s, s) {
				t.Fatalf("d=%d row %d: %v, plain sum %v", d, j, got[j], s)
			}
		}
	}
}
