//go:build cgo

package hostref

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
)

// stageGraphs: the edge cases (one node, no edges, self-loops, n not a
// multiple of 8), dense tiles, and a graph far larger than the others so that
// pairs are very unequal.
func stageGraphs() (X, Y []*graph.Graph) {
	rng := rand.New(rand.NewPCG(41, 42))
	X = append(testgraphs.EdgeCases(11)[:7], testgraphs.Dense(1, 16), testgraphs.Random(rng, 70, 160, true))
	Y = append(testgraphs.EdgeCases(12)[2:], testgraphs.Dense(2, 10))
	return
}

// stagePlan returns the stage limit (bytes) that splits the call's pairs
// about in half by the shared memory their tiles need, and how many pairs fit
// it: the pairs the solver blocks must report as staged.
func stagePlan(t *testing.T, X, Y []*graph.Graph, sym bool, valueBytes int64) (limit int32, staged, pairs int64) {
	t.Helper()
	LX, err := layout.Pack(X, nil, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	LY, ys := LX, X
	if !sym {
		if LY, err = layout.Pack(Y, nil, 4, 4); err != nil {
			t.Fatal(err)
		}
		ys = Y
	}
	var sizes []int64
	for i := range X {
		for j := range ys {
			if !sym || j >= i {
				sizes = append(sizes, testgraphs.StageBytes(LX, i, LY, j, valueBytes))
			}
		}
	}
	slices.Sort(sizes)
	limit = int32(sizes[len(sizes)/2])
	for _, s := range sizes {
		if s <= int64(limit) {
			staged++
		}
	}
	if staged == 0 || staged == int64(len(sizes)) {
		t.Fatalf("stage limit %d does not split the pairs (sizes %v)", limit, sizes)
	}
	return limit, staged, int64(len(sizes))
}

// TestEmulatedStaging runs the device solvers (mgk_solve, mgk_gsolve) on host
// threads with the block-shared staging of the pairs' octiles forced off and
// limited so that about half of a call's pairs are staged and the others read
// global memory in the same launches (TestEmulatedKernels and
// TestEmulatedGradKernels run with the default budget, which stages every
// pair of theirs; the mode "all" is kept for a run by hand); every run against
// mgk.Gram / mgk.GramGrad (float64 1e-9 and 1e-6, float32 1e-4 and 1e-3), and
// the number of pairs the blocks report as staged against the plan. The
// emulated shared memory is poisoned before every block, so a pair that reads
// tiles it did not stage, or reads them at the wrong offsets, goes wrong.
func TestEmulatedStaging(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: thousands of host threads")
	}
	X, Y := stageGraphs()
	starts := testgraphs.Starts(X, 3)
	sets := gradKernelSets()
	type cfg struct {
		ks      testgraphs.KernelSet
		q       float64
		lmin    int
		sym     bool
		prec    int32
		table   bool
		grad    bool
		blocks  int32
		mode    string // "off", "all" or "split"
		chunkWd int64
	}
	cs, lb, ct, ns := sets[0], sets[1], sets[2], sets[3]
	cfgs := []cfg{
		{lb, 0.1, 0, false, 64, true, false, 3, "split", 1 << 20},
		{ct, 0.05, 1, true, 64, true, false, 2, "split", 60000},
		{cs, 0.1, 1, false, 32, true, false, 3, "split", 1 << 20},
		{ct, 0.2, 0, false, 64, false, false, 2, "split", 1 << 20},
		{lb, 0.1, 0, false, 64, true, false, 3, "off", 1 << 20},
		{ns, 0.1, 1, false, 64, true, true, 3, "split", 1 << 20},
		{ct, 0.05, 0, true, 32, true, true, 2, "split", 1 << 20},
		{lb, 0.1, 1, false, 64, false, true, 2, "split", 1 << 20},
	}
	for _, c := range cfgs {
		name := fmt.Sprintf("%s/q=%g/lmin=%d/sym=%v/p%d/table=%v/grad=%v/%s", c.ks.Name, c.q, c.lmin, c.sym, c.prec, c.table, c.grad, c.mode)
		t.Run(name, func(t *testing.T) {
			vb := int64(8)
			if c.prec == 32 {
				vb = 4
			}
			limit, want, pairs := stagePlan(t, X, Y, c.sym, vb)
			switch c.mode {
			case "off":
				limit, want = -1, 0
			case "all":
				limit, want = 0, pairs
			}
			nk, ek := parse(t, c.ks.NK), parse(t, c.ks.EK)
			if c.grad {
				gc := gradCase{X: X, Y: Y, starts: starts, nk: nk, ek: ek, q: c.q, lmin: c.lmin, prec: c.prec, table: c.table,
					blocks: c.blocks, chunkWords: c.chunkWd, stageLimit: limit}
				if c.sym {
					gc.Y = nil
				}
				wk, wg := gc.check(t, true)
				t.Logf("stage limit %d: worst relative error K %.2g, gradient %.2g", limit, wk, wg)
			} else {
				w := emuGramCheck(t, Emulator{}, X, Y, starts, nk, ek, c.q, c.lmin, c.sym, c.prec, !c.table, c.blocks, c.chunkWd, limit)
				t.Logf("stage limit %d: worst relative error %.2g", limit, w)
			}
			if got := (Emulator{}).Staged(); got != want {
				t.Errorf("stage limit %d: %d of %d pairs staged, want %d", limit, got, pairs, want)
			}
		})
	}
}
