package mgk_test

import (
	"fmt"
	"log"
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// molecules returns two small labelled graphs: a path C–O–C and a triangle
// C–C–O, with the element as node label (column 0) and the bond order as
// edge label (column 0), every edge of weight 1.
func molecules() []*graph.Graph {
	path, err := graph.New(3,
		[]int64{0, 1, 1, 2},   // edges (0, 1) and (1, 2)
		[]float64{1, 1},       // their weights
		[]float64{6, 8, 6}, 1, // one node label per node
		[]float64{1, 1}, 1) // one edge label per edge
	if err != nil {
		log.Fatal(err)
	}
	triangle, err := graph.New(3,
		[]int64{0, 1, 1, 2, 2, 0},
		[]float64{1, 1, 1},
		[]float64{6, 6, 8}, 1,
		[]float64{1, 2, 1}, 1)
	if err != nil {
		log.Fatal(err)
	}
	return []*graph.Graph{path, triangle}
}

// The marginalized kernel's Gram matrix of two molecules, and the same
// matrix normalized by its diagonal.
func ExampleGram() {
	gs := molecules()
	opt := mgk.Options{
		// Labels that differ still match with weight 0.5 (nodes) and 0.25
		// (edges).
		NodeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.25, Col: 0, Width: 1},
		Q:          0.05, // stopping probability
	}
	k := make([]float64, len(gs)*len(gs))
	// symmetric: Y is X, only i <= j is solved and mirrored; nil start
	// probabilities are all ones and nil iters counts nothing.
	unconverged, err := mgk.Gram(gs, nil, nil, nil, true, opt, k, nil)
	if err != nil {
		log.Fatal(err)
	}
	if len(unconverged) > 0 {
		log.Fatal(unconverged)
	}
	for i := range gs {
		for j := range gs {
			fmt.Printf("K[%d][%d] = %.6f  normalized %.6f\n", i, j,
				k[i*2+j], k[i*2+j]/math.Sqrt(k[i*2+i]*k[j*2+j]))
		}
	}
	// Output:
	// K[0][0] = 54.926698  normalized 1.000000
	// K[0][1] = 14.823721  normalized 0.533455
	// K[1][0] = 14.823721  normalized 0.533455
	// K[1][1] = 14.058387  normalized 1.000000
}

// The gradient of each Gram entry with respect to the hyperparameters q,
// then the node kernel's h, then the edge kernel's h.
func ExampleGramGrad() {
	gs := molecules()
	opt := mgk.Options{
		NodeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.25, Col: 0, Width: 1},
		Q:          0.05,
	}
	np := mgk.NumParams(opt)
	k := make([]float64, len(gs)*len(gs))
	grad := make([]float64, len(k)*np)
	if _, err := mgk.GramGrad(gs, nil, nil, nil, true, opt, k, grad, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", np)
	for e := range k {
		fmt.Printf("K = %.6f  dK/dq = %.5g  dK/dh_node = %.5g  dK/dh_edge = %.5g\n",
			k[e], grad[e*np], grad[e*np+1], grad[e*np+2])
	}
	// Output:
	// parameters: 3
	// K = 54.926698  dK/dq = -1005.7  dK/dh_node = 13.283  dK/dh_edge = 0
	// K = 14.823721  dK/dq = -37.147  dK/dh_node = 17.907  dK/dh_edge = 7.0476
	// K = 14.823721  dK/dq = -37.147  dK/dh_node = 17.907  dK/dh_edge = 7.0476
	// K = 14.058387  dK/dq = -30.694  dK/dh_node = 13.638  dK/dh_edge = 7.6221
}
