package pybind

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// buffers are the result arrays of one call, as addresses and lengths.
type buffers struct {
	out, iters, grad          uintptr
	outLen, itersLen, gradLen int
}

// kernelFunc computes one kernel in one mode ("gram", "diag", "nodal",
// "gram_grad") from its JSON parameters, recording warnings in warn.
type kernelFunc func(mode string, params []byte, r *request, b buffers, warn *warnings) error

// warnings collects the warnings of a call, one per line as "Class: message"
// with Class the Python warning category.
type warnings struct{ lines []string }

func (w *warnings) add(class, msg string) {
	if msg != "" {
		w.lines = append(w.lines, class+": "+msg)
	}
}

func (w *warnings) String() string { return strings.Join(w.lines, "\n") }

// kernels maps the names Python uses to the kernels of the Go core.
var kernels = map[string]kernelFunc{
	"marginalized":  marginalized,
	"shortest_path": shortestPath,
	"random_walk":   randomWalk,
	"explicit":      explicit,
	"wwl":           wassersteinWL,
	"graphhopper":   graphHopper,
}

// Compute is the one entry point of every kernel computation.
//
// kernel names the kernel ("marginalized", "shortest_path", "random_walk",
// "explicit", "wwl", "graphhopper"),
// mode the result ("gram": K(X, Y), or K(X, X) when descY is 0; "diag": K(x, x)
// for x in X; "nodal": node-pair similarities; "gram_grad": K(X, X) or K(X, Y)
// and its gradient; "diag_grad": K(x, x) and its gradient, marginalized kernel only), params its parameters as JSON (docs/abi.md). descX/descY are batch
// descriptors, out/iters/grad result buffers and ctl the control block, each an
// address with its length in elements; Go checks every length before writing.
// The returned warnings are "" or lines "Class: message" (Class a Python
// warning category, e.g. ConvergenceWarning for unconverged solves); an
// error's text starts with the Python exception it maps to.
func Compute(kernel, mode, params string, descX uintptr, descXLen int, descY uintptr, descYLen int,
	out uintptr, outLen int, iters uintptr, itersLen int, grad uintptr, gradLen int, ctl uintptr, ctlLen int) (warning string, err error) {
	defer guard(&err)
	f, ok := kernels[kernel]
	if !ok {
		return "", inputError("unknown kernel %q", kernel)
	}
	r := &request{}
	if r.ctl, err = control(ctl, ctlLen); err != nil {
		return "", err
	}
	if mode == "diag" || mode == "diag_grad" {
		if descY != 0 || descYLen != 0 {
			return "", inputError("%s takes one list of graphs", mode)
		}
	}
	if r.x, r.y, r.symmetric, err = operands(descX, descXLen, descY, descYLen); err != nil {
		return "", err
	}
	var warn warnings
	err = f(mode, []byte(params), r, buffers{out, iters, grad, outLen, itersLen, gradLen}, &warn)
	return warn.String(), err
}

// decode reads params into v, refusing unknown fields so that a misspelt
// parameter is an error rather than a silent default.
func decode(params []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return inputError("kernel parameters: %v", err)
	}
	return nil
}

// baseKernel parses the base-kernel expression raw (what names it in errors),
// nil when raw is absent or null, and checks the feature columns it reads
// against those the graphs have. It returns the gradient index of each of the
// kernel's hyperparameters (see microkernel.ParseIndexed).
func baseKernel(what string, raw json.RawMessage, cols int) (microkernel.Kernel, []int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	k, index, err := microkernel.ParseIndexed(string(raw))
	if err != nil {
		return nil, nil, inputError("%s: %v", what, err)
	}
	if mc := microkernel.MaxCol(k); mc > cols {
		return nil, nil, inputError("%s reads feature column %d but the graphs have %d", what, mc-1, cols)
	}
	return k, index, nil
}

// pairCount is the number of entries of a mode's result, for len(X) = nx and
// len(Y) = ny.
func pairCount(mode string, nx, ny int) int {
	if mode == "diag" {
		return nx
	}
	return nx * ny
}

// BaseKernel evaluates a base-kernel expression on two feature rows x and y
// (xLen == yLen values each) and writes k(x, y) to out[0] and its gradient
// with respect to the raw hyperparameters to out[1:], each derivative in the
// column its leaf's "index" gives (out has 1 + the number of hyperparameters
// entries). It is how Python evaluates a base kernel: the formulas exist once,
// in package microkernel.
func BaseKernel(spec string, x uintptr, xLen int, y uintptr, yLen int, out uintptr, outLen int) (err error) {
	defer guard(&err)
	if xLen != yLen {
		return inputError("rows of %d and %d values", xLen, yLen)
	}
	k, index, err := baseKernel("base kernel", []byte(spec), xLen)
	if err != nil {
		return err
	}
	if k == nil {
		return inputError("base kernel: no expression")
	}
	np := k.NumParams()
	if err := checkIndex(index, outLen-1, np); err != nil {
		return err
	}
	xs, err := view[float64](x, xLen, "x")
	if err != nil {
		return err
	}
	ys, err := view[float64](y, yLen, "y")
	if err != nil {
		return err
	}
	o, err := output[float64](out, outLen, 1+np, "out")
	if err != nil {
		return err
	}
	grad := make([]float64, np)
	o[0] = k.EvalGrad(xs, ys, grad)
	for i, c := range index {
		o[1+c] = grad[i]
	}
	return nil
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

// graphKernel runs a kernel package's Gram or Diag, which share one contract:
// Gram(X, Y, symmetric, opt, out) and Diag(X, opt, out), out of exactly the
// result's size.
func graphKernel[O any](mode string, r *request, b buffers,
	gram func(X, Y []*graph.Graph, symmetric bool, opt O, out []float64) error,
	diag func(X []*graph.Graph, opt O, out []float64) error, opt O) error {
	nx, ny := len(r.x.graphs), len(r.y.graphs)
	out, err := output[float64](b.out, b.outLen, pairCount(mode, nx, ny), "out")
	if err != nil {
		return err
	}
	switch mode {
	case "gram":
		return gram(r.x.graphs, r.y.graphs, r.symmetric, opt, out)
	case "diag":
		return diag(r.x.graphs, opt, out)
	}
	return inputError("mode %q is only available for the marginalized kernel", mode)
}
