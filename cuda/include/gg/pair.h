// pair.h: one graph of a ggc_graphs list as seen by the solver, and the
// per-pair pieces shared by the device solver and its host twin.
#pragma once
#include "common.h"
#include "tile.h"

namespace gg {

// GraphRef is graph i of a list, its per-node arrays offset to its first node
// and its class rows to its first class; tile and nonzero arrays stay global.
template <typename T>
struct GraphRef {
    int32_t n, nt, nclass, node_cols, edge_cols;
    const int32_t* tile_ptr;  // nt+1 global tile indices
    const int32_t* tile_col;
    const uint64_t* mask;
    const int32_t* nz_ptr;
    const uint8_t* nz_pos;
    const T* nz_w;
    const int32_t* nz_class;
    const T* class_feat;
    const T* node_feat;
    const T* deg;
    const T* start;
    const int32_t* loop_nz;
    const T* cw;  // class weights √|class| of a quotient graph; nullptr: all ones
    // c returns node i's class weight.
    GG_HD T c(int i) const { return cw ? cw[i] : T(1); }
};

// make_graph_ref builds the view of graph i of g with the value arrays given
// in precision T (they mirror g's float64 arrays).
template <typename T>
GG_HD GraphRef<T> make_graph_ref(const ggc_graphs& g, int i, const T* nz_w, const T* class_feat,
                                 const T* node_feat, const T* deg, const T* start, const T* cw = nullptr) {
    const int64_t* d = g.desc + (int64_t)i * GGC_DESC_FIELDS;
    GraphRef<T> r;
    r.n = (int32_t)d[GGC_DESC_N];
    r.nt = (int32_t)d[GGC_DESC_NT];
    r.nclass = (int32_t)d[GGC_DESC_NCLASS];
    r.node_cols = g.node_cols;
    r.edge_cols = g.edge_cols;
    r.tile_ptr = g.tile_ptr + d[GGC_DESC_TILEPTR0];
    r.tile_col = g.tile_col;
    r.mask = g.mask;
    r.nz_ptr = g.nz_ptr;
    r.nz_pos = g.nz_pos;
    r.nz_w = nz_w;
    r.nz_class = g.nz_class;
    r.class_feat = class_feat + d[GGC_DESC_CLASS0] * g.edge_cols;
    r.node_feat = node_feat + d[GGC_DESC_NODE0] * g.node_cols;
    r.deg = deg + d[GGC_DESC_NODE0];
    r.start = start + d[GGC_DESC_NODE0];
    r.loop_nz = g.loop_nz + d[GGC_DESC_NODE0];
    r.cw = cw ? cw + d[GGC_DESC_NODE0] : nullptr;
    return r;
}

// load_x returns entry e = 8c + c' of the input block of tile column pair
// (J, J'): scale∘x at product node (8J+c, 8J'+c'), 0 beyond the graphs.
template <typename T>
GG_HD T load_x(const GraphRef<T>& A, const GraphRef<T>& B, int J, int Jp, int e, const T* x, const T* scale) {
    const int j = 8 * J + (e >> 3), jp = 8 * Jp + (e & 7);
    if (j >= A.n || jp >= B.n) return T(0);
    const int64_t k = (int64_t)j * B.n + jp;
    return scale ? scale[k] * x[k] : x[k];
}

template <typename T>
struct SolveResult {
    T value;
    double residual;
    int32_t iters;
    int32_t converged;
};

}  // namespace gg
