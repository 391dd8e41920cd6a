package mgk

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// The colour-refinement quotient.
//
// Colour refinement (1-WL) on node feature rows and start probabilities, with
// edges told apart by feature row and weight, ends in an equitable partition:
// every node of class A has the same weighted number N_AB(ℓ) of neighbours in
// class B through edges of label ℓ. The solution x of a pair is then constant
// on pairs of classes (the system maps class-constant vectors to class-constant
// vectors and has a unique solution), so it can be solved on classes × classes
// unknowns. Writing c_A = √|A| and x̃_(A,A') = c_A c_A' x_(A,A'), the reduced
// system is the kernel's system on the quotient graph with edge weights
// √(N_AB(ℓ) N_BA(ℓ)) (a self-loop of weight N_AA(ℓ) within a class), the
// original degrees, and the constant vector 1 replaced by c⊗c':
//
//	(D V⁻¹ − W̃) x̃ = D (c⊗c'),  K = Σ p_A p'_A' c_A c_A' x̃_(A,A'),
//
// exact in exact arithmetic. Refining the graphs of one call together gives
// colours that mean the same in every graph, so graphs with equal colour
// histograms have identical quotients and identical Gram rows; Gram solves
// one of them.

// quotient is one graph's reduction: the quotient graph (or the graph itself
// when refinement leaves every node alone), and what newSide needs.
type quotient struct {
	g     *graph.Graph
	start []float64 // class start probabilities; nil = all ones
	deg   []float64 // original degrees per class; nil when g is the original
	cw    []float64 // √|class|; nil when g is the original
	key   string    // equal keys: identical quotients
}

// labeler gives dense ids to byte strings.
type labeler map[string]int32

func (l labeler) id(b []byte) int32 {
	if v, ok := l[string(b)]; ok {
		return v
	}
	v := int32(len(l))
	l[string(b)] = v
	return v
}

func appendFloats(b []byte, xs ...float64) []byte {
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// quotients refines gs together (start probabilities per graph, nil for all
// ones) and returns each graph's quotient.
func quotients(gs []*graph.Graph, starts [][]float64) []quotient {
	// Initial colours: node feature row and start probability; edge labels:
	// feature row and weight. -0 and 0 are told apart, which only costs a
	// merge.
	nodes, edges := labeler{}, labeler{}
	col := make([][]int32, len(gs))
	elab := make([][]int32, len(gs))
	var buf []byte
	for gi, g := range gs {
		col[gi] = make([]int32, g.N)
		for i := range g.N {
			p := 1.0
			if starts != nil && starts[gi] != nil {
				p = starts[gi][i]
			}
			buf = appendFloats(buf[:0], p)
			buf = appendFloats(buf, g.Node(i)...)
			col[gi][i] = nodes.id(buf)
		}
		elab[gi] = make([]int32, g.NumEdges())
		for e := range g.NumEdges() {
			buf = appendFloats(buf[:0], g.Weight[e])
			buf = appendFloats(buf, g.Edge(e)...)
			elab[gi][e] = edges.id(buf)
		}
	}
	// Rounds until the number of colours stops growing: the partition of the
	// union of the graphs is then stable.
	count := len(nodes)
	next := make([][]int32, len(gs))
	for gi, g := range gs {
		next[gi] = make([]int32, g.N)
	}
	var sig []int64
	for {
		dict := labeler{}
		for gi, g := range gs {
			c := col[gi]
			for i := range g.N {
				sig = sig[:0]
				for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
					sig = append(sig, int64(elab[gi][g.EdgeOf[k]])<<32|int64(c[g.Col[k]]))
				}
				slices.Sort(sig)
				buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(c[i]))
				for _, x := range sig {
					buf = binary.LittleEndian.AppendUint64(buf, uint64(x))
				}
				next[gi][i] = dict.id(buf)
			}
		}
		col, next = next, col
		if len(dict) == count {
			break
		}
		count = len(dict)
	}
	out := make([]quotient, len(gs))
	for gi, g := range gs {
		var st []float64
		if starts != nil {
			st = starts[gi]
		}
		out[gi] = buildQuotient(g, st, col[gi], elab[gi])
	}
	return out
}

// buildQuotient forms the quotient of g under the stable colouring col, with
// classes in increasing colour order.
func buildQuotient(g *graph.Graph, start []float64, col, elab []int32) quotient {
	colours := slices.Clone(col)
	slices.Sort(colours)
	colours = slices.Compact(colours)
	nc := len(colours)
	size := make([]int, nc)
	rep := make([]int, nc)
	cls := make([]int32, g.N)
	for i := g.N - 1; i >= 0; i-- {
		a, _ := slices.BinarySearch(colours, col[i])
		cls[i] = int32(a)
		size[a]++
		rep[a] = i
	}
	// The key: colours and class sizes.
	key := make([]byte, 0, 12*nc)
	for a, c := range colours {
		key = binary.LittleEndian.AppendUint32(key, uint32(c))
		key = binary.LittleEndian.AppendUint64(key, uint64(size[a]))
	}
	if nc == g.N {
		return quotient{g: g, start: start, key: string(key)}
	}
	// N_AB(ℓ) from each class's representative, keyed by (B, ℓ).
	type bl struct{ b, l int32 }
	nab := make([]map[bl]float64, nc)
	edgeOf := map[int32]int{} // label → an edge carrying it
	for a := range nc {
		nab[a] = map[bl]float64{}
		r := rep[a]
		for k := g.RowPtr[r]; k < g.RowPtr[r+1]; k++ {
			e := int(g.EdgeOf[k])
			l := elab[e]
			nab[a][bl{cls[g.Col[k]], l}] += g.Val[k]
			edgeOf[l] = e
		}
	}
	var ends []int64
	var wts, efeat []float64
	for a := range nc {
		keys := make([]bl, 0, len(nab[a]))
		for k := range nab[a] {
			if int(k.b) >= a {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(x, y bl) int {
			if x.b != y.b {
				return int(x.b - y.b)
			}
			return int(x.l - y.l)
		})
		for _, k := range keys {
			w := nab[a][k]
			if int(k.b) != a {
				w = math.Sqrt(w * nab[k.b][bl{int32(a), k.l}])
			}
			ends = append(ends, int64(a), int64(k.b))
			wts = append(wts, w)
			efeat = append(efeat, g.Edge(edgeOf[k.l])...)
		}
	}
	nfeat := make([]float64, 0, nc*g.NodeCols)
	deg := make([]float64, nc)
	cw := make([]float64, nc)
	gdeg := g.Degrees()
	var st []float64
	if start != nil {
		st = make([]float64, nc)
	}
	for a := range nc {
		nfeat = append(nfeat, g.Node(rep[a])...)
		deg[a] = gdeg[rep[a]]
		cw[a] = math.Sqrt(float64(size[a]))
		if st != nil {
			st[a] = start[rep[a]]
		}
	}
	qg, err := graph.New(nc, ends, wts, nfeat, g.NodeCols, efeat, g.EdgeCols)
	if err != nil {
		// Cannot happen: the quotient's parts come from a valid graph.
		panic("mgk: quotient graph: " + err.Error())
	}
	return quotient{g: qg, start: st, deg: deg, cw: cw, key: string(key)}
}
