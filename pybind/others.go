package pybind

import (
	"encoding/json"
	"fmt"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/rwkernel"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// spParams are the shortest-path kernel's parameters (docs/abi.md).
type spParams struct {
	deviceParams
	NodeKernel   json.RawMessage `json:"node_kernel"`
	LengthKernel json.RawMessage `json:"length_kernel"`
	WeightCol    int             `json:"weight_col"`
	NJobs        int             `json:"n_jobs"`
}

// shortestPath computes the shortest-path kernel (package spkernel).
func shortestPath(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	var p spParams
	if err := decode(params, &p); err != nil {
		return err
	}
	nk, _, err := baseKernel("node kernel", p.NodeKernel, r.x.nodeCols)
	if err != nil {
		return err
	}
	// The length kernel compares one-column rows holding a path length.
	lk, _, err := baseKernel("length kernel", p.LengthKernel, 1)
	if err != nil {
		return err
	}
	if p.WeightCol >= r.x.edgeCols {
		return inputError("weight column %d does not exist: the graphs have %d edge feature columns", p.WeightCol, r.x.edgeCols)
	}
	opt := spkernel.Options{NodeKernel: nk, LengthKernel: lk, WeightCol: p.WeightCol, NJobs: p.NJobs, Control: r.ctl}
	gpu, err := p.gpu(warn)
	if err != nil {
		return err
	}
	if gpu && mode == "gram" {
		prec, _ := p.precision() // checked by gpu()
		out, err := output[float64](b.out, b.outLen, len(r.x.graphs)*len(r.y.graphs), "out")
		if err != nil {
			return err
		}
		err = cuda.ShortestPathGram(r.x.graphs, r.y.graphs, r.symmetric, opt, p.DeviceIndex, prec, cuda.SPHybrid{}, out, nil)
		if !onCPU(err, warn) {
			return err
		}
	} else if gpu {
		cpuOnly(fmt.Sprintf("mode %q of the shortest-path kernel", mode), warn)
	}
	return graphKernel(mode, r, b, spkernel.Gram, spkernel.Diag, opt)
}

// rwParams are the random-walk kernel's parameters (docs/abi.md).
type rwParams struct {
	deviceParams
	NodeKernel json.RawMessage `json:"node_kernel"`
	Lamda      float64         `json:"lamda"`
	Kind       string          `json:"kind"`
	Steps      int             `json:"steps"`
	NJobs      int             `json:"n_jobs"`
}

// randomWalk computes the random-walk kernel (package rwkernel).
func randomWalk(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	var p rwParams
	if err := decode(params, &p); err != nil {
		return err
	}
	nk, _, err := baseKernel("node kernel", p.NodeKernel, r.x.nodeCols)
	if err != nil {
		return err
	}
	opt := rwkernel.Options{NodeKernel: nk, Lambda: p.Lamda, Steps: p.Steps, NJobs: p.NJobs, Control: r.ctl}
	switch p.Kind {
	case "geometric":
		opt.Kind = rwkernel.Geometric
	case "exponential":
		opt.Kind = rwkernel.Exponential
	default:
		return inputError("kind must be 'geometric' or 'exponential', got %q", p.Kind)
	}
	if gpu, err := p.gpu(warn); err != nil {
		return err
	} else if gpu {
		cpuOnly("the random-walk kernel", warn)
	}
	return graphKernel(mode, r, b, rwkernel.Gram, rwkernel.Diag, opt)
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
