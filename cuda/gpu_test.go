//go:build cuda

// The GPU suite: every test here needs a CUDA device and is skipped, with the
// reason, where there is none. cuda/gpu_suite.sh builds the library and this
// suite and runs it (and compute-sanitizer) on a GPU machine.
package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// requireGPU loads the built library and skips unless a device is usable.
func requireGPU(t testing.TB) {
	t.Helper()
	p := builtLibrary(t)
	resetLibrary()
	SetLibraryPath(p)
	if ok, why := Available(); !ok {
		t.Skipf("no CUDA device: %s", why)
	}
}

// short is set by gpu_suite.sh under compute-sanitizer, which is slow, and for
// runs against the host-emulated library (GGCUDA_SHORT, make test-cuda-emu).
var short = os.Getenv("GGCUDA_SANITIZE") != "" || os.Getenv("GGCUDA_SHORT") != ""

// graphBytes is ggcuda.cu's graph_bytes<double>: the device memory of a list.
func graphBytes(gs []*graph.Graph) int64 {
	L, err := layout.Pack(gs, nil, testgraphs.Cols, testgraphs.Cols)
	if err != nil {
		panic(err)
	}
	return int64(L.NumGraphs)*64 + L.TotalTilePtr*4 + L.TotalTiles*16 + L.TotalNZ*5 + L.TotalNodes*4 +
		8*(L.TotalNZ+L.TotalClasses*int64(L.EdgeCols)+L.TotalNodes*int64(L.NodeCols+2))
}

// suiteGraphs: the edge cases, dense tiles, and very unequal sizes.
func suiteGraphs() (X, Y []*graph.Graph) {
	rng := rand.New(rand.NewPCG(21, 22))
	X = append(testgraphs.EdgeCases(11), testgraphs.Dense(1, 16), testgraphs.Dense(3, 27))
	Y = append(testgraphs.EdgeCases(12)[1:], testgraphs.Dense(2, 10), testgraphs.Random(rng, 150, 400, true))
	if short {
		X, Y = X[:6], Y[:5]
	}
	return
}

// lastRef is the last CPU reference of compare or compareGrad. The suite's
// loops check each case (kernels, q, lmin, sym) in both precisions and on
// both κe paths against one reference; computing it four times made the CPU,
// not the GPU, most of the suite's time on an H100 (the continuous kernels'
// pairs with the 150-node graph). The entry holds its inputs, so the
// addresses in its key cannot be reused by other graphs or kernels while it
// is kept; the CPU's values are bit for bit the same on every call.
var lastRef struct {
	key  string
	keep []any
	K, G []float64
}

// cpuReference returns compute's K and gradients, or the last ones when the
// call's inputs are the same objects with the same options.
func cpuReference(t *testing.T, X, Y []*graph.Graph, sx, sy [][]float64, sym bool, opt mgk.Options, grad bool, compute func() (K, G []float64, err error)) ([]float64, []float64) {
	t.Helper()
	key := fmt.Sprintf("%p/%d %p/%d %p/%d %p/%d %v %v %+v", X, len(X), Y, len(Y), sx, len(sx), sy, len(sy), sym, grad, opt)
	if key != lastRef.key {
		K, G, err := compute()
		if err != nil {
			lastRef.key = ""
			t.Fatalf("CPU: %v", err)
		}
		lastRef.key, lastRef.keep, lastRef.K, lastRef.G = key, []any{X, Y, sx, sy, opt}, K, G
	}
	return lastRef.K, lastRef.G
}

// compare runs MarginalizedGramStats with the options co against mgk.Gram and
// returns the worst relative error.
func compare(t *testing.T, co callOptions, X, Y []*graph.Graph, sx, sy [][]float64, sym bool, opt mgk.Options, prec Precision) float64 {
	t.Helper()
	worst, _ := compareStats(t, co, X, Y, sx, sy, sym, opt, prec)
	return worst
}

// compareStats is compare that also returns the GPU call's Stats.
func compareStats(t *testing.T, co callOptions, X, Y []*graph.Graph, sx, sy [][]float64, sym bool, opt mgk.Options, prec Precision) (float64, Stats) {
	t.Helper()
	ny := len(Y)
	var yArg []*graph.Graph
	if sym {
		ny, sy = len(X), sx
	} else {
		yArg = Y
	}
	opt.NJobs = 0
	want, _ := cpuReference(t, X, yArg, sx, sy, sym, opt, false, func() ([]float64, []float64, error) {
		want := make([]float64, len(X)*ny)
		bad, err := mgk.Gram(X, yArg, sx, sy, sym, opt, want, nil)
		if err == nil && len(bad) > 0 {
			err = fmt.Errorf("unconverged %v", bad)
		}
		return want, nil, err
	})
	got := make([]float64, len(want))
	iters := make([]int32, len(want))
	var st Stats
	bad, err := gram(co, X, yArg, sx, sy, sym, opt, 0, prec, got, nil, iters, &st)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("unconverged on the GPU: %v", bad)
	}
	worst := 0.0
	for k := range want {
		worst = max(worst, accuracy.Err(got[k], want[k], 0))
	}
	bound := accuracy.MGK64
	if prec == Float32 {
		bound = accuracy.MGK32
	}
	if worst > bound {
		t.Errorf("precision %d: worst relative error %.3g > %g", prec, worst, bound)
	}
	return worst, st
}

func TestGPUDevices(t *testing.T) {
	requireGPU(t)
	ds, err := Devices()
	if err != nil || len(ds) == 0 {
		t.Fatal(ds, err)
	}
	for _, d := range ds {
		t.Logf("device %d: %s sm_%d%d, %d SMs, %.1f GiB", d.Index, d.Name, d.Major, d.Minor, d.MultiProcessors, float64(d.Memory)/(1<<30))
	}
}

// TestGPUGramAgainstCPU: every kernel set, q, Lmin, symmetric or not, start
// probabilities, both precisions, the class-table and the evaluated edge
// kernel, against gokernel/mgk.
func TestGPUGramAgainstCPU(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	sx := testgraphs.Starts(X, 5)
	qs := []float64{0.01, 0.1, 0.5}
	if short {
		qs = []float64{0.1}
	}
	for _, ks := range testgraphs.KernelSets {
		opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK)}
		for _, q := range qs {
			for lmin := 0; lmin <= 1; lmin++ {
				for _, sym := range []bool{true, false} {
					for _, prec := range []Precision{Float64, Float32} {
						for _, flags := range []int32{0, 1} {
							name := fmt.Sprintf("%s/q=%g/lmin=%d/sym=%v/p%d/noTable=%d", ks.Name, q, lmin, sym, prec, flags)
							t.Run(name, func(t *testing.T) {
								o := opt
								o.Q, o.Lmin = q, lmin
								w := compare(t, callOptions{flags: flags}, X, Y, sx, nil, sym, o, prec)
								t.Logf("worst relative error %.2g", w)
							})
						}
					}
				}
			}
		}
	}
}

// TestGPUPersistentAndChunks: one persistent block doing every pair, and a
// memory limit that forces many chunks and the Go side's splitting.
func TestGPUPersistentAndChunks(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[2].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[2].EK), Q: 0.05}
	compare(t, callOptions{blocks: 1}, X, Y, nil, nil, false, opt, Float64)
	// Each pair's work space (7 vectors and the class table) fits beside
	// its graphs; the whole call does not.
	for _, y := range [][]*graph.Graph{nil, Y} {
		co := callOptions{memLimit: splittingLimit(t, X, y, 7, 1, 0)}
		var st Stats
		sym := y == nil
		out := make([]float64, len(X)*len(X))
		if !sym {
			out = make([]float64, len(X)*len(y))
		}
		if _, err := gram(co, X, y, nil, nil, sym, opt, 0, Float64, out, nil, nil, &st); err != nil {
			t.Fatal(err)
		}
		t.Logf("symmetric %v, mem_limit %d: %d batches", sym, co.memLimit, st.Batches)
		if st.Batches < 2 {
			t.Errorf("symmetric %v: mem_limit %d did not split the work", sym, co.memLimit)
		}
		compare(t, co, X, y, nil, nil, sym, opt, Float64)
	}
}

// splittingLimit is a device memory limit for a call on X × Y (Y nil: the
// symmetric call on X) under which every single pair fits with its two
// graphs (pairWork, and run_jobs's job list for one job with np gradient
// entries), but the whole call does not: the library must report exhausted
// memory and the bridge must split the call down to blocks that fit. It
// fails the test when the graphs cannot force a split, so that a weaker
// limit is not taken silently.
func splittingLimit(t *testing.T, X, Y []*graph.Graph, vectors, tables, np int64) int64 {
	t.Helper()
	sym := Y == nil
	if sym {
		Y = X
	}
	work := pairWork(t, X, Y, vectors, tables)
	// run_jobs's job list, results and gradients for one job.
	slack := int64(32+24+4) + 8*np + 64
	limit, largest := int64(0), int64(0)
	for i := range X {
		for j := range Y {
			largest = max(largest, work(i, j))
			gb := graphBytes(X[i:i+1]) + graphBytes(Y[j:j+1])
			if sym && i == j {
				gb = graphBytes(X[i : i+1]) // the block of X[i] alone
			}
			limit = max(limit, gb+work(i, j)+slack)
		}
	}
	whole := graphBytes(X) + largest
	if !sym {
		whole += graphBytes(Y)
	}
	if limit >= whole {
		t.Fatalf("mem_limit %d cannot split these graphs: the whole call needs only %d bytes", limit, whole)
	}
	return limit
}

// pairWork returns the device work space of pair (X[i], Y[j]) in bytes as
// ggcuda.cu's run_jobs counts it: vectors vectors of n·n' and tables class
// tables of c·c' doubles (and one for alignment).
func pairWork(t *testing.T, X, Y []*graph.Graph, vectors, tables int64) func(i, j int) int64 {
	t.Helper()
	classes := func(gs []*graph.Graph) []int64 {
		L, err := layout.Pack(gs, nil, testgraphs.Cols, testgraphs.Cols)
		if err != nil {
			t.Fatal(err)
		}
		c := make([]int64, len(gs))
		for i := range gs {
			c[i] = L.Desc[i*layout.DescFields+layout.DescNClass]
		}
		return c
	}
	cx, cy := classes(X), classes(Y)
	return func(i, j int) int64 {
		return 8 * (vectors*int64(X[i].N*Y[j].N) + tables*cx[i]*cy[j] + 1)
	}
}

// compareGrad runs MarginalizedGramGrad against mgk.GramGrad, both solving to
// a residual of 1e-12 (float32: Float32MinTol on the device), and returns the
// worst K and gradient errors. Bounds: K 1e-9 and gradients 1e-6 in float64,
// 1e-4 and 1e-3 in float32 (cuda/README.md).
func compareGrad(t *testing.T, co callOptions, X, Y []*graph.Graph, sx, sy [][]float64, sym bool, opt mgk.Options, prec Precision) (wk, wg float64) {
	t.Helper()
	ny := len(Y)
	var yArg []*graph.Graph
	if sym {
		ny, sy = len(X), sx
	} else {
		yArg = Y
	}
	opt.NJobs, opt.Tol = 0, 1e-12
	np := mgk.NumParams(opt)
	K0, G0 := cpuReference(t, X, yArg, sx, sy, sym, opt, true, func() ([]float64, []float64, error) {
		K0, G0 := make([]float64, len(X)*ny), make([]float64, len(X)*ny*np)
		bad, err := mgk.GramGrad(X, yArg, sx, sy, sym, opt, K0, G0, nil)
		if err == nil && len(bad) > 0 {
			err = fmt.Errorf("unconverged %v", bad)
		}
		return K0, G0, err
	})
	K, G, iters := make([]float64, len(K0)), make([]float64, len(G0)), make([]int32, len(K0))
	bad, err := gram(co, X, yArg, sx, sy, sym, opt, 0, prec, K, G, iters, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("unconverged on the GPU: %v", bad)
	}
	for k := range K0 {
		wk = max(wk, accuracy.Err(K[k], K0[k], 0))
	}
	// Gradients as cuda/hostref's tests measure them: scale the largest |K|
	// or |∂K| of the reference.
	wg, _ = accuracy.Worst(G, G0, accuracy.Scale(K0, G0))
	kb, gb := accuracy.MGK64, accuracy.Grad64
	if prec == Float32 {
		kb, gb = accuracy.MGK32, accuracy.Grad32
	}
	if wk > kb || wg > gb {
		t.Errorf("precision %d: worst relative error K %.3g (bound %g), gradient %.3g (bound %g)", prec, wk, kb, wg, gb)
	}
	return
}

// TestGPUGradAgainstCPU: gradients for every kernel set (and one nesting
// normalizations and every leaf kind), q, Lmin, symmetric or not, start
// probabilities, both precisions and both κe paths, against mgk.GramGrad.
func TestGPUGradAgainstCPU(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	sx := testgraphs.Starts(X, 5)
	qs := []float64{0.01, 0.1, 0.5}
	if short {
		qs = []float64{0.1}
	}
	sets := append(append([]testgraphs.KernelSet(nil), testgraphs.KernelSets...), testgraphs.KernelSet{Name: "nested",
		NK: `{"kind":"normalized","kernel":{"kind":"product","terms":[{"kind":"normalized","kernel":{"kind":"brownian_bridge","c":1.5,"col":3}},{"kind":"sum","terms":[{"kind":"constant","c":0.5},{"kind":"square_exponential","length_scale":0.5,"col":2}]}]}}`,
		EK: `{"kind":"normalized","kernel":{"kind":"sum","terms":[{"kind":"kronecker_delta","h":0.4,"col":0},{"kind":"square_exponential","length_scale":0.9,"col":2},{"kind":"brownian_bridge","c":2.5,"col":3},{"kind":"constant","c":0.2}]}}`})
	for _, ks := range sets {
		opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK)}
		for _, q := range qs {
			for lmin := 0; lmin <= 1; lmin++ {
				for _, sym := range []bool{true, false} {
					for _, prec := range []Precision{Float64, Float32} {
						for _, flags := range []int32{0, 1} {
							name := fmt.Sprintf("%s/q=%g/lmin=%d/sym=%v/p%d/noTable=%d", ks.Name, q, lmin, sym, prec, flags)
							t.Run(name, func(t *testing.T) {
								o := opt
								o.Q, o.Lmin = q, lmin
								wk, wg := compareGrad(t, callOptions{flags: flags}, X, Y, sx, nil, sym, o, prec)
								t.Logf("worst relative error K %.2g, gradient %.2g", wk, wg)
							})
						}
					}
				}
			}
		}
	}
}

// TestGPUGradChunks: gradients with one persistent block, and under a memory
// limit that forces chunks and the Go side's splitting (8 vectors and two
// class tables a pair).
func TestGPUGradChunks(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[2].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[2].EK), Q: 0.05, Lmin: 1}
	compareGrad(t, callOptions{blocks: 1}, X, Y, nil, nil, false, opt, Float64)
	np := mgk.NumParams(opt)
	// Each pair's work space (8 vectors and two class tables) fits beside
	// its graphs; the whole call does not.
	for _, y := range [][]*graph.Graph{nil, Y} {
		co := callOptions{memLimit: splittingLimit(t, X, y, 8, 2, int64(np))}
		sym, ny := y == nil, len(y)
		if sym {
			ny = len(X)
		}
		out, grad := make([]float64, len(X)*ny), make([]float64, len(X)*ny*np)
		var st Stats
		if _, err := gram(co, X, y, nil, nil, sym, opt, 0, Float64, out, grad, nil, &st); err != nil {
			t.Fatal(err)
		}
		t.Logf("symmetric %v, mem_limit %d: %d batches", sym, co.memLimit, st.Batches)
		if st.Batches < 2 {
			t.Errorf("symmetric %v: mem_limit %d did not split the work", sym, co.memLimit)
		}
		compareGrad(t, co, X, y, nil, nil, sym, opt, Float64)
	}
}

// compareNodal runs MarginalizedNodal against mgk.Nodal (both to a residual
// of 1e-12, float32 Float32MinTol on the device) and returns the worst error
// |got − want| / (|want| + 1e-3·max|want|); bounds 1e-9 (float64) and 1e-4
// (float32).
func compareNodal(t *testing.T, co callOptions, X, Y []*graph.Graph, sx, sy [][]float64, sym bool, opt mgk.Options, prec Precision) float64 {
	t.Helper()
	var yArg []*graph.Graph
	ys := X
	if sym {
		sy = sx
	} else {
		yArg, ys = Y, Y
	}
	nodes := func(gs []*graph.Graph) int {
		n := 0
		for _, g := range gs {
			n += g.N
		}
		return n
	}
	opt.NJobs, opt.Tol = 0, 1e-12
	want := make([]float64, nodes(X)*nodes(ys))
	if bad, err := mgk.Nodal(X, yArg, sx, sy, sym, opt, want); err != nil || len(bad) > 0 {
		t.Fatalf("CPU: %v %v", err, bad)
	}
	got := make([]float64, len(want))
	for k := range got {
		got[k] = math.NaN() // every entry must be written
	}
	bad, err := nodal(co, X, yArg, sx, sy, sym, opt, 0, prec, got)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("unconverged on the GPU: %v", bad)
	}
	worst, at := accuracy.Worst(got, want, accuracy.Scale(want))
	if math.IsNaN(worst) {
		t.Fatalf("entry %d not written (%v, want %v)", at, got[at], want[at])
	}
	bound := accuracy.MGK64
	if prec == Float32 {
		bound = accuracy.MGK32
	}
	if worst > bound {
		t.Errorf("precision %d: worst nodal error %.3g > %g", prec, worst, bound)
	}
	return worst
}

// TestGPUNodal: node-pair similarities for every kernel set, Lmin,
// symmetric or not, start probabilities, both precisions and κe paths,
// against mgk.Nodal, and under a memory limit that splits the matrix.
func TestGPUNodal(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	sx := testgraphs.Starts(X, 5)
	for _, ks := range testgraphs.KernelSets {
		opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1}
		for lmin := 0; lmin <= 1; lmin++ {
			for _, sym := range []bool{true, false} {
				for _, prec := range []Precision{Float64, Float32} {
					for _, flags := range []int32{0, 1} {
						if flags == 1 && (prec == Float32 || short && ks.Name != "continuous") {
							continue
						}
						t.Run(fmt.Sprintf("%s/lmin=%d/sym=%v/p%d/noTable=%d", ks.Name, lmin, sym, prec, flags), func(t *testing.T) {
							o := opt
							o.Lmin = lmin
							t.Logf("worst error %.2g", compareNodal(t, callOptions{flags: flags}, X, Y, sx, nil, sym, o, prec))
						})
					}
				}
			}
		}
	}
	t.Run("mem_limit", func(t *testing.T) {
		// The graphs, the largest pair's work space and half of the nodal
		// matrix fit, the whole matrix beside the work does not: the bridge
		// must split the call (an error here means it did not, or wrongly).
		n, nmax := 0, 0
		for _, g := range X {
			n += g.N
			nmax = max(nmax, g.N)
		}
		LX, _ := layout.Pack(X, nil, testgraphs.Cols, testgraphs.Cols)
		cmax := int64(0)
		for i := range X {
			cmax = max(cmax, LX.Desc[i*layout.DescFields+layout.DescNClass])
		}
		var calls atomic.Int64
		co := callOptions{memLimit: graphBytes(X) + 8*(int64(7*nmax*nmax)+cmax*cmax) + 4096 + int64(8*n*n/2), calls: &calls}
		opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[2].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[2].EK), Q: 0.1}
		compareNodal(t, co, X, nil, sx, nil, true, opt, Float64)
		if c := calls.Load(); c < 2 {
			t.Errorf("mem_limit %d: the nodal matrix took %d library call(s), not split", co.memLimit, c)
		}
		// X × Y: the same for both lists, their largest pair (Y holds a
		// 150-node graph) and half of their nodal matrix.
		m := 0
		for _, g := range Y {
			m += g.N
		}
		work, largest := pairWork(t, X, Y, 7, 1), int64(0)
		for i := range X {
			for j := range Y {
				largest = max(largest, work(i, j))
			}
		}
		calls.Store(0)
		co.memLimit = graphBytes(X) + graphBytes(Y) + largest + 4096 + int64(8*n*m/2)
		compareNodal(t, co, X, Y, sx, nil, false, opt, Float64)
		if c := calls.Load(); c < 2 {
			t.Errorf("mem_limit %d: the nodal matrix X × Y took %d library call(s), not split", co.memLimit, c)
		}
	})
}

// TestGPUUnconverged: a capped iteration count reports the same pairs as the
// CPU's Jacobi solver, the GPU's (the CPU's default counts its iterations
// otherwise: SGS, and two solves in lockstep for K).
func TestGPUUnconverged(t *testing.T) {
	requireGPU(t)
	X, _ := suiteGraphs()
	opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[1].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[1].EK), Q: 0.01, MaxIter: 3,
		Solver: mgk.SolverJacobi}
	out := make([]float64, len(X)*len(X))
	cpu, err := mgk.Gram(X, nil, nil, nil, true, opt, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := MarginalizedGram(X, nil, nil, nil, true, opt, 0, Float64, out)
	if err != nil {
		t.Fatal(err)
	}
	key := func(us []mgk.Unconverged) []string {
		var s []string
		for _, u := range us {
			s = append(s, fmt.Sprintf("%d,%d", u.I, u.J))
		}
		sort.Strings(s)
		return s
	}
	if fmt.Sprint(key(cpu)) != fmt.Sprint(key(gpu)) {
		t.Errorf("unconverged pairs: CPU %v, GPU %v", key(cpu), key(gpu))
	}
}

// TestGPUTimings logs CUDA-event timings against the CPU backend on a
// molecule-sized set and on large pairs. It checks agreement, not speed.
func TestGPUTimings(t *testing.T) {
	requireGPU(t)
	if short {
		t.Skip("timings are not taken under compute-sanitizer")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	var mol []*graph.Graph
	for i := 0; i < 200; i++ {
		n := 10 + rng.IntN(20)
		mol = append(mol, testgraphs.Random(rng, n, n+n/4, false))
	}
	var big []*graph.Graph
	for i := 0; i < 6; i++ {
		big = append(big, testgraphs.Random(rng, 300+50*i, 1200, false))
	}
	for _, set := range []struct {
		name string
		gs   []*graph.Graph
	}{{"200 molecule-sized graphs", mol}, {"6 graphs of 300-550 nodes", big}} {
		for _, ks := range testgraphs.KernelSets[1:] {
			opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.05}
			n := len(set.gs)
			want := make([]float64, n*n)
			t0 := time.Now()
			if _, err := mgk.Gram(set.gs, nil, nil, nil, true, opt, want, nil); err != nil {
				t.Fatal(err)
			}
			cpu := time.Since(t0)
			for _, prec := range []Precision{Float64, Float32} {
				got := make([]float64, n*n)
				var st Stats
				t1 := time.Now()
				if _, err := MarginalizedGramStats(set.gs, nil, nil, nil, true, opt, 0, prec, got, nil, &st); err != nil {
					t.Fatal(err)
				}
				wall := time.Since(t1)
				worst := 0.0
				for k := range want {
					worst = max(worst, accuracy.Err(got[k], want[k], 0))
				}
				t.Logf("%s, %s kernels, float%d: CPU %v; GPU wall %v (upload %.2f ms, solve %.2f ms, download %.2f ms, %d blocks, %d pairs on warps, %d on grids); worst rel err %.2g",
					set.name, ks.Name, prec, cpu.Round(time.Millisecond), wall.Round(time.Millisecond), st.UploadMS, st.SolveMS, st.DownloadMS, st.Blocks, st.WarpPairs, st.WidePairs, worst)
			}
		}
	}
}

// TestGPUShortestPath: the shortest-path kernel on the device (all pairs on the
// GPU, the default hybrid split, and all on the CPU) against gokernel/spkernel,
// with a memory limit that forces chunks and splitting.
func TestGPUShortestPath(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	rng := rand.New(rand.NewPCG(51, 52))
	if short {
		X = append(X, testgraphs.Random(rng, 20, 30, false))
	} else {
		X = append(X, testgraphs.Random(rng, 60, 90, false), testgraphs.Random(rng, 200, 300, false))
	}
	works := []int64{-1, 0, 1 << 40}
	if short {
		works = works[:2]
	}
	precs := []Precision{Float64, Float32}
	nks := []string{"", `{"kind":"kronecker_delta","h":0,"col":0}`, `{"kind":"product","terms":[{"kind":"kronecker_delta","h":0.3,"col":1},{"kind":"square_exponential","length_scale":1.2,"col":2}]}`}
	lks := []string{"", `{"kind":"square_exponential","length_scale":0.7,"col":0}`}
	for ni, nk := range nks {
		for li, lk := range lks {
			for _, wc := range []int{spkernel.HopCounts, spkernel.GraphWeight} {
				for _, sym := range []bool{true, false} {
					for wi, work := range works {
						for _, prec := range precs {
							if prec == Float32 && short && wi > 0 {
								continue // emulated: float32 all on the GPU only
							}
							t.Run(fmt.Sprintf("node%d/len%d/w%d/sym=%v/cpuwork=%d/float%d", ni, li, wc, sym, work, prec), func(t *testing.T) {
								opt := spkernel.Options{WeightCol: wc}
								if nk != "" {
									opt.NodeKernel = testgraphs.Parse(nk)
								}
								if lk != "" {
									opt.LengthKernel = testgraphs.Parse(lk)
								}
								ys := Y
								if sym {
									ys = X
								}
								want := make([]float64, len(X)*len(ys))
								if err := spkernel.Gram(X, ys, sym, opt, want); err != nil {
									t.Fatal(err)
								}
								got := make([]float64, len(want))
								var st Stats
								if err := ShortestPathGram(X, ys, sym, opt, 0, prec, SPHybrid{CPUWork: work}, got, &st); err != nil {
									t.Fatal(err)
								}
								for k := range want {
									if !(accuracy.Err(got[k], want[k], 0) <= spTol[prec]) {
										t.Errorf("K[%d][%d] = %v, spkernel %v", k/len(ys), k%len(ys), got[k], want[k])
									}
								}
								t.Logf("GPU: %d call(s), %d chunk(s), stages %.2f ms", st.Batches, st.Chunks, st.SolveMS)
							})
						}
					}
				}
			}
		}
	}
	// Splitting under a memory limit: about half the SP graphs' bytes (as
	// ggcuda.cu's sp_bytes counts them) plus a pair's tables.
	Ls, _, err := layout.SP([][]*graph.Graph{X}, spkernel.HopCounts, testgraphs.Cols, 0)
	if err != nil {
		t.Fatal(err)
	}
	nmax := 0
	for _, g := range X {
		nmax = max(nmax, g.N)
	}
	spb := 16*int64(len(X)+1) + 12*Ls[0].TotalSP + 8*Ls[0].TotalNodes*testgraphs.Cols
	co := callOptions{memLimit: spb/2 + int64(16*nmax*nmax)}
	opt := spkernel.Options{WeightCol: spkernel.HopCounts, NodeKernel: testgraphs.Parse(nks[2]), LengthKernel: testgraphs.Parse(lks[1])}
	want := make([]float64, len(X)*len(X))
	if err := spkernel.Gram(X, nil, true, opt, want); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(want))
	var st Stats
	if err := shortestPath(co, X, nil, true, opt, 0, Float64, SPHybrid{CPUWork: -1}, got, &st); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if !(accuracy.Err(got[k], want[k], 0) <= spTol[Float64]) {
			t.Errorf("mem_limit: K[%d] = %v, spkernel %v", k, got[k], want[k])
		}
	}
	t.Logf("mem_limit %d: %d GPU calls", co.memLimit, st.Batches)
	if st.Batches < 2 {
		t.Errorf("mem_limit %d did not split the work", co.memLimit)
	}
}

// spTol is the relative error the device's shortest-path kernel must stay
// within against spkernel, by precision (README: float32's accumulation bound
// is (7 + 32)·2⁻²⁴ ≈ 2.3e-6 for nonnegative base kernels).
var spTol = map[Precision]float64{Float64: accuracy.SP64, Float32: accuracy.SP32}

// spStreamLimit is a memory limit (bytes) under which ShortestPathGram of X
// (symmetric, all on the GPU, one library call) fits its graphs and length
// table but only about `pairs` of the largest pairs' node-kernel matrices at
// once, so that the pipeline runs many chunks: ggcuda.cu's accounting, with
// the bridge's two lists (X and Y are uploaded separately).
func spStreamLimit(t *testing.T, X []*graph.Graph, wc int, prec Precision, pairs int64) int64 {
	Ls, lengths, err := layout.SP([][]*graph.Graph{X}, wc, testgraphs.Cols, 0)
	if err != nil {
		t.Fatal(err)
	}
	nmax := int64(0)
	for _, g := range X {
		nmax = max(nmax, int64(g.N))
	}
	spb := 16*int64(len(X)+1) + 12*Ls[0].TotalSP + 8*Ls[0].TotalNodes*testgraphs.Cols
	L := int64(len(lengths))
	np := int64(len(X) * (len(X) + 1) / 2)
	size := int64(prec / 8)
	return 2*spb + size*L*L + np*32 + 64 + pairs*size*nmax*nmax
}

// TestGPUShortestPathStreams: the streamed pipeline (uploads on a copy stream
// overlapping the stages of the previous chunk, per-chunk downloads) with a
// memory limit that cuts the pairs into many chunks, in both precisions,
// against spkernel; the graphs are uploaded chunk by chunk as pairs need them.
func TestGPUShortestPathStreams(t *testing.T) {
	requireGPU(t)
	rng := rand.New(rand.NewPCG(53, 54))
	var X []*graph.Graph
	for i := 0; i < 12; i++ {
		n := 4 + rng.IntN(20)
		X = append(X, testgraphs.Random(rng, n, n+rng.IntN(2*n), i%2 == 0))
	}
	opt := spkernel.Options{WeightCol: spkernel.HopCounts, NodeKernel: testgraphs.Parse(`{"kind":"square_exponential","length_scale":1.2,"col":2}`),
		LengthKernel: testgraphs.Parse(`{"kind":"square_exponential","length_scale":0.7,"col":0}`)}
	want := make([]float64, len(X)*len(X))
	if err := spkernel.Gram(X, nil, true, opt, want); err != nil {
		t.Fatal(err)
	}
	for _, prec := range []Precision{Float64, Float32} {
		co := callOptions{memLimit: spStreamLimit(t, X, opt.WeightCol, prec, 3)}
		got := make([]float64, len(want))
		var st Stats
		if err := shortestPath(co, X, nil, true, opt, 0, prec, SPHybrid{CPUWork: -1}, got, &st); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for k := range want {
			e := accuracy.Err(got[k], want[k], 0)
			worst = max(worst, e)
			if !(e <= spTol[prec]) {
				t.Errorf("float%d: K[%d][%d] = %v, spkernel %v", prec, k/len(X), k%len(X), got[k], want[k])
			}
		}
		t.Logf("float%d, mem_limit %d: %d call(s), %d chunks; upload %.2f ms, stages %.2f ms, download %.2f ms, wall %.2f ms, overlap %.2f ms; worst rel err %.2g",
			prec, co.memLimit, st.Batches, st.Chunks, st.UploadMS, st.SolveMS, st.DownloadMS, st.WallMS, st.OverlapMS, worst)
		if st.Batches != 1 || st.Chunks < 5 {
			t.Errorf("float%d: %d call(s) and %d chunks, want 1 call of at least 5 chunks", prec, st.Batches, st.Chunks)
		}
		if st.WallMS <= 0 || st.UploadMS <= 0 || st.SolveMS <= 0 || st.DownloadMS <= 0 {
			t.Errorf("float%d: timings not reported: %+v", prec, st)
		}
	}
}

// TestGPUShortestPathOrderEmulated shows that the streamed pipeline's tests can
// fail: the emulated runtime (emu_runtime.h) poisons the destination of an
// asynchronous copy until the copy stream reaches it, and the emulated
// library's test switch GGCUDA_EMU_SKIP_UPLOAD_WAIT drops the compute stream's
// wait for each chunk's uploads. The results must then be wrong. Emulated
// library only (the switch is not compiled into the real one).
func TestGPUShortestPathOrderEmulated(t *testing.T) {
	requireGPU(t)
	if ds, err := Devices(); err != nil || len(ds) == 0 || ds[0].Name != "graphgram host emulation" {
		t.Skip("needs the host-emulated library")
	}
	rng := rand.New(rand.NewPCG(55, 56))
	var X []*graph.Graph
	for i := 0; i < 8; i++ {
		X = append(X, testgraphs.Random(rng, 6+i, 12+2*i, false))
	}
	opt := spkernel.Options{WeightCol: spkernel.HopCounts}
	want := make([]float64, len(X)*len(X))
	if err := spkernel.Gram(X, nil, true, opt, want); err != nil {
		t.Fatal(err)
	}
	run := func() (bad int) {
		co := callOptions{memLimit: spStreamLimit(t, X, opt.WeightCol, Float64, 2)}
		got := make([]float64, len(want))
		var st Stats
		if err := shortestPath(co, X, nil, true, opt, 0, Float64, SPHybrid{CPUWork: -1}, got, &st); err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if !(accuracy.Err(got[k], want[k], 0) <= spTol[Float64]) {
				bad++
			}
		}
		t.Logf("%d chunks, %d of %d entries wrong", st.Chunks, bad, len(want))
		return bad
	}
	if bad := run(); bad != 0 {
		t.Fatalf("with the waits: %d wrong entries", bad)
	}
	t.Setenv("GGCUDA_EMU_SKIP_UPLOAD_WAIT", "1")
	if bad := run(); bad == 0 {
		t.Errorf("without the compute stream's waits for the uploads the results were still right: the test cannot see a missing dependency")
	}
}

// spTimingSet is the shortest-path workload of the timings and benchmarks:
// 40 random graphs of 40–159 nodes, Gaussian node and length kernels, hop
// counts.
func spTimingSet() ([]*graph.Graph, spkernel.Options) {
	rng := rand.New(rand.NewPCG(61, 62))
	var gs []*graph.Graph
	for i := 0; i < 40; i++ {
		n := 40 + rng.IntN(120)
		gs = append(gs, testgraphs.Random(rng, n, 2*n, false))
	}
	return gs, spkernel.Options{WeightCol: spkernel.HopCounts, NodeKernel: testgraphs.Parse(`{"kind":"square_exponential","length_scale":1.0,"col":2}`),
		LengthKernel: testgraphs.Parse(`{"kind":"square_exponential","length_scale":1.0,"col":0}`)}
}

// TestGPUShortestPathTimings logs the FCSP stages' time against the CPU.
func TestGPUShortestPathTimings(t *testing.T) {
	requireGPU(t)
	if short {
		t.Skip("timings are not taken under compute-sanitizer")
	}
	gs, opt := spTimingSet()
	n := len(gs)
	want := make([]float64, n*n)
	t0 := time.Now()
	if err := spkernel.Gram(gs, nil, true, opt, want); err != nil {
		t.Fatal(err)
	}
	cpu := time.Since(t0)
	for _, prec := range []Precision{Float64, Float32} {
		for _, work := range []int64{-1, 0} {
			got := make([]float64, n*n)
			var st Stats
			t1 := time.Now()
			if err := ShortestPathGram(gs, nil, true, opt, 0, prec, SPHybrid{CPUWork: work}, got, &st); err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for k := range want {
				worst = max(worst, accuracy.Err(got[k], want[k], 0))
			}
			t.Logf("SP, 40 graphs of 40-160 nodes, float%d, cpuwork=%d: CPU %v; hybrid wall %v (GPU: %d chunks, upload %.2f ms, stages %.2f ms, download %.2f ms, pipeline wall %.2f ms, overlap %.2f ms); worst rel err %.2g",
				prec, work, cpu.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond), st.Chunks, st.UploadMS, st.SolveMS, st.DownloadMS, st.WallMS, st.OverlapMS, worst)
			if !(worst <= spTol[prec]) {
				t.Errorf("float%d: worst relative error %.2g", prec, worst)
			}
		}
		// The pipeline with many chunks (a memory limit holding the node-kernel
		// matrices of about 40 of the largest pairs): the overlap of uploads,
		// stages and downloads.
		co := callOptions{memLimit: spStreamLimit(t, gs, opt.WeightCol, prec, 40)}
		got := make([]float64, n*n)
		var st Stats
		t1 := time.Now()
		if err := shortestPath(co, gs, nil, true, opt, 0, prec, SPHybrid{CPUWork: -1}, got, &st); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for k := range want {
			worst = max(worst, accuracy.Err(got[k], want[k], 0))
		}
		t.Logf("SP streamed, float%d: wall %v (%d call(s), %d chunks, upload %.2f ms, stages %.2f ms, download %.2f ms, pipeline wall %.2f ms, overlap %.2f ms); worst rel err %.2g",
			prec, time.Since(t1).Round(time.Millisecond), st.Batches, st.Chunks, st.UploadMS, st.SolveMS, st.DownloadMS, st.WallMS, st.OverlapMS, worst)
		if !(worst <= spTol[prec]) {
			t.Errorf("streamed float%d: worst relative error %.2g", prec, worst)
		}
	}
}

// TestGPUDiag: K(X[i], X[i]) against mgk.Diag.
func TestGPUDiag(t *testing.T) {
	requireGPU(t)
	X, _ := suiteGraphs()
	sx := testgraphs.Starts(X, 7)
	for _, ks := range testgraphs.KernelSets {
		compareDiag(t, ks.Name, X, sx, mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.05})
	}
}

// compareDiag checks MarginalizedDiag against mgk.Diag in float64.
func compareDiag(t *testing.T, name string, X []*graph.Graph, sx [][]float64, opt mgk.Options) {
	t.Helper()
	want := make([]float64, len(X))
	if _, err := mgk.Diag(X, sx, opt, want); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(X))
	bad, err := MarginalizedDiag(X, sx, opt, 0, Float64, got)
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	for i := range want {
		if accuracy.Err(got[i], want[i], 0) > accuracy.MGK64 {
			t.Errorf("%s: K[%d][%d] = %v, CPU %v", name, i, i, got[i], want[i])
		}
	}
}

// TestGPURenumbered: calls whose graphs the device renumbers before packing
// (renumber.go: ReorderMinNodes nodes or more) against the CPU, with start
// probabilities on some graphs: the Gram matrix (symmetric and X × Y), its
// gradient, the diagonal and the nodal matrix (mapped back to the graphs'
// node order), in float64, labels and continuous kernels. Small enough for
// the emulated library (make test-cuda-host runs it there).
func TestGPURenumbered(t *testing.T) {
	requireGPU(t)
	rng := rand.New(rand.NewPCG(91, 92))
	X := []*graph.Graph{testgraphs.Random(rng, ReorderMinNodes+6, 100, true), testgraphs.Random(rng, 9, 14, false),
		testgraphs.Random(rng, ReorderMinNodes, 90, false)}
	Y := []*graph.Graph{testgraphs.Random(rng, 12, 20, false), testgraphs.Random(rng, ReorderMinNodes+1, 95, true)}
	sx, sy := testgraphs.Starts(X, 3), testgraphs.Starts(Y, 4)
	sx[0] = testgraphs.Starts([]*graph.Graph{nil, X[0]}, 5)[1] // Starts leaves even indices uniform
	for _, side := range []struct {
		gs []*graph.Graph
		n  int // partners
	}{{X, len(Y)}, {Y, len(X)}} {
		r, err := renumber(renumbered{graphs: side.gs}, side.n, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range side.gs {
			if (r.perms[i] != nil) != (g.N >= ReorderMinNodes) {
				t.Fatalf("graph of %d nodes: renumbered %v; the test needs every large graph renumbered", g.N, r.perms[i] != nil)
			}
		}
	}
	for _, ks := range testgraphs.KernelSets[1:] {
		opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1}
		for _, sym := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/sym=%v", ks.Name, sym), func(t *testing.T) {
				compare(t, callOptions{}, X, Y, sx, sy, sym, opt, Float64)
				compareGrad(t, callOptions{}, X, Y, sx, sy, sym, opt, Float64)
				compareNodal(t, callOptions{}, X, Y, sx, sy, sym, opt, Float64)
			})
		}
		compareDiag(t, ks.Name, X, sx, opt)
	}
}

// TestGPUQuotients: graphs with symmetries are solved on the device as
// their colour-refinement quotients (Stats: fewer nodes solved than given),
// as the CPU solves them, with the CPU's values: Gram (warp, block and grid
// solvers), gradient and diagonal against the CPU's quotient solves, and
// Gram against the CPU on the graphs as given (mgk.QuotientOff), Lmin 0
// and 1, start probabilities that keep the symmetry, both precisions;
// nodal matrices (no quotients) stay right on the same graphs. With
// mgk.QuotientOff the device solves the graphs as given.
func TestGPUQuotients(t *testing.T) {
	requireGPU(t)
	X := testgraphs.Symmetric(ReorderMinNodes / 2)
	Y := testgraphs.Symmetric(6)[1:]
	sx, sy := testgraphs.SymmetricStarts(X), testgraphs.SymmetricStarts(Y)
	given := func(gs []*graph.Graph) (n int) {
		for _, g := range gs {
			n += g.N
		}
		return n
	}
	for _, ks := range testgraphs.KernelSets[1:] {
		for lmin := 0; lmin <= 1; lmin++ {
			opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1, Lmin: lmin}
			for _, sym := range []bool{true, false} {
				want := given(X)
				if !sym {
					want += given(Y)
				}
				for _, prec := range []Precision{Float64, Float32} {
					for _, co := range []struct {
						name string
						co   callOptions
					}{{"default", callOptions{}}, {"no warps", callOptions{flags: 4}}, {"wide", callOptions{flags: 8}}} {
						t.Run(fmt.Sprintf("%s/lmin=%d/sym=%v/p%d/%s", ks.Name, lmin, sym, prec, co.name), func(t *testing.T) {
							_, st := compareStats(t, co.co, X, Y, sx, sy, sym, opt, prec)
							if st.GivenNodes != want || st.QuotientNodes >= st.GivenNodes {
								t.Errorf("solved %d nodes of %d given (want %d given, fewer solved)", st.QuotientNodes, st.GivenNodes, want)
							}
						})
					}
				}
				t.Run(fmt.Sprintf("%s/lmin=%d/sym=%v/as given", ks.Name, lmin, sym), func(t *testing.T) {
					ys, sys, ny := Y, sy, len(Y)
					if sym {
						ys, sys, ny = nil, sx, len(X)
					}
					off := opt
					off.Quotient = mgk.QuotientOff
					cpu := make([]float64, len(X)*ny)
					if bad, err := mgk.Gram(X, ys, sx, sys, sym, off, cpu, nil); err != nil || len(bad) > 0 {
						t.Fatal(err, bad)
					}
					for _, o := range []mgk.Options{opt, off} {
						got := make([]float64, len(cpu))
						var st Stats
						if bad, err := MarginalizedGramStats(X, ys, sx, sys, sym, o, 0, Float64, got, nil, &st); err != nil || len(bad) > 0 {
							t.Fatal(err, bad)
						}
						if solved := st.QuotientNodes < st.GivenNodes; solved != (o.Quotient != mgk.QuotientOff) {
							t.Errorf("quotient mode %d: solved %d nodes of %d", o.Quotient, st.QuotientNodes, st.GivenNodes)
						}
						for k := range cpu {
							if e := accuracy.Err(got[k], cpu[k], 0); e > accuracy.MGK64 {
								t.Errorf("quotient mode %d: entry %d is %v, CPU as given %v (relative error %.2g)", o.Quotient, k, got[k], cpu[k], e)
							}
						}
					}
				})
				t.Run(fmt.Sprintf("%s/lmin=%d/sym=%v/gradient, nodal", ks.Name, lmin, sym), func(t *testing.T) {
					compareGrad(t, callOptions{}, X, Y, sx, sy, sym, opt, Float64)
					compareNodal(t, callOptions{}, X, Y, sx, sy, sym, opt, Float64)
				})
			}
			compareDiag(t, ks.Name, X, sx, opt)
		}
	}
}

// TestGPUWarpSolver: a Gram matrix of many small pairs is solved one warp a
// pair (Stats.WarpPairs: every pair, at a persistent grid of one block, and
// the small ones beside a larger graph's pairs on the block solver), equal
// to the CPU within the contract, both precisions and κe paths, with start
// probabilities; GGC_FLAG_NO_WARP puts every pair on the block solver.
func TestGPUWarpSolver(t *testing.T) {
	requireGPU(t)
	rng := rand.New(rand.NewPCG(93, 94))
	var X []*graph.Graph
	for i := range 12 {
		X = append(X, testgraphs.Random(rng, 4+i, 6+2*i, i%3 == 0))
	}
	sx := testgraphs.Starts(X, 6)
	big := append(slices.Clip(X), testgraphs.Random(rng, 30, 150, false)) // with the larger graphs, over WARP_MAX_TERMS
	nbig := len(big)
	for _, ks := range testgraphs.KernelSets[1:] {
		opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1}
		for _, prec := range []Precision{Float64, Float32} {
			for _, flags := range []int32{0, 1} { // 1: GGC_FLAG_NO_TABLE
				for _, c := range []struct {
					name      string
					gs        []*graph.Graph
					starts    [][]float64
					co        callOptions
					warpPairs func(n int) bool
				}{
					{"one block", X, sx, callOptions{flags: flags, blocks: 1}, func(n int) bool { return n == len(X)*(len(X)+1)/2 }},
					{"beside large pairs", big, nil, callOptions{flags: flags, blocks: 1}, func(n int) bool { return n > 0 && n < nbig*(nbig+1)/2 }},
					{"no warps", X, sx, callOptions{flags: flags | 4, blocks: 1}, func(n int) bool { return n == 0 }}, // 4: GGC_FLAG_NO_WARP
				} {
					t.Run(fmt.Sprintf("%s/%s/p%d/noTable=%d", ks.Name, c.name, prec, flags), func(t *testing.T) {
						_, st := compareStats(t, c.co, c.gs, nil, c.starts, nil, true, opt, prec)
						if n := len(c.gs); !c.warpPairs(st.WarpPairs) {
							t.Errorf("%d of %d pairs solved one warp a pair", st.WarpPairs, n*(n+1)/2)
						}
					})
				}
			}
		}
	}
}

// TestGPUWide: every Gram pair solved by a grid of blocks
// (GGC_FLAG_WIDE_ALL; Stats.WidePairs counts them) against the CPU: both
// precisions and κe paths, Lmin 0 and 1, symmetric or not, start
// probabilities; and the nodal matrix, whose solves take the same path.
func TestGPUWide(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	if !short {
		X, Y = X[:8], Y[:6]
	}
	sx := testgraphs.Starts(X, 8)
	var sy [][]float64 // Y's uniform; a symmetric call takes sx
	for _, ks := range testgraphs.KernelSets[1:] {
		for _, lmin := range []int{0, 1} {
			opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1, Lmin: lmin}
			for _, sym := range []bool{true, false} {
				for _, prec := range []Precision{Float64, Float32} {
					for _, flags := range []int32{8, 8 | 1} { // GGC_FLAG_WIDE_ALL, | GGC_FLAG_NO_TABLE
						t.Run(fmt.Sprintf("%s/lmin=%d/sym=%v/p%d/flags=%d", ks.Name, lmin, sym, prec, flags), func(t *testing.T) {
							_, st := compareStats(t, callOptions{flags: flags}, X, Y, sx, sy, sym, opt, prec)
							pairs := len(X) * len(Y)
							if sym {
								pairs = len(X) * (len(X) + 1) / 2
							}
							if st.WidePairs != pairs || st.WarpPairs != 0 {
								t.Errorf("%d of %d pairs solved by a grid (%d on warps)", st.WidePairs, pairs, st.WarpPairs)
							}
							if prec == Float64 && lmin == 0 {
								compareNodal(t, callOptions{flags: flags}, X, Y, sx, sy, sym, opt, prec)
							}
						})
					}
				}
			}
		}
	}
}

// stagePlanGPU returns a stage limit (bytes) that splits the pairs of the
// call (X, Y; Y nil: symmetric, i ≤ j) about in half by the shared memory
// their tiles take (testgraphs.StageBytes, src/mgk.cuh's stage_pair_bytes),
// and how many pairs fit it.
func stagePlanGPU(t *testing.T, X, Y []*graph.Graph, prec Precision) (limit int32, staged, pairs int) {
	t.Helper()
	LX, err := layout.Pack(X, nil, testgraphs.Cols, testgraphs.Cols)
	if err != nil {
		t.Fatal(err)
	}
	LY, ny := LX, len(X)
	if Y != nil {
		if LY, err = layout.Pack(Y, nil, testgraphs.Cols, testgraphs.Cols); err != nil {
			t.Fatal(err)
		}
		ny = len(Y)
	}
	vb := int64(8)
	if prec == Float32 {
		vb = 4
	}
	var sizes []int64
	for i := range X {
		for j := 0; j < ny; j++ {
			if Y != nil || j >= i {
				sizes = append(sizes, testgraphs.StageBytes(LX, i, LY, j, vb))
			}
		}
	}
	sort.Slice(sizes, func(a, b int) bool { return sizes[a] < sizes[b] })
	limit = int32(sizes[len(sizes)/2])
	for _, s := range sizes {
		if s <= int64(limit) {
			staged++
		}
	}
	if staged == 0 || staged == len(sizes) {
		t.Fatalf("stage limit %d does not split the pairs (sizes %v)", limit, sizes)
	}
	return limit, staged, len(sizes)
}

// TestGPUStaging: the solver blocks' staging of a pair's octiles in shared
// memory forced off (every pair reads global memory), as the device allows
// (every pair of the suite fits on sm_80 and later and in the emulation),
// and limited so that about half of a call's pairs are staged while the
// others, in the same launches, read global memory; Gram, gradients and
// nodal matrices against the CPU, in both precisions and both κe paths, on
// the edge-case graphs, dense tiles and very unequal pairs. The pairs the
// device reports as staged (Stats.StagedPairs, from the solver blocks) must
// be the planned ones. A last case stages a pair of more than 48 KiB, which
// needs the kernel's opt-in (cudaFuncSetAttribute) on devices that allow it.
func TestGPUStaging(t *testing.T) {
	requireGPU(t)
	ds, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	// Devices with 128 KiB or more of shared memory an SM (sm_80, sm_90) and
	// the emulation (compute capability 0.0, an sm_80's shared memory).
	roomy := ds[0].Major >= 8 || ds[0].Major == 0
	X, Y := suiteGraphs()
	// Very unequal pairs, in the short (emulated) runs too.
	X = append(X, testgraphs.Random(rand.New(rand.NewPCG(63, 64)), 40, 100, true))
	sx := testgraphs.Starts(X, 5)
	ks := testgraphs.KernelSets[1]
	opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1}
	for _, sym := range []bool{false, true} {
		for _, prec := range []Precision{Float64, Float32} {
			for _, flags := range []int32{0, 1} { // 1: GGC_FLAG_NO_TABLE
				var yArg []*graph.Graph
				ny, sy := len(X), sx
				if !sym {
					yArg, ny, sy = Y, len(Y), nil
				}
				split, nsplit, pairs := stagePlanGPU(t, X, yArg, prec)
				for _, mode := range []struct {
					name  string
					limit int32
					want  int // -1: at least one
				}{{"off", -1, 0}, {"split", split, nsplit}, {"device", 0, -1}} {
					if roomy && mode.limit == 0 {
						mode.want = pairs
					}
					t.Run(fmt.Sprintf("sym=%v/p%d/noTable=%d/%s", sym, prec, flags, mode.name), func(t *testing.T) {
						// The block solver stages; the warp solver, which
						// would take the small pairs, does not.
						co := callOptions{flags: flags | 4, stageLimit: mode.limit} // 4: GGC_FLAG_NO_WARP
						want := make([]float64, len(X)*ny)
						o := opt
						o.NJobs = 0
						if bad, err := mgk.Gram(X, yArg, sx, sy, sym, o, want, nil); err != nil || len(bad) > 0 {
							t.Fatalf("CPU: %v %v", err, bad)
						}
						got := make([]float64, len(want))
						var st Stats
						if _, err := gram(co, X, yArg, sx, sy, sym, o, 0, prec, got, nil, nil, &st); err != nil {
							t.Fatal(err)
						}
						worst := 0.0
						for k := range want {
							worst = max(worst, accuracy.Err(got[k], want[k], 0))
						}
						bound := accuracy.MGK64
						if prec == Float32 {
							bound = accuracy.MGK32
						}
						if worst > bound {
							t.Errorf("worst relative error %.3g > %g", worst, bound)
						}
						if mode.want >= 0 && st.StagedPairs != mode.want || mode.want < 0 && st.StagedPairs == 0 {
							t.Errorf("stage limit %d: %d of %d pairs staged, want %d", mode.limit, st.StagedPairs, pairs, mode.want)
						}
						t.Logf("stage limit %d: %d of %d pairs staged; worst relative error %.2g", mode.limit, st.StagedPairs, pairs, worst)
						if mode.name != "split" || flags != 0 {
							return
						}
						// Gradients (primal and adjoint solves, W x and W u,
						// the edge coefficients from the staged classes) and
						// nodal matrices under the same split.
						wk, wg := compareGrad(t, co, X, yArg, sx, nil, sym, o, prec)
						wn := compareNodal(t, co, X, yArg, sx, nil, sym, o, prec)
						t.Logf("gradient: K %.2g, ∂K %.2g; nodal %.2g", wk, wg, wn)
					})
				}
			}
		}
	}
	t.Run("opt-in", func(t *testing.T) {
		// One graph whose tiles alone take more than 48 KiB (float64) against
		// small ones: staged only with the opt-in above 48 KiB.
		rng := rand.New(rand.NewPCG(61, 62))
		big := []*graph.Graph{testgraphs.Random(rng, 200, 1800, false)}
		small := testgraphs.EdgeCases(13)[1:5]
		LB, _ := layout.Pack(big, nil, testgraphs.Cols, testgraphs.Cols)
		if b := testgraphs.StageBytes(LB, 0, LB, 0, 8) / 2; b <= 48<<10 {
			t.Fatalf("the big graph's tiles take %d bytes, not more than 48 KiB", b)
		}
		o := opt
		o.NJobs = 0
		want := make([]float64, len(small))
		if bad, err := mgk.Gram(big, small, nil, nil, false, o, want, nil); err != nil || len(bad) > 0 {
			t.Fatalf("CPU: %v %v", err, bad)
		}
		got := make([]float64, len(want))
		var st Stats
		if _, err := MarginalizedGramStats(big, small, nil, nil, false, o, 0, Float64, got, nil, &st); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for k := range want {
			worst = max(worst, accuracy.Err(got[k], want[k], 0))
		}
		if worst > accuracy.MGK64 {
			t.Errorf("worst relative error %.3g > %g", worst, accuracy.MGK64)
		}
		if roomy && st.StagedPairs != len(small) {
			t.Errorf("%d of %d pairs over 48 KiB staged on a device with room for them", st.StagedPairs, len(small))
		}
		t.Logf("%d of %d pairs over 48 KiB staged; worst relative error %.2g", st.StagedPairs, len(small), worst)
	})
}

// TestGPUStagingTimings logs the solve time (CUDA events) of Gram matrices
// with the staging of tiles in shared memory off and as the device allows,
// on sets whose pairs fit (molecule-sized graphs, graphs of 60–120 nodes) and
// on large pairs that do not fit and must not get slower. It checks that both
// agree with each other, not speed.
func TestGPUStagingTimings(t *testing.T) {
	requireGPU(t)
	if short {
		t.Skip("timings are not taken under compute-sanitizer or emulation")
	}
	rng := rand.New(rand.NewPCG(71, 72))
	var mol, mid, big []*graph.Graph
	for i := 0; i < 200; i++ {
		n := 10 + rng.IntN(20)
		mol = append(mol, testgraphs.Random(rng, n, n+n/4, false))
	}
	for i := 0; i < 40; i++ {
		n := 60 + rng.IntN(60)
		mid = append(mid, testgraphs.Random(rng, n, 3*n, false))
	}
	for i := 0; i < 6; i++ {
		big = append(big, testgraphs.Random(rng, 300+50*i, 1200, false))
	}
	for _, set := range []struct {
		name string
		gs   []*graph.Graph
	}{{"200 molecule-sized graphs", mol}, {"40 graphs of 60-120 nodes", mid}, {"6 graphs of 300-550 nodes", big}} {
		for _, ks := range testgraphs.KernelSets[1:] {
			opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.05}
			n := len(set.gs)
			for _, prec := range []Precision{Float64, Float32} {
				var res [2][]float64
				var sts [2]Stats
				for m, limit := range []int32{-1, 0} {
					co := callOptions{stageLimit: limit}
					res[m] = make([]float64, n*n)
					// Once to warm up (module load, allocations), once timed.
					for rep := 0; rep < 2; rep++ {
						sts[m] = Stats{}
						if _, err := gram(co, set.gs, nil, nil, nil, true, opt, 0, prec, res[m], nil, nil, &sts[m]); err != nil {
							t.Fatal(err)
						}
					}
				}
				worst := 0.0
				for k := range res[0] {
					worst = max(worst, accuracy.Err(res[1][k], res[0][k], 0))
				}
				bound := accuracy.MGK64
				if prec == Float32 {
					bound = accuracy.MGK32
				}
				if worst > bound {
					t.Errorf("%s, %s, float%d: staged and unstaged differ by %.3g", set.name, ks.Name, prec, worst)
				}
				t.Logf("%s, %s kernels, float%d: solve %.2f ms unstaged, %.2f ms staged (%d of %d pairs staged, ×%.2f); differ by %.2g",
					set.name, ks.Name, prec, sts[0].SolveMS, sts[1].SolveMS, sts[1].StagedPairs, n*(n+1)/2,
					sts[0].SolveMS/max(sts[1].SolveMS, 1e-9), worst)
			}
		}
	}
}

// randomFeatures returns a count matrix of rows rows over cols columns with
// heavy-tailed column frequencies (column ⌊cols·u³⌋ for uniform u: the first
// columns are in most rows, most columns in few), every fifth row empty, and
// counts mostly small; with huge, some counts near 2³², whose products and
// sums wrap past 2⁶³ as sparsegram's int64 sums do.
func randomFeatures(rng *rand.Rand, rows, cols int, huge bool) *sparsegram.Features {
	f := &sparsegram.Features{NumCols: cols, Ptr: []int{0}}
	for r := 0; r < rows; r++ {
		set := map[int32]bool{}
		if r%5 != 3 {
			for k := rng.IntN(40); k > 0; k-- {
				u := rng.Float64()
				set[int32(float64(cols)*u*u*u)] = true
			}
		}
		row := make([]int32, 0, len(set))
		for c := range set {
			row = append(row, c)
		}
		sort.Slice(row, func(a, b int) bool { return row[a] < row[b] })
		for _, c := range row {
			v := uint32(1 + rng.IntN(4))
			if rng.IntN(10) == 0 {
				v = uint32(1 + rng.IntN(1000))
			}
			if huge && rng.IntN(3) == 0 {
				v = math.MaxUint32 - uint32(rng.IntN(1000))
			}
			f.Col, f.Val = append(f.Col, c), append(f.Val, v)
		}
		f.Ptr = append(f.Ptr, len(f.Col))
	}
	return f
}

// TestGPUExplicit: ExplicitGram equals sparsegram.Gram entry for entry (==)
// for both semirings, symmetric or not (X ≠ Y, several output tiles, partial
// ones), heavy-tailed columns and empty rows, with the dense panel chosen by
// the cost model, empty, partial (a width that is not a multiple of the
// tile's depth) and holding every column, with counts whose sums wrap past
// 2⁶³, and under a memory limit that splits the call into blocks of rows.
func TestGPUExplicit(t *testing.T) {
	requireGPU(t)
	rng := rand.New(rand.NewPCG(31, 32))
	type input struct {
		name string
		X, Y *sparsegram.Features
	}
	A := randomFeatures(rng, 130, 300, false)
	B := randomFeatures(rng, 150, 300, false)
	C := randomFeatures(rng, 70, 300, false)
	H := randomFeatures(rng, 40, 60, true)
	H2 := randomFeatures(rng, 30, 60, true)
	E := &sparsegram.Features{NumCols: 10, Ptr: []int{0, 0, 0, 0}} // no nonzero at all
	inputs := []input{{"sym", A, nil}, {"XY", B, C}, {"YX", C, B}, {"huge-sym", H, nil}, {"huge-XY", H, H2}, {"empty", E, nil}, {"empty-XY", E, A}}
	E.NumCols = A.NumCols
	check := func(t *testing.T, co callOptions, in input, sym bool, sr sparsegram.Semiring) Stats {
		t.Helper()
		Y := in.Y
		if sym {
			Y = in.X
		}
		want := make([]float64, in.X.Rows()*Y.Rows())
		if err := sparsegram.Gram(in.X, Y, sym, sparsegram.Options{Semiring: sr}, want); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(want))
		for k := range got {
			got[k] = math.NaN()
		}
		var st Stats
		if err := explicitGram(co, in.X, in.Y, sym, sr, 0, got, &st); err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("entry (%d, %d): GPU %v, CPU %v", k/Y.Rows(), k%Y.Rows(), got[k], want[k])
			}
		}
		return st
	}
	panels := []int32{0, -1, 3, 20, 1 << 30}
	for _, in := range inputs {
		for _, sr := range []sparsegram.Semiring{sparsegram.SumProduct, sparsegram.SumMin} {
			for _, panel := range panels {
				name := fmt.Sprintf("%s/semiring=%d/panel=%d", in.name, sr, panel)
				t.Run(name, func(t *testing.T) {
					st := check(t, callOptions{panel: panel}, in, in.Y == nil, sr)
					if st.Batches > 1 {
						t.Errorf("%d batches without a memory limit", st.Batches)
					}
					if panel < 0 && st.DenseCols != 0 || panel == 3 && in.X.Rows() > 0 && len(in.X.Col) > 0 && st.DenseCols != 3 {
						t.Errorf("panel %d: %d dense columns", panel, st.DenseCols)
					}
					t.Logf("%d dense columns, %d blocks", st.DenseCols, st.Blocks)
				})
			}
		}
	}
	// A memory limit of a quarter of the result's bytes splits every call
	// down to blocks that fit; a 1×1 block needs far less than the slack.
	for _, in := range inputs[:5] {
		for _, sr := range []sparsegram.Semiring{sparsegram.SumProduct, sparsegram.SumMin} {
			t.Run(fmt.Sprintf("split/%s/semiring=%d", in.name, sr), func(t *testing.T) {
				ny := in.X.Rows()
				if in.Y != nil {
					ny = in.Y.Rows()
				}
				co := callOptions{memLimit: int64(2*in.X.Rows()*ny) + 4096}
				st := check(t, co, in, in.Y == nil, sr)
				if st.Batches < 2 {
					t.Errorf("mem_limit %d did not split the call (%d batches)", co.memLimit, st.Batches)
				}
				t.Logf("mem_limit %d: %d batches", co.memLimit, st.Batches)
			})
		}
	}
	// Mismatched dictionaries and bad output sizes are refused, as by sparsegram.
	if err := ExplicitGram(A, &sparsegram.Features{NumCols: 5, Ptr: []int{0}}, false, sparsegram.SumProduct, 0, nil, nil); err == nil {
		t.Error("different column counts accepted")
	}
	if err := ExplicitGram(A, nil, true, sparsegram.SumProduct, 0, make([]float64, 3), nil); err == nil {
		t.Error("wrong output size accepted")
	}
}
