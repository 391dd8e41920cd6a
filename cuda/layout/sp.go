package layout

import (
	"fmt"
	"math"
	"sort"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// SPGraphs is ggc_sp_graphs with Go slices: the shortest-path graphs of a list
// (each unordered pair u < v of connected distinct nodes once), their lengths
// as ids into Lengths.
type SPGraphs struct {
	NumGraphs  int
	NodeCols   int32
	TotalNodes int64
	TotalSP    int64
	NodeOff    []int64
	SPOff      []int64
	U, V, Len  []int32
	NodeFeat   []float64
}

// SP computes shortest paths (spkernel.AllPairs) of every graph of the lists
// and returns their SP graphs with length ids into one sorted table of
// distinct lengths shared by all lists. nodeCols is the feature stride (≥ 1).
func SP(lists [][]*graph.Graph, weightCol, nodeCols, njobs int) ([]*SPGraphs, []float64, error) {
	type sp struct {
		u, v []int32
		d    []float64
	}
	var all []*graph.Graph
	for _, l := range lists {
		all = append(all, l...)
	}
	sps := make([]sp, len(all))
	err := schedule.Run(nil, len(all), njobs, 4, func(_, k int) error {
		g := all[k]
		d, err := spkernel.AllPairs(g, weightCol, spkernel.Auto)
		if err != nil {
			return fmt.Errorf("graph %d: %w", k, err)
		}
		var s sp
		for u := 0; u < g.N; u++ {
			for v := u + 1; v < g.N; v++ {
				if x := d[u*g.N+v]; !math.IsInf(x, 0) {
					s.u, s.v, s.d = append(s.u, int32(u)), append(s.v, int32(v)), append(s.d, x)
				}
			}
		}
		sps[k] = s
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	ids := map[float64]int32{}
	for _, s := range sps {
		for _, x := range s.d {
			ids[x] = 0
		}
	}
	lengths := make([]float64, 0, len(ids)+1)
	for x := range ids {
		lengths = append(lengths, x)
	}
	sort.Float64s(lengths)
	for k, x := range lengths {
		ids[x] = int32(k)
	}
	out := make([]*SPGraphs, len(lists))
	k := 0
	for li, l := range lists {
		L := &SPGraphs{NumGraphs: len(l), NodeCols: int32(nodeCols), NodeOff: []int64{0}, SPOff: []int64{0}}
		for _, g := range l {
			s := sps[k]
			k++
			L.U = append(L.U, s.u...)
			L.V = append(L.V, s.v...)
			for _, x := range s.d {
				L.Len = append(L.Len, ids[x])
			}
			for i := 0; i < g.N; i++ {
				row := make([]float64, nodeCols)
				copy(row, g.Node(i)[:min(nodeCols, g.NodeCols)])
				L.NodeFeat = append(L.NodeFeat, row...)
			}
			L.TotalNodes += int64(g.N)
			L.TotalSP += int64(len(s.u))
			L.NodeOff = append(L.NodeOff, L.TotalNodes)
			L.SPOff = append(L.SPOff, L.TotalSP)
		}
		L.U, L.V, L.Len, L.NodeFeat = pad(L.U), pad(L.V), pad(L.Len), pad(L.NodeFeat)
		out[li] = L
	}
	return out, pad(lengths), nil
}

// NumSP returns the SP-edge count of graph i.
func (L *SPGraphs) NumSP(i int) int64 { return L.SPOff[i+1] - L.SPOff[i] }
