package pyramid

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// BenchmarkFeatures times the embedding and histograms of NCI1 (L = 4, d = 6,
// node labels), and Gram their intersection Gram.
func BenchmarkFeatures(b *testing.B) {
	gs := tudatasettest.Load(b, "NCI1").Graphs
	opt := Options{Levels: 4, Dim: 6, NodeLabelCol: 0}
	b.Run("features", func(b *testing.B) {
		for b.Loop() {
			if _, err := Features(gs, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	f, err := Features(gs, opt)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float64, len(gs)*len(gs))
	b.Run("gram", func(b *testing.B) {
		for b.Loop() {
			if err := sparsegram.Gram(f, nil, true, sparsegram.Options{Semiring: sparsegram.SumMin}, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
