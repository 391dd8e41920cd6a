package pybind

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/nhash"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// nhKind is features "nh", the neighborhood hash kernel (semiring "min"): R
// label count matrices, one per round, whose histogram intersections c_r
// become (1/R) Σ_r c_r/(n + n' − c_r) by its block rule, its one place.
type nhKind struct {
	kindDefaults
	h nhParams
}

// nhParams are the neighborhood hash kernel's settings (nhash.Options): the
// initial bit string of every label value of the call, drawn by Python from
// the label's value and the kernel's random_state.
type nhParams struct {
	Rounds         int       `json:"rounds"`
	Bits           int       `json:"bits"`
	CountSensitive bool      `json:"count_sensitive"`
	LabelValues    []float64 `json:"label_values"`
	LabelBits      []uint64  `json:"label_bits"`
}

func (k *nhKind) options() (string, any) { return "nh", &k.h }

func (*nhKind) semirings() []string { return []string{"min"} }

func (k *nhKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	h := k.h
	return nhash.Features(gs, nhash.Options{Rounds: h.Rounds, Bits: h.Bits, CountSensitive: h.CountSensitive,
		NodeLabelCol: c.p.NodeLabelCol, LabelValues: h.LabelValues, LabelBits: h.LabelBits,
		NJobs: c.p.NJobs, Control: c.opt.Control})
}

// blocks: c/(n + n' − c) with n, n' the node counts, averaged over the rounds.
func (*nhKind) blocks(*explicitCall) *blockRule {
	return &blockRule{sizes: nodeCounts, add: nhash.Accumulate, finish: nhash.Average}
}

func (*nhKind) noFeatureMap() string {
	return "no explicit feature map: each round's value c/(n + n' - c) is a ratio of histogram " +
		"intersections (a min-max kernel), not a dot product of fixed vectors"
}

func (*nhKind) describe(i *kindInfo) error {
	i.Bounds["rounds"] = [2]int{1, nhash.MaxRounds}
	i.Bounds["bits"] = [2]int{1, nhash.MaxBits}
	return nil
}

// nodeCounts returns the node count of each graph, as float64.
func nodeCounts(_ *sparsegram.Features, gs []*graph.Graph) ([]float64, error) {
	n := make([]float64, len(gs))
	for g, gr := range gs {
		n[g] = float64(gr.N)
	}
	return n, nil
}
