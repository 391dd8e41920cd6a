package pybind

import (
	"encoding/json"

	"github.com/graphgram/graphgram/gokernel/graphhopper"
)

// ghParams are the GraphHopper kernel's parameters (docs/abi.md).
type ghParams struct {
	deviceParams
	NodeKernel json.RawMessage `json:"node_kernel"`
	NJobs      int             `json:"n_jobs"`
}

// graphHopper computes the GraphHopper kernel (package graphhopper).
func graphHopper(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	var p ghParams
	if err := decode(params, &p); err != nil {
		return err
	}
	nk, _, err := baseKernel("node kernel", p.NodeKernel, r.x.nodeCols)
	if err != nil {
		return err
	}
	if gpu, err := p.gpu(warn, nil, p.NJobs); err != nil {
		return err
	} else if gpu != nil {
		cpuOnly("the GraphHopper kernel", warn)
	}
	opt := graphhopper.Options{NodeKernel: nk, NJobs: p.NJobs, Control: r.ctl}
	return graphKernel(mode, r, b, graphhopper.Gram, graphhopper.Diag, opt)
}
