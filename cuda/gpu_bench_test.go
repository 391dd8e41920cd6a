//go:build cuda

package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// The GPU against the CPU backend on the same inputs, for gpu_suite.sh's
// report (`cuda.test -test.run '^$' -test.bench BenchmarkGPU`): each
// benchmark has a cpu sub-benchmark and one per GPU precision, whose ns/op
// the report divides. They skip without a device; the tests (gpu_test.go)
// check the results, these only time them.

// BenchmarkGPUMarginalized: the marginalized kernel's symmetric Gram matrix of
// 100 molecule-sized graphs (10–29 nodes), labelled kernels, q = 0.05.
func BenchmarkGPUMarginalized(b *testing.B) {
	requireGPU(b)
	rng := rand.New(rand.NewPCG(71, 72))
	var gs []*graph.Graph
	for i := 0; i < 100; i++ {
		n := 10 + rng.IntN(20)
		gs = append(gs, testgraphs.Random(rng, n, n+n/4, false))
	}
	ks := testgraphs.KernelSets[1]
	opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.05}
	out := make([]float64, len(gs)*len(gs))
	b.Run("cpu", func(b *testing.B) {
		for b.Loop() {
			if _, err := mgk.Gram(gs, nil, nil, nil, true, opt, out, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, prec := range []Precision{Float64, Float32} {
		b.Run(precName(prec), func(b *testing.B) {
			for b.Loop() {
				if _, err := MarginalizedGram(gs, nil, nil, nil, true, opt, 0, prec, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGPUShortestPath: the shortest-path kernel's symmetric Gram matrix of
// 40 graphs of 40–159 nodes, Gaussian node and length kernels, hop counts,
// all pairs on the GPU.
func BenchmarkGPUShortestPath(b *testing.B) {
	requireGPU(b)
	gs, opt := spTimingSet()
	out := make([]float64, len(gs)*len(gs))
	b.Run("cpu", func(b *testing.B) {
		for b.Loop() {
			if err := spkernel.Gram(gs, nil, true, opt, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, prec := range []Precision{Float64, Float32} {
		b.Run(precName(prec), func(b *testing.B) {
			for b.Loop() {
				if err := ShortestPathGram(gs, nil, true, opt, 0, prec, SPHybrid{CPUWork: -1}, out, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGPUExplicit: the symmetric Gram matrix of 2,000 rows of
// heavy-tailed explicit features over 5,000 columns (SumProduct).
func BenchmarkGPUExplicit(b *testing.B) {
	requireGPU(b)
	rng := rand.New(rand.NewPCG(81, 82))
	X := randomFeatures(rng, 2000, 5000, false)
	out := make([]float64, X.Rows()*X.Rows())
	b.Run("cpu", func(b *testing.B) {
		for b.Loop() {
			if err := sparsegram.Gram(X, X, true, sparsegram.Options{}, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gpu", func(b *testing.B) {
		for b.Loop() {
			if err := ExplicitGram(X, nil, true, sparsegram.SumProduct, 0, out, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func precName(p Precision) string {
	if p == Float32 {
		return "gpu-float32"
	}
	return "gpu-float64"
}
