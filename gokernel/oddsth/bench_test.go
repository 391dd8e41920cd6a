package oddsth

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// BenchmarkFeatures times the tree-visit counts of NCI1 (node labels), with
// unbounded and with height-3 DAGs (the Gram product is sparsegram's benchmark).
func BenchmarkFeatures(b *testing.B) {
	gs := tudatasettest.Load(b, "NCI1").Graphs
	for _, h := range []int{0, 3} {
		b.Run(map[int]string{0: "unbounded", 3: "h3"}[h], func(b *testing.B) {
			for b.Loop() {
				if _, err := Features(gs, Options{Height: h, NodeLabelCol: 0}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
