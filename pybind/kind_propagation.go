package pybind

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/propagation"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// propagationKind is features "propagation", the propagation kernel's
// (round, bin) counts on discrete labels (propagation.Labels).
type propagationKind struct {
	kindDefaults
	q propagationParams
}

// propagationAttrKind is features "propagation_attr", the same on continuous
// attributes (propagation.Attributes).
type propagationAttrKind struct{ propagationKind }

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

func (k *propagationKind) options() (string, any) { return "propagation", &k.q }

func (k *propagationKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	q := k.q
	return one(propagation.Labels(gs, propagation.Options{Rounds: q.Rounds, BinWidth: q.BinWidth,
		LabelCol: c.p.NodeLabelCol, Labels: q.Labels, Coef: q.Coef, Offsets: q.Offsets, Sqrt: q.Sqrt,
		Unlabeled: q.Unlabeled, Clamp: q.Clamp, NJobs: c.p.NJobs, Control: c.wlOpt.Control}))
}

func (k *propagationAttrKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	q := k.q
	return one(propagation.Attributes(gs, propagation.AttrOptions{Rounds: q.Rounds, BinWidth: q.BinWidth,
		AttrCol: q.AttrCol, AttrWidth: q.AttrWidth, Coef: q.Coef, Offsets: q.Offsets,
		NJobs: c.p.NJobs, Control: c.wlOpt.Control}))
}

func (*propagationKind) describe(i *kindInfo) error {
	i.Bounds["t_max"] = [2]int{1, propagation.MaxRounds}
	return nil
}
