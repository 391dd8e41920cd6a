//go:build cgo

package hostref

import (
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// TestEmulatedGPUBlockSizes runs the device kernels built with the GPU's
// block sizes (emu256.cc: 256 threads, so the solvers' 8 warps, block
// reductions over 8 warps and warps owning every 8th output block) on the
// emulator, against the CPU as the small-block tests do: Gram on both κe
// paths and precisions, a gradient, staging split between shared and global
// memory, and the shortest-path kernels. The other emulated tests use the
// emulation's small blocks (2 warps), which are cheaper in host threads.
func TestEmulatedGPUBlockSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: thousands of host threads")
	}
	if got := (Emulator{}).Threads(); got != [3]int{64, 32, 64} {
		t.Errorf("default build: block sizes %v, want the emulation's [64 32 64]", got)
	}
	gpu := Emulator{GPUSizes: true}
	if got := gpu.Threads(); got != [3]int{256, 256, 256} {
		t.Fatalf("GPU-size build: block sizes %v, want [256 256 256]", got)
	}
	X := append(testGraphs(t, 11)[:7], testgraphs.Dense(1, 16))
	Y := append(testGraphs(t, 12)[3:], testgraphs.Dense(2, 10))
	starts := testgraphs.Starts(X, 3)
	sets := gradKernelSets()
	lb, ct, ns := sets[1], sets[2], sets[3]
	t.Run("gram/labels/table/p64/chunks", func(t *testing.T) {
		w := emuGramCheck(t, gpu, X, Y, starts, parse(t, lb.NK), parse(t, lb.EK), 0.05, 1, false, 64, false, 3, 20000, 0)
		t.Logf("worst relative error %.2g", w)
	})
	t.Run("gram/continuous/evaluated/p32/sym", func(t *testing.T) {
		w := emuGramCheck(t, gpu, X, Y, starts, parse(t, ct.NK), parse(t, ct.EK), 0.2, 0, true, 32, true, 2, 1<<20, 0)
		t.Logf("worst relative error %.2g", w)
	})
	t.Run("grad/nested/table/p64", func(t *testing.T) {
		c := gradCase{X: X, Y: Y, starts: starts, nk: parse(t, ns.NK), ek: parse(t, ns.EK), q: 0.01, lmin: 1,
			prec: 64, table: true, blocks: 3, chunkWords: 1 << 20, emu: gpu}
		wk, wg := c.check(t, true)
		t.Logf("worst relative error K %.2g, gradient %.2g", wk, wg)
	})
	t.Run("staging/split/p64", func(t *testing.T) {
		SX, SY := stageGraphs()
		limit, want, pairs := stagePlan(t, SX, SY, false, 8)
		w := emuGramCheck(t, gpu, SX, SY, testgraphs.Starts(SX, 3), parse(t, lb.NK), parse(t, lb.EK), 0.1, 0, false, 64, false, 3, 1<<20, limit)
		if got := gpu.Staged(); got != want {
			t.Errorf("stage limit %d: %d of %d pairs staged, want %d", limit, got, pairs, want)
		}
		t.Logf("stage limit %d: worst relative error %.2g", limit, w)
	})
	t.Run("sp", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(41, 42))
		SX := append(testgraphs.EdgeCases(21), testgraphs.Random(rng, 30, 45, false))
		opt := spkernel.Options{NodeKernel: parse(t, `{"kind":"kronecker_delta","h":0,"col":0}`),
			LengthKernel: parse(t, `{"kind":"square_exponential","length_scale":0.7,"col":0}`), WeightCol: spkernel.HopCounts, NJobs: 1}
		want := make([]float64, len(SX)*len(SX))
		if err := spkernel.Gram(SX, SX, true, opt, want); err != nil {
			t.Fatal(err)
		}
		L, lengths, err := layout.SP([][]*graph.Graph{SX}, opt.WeightCol, testgraphs.Cols, 1)
		if err != nil {
			t.Fatal(err)
		}
		var pairs []int32
		for i := range SX {
			for j := range SX {
				pairs = append(pairs, int32(i), int32(j))
			}
		}
		np, lp := spPrograms(t, opt.NodeKernel, opt.LengthKernel)
		for _, prec := range []int{64, 32} {
			got, err := gpu.SP(L[0], nil, &np, &lp, lengths, pairs, 3, 4000, prec)
			if err != nil {
				t.Fatal(err)
			}
			checkSP(t, got, want, prec, len(SX))
		}
	})
}
