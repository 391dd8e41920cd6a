package pybind

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graphlet"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// graphletKind is features "graphlets", the graphlet kernel: counts of the
// k-node induced subgraphs by isomorphism class, in columns fixed by k
// (graphletClasses). With frequencies, each graph's counts are divided by
// their sum (rowScale).
type graphletKind struct {
	kindDefaults
	o graphletParams
}

// graphletParams are the graphlet kernel's settings (graphlet.Options).
type graphletParams struct {
	K         int    `json:"k"`
	Samples   int    `json:"samples"`
	Connected bool   `json:"connected"`
	Seed      uint64 `json:"seed"`
	// Frequencies divides each graph's counts by their sum (rowScale).
	Frequencies bool `json:"frequencies"`
}

func (k *graphletKind) options() (string, any) { return "graphlets", &k.o }

func (k *graphletKind) features(c *explicitCall, gs []*graph.Graph) ([]*sparsegram.Features, error) {
	o := k.o
	return one(graphlet.Features(gs, graphlet.Options{K: o.K, Samples: o.Samples, Connected: o.Connected,
		Seed: o.Seed, NJobs: c.p.NJobs, Control: c.opt.Control}))
}

// rowScale is the graphlet kernel's frequency rule, its one place: with
// frequencies, a graph's graphlet counts are divided by their sum (the number
// of subsets counted or samples kept), so that K(G, G') = Σ_c f_c(G) f_c(G').
// A graph without graphlets keeps its empty row (scale 1).
func (k *graphletKind) rowScale(f *sparsegram.Features) []float64 {
	if !k.o.Frequencies {
		return nil
	}
	s := make([]float64, f.Rows())
	for r := range s {
		var sum uint64
		for _, v := range f.Val[f.Ptr[r]:f.Ptr[r+1]] {
			sum += uint64(v)
		}
		s[r] = float64(max(sum, 1))
	}
	return s
}

// describe: the bounds, and with k the graphlets of its columns. A sample
// count is 1..MaxSamples (0, exact counts, is also accepted).
func (k *graphletKind) describe(i *kindInfo) error {
	i.Bounds["k"] = [2]int{graphlet.MinK, graphlet.MaxK}
	i.Bounds["samples"] = [2]int{1, graphlet.MaxSamples}
	switch {
	case k.o.K == 0:
		return nil
	case k.o.K < graphlet.MinK || k.o.K > graphlet.MaxK:
		return inputError("graphlet size k must be in [%d, %d], got %d", graphlet.MinK, graphlet.MaxK, k.o.K)
	}
	i.Classes = graphletClasses(k.o.K)
	return nil
}

// graphletClass is one column of the graphlet kernel: a graphlet's edges
// among its nodes 0..k-1, and whether it is connected.
type graphletClass struct {
	Edges     [][2]int `json:"edges"`
	Connected bool     `json:"connected"`
}

// graphletClasses returns the graphlets of size k in column order (none for
// a k out of range).
func graphletClasses(k int) []graphletClass {
	out := make([]graphletClass, graphlet.NumClasses(k))
	for c := range out {
		out[c].Edges, out[c].Connected = graphlet.Class(k, c)
		if out[c].Edges == nil {
			out[c].Edges = [][2]int{}
		}
	}
	return out
}
