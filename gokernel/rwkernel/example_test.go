package rwkernel_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/rwkernel"
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

// The geometric random-walk kernel, unlabelled and with an exact match on
// the node labels: Σ_k λ^k times the number of pairs of walks of length k.
func ExampleGram() {
	gs := molecules()
	for _, nk := range []microkernel.Kernel{
		nil, // unlabelled
		&microkernel.KroneckerDelta{H: 0, Col: 0, Width: 1},
	} {
		opt := rwkernel.Options{NodeKernel: nk, Lambda: 0.1, Kind: rwkernel.Geometric}
		k := make([]float64, len(gs)*len(gs))
		if err := rwkernel.Gram(gs, nil, true, opt, k); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%.6f %.6f\n%.6f %.6f\n", k[0], k[1], k[2], k[3])
	}
	// Output:
	// 11.041667 12.391304
	// 12.391304 15.000000
	// 10.041667 10.041667
	// 10.041667 10.627907
}

// A λ too large for the geometric series to converge is refused, and the
// error says the largest λ the graphs admit.
func ExampleGram_lambda() {
	gs := molecules()
	k := make([]float64, len(gs)*len(gs))
	err := rwkernel.Gram(gs, nil, true, rwkernel.Options{Lambda: 0.5}, k)
	fmt.Println(errors.Is(err, rwkernel.ErrLambda))
	// Output:
	// true
}
