package rwkernel

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// BenchmarkGram times whole-data-set Gram matrices: unlabeled (spectral) and
// labeled (CG on the product graph), geometric with λ = 0.01, and exponential.
func BenchmarkGram(b *testing.B) {
	for _, name := range []string{"MUTAG", "ENZYMES"} {
		for _, tc := range []struct {
			name string
			opt  Options
		}{
			{"unlabeled", Options{Lambda: 0.01}},
			{"labeled", Options{Lambda: 0.01, NodeKernel: nodeKernels["label"]}},
			{"labeled-exp", Options{Lambda: 0.1, Kind: Exponential, NodeKernel: nodeKernels["label"]}},
			{"unlabeled-p3", Options{Lambda: 0.01, Steps: 3}},
		} {
			b.Run(name+"/"+tc.name, func(b *testing.B) {
				gs := tudatasettest.Load(b, name).Graphs
				out := make([]float64, len(gs)*len(gs))
				for b.Loop() {
					if err := Gram(gs, nil, true, tc.opt, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
