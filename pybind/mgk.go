package pybind

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/autodevice"
	"github.com/graphgram/graphgram/cuda/costmodel"
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
	// GradientAccuracy is mgk.Options.GradAccuracy: gradients only, K is unchanged.
	GradientAccuracy float64 `json:"gradient_accuracy"`
	Tol              float64 `json:"tol"`
	MaxIter          int     `json:"maxiter"`
	NJobs            int     `json:"n_jobs"`
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
	opt := mgk.Options{NodeKernel: nk, EdgeKernel: ek, Q: p.Q, Lmin: p.Lmin, Accuracy: p.Accuracy, GradAccuracy: p.GradientAccuracy, Tol: p.Tol, MaxIter: p.MaxIter, NJobs: p.NJobs, Control: r.ctl}
	var work func() costmodel.Workload // diag_grad has no device path
	switch mode {
	case "gram", "gram_grad", "nodal":
		work = func() costmodel.Workload {
			return autodevice.WorkloadOf(costmodel.Marginalized, r.x.graphs, r.y.graphs, r.symmetric)
		}
	case "diag":
		work = func() costmodel.Workload { return autodevice.DiagWorkloadOf(costmodel.Marginalized, r.x.graphs) }
	}
	gpu, err := p.gpu(warn, work, p.NJobs)
	if err != nil {
		return err
	}
	order := append(append([]int{p.QIndex}, nodeIndex...), edgeIndex...)
	o, err := mgkOutputs(mode, &p, opt, r, b, order)
	if err != nil {
		return err
	}
	var bad []mgk.Unconverged
	done := false
	if gpu != nil {
		if bad, done, err = runGPU(gpu, mode, &p, opt, r, o, warn); err != nil {
			return err
		}
	}
	if !done {
		if bad, err = run(mode, opt, r, o); err != nil {
			return err
		}
	}
	if mode == "gram_grad" || mode == "diag_grad" {
		reorder(o.grad, order)
	}
	warn.add("ConvergenceWarning", unconvergedMessage(bad, opt))
	return nil
}

// outputs are a call's result buffers, checked against what its mode writes.
type outputs struct {
	out   []float64 // K (gram, gram_grad), its diagonal (diag) or the node-pair matrix (nodal)
	iters []int32   // optional: solver iterations per entry (gram, gram_grad)
	grad  []float64 // gram_grad: ∂K, one row of Go-ordered hyperparameters per entry
}

// mgkOutputs checks the caller's buffers for mode once, whichever backend
// then computes it; order is the gradient column of each hyperparameter in
// Go's order.
func mgkOutputs(mode string, p *mgkParams, opt mgk.Options, r *request, b buffers, order []int) (o outputs, err error) {
	nx, ny := len(r.x.graphs), len(r.y.graphs)
	switch mode {
	case "gram", "gram_grad":
		if o.out, err = output[float64](b.out, b.outLen, nx*ny, "out"); err != nil {
			return o, err
		}
		if o.iters, err = optionalOutput[int32](b.iters, b.itersLen, nx*ny, "iters"); err != nil {
			return o, err
		}
		if mode == "gram_grad" {
			if err = checkIndex(order, p.NParams, mgk.NumParams(opt)); err != nil {
				return o, err
			}
			o.grad, err = output[float64](b.grad, b.gradLen, nx*ny*p.NParams, "grad")
		}
	case "diag":
		o.out, err = output[float64](b.out, b.outLen, nx, "out")
	case "diag_grad":
		if o.out, err = output[float64](b.out, b.outLen, nx, "out"); err != nil {
			return o, err
		}
		if err = checkIndex(order, p.NParams, mgk.NumParams(opt)); err != nil {
			return o, err
		}
		o.grad, err = output[float64](b.grad, b.gradLen, nx*p.NParams, "grad")
	case "nodal":
		o.out, err = output[float64](b.out, b.outLen, nodes(r.x)*nodes(r.y), "out")
	default:
		err = inputError("unknown mode %q for the marginalized kernel", mode)
	}
	return o, err
}

// runGPU computes mode on the GPU of lib in the precision asked for; done is
// false when the CPU must compute the result instead (a base kernel outside
// the compiled-in set).
func runGPU(lib *cuda.Library, mode string, p *mgkParams, opt mgk.Options, r *request, o outputs, warn *warnings) (bad []mgk.Unconverged, done bool, err error) {
	X, Y := r.x.graphs, r.y.graphs
	prec, _ := p.precision() // checked by gpu()
	switch mode {
	case "gram":
		bad, err = lib.MarginalizedGramStats(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, p.DeviceIndex, prec, o.out, o.iters, nil)
	case "gram_grad":
		bad, err = lib.MarginalizedGramGrad(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, p.DeviceIndex, prec, o.out, o.grad, o.iters)
	case "diag":
		bad, err = lib.MarginalizedDiag(X, r.x.starts, opt, p.DeviceIndex, prec, o.out)
	case "nodal":
		bad, err = lib.MarginalizedNodal(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, p.DeviceIndex, prec, o.out)
	case "diag_grad":
		// n self pairs: the CPU's share of a gradient evaluation that is mostly
		// a gram_grad block (the low-rank GP kernel's normalization).
		cpuOnly(`mode "diag_grad" of the marginalized kernel`, warn)
		return nil, false, nil
	}
	if onCPU(err, warn) {
		return nil, false, nil
	}
	if errors.Is(err, cuda.ErrLaunchTimeout) {
		cpu, err := deviceLost(lib, p.deviceParams, err, warn)
		return nil, !cpu, err
	}
	return bad, true, err
}

// run computes mode on the CPU into the checked buffers.
func run(mode string, opt mgk.Options, r *request, o outputs) ([]mgk.Unconverged, error) {
	X, Y := r.x.graphs, r.y.graphs
	switch mode {
	case "gram":
		return mgk.Gram(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, o.out, o.iters)
	case "gram_grad":
		return mgk.GramGrad(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, o.out, o.grad, o.iters)
	case "diag":
		return mgk.Diag(X, r.x.starts, opt, o.out)
	case "diag_grad":
		return mgk.DiagGrad(X, r.x.starts, opt, o.out, o.grad)
	}
	return mgk.Nodal(X, Y, r.x.starts, r.y.starts, r.symmetric, opt, o.out)
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
