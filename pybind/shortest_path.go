package pybind

import (
	"encoding/json"
	"fmt"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/autodevice"
	"github.com/graphgram/graphgram/cuda/costmodel"
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
	var work func() costmodel.Workload // only the Gram matrix has a device path
	if mode == "gram" {
		work = func() costmodel.Workload {
			return autodevice.WorkloadOf(costmodel.ShortestPath, r.x.graphs, r.y.graphs, r.symmetric)
		}
	}
	gpu, err := p.gpu(warn, work, p.NJobs)
	if err != nil {
		return err
	}
	if gpu != nil && mode == "gram" {
		prec, _ := p.precision() // checked by gpu()
		out, err := output[float64](b.out, b.outLen, len(r.x.graphs)*len(r.y.graphs), "out")
		if err != nil {
			return err
		}
		err = gpu.ShortestPathGram(r.x.graphs, r.y.graphs, r.symmetric, opt, p.DeviceIndex, prec, cuda.SPHybrid{}, out, nil)
		if !onCPU(err, warn) {
			return err
		}
	} else if gpu != nil {
		cpuOnly(fmt.Sprintf("mode %q of the shortest-path kernel", mode), warn)
	}
	return graphKernel(mode, r, b, spkernel.Gram, spkernel.Diag, opt)
}
