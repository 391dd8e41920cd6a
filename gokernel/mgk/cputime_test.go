package mgk

import (
	"flag"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/graphgram/graphgram/gokernel/graph"
)

var cpuPairs = flag.Int("cpupairs", 0, "pairs TestPairCPUTime solves per solver (0 skips)")

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPairCPUTime measures the process CPU time (not wall time, which a
// loaded machine makes meaningless) of solving MUTAG pairs with Jacobi and
// with symmetric Gauss–Seidel, alternating, on one goroutine. Run with
// -cpupairs=N; it checks nothing.
func TestPairCPUTime(t *testing.T) {
	if *cpuPairs == 0 {
		t.Skip("no -cpupairs")
	}
	gs := mutagFull(nil)
	slices.SortStableFunc(gs, func(a, b *graph.Graph) int { return a.N - b.N })
	type cfg struct {
		name string
		opt  Options
	}
	cfgs := []cfg{
		{"jacobi-1e-12", Options{Solver: SolverJacobi, Tol: 1e-12}},
		{"jacobi", Options{Solver: SolverJacobi}},
		{"sgs", Options{Solver: SolverSGS}},
	}
	var setup time.Duration
	total := make([]time.Duration, len(cfgs))
	iters := make([]int, len(cfgs))
	var ps pairSolver
	for k := range *cpuPairs {
		g, h := gs[(k*7919)%len(gs)], gs[(k*104729+13)%len(gs)]
		a, c := newSide(g, nil, defaultPackMinEdges), newSide(h, nil, defaultPackMinEdges)
		{
			opt, _ := labelOptions(0.01).resolve()
			start := cpuTime()
			for range 20 {
				if err := ps.prepare(&a, &c, &opt); err != nil {
					t.Fatal(err)
				}
			}
			setup += cpuTime() - start
		}
		for ci, cf := range cfgs {
			opt := labelOptions(0.01)
			opt.Solver, opt.Tol = cf.opt.Solver, cf.opt.Tol
			opt, _ = opt.resolve()
			start := cpuTime()
			for range 20 {
				if err := ps.prepare(&a, &c, &opt); err != nil {
					t.Fatal(err)
				}
				iters[ci] += ps.solvePrimal().iters
			}
			total[ci] += cpuTime() - start
		}
	}
	t.Logf("set-up alone (SGS): cpu %v", setup)
	for ci, cf := range cfgs {
		t.Logf("%-13s cpu %v  ×%.2f vs first, %.1f iters/pair, %.0f ns/iter", cf.name, total[ci], total[0].Seconds()/total[ci].Seconds(),
			float64(iters[ci])/float64(20**cpuPairs), float64(total[ci].Nanoseconds())/float64(iters[ci]))
	}
}
