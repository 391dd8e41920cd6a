//go:build cgo

package hostref

import (
	"fmt"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// TestEmulatedKernels runs the library's device kernels themselves (mgk_prep
// and the persistent mgk_solve of src/mgk.cuh, 64 threads a block) on host
// threads through cuda/emu/emu.h and compares them with gokernel/mgk: the kernels'
// indexing, warp ownership of output blocks, shuffles and block reductions,
// barriers and the job counter, chunking and both κe paths. Work space is
// poisoned with NaN between chunks.
func TestEmulatedKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: thousands of host threads")
	}
	X := append(testGraphs(t, 11)[:7], testgraphs.Dense(1, 16))
	Y := append(testGraphs(t, 12)[3:], testgraphs.Dense(2, 10))
	starts := testgraphs.Starts(X, 3)
	type cfg struct {
		ks         testgraphs.KernelSet
		q          float64
		lmin       int
		sym        bool
		prec       int32
		noTable    bool
		blocks     int32
		chunkWords int64
	}
	cs, lb, ct := testgraphs.KernelSets[0], testgraphs.KernelSets[1], testgraphs.KernelSets[2]
	cfgs := []cfg{
		{cs, 0.1, 0, true, 64, false, 3, 1 << 20},
		{lb, 0.05, 1, false, 64, false, 1, 20000},
		{ct, 0.2, 0, false, 32, true, 2, 1 << 20},
		{ct, 0.1, 1, true, 64, true, 4, 30000},
		{lb, 0.1, 1, true, 32, false, 2, 1 << 20},
		{ct, 0.01, 0, false, 64, false, 3, 1 << 20},
	}
	for _, c := range cfgs {
		name := fmt.Sprintf("%s/q=%g/lmin=%d/sym=%v/p%d/noTable=%v/blocks=%d/chunk=%d", c.ks.Name, c.q, c.lmin, c.sym, c.prec, c.noTable, c.blocks, c.chunkWords)
		t.Run(name, func(t *testing.T) {
			w := emuGramCheck(t, Emulator{}, X, Y, starts, parse(t, c.ks.NK), parse(t, c.ks.EK), c.q, c.lmin, c.sym, c.prec, c.noTable, c.blocks, c.chunkWords, 0)
			t.Logf("worst relative error %.2g", w)
		})
	}
}

// emuGramCheck runs the emulated Gram kernels of build emu against mgk.Gram
// and returns the worst relative error; bounds 1e-9 (float64) and
// float32Bound.
func emuGramCheck(t *testing.T, emu Emulator, X, Y []*graph.Graph, starts [][]float64, nk, ek microkernel.Kernel, q float64, lmin int,
	sym bool, prec int32, noTable bool, blocks int32, chunkWords int64, stageLimit int32) float64 {
	t.Helper()
	np, _ := layout.Compile(nk)
	ep, _ := layout.Compile(ek)
	ys, sy := Y, [][]float64(nil)
	var yArg []*graph.Graph = Y
	if sym {
		ys, sy, yArg = X, starts, nil
	}
	want := make([]float64, len(X)*len(ys))
	opt := mgk.Options{NodeKernel: nk, EdgeKernel: ek, Q: q, Lmin: lmin, NJobs: 1}
	if bad, err := mgk.Gram(X, yArg, starts, sy, sym, opt, want, nil); err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	LX, _ := layout.Pack(X, starts, 4, 4)
	var LY *layout.Graphs
	if !sym {
		LY, _ = layout.Pack(ys, nil, 4, 4)
	}
	o := Options{Q: q, Tol: 1e-12, Lmin: int32(lmin), MaxIter: 10000, Precision: prec, Blocks: blocks, StageLimit: stageLimit}
	if prec == 32 {
		o.Tol = 1e-6
	}
	if sym {
		o.Symmetric = 1
	}
	if noTable {
		o.Flags = 1
	}
	got := make([]float64, len(want))
	iters := make([]int32, len(want))
	if err := emu.Gram(LX, LY, &np, &ep, o, chunkWords, got, iters); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for k := range want {
		if iters[k] < 0 {
			t.Errorf("entry %d did not converge", k)
		}
		worst = max(worst, accuracy.Err(got[k], want[k], 0))
	}
	bound := accuracy.MGK64
	if prec == 32 {
		bound = float32Bound
	}
	if worst > bound {
		t.Errorf("precision %d: worst relative error %.3g > %g", prec, worst, bound)
	}
	// With the default budget (an sm_80's shared memory) every pair of the
	// test sets fits: these runs cover the staged path.
	if pairs := emuPairs(len(X), len(ys), sym); stageLimit == 0 && emu.Staged() != pairs {
		t.Errorf("default stage budget: %d of %d pairs staged", emu.Staged(), pairs)
	}
	return worst
}

// emuPairs is the number of pairs an nx × ny call solves (i ≤ j when sym).
func emuPairs(nx, ny int, sym bool) int64 {
	if sym {
		return int64(nx * (nx + 1) / 2)
	}
	return int64(nx * ny)
}
