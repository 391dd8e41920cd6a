package wl

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/tudataset"
)

func loadTU(b *testing.B, name string) []*graph.Graph {
	b.Helper()
	dir, err := tudataset.SetDir(name)
	if err != nil {
		b.Skip(err)
	}
	d, err := tudataset.Load(dir, name)
	if err != nil {
		b.Fatal(err)
	}
	return d.Graphs
}

// BenchmarkFeatures times the WL feature map of whole TU data sets at h = 5
// (the Gram product is sparsegram's benchmark).
func BenchmarkFeatures(b *testing.B) {
	for _, name := range []string{"MUTAG", "NCI1"} {
		gs := loadTU(b, name)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Features(gs, Options{Iterations: 5, NodeLabelCol: 0, EdgeLabelCol: -1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
