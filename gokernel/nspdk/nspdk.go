// Package nspdk computes the neighborhood subgraph pairwise distance kernel
// (Costa and De Grave 2010): for every radius ρ ≤ r and distance δ ≤ d, each
// ordered pair of nodes (u, v) at shortest-path distance δ is one feature, the
// pair of the classes of the neighbourhood subgraphs of radius ρ rooted at u
// and at v (the subgraphs induced by the nodes within ρ hops). The kernel sums
// over the (r+1)(d+1) blocks (ρ, δ) the cosine of the two graphs' count
// vectors: K = Σ_b K_b(G, G') / √(K_b(G, G) K_b(G', G')), a block where
// either graph has no pair counting 0 (Accumulate).
//
// The class of a neighbourhood subgraph S is GraKeL's invariant (GraKeL 0.1.11,
// NeighborhoodSubgraphPairwiseDistance) with its two string lists sorted:
// each node i of S is labelled by the multiset of pairs (dist(i, j), ℓ(j))
// over the nodes j of S with dist(i, j) ≤ d, distances taken in the whole
// graph, and S's class is the multiset of its node labels together with the
// multiset of its directed edges (L(i), L(j), edge label), each undirected
// edge in both directions and a self-loop once. The root is not marked. Two
// subgraphs share a class exactly when these multisets are equal: the
// classes are numbered over all graphs of one call, without hashing, so
// counts are exact. The invariant is a necessary condition of isomorphism,
// not a sufficient one.
//
// Features returns one count matrix per block; the kernel is not the product
// of one feature map.
package nspdk

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MaxRadius and MaxDistance bound Options.Radius and Options.Distance.
const (
	MaxRadius   = 20
	MaxDistance = 100
)

// Options configures Features.
type Options struct {
	// Radius r ≥ 0 is the largest neighbourhood radius, Distance d ≥ 0 the
	// largest distance between two roots.
	Radius, Distance int
	// NodeLabelCol is the node feature column holding the discrete label
	// (< 0: all nodes alike); EdgeLabelCol the edge feature column holding
	// the edge label (< 0: all edges alike).
	NodeLabelCol, EdgeLabelCol int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// Blocks returns the number of blocks (r+1)(d+1) of radius r and distance d.
func Blocks(r, d int) int { return (r + 1) * (d + 1) }

// Block returns the index of block (ρ, δ) among Features' matrices:
// δ·(r+1) + ρ, distance-major (the order in which GraKeL sums them).
func Block(r, rho, delta int) int { return delta*(r+1) + rho }

// Features returns the count matrix of each block (ρ, δ), in Block order:
// row g counts graph g's ordered node pairs at distance δ by the pair of
// their radius-ρ neighbourhood classes, columns numbering the pairs that
// occur in the block over all graphs of the call. The graphs are processed
// one after another (the class dictionaries are shared).
func Features(graphs []*graph.Graph, opt Options) ([]*sparsegram.Features, error) {
	switch {
	case opt.Radius < 0 || opt.Radius > MaxRadius:
		return nil, fmt.Errorf("radius must be in [0, %d], got %d", MaxRadius, opt.Radius)
	case opt.Distance < 0 || opt.Distance > MaxDistance:
		return nil, fmt.Errorf("distance must be in [0, %d], got %d", MaxDistance, opt.Distance)
	}
	if err := graph.CheckLabelColumns(graphs, opt.NodeLabelCol, opt.EdgeLabelCol); err != nil {
		return nil, err
	}
	nb := Blocks(opt.Radius, opt.Distance)
	x := &extractor{opt: opt, labels: map[string]int32{}, classes: map[string]int32{}, pairs: make([]map[uint64]int32, nb)}
	out := make([]*sparsegram.Features, nb)
	for b := range out {
		x.pairs[b] = map[uint64]int32{}
		out[b] = &sparsegram.Features{Ptr: make([]int, 1, len(graphs)+1)}
	}
	rows := make([][]int32, nb)
	err := schedule.Run(opt.Control, len(graphs), 1, 1, func(_, g int) error {
		x.graph(graphs[g], rows)
		for b, f := range out {
			f.AppendRow(rows[b])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for b, f := range out {
		f.NumCols = len(x.pairs[b])
	}
	return out, nil
}

// extractor holds the call's dictionaries and one graph's scratch space.
type extractor struct {
	opt Options
	// labels numbers node labels (sorted (distance, label) lists), classes
	// neighbourhood classes, pairs[b] block b's pairs of classes.
	labels, classes map[string]int32
	pairs           []map[uint64]int32

	dist  []int16 // n×n distances, -1 beyond max(r, d)
	queue []int32
	ball  []int32 // the nodes of the current neighbourhood
	pos   []int32 // node → its index in ball, or -1
	vl    []int32 // the label ids of ball's nodes
	dl    []distLabel
	toks  []token
	key   []byte
	class []int32 // class[ρ·n + v]
}

type distLabel struct {
	d int16
	l uint64
}

type token struct {
	a, b int32
	e    uint64
}

// bits returns a label value's key; +0 merges −0 into 0.
func bits(x float64) uint64 { return math.Float64bits(x + 0) }

// distances fills x.dist by breadth-first search from every node, to depth lim.
func (x *extractor) distances(gr *graph.Graph, lim int) {
	n := gr.N
	x.dist = slices.Grow(x.dist[:0], n*n)[:n*n]
	for i := range x.dist {
		x.dist[i] = -1
	}
	for s := range n {
		row := x.dist[s*n : (s+1)*n]
		row[s] = 0
		x.queue = append(x.queue[:0], int32(s))
		for h := 0; h < len(x.queue); h++ {
			u := x.queue[h]
			du := row[u]
			if int(du) >= lim {
				break
			}
			for _, v := range gr.Col[gr.RowPtr[u]:gr.RowPtr[u+1]] {
				if row[v] < 0 {
					row[v] = du + 1
					x.queue = append(x.queue, v)
				}
			}
		}
	}
}

// intern returns the id of key in m, adding it if new.
func intern(m map[string]int32, key []byte) int32 {
	id, ok := m[string(key)]
	if !ok {
		id = int32(len(m))
		m[string(key)] = id
	}
	return id
}

// graph appends graph gr's feature ids of each block b to rows[b] (reset first).
func (x *extractor) graph(gr *graph.Graph, rows [][]int32) {
	r, d, n := x.opt.Radius, x.opt.Distance, gr.N
	x.distances(gr, max(r, d))
	lab := make([]uint64, n)
	for v := range lab {
		if x.opt.NodeLabelCol >= 0 {
			lab[v] = bits(gr.Node(v)[x.opt.NodeLabelCol])
		}
	}
	x.pos = slices.Grow(x.pos[:0], n)[:n]
	for i := range x.pos {
		x.pos[i] = -1
	}
	x.class = slices.Grow(x.class[:0], (r+1)*n)[:(r+1)*n]
	for v := range n {
		dv := x.dist[v*n : (v+1)*n]
		for rho := 0; rho <= r; rho++ {
			x.ball = x.ball[:0]
			for u, du := range dv {
				if du >= 0 && int(du) <= rho {
					x.pos[u] = int32(len(x.ball))
					x.ball = append(x.ball, int32(u))
				}
			}
			x.class[rho*n+v] = x.neighbourhood(gr, lab, d)
			for _, u := range x.ball {
				x.pos[u] = -1
			}
		}
	}
	for b := range rows {
		rows[b] = rows[b][:0]
	}
	for u := range n {
		du := x.dist[u*n : (u+1)*n]
		for v, delta := range du {
			if delta < 0 || int(delta) > d {
				continue
			}
			for rho := 0; rho <= r; rho++ {
				b := Block(r, rho, int(delta))
				k := uint64(uint32(x.class[rho*n+u]))<<32 | uint64(uint32(x.class[rho*n+v]))
				id, ok := x.pairs[b][k]
				if !ok {
					id = int32(len(x.pairs[b]))
					x.pairs[b][k] = id
				}
				rows[b] = append(rows[b], id)
			}
		}
	}
}

// neighbourhood returns the class of the subgraph induced by x.ball (x.pos
// its inverse): node labels first, then the class.
func (x *extractor) neighbourhood(gr *graph.Graph, lab []uint64, d int) int32 {
	n := gr.N
	x.vl = x.vl[:0]
	for _, i := range x.ball {
		di := x.dist[int(i)*n : (int(i)+1)*n]
		x.dl = x.dl[:0]
		for _, j := range x.ball {
			if dij := di[j]; dij >= 0 && int(dij) <= d {
				x.dl = append(x.dl, distLabel{dij, lab[j]})
			}
		}
		slices.SortFunc(x.dl, func(a, b distLabel) int {
			if a.d != b.d {
				return int(a.d) - int(b.d)
			}
			return cmp.Compare(a.l, b.l)
		})
		x.key = x.key[:0]
		for _, p := range x.dl {
			x.key = binary.LittleEndian.AppendUint16(x.key, uint16(p.d))
			x.key = binary.LittleEndian.AppendUint64(x.key, p.l)
		}
		x.vl = append(x.vl, intern(x.labels, x.key))
	}
	x.toks = x.toks[:0]
	for k, i := range x.ball {
		for p := gr.RowPtr[i]; p < gr.RowPtr[i+1]; p++ {
			if q := x.pos[gr.Col[p]]; q >= 0 {
				var e uint64
				if x.opt.EdgeLabelCol >= 0 {
					e = bits(gr.Edge(int(gr.EdgeOf[p]))[x.opt.EdgeLabelCol])
				}
				x.toks = append(x.toks, token{x.vl[k], x.vl[q], e})
			}
		}
	}
	slices.SortFunc(x.toks, func(s, t token) int {
		switch {
		case s.a != t.a:
			return int(s.a - t.a)
		case s.b != t.b:
			return int(s.b - t.b)
		}
		return cmp.Compare(s.e, t.e)
	})
	x.key = binary.LittleEndian.AppendUint32(x.key[:0], uint32(len(x.vl)))
	for _, id := range slices.Sorted(slices.Values(x.vl)) {
		x.key = binary.LittleEndian.AppendUint32(x.key, uint32(id))
	}
	for _, t := range x.toks {
		x.key = binary.LittleEndian.AppendUint32(x.key, uint32(t.a))
		x.key = binary.LittleEndian.AppendUint32(x.key, uint32(t.b))
		x.key = binary.LittleEndian.AppendUint64(x.key, t.e)
	}
	return intern(x.classes, x.key)
}

// Accumulate adds one block's term to out: out[i·ny + j] += c / √(nx[i]·ny[j]),
// with c = inter[i·ny + j] the block's product of X's graph i and Y's graph j
// and nx, ny the graphs' products with themselves in the block. A term is 0
// when c is (a graph without pairs in the block has a zero self-product).
func Accumulate(out, inter, nx, ny []float64) {
	for i, a := range nx {
		row, in := out[i*len(ny):(i+1)*len(ny)], inter[i*len(ny):(i+1)*len(ny)]
		for j, b := range ny {
			if c := in[j]; c != 0 {
				row[j] += c / math.Sqrt(a*b)
			}
		}
	}
}
