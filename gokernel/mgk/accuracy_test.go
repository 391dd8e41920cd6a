package mgk

import (
	"flag"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// calibrate names the data sets TestCalibrateAccuracy measures, as
// NAME[:count] separated by commas (e.g. -calibrate=MUTAG,NCI1:400); empty
// skips the test. It is how the tolerance factors of tolFor were chosen.
var calibrate = flag.String("calibrate", "", "data sets for TestCalibrateAccuracy (NAME[:count],...)")

// datasetOptions is the benchmark kernel: Kronecker deltas (h = 0.5) on the
// first node and edge feature columns, a constant edge kernel when the set
// has no edge features.
func datasetOptions(gs []*graph.Graph, q float64) Options {
	opt := Options{
		NodeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		Q:          q,
	}
	if len(gs) > 0 && gs[0].EdgeCols == 0 {
		opt.EdgeKernel = &microkernel.Constant{C: 1}
	}
	if len(gs) > 0 && gs[0].NodeCols == 0 {
		opt.NodeKernel = &microkernel.Constant{C: 1}
	}
	return opt
}

// TestCalibrateAccuracy computes full symmetric Gram matrices of the named
// sets with every solver at the default accuracy and reports the largest
// relative error against a tight reference solve (Jacobi, Tol 1e-14), at
// q = 0.01 and q = 0.001, with the times of the runs.
func TestCalibrateAccuracy(t *testing.T) {
	if *calibrate == "" {
		t.Skip("no -calibrate data sets")
	}
	for _, spec := range strings.Split(*calibrate, ",") {
		name, gs := dataSubset(t, spec)
		for _, q := range []float64{0.01, 0.001} {
			opt := datasetOptions(gs, q)
			n := len(gs)
			ref := make([]float64, n*n)
			o := opt
			o.Solver, o.Tol, o.Quotient = SolverJacobi, 1e-14, QuotientOff
			start := time.Now()
			if _, err := Gram(gs, nil, nil, nil, true, o, ref, nil); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s (%d graphs) q=%g reference %v", name, n, q, time.Since(start))
			for _, sm := range solverModes {
				if sm.name != "jacobi" && sm.name != "auto-quotient" {
					continue
				}
				for _, acc := range []float64{1e-9, 1e-6} {
					o := opt
					o.Solver, o.Quotient, o.Accuracy = sm.solver, sm.quotient, acc
					got := make([]float64, n*n)
					iters := make([]int32, n*n)
					start := time.Now()
					bad, err := Gram(gs, nil, nil, nil, true, o, got, iters)
					el := time.Since(start)
					if err != nil || len(bad) > 0 {
						t.Fatalf("err %v, %d unconverged", err, len(bad))
					}
					worst, sum := 0.0, 0.0
					for k := range ref {
						e := math.Abs(got[k]/ref[k] - 1)
						worst = max(worst, e)
						sum += e
					}
					it := 0.0
					for _, x := range iters {
						it += float64(x)
					}
					t.Logf("  %-14s accuracy %g: worst rel error %.2g (%.2g× accuracy), mean %.2g, mean iters %.1f, %v",
						sm.name, acc, worst, worst/acc, sum/float64(len(ref)), it/float64(len(iters)), el)
				}
			}
		}
	}
}

// dataSubset loads the TU data set a -calibrate or -compare entry names,
// "NAME" or "NAME:COUNT" for an evenly spread subset of COUNT graphs.
func dataSubset(t *testing.T, spec string) (string, []*graph.Graph) {
	t.Helper()
	name, count, _ := strings.Cut(spec, ":")
	gs := tudatasettest.Load(t, name).Graphs
	if n, err := strconv.Atoi(count); err == nil && n < len(gs) {
		sub := make([]*graph.Graph, n)
		for i := range sub {
			sub[i] = gs[i*len(gs)/n]
		}
		gs = sub
	}
	return name, gs
}
