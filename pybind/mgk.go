package pybind

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/gokernel/mgk"
)

// maxReported is how many unconverged pairs a warning names.
const maxReported = 10

// mgkParams are the marginalized kernel's parameters (docs/abi.md). Every
// hyperparameter carries the index of its gradient column: q has QIndex, the
// base kernels' leaves their "index" fields. NParams is how many hyperparameters
// Python declares; Go checks that it finds the same before writing gradients.
type mgkParams struct {
	deviceParams
	NodeKernel json.RawMessage `json:"node_kernel"`
	EdgeKernel json.RawMessage `json:"edge_kernel"`
	Q          float64         `json:"q"`
	QIndex     int             `json:"q_index"`
	NParams    int             `json:"n_params"`
	Lmin       int             `json:"lmin"`
	Accuracy   float64         `json:"accuracy"`
	Tol        float64         `json:"tol"`
	MaxIter    int             `json:"maxiter"`
	NJobs      int             `json:"n_jobs"`
}

// marginalized computes the marginalized graph kernel (package mgk).
func marginalized(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	var p mgkParams
	if err := decode(params, &p); err != nil {
		return err
	}
	nk, nodeIndex, err := baseKernel("node kernel", p.NodeKernel, r.x.nodeCols)
	if err != nil {
		return err
	}
	ek, edgeIndex, err := baseKernel("edge kernel", p.EdgeKernel, r.x.edgeCols)
	if err != nil {
		return err
	}
	if nk == nil || ek == nil {
		return inputError("the marginalized kernel needs a node and an edge kernel")
	}
	opt := mgk.Options{NodeKernel: nk, EdgeKernel: ek, Q: p.Q, Lmin: p.Lmin, Accuracy: p.Accuracy, Tol: p.Tol, MaxIter: p.MaxIter, NJobs: p.NJobs, Control: r.ctl}
	gpu, err := p.gpu()
	if err != nil {
		return err
	}
	var bad []mgk.Unconverged
	done := false
	order := append(append([]int{p.QIndex}, nodeIndex...), edgeIndex...)
	if gpu {
		if bad, done, err = runGPU(mode, &p, opt, r, b, order, warn); err != nil {
			return err
		}
	}
	if !done {
		if bad, err = run(mode, &p, opt, r, b, order); err != nil {
			return err
		}
	}
	warn.add("ConvergenceWarning", unconvergedMessage(bad, opt))
	return nil
}

// runGPU computes the modes the GPU backend implements (gram, gram_grad,
// diag, nodal) in the precision asked for; done is false when the CPU must
// compute the result instead. order is the gradient column of each
// hyperparameter in Go's order, as for run.
func runGPU(mode string, p *mgkParams, opt mgk.Options, r *request, b buffers, order []int, warn *warnings) (bad []mgk.Unconverged, done bool, err error) {
	X, Y := r.x.graphs, r.y.graphs
	prec, _ := p.precision() // checked by gpu()
	switch mode {
	case "gram":
		K, err := output[float64](b.out, b.outLen, len(X)*len(Y), "out")
		if err != nil {
			return nil, false, err
		}
		iters, err := optionalOutput[int32](b.iters, b.itersLen, len(X)*len(Y), "iters")
		if err != nil {
			return nil, false, err
		}
		bad, err = cuda.MarginalizedGramStats(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, p.DeviceIndex, prec, K, iters, nil)
		if onCPU(err, warn) {
			return nil, false, nil
		}
		return bad, true, err
	case "gram_grad":
		K, err := output[float64](b.out, b.outLen, len(X)*len(Y), "out")
		if err != nil {
			return nil, false, err
		}
		iters, err := optionalOutput[int32](b.iters, b.itersLen, len(X)*len(Y), "iters")
		if err != nil {
			return nil, false, err
		}
		if err := checkIndex(order, p.NParams, mgk.NumParams(opt)); err != nil {
			return nil, false, err
		}
		G, err := output[float64](b.grad, b.gradLen, len(X)*len(Y)*p.NParams, "grad")
		if err != nil {
			return nil, false, err
		}
		bad, err = cuda.MarginalizedGramGrad(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, p.DeviceIndex, prec, K, G, iters)
		if onCPU(err, warn) {
			return nil, false, nil
		}
		if err == nil {
			reorder(G, order)
		}
		return bad, true, err
	case "diag":
		d, err := output[float64](b.out, b.outLen, len(X), "out")
		if err != nil {
			return nil, false, err
		}
		bad, err = cuda.MarginalizedDiag(X, r.x.starts, opt, p.DeviceIndex, prec, d)
		if onCPU(err, warn) {
			return nil, false, nil
		}
		return bad, true, err
	case "nodal":
		R, err := output[float64](b.out, b.outLen, nodes(r.x)*nodes(r.y), "out")
		if err != nil {
			return nil, false, err
		}
		bad, err = cuda.MarginalizedNodal(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, p.DeviceIndex, prec, R)
		if onCPU(err, warn) {
			return nil, false, nil
		}
		return bad, true, err
	}
	cpuOnly(fmt.Sprintf("mode %q of the marginalized kernel", mode), warn)
	return nil, false, nil
}

// run computes the marginalized kernel in one mode into the caller's buffers;
// order is the gradient column of each hyperparameter in Go's order.
func run(mode string, p *mgkParams, opt mgk.Options, r *request, b buffers, order []int) ([]mgk.Unconverged, error) {
	X, Y := r.x.graphs, r.y.graphs
	nx, ny := len(X), len(Y)
	switch mode {
	case "gram", "gram_grad":
		K, err := output[float64](b.out, b.outLen, nx*ny, "out")
		if err != nil {
			return nil, err
		}
		iters, err := optionalOutput[int32](b.iters, b.itersLen, nx*ny, "iters")
		if err != nil {
			return nil, err
		}
		if mode == "gram" {
			return mgk.Gram(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, K, iters)
		}
		if err := checkIndex(order, p.NParams, mgk.NumParams(opt)); err != nil {
			return nil, err
		}
		G, err := output[float64](b.grad, b.gradLen, nx*ny*p.NParams, "grad")
		if err != nil {
			return nil, err
		}
		bad, err := mgk.GramGrad(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, K, G, iters)
		if err == nil {
			reorder(G, order)
		}
		return bad, err
	case "diag":
		d, err := output[float64](b.out, b.outLen, nx, "out")
		if err != nil {
			return nil, err
		}
		return mgk.Diag(X, r.x.starts, opt, d)
	case "nodal":
		R, err := output[float64](b.out, b.outLen, nodes(r.x)*nodes(r.y), "out")
		if err != nil {
			return nil, err
		}
		return mgk.Nodal(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, R)
	}
	return nil, inputError("unknown mode %q for the marginalized kernel", mode)
}

// checkIndex checks that order, the gradient column of each hyperparameter in
// the order Go computes them, is a permutation of 0..declared-1 and that Go
// found as many hyperparameters as Python declared. A mismatch is a bug in one
// of the two halves, so it is a RuntimeError, raised before any gradient is written.
func checkIndex(order []int, declared, found int) error {
	fail := func(format string, args ...any) error {
		return &pyError{runtimeError, fmt.Errorf("gradient layout: "+format, args...)}
	}
	if declared != found || len(order) != found {
		return fail("Python declares %d hyperparameters, the Go core finds %d", declared, found)
	}
	seen := make([]bool, found)
	for k, i := range order {
		if i < 0 || i >= found || seen[i] {
			return fail("hyperparameter %d has gradient column %d, which is missing, out of range or repeated", k, i)
		}
		seen[i] = true
	}
	return nil
}

// reorder moves each gradient row of G from Go's hyperparameter order to the
// columns order gives.
func reorder(G []float64, order []int) {
	np := len(order)
	identity := true
	for k, i := range order {
		identity = identity && k == i
	}
	if identity || np == 0 {
		return
	}
	tmp := make([]float64, np)
	for r := 0; r+np <= len(G); r += np {
		for k, i := range order {
			tmp[i] = G[r+k]
		}
		copy(G[r:r+np], tmp)
	}
}

// nodes is the total node count of a batch.
func nodes(b *batch) int {
	n := 0
	for _, g := range b.graphs {
		n += g.N
	}
	return n
}

// unconvergedMessage describes unconverged solves for a Python warning: up to
// maxReported pairs with residual and iterations, and the total count.
func unconvergedMessage(bad []mgk.Unconverged, opt mgk.Options) string {
	if len(bad) == 0 {
		return ""
	}
	maxIter := opt.MaxIter
	if maxIter == 0 {
		maxIter = mgk.DefaultMaxIter
	}
	// What the solves aimed for: the residual tolerance the caller set, else
	// the accuracy contract the tolerances are derived from.
	target := fmt.Sprintf("the accuracy %g", opt.Accuracy)
	switch {
	case opt.Tol > 0:
		target = fmt.Sprintf("the tolerance %g", opt.Tol)
	case opt.Accuracy == 0:
		target = fmt.Sprintf("the accuracy %g", mgk.DefaultAccuracy)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d solve(s) did not reach %s within %d iterations (raise maxiter or accuracy, or check that the base kernels are at most 1): ", len(bad), target, maxIter)
	for k, u := range bad[:min(len(bad), maxReported)] {
		if k > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "X[%d] × Y[%d] residual %.3g after %d iterations", u.I, u.J, u.Residual, u.Iterations)
	}
	if len(bad) > maxReported {
		fmt.Fprintf(&b, "; and %d more", len(bad)-maxReported)
	}
	return b.String()
}
