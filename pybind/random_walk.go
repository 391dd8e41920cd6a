package pybind

import (
	"encoding/json"

	"github.com/graphgram/graphgram/gokernel/rwkernel"
)

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
	if gpu, err := p.gpu(warn, nil, p.NJobs); err != nil {
		return err
	} else if gpu != nil {
		cpuOnly("the random-walk kernel", warn)
	}
	return graphKernel(mode, r, b, rwkernel.Gram, rwkernel.Diag, opt)
}
