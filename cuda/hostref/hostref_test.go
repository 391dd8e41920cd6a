//go:build cgo

package hostref

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// kernelSpecs covers every base kernel kind, sums, products and nested
// normalizations, over feature rows of 4 columns (0, 1: small integer labels;
// 2, 3: reals).
var kernelSpecs = []string{
	`{"kind":"constant","c":0.7}`,
	`{"kind":"kronecker_delta","h":0.3,"col":0}`,
	`{"kind":"kronecker_delta","h":0.2,"col":0,"width":2}`,
	`{"kind":"square_exponential","length_scale":0.8,"col":2}`,
	`{"kind":"square_exponential","length_scale":1.7,"col":2,"width":2}`,
	`{"kind":"brownian_bridge","c":2.5,"col":3}`,
	`{"kind":"sum","terms":[{"kind":"kronecker_delta","h":0.5,"col":1},{"kind":"constant","c":0.25}]}`,
	`{"kind":"product","terms":[{"kind":"kronecker_delta","h":0.4,"col":0},{"kind":"square_exponential","length_scale":1.1,"col":3},{"kind":"constant","c":0.9}]}`,
	`{"kind":"normalized","kernel":{"kind":"sum","terms":[{"kind":"brownian_bridge","c":3,"col":2},{"kind":"kronecker_delta","h":0.1,"col":0}]}}`,
	`{"kind":"normalized","kernel":{"kind":"product","terms":[{"kind":"normalized","kernel":{"kind":"brownian_bridge","c":1.5,"col":3}},{"kind":"sum","terms":[{"kind":"constant","c":0.5},{"kind":"square_exponential","length_scale":0.5,"col":2}]}]}}`,
	`{"kind":"brownian_bridge","c":0.1,"col":2}`,
}

func parse(t *testing.T, s string) microkernel.Kernel {
	t.Helper()
	k, err := microkernel.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func randRow(rng *rand.Rand) []float64 { return testgraphs.Row(rng) }

func TestMkEvalAgainstGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spec := range kernelSpecs {
		k := parse(t, spec)
		p, err := layout.Compile(k)
		if err != nil {
			t.Fatal(err)
		}
		worst64, worst32 := 0.0, 0.0
		for trial := 0; trial < 2000; trial++ {
			x, y := randRow(rng), randRow(rng)
			if trial%5 == 0 {
				y = append([]float64(nil), x...)
			}
			want := k.Eval(x, y)
			got := MkEval64(&p, x, y)
			worst64 = max(worst64, accuracy.Err(got, want, 0))
			x32, y32 := f32(x), f32(y)
			got32 := float64(MkEval32(&p, x32, y32))
			// float32 inputs are rounded too: compare with Go on the rounded rows.
			want32 := k.Eval(f64(x32), f64(y32))
			if math.Abs(got32-want32) > 1e-5*max(1, math.Abs(want32)) {
				t.Errorf("%s: float32 %v, Go %v", spec, got32, want32)
			}
			worst32 = max(worst32, math.Abs(got32-want32)/max(1, math.Abs(want32)))
		}
		if worst64 > 1e-14 {
			t.Errorf("%s: float64 relative error %.3g", spec, worst64)
		}
		t.Logf("%s: worst float64 rel %.2g, float32 %.2g", spec, worst64, worst32)
	}
}

// TestABISizes: the Go mirrors of the C structs have the C sizes.
func TestABISizes(t *testing.T) {
	s := Sizes()
	for k := 0; k < 6; k += 2 {
		if s[k] != s[k+1] {
			t.Errorf("struct %d: Go %d bytes, C %d", k/2, s[k], s[k+1])
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	// Deeper than the register stack: a sum of products of sums ...
	deep := `{"kind":"constant","c":1}`
	for i := 0; i < 8; i++ {
		deep = fmt.Sprintf(`{"kind":"sum","terms":[{"kind":"constant","c":0.5},%s]}`, deep)
	}
	if _, err := layout.Compile(parse(t, deep)); err == nil {
		t.Error("a program deeper than the stack compiled")
	}
	long := `{"kind":"sum","terms":[`
	for i := 0; i < 30; i++ {
		if i > 0 {
			long += ","
		}
		long += `{"kind":"constant","c":0.1}`
	}
	if _, err := layout.Compile(parse(t, long+`]}`)); err == nil {
		t.Error("a program longer than the instruction limit compiled")
	}
	type other struct{ microkernel.Constant }
	if _, err := layout.Compile(&other{}); err == nil {
		t.Error("an unknown kernel type compiled")
	}
}

func f32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func f64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// randomTile returns a mask with about density·64 bits, its bit list and weights.
func randomTile(rng *rand.Rand, density float64) (uint64, []uint8, []float64) {
	var m uint64
	for b := 0; b < 64; b++ {
		if rng.Float64() < density {
			m |= 1 << b
		}
	}
	var pos []uint8
	var w []float64
	for r := m; r != 0; r &= r - 1 {
		pos = append(pos, uint8(bits.TrailingZeros64(r)))
		w = append(w, 0.1+rng.Float64())
	}
	return m, pos, w
}

func TestTilePrimitives(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 400; trial++ {
		da, db := []float64{0, 0.05, 0.3, 1}[trial%4], []float64{0, 0.1, 0.5, 0.9, 1}[trial%5]
		ma, pa, wa := randomTile(rng, da)
		mb, pb, wb := randomTile(rng, db)
		kappa := make([]float64, len(pa)*len(pb))
		for i := range kappa {
			kappa[i] = rng.Float64()
		}
		X := make([]float64, 64)
		for i := range X {
			X[i] = rng.NormFloat64()
		}
		// Reference: Y(r,r') = Σ a(r,c) b(r',c') κ X(c,c') over nonzero pairs.
		want := make([]float64, 64)
		for ka, p := range pa {
			for kb, q := range pb {
				want[8*(p/8)+q/8] += wa[ka] * wb[kb] * kappa[ka*len(pb)+kb] * X[8*(p%8)+q%8]
			}
		}
		yd, ys := TilePair64(ma, pa, wa, mb, pb, wb, kappa, X)
		for e := range want {
			if math.Abs(yd[e]-want[e]) > 1e-13*(1+math.Abs(want[e])) || math.Abs(ys[e]-want[e]) > 1e-13*(1+math.Abs(want[e])) {
				t.Fatalf("trial %d entry %d: dense %v sparse %v want %v", trial, e, yd[e], ys[e], want[e])
			}
		}
		yd32, ys32 := TilePair32(ma, pa, f32(wa), mb, pb, f32(wb), f32(kappa), f32(X))
		for e := range want {
			tol := 1e-5 * (1 + math.Abs(want[e]) + float64(len(pa)*len(pb))/64)
			if math.Abs(float64(yd32[e])-want[e]) > tol || math.Abs(float64(ys32[e])-want[e]) > tol {
				t.Fatalf("trial %d entry %d float32: dense %v sparse %v want %v", trial, e, yd32[e], ys32[e], want[e])
			}
		}
	}
}

func testGraphs(t *testing.T, seed uint64) []*graph.Graph { return testgraphs.EdgeCases(seed) }

func TestMulWAgainstOctile(t *testing.T) {
	gs := testGraphs(t, 5)
	L, err := layout.Pack(gs, nil, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 7))
	for _, spec := range kernelSpecs {
		ek := parse(t, spec)
		prog, _ := layout.Compile(ek)
		for i := range gs {
			for j := range gs {
				a, b := L.Packed[i], L.Packed[j]
				pair := octile.NewPair(octile.Options{})
				if err := pair.Reset(a, b, ek); err != nil {
					t.Fatal(err)
				}
				n := gs[i].N * gs[j].N
				x := make([]float64, n)
				for k := range x {
					x[k] = rng.NormFloat64()
				}
				want := make([]float64, n)
				pair.Mul(want, x)
				for _, table := range []bool{true, false} {
					got := make([]float64, n)
					MulW(L, i, L, j, &prog, table, x, got)
					for k := range want {
						if math.Abs(got[k]-want[k]) > 1e-12*(1+math.Abs(want[k])) {
							t.Fatalf("%s (%d,%d) table=%v: y[%d] = %v, octile %v", spec, i, j, table, k, got[k], want[k])
						}
					}
				}
			}
		}
	}
}

// TestGramAgainstMGK runs the host twin of the device solver (same headers,
// same PCG) against gokernel/mgk: float64 to 1e-9 relative, float32 to the
// bound documented in cuda/README.md.
func TestGramAgainstMGK(t *testing.T) {
	X := append(testGraphs(t, 11), testgraphs.Dense(1, 16))
	Y := append(testGraphs(t, 12)[2:], testgraphs.Dense(2, 10))
	starts := make([][]float64, len(X))
	rng := rand.New(rand.NewPCG(13, 14))
	for i, g := range X {
		if i%2 == 0 {
			continue
		}
		starts[i] = make([]float64, g.N)
		for k := range starts[i] {
			starts[i][k] = 0.1 + rng.Float64()
		}
	}
	for _, ks := range testgraphs.KernelSets {
		nk, ek := parse(t, ks.NK), parse(t, ks.EK)
		np, _ := layout.Compile(nk)
		ep, _ := layout.Compile(ek)
		for _, q := range []float64{0.01, 0.1, 0.5} {
			for lmin := 0; lmin <= 1; lmin++ {
				for _, sym := range []bool{true, false} {
					name := fmt.Sprintf("%s/q=%g/lmin=%d/sym=%v", ks.Name, q, lmin, sym)
					t.Run(name, func(t *testing.T) {
						ys, sy := Y, [][]float64(nil)
						if sym {
							ys, sy = X, starts
						}
						want := make([]float64, len(X)*len(ys))
						opt := mgk.Options{NodeKernel: nk, EdgeKernel: ek, Q: q, Lmin: lmin, NJobs: 1}
						var yArg []*graph.Graph
						if !sym {
							yArg = ys
						}
						if bad, err := mgk.Gram(X, yArg, starts, sy, sym, opt, want, nil); err != nil || len(bad) > 0 {
							t.Fatal(err, bad)
						}
						LX, err := layout.Pack(X, starts, 4, 4)
						if err != nil {
							t.Fatal(err)
						}
						var LY *layout.Graphs
						if !sym {
							if LY, err = layout.Pack(ys, nil, 4, 4); err != nil {
								t.Fatal(err)
							}
						}
						for _, prec := range []int32{64, 32} {
							for _, table := range []bool{true, false} {
								if !table && (prec == 32 || q != 0.1) {
									continue // the evaluated edge kernel is slow on the host; once is enough
								}
								o := Options{Q: q, Tol: 1e-12, Lmin: int32(lmin), MaxIter: 10000, Precision: prec}
								if prec == 32 {
									o.Tol = 1e-6
								}
								if sym {
									o.Symmetric = 1
								}
								got := make([]float64, len(want))
								iters := make([]int32, len(want))
								if err := Gram(LX, LY, &np, &ep, o, table, got, iters, nil); err != nil {
									t.Fatal(err)
								}
								worst := 0.0
								for k := range want {
									if iters[k] < 0 {
										t.Errorf("precision %d: entry %d did not converge", prec, k)
									}
									worst = max(worst, accuracy.Err(got[k], want[k], 0))
								}
								bound := accuracy.MGK64
								if prec == 32 {
									bound = float32Bound
								}
								if worst > bound {
									t.Errorf("precision %d table=%v: worst relative error %.3g > %.g", prec, table, worst, bound)
								}
								if table {
									t.Logf("precision %d: worst relative error %.2g", prec, worst)
								}
							}
						}
					})
				}
			}
		}
	}
}

// float32Bound is the relative error of float32 Gram entries against the
// float64 CPU backend that cuda/README.md states (PCG to 1e-6 in float32).
const float32Bound = accuracy.MGK32
