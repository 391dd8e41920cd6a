package pybind

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/nspdk"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// nspdkKind is features "nspdk", the neighborhood subgraph pairwise distance
// kernel (semiring "product"): one count matrix per (radius, distance) block,
// whose products K_b become Σ_b K_b(G, G')/√(K_b(G, G) K_b(G', G')) by its
// block rule, its one place.
type nspdkKind struct {
	kindDefaults
	o nspdkParams
}

// nspdkParams are the NSPDK's settings (nspdk.Options): radius r and distance d.
type nspdkParams struct {
	R int `json:"r"`
	D int `json:"d"`
}

func (k *nspdkKind) options() (string, any) { return "nspdk", &k.o }

func (*nspdkKind) semirings() []string { return []string{"product"} }

func (k *nspdkKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	return nspdk.Features(gs, nspdk.Options{Radius: k.o.R, Distance: k.o.D,
		NodeLabelCol: c.p.NodeLabelCol, EdgeLabelCol: c.p.EdgeLabelCol, Control: c.opt.Control})
}

// blocks: c/√(K_b(G, G) K_b(G', G')), summed over the blocks.
func (*nspdkKind) blocks(c *explicitCall) *blockRule {
	return &blockRule{sizes: c.selfProducts, add: nspdk.Accumulate, finish: func([]float64, int) {}}
}

func (*nspdkKind) noFeatureMap() string {
	return "no exact integer feature map: each (radius, distance) block's count vector is divided by its " +
		"norm before the blocks are summed"
}

func (*nspdkKind) describe(i *kindInfo) error {
	i.Bounds["r"] = [2]int{0, nspdk.MaxRadius}
	i.Bounds["d"] = [2]int{0, nspdk.MaxDistance}
	return nil
}

// selfProducts returns each row's product with itself.
func (c *explicitCall) selfProducts(f *sparsegram.Features, _ []*graph.Graph) ([]float64, error) {
	out := make([]float64, f.Rows())
	return out, sparsegram.Diag(f, c.opt, out)
}
