// Package nhash computes the neighborhood hash kernel (Hido and Kashima 2009):
// node labels are bit strings, and each of R rounds relabels every node by
// hashing its label with its neighbours' (a rotation and exclusive ors). Round
// r's kernel value is the fraction of matching labels c/(n + n' − c), with c
// the size of the intersection of the two graphs' label multisets and n, n'
// their node counts; the kernel is the average over rounds 1..R.
//
// Features returns one label count matrix per round; c is the histogram
// intersection (sparsegram.SumMin) of two rows, and Accumulate turns the R
// intersection matrices into the kernel. The kernel is not the product of one
// feature map.
package nhash

import (
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MaxRounds bounds Options.Rounds, MaxBits Options.Bits (a label is one word).
const (
	MaxRounds = 100
	MaxBits   = 64
)

// Options configures Features.
type Options struct {
	// Rounds is the number R ≥ 1 of hash rounds; rounds 1..R are counted
	// (round 0, the initial labels, is not).
	Rounds int
	// Bits is the label length, 1..MaxBits.
	Bits int
	// CountSensitive selects the count-sensitive hash instead of the simple one.
	CountSensitive bool
	// NodeLabelCol is the node feature column holding the discrete label.
	NodeLabelCol int
	// LabelValues holds the label values that occur (sorted, distinct), and
	// LabelBits the initial bit string of each (its low Bits bits are used).
	LabelValues []float64
	LabelBits   []uint64
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// hasher holds the label width.
type hasher struct {
	bits uint
	mask uint64
}

// rot rotates the bits-bit string x left by d mod bits places.
func (h hasher) rot(x uint64, d int) uint64 {
	x &= h.mask
	m := uint(d) % h.bits
	if m == 0 {
		return x
	}
	return (x<<m | x>>(h.bits-m)) & h.mask
}

// simple is ROT(l(v), 1) ⊕ l(u1) ⊕ … ⊕ l(ud) over v's neighbours.
func (h hasher) simple(own uint64, nb []uint64) uint64 {
	x := h.rot(own, 1)
	for _, l := range nb {
		x ^= l
	}
	return x
}

// countSensitive is ROT(l(v), 1) ⊕ the ROT_o(l ⊕ o) of each distinct
// neighbour label l occurring o times; nb is sorted in place.
func (h hasher) countSensitive(own uint64, nb []uint64) uint64 {
	x := h.rot(own, 1)
	slices.Sort(nb)
	for a := 0; a < len(nb); {
		b := a + 1
		for b < len(nb) && nb[b] == nb[a] {
			b++
		}
		o := b - a
		x ^= h.rot(nb[a]^uint64(o), o)
		a = b
	}
	return x
}

// Features returns, for each round r = 1..R, the label count matrix of
// graphs after r hash rounds: row g counts the nodes of graph g by label,
// columns numbering the round's labels over all graphs of the call. A node's
// neighbours are its adjacency list (a self-loop makes it its own neighbour once).
func Features(graphs []*graph.Graph, opt Options) ([]*sparsegram.Features, error) {
	switch {
	case opt.Rounds < 1 || opt.Rounds > MaxRounds:
		return nil, fmt.Errorf("rounds must be in [1, %d], got %d", MaxRounds, opt.Rounds)
	case opt.Bits < 1 || opt.Bits > MaxBits:
		return nil, fmt.Errorf("bits must be in [1, %d], got %d", MaxBits, opt.Bits)
	case len(opt.LabelValues) != len(opt.LabelBits):
		return nil, fmt.Errorf("%d label values but %d bit strings", len(opt.LabelValues), len(opt.LabelBits))
	case !slices.IsSorted(opt.LabelValues):
		return nil, fmt.Errorf("label values must be sorted")
	}
	h := hasher{bits: uint(opt.Bits), mask: math.MaxUint64 >> (64 - opt.Bits)}
	if opt.NodeLabelCol < 0 {
		return nil, fmt.Errorf("node label column %d: the neighborhood hash kernel needs node labels", opt.NodeLabelCol)
	}
	if err := graph.CheckLabelColumns(graphs, opt.NodeLabelCol, -1); err != nil {
		return nil, err
	}
	start := make([]int, len(graphs)+1)
	for g, gr := range graphs {
		start[g+1] = start[g] + gr.N
	}
	// labels[r][u]: node u's label after r rounds, u over the call's nodes.
	labels := make([][]uint64, opt.Rounds+1)
	for r := range labels {
		labels[r] = make([]uint64, start[len(graphs)])
	}
	err := schedule.Run(opt.Control, len(graphs), opt.NJobs, 8, func(_, g int) error {
		gr := graphs[g]
		for v := range gr.N {
			x := gr.Node(v)[opt.NodeLabelCol]
			k, ok := slices.BinarySearch(opt.LabelValues, x)
			if !ok {
				return fmt.Errorf("graph %d: node %d has label %v, which has no bit string", g, v, x)
			}
			labels[0][start[g]+v] = opt.LabelBits[k] & h.mask
		}
		var nb []uint64
		for r := 1; r <= opt.Rounds; r++ {
			prev, next := labels[r-1][start[g]:start[g+1]], labels[r][start[g]:start[g+1]]
			for v := range gr.N {
				nb = nb[:0]
				for _, u := range gr.Col[gr.RowPtr[v]:gr.RowPtr[v+1]] {
					nb = append(nb, prev[u])
				}
				if opt.CountSensitive {
					next[v] = h.countSensitive(prev[v], nb)
				} else {
					next[v] = h.simple(prev[v], nb)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*sparsegram.Features, opt.Rounds)
	for r := range out {
		out[r] = histogram(labels[r+1], start)
	}
	return out, nil
}

// histogram numbers the distinct labels of the call in increasing order and
// counts each graph's.
func histogram(labels []uint64, start []int) *sparsegram.Features {
	distinct := slices.Clone(labels)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	f := &sparsegram.Features{NumCols: len(distinct), Ptr: make([]int, 1, len(start))}
	var ids []int32
	for g := range len(start) - 1 {
		ids = ids[:0]
		for _, l := range labels[start[g]:start[g+1]] {
			k, _ := slices.BinarySearch(distinct, l)
			ids = append(ids, int32(k))
		}
		f.AppendRow(ids)
	}
	return f
}

// Accumulate adds one round's term to out: out[i·ny + j] += c/(nx[i] +
// ny[j] − c), with c = inter[i·ny + j] the round's intersection of the label
// multisets of X's graph i and Y's graph j and nx, ny the graphs' node counts
// (a term is 0 when c is: two empty graphs give 0). After the R rounds' terms,
// Average gives the neighborhood hash kernel.
func Accumulate(out, inter []float64, nx, ny []float64) {
	for i, a := range nx {
		row, in := out[i*len(ny):(i+1)*len(ny)], inter[i*len(ny):(i+1)*len(ny)]
		for j, b := range ny {
			if c := in[j]; c > 0 {
				row[j] += c / (a + b - c)
			}
		}
	}
}

// Average divides the sums of Accumulate by the number of rounds (a division,
// not a product with 1/rounds, as the definition is written).
func Average(out []float64, rounds int) {
	for i := range out {
		out[i] /= float64(rounds)
	}
}
