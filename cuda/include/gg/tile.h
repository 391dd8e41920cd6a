// tile.h: octile arithmetic of the marginalized kernel's product mat-vec, shared
// by the CUDA kernels and the host tests (compiled by g++).
//
// For graphs A and B packed into 8×8 tiles, the product matrix
//   W[(i,i'),(j,j')] = w_ij · w'_i'j' · κe(e_ij, e'_i'j')
// is formed tile pair by tile pair. A tile a of A at tile position (I, J) and a
// tile b of B at (I', J') map the 8×8 block X(c, c') = x[(8J+c)·n' + 8J'+c'] to
// the block Y(r, r') at (8I+r, 8I'+r'):
//   Y(r, r') += Σ_{c, c'} a(r,c) b(r',c') κe(·,·) X(c, c').
// Two primitives compute it from the masks and compact nonzero lists:
//   dense_entry: one output entry (r, r') by walking the set bits of row r of a
//                and row r' of b; a warp's 32 lanes own its 64 entries, no atomics.
//   sparse_term: the k-th of the nnz(a)·nnz(b) nonzero pairs, its output slot and
//                value; lanes share the pairs evenly and add with shared atomics.
// Both do nnz(a)·nnz(b) multiply-adds; the dense one wastes lanes on empty rows
// and the sparse one pays for atomics, so the kernel picks per tile pair.
#pragma once
#include "common.h"
#include "mk.h"

namespace gg {

// DENSE_MIN_PAIRS: tile pairs with at least this many nonzero pairs use
// dense_entry (GraphDot's threshold).
constexpr int DENSE_MIN_PAIRS = 256;

// TileView is one tile: its mask and the index of its first nonzero.
struct TileView {
    uint64_t mask;
    int32_t nz0;
};

// row_nz0 returns the index of the first nonzero of row r of a tile.
GG_HD int32_t row_nz0(const TileView& t, int r) {
    return t.nz0 + popc64(t.mask & ((uint64_t(1) << (8 * r)) - 1));
}

// EdgeTable looks κe up in a table over pairs of edge classes: κ(ka, kb) =
// table[cls_a[ka]·ncb + cls_b[kb]], ka and kb global nonzero indices.
template <typename T>
struct EdgeTable {
    const T* table;
    const int32_t* cls_a;
    const int32_t* cls_b;
    int32_t ncb;
    GG_HD T operator()(int32_t ka, int32_t kb) const { return table[cls_a[ka] * ncb + cls_b[kb]]; }
};

// EdgeEval evaluates κe on the class feature rows each time.
template <typename T>
struct EdgeEval {
    const ggc_mk_program* prog;
    const T* feat_a;  // class rows of A
    const T* feat_b;
    const int32_t* cls_a;
    const int32_t* cls_b;
    int32_t cols;
    GG_HD T operator()(int32_t ka, int32_t kb) const {
        return mk_eval<T>(*prog, feat_a + (int64_t)cls_a[ka] * cols, feat_b + (int64_t)cls_b[kb] * cols);
    }
};

// dense_entry returns Y(r, rp) of the tile pair (a, b) for the 8×8 input block
// X (X[8c + c']); wa and wb are the weights of the nonzeros (global indices).
template <typename T, typename K>
GG_HD T dense_entry(const TileView& a, const T* wa, const TileView& b, const T* wb, const K& ke,
                    const T* X, int r, int rp) {
    uint32_t rowa = uint32_t(a.mask >> (8 * r)) & 0xffu;
    uint32_t rowb = uint32_t(b.mask >> (8 * rp)) & 0xffu;
    if (rowa == 0 || rowb == 0) return T(0);
    int32_t ka = row_nz0(a, r);
    const int32_t kb0 = row_nz0(b, rp);
    T acc = T(0);
    for (uint32_t ra = rowa; ra; ra &= ra - 1, ka++) {
        const int c = ctz64(ra);
        int32_t kb = kb0;
        T s = T(0);
        for (uint32_t rb = rowb; rb; rb &= rb - 1, kb++) {
            const int cp = ctz64(rb);
            s += wb[kb] * ke(ka, kb) * X[8 * c + cp];
        }
        acc += wa[ka] * s;
    }
    return acc;
}

// sparse_term returns the contribution of the k-th nonzero pair (k < na·nb,
// nonzero k / nb of a with nonzero k % nb of b) and sets *slot to its output
// entry 8r + r'. pos_a and pos_b hold the nonzeros' bits 8r+c.
template <typename T, typename K>
GG_HD T sparse_term(int k, int32_t nza0, int na, const uint8_t* pos_a, const T* wa, int32_t nzb0, int nb,
                    const uint8_t* pos_b, const T* wb, const K& ke, const T* X, int* slot) {
    (void)na;
    const int32_t ka = nza0 + k / nb, kb = nzb0 + k % nb;
    const int pa = pos_a[ka], pb = pos_b[kb];
    *slot = 8 * (pa >> 3) + (pb >> 3);
    return wa[ka] * wb[kb] * ke(ka, kb) * X[8 * (pa & 7) + (pb & 7)];
}

// ProductNode holds what the solver needs at product node (i, i').
template <typename T>
struct ProductNode {
    T v, s, dd, inv;
};

// product_node computes V, S = √V, D and the Jacobi inverse at (i, i') the way
// mgk's pairSolver.prepare does: diag = dd − v·w_ii·w'_i'i'·κe(loops), replaced
// by dd when not positive. loop_a and loop_b are the nodes' self-loop nonzeros
// (−1 for none); kv = κv(v_i, v'_i') already evaluated.
template <typename T, typename K>
GG_HD ProductNode<T> product_node(T kv, T deg_a, T deg_b, T scale, int32_t loop_a, int32_t loop_b,
                                  const T* wa, const T* wb, const K& ke) {
    ProductNode<T> p;
    p.v = kv;
    p.s = gg_sqrt<T>(kv);
    p.dd = deg_a * deg_b * scale;
    T diag = p.dd;
    if (loop_a >= 0 && loop_b >= 0) diag -= kv * (wa[loop_a] * wb[loop_b] * ke(loop_a, loop_b));
    if (!(diag > T(0))) diag = p.dd;
    p.inv = T(1) / diag;
    return p;
}

}  // namespace gg
