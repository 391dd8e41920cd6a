package spkernel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// BenchmarkGram times the symmetric Gram matrix of whole TU data sets, labeled
// (feature-map method) and with a Gaussian length kernel (label join).
func BenchmarkGram(b *testing.B) {
	for _, name := range []string{"MUTAG", "ENZYMES", "PROTEINS", "NCI1"} {
		for _, kind := range []string{"label", "none", "label+gauss"} {
			b.Run(name+"/"+kind, func(b *testing.B) {
				gs := tudatasettest.Load(b, name).Graphs
				opt := Options{WeightCol: HopCounts}
				switch kind {
				case "label":
					opt.NodeKernel = nodeKernels["label"]
				case "label+gauss":
					opt.NodeKernel = nodeKernels["label"]
					opt.LengthKernel = lengthKernels["gauss"]
				}
				out := make([]float64, len(gs)*len(gs))
				for b.Loop() {
					if err := Gram(gs, nil, true, opt, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFCSP times the general pass (node kernel on labels with h > 0, so no
// exact-match shortcut) on MUTAG.
func BenchmarkFCSP(b *testing.B) {
	gs := tudatasettest.Load(b, "MUTAG").Graphs
	opt := Options{WeightCol: HopCounts, NodeKernel: nodeKernels["label-h"], LengthKernel: lengthKernels["gauss"]}
	out := make([]float64, len(gs)*len(gs))
	for b.Loop() {
		if err := Gram(gs, nil, true, opt, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAPSP compares the all-pairs methods on weighted random graphs, to set
// the constant in chooseAlgorithm.
func BenchmarkAPSP(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{16, 32, 64, 128, 256} {
		for _, deg := range []float64{2.2, 8} {
			g := randomGraph(r, n, deg/float64(n))
			for _, alg := range []Algorithm{Dijkstra, FloydWarshall} {
				b.Run(fmt.Sprintf("n%d/m%d/%v", n, g.NumEdges(), alg), func(b *testing.B) {
					for b.Loop() {
						if _, err := AllPairs(g, 1, alg); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkSplit times one FCSP pair of two graphs, split over the workers or not,
// across sizes, to place DefaultSplitWork: the split pays once the pair takes a few
// hundred microseconds.
func BenchmarkSplit(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, n := range []int{20, 40, 60, 100, 200} {
		g, h := randomGraph(r, n, 3/float64(n)), randomGraph(r, n, 3/float64(n))
		gs := []*graph.Graph{g, h}
		for _, sw := range []int64{-1, 1} {
			opt := Options{WeightCol: HopCounts, NodeKernel: nodeKernels["float"], LengthKernel: lengthKernels["gauss"], SplitWork: sw}
			p, err := newPlan(gs, len(gs), opt)
			if err != nil {
				b.Fatal(err)
			}
			work := len(p.sp[0].u) * len(p.sp[1].u)
			b.Run(fmt.Sprintf("work%d/split=%v", work, sw > 0), func(b *testing.B) {
				ws := newScratch()
				for b.Loop() {
					if _, err := p.pair(ws, 0, 1, true); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
