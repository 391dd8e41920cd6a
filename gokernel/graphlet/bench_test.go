package graphlet

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// BenchmarkFeatures times the exact graphlet counts (k = 3, 4, 5) and 1,000
// samples per graph (k = 5) on MUTAG.
func BenchmarkFeatures(b *testing.B) {
	gs := tudatasettest.Load(b, "MUTAG").Graphs
	for _, bc := range []struct {
		name string
		opt  Options
	}{
		{"exact-k3", Options{K: 3}},
		{"exact-k4", Options{K: 4}},
		{"exact-k5", Options{K: 5}},
		{"sampled-k5", Options{K: 5, Samples: 1000}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Features(gs, bc.opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
