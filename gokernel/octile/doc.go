// Package octile computes the product-graph matrix–vector product at the heart
// of the marginalized graph kernel fast on the CPU, from graphs packed once into
// 8×8 tiles ("octiles", after Tang et al., "A High-Throughput Solver for
// Marginalized Graph Kernels on GPU", IPDPS 2020).
//
// For graphs G (n nodes) and G' (n' nodes) the product matrix is
//
//	W[(i,i'),(j,j')] = w_ij · w'_i'j' · κe(e_ij, e'_i'j'),
//
// with vectors over product nodes indexed i·n' + i'. Viewing such a vector as
// the n×n' row-major matrix X, y = W·x is Y = Σ A_e X A'_fᵀ κe(e, f): for an
// edge kernel that does not depend on its arguments it is simply A X A'ᵀ. W has
// nnz(A)·nnz(A') entries and is never stored for large pairs.
//
// # Packed layout
//
// A Graph is plain arrays, so that a GPU backend can copy them as they are.
// Node i lies in tile row i/8, at row i%8 of its tiles; NT = ⌈N/8⌉. Only
// non-empty tiles are stored, in row-major tile order; there are T of them:
//
//	TilePtr  []int32   NT+1  tiles of tile row I are TilePtr[I] ≤ t < TilePtr[I+1]
//	TileRow  []int32   T     tile row I of tile t (redundant with TilePtr)
//	TileCol  []int32   T     tile column J of tile t, increasing within a tile row
//	Mask     []uint64  T     bit 8r+c set iff entry (8I+r, 8J+c) is stored
//	NzPtr    []int32   T+1   nonzeros of tile t are NzPtr[t] ≤ k < NzPtr[t+1]
//
// The nonzeros of a tile are stored in increasing bit order (row-major within
// the tile), so the k-th set bit of Mask[t] is nonzero NzPtr[t]+k and a nonzero's
// slot can be found by a popcount of the lower bits, as the paper's GPU code
// does. Per nonzero, Z = NzPtr[T] of them:
//
//	Pos      []uint8   Z     its bit index 8r+c (redundant with Mask; saves decoding on the CPU)
//	Weight   []float64 Z     the edge weight w_ij
//	Edge     []int32   Z     the edge index, a row of G.EdgeFeat
//	Class    []int32   Z     the edge's feature class: edges with equal feature rows share a class
//
// and per edge class, ClassEdge []int32 gives one edge of that class. The
// matrix is symmetric, so tile (J, I) is the transpose of tile (I, J) and both
// are stored. Repeated edges between the same two nodes are merged when their
// feature rows are equal (weights add, which leaves W unchanged) and rejected
// otherwise, since a position holds one nonzero.
//
// Edge classes let the edge kernel be evaluated once per pair of classes rather
// than per pair of edges: for labelled edges (bond types, say) a pair of graphs
// has a handful of classes and a tiny class-by-class table.
//
// # Products
//
// A Pair holds two packed graphs, an edge kernel and all the per-pair state and
// scratch of one product, so that MatVec allocates nothing; a goroutine reuses
// one Pair for many graph pairs through Reset. Five ways to form y += W·x are
// offered (see Path); Auto picks one per pair from a cost model whose constants
// were measured by this package's benchmarks:
//
//   - Tiled forms W tile pair by tile pair on the fly. For a tile t of G and t'
//     of G' it picks a primitive from the nonzero counts: sparse×sparse (a
//     scalar loop over the na·nb nonzero pairs), dense×sparse (per nonzero of
//     the sparser tile, a dense 8×8 mat-vec with the other tile weighted by the
//     edge kernel), or dense×dense (the same, but one 8×8 mat-vec per distinct
//     (class, column) of the sparser tile, shared by its nonzeros in that column).
//   - Factorized writes κe on the classes as a short sum of rank-one terms
//     u vᵀ and forms Σ (A ⊙ u) X (A' ⊙ v)ᵀ by sparse-times-dense products: one
//     term for a constant kernel, 1 + (number of shared labels) for a Kronecker
//     delta on a label.
//   - Explicit builds W once as a CSR matrix and multiplies by it: fastest for
//     pairs whose product fits in cache.
//   - Eval evaluates κe on the edge feature rows for every nonzero pair of every
//     product: slow, but needs no table; the fallback when edges have too many
//     distinct feature rows for a class table.
//
// All paths agree with a plain CSR Kronecker product to rounding.
//
// # Which path wins
//
// Factorized for discrete edge labels, Explicit for continuous edge features
// while the product fits in cache (MaxExplicit), Tiled beyond it, with the
// vector kernels and reordering helping Tiled most on large sparse pairs;
// BenchmarkMatVec measures it, and benchmarks/log/go_core_measurements.md
// keeps the numbers behind these choices.
package octile
