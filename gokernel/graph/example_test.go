package graph_test

import (
	"fmt"
	"log"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// A path of three nodes with one label per node and per edge, and a
// self-loop on its middle node: New copies the arrays and builds the
// adjacency the kernels read (CSR, both directions of an edge, a self-loop
// once).
func ExampleNew() {
	g, err := graph.New(3,
		[]int64{0, 1, 1, 2, 1, 1}, // edges (0, 1), (1, 2) and the self-loop (1, 1)
		[]float64{1, 0.5, 2},      // their weights
		[]float64{6, 8, 6}, 1,     // node features: 3 rows of 1 column
		[]float64{1, 2, 0}, 1) // edge features: 3 rows of 1 column
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nodes:", g.N, "edges:", g.NumEdges())
	fmt.Println("node 1:", g.Node(1), "edge 1:", g.Edge(1))
	fmt.Println("degrees:", g.Degrees())
	for i := range g.N {
		lo, hi := g.RowPtr[i], g.RowPtr[i+1]
		fmt.Printf("node %d: neighbours %v, weights %v\n", i, g.Col[lo:hi], g.Val[lo:hi])
	}
	// Output:
	// nodes: 3 edges: 3
	// node 1: [8] edge 1: [2]
	// degrees: [1 3.5 0.5]
	// node 0: neighbours [1], weights [1]
	// node 1: neighbours [0 2 1], weights [1 0.5 2]
	// node 2: neighbours [1], weights [0.5]
}
