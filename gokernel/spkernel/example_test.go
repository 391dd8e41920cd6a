package spkernel_test

import (
	"fmt"
	"log"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// molecules returns two small graphs with the element as node label (column
// 0): a path C–O–C and a triangle C–C–O, every edge of weight 1.
func molecules() []*graph.Graph {
	path, err := graph.New(3, []int64{0, 1, 1, 2}, []float64{1, 1}, []float64{6, 8, 6}, 1, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	triangle, err := graph.New(3, []int64{0, 1, 1, 2, 2, 0}, []float64{1, 1, 1}, []float64{6, 6, 8}, 1, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	return []*graph.Graph{path, triangle}
}

// The shortest-path kernel on node labels and hop counts: each entry counts
// the pairs of ordered shortest paths, one in each graph, whose end labels
// and lengths match.
func ExampleGram() {
	gs := molecules()
	opt := spkernel.Options{
		// An exact match on the labels (h = 0: different labels count 0).
		NodeKernel: &microkernel.KroneckerDelta{H: 0, Col: 0, Width: 1},
		// Path lengths in hops; nil LengthKernel matches them exactly.
		WeightCol: spkernel.HopCounts,
	}
	k := make([]float64, len(gs)*len(gs))
	if err := spkernel.Gram(gs, nil, true, opt, k); err != nil {
		log.Fatal(err)
	}
	fmt.Println(k[0:2])
	fmt.Println(k[2:4])
	// Output:
	// [12 8]
	// [8 12]
}

// Continuous lengths: the graph's edge weights as distances, compared by a
// Gaussian on their difference, without node labels.
func ExampleGram_weighted() {
	gs := molecules()
	opt := spkernel.Options{
		LengthKernel: &microkernel.SquareExponential{LengthScale: 1, Col: 0, Width: 1},
		WeightCol:    spkernel.GraphWeight,
	}
	k := make([]float64, len(gs)*len(gs))
	if err := spkernel.Gram(gs, nil, true, opt, k); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.6f %.6f\n%.6f %.6f\n", k[0], k[1], k[2], k[3])
	// Output:
	// 29.704491 31.278368
	// 31.278368 36.000000
}
