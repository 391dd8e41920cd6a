//go:build cgo

package hostref

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// Gradient bounds the tests enforce against mgk.GramGrad (float64 CPU): the
// CPU's own finite-difference bound for float64, and for float32 the bound
// cuda/README.md states.
const (
	gradBound64 = accuracy.Grad64
	gradBound32 = accuracy.Grad32
)

// TestMkEvalGradAgainstGo checks the forward-mode derivatives of the device
// programs (mk_eval_d) against microkernel's EvalGrad for every kernel kind,
// sums, products and nested normalizations, on random rows (equal rows one
// time in five, where Kronecker deltas and normalizations take their other
// branch), for every parameter index.
func TestMkEvalGradAgainstGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, spec := range kernelSpecs {
		k := parse(t, spec)
		p, err := layout.Compile(k)
		if err != nil {
			t.Fatal(err)
		}
		np := k.NumParams()
		if int(p.NParams) != np {
			t.Fatalf("%s: program has %d parameters, kernel %d", spec, p.NParams, np)
		}
		g := make([]float64, np)
		worst64, worst32 := 0.0, 0.0
		for trial := 0; trial < 1000; trial++ {
			x, y := randRow(rng), randRow(rng)
			if trial%5 == 0 {
				y = append([]float64(nil), x...)
			}
			want := k.EvalGrad(x, y, g)
			x32, y32 := f32(x), f32(y)
			g32 := make([]float64, np)
			k.EvalGrad(f64(x32), f64(y32), g32)
			for tt := 0; tt < np; tt++ {
				v, d := MkEvalD64(&p, x, y, tt)
				if accuracy.Err(v, want, 0) > 1e-14 {
					t.Errorf("%s: value %v, Go %v", spec, v, want)
				}
				e := math.Abs(d-g[tt]) / max(1, math.Abs(g[tt]))
				worst64 = max(worst64, e)
				if e > 1e-13 {
					t.Errorf("%s: ∂/∂θ%d = %v, Go %v (x=%v y=%v)", spec, tt, d, g[tt], x, y)
				}
				_, d32 := MkEvalD32(&p, x32, y32, tt)
				e32 := math.Abs(float64(d32)-g32[tt]) / max(1, math.Abs(g32[tt]))
				worst32 = max(worst32, e32)
				if e32 > 1e-5 {
					t.Errorf("%s: float32 ∂/∂θ%d = %v, Go %v", spec, tt, d32, g32[tt])
				}
			}
		}
		t.Logf("%s: worst derivative error float64 %.2g, float32 %.2g", spec, worst64, worst32)
	}
}

// gradKernelSets adds to testgraphs' sets one with nested normalizations and
// a sum of every leaf kind on the edges, so every op is differentiated inside
// the whole gradient.
func gradKernelSets() []testgraphs.KernelSet {
	return append(append([]testgraphs.KernelSet(nil), testgraphs.KernelSets...), testgraphs.KernelSet{
		Name: "nested", NK: kernelSpecs[9],
		EK: `{"kind":"normalized","kernel":{"kind":"sum","terms":[{"kind":"kronecker_delta","h":0.4,"col":0},{"kind":"square_exponential","length_scale":0.9,"col":2},{"kind":"brownian_bridge","c":2.5,"col":3},{"kind":"constant","c":0.2}]}}`,
	})
}

// gradCase is one configuration of the gradient tests.
type gradCase struct {
	X, Y       []*graph.Graph // Y nil: symmetric
	starts     [][]float64
	nk, ek     microkernel.Kernel
	q          float64
	lmin       int
	prec       int32
	table      bool
	blocks     int32
	chunkWords int64
	stageLimit int32    // ggc_mgk_options.stage_limit of the emulated kernels
	emu        Emulator // the build of the emulated kernels
}

// reference runs mgk.GramGrad with the residual tolerance the device gets.
func (c *gradCase) reference(t *testing.T) (K, G []float64, np int) {
	t.Helper()
	sym := c.Y == nil
	ys, sy := c.Y, [][]float64(nil)
	if sym {
		ys, sy = c.X, c.starts
	}
	opt := mgk.Options{NodeKernel: c.nk, EdgeKernel: c.ek, Q: c.q, Lmin: c.lmin, NJobs: 1, Tol: 1e-12}
	np = mgk.NumParams(opt)
	K, G = make([]float64, len(c.X)*len(ys)), make([]float64, len(c.X)*len(ys)*np)
	if bad, err := mgk.GramGrad(c.X, c.Y, c.starts, sy, sym, opt, K, G, nil); err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	return
}

// run runs the host twin (emu false) or the emulated device kernels.
func (c *gradCase) run(t *testing.T, emu bool, nK, nG int) (K, G []float64, iters []int32) {
	t.Helper()
	sym := c.Y == nil
	np, _ := layout.Compile(c.nk)
	ep, _ := layout.Compile(c.ek)
	LX, err := layout.Pack(c.X, c.starts, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	var LY *layout.Graphs
	if !sym {
		if LY, err = layout.Pack(c.Y, nil, 4, 4); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Q: c.q, Tol: 1e-12, AdjTol: 1e-12, Lmin: int32(c.lmin), MaxIter: 10000, Precision: c.prec, Blocks: c.blocks, StageLimit: c.stageLimit}
	if c.prec == 32 {
		o.Tol, o.AdjTol = 1e-6, 1e-6
	}
	if sym {
		o.Symmetric = 1
	}
	if !c.table {
		o.Flags = 1
	}
	K, G, iters = make([]float64, nK), make([]float64, nG), make([]int32, nK)
	if emu {
		err = c.emu.GramGrad(LX, LY, &np, &ep, o, c.chunkWords, K, G, iters)
		// With the default budget every pair of the test sets is staged.
		ny := len(c.Y)
		if sym {
			ny = len(c.X)
		}
		if pairs := emuPairs(len(c.X), ny, sym); err == nil && c.stageLimit == 0 && c.emu.Staged() != pairs {
			t.Errorf("default stage budget: %d of %d pairs staged", c.emu.Staged(), pairs)
		}
	} else {
		err = GramGrad(LX, LY, &np, &ep, o, c.table, K, G, iters)
	}
	if err != nil {
		t.Fatal(err)
	}
	return
}

// check compares a run with the reference and returns the worst K and
// gradient errors.
func (c *gradCase) check(t *testing.T, emu bool) (wk, wg float64) {
	t.Helper()
	K0, G0, np := c.reference(t)
	K, G, iters := c.run(t, emu, len(K0), len(G0))
	scale := accuracy.Scale(K0, G0)
	for e := range K0 {
		if iters[e] < 0 {
			t.Errorf("entry %d did not converge", e)
		}
		wk = max(wk, accuracy.Err(K[e], K0[e], 0))
		ge, _ := accuracy.Worst(G[e*np:(e+1)*np], G0[e*np:(e+1)*np], scale)
		if ge > 1e-3 && testing.Verbose() {
			t.Logf("entry %d: got %v want %v", e, G[e*np:(e+1)*np], G0[e*np:(e+1)*np])
		}
		wg = max(wg, ge)
	}
	kb, gb := accuracy.MGK64, gradBound64
	if c.prec == 32 {
		kb, gb = float32Bound, gradBound32
	}
	if wk > kb || wg > gb {
		t.Errorf("worst relative error K %.3g (bound %g), gradient %.3g (bound %g)", wk, kb, wg, gb)
	}
	return
}

// TestGramGradAgainstMGK compares the serial host twin of the device gradient
// (same headers, same solves and reductions) with mgk.GramGrad.
func TestGramGradAgainstMGK(t *testing.T) {
	X := append(testGraphs(t, 11), testgraphs.Dense(1, 16))
	Y := append(testGraphs(t, 12)[2:], testgraphs.Dense(2, 10))
	starts := testgraphs.Starts(X, 13)
	worst := map[int32][2]float64{}
	for _, ks := range gradKernelSets() {
		nk, ek := parse(t, ks.NK), parse(t, ks.EK)
		for _, q := range []float64{0.01, 0.1, 0.5} {
			for lmin := 0; lmin <= 1; lmin++ {
				for _, sym := range []bool{true, false} {
					for _, prec := range []int32{64, 32} {
						for _, table := range []bool{true, false} {
							if !table && (prec == 32 || q != 0.1) {
								continue // the evaluated edge kernel is slow on the host; once is enough
							}
							c := gradCase{X: X, Y: Y, starts: starts, nk: nk, ek: ek, q: q, lmin: lmin, prec: prec, table: table}
							if sym {
								c.Y = nil
							}
							t.Run(fmt.Sprintf("%s/q=%g/lmin=%d/sym=%v/p%d/table=%v", ks.Name, q, lmin, sym, prec, table), func(t *testing.T) {
								wk, wg := c.check(t, false)
								w := worst[prec]
								worst[prec] = [2]float64{max(w[0], wk), max(w[1], wg)}
							})
						}
					}
				}
			}
		}
	}
	for p, w := range worst {
		t.Logf("float%d: worst relative error K %.2g, gradient %.2g", p, w[0], w[1])
	}
}

// TestEmulatedGradKernels runs the device gradient kernels themselves
// (mgk_prep, the persistent mgk_gsolve, mgk_gterms; 64-thread solver blocks,
// 32-thread term blocks) on host threads and compares them with
// mgk.GramGrad, with chunked work space poisoned with NaN.
func TestEmulatedGradKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: thousands of host threads")
	}
	X := append(testGraphs(t, 11)[:7], testgraphs.Dense(1, 16))
	Y := append(testGraphs(t, 12)[3:], testgraphs.Dense(2, 10))
	starts := testgraphs.Starts(X, 3)
	sets := gradKernelSets()
	cs, lb, ct, ns := sets[0], sets[1], sets[2], sets[3]
	type cfg struct {
		ks         testgraphs.KernelSet
		q          float64
		lmin       int
		sym        bool
		prec       int32
		table      bool
		blocks     int32
		chunkWords int64
	}
	cfgs := []cfg{
		{cs, 0.1, 0, true, 64, true, 3, 1 << 20},
		{lb, 0.05, 1, false, 64, true, 1, 30000},
		{ct, 0.2, 0, false, 32, false, 2, 1 << 20},
		{ct, 0.1, 1, true, 64, false, 4, 40000},
		{ns, 0.01, 1, false, 64, true, 3, 1 << 20},
		{ns, 0.5, 0, true, 32, true, 2, 1 << 20},
	}
	for _, f := range cfgs {
		name := fmt.Sprintf("%s/q=%g/lmin=%d/sym=%v/p%d/table=%v/blocks=%d/chunk=%d", f.ks.Name, f.q, f.lmin, f.sym, f.prec, f.table, f.blocks, f.chunkWords)
		t.Run(name, func(t *testing.T) {
			c := gradCase{X: X, Y: Y, starts: starts, nk: parse(t, f.ks.NK), ek: parse(t, f.ks.EK), q: f.q, lmin: f.lmin,
				prec: f.prec, table: f.table, blocks: f.blocks, chunkWords: f.chunkWords}
			if f.sym {
				c.Y = nil
			}
			wk, wg := c.check(t, true)
			t.Logf("worst relative error K %.2g, gradient %.2g", wk, wg)
		})
	}
}
