package mgk

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// mutagFull loads the whole MUTAG set when the shared copy is present, else the
// 20-graph excerpt in testdata.
func mutagFull(b *testing.B) []*graph.Graph {
	if ds, err := tudataset.Load("/work/shared/datasets/MUTAG", "MUTAG"); err == nil {
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
	a, c := newSide(gs[0], nil), newSide(gs[1], nil)
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

// BenchmarkMulWMUTAG is one product mat-vec of a MUTAG-sized pair.
func BenchmarkMulWMUTAG(b *testing.B) {
	gs := mutagFull(b)
	a, c := newSide(gs[0], nil), newSide(gs[1], nil)
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
