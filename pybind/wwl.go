package pybind

import (
	"math"

	"github.com/graphgram/graphgram/gokernel/wwl"
)

// wwlParams are the Wasserstein Weisfeiler–Lehman kernel's parameters
// (docs/abi.md).
type wwlParams struct {
	deviceParams
	NIter        int     `json:"n_iter"`
	Continuous   bool    `json:"continuous"`
	NodeLabelCol int     `json:"node_label_col"`
	AttrCol      int     `json:"attr_col"`
	AttrWidth    int     `json:"attr_width"`
	Gamma        float64 `json:"gamma"`
	Distance     bool    `json:"distance"`
	NJobs        int     `json:"n_jobs"`
}

// wassersteinWL computes the WWL kernel exp(−γ·D) (package wwl computes D),
// or D itself when the parameters ask for the distance. The exponential is
// applied here and nowhere else.
func wassersteinWL(mode string, params []byte, r *request, b buffers, warn *warnings) error {
	p := wwlParams{NodeLabelCol: -1}
	if err := decode(params, &p); err != nil {
		return err
	}
	if !p.Distance && !(p.Gamma > 0 && !math.IsInf(p.Gamma, 1)) {
		return inputError("gamma must be a positive finite number, got %v", p.Gamma)
	}
	if p.NodeLabelCol >= r.x.nodeCols || (p.Continuous && p.AttrCol+p.AttrWidth > r.x.nodeCols) {
		return inputError("the node feature columns the kernel reads do not exist: the graphs have %d", r.x.nodeCols)
	}
	opt := wwl.Options{Iterations: p.NIter, Continuous: p.Continuous, NodeLabelCol: p.NodeLabelCol,
		AttrCol: p.AttrCol, AttrWidth: p.AttrWidth, NJobs: p.NJobs, Control: r.ctl}
	if gpu, err := p.gpu(warn, nil, p.NJobs); err != nil {
		return err
	} else if gpu != nil {
		cpuOnly("the Wasserstein Weisfeiler-Lehman kernel", warn)
	}
	if err := graphKernel(mode, r, b, wwl.Distances, wwl.Diag, opt); err != nil || p.Distance {
		return err
	}
	out, err := output[float64](b.out, b.outLen, pairCount(mode, len(r.x.graphs), len(r.y.graphs)), "out")
	if err != nil {
		return err
	}
	for k, d := range out {
		out[k] = math.Exp(-p.Gamma * d)
	}
	return nil
}
