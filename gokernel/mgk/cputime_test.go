package mgk

import (
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/graphgram/graphgram/gokernel/cputime"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

var (
	cpuPairs = flag.Int("cpupairs", 0, "pairs TestPairCPUTime solves per solver (0 skips)")
	cpuSet   = flag.String("cpuset", "MUTAG", "TU data set of TestPairCPUTime")
	cpuOnly  = flag.String("cpuonly", "", "run only this configuration, once (for instruction counts under valgrind)")
	cpuGrad  = flag.Bool("cpugrad", false, "with -cpuonly: GramGrad instead of Gram")
)

// TestPairCPUTime measures the process CPU time (not wall time, which a
// loaded machine makes meaningless) of solving MUTAG pairs with Jacobi and
// with symmetric Gauss–Seidel, alternating, on one goroutine. Run with
// -cpupairs=N; it checks nothing.
func TestPairCPUTime(t *testing.T) {
	if *cpuPairs == 0 {
		t.Skip("no -cpupairs")
	}
	ds := tudatasettest.Load(t, *cpuSet)
	gs := ds.Graphs
	slices.SortStableFunc(gs, func(a, b *graph.Graph) int { return a.N - b.N })
	type cfg struct {
		name string
		opt  Options
	}
	cfgs := []cfg{
		{"jacobi-1e-12", Options{Solver: SolverJacobi, Tol: 1e-12}},
		{"jacobi", Options{Solver: SolverJacobi}},
		{"sgs", Options{Solver: SolverSGS}},
		{"auto", Options{}},
	}
	var setup time.Duration
	total := make([]time.Duration, len(cfgs))
	iters := make([]int, len(cfgs))
	var ps pairSolver
	for k := range *cpuPairs {
		g, h := gs[(k*7919)%len(gs)], gs[(k*104729+13)%len(gs)]
		a, c := newSide(g, nil, defaultPackMinEdges), newSide(h, nil, defaultPackMinEdges)
		{
			opt, _ := datasetOptions(gs, 0.01).resolve()
			start := cputime.Process()
			for range 20 {
				if err := ps.prepare(&a, &c, &opt); err != nil {
					t.Fatal(err)
				}
			}
			setup += cputime.Process() - start
		}
		for ci, cf := range cfgs {
			opt := datasetOptions(gs, 0.01)
			opt.Solver, opt.Tol = cf.opt.Solver, cf.opt.Tol
			opt, _ = opt.resolve()
			start := cputime.Process()
			for range 20 {
				if err := ps.prepare(&a, &c, &opt); err != nil {
					t.Fatal(err)
				}
				iters[ci] += ps.solvePrimal().iters
			}
			total[ci] += cputime.Process() - start
		}
	}
	t.Logf("set-up alone (SGS): cpu %v", setup)
	for ci, cf := range cfgs {
		t.Logf("%-13s cpu %v  ×%.2f vs first, %.1f iters/pair, %.0f ns/iter", cf.name, total[ci], total[0].Seconds()/total[ci].Seconds(),
			float64(iters[ci])/float64(20**cpuPairs), float64(total[ci].Nanoseconds())/float64(iters[ci]))
	}
}

// TestGramGradCPUTime is TestPairCPUTime for GramGrad on -cpupairs graphs of
// the set (all pairs), with the solver configurations of the benchmarks.
func TestGramGradCPUTime(t *testing.T) {
	if *cpuPairs == 0 {
		t.Skip("no -cpupairs")
	}
	ds := tudatasettest.Load(t, *cpuSet)
	gs := ds.Graphs[:min(*cpuPairs, len(ds.Graphs))]
	n := len(gs)
	var err error
	if *cpuOnly != "" {
		for _, c := range solverConfigs {
			if c.name != *cpuOnly {
				continue
			}
			opt := datasetOptions(gs, 0.01)
			opt.NJobs = 1
			c.set(&opt)
			out := make([]float64, n*n)
			if *cpuGrad {
				_, err = GramGrad(gs, nil, nil, nil, true, opt, out, make([]float64, n*n*NumParams(opt)), nil)
			} else {
				_, err = Gram(gs, nil, nil, nil, true, opt, out, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for _, grad := range []bool{false, true} {
		best := make([]time.Duration, len(solverConfigs))
		for range 3 {
			for ci, c := range solverConfigs {
				opt := datasetOptions(gs, 0.01)
				opt.NJobs = 1
				c.set(&opt)
				out := make([]float64, n*n)
				g := make([]float64, n*n*NumParams(opt))
				start := cputime.Process()
				if grad {
					_, err = GramGrad(gs, nil, nil, nil, true, opt, out, g, nil)
				} else {
					_, err = Gram(gs, nil, nil, nil, true, opt, out, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				if el := cputime.Process() - start; best[ci] == 0 || el < best[ci] {
					best[ci] = el
				}
			}
		}
		for ci, c := range solverConfigs {
			t.Logf("grad=%v %-13s cpu %v  ×%.2f", grad, c.name, best[ci], best[0].Seconds()/best[ci].Seconds())
		}
	}
}
