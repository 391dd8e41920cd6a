package pybind

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/oddsth"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// oddsthKind is features "oddsth", the ODD-ST_h kernel's tree-visit counts.
type oddsthKind struct {
	kindDefaults
	o oddsthParams
}

// oddsthParams are the ODD-ST_h kernel's settings (oddsth.Options): the DAG
// height h, 0 for unbounded.
type oddsthParams struct {
	H int `json:"h"`
}

func (k *oddsthKind) options() (string, any) { return "oddsth", &k.o }

func (k *oddsthKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	return one(oddsth.Features(gs, oddsth.Options{Height: k.o.H, NodeLabelCol: c.p.NodeLabelCol,
		Control: c.opt.Control}))
}

// describe: a bounded height is 1..MaxHeight (0, unbounded, is also accepted).
func (*oddsthKind) describe(i *kindInfo) error {
	i.Bounds["h"] = [2]int{1, oddsth.MaxHeight}
	return nil
}
