//go:build cgo

package hostref

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain names the emulator's seed when a test fails: the order of blocks
// and threads in every emulated launch follows from it ($GGCUDA_EMU_SEED).
func TestMain(m *testing.M) {
	if w := os.Getenv("GG_EMU_PLANTED_CHILD"); w != "" {
		// A child of TestHarshEmulatorDivergence: run the divergent kernel,
		// which must abort in the emulator's check before returning.
		var which int
		fmt.Sscan(w, &which)
		EmuPlanted(which, 2, 64, 1)
		fmt.Println("planted kernel returned")
		os.Exit(0)
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "emulated kernels ran with GGCUDA_EMU_SEED=%d\n", EmuSeed())
	}
	os.Exit(code)
}

// TestHarshEmulatorRace: a job counter incremented by a read and a later
// write instead of an atomic lets two blocks take the same job. Blocks run
// concurrently on the emulator, so it runs some job twice (and, the counter
// lost, none never); run one after another, as the emulator used to, it
// cannot show. The atomic counter (persistent.cuh's next_job) is right either
// way.
func TestHarshEmulatorRace(t *testing.T) {
	const iters = 4
	t.Setenv("GGCUDA_EMU_CONCURRENT", "3") // whatever the caller's setting
	for _, threads := range []int{64, 256} {
		if bad := EmuPlanted(PlantedCounterAtomic, 4, threads, iters); bad != 0 {
			t.Errorf("%d threads: atomic job counter: %d of %d jobs not run exactly once", threads, bad, 40*iters)
		}
		bad := EmuPlanted(PlantedCounterRacy, 4, threads, iters)
		if bad == 0 {
			t.Errorf("%d threads: the racy job counter went unnoticed in %d launches", threads, iters)
		}
		t.Logf("%d threads: racy job counter: %d of %d jobs run twice or never", threads, bad, 40*iters)
	}
	t.Setenv("GGCUDA_EMU_CONCURRENT", "1")
	if bad := EmuPlanted(PlantedCounterRacy, 4, 64, iters); bad != 0 {
		t.Errorf("blocks one at a time: the racy counter gave %d wrong jobs (the race needs concurrent blocks)", bad)
	}
}

// TestHarshEmulatorMissingBarrier: threads write a shared array and read
// another warp's entry. Without the __syncthreads between, a reader that runs
// before its writer reads the poison the block's shared memory starts with;
// with it, every entry is right.
func TestHarshEmulatorMissingBarrier(t *testing.T) {
	for _, threads := range []int{64, 256} {
		if bad := EmuPlanted(PlantedExchangeSync, 8, threads, 2); bad != 0 {
			t.Errorf("%d threads: with the barrier, %d wrong entries", threads, bad)
		}
		bad := EmuPlanted(PlantedExchangeNoSync, 8, threads, 2)
		if bad == 0 {
			t.Errorf("%d threads: the missing barrier went unnoticed", threads)
		}
		t.Logf("%d threads: missing barrier: %d of %d entries wrong", threads, bad, 2*8*threads)
	}
}

// TestHarshEmulatorDivergence: a __syncthreads that half the block skips (by
// exiting), two different __syncthreads for the two halves, and a shuffle
// after a lane exited each abort the emulator with a message naming the
// kernel and the seed (run in a child process).
func TestHarshEmulatorDivergence(t *testing.T) {
	for _, c := range []struct {
		which       int
		kernel, say string
	}{
		{PlantedExitBeforeBarrier, "diverge_exit", "exited"},
		{PlantedTwoBarriers, "diverge_sites", "another"},
		{PlantedExitBeforeShuffle, "diverge_warp", "of its warp"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("GG_EMU_PLANTED_CHILD=%d", c.which))
		out, err := cmd.CombinedOutput()
		s := string(out)
		if err == nil || strings.Contains(s, "planted kernel returned") {
			t.Errorf("%s: not reported (err %v): %s", c.kernel, err, s)
			continue
		}
		for _, want := range []string{"barrier divergence in kernel " + c.kernel, "GGCUDA_EMU_SEED=", c.say} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: message lacks %q: %s", c.kernel, want, s)
			}
		}
		t.Logf("%s: %s", c.kernel, strings.TrimSpace(s))
	}
}
