package wl_test

import (
	"fmt"
	"log"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// molecules returns two small graphs with the element as node label (column
// 0) and the bond order as edge label (column 0): a path C–O–C and a
// triangle C–C–O, every edge of weight 1.
func molecules() []*graph.Graph {
	path, err := graph.New(3, []int64{0, 1, 1, 2}, []float64{1, 1}, []float64{6, 8, 6}, 1, []float64{1, 1}, 1)
	if err != nil {
		log.Fatal(err)
	}
	triangle, err := graph.New(3, []int64{0, 1, 1, 2, 2, 0}, []float64{1, 1, 1}, []float64{6, 6, 8}, 1, []float64{1, 2, 1}, 1)
	if err != nil {
		log.Fatal(err)
	}
	return []*graph.Graph{path, triangle}
}

// The Weisfeiler–Lehman subtree kernel after two refinement rounds: the
// feature map counts each graph's node labels of rounds 0..2, and its Gram
// matrix over the sum-product semiring is the kernel; over sum-min it is
// the WL optimal-assignment kernel.
func ExampleFeatures() {
	gs := molecules()
	// Build the features of all the graphs in one call: they share one
	// label dictionary.
	phi, err := wl.Features(gs, wl.Options{Iterations: 2, NodeLabelCol: 0, EdgeLabelCol: -1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("features:", phi.NumCols)
	for _, s := range []sparsegram.Semiring{sparsegram.SumProduct, sparsegram.SumMin} {
		k := make([]float64, phi.Rows()*phi.Rows())
		if err := sparsegram.Gram(phi, nil, true, sparsegram.Options{Semiring: s}, k); err != nil {
			log.Fatal(err)
		}
		fmt.Println(k)
	}
	// Output:
	// features: 9
	// [15 6 6 15]
	// [9 4 4 9]
}

// The edge label histogram: each graph's edges counted by label, each edge
// in both orientations.
func ExampleEdgeFeatures() {
	gs := molecules()
	phi, err := wl.EdgeFeatures(gs, 0)
	if err != nil {
		log.Fatal(err)
	}
	k := make([]float64, phi.Rows()*phi.Rows())
	if err := sparsegram.Gram(phi, nil, true, sparsegram.Options{}, k); err != nil {
		log.Fatal(err)
	}
	fmt.Println(k)
	// Output:
	// [16 16 16 20]
}
