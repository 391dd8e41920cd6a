package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// interleave2 returns a and b side by side; split2 is its inverse.
func interleave2(a, b []float64) [][2]float64 {
	x := make([][2]float64, len(a))
	for k := range a {
		x[k] = [2]float64{a[k], b[k]}
	}
	return x
}

func split2(x [][2]float64) (a, b []float64) {
	a, b = make([]float64, len(x)), make([]float64, len(x))
	for k := range x {
		a[k], b[k] = x[k][0], x[k][1]
	}
	return a, b
}

// sameBits fails unless got and want are equal entry for entry.
func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("%s[%d] = %v, want %v (bit for bit)", what, k, got[k], want[k])
		}
	}
}

// sameCols fails unless column 1 of got equals want1 and column 2 want2,
// entry for entry.
func sameCols(t *testing.T, what string, got [][2]float64, want1, want2 []float64) {
	t.Helper()
	g1, g2 := split2(got)
	sameBits(t, what+"1", g1, want1)
	sameBits(t, what+"2", g2, want2)
}

// The one-column loops of mgk's SGS sweeps that the Sweep functions stand
// for.

func backRef(t, x, r, dm, inv, acc []float64, beta float64) {
	for k := range t {
		xk := r[k]*dm[k] + beta*x[k]
		x[k] = xk
		t[k] = (xk + acc[k]) * inv[k]
	}
}

func solveRef(t, x, inv, acc []float64) {
	for k := range t {
		t[k] = (x[k] + acc[k]) * inv[k]
	}
}

func forwardRef(t, ap, x, inv, acc []float64) float64 {
	dot := 0.0
	for k := range t {
		a := (x[k] + acc[k]) * inv[k]
		t[k] = a - t[k]
		ap[k] = a
		dot += x[k] * a
	}
	return dot
}

// TestInterleavedBitForBit checks that every two-column function gives each
// column exactly what its one-column counterpart gives it alone: Step2 is
// Step (and Step2Go StepGo), Step2Both Step2, WeightedNorm2 WeightedNorm,
// and the Sweep functions, vector and portable, are the loops above
// (TestScatter checks Blocks2.Scatter). Under GOEXPERIMENT=simd on an AVX2
// machine this tests the vector code; otherwise both sides are the portable
// code.
func TestInterleavedBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	for n := 1; n <= 23; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			col := func() []float64 { return randVec(rng, n) }
			w, inv := col(), col()
			w2, inv2 := interleave2(w, w), interleave2(inv, inv)
			var c1, c2 [6][]float64
			for i := range c1 {
				c1[i], c2[i] = col(), col()
			}

			type step2Fn func(y, r, p, ap, inv [][2]float64, a1, a2 float64) (float64, float64)
			type stepFn func(y, r, p, ap, inv []float64, a float64) (float64, float64)
			for _, f := range []struct {
				name string
				two  step2Fn
				one  stepFn
			}{{"Step2", Step2, Step}, {"Step2Go", Step2Go, StepGo}} {
				y, r := interleave2(c1[0], c2[0]), interleave2(c1[1], c2[1])
				rz1, rz2 := f.two(y, r, interleave2(c1[2], c2[2]), interleave2(c1[3], c2[3]), w2, 0.37, -1.3)
				y1, r1, y2, r2 := cp(c1[0]), cp(c1[1]), cp(c2[0]), cp(c2[1])
				want1, _ := f.one(y1, r1, c1[2], c1[3], w, 0.37)
				want2, _ := f.one(y2, r2, c2[2], c2[3], w, -1.3)
				sameCols(t, f.name+" y", y, y1, y2)
				sameCols(t, f.name+" r", r, r1, r2)
				if rz1 != want1 || rz2 != want2 {
					t.Fatalf("%s rz = %v, %v, want %v, %v", f.name, rz1, rz2, want1, want2)
				}
			}

			// Step2Both: Step2 on (y, p) bit for bit, and on (x, t) as Step2
			// steps y.
			for _, f := range []struct {
				name string
				both func(y, r, p, ap, inv, x, t [][2]float64, a1, a2 float64) (float64, float64)
				two  step2Fn
			}{{"Step2Both", Step2Both, Step2}, {"Step2BothGo", Step2BothGo, Step2Go}} {
				y, r, x := interleave2(c1[0], c2[0]), interleave2(c1[1], c2[1]), interleave2(c1[4], c2[4])
				p, ap, tv := interleave2(c1[2], c2[2]), interleave2(c1[3], c2[3]), interleave2(c1[5], c2[5])
				rz1, rz2 := f.both(y, r, p, ap, w2, x, tv, 0.37, -1.3)
				wy, wr := interleave2(c1[0], c2[0]), interleave2(c1[1], c2[1])
				want1, want2 := f.two(wy, wr, p, ap, w2, 0.37, -1.3)
				wx := interleave2(c1[4], c2[4])
				f.two(wx, interleave2(c1[1], c2[1]), tv, ap, w2, 0.37, -1.3)
				for what, pair := range map[string][2][][2]float64{"y": {y, wy}, "r": {r, wr}, "x": {x, wx}} {
					a1, a2 := split2(pair[1])
					sameCols(t, f.name+" "+what, pair[0], a1, a2)
				}
				if rz1 != want1 || rz2 != want2 {
					t.Fatalf("%s rz = %v, %v, want %v, %v", f.name, rz1, rz2, want1, want2)
				}
			}

			for _, f := range []struct {
				name string
				two  func(r, w [][2]float64) (float64, float64)
				one  func(r, w []float64) float64
			}{{"WeightedNorm2", WeightedNorm2, WeightedNorm}, {"WeightedNorm2Go", WeightedNorm2Go, WeightedNormGo}} {
				s1, s2 := f.two(interleave2(c1[1], c2[1]), w2)
				if want1, want2 := f.one(c1[1], w), f.one(c2[1], w); s1 != want1 || s2 != want2 {
					t.Fatalf("%s = %v, %v, want %v, %v", f.name, s1, s2, want1, want2)
				}
			}

			for _, back := range []func(t, x, r, dm, inv, acc [][2]float64, b1, b2 float64){SweepBack2, SweepBack2Go} {
				tv, x := interleave2(c1[0], c2[0]), interleave2(c1[1], c2[1])
				back(tv, x, interleave2(c1[2], c2[2]), w2, inv2, interleave2(c1[3], c2[3]), 0.6, -0.2)
				t1, x1, t2, x2 := cp(c1[0]), cp(c1[1]), cp(c2[0]), cp(c2[1])
				backRef(t1, x1, c1[2], w, inv, c1[3], 0.6)
				backRef(t2, x2, c2[2], w, inv, c2[3], -0.2)
				sameCols(t, "SweepBack2 t", tv, t1, t2)
				sameCols(t, "SweepBack2 x", x, x1, x2)
			}

			for _, solve := range []func(t, x, inv, acc [][2]float64){SweepSolve2, SweepSolve2Go} {
				tv := make([][2]float64, n)
				solve(tv, interleave2(c1[1], c2[1]), inv2, interleave2(c1[3], c2[3]))
				t1, t2 := make([]float64, n), make([]float64, n)
				solveRef(t1, c1[1], inv, c1[3])
				solveRef(t2, c2[1], inv, c2[3])
				sameCols(t, "SweepSolve2 t", tv, t1, t2)
			}

			for _, fwd := range []func(z, t, ap, x, inv, acc [][2]float64) (float64, float64){SweepForward2, SweepForward2Go} {
				// z in place of t, and z apart from t (t then unchanged).
				for _, apart := range []bool{false, true} {
					tv, ap := interleave2(c1[0], c2[0]), make([][2]float64, n)
					zv := tv
					if apart {
						zv = make([][2]float64, n)
					}
					d1, d2 := fwd(zv, tv, ap, interleave2(c1[1], c2[1]), inv2, interleave2(c1[3], c2[3]))
					t1, t2, ap1, ap2 := cp(c1[0]), cp(c2[0]), make([]float64, n), make([]float64, n)
					w1, w2 := forwardRef(t1, ap1, c1[1], inv, c1[3]), forwardRef(t2, ap2, c2[1], inv, c2[3])
					sameCols(t, "SweepForward2 z", zv, t1, t2)
					sameCols(t, "SweepForward2 ap", ap, ap1, ap2)
					if apart {
						sameCols(t, "SweepForward2 t (unchanged)", tv, c1[0], c2[0])
					}
					if d1 != w1 || d2 != w2 {
						t.Fatalf("SweepForward2 dots = %v, %v, want %v, %v", d1, d2, w1, w2)
					}
				}
			}
		})
	}
}
