package wl

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// BenchmarkFeatures times the WL feature map of whole TU data sets at h = 5
// (the Gram product is sparsegram's benchmark).
func BenchmarkFeatures(b *testing.B) {
	for _, name := range []string{"MUTAG", "NCI1"} {
		gs := tudatasettest.Load(b, name).Graphs
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Features(gs, Options{Iterations: 5, NodeLabelCol: 0, EdgeLabelCol: -1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
