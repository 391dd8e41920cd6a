package pybind

import (
	"fmt"

	"github.com/graphgram/graphgram/gokernel/rwkernel"
)

// rwOptions builds the random-walk options from the flat arguments.
func rwOptions(nodeSpec string, nodeCols int, lamda float64, kind string, steps, nJobs int) (rwkernel.Options, error) {
	nk, err := optionalKernel("node kernel", nodeSpec, nodeCols)
	if err != nil {
		return rwkernel.Options{}, err
	}
	opt := rwkernel.Options{NodeKernel: nk, Lambda: lamda, Steps: steps, NJobs: nJobs}
	switch kind {
	case "geometric":
		opt.Kind = rwkernel.Geometric
	case "exponential":
		opt.Kind = rwkernel.Exponential
	default:
		return opt, fmt.Errorf("kind must be 'geometric' or 'exponential', got %q", kind)
	}
	return opt, nil
}

// RandomWalkGram computes the random-walk kernel matrix K(X, Y) into out,
// float64[len(X)·len(Y)] row-major. descX/descY are batch descriptors
// (docs/abi.md); when symmetric, descY is ignored and only the upper triangle of
// K(X, X) is computed. nodeSpec is the node kernel's JSON expression weighing the
// product graph's nodes, "" for unlabeled graphs. lamda > 0; kind is "geometric"
// or "exponential"; steps is 0 for the infinite series, else the number p of
// steps summed. Edge weights enter the adjacency matrices. A geometric lamda too
// large to converge is an error naming the largest admissible value.
// nJobs <= 0 uses all cores.
func RandomWalkGram(descX, descY uintptr, symmetric bool, nodeSpec string, lamda float64, kind string, steps, nJobs int, out uintptr) (err error) {
	defer guard(&err)
	X, Y, nc, _, err := pairBatches(descX, descY, symmetric)
	if err != nil {
		return err
	}
	opt, err := rwOptions(nodeSpec, nc, lamda, kind, steps, nJobs)
	if err != nil {
		return err
	}
	K, err := resultBuffer(out, len(X)*len(Y))
	if err != nil {
		return err
	}
	return rwkernel.Gram(X, Y, symmetric, opt, K)
}

// RandomWalkDiag computes K(X[i], X[i]) into out, float64[len(X)]; the other
// arguments are as in RandomWalkGram.
func RandomWalkDiag(descX uintptr, nodeSpec string, lamda float64, kind string, steps, nJobs int, out uintptr) (err error) {
	defer guard(&err)
	X, _, nc, _, err := pairBatches(descX, 0, true)
	if err != nil {
		return err
	}
	opt, err := rwOptions(nodeSpec, nc, lamda, kind, steps, nJobs)
	if err != nil {
		return err
	}
	d, err := resultBuffer(out, len(X))
	if err != nil {
		return err
	}
	return rwkernel.Diag(X, opt, d)
}
