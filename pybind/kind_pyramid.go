package pybind

import (
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/pyramid"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// pyramidKind is features "pyramid", the pyramid match kernel (semiring
// "min"): the weighted counts' histogram intersection is 2^(L−1) times the
// kernel, so the Gram and diagonal entries are scaled by pyramid.Scale(L) and
// the (unary-expanded) feature rows by its square root.
type pyramidKind struct {
	kindDefaults
	o pyramidParams
}

// pyramidParams are the pyramid match kernel's settings (pyramid.Options):
// L levels, dimension d.
type pyramidParams struct {
	L int `json:"L"`
	D int `json:"d"`
}

func (k *pyramidKind) options() (string, any) { return "pyramid", &k.o }

func (*pyramidKind) semirings() []string { return []string{"min"} }

func (k *pyramidKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	return one(pyramid.Features(gs, pyramid.Options{Levels: k.o.L, Dim: k.o.D,
		NodeLabelCol: c.p.NodeLabelCol, NJobs: c.p.NJobs, Control: c.opt.Control}))
}

func (k *pyramidKind) gramScale() float64 { return pyramid.Scale(k.o.L) }

func (k *pyramidKind) featureScale() float64 { return math.Sqrt(pyramid.Scale(k.o.L)) }

func (*pyramidKind) describe(i *kindInfo) error {
	i.Bounds["L"] = [2]int{1, pyramid.MaxLevels}
	i.Bounds["d"] = [2]int{1, pyramid.MaxDim}
	return nil
}
