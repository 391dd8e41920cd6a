package pybind

import (
	"fmt"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// pairBatches reads the X batch and, unless symmetric, the Y batch, and returns
// the node and edge feature column counts both have (read from the descriptors, so
// that kernels are checked even for empty batches).
func pairBatches(descX, descY uintptr, symmetric bool) (X, Y []*graph.Graph, nodeCols, edgeCols int, err error) {
	if X, err = readBatch(descX); err != nil {
		return nil, nil, 0, 0, fmt.Errorf("X: %w", err)
	}
	d := i64s(descX, descLen)
	nodeCols, edgeCols = int(d[descNodeCols]), int(d[descEdgeCols])
	if symmetric {
		return X, X, nodeCols, edgeCols, nil
	}
	if Y, err = readBatch(descY); err != nil {
		return nil, nil, 0, 0, fmt.Errorf("Y: %w", err)
	}
	d = i64s(descY, descLen)
	return X, Y, min(nodeCols, int(d[descNodeCols])), min(edgeCols, int(d[descEdgeCols])), nil
}

// optionalKernel parses spec, "" meaning no kernel (nil).
func optionalKernel(what, spec string, cols int) (microkernel.Kernel, error) {
	if spec == "" {
		return nil, nil
	}
	return readKernel(what, spec, cols)
}

// resultBuffer views the float64 output at addr, which must be given whenever
// there is something to write.
func resultBuffer(addr uintptr, n int) ([]float64, error) {
	if addr == 0 && n > 0 {
		return nil, fmt.Errorf("out: null output buffer")
	}
	return f64s(addr, n), nil
}

// spOptions builds the shortest-path options from the flat arguments.
func spOptions(nodeSpec, lengthSpec string, nodeCols, edgeCols, weightCol, nJobs int) (spkernel.Options, error) {
	nk, err := optionalKernel("node kernel", nodeSpec, nodeCols)
	if err != nil {
		return spkernel.Options{}, err
	}
	lk, err := optionalKernel("length kernel", lengthSpec, 1)
	if err != nil {
		return spkernel.Options{}, err
	}
	if weightCol >= edgeCols {
		return spkernel.Options{}, fmt.Errorf("weight column %d does not exist: the graphs have %d edge feature columns", weightCol, edgeCols)
	}
	return spkernel.Options{NodeKernel: nk, LengthKernel: lk, WeightCol: weightCol, NJobs: nJobs}, nil
}

// ShortestPathGram computes the shortest-path kernel matrix K(X, Y) into out,
// float64[len(X)·len(Y)] row-major. descX/descY are batch descriptors
// (docs/abi.md); when symmetric, descY is ignored and only the upper triangle of
// K(X, X) is computed. nodeSpec is the node kernel's JSON expression, "" for
// unlabeled nodes; lengthSpec the length kernel's, reading column 0 of a
// one-column row that holds a path length, "" for an exact match of lengths.
// weightCol is -1 for hop counts, else the edge feature column holding edge
// lengths (finite, non-negative). nJobs <= 0 uses all cores.
func ShortestPathGram(descX, descY uintptr, symmetric bool, nodeSpec, lengthSpec string, weightCol, nJobs int, out uintptr) (err error) {
	defer guard(&err)
	X, Y, nc, ec, err := pairBatches(descX, descY, symmetric)
	if err != nil {
		return err
	}
	opt, err := spOptions(nodeSpec, lengthSpec, nc, ec, weightCol, nJobs)
	if err != nil {
		return err
	}
	K, err := resultBuffer(out, len(X)*len(Y))
	if err != nil {
		return err
	}
	return spkernel.Gram(X, Y, symmetric, opt, K)
}

// ShortestPathDiag computes K(X[i], X[i]) into out, float64[len(X)]; the other
// arguments are as in ShortestPathGram.
func ShortestPathDiag(descX uintptr, nodeSpec, lengthSpec string, weightCol, nJobs int, out uintptr) (err error) {
	defer guard(&err)
	X, _, nc, ec, err := pairBatches(descX, 0, true)
	if err != nil {
		return err
	}
	opt, err := spOptions(nodeSpec, lengthSpec, nc, ec, weightCol, nJobs)
	if err != nil {
		return err
	}
	d, err := resultBuffer(out, len(X))
	if err != nil {
		return err
	}
	return spkernel.Diag(X, opt, d)
}
