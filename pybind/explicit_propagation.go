package pybind

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/propagation"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// propagationParams are the propagation kernel's rounds and hash functions
// (features "propagation": propagation.Options; "propagation_attr":
// propagation.AttrOptions). Python derives the coefficients and offsets from
// the kernel's random_state and the label values (docs/abi.md).
type propagationParams struct {
	Rounds   int     `json:"t_max"`
	BinWidth float64 `json:"w"`
	// Labels, Sqrt, Unlabeled and Clamp are for discrete labels (the label
	// column is the call's node_label_col).
	Labels    []float64 `json:"labels"`
	Sqrt      bool      `json:"sqrt"`
	Unlabeled int       `json:"unlabeled"`
	Clamp     bool      `json:"clamp"`
	// AttrCol and AttrWidth are for continuous attributes.
	AttrCol   int       `json:"attr_col"`
	AttrWidth int       `json:"attr_width"`
	Coef      []float64 `json:"coef"`
	Offsets   []float64 `json:"offsets"`
}

// propagationFeatures is the feature map of features "propagation" (attr
// false) or "propagation_attr" (attr true).
func (c *explicitCall) propagationFeatures(gs []*graph.Graph, attr bool) (*sparsegram.Features, error) {
	q := c.p.Propagation
	if q == nil {
		return nil, inputError("features %q needs the propagation parameters", c.p.Features)
	}
	if attr {
		return propagation.Attributes(gs, propagation.AttrOptions{Rounds: q.Rounds, BinWidth: q.BinWidth,
			AttrCol: q.AttrCol, AttrWidth: q.AttrWidth, Coef: q.Coef, Offsets: q.Offsets,
			NJobs: c.p.NJobs, Control: c.wlOpt.Control})
	}
	return propagation.Labels(gs, propagation.Options{Rounds: q.Rounds, BinWidth: q.BinWidth,
		LabelCol: c.p.NodeLabelCol, Labels: q.Labels, Coef: q.Coef, Offsets: q.Offsets, Sqrt: q.Sqrt,
		Unlabeled: q.Unlabeled, Clamp: q.Clamp, NJobs: c.p.NJobs, Control: c.wlOpt.Control})
}

// PropagationMaxRounds is the bound on the propagation kernels' t_max
// (propagation.MaxRounds), which Python checks before packing.
func PropagationMaxRounds() int { return propagation.MaxRounds }
