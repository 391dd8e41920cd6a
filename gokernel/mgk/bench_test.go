package mgk

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
	"github.com/graphgram/graphgram/gokernel/octile/octiletest"
	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// mutagFull loads the whole MUTAG set when the shared copy is present, else the
// 20-graph excerpt in testdata.
func mutagFull(b testing.TB) []*graph.Graph {
	if ds, err := tudataset.Open("MUTAG"); err == nil {
		return ds.Graphs
	}
	gs, _ := goldenSetup(b)
	return gs
}

func labelOptions(q float64) Options {
	return Options{
		NodeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		Q:          q,
	}
}

// BenchmarkGramMUTAG40 is the symmetric Gram matrix of 40 MUTAG graphs (820
// pairs) on all cores; pairs/s is reported.
func BenchmarkGramMUTAG40(b *testing.B) {
	gs := mutagFull(b)
	gs = gs[:min(40, len(gs))]
	out := make([]float64, len(gs)*len(gs))
	opt := labelOptions(0.01)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Gram(gs, nil, nil, nil, true, opt, out, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(gs)*(len(gs)+1)/2)/b.Elapsed().Seconds(), "pairs/s")
}

// BenchmarkPairMUTAG is one MUTAG-sized pair solved on one goroutine,
// including the per-pair setup (node kernel matrix, edge-kernel cache).
func BenchmarkPairMUTAG(b *testing.B) {
	gs := mutagFull(b)
	a, c := newSide(gs[0], nil, defaultPackMinEdges), newSide(gs[1], nil, defaultPackMinEdges)
	opt, _ := labelOptions(0.01).resolve()
	var ps pairSolver
	b.ReportAllocs()
	for b.Loop() {
		if err := ps.prepare(&a, &c, &opt); err != nil {
			b.Fatal(err)
		}
		ps.solvePrimal()
	}
}

// BenchmarkPairSolvers is BenchmarkPairMUTAG on a pair of MUTAG's larger
// graphs with Jacobi and with symmetric Gauss–Seidel: ns/iter is the time of
// one CG iteration, set-up included pro rata.
func BenchmarkPairSolvers(b *testing.B) {
	gs := mutagFull(b)
	slices.SortStableFunc(gs, func(a, b *graph.Graph) int { return a.N - b.N })
	g, h := gs[len(gs)*3/4], gs[len(gs)*3/4+1]
	for _, solver := range []Solver{SolverJacobi, SolverSGS} {
		b.Run(fmt.Sprint(solver), func(b *testing.B) {
			a, c := newSide(g, nil, defaultPackMinEdges), newSide(h, nil, defaultPackMinEdges)
			opt := labelOptions(0.01)
			opt.Solver = solver
			opt, _ = opt.resolve()
			var ps pairSolver
			iters := 0
			for b.Loop() {
				if err := ps.prepare(&a, &c, &opt); err != nil {
					b.Fatal(err)
				}
				iters += ps.solvePrimal().iters
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(iters), "ns/iter")
			b.ReportMetric(float64(iters)/float64(b.N), "iters")
		})
	}
}

// BenchmarkMulWMUTAG is one product mat-vec of a MUTAG-sized pair.
func BenchmarkMulWMUTAG(b *testing.B) {
	gs := mutagFull(b)
	a, c := newSide(gs[0], nil, defaultPackMinEdges), newSide(gs[1], nil, defaultPackMinEdges)
	opt, _ := labelOptions(0.01).resolve()
	var ps pairSolver
	if err := ps.prepare(&a, &c, &opt); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ps.w.mulW(ps.ap, ps.t)
	}
}

// BenchmarkGramGradMUTAG20 is the Gram matrix and its gradient for 20 MUTAG
// graphs (210 pairs, two solves each).
func BenchmarkGramGradMUTAG20(b *testing.B) {
	gs := mutagFull(b)
	gs = gs[:min(20, len(gs))]
	opt := labelOptions(0.01)
	out := make([]float64, len(gs)*len(gs))
	grad := make([]float64, len(out)*NumParams(opt))
	for b.Loop() {
		if _, err := GramGrad(gs, nil, nil, nil, true, opt, out, grad, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(gs)*(len(gs)+1)/2)/b.Elapsed().Seconds(), "pairs/s")
}

// operatorPairs are typical pairs of the benchmark sets: a mid-sized pair of
// MUTAG, NCI1 and PROTEINS (when ../shared/datasets is present, with random
// edge labels in {0,1,2} added where the set has none), PROTEINS' two largest
// graphs, and Newman–Watts–Strogatz (96, 3, 0.1) and Barabási–Albert (96, 6)
// pairs.
func operatorPairs() []struct {
	name string
	g, h *graph.Graph
} {
	type pair = struct {
		name string
		g, h *graph.Graph
	}
	var ps []pair
	for _, name := range []string{"MUTAG", "NCI1", "PROTEINS"} {
		gs, err := octiletest.ReadShared(name)
		if err != nil || len(gs) < 2 {
			continue
		}
		slices.SortStableFunc(gs, func(a, b *graph.Graph) int { return a.NumEdges() - b.NumEdges() })
		mid := len(gs) / 2
		ps = append(ps, pair{name, octiletest.WithEdgeFeatures(gs[mid], 3, 1), octiletest.WithEdgeFeatures(gs[mid+1], 3, 2)})
		if name == "PROTEINS" {
			n := len(gs)
			ps = append(ps, pair{"PROTEINS-large", octiletest.WithEdgeFeatures(gs[n-1], 3, 1), octiletest.WithEdgeFeatures(gs[n-2], 3, 2)})
		}
	}
	return append(ps,
		pair{"NWS96", octiletest.NewmanWattsStrogatz(96, 3, 0.1, 1), octiletest.NewmanWattsStrogatz(96, 3, 0.1, 2)},
		pair{"BA96", octiletest.BarabasiAlbert(96, 6, 1), octiletest.BarabasiAlbert(96, 6, 2)})
}

// BenchmarkOperators solves one pair (set-up and CG, q = 0.01, Kronecker
// deltas on the node and edge labels) with each product operator forced, and
// with the automatic choice; the constants of choose come from here. The
// reported mv-ns is the time of one product W·x alone.
func BenchmarkOperators(b *testing.B) {
	opt, _ := labelOptions(0.01).resolve()
	for _, pr := range operatorPairs() {
		a, c := newSide(pr.g, nil, 1), newSide(pr.h, nil, 1)
		for _, mode := range []struct {
			name string
			op   opKind
		}{{"auto", opAuto}, {"edge", opEdge}, {"octile", opOctile}} {
			b.Run(pr.name+"/"+mode.name, func(b *testing.B) {
				opt := forceMode(opt, mode.op, octile.Auto)
				var ps pairSolver
				if err := ps.prepare(&a, &c, &opt); err != nil {
					b.Fatal(err)
				}
				if mode.op == opOctile && ps.w != &ps.oct {
					b.Skip("octile refused the pair")
				}
				x, y := make([]float64, pr.g.N*pr.h.N), make([]float64, pr.g.N*pr.h.N)
				for k := range x {
					x[k] = 1
				}
				const mvs = 200
				start := time.Now()
				for range mvs {
					ps.w.mulW(y, x)
				}
				mv := time.Since(start)
				for b.Loop() {
					if err := ps.prepare(&a, &c, &opt); err != nil {
						b.Fatal(err)
					}
					ps.solvePrimal()
				}
				b.ReportMetric(float64(mv.Nanoseconds())/mvs, "mv-ns")
				b.ReportMetric(float64(pr.g.NumEdges()*pr.h.NumEdges()), "edge-pairs")
			})
		}
	}
}

// solverConfigs are the configurations BenchmarkGramSolvers compares: the
// previous default (Jacobi at Tol 1e-12, no quotient), Jacobi at the default
// accuracy, symmetric Gauss–Seidel without and with the quotient (the
// default).
var solverConfigs = []struct {
	name string
	set  func(*Options)
}{
	{"jacobi-1e-12", func(o *Options) { o.Solver, o.Tol, o.Quotient = SolverJacobi, 1e-12, QuotientOff }},
	{"jacobi", func(o *Options) { o.Solver, o.Quotient = SolverJacobi, QuotientOff }},
	{"sgs", func(o *Options) { o.Quotient = QuotientOff }},
	{"default", func(o *Options) {}},
	{"sgs-all", func(o *Options) { o.Solver = SolverSGS }},
}

// BenchmarkGramSolvers is the full symmetric MUTAG Gram matrix (q = 0.01,
// Kronecker deltas) with each solver configuration; run with -benchtime=1x
// -count=N and compare the sub-benchmarks of one run.
func BenchmarkGramSolvers(b *testing.B) {
	gs := mutagFull(b)
	out := make([]float64, len(gs)*len(gs))
	for _, c := range solverConfigs {
		b.Run(c.name, func(b *testing.B) {
			opt := labelOptions(0.01)
			c.set(&opt)
			for b.Loop() {
				if _, err := Gram(gs, nil, nil, nil, true, opt, out, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGramGradSolvers is BenchmarkGramSolvers for GramGrad on 60 MUTAG
// graphs.
func BenchmarkGramGradSolvers(b *testing.B) {
	gs := mutagFull(b)
	gs = gs[:min(60, len(gs))]
	out := make([]float64, len(gs)*len(gs))
	for _, c := range solverConfigs {
		b.Run(c.name, func(b *testing.B) {
			opt := labelOptions(0.01)
			c.set(&opt)
			grad := make([]float64, len(out)*NumParams(opt))
			for b.Loop() {
				if _, err := GramGrad(gs, nil, nil, nil, true, opt, out, grad, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
