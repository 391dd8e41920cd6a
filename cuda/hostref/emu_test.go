//go:build cgo

package hostref

import (
	"fmt"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
)

// TestEmulatedKernels runs the library's device kernels themselves (mgk_prep
// and the persistent mgk_solve of src/mgk.cuh, 64 threads a block) on host
// threads through emu.h and compares them with gokernel/mgk: the kernels'
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
			nk, ek := parse(t, c.ks.NK), parse(t, c.ks.EK)
			np, _ := layout.Compile(nk)
			ep, _ := layout.Compile(ek)
			ys, sy := Y, [][]float64(nil)
			var yArg []*graph.Graph = Y
			if c.sym {
				ys, sy, yArg = X, starts, nil
			}
			want := make([]float64, len(X)*len(ys))
			opt := mgk.Options{NodeKernel: nk, EdgeKernel: ek, Q: c.q, Lmin: c.lmin, NJobs: 1}
			if bad, err := mgk.Gram(X, yArg, starts, sy, c.sym, opt, want, nil); err != nil || len(bad) > 0 {
				t.Fatal(err, bad)
			}
			LX, _ := layout.Pack(X, starts, 4, 4)
			var LY *layout.Graphs
			if !c.sym {
				LY, _ = layout.Pack(ys, nil, 4, 4)
			}
			o := Options{Q: c.q, Tol: 1e-12, Lmin: int32(c.lmin), MaxIter: 10000, Precision: c.prec, Blocks: c.blocks}
			if c.prec == 32 {
				o.Tol = 1e-6
			}
			if c.sym {
				o.Symmetric = 1
			}
			if c.noTable {
				o.Flags = 1
			}
			got := make([]float64, len(want))
			iters := make([]int32, len(want))
			if err := EmuGram(LX, LY, &np, &ep, o, c.chunkWords, got, iters); err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for k := range want {
				if iters[k] < 0 {
					t.Errorf("entry %d did not converge", k)
				}
				worst = max(worst, relErr(got[k], want[k]))
			}
			bound := 1e-9
			if c.prec == 32 {
				bound = float32Bound
			}
			if worst > bound {
				t.Errorf("worst relative error %.3g > %g", worst, bound)
			}
			t.Logf("worst relative error %.2g", worst)
		})
	}
}
