package octile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// Path selects how a Pair forms the product W·x.
type Path int

// The product paths; the package documentation describes each.
const (
	Auto Path = iota
	Tiled
	Factorized
	Explicit
	Eval
)

// String returns the path's short name.
func (p Path) String() string {
	switch p {
	case Auto:
		return "auto"
	case Tiled:
		return "tiled"
	case Factorized:
		return "factorized"
	case Explicit:
		return "explicit"
	case Eval:
		return "eval"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// Prim selects the tile-pair primitive of the Tiled path. Auto choice is the
// default; the others force one primitive on every tile pair, for tests and
// benchmarks.
type Prim int

// The tile-pair primitives. "Forward" ones loop over the nonzeros of G's tile
// and use G' tiles in dense form; "reverse" ones swap the roles, working on
// transposed copies of the vectors.
const (
	PrimAuto Prim = iota
	// SS is sparse×sparse: a scalar loop over all na·nb nonzero pairs.
	SS
	// DS is sparse×dense: per nonzero of G's tile, an 8×8 mat-vec with the
	// edge-kernel-weighted dense tile of G'.
	DS
	// DD is dense×dense: per distinct (class, column) of G's tile, an 8×8
	// mat-vec with the weighted dense tile of G', whose result is added to
	// every row of that column with an 8-wide axpy.
	DD
	// SD is DS with the roles of the graphs swapped.
	SD
	// DDRev is DD with the roles of the graphs swapped.
	DDRev
)

// String returns the primitive's short name.
func (p Prim) String() string {
	return [...]string{"auto", "ss", "ds", "dd", "sd", "dd-rev"}[p]
}

// Costs are the cost-model constants Auto uses, in nanoseconds, measured on the
// development machine by this package's benchmarks (see DefaultCosts).
type Costs struct {
	// SS is the cost of one nonzero pair in the sparse×sparse loop.
	SS float64
	// MV is the cost of one dense 8×8 mat-vec (DS, DD), AX of one 8-wide axpy
	// (DD), and Tile the fixed cost of visiting a tile pair.
	MV, AX, Tile float64
	// Rev multiplies the cost of the reverse primitives (SD, DDRev), which
	// measure slower than their forward twins: they work on transposed copies
	// of the vectors and visit the tile pairs a second time.
	Rev float64
	// Spill multiplies the cost of Tiled when its weighted tiles take more
	// than Cache bytes: every tile row of A sweeps all of them.
	Spill, Cache float64
	// Pad is the cost per product node of copying vectors to and from the
	// padded (and, for reverse primitives, transposed) layout.
	Pad float64
	// ExplicitNZ and ExplicitBuild are the mat-vec and build costs per product
	// nonzero of the Explicit path.
	ExplicitNZ, ExplicitBuild float64
	// Gather is the cost of one multiply-add of a sparse row with a gathered
	// dense row, Axpy of one element of a contiguous axpy (Factorized).
	Gather, Axpy float64
}

// DefaultCosts returns the cost constants measured on the development machine
// (a shared AMD EPYC virtual machine with AVX2 and FMA, Go 1.26) by
// BenchmarkTile and BenchmarkMatVec; the dense-tile constants depend on
// whether the vector kernels are in use.
func DefaultCosts() Costs {
	c := Costs{
		SS: 3.2, MV: 35, AX: 10, Tile: 15, Rev: 1.4,
		Spill: 1.8, Cache: 256 << 10,
		Pad:        2,
		ExplicitNZ: 1.7, ExplicitBuild: 8,
		Gather: 1.1, Axpy: 0.7,
	}
	if SIMD {
		c.MV, c.AX, c.Axpy = 13, 8, 0.36
	}
	return c
}

// Options tunes a Pair. The zero value means all defaults.
type Options struct {
	// Path forces a product path; Auto picks by cost.
	Path Path
	// Prim forces a tile primitive in the Tiled path; PrimAuto picks per tile pair.
	Prim Prim
	// Costs overrides the cost model when any field is non-zero.
	Costs Costs
	// Iterations is the number of mat-vecs expected per pair (a CG solve), over
	// which Auto spreads set-up costs; default 20.
	Iterations int
	// MaxExplicit caps the product nonzeros of the Explicit path (memory: 12
	// bytes each), also when the path is forced; default 1<<20.
	MaxExplicit int
	// MaxTable caps the class-pair table and the kernel-weighted copies of the
	// nonzeros, in float64s; past it only Eval and Explicit remain. Default 1<<22.
	MaxTable int
	// MaxDense caps the kernel-weighted dense tiles of the dense primitives, in
	// float64s; past it Tiled uses sparse×sparse only. Default 1<<21.
	MaxDense int
}

func (o *Options) defaults() {
	if o.Costs == (Costs{}) {
		o.Costs = DefaultCosts()
	}
	if o.Iterations <= 0 {
		o.Iterations = 20
	}
	if o.MaxExplicit <= 0 {
		o.MaxExplicit = 1 << 20
	}
	if o.MaxTable <= 0 {
		o.MaxTable = 1 << 22
	}
	if o.MaxDense <= 0 {
		o.MaxDense = 1 << 21
	}
}

// Pair is the state of the product of two packed graphs under an edge kernel:
// class tables, the chosen path's precomputed data and all scratch, so that
// MatVec allocates nothing. Its buffers only grow, so a goroutine that reuses
// one Pair through Reset for many graph pairs stops allocating once it has seen
// the largest. A Pair must not be used by two goroutines at once; the packed
// graphs it points to may be shared.
type Pair struct {
	A, B *Graph
	ke   microkernel.Kernel
	opt  Options
	path Path
	cost float64 // estimated ns per mat-vec of the chosen path

	// Class table: kTab[ca*lB+cb] = κe of groups ca of A and cb of B (edge
	// classes grouped by the feature columns κe reads), and the effective
	// classes that merge groups with equal rows (A) or columns (B).
	table      bool
	subA, subB *prefixClasses
	lA, lB     int
	kTab       []float64
	effA, effB []int32 // edge class → effective class
	leA, leB   int
	kEff       []float64 // leA × leB
	aEff, bEff []int32   // per nonzero: effective class

	tiled      tiledState
	fact       factState
	exp        explicitState
	rowKey     []byte
	tmp        []int32
	scratchKey map[string]int32
}

// NewPair returns an empty Pair with the given options; call Reset before use.
func NewPair(opt Options) *Pair {
	opt.defaults()
	return &Pair{opt: opt, scratchKey: make(map[string]int32)}
}

// Path returns the path chosen by the last Reset.
func (p *Pair) Path() Path { return p.path }

// Cost returns the cost-model estimate of one MatVec, in nanoseconds, for the
// chosen path. It is a planning figure, not a measurement.
func (p *Pair) Cost() float64 { return p.cost }

// ProductNNZ returns nnz(A)·nnz(A'), the number of nonzeros of W (counting a
// self-loop once per graph).
func (p *Pair) ProductNNZ() int { return len(p.A.G.Col) * len(p.B.G.Col) }

// ErrTooManyClasses is returned by Reset when a path that needs the class table
// is forced on graphs whose edges have too many distinct feature rows.
var ErrTooManyClasses = errors.New("octile: too many edge classes for a class table")

// ErrTooLarge is returned by Reset when the Explicit path is forced on a pair
// whose product has more than Options.MaxExplicit nonzeros.
var ErrTooLarge = errors.New("octile: product too large for the explicit path")

// Reset prepares p for the product of a and b under edge kernel ke, choosing a
// path (Options.Path, or by cost) and building its precomputed data.
func (p *Pair) Reset(a, b *Graph, ke microkernel.Kernel) error {
	p.A, p.B, p.ke = a, b, ke
	for _, g := range []*Graph{a, b} {
		if g.G.NumEdges() > 0 && microkernel.MaxCol(ke) > g.G.EdgeCols {
			return fmt.Errorf("octile: edge kernel reads %d columns, edges have %d", microkernel.MaxCol(ke), g.G.EdgeCols)
		}
	}
	p.subA = a.prefixClassesFor(microkernel.MaxCol(ke))
	p.subB = b.prefixClassesFor(microkernel.MaxCol(ke))
	p.lA, p.lB = len(p.subA.rep), len(p.subB.rep)
	p.table = p.lA*p.lB+p.lA*len(b.Pos) <= p.opt.MaxTable
	if p.table {
		p.buildTable()
	}
	path := p.opt.Path
	needTable := path == Tiled || path == Factorized
	if needTable && !p.table {
		return ErrTooManyClasses
	}
	nA, nB := float64(a.N), float64(b.N)
	pnz := p.ProductNNZ()
	iters := float64(p.opt.Iterations)
	c := &p.opt.Costs
	if path == Auto {
		// Every candidate is charged its set-up spread over the expected
		// mat-vecs plus one mat-vec.
		best := math.Inf(1)
		consider := func(q Path, perMV, setup float64) {
			if v := perMV + setup/iters; v < best {
				best, path = v, q
			}
		}
		if pnz <= p.opt.MaxExplicit && a.N*b.N < math.MaxInt32 {
			consider(Explicit, c.ExplicitNZ*float64(pnz)+c.Pad*nA*nB/4, c.ExplicitBuild*float64(pnz))
		}
		if p.table {
			if fc, ok := p.planFactorized(); ok {
				consider(Factorized, fc, c.Axpy*float64(len(a.Pos)+len(b.Pos))*float64(p.fact.nTerms))
			}
			// Planning Tiled sorts every tile's nonzeros; skip it when the
			// visits of the tile pairs alone already cost more than the best.
			setup := c.Tile * float64(len(a.Pos)+len(b.Pos))
			if c.Tile*float64(a.NumTiles()*b.NumTiles())+setup/iters < best {
				consider(Tiled, p.planTiled(true), setup)
			}
		} else {
			consider(Eval, 50*float64(pnz), 0)
		}
	}
	p.path = path
	switch path {
	case Tiled:
		p.cost = p.planTiled(false)
		return p.setupTiled()
	case Factorized:
		fc, ok := p.planFactorized()
		if !ok {
			return ErrTooManyClasses
		}
		p.cost = fc
		p.setupFactorized()
	case Explicit:
		if pnz > p.opt.MaxExplicit || a.N*b.N >= math.MaxInt32 {
			return ErrTooLarge
		}
		p.cost = c.ExplicitNZ * float64(pnz)
		p.setupExplicit()
	case Eval:
		p.cost = 50 * float64(pnz)
	default:
		return fmt.Errorf("octile: unknown path %v", path)
	}
	return nil
}

// MatVec adds W·x to y. x and y have length A.N·B.N, indexed i·B.N + i', and
// must not overlap. It allocates nothing.
func (p *Pair) MatVec(x, y []float64) {
	n := p.A.N * p.B.N
	if len(x) != n || len(y) != n {
		panic(fmt.Sprintf("octile: MatVec with vectors of length %d and %d for %d product nodes", len(x), len(y), n))
	}
	switch p.path {
	case Tiled:
		p.tiledMatVec(x, y)
	case Factorized:
		p.factMatVec(x, y)
	case Explicit:
		p.expMatVec(x, y)
	case Eval:
		p.evalMatVec(x, y)
	}
}

// Mul sets dst = W·src.
func (p *Pair) Mul(dst, src []float64) {
	clear(dst)
	p.MatVec(src, dst)
}

// buildTable evaluates κe on every pair of classes and merges classes that
// the kernel cannot tell apart: rows of A's classes (and columns of B's) that
// are bit-identical. A constant kernel thus has one effective class per side
// however many labels the edges carry, which is what lets Factorized and the
// dense primitives share work.
func (p *Pair) buildTable() {
	a, b := p.A, p.B
	lA, lB := p.lA, p.lB
	p.kTab = grow(p.kTab, lA*lB)
	for i, ea := range p.subA.rep {
		ei := a.G.Edge(int(ea))
		for j, eb := range p.subB.rep {
			p.kTab[i*lB+j] = p.ke.Eval(ei, b.G.Edge(int(eb)))
		}
	}
	var repA, repB []int32
	p.effA, repA = p.merge(p.effA, lA, lB, func(i, j int) float64 { return p.kTab[i*lB+j] })
	p.effB, repB = p.merge(p.effB, lB, lA, func(j, i int) float64 { return p.kTab[i*lB+j] })
	p.leA, p.leB = len(repA), len(repB)
	p.kEff = grow(p.kEff, p.leA*p.leB)
	for i, ri := range repA {
		for j, rj := range repB {
			p.kEff[i*p.leB+j] = p.kTab[int(ri)*lB+int(rj)]
		}
	}
	// From group to edge class: effX[class] = eff[sub[class]].
	p.effA = p.compose(p.effA, p.subA.sub)
	p.effB = p.compose(p.effB, p.subB.sub)
	p.aEff = grow(p.aEff, len(a.Class))
	for k, c := range a.Class {
		p.aEff[k] = p.effA[c]
	}
	p.bEff = grow(p.bEff, len(b.Class))
	for k, c := range b.Class {
		p.bEff[k] = p.effB[c]
	}
}

// compose returns eff[sub[c]] for every c in eff's storage, grown as needed.
func (p *Pair) compose(eff, sub []int32) []int32 {
	p.tmp = append(p.tmp[:0], eff...)
	eff = grow(eff, len(sub))
	for c, s := range sub {
		eff[c] = p.tmp[s]
	}
	return eff
}

// merge numbers the n vectors at(i, 0..m-1) by first appearance of their bit
// patterns, returning the number of each and a representative per number.
func (p *Pair) merge(eff []int32, n, m int, at func(i, j int) float64) ([]int32, []int32) {
	eff = grow(eff, n)
	clear(p.scratchKey)
	var reps []int32
	for i := 0; i < n; i++ {
		p.rowKey = p.rowKey[:0]
		for j := 0; j < m; j++ {
			p.rowKey = binary.LittleEndian.AppendUint64(p.rowKey, math.Float64bits(at(i, j)))
		}
		key := string(p.rowKey)
		e, ok := p.scratchKey[key]
		if !ok {
			e = int32(len(reps))
			p.scratchKey[key] = e
			reps = append(reps, int32(i))
		}
		eff[i] = e
	}
	return eff, reps
}

// grow returns s resized to n, reallocating only when its capacity is short.
// Contents are not preserved.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
