package mgk

import (
	"flag"
	"strings"
	"testing"
	"time"
)

// compare names the data sets TestCompareSolvers times, as NAME[:count]
// separated by commas; empty skips the test.
var compare = flag.String("compare", "", "data sets for TestCompareSolvers (NAME[:count],...)")

// compareRounds is how many times each configuration runs, interleaved.
var compareRounds = flag.Int("rounds", 3, "rounds of TestCompareSolvers")

// TestCompareSolvers times the symmetric Gram matrix (and GramGrad with
// -grad) of the named sets with each of solverConfigs, interleaving the
// configurations round by round so that a loaded machine slows all alike, and
// reports the fastest round of each and its ratio to the first configuration.
// It is a measurement, not a test: it checks nothing.
func TestCompareSolvers(t *testing.T) {
	if *compare == "" {
		t.Skip("no -compare data sets")
	}
	for _, spec := range strings.Split(*compare, ",") {
		name, gs := dataSubset(t, spec)
		for _, grad := range []bool{false, true} {
			best := make([]time.Duration, len(solverConfigs))
			for range *compareRounds {
				for c, cfg := range solverConfigs {
					opt := datasetOptions(gs, 0.01)
					cfg.set(&opt)
					n := len(gs)
					out := make([]float64, n*n)
					start := time.Now()
					var err error
					if grad {
						g := make([]float64, n*n*NumParams(opt))
						_, err = GramGrad(gs, nil, nil, nil, true, opt, out, g, nil)
					} else {
						_, err = Gram(gs, nil, nil, nil, true, opt, out, nil)
					}
					if err != nil {
						t.Fatal(err)
					}
					if el := time.Since(start); best[c] == 0 || el < best[c] {
						best[c] = el
					}
				}
			}
			for c, cfg := range solverConfigs {
				t.Logf("%s (%d graphs) grad=%v %-13s %8.3fs  ×%.2f", name, len(gs), grad, cfg.name, best[c].Seconds(), best[0].Seconds()/best[c].Seconds())
			}
		}
	}
}
