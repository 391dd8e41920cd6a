package octile

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/reorder"
)

// Graph is a graph packed into 8×8 tiles; the package documentation describes
// the layout. It is immutable once packed and may be shared between goroutines.
type Graph struct {
	// G is the graph that was packed. Its node order is the order of every
	// vector that goes with this packed form.
	G *graph.Graph
	// Perm is the reordering applied by PackReordered (packed node k is node
	// Perm[k] of the graph given to it), with the method that produced it; nil
	// when the graph was packed as given.
	Perm  []int
	Order reorder.Method

	// N is the number of nodes and NT = ⌈N/8⌉ the number of tile rows.
	N, NT int

	// TilePtr (NT+1) delimits the tiles of each tile row; TileRow and TileCol
	// (one per tile) locate each tile; Mask (one per tile) marks its stored
	// entries, bit 8r+c for row r and column c within the tile; NzPtr (tiles+1)
	// delimits each tile's nonzeros.
	TilePtr []int32
	TileRow []int32
	TileCol []int32
	Mask    []uint64
	NzPtr   []int32

	// Per nonzero, in tile order and increasing bit order within a tile: its
	// bit index Pos, its edge weight, its edge index into G's edge arrays and
	// its edge class.
	Pos    []uint8
	Weight []float64
	Edge   []int32
	Class  []int32

	// NumClass is the number of distinct edge feature rows; ClassEdge[c] is an
	// edge of class c and EdgeClass[e] the class of edge e.
	NumClass  int
	ClassEdge []int32
	EdgeClass []int32

	// prefix caches, per number of leading feature columns, the coarser
	// classes of rows equal on those columns (see prefixClasses).
	mu     sync.Mutex
	prefix map[int]*prefixClasses
}

// prefixClasses groups edge classes whose feature rows agree on their first
// cols columns: sub[c] is the group of class c and rep[s] an edge of group s.
type prefixClasses struct {
	sub, rep []int32
}

// prefixClassesFor returns the classes of rows compared on their first cols
// columns, computed once per graph and number of columns. A kernel reading
// only those columns cannot tell the edges of one group apart, and grouping
// them keeps class tables small when edges carry features the kernel ignores
// (a continuous attribute next to the label a Kronecker delta reads, say).
func (p *Graph) prefixClassesFor(cols int) *prefixClasses {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc, ok := p.prefix[cols]; ok {
		return pc
	}
	pc := &prefixClasses{sub: make([]int32, p.NumClass)}
	seen := make(map[string]int32)
	for c, e := range p.ClassEdge {
		row := p.G.Edge(int(e))[:min(cols, p.G.EdgeCols)]
		var key string
		if len(row) > 0 {
			key = unsafe.String((*byte)(unsafe.Pointer(&row[0])), 8*len(row))
		}
		s, ok := seen[key]
		if !ok {
			s = int32(len(pc.rep))
			seen[key] = s
			pc.rep = append(pc.rep, e)
		}
		pc.sub[c] = s
	}
	if p.prefix == nil {
		p.prefix = make(map[int]*prefixClasses)
	}
	p.prefix[cols] = pc
	return pc
}

// NumTiles returns the number of non-empty tiles.
func (g *Graph) NumTiles() int { return len(g.TileCol) }

// NNZ returns the number of stored nonzeros.
func (g *Graph) NNZ() int { return len(g.Pos) }

// Pack packs g in its own node order.
func Pack(g *graph.Graph) (*Graph, error) {
	p := &Graph{G: g, N: g.N, NT: (g.N + 7) / 8, Order: reorder.Natural}
	p.classes()
	nt := p.NT
	p.TilePtr = make([]int32, nt+1)
	p.NzPtr = []int32{0}
	// Scratch per tile column of the current tile row.
	mark := make([]int, nt)
	type ent struct {
		pos  uint8
		w    float64
		edge int32
	}
	bucket := make([][]ent, nt)
	var cols []int32
	for it := 0; it < nt; it++ {
		cols = cols[:0]
		for r := 0; r < 8 && 8*it+r < g.N; r++ {
			i := 8*it + r
			for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
				j := int(g.Col[k])
				jt := j / 8
				if mark[jt] != it+1 {
					mark[jt] = it + 1
					bucket[jt] = bucket[jt][:0]
					cols = append(cols, int32(jt))
				}
				bucket[jt] = append(bucket[jt], ent{uint8(8*r + j%8), g.Val[k], g.EdgeOf[k]})
			}
		}
		slices.Sort(cols)
		for _, jt := range cols {
			es := bucket[jt]
			slices.SortStableFunc(es, func(a, b ent) int { return int(a.pos) - int(b.pos) })
			var mask uint64
			for k, e := range es {
				if k > 0 && e.pos == es[k-1].pos {
					// A repeated edge: W is linear in the weight, so equal
					// feature rows can share one nonzero.
					last := len(p.Weight) - 1
					if !slices.Equal(g.Edge(int(e.edge)), g.Edge(int(p.Edge[last]))) {
						r, c := int(e.pos)/8, int(e.pos)%8
						return nil, fmt.Errorf("octile: edges %d and %d both join nodes %d and %d with different features",
							p.Edge[last], e.edge, 8*it+r, 8*int(jt)+c)
					}
					p.Weight[last] += e.w
					continue
				}
				mask |= 1 << e.pos
				p.Pos = append(p.Pos, e.pos)
				p.Weight = append(p.Weight, e.w)
				p.Edge = append(p.Edge, e.edge)
				p.Class = append(p.Class, p.EdgeClass[e.edge])
			}
			p.TileRow = append(p.TileRow, int32(it))
			p.TileCol = append(p.TileCol, jt)
			p.Mask = append(p.Mask, mask)
			p.NzPtr = append(p.NzPtr, int32(len(p.Pos)))
		}
		p.TilePtr[it+1] = int32(len(p.TileCol))
	}
	return p, nil
}

// PackReordered packs g after renumbering its nodes by reorder.Best, which picks
// the order with fewest non-empty tiles. Vectors that go with the packed graph
// follow the new order: packed node k is node Perm[k] of g.
func PackReordered(g *graph.Graph) (*Graph, error) {
	perm, m := reorder.Best(g)
	p, err := Pack(reorder.Permute(g, perm))
	if err != nil {
		return nil, err
	}
	p.Perm, p.Order = perm, m
	return p, nil
}

// classes numbers the distinct edge feature rows in order of first appearance.
func (p *Graph) classes() {
	g := p.G
	m := g.NumEdges()
	p.EdgeClass = make([]int32, m)
	// Rows are compared bit for bit through a string view of their bytes.
	seen := make(map[string]int32)
	for e := 0; e < m; e++ {
		row := g.Edge(e)
		var key string
		if len(row) > 0 {
			key = unsafe.String((*byte)(unsafe.Pointer(&row[0])), 8*len(row))
		}
		c, ok := seen[key]
		if !ok {
			c = int32(len(p.ClassEdge))
			// The key aliases g.EdgeFeat, which is immutable, and the map
			// dies with this call, so no copy is needed.
			seen[key] = c
			p.ClassEdge = append(p.ClassEdge, int32(e))
		}
		p.EdgeClass[e] = c
	}
	p.NumClass = len(p.ClassEdge)
}

// Validate checks the internal consistency of the packed arrays against G. It
// is meant for tests and for data handed to a backend from elsewhere.
func (p *Graph) Validate() error {
	if p.NT != (p.N+7)/8 || len(p.TilePtr) != p.NT+1 || p.TilePtr[0] != 0 {
		return fmt.Errorf("octile: %d tile rows for %d nodes", p.NT, p.N)
	}
	t := len(p.TileCol)
	if int(p.TilePtr[p.NT]) != t || len(p.TileRow) != t || len(p.Mask) != t || len(p.NzPtr) != t+1 {
		return fmt.Errorf("octile: tile arrays disagree on the tile count %d", t)
	}
	z := len(p.Pos)
	if int(p.NzPtr[t]) != z || len(p.Weight) != z || len(p.Edge) != z || len(p.Class) != z {
		return fmt.Errorf("octile: nonzero arrays disagree on the count %d", z)
	}
	for it := 0; it < p.NT; it++ {
		for k := p.TilePtr[it]; k < p.TilePtr[it+1]; k++ {
			if int(p.TileRow[k]) != it || (k > p.TilePtr[it] && p.TileCol[k] <= p.TileCol[k-1]) {
				return fmt.Errorf("octile: tile %d out of order", k)
			}
			if bits.OnesCount64(p.Mask[k]) != int(p.NzPtr[k+1]-p.NzPtr[k]) || p.Mask[k] == 0 {
				return fmt.Errorf("octile: tile %d mask disagrees with its nonzeros", k)
			}
			m := p.Mask[k]
			for q := p.NzPtr[k]; q < p.NzPtr[k+1]; q++ {
				b := bits.TrailingZeros64(m)
				m &= m - 1
				if int(p.Pos[q]) != b {
					return fmt.Errorf("octile: nonzero %d at bit %d, mask says %d", q, p.Pos[q], b)
				}
				i, j := 8*it+b/8, 8*int(p.TileCol[k])+b%8
				e := p.Edge[q]
				u, v := int(p.G.EdgeU[e]), int(p.G.EdgeV[e])
				if !(u == i && v == j) && !(u == j && v == i) {
					return fmt.Errorf("octile: nonzero %d at (%d,%d) names edge %d = (%d,%d)", q, i, j, e, u, v)
				}
				if p.Class[q] != p.EdgeClass[e] || math.IsNaN(p.Weight[q]) {
					return fmt.Errorf("octile: nonzero %d has a bad class or weight", q)
				}
			}
		}
	}
	return nil
}
