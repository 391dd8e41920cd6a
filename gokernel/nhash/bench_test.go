package nhash

import (
	"testing"

	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// BenchmarkFeatures times the R = 3 label rounds of both hashes on NCI1 (the
// Gram products are sparsegram's benchmark).
func BenchmarkFeatures(b *testing.B) {
	gs := tudatasettest.Load(b, "NCI1").Graphs
	var values []float64
	var bits []uint64
	for l := range 64 {
		values = append(values, float64(l))
		bits = append(bits, uint64(l)*0x9e3779b97f4a7c15)
	}
	for _, cs := range []bool{false, true} {
		name := map[bool]string{false: "simple", true: "count_sensitive"}[cs]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Features(gs, Options{Rounds: 3, Bits: 8, CountSensitive: cs, LabelValues: values, LabelBits: bits}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
