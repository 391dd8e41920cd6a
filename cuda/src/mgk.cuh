// mgk.cuh: the marginalized graph kernel's device solver. One persistent block
// solves one pair at a time by Jacobi-preconditioned CG on the product graph
// (the same scaled system and preconditioner as gokernel/mgk), pulling pairs,
// largest first, from an atomic counter; small pairs are solved one warp a
// pair instead (mgk_solve_warp: the same code on a WarpTeam), and a call's
// few large pairs each by a grid of blocks (mgk_wide_*, on a GridTeam). The
// product mat-vec is formed on the fly from the octiles: each warp owns 8×8
// output blocks (tile row I of A ×
// tile row I' of B) and sweeps the tile pairs of those rows with the dense or
// the sparse primitive of gg/tile.h, staging the input block in shared memory.
// When the pair's octiles fit the launch's dynamic shared memory, the block
// stages them there once per pair and every mat-vec reads them from there
// (stage_pair below).
#pragma once
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif
#include <stdint.h>

#include "gg/mk.h"
#include "gg/pair.h"
#include "gg/tile.h"
#include "persistent.cuh"

namespace gg {

// Threads of a solver block. The host emulation (cuda/emu/emu.h) builds the
// kernels with fewer.
#ifndef GG_MGK_THREADS
#define GG_MGK_THREADS 256
#endif
constexpr int MGK_THREADS = GG_MGK_THREADS;
constexpr int MGK_WARPS = MGK_THREADS / 32;
// Two blocks per SM: at most 128 registers a thread.
constexpr int MGK_MIN_BLOCKS = 2;
#ifndef GG_PREP_THREADS
#define GG_PREP_THREADS 256
#endif
constexpr int PREP_THREADS = GG_PREP_THREADS;

// DevGraphs is a graph list resident on the device: the integer arrays of
// ggc_graphs (device pointers) and the value arrays in precision T.
template <typename T>
struct DevGraphs {
    ggc_graphs g;
    const T* nz_w;
    const T* class_feat;
    const T* node_feat;
    const T* deg;
    const T* start;
    const T* cw;  // nullptr: no quotient graphs in the list
    __device__ GraphRef<T> ref(int i) const {
        return make_graph_ref<T>(g, i, nz_w, class_feat, node_feat, deg, start, cw);
    }
};

// MgkJob is one pair of a chunk with the offsets of its work space: seven
// vectors of n·n' entries (s, dd, inv, y, r, p, ap) and the κe class table.
// stage: 1 when the host found that the pair's octiles fit the launch's
// dynamic shared memory (stage_pair_bytes), so the solver stages them.
struct MgkJob {
    int32_t i, j;
    int64_t vec, tab;
    int32_t stage, pad;
};

// MgkResult is written once per job.
struct MgkResult {
    double value, residual;
    int32_t iters;   // negative: not converged; INT32_MIN: bad node kernel value
    int32_t staged;  // 1 when the solver read the pair's tiles from shared memory
};

template <typename T>
struct MgkParams {
    T q;
    T tol;
    int32_t lmin, max_iter;
    T adj_tol;  // the adjoint solves of the gradient
};

// Shared memory of one block.
template <typename T>
struct MgkShared {
    T x[MGK_WARPS][64];
    T y[MGK_WARPS][64];
    T red[2][MGK_WARPS];
    int32_t job;
};

// ---- Block-shared staging of a pair's octiles ----
//
// The graphs do not change during a pair's solve, yet every mat-vec (10–100
// of them per PCG, two solves and two more mat-vecs for a gradient) reads all
// their tiles again: masks, nz_ptr, nz_pos, nz_w, classes, tile_ptr, tile_col.
// When both graphs' tiles fit the launch's dynamic shared memory, the whole
// block copies them there once per pair (stage_pair) and the GraphRefs are
// switched to the copies, so the unchanged mat-vec reads shared memory.
// Larger pairs keep reading global memory through the same code.
//
// The copy is rebased: tile indices count from the graph's first tile and
// nonzero indices from its first nonzero (tile_ptr and nz_ptr are rewritten),
// so that everything indexed by them — masks, weights, classes, positions —
// is indexed consistently whichever memory a GraphRef points into. κe objects
// (EdgeTable, EdgeEval) built from the switched GraphRef therefore read the
// staged classes too. loop_nz stays global (global nonzero indices): only
// mgk_prep reads it, never from a staged view.
//
// Layout of one pair, by decreasing alignment so that no padding is needed
// (the dynamic shared memory base is 16-byte aligned): the masks of A then B
// (uint64), the weights of A then B (T), then for A and then B the int32
// arrays tile_ptr (nt+1), tile_col (tiles), nz_ptr (tiles+1), nz_class (nnz),
// and last the nz_pos bytes of A then B.

// stage_graph_bytes is the shared memory one graph's staged octiles take:
// nt tile rows, ntiles tiles, nnz nonzeros.
template <typename T>
GG_HD int64_t stage_graph_bytes(int64_t nt, int64_t ntiles, int64_t nnz) {
    return 8 * ntiles + (int64_t)sizeof(T) * nnz + 4 * ((nt + 1) + ntiles + (ntiles + 1) + nnz) + nnz;
}

// stage_pair_bytes is the dynamic shared memory (a multiple of 16) that
// staging the pair (X[i], Y[j]) takes, from the host copies of the lists.
template <typename T>
inline int64_t stage_pair_bytes(const ggc_graphs& X, int i, const ggc_graphs& Y, int j) {
    auto one = [](const ggc_graphs& g, int k) {
        const int64_t* d = g.desc + (int64_t)k * GGC_DESC_FIELDS;
        const int32_t* tp = g.tile_ptr + d[GGC_DESC_TILEPTR0];
        const int64_t nt = d[GGC_DESC_NT], t0 = tp[0], t1 = tp[nt];
        return stage_graph_bytes<T>(nt, t1 - t0, (int64_t)g.nz_ptr[t1] - g.nz_ptr[t0]);
    };
    return (one(X, i) + one(Y, j) + 15) & ~int64_t(15);
}

// stage_graph copies graph G's octiles (tiles t0.., nonzeros z0..) into the
// given shared arrays, rebased, and points G at them. Called by every thread
// of the block; the caller synchronizes before G is read.
template <typename T>
__device__ void stage_graph(GraphRef<T>& G, int32_t t0, int32_t ntiles, int32_t z0, int32_t nnz, uint64_t* mask,
                            T* w, int32_t* i32, uint8_t* pos) {
    int32_t *tp = i32, *tc = tp + G.nt + 1, *zp = tc + ntiles, *cls = zp + ntiles + 1;
    for (int k = threadIdx.x; k <= G.nt; k += blockDim.x) tp[k] = G.tile_ptr[k] - t0;
    for (int k = threadIdx.x; k < ntiles; k += blockDim.x) {
        mask[k] = G.mask[t0 + k];
        tc[k] = G.tile_col[t0 + k];
    }
    for (int k = threadIdx.x; k <= ntiles; k += blockDim.x) zp[k] = G.nz_ptr[t0 + k] - z0;
    for (int k = threadIdx.x; k < nnz; k += blockDim.x) {
        w[k] = G.nz_w[z0 + k];
        cls[k] = G.nz_class[z0 + k];
        pos[k] = G.nz_pos[z0 + k];
    }
    G.tile_ptr = tp, G.tile_col = tc, G.mask = mask, G.nz_ptr = zp;
    G.nz_pos = pos, G.nz_w = w, G.nz_class = cls;
}

// stage_pair stages A and B into smem (stage_pair_bytes of them; the host
// launched with at least that much) and switches A and B to the copies. The
// caller's earlier barrier guarantees that no thread still reads the previous
// pair's copy, and its next one (publish_pair) that the copy is complete
// before anyone reads it.
template <typename T>
__device__ void stage_pair(unsigned char* smem, GraphRef<T>& A, GraphRef<T>& B) {
    const int32_t ta = A.tile_ptr[0], na = A.tile_ptr[A.nt] - ta, za = A.nz_ptr[ta], ma = A.nz_ptr[ta + na] - za;
    const int32_t tb = B.tile_ptr[0], nb = B.tile_ptr[B.nt] - tb, zb = B.nz_ptr[tb], mb = B.nz_ptr[tb + nb] - zb;
    uint64_t* mask = reinterpret_cast<uint64_t*>(smem);
    T* w = reinterpret_cast<T*>(mask + na + nb);
    int32_t* i32a = reinterpret_cast<int32_t*>(w + ma + mb);
    int32_t* i32b = i32a + (A.nt + 1) + na + (na + 1) + ma;
    uint8_t* pos = reinterpret_cast<uint8_t*>(i32b + (B.nt + 1) + nb + (nb + 1) + mb);
    stage_graph<T>(A, ta, na, za, ma, mask, w, i32a, pos);
    stage_graph<T>(B, tb, nb, zb, mb, mask + na, w + ma, i32b, pos + ma);
}

// MgkPair is the pair a solver block is working on, published in shared
// memory: its two GraphRefs (pointing into the staged copy or into global
// memory) and its κe object (the one of the kernel's path). The solver reads
// the pointers from here rather than holding them in registers: before
// staging existed they were kernel parameters, which the compiler re-reads
// for free, and a run-time choice between shared and global memory held in
// registers cost 12–17 of them (mgk_gsolve reached the 128 cap).
template <typename T>
struct MgkPair {
    GraphRef<T> a, b;
    EdgeTable<T> kt;
    EdgeEval<T> ke;
};

// set_pair fills pr with the pair's GraphRefs and its κe object (the one of
// the kernel's path); one thread calls it.
template <typename T, bool Table>
__device__ void set_pair(MgkPair<T>& pr, const GraphRef<T>& A, const GraphRef<T>& B, const MgkJob& jb,
                         const ggc_mk_program* edge, T* work) {
    pr.a = A, pr.b = B;
    if (Table)
        pr.kt = EdgeTable<T>{work + jb.tab, A.nz_class, B.nz_class, B.nclass};
    else
        pr.ke = EdgeEval<T>{edge, A.class_feat, B.class_feat, A.nz_class, B.nz_class, A.edge_cols};
}

// publish_pair prepares the block's pair: stages it when the host said it
// fits (jb.stage), then publishes the GraphRefs and the κe object in pr.
// Every thread calls it; on return pr is valid in every thread.
template <typename T, bool Table>
__device__ void publish_pair(MgkPair<T>& pr, unsigned char* smem, const DevGraphs<T>& X, const DevGraphs<T>& Y,
                             const MgkJob& jb, const ggc_mk_program* edge, T* work) {
    GraphRef<T> A = X.ref(jb.i), B = Y.ref(jb.j);
    if (jb.stage) stage_pair<T>(smem, A, B);
    if (threadIdx.x == 0) set_pair<T, Table>(pr, A, B, jb, edge, work);
    __syncthreads();
}

// stage_budget returns the dynamic shared memory (bytes, a multiple of 16)
// a solver block may take for staging on a device with per_sm bytes of shared
// memory per SM, per_block_optin the most one block may opt in to, reserved
// the system's share per block and static_bytes the kernel's static shared
// memory: MGK_MIN_BLOCKS blocks must still fit on one SM. limit > 0 caps it
// (tests force some pairs out of shared memory), limit < 0 turns staging off.
inline int64_t stage_budget(int64_t per_sm, int64_t per_block_optin, int64_t reserved, int64_t static_bytes,
                            int32_t limit) {
    if (limit < 0) return 0;
    int64_t b = per_sm / MGK_MIN_BLOCKS - reserved;
    if (b > per_block_optin) b = per_block_optin;
    b = (b - static_bytes) & ~int64_t(15);
    if (limit > 0 && b > limit) b = limit;
    return b > 0 ? b : 0;
}

// GG_DYNAMIC_SHARED declares the block's dynamic shared memory; the host
// emulation (emu/emu.h) defines its own.
#ifndef GG_DYNAMIC_SHARED
#define GG_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#endif

// block_sum2 returns the block-wide sums of a and b to every thread.
template <typename T>
__device__ void block_sum2(MgkShared<T>& sh, T& a, T& b) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
    __syncthreads();  // earlier readers of sh.red are done
    if (lane == 0) {
        sh.red[0][warp] = a;
        sh.red[1][warp] = b;
    }
    __syncthreads();
    a = T(0), b = T(0);
    for (int w = 0; w < MGK_WARPS; w++) {
        a += sh.red[0][w];
        b += sh.red[1][w];
    }
}

// A team is the threads that solve one pair together: the whole block
// (BlockTeam, the default of the solver's functions below) or one warp
// (WarpTeam, mgk_solve_warp). Vector loops stride by the team's size from
// its rank, the mat-vec's output blocks go round its warps, and its sums
// and barriers are the team's own: a warp team never waits at a block-wide
// barrier. Each warp uses its own slots of MgkShared's x and y either way.
struct BlockTeam {
    __device__ int rank() const { return threadIdx.x; }
    __device__ int size() const { return blockDim.x; }
    __device__ int warp() const { return threadIdx.x >> 5; }
    __device__ int warps() const { return MGK_WARPS; }
    __device__ void sync() const { __syncthreads(); }
    template <typename T>
    __device__ void sum2(MgkShared<T>& sh, T& a, T& b) const {
        block_sum2<T>(sh, a, b);
    }
};

struct WarpTeam {
    __device__ int rank() const { return threadIdx.x & 31; }
    __device__ int size() const { return 32; }
    __device__ int warp() const { return 0; }
    __device__ int warps() const { return 1; }
    __device__ void sync() const { __syncwarp(); }
    // The butterfly leaves the same sum in every lane (each step adds the
    // same two values in either order), so the warp's branches on it agree.
    template <typename T>
    __device__ void sum2(MgkShared<T>&, T& a, T& b) const {
        for (int o = 16; o > 0; o >>= 1) {
            a += __shfl_xor_sync(0xffffffffu, a, o);
            b += __shfl_xor_sync(0xffffffffu, b, o);
        }
    }
};

// mulw_block computes W·(scale∘x) over the pair and hands each product node's
// value to epi(k, w), which returns a term of a block dot product; the sum of
// those terms over the block is returned to every thread.
template <typename T, typename K, typename Epi, typename Team = BlockTeam>
__device__ T mulw_block(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const K& ke, const T* x,
                        const T* scale, const Epi& epi, Team tm = Team()) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T* sx = sh.x[warp];
    T* sy = sh.y[warp];
    T dot = T(0);
    const int nblocks = A.nt * B.nt;
    for (int ob = tm.warp(); ob < nblocks; ob += tm.warps()) {
        const int I = ob / B.nt, Ip = ob % B.nt;
        T acc0 = T(0), acc1 = T(0);
        sy[lane] = T(0);
        sy[lane + 32] = T(0);
        for (int32_t ta = A.tile_ptr[I]; ta < A.tile_ptr[I + 1]; ta++) {
            const TileView a{A.mask[ta], A.nz_ptr[ta]};
            const int na = A.nz_ptr[ta + 1] - a.nz0, J = A.tile_col[ta];
            for (int32_t tb = B.tile_ptr[Ip]; tb < B.tile_ptr[Ip + 1]; tb++) {
                const TileView b{B.mask[tb], B.nz_ptr[tb]};
                const int nb = B.nz_ptr[tb + 1] - b.nz0, Jp = B.tile_col[tb];
                __syncwarp();
                sx[lane] = load_x<T>(A, B, J, Jp, lane, x, scale);
                sx[lane + 32] = load_x<T>(A, B, J, Jp, lane + 32, x, scale);
                __syncwarp();
                if (na * nb >= DENSE_MIN_PAIRS) {
                    // One inlined copy of the primitive for both entries keeps
                    // the register count down.
GG_NO_UNROLL
                    for (int h = 0; h < 2; h++) {
                        const T v = dense_entry<T>(a, A.nz_w, b, B.nz_w, ke, sx, (lane >> 3) + 4 * h, lane & 7);
                        if (h == 0)
                            acc0 += v;
                        else
                            acc1 += v;
                    }
                } else {
                    for (int k = lane; k < na * nb; k += 32) {
                        int slot;
                        const T v = sparse_term<T>(k, a.nz0, na, A.nz_pos, A.nz_w, b.nz0, nb, B.nz_pos, B.nz_w, ke,
                                                   sx, &slot);
                        atomicAdd(&sy[slot], v);
                    }
                }
            }
        }
        __syncwarp();
        acc0 += sy[lane];
        acc1 += sy[lane + 32];
        const int i0 = 8 * I + (lane >> 3), i1 = i0 + 4, ip = 8 * Ip + (lane & 7);
        if (ip < B.n) {
            if (i0 < A.n) dot += epi((int64_t)i0 * B.n + ip, acc0);
            if (i1 < A.n) dot += epi((int64_t)i1 * B.n + ip, acc1);
        }
    }
    T unused = T(0);
    tm.template sum2<T>(sh, dot, unused);
    return dot;
}

// mgk_prep (one block per job of a chunk) evaluates the base kernels of the
// pair: κe over its class pairs into the job's table (Table only) and, per
// product node, s = √V, dd and the Jacobi inverse, with V kept in y for the
// right-hand side of Lmin = 1. The interpreter of the base kernels lives here
// only, away from the solver's registers.
template <typename T, bool Table>
__global__ void __launch_bounds__(PREP_THREADS) mgk_prep(DevGraphs<T> X, DevGraphs<T> Y, const MgkJob* __restrict__ jobs,
                                                         const ggc_mk_program* node, const ggc_mk_program* edge,
                                                         MgkParams<T> prm, T* work, int* bad) {
    const MgkJob jb = jobs[blockIdx.x];
    const GraphRef<T> A = X.ref(jb.i), B = Y.ref(jb.j);
    const int64_t N = (int64_t)A.n * B.n;
    T *s = work + jb.vec, *dd = s + N, *inv = s + 2 * N, *v = s + 3 * N;
    if (Table) {
        T* tab = work + jb.tab;
        const int ncb = B.nclass;
        for (int64_t c = threadIdx.x; c < (int64_t)A.nclass * ncb; c += blockDim.x)
            tab[c] = mk_eval<T>(*edge, A.class_feat + (c / ncb) * A.edge_cols, B.class_feat + (c % ncb) * B.edge_cols);
    }
    const EdgeEval<T> ke{edge, A.class_feat, B.class_feat, A.nz_class, B.nz_class, A.edge_cols};
    const T scale = T(1) / ((T(1) - prm.q) * (T(1) - prm.q));
    for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
        const int i = (int)(k / B.n), ip = (int)(k % B.n);
        const T kv = mk_eval<T>(*node, A.node_feat + (int64_t)i * A.node_cols, B.node_feat + (int64_t)ip * B.node_cols);
        if (!(kv >= T(0)) || isinf(kv)) bad[blockIdx.x] = 1;
        const ProductNode<T> pn =
            product_node<T>(kv, A.deg[i], B.deg[ip], scale, A.loop_nz[i], B.loop_nz[ip], A.nz_w, B.nz_w, ke);
        s[k] = pn.s, dd[k] = pn.dd, inv[k] = pn.inv;
        // The right-hand side of Lmin = 1 is W (c∘v): a quotient's
        // class-constant vector weighted by c = c_A c_A' (1 without one).
        v[k] = pn.v * (A.c(i) * B.c(ip));
    }
}

// The vector steps of Jacobi-preconditioned CG, one copy for pcg_block and
// the grid solver's launches (mgk_wide_*), over the team's threads; each
// leaves its thread's share of the step's two sums in a and b.
//
// pcg_start: r = ap (the right-hand side), y = 0, p = inv∘r; rᵀp and rᵀr.
template <typename T, typename Team>
__device__ void pcg_start(Team tm, int64_t N, const T* inv, T* y, T* r, T* p, const T* ap, T& a, T& b) {
    for (int64_t k = tm.rank(); k < N; k += tm.size()) {
        const T rk = ap[k];
        r[k] = rk;
        y[k] = T(0);
        p[k] = inv[k] * rk;
        a += rk * p[k];
        b += rk * rk;
    }
}

// pcg_update: y += α p, r −= α ap; rᵀ P⁻¹ r and rᵀ r.
template <typename T, typename Team>
__device__ void pcg_update(Team tm, int64_t N, T alpha, const T* inv, T* y, T* r, const T* p, const T* ap, T& a,
                           T& b) {
    for (int64_t k = tm.rank(); k < N; k += tm.size()) {
        y[k] += alpha * p[k];
        const T rk = r[k] - alpha * ap[k];
        r[k] = rk;
        a += rk * rk * inv[k];
        b += rk * rk;
    }
}

// pcg_direction: p = inv∘r + β p.
template <typename T, typename Team>
__device__ void pcg_direction(Team tm, int64_t N, T beta, const T* inv, const T* r, T* p) {
    for (int64_t k = tm.rank(); k < N; k += tm.size()) p[k] = inv[k] * r[k] + beta * p[k];
}

// pcg_block runs Jacobi-preconditioned CG on M y = rhs, M = D − S W S, with
// the right-hand side in ap (written and synchronized by the caller), y, r, p
// and ap as its vectors, to relative residual tol. The result's value is
// unset; y is zero when the right-hand side is.
template <typename T, typename K, typename Team = BlockTeam>
__device__ MgkResult pcg_block(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const K& ke, T tol,
                               int max_iter, const T* s, const T* dd, const T* inv, T* y, T* r, T* p, T* ap,
                               Team tm = Team()) {
    const int64_t N = (int64_t)A.n * B.n;
    MgkResult res{};
    T rz = T(0), bb = T(0);
    pcg_start<T>(tm, N, inv, y, r, p, ap, rz, bb);
    tm.template sum2<T>(sh, rz, bb);
    if (bb == T(0)) return res;
    T rr = bb;
    const T thr = tol * tol * bb;
    int it = 0;
    bool ok = true;
    for (;; it++) {
        if (rr <= thr) break;
        if (it >= max_iter) {
            ok = false;
            break;
        }
        // ap = M p = dd∘p − s∘W(s∘p), and pᵀ M p in the same pass.
        const T pap = mulw_block<T>(
            sh, A, B, ke, p, s,
            [&](int64_t k, T w) {
                const T v = dd[k] * p[k] - s[k] * w;
                ap[k] = v;
                return p[k] * v;
            },
            tm);
        if (!(pap > T(0)) || isinf(pap)) {
            ok = false;
            break;
        }
        const T alpha = rz / pap;
        T rzn = T(0), rrn = T(0);
        pcg_update<T>(tm, N, alpha, inv, y, r, p, ap, rzn, rrn);
        tm.template sum2<T>(sh, rzn, rrn);
        const T beta = rzn / rz;
        rz = rzn, rr = rrn;
        pcg_direction<T>(tm, N, beta, inv, r, p);
        tm.sync();
    }
    res.residual = sqrt(double(rr) / double(bb));
    res.iters = ok ? it : -it;
    return res;
}

// primal_rhs writes the primal right-hand side into ap: S W V c with Lmin = 1
// (V c in y, from mgk_prep), else S D c, with c = c_A c_A' the quotient
// graphs' class weights (1 without them).
template <typename T, typename K, typename Team = BlockTeam>
__device__ void primal_rhs(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const K& ke,
                           const MgkParams<T>& prm, const T* s, const T* dd, const T* v, T* ap, Team tm = Team()) {
    const int64_t N = (int64_t)A.n * B.n;
    if (prm.lmin == 1) {
        mulw_block<T>(
            sh, A, B, ke, v, (const T*)nullptr,
            [&](int64_t k, T w) {
                ap[k] = s[k] * w;
                return T(0);
            },
            tm);
    } else if (A.cw || B.cw) {
        for (int64_t k = tm.rank(); k < N; k += tm.size())
            ap[k] = s[k] * dd[k] * (A.c((int)(k / B.n)) * B.c((int)(k % B.n)));
    } else {
        for (int64_t k = tm.rank(); k < N; k += tm.size()) ap[k] = s[k] * dd[k];
    }
    tm.sync();
}

// pair_value returns K = Σ p_i p'_i' c s y to every thread (c = c_A c_A',
// the quotient graphs' class weights).
template <typename T, typename Team = BlockTeam>
__device__ T pair_value(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const T* s, const T* y,
                        Team tm = Team()) {
    const int64_t N = (int64_t)A.n * B.n;
    T val = T(0), unused = T(0);
    for (int64_t k = tm.rank(); k < N; k += tm.size()) {
        const int i = (int)(k / B.n), ip = (int)(k % B.n);
        val += A.start[i] * B.start[ip] * (A.c(i) * B.c(ip)) * s[k] * y[k];
    }
    tm.template sum2<T>(sh, val, unused);
    return val;
}

// solve_pair_block solves one prepared pair with the whole block and returns
// its result (valid in every thread).
template <typename T, typename K, typename Team = BlockTeam>
__device__ MgkResult solve_pair_block(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const K& ke,
                                      const MgkParams<T>& prm, T* vec, Team tm = Team()) {
    const int64_t N = (int64_t)A.n * B.n;
    T *s = vec, *dd = vec + N, *inv = vec + 2 * N, *y = vec + 3 * N, *r = vec + 4 * N, *p = vec + 5 * N,
      *ap = vec + 6 * N;
    primal_rhs<T>(sh, A, B, ke, prm, s, dd, y, ap, tm);
    MgkResult res = pcg_block<T>(sh, A, B, ke, prm.tol, prm.max_iter, s, dd, inv, y, r, p, ap, tm);
    res.value = double(pair_value<T>(sh, A, B, s, y, tm));
    return res;
}

// mgk_solve: persistent blocks pull the prepared jobs of a chunk, largest
// first, from *counter. With Table the edge kernel is read from the job's class
// table, else it is evaluated inside the product (the slow path for graphs
// with too many distinct edge feature rows).
template <typename T, bool Table>
__global__ void __launch_bounds__(MGK_THREADS, Table ? MGK_MIN_BLOCKS : 1)
    mgk_solve(DevGraphs<T> X, DevGraphs<T> Y, const MgkJob* __restrict__ jobs, int njobs, int* counter,
              const ggc_mk_program* edge, MgkParams<T> prm, T* work, MgkResult* results) {
    GG_SHARED(MgkShared<T>, sh, );
    GG_SHARED(MgkPair<T>, pr, );
    GG_DYNAMIC_SHARED(stage);
    for (;;) {
        const int job = next_job(counter, sh.job);
        if (job >= njobs) return;
        const MgkJob jb = jobs[job];
        publish_pair<T, Table>(pr, stage, X, Y, jb, edge, work);
        MgkResult res;
        if (Table)
            res = solve_pair_block<T>(sh, pr.a, pr.b, pr.kt, prm, work + jb.vec);
        else
            res = solve_pair_block<T>(sh, pr.a, pr.b, pr.ke, prm, work + jb.vec);
        res.staged = jb.stage;
        if (threadIdx.x == 0) results[job] = res;
        __syncthreads();
    }
}

// mgk_solve_warp is mgk_solve for small pairs, one warp a pair: each warp of
// a persistent block pulls its own jobs from *counter and solves them with
// warp-wide sums and __syncwarp only (WarpTeam), so that a molecule pair of a
// few hundred product nodes neither waits at block-wide barriers nor leaves
// most of a block idle. Its pairs are not staged: a small pair's few tiles
// stay in L1. The host gives it the jobs of at most WARP_MAX_NODES product
// nodes when there are enough of them (plan.cuh, warp_split); results as
// mgk_solve's.
template <typename T, bool Table>
__global__ void __launch_bounds__(MGK_THREADS, Table ? MGK_MIN_BLOCKS : 1)
    mgk_solve_warp(DevGraphs<T> X, DevGraphs<T> Y, const MgkJob* __restrict__ jobs, int njobs, int* counter,
                   const ggc_mk_program* edge, MgkParams<T> prm, T* work, MgkResult* results) {
    GG_SHARED(MgkShared<T>, sh, );
    GG_SHARED(MgkPair<T>, prs, [MGK_WARPS]);
    GG_SHARED(int, slots, [MGK_WARPS]);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const WarpTeam tm;
    for (;;) {
        // Lane 0 takes the warp's next job; the barrier after the previous
        // job keeps it from overwriting a slot that another lane still reads.
        if (lane == 0) slots[w] = atomicAdd(counter, 1);
        __syncwarp();
        const int job = slots[w];
        if (job >= njobs) return;  // the whole warp: job is the same in every lane
        const MgkJob jb = jobs[job];
        if (lane == 0) set_pair<T, Table>(prs[w], X.ref(jb.i), Y.ref(jb.j), jb, edge, work);
        __syncwarp();
        const MgkPair<T>& pr = prs[w];
        MgkResult res;
        if (Table)
            res = solve_pair_block<T>(sh, pr.a, pr.b, pr.kt, prm, work + jb.vec, tm);
        else
            res = solve_pair_block<T>(sh, pr.a, pr.b, pr.ke, prm, work + jb.vec, tm);
        res.staged = 0;
        if (lane == 0) results[job] = res;
        __syncwarp();
    }
}

// ---- One pair over a grid of blocks (mgk_wide_*) ----
//
// A pair too large for one block to solve in good time, in a call of fewer
// such pairs than the device has block slots (the six 300-550-node graphs:
// 21 pairs for 264 slots on an H100), is solved by a sequence of launches
// over a grid instead (the host's loop: ggcuda.cu, solve_wide): each
// mat-vec and vector update spreads over every warp of the grid (GridTeam),
// each block writes its partial sums, and a one-thread kernel
// (mgk_wide_scalar) adds them in a fixed order, advances the PCG's scalars
// and stops it: every launch after done is set returns at once. A pair's
// grid is a function of its size alone (wide_blocks), so the order of its
// sums depends on the pair, not on the call or the device (but for the
// sparse primitive's shared-memory atomics, as on every path).

// WIDE_MAX_BLOCKS caps a pair's grid (partial sums: two a block).
constexpr int WIDE_MAX_BLOCKS = 512;

// wide_blocks is the grid of a pair of nta × ntb tile rows: one output block
// a warp, at most WIDE_MAX_BLOCKS blocks.
GG_HD int wide_blocks(int64_t nta, int64_t ntb) {
    const int64_t b = (nta * ntb + MGK_WARPS - 1) / MGK_WARPS;
    return (int)(b < 1 ? 1 : b > WIDE_MAX_BLOCKS ? WIDE_MAX_BLOCKS : b);
}

// GridTeam: every thread of the grid works on one pair; its sums are the
// block's own (the partials), its barrier the block's: the grid never waits
// for itself inside a launch.
struct GridTeam {
    __device__ int rank() const { return blockIdx.x * blockDim.x + threadIdx.x; }
    __device__ int size() const { return gridDim.x * blockDim.x; }
    __device__ int warp() const { return blockIdx.x * MGK_WARPS + (threadIdx.x >> 5); }
    __device__ int warps() const { return gridDim.x * MGK_WARPS; }
    __device__ void sync() const { __syncthreads(); }
    template <typename T>
    __device__ void sum2(MgkShared<T>& sh, T& a, T& b) const {
        block_sum2<T>(sh, a, b);
    }
};

// WideState is a wide pair's PCG scalars, in device memory.
template <typename T>
struct WideState {
    T rz, rr, bb, thr, alpha, beta;
    int32_t it, done, ok, pad;
};

// The steps whose partial sums mgk_wide_scalar takes.
enum { WIDE_INIT = 0, WIDE_MATVEC = 1, WIDE_UPDATE = 2, WIDE_VALUE = 3 };

// wide_partials writes the block's sums a, b (valid in every thread) as its
// two partials.
template <typename T>
__device__ void wide_partials(T* partial, T a, T b) {
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = a;
        partial[2 * blockIdx.x + 1] = b;
    }
}

// mgk_wide_rhs: the primal right-hand side into ap (primal_rhs over the
// grid; V is in y, from mgk_prep) for the pair of job jb.
template <typename T, bool Table>
__global__ void __launch_bounds__(MGK_THREADS, Table ? MGK_MIN_BLOCKS : 1) mgk_wide_rhs(DevGraphs<T> X, DevGraphs<T> Y, MgkJob jb,
                                                           const ggc_mk_program* edge, MgkParams<T> prm, T* work) {
    GG_SHARED(MgkShared<T>, sh, );
    GG_SHARED(MgkPair<T>, pr, );
    if (threadIdx.x == 0) set_pair<T, Table>(pr, X.ref(jb.i), Y.ref(jb.j), jb, edge, work);
    __syncthreads();
    const int64_t N = (int64_t)pr.a.n * pr.b.n;
    T *s = work + jb.vec, *dd = s + N, *y = s + 3 * N, *ap = s + 6 * N;
    if (Table)
        primal_rhs<T>(sh, pr.a, pr.b, pr.kt, prm, s, dd, y, ap, GridTeam());
    else
        primal_rhs<T>(sh, pr.a, pr.b, pr.ke, prm, s, dd, y, ap, GridTeam());
}

// mgk_wide_init: r = ap, y = 0, p = inv∘r, and the partials of rᵀp and rᵀr
// (pcg_block's start).
template <typename T>
__global__ void __launch_bounds__(MGK_THREADS) mgk_wide_init(MgkJob jb, int64_t N, T* work, T* partial) {
    GG_SHARED(MgkShared<T>, sh, );
    T *inv = work + jb.vec + 2 * N, *y = inv + N, *r = inv + 2 * N, *p = inv + 3 * N, *ap = inv + 4 * N;
    T rz = T(0), bb = T(0);
    pcg_start<T>(GridTeam(), N, inv, y, r, p, ap, rz, bb);
    block_sum2<T>(sh, rz, bb);
    wide_partials<T>(partial, rz, bb);
}

// mgk_wide_matvec: ap = M p = dd∘p − s∘W(s∘p) and the partials of pᵀ M p.
template <typename T, bool Table>
__global__ void __launch_bounds__(MGK_THREADS, Table ? MGK_MIN_BLOCKS : 1) mgk_wide_matvec(DevGraphs<T> X, DevGraphs<T> Y, MgkJob jb,
                                                              const ggc_mk_program* edge, T* work,
                                                              const WideState<T>* st, T* partial) {
    if (st->done) return;  // the same in every thread of the grid
    GG_SHARED(MgkShared<T>, sh, );
    GG_SHARED(MgkPair<T>, pr, );
    if (threadIdx.x == 0) set_pair<T, Table>(pr, X.ref(jb.i), Y.ref(jb.j), jb, edge, work);
    __syncthreads();
    const int64_t N = (int64_t)pr.a.n * pr.b.n;
    T *s = work + jb.vec, *dd = s + N, *p = s + 5 * N, *ap = s + 6 * N;
    const auto epi = [&](int64_t k, T w) {
        const T v = dd[k] * p[k] - s[k] * w;
        ap[k] = v;
        return p[k] * v;
    };
    T pap;
    if (Table)
        pap = mulw_block<T>(sh, pr.a, pr.b, pr.kt, p, s, epi, GridTeam());
    else
        pap = mulw_block<T>(sh, pr.a, pr.b, pr.ke, p, s, epi, GridTeam());
    wide_partials<T>(partial, pap, T(0));
}

// mgk_wide_update: y += α p, r −= α ap, and the partials of rᵀ P⁻¹ r and rᵀ r.
template <typename T>
__global__ void __launch_bounds__(MGK_THREADS) mgk_wide_update(MgkJob jb, int64_t N, T* work,
                                                              const WideState<T>* st, T* partial) {
    if (st->done) return;
    GG_SHARED(MgkShared<T>, sh, );
    T *inv = work + jb.vec + 2 * N, *y = inv + N, *r = inv + 2 * N, *p = inv + 3 * N, *ap = inv + 4 * N;
    T rzn = T(0), rrn = T(0);
    pcg_update<T>(GridTeam(), N, st->alpha, inv, y, r, p, ap, rzn, rrn);
    block_sum2<T>(sh, rzn, rrn);
    wide_partials<T>(partial, rzn, rrn);
}

// mgk_wide_direction: p = inv∘r + β p.
template <typename T>
__global__ void __launch_bounds__(MGK_THREADS) mgk_wide_direction(MgkJob jb, int64_t N, T* work,
                                                                 const WideState<T>* st) {
    if (st->done) return;
    T *inv = work + jb.vec + 2 * N, *r = inv + 2 * N, *p = inv + 3 * N;
    pcg_direction<T>(GridTeam(), N, st->beta, inv, r, p);
}

// mgk_wide_value: the partials of K = Σ p_i p'_i' s y.
template <typename T>
__global__ void __launch_bounds__(MGK_THREADS) mgk_wide_value(DevGraphs<T> X, DevGraphs<T> Y, MgkJob jb, T* work,
                                                             T* partial) {
    GG_SHARED(MgkShared<T>, sh, );
    const GraphRef<T> A = X.ref(jb.i), B = Y.ref(jb.j);
    const int64_t N = (int64_t)A.n * B.n;
    const T val = pair_value<T>(sh, A, B, work + jb.vec, work + jb.vec + 3 * N, GridTeam());
    wide_partials<T>(partial, val, T(0));
}

// mgk_wide_scalar (one thread): adds the nparts blocks' partials of step in
// block order and advances st as pcg_block does at that point; after
// WIDE_VALUE it writes the pair's result.
template <typename T>
__global__ void mgk_wide_scalar(int step, int nparts, const T* partial, WideState<T>* st, MgkParams<T> prm,
                                MgkResult* result) {
    if (threadIdx.x != 0) return;
    if (st->done && (step == WIDE_MATVEC || step == WIDE_UPDATE)) return;
    T a = T(0), b = T(0);
    for (int k = 0; k < nparts; k++) {
        a += partial[2 * k];
        b += partial[2 * k + 1];
    }
    switch (step) {
    case WIDE_INIT:
        st->rz = a, st->rr = b, st->bb = b, st->thr = prm.tol * prm.tol * b;
        st->it = 0, st->ok = 1, st->done = 0;
        if (b == T(0) || st->rr <= st->thr)
            st->done = 1;
        else if (prm.max_iter <= 0)
            st->ok = 0, st->done = 1;
        break;
    case WIDE_MATVEC:
        if (!(a > T(0)) || isinf(a))
            st->ok = 0, st->done = 1;
        else
            st->alpha = st->rz / a;
        break;
    case WIDE_UPDATE:
        st->beta = a / st->rz;
        st->rz = a, st->rr = b;
        st->it++;
        if (st->rr <= st->thr)
            st->done = 1;
        else if (st->it >= prm.max_iter)
            st->ok = 0, st->done = 1;
        break;
    default: {  // WIDE_VALUE
        MgkResult res{};
        if (st->bb != T(0)) {
            res.residual = sqrt(double(st->rr) / double(st->bb));
            res.iters = st->ok ? st->it : -st->it;
        }
        res.value = double(a);
        *result = res;
    }
    }
}

// ---- Gradients (mgk.GramGrad's adjoint method) ----
//
// A gradient job's work space is eight vectors (s, dd, inv, y, r, p, ap, u)
// and, on the table path, the κe class table followed by a table of the same
// size for the edge coefficients. mgk_prep fills s, dd, inv and V (in y) as
// for Gram; mgk_gsolve runs the primal and the adjoint solves and leaves, per
// product node, the full solution x in y, u = S ũ in u and the node
// coefficient λ∘(D·1 + W x) − [Lmin = 1] p p' in r, the q term in grad[0] and
// (table path) the edge coefficients uᵀ dW x per class pair; mgk_gterms then
// differentiates the base kernels, away from the solver's registers.

// edge_pairs_block calls f(ka, kb, c) for every directed pair of nonzeros (ka
// of A, kb of B) with c = u[(i, i')] · w_ka · w'_kb · x[(j, j')], where ka joins
// i to j and kb joins i' to j' (a self-loop is one nonzero): the terms of
// uᵀ dW x. Warps own output blocks as in mulw_block; lanes share a tile pair's
// nonzero pairs.
template <typename T, typename F>
__device__ void edge_pairs_block(const GraphRef<T>& A, const GraphRef<T>& B, const T* u, const T* x, const F& f) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const int nblocks = A.nt * B.nt;
    for (int ob = warp; ob < nblocks; ob += nwarps) {
        const int I = ob / B.nt, Ip = ob % B.nt;
        for (int32_t ta = A.tile_ptr[I]; ta < A.tile_ptr[I + 1]; ta++) {
            const int32_t a0 = A.nz_ptr[ta], na = A.nz_ptr[ta + 1] - a0, J = A.tile_col[ta];
            for (int32_t tb = B.tile_ptr[Ip]; tb < B.tile_ptr[Ip + 1]; tb++) {
                const int32_t b0 = B.nz_ptr[tb], nb = B.nz_ptr[tb + 1] - b0, Jp = B.tile_col[tb];
                for (int k = lane; k < na * nb; k += 32) {
                    const int32_t ka = a0 + k / nb, kb = b0 + k % nb;
                    const int pa = A.nz_pos[ka], pb = B.nz_pos[kb];
                    const int64_t row = (int64_t)(8 * I + (pa >> 3)) * B.n + 8 * Ip + (pb >> 3);
                    const int64_t col = (int64_t)(8 * J + (pa & 7)) * B.n + 8 * Jp + (pb & 7);
                    f(ka, kb, u[row] * A.nz_w[ka] * B.nz_w[kb] * x[col]);
                }
            }
        }
    }
}

// gsolve_pair_block runs the primal and the adjoint solve of a prepared
// gradient job and the gradient's reductions that need W (see above); it
// returns the result (value, iterations of both solves, the larger residual)
// and the q derivative in *dq, in every thread.
template <typename T, typename K, bool Table>
__device__ MgkResult gsolve_pair_block(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const K& ke,
                                       const MgkParams<T>& prm, T* vec, T* ce, T* dq) {
    const int64_t N = (int64_t)A.n * B.n;
    T *s = vec, *dd = vec + N, *inv = vec + 2 * N, *y = vec + 3 * N, *r = vec + 4 * N, *p = vec + 5 * N,
      *ap = vec + 6 * N, *u = vec + 7 * N;
    primal_rhs<T>(sh, A, B, ke, prm, s, dd, y, ap);
    MgkResult res = pcg_block<T>(sh, A, B, ke, prm.tol, prm.max_iter, s, dd, inv, y, r, p, ap);
    res.value = double(pair_value<T>(sh, A, B, s, y));
    // Adjoint: (D − S W S) ũ = S (c∘p⊗p'), c = c_A c_A' the class weights.
    for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
        const int i = (int)(k / B.n), ip = (int)(k % B.n);
        ap[k] = s[k] * A.start[i] * B.start[ip] * (A.c(i) * B.c(ip));
    }
    __syncthreads();
    const MgkResult adj = pcg_block<T>(sh, A, B, ke, prm.adj_tol, prm.max_iter, s, dd, inv, u, r, p, ap);
    res.residual = res.residual > adj.residual ? res.residual : adj.residual;
    const bool ok = res.iters >= 0 && adj.iters >= 0;
    const int it = (res.iters < 0 ? -res.iters : res.iters) + (adj.iters < 0 ? -adj.iters : adj.iters);
    res.iters = ok ? it : -it;
    // x = S y (+ c V with Lmin = 1) and u = S ũ, in place.
    for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
        const T sk = s[k];
        const T c = A.c((int)(k / B.n)) * B.c((int)(k % B.n));
        y[k] = sk * y[k] + (prm.lmin == 1 ? c * sk * sk : T(0));
        u[k] = sk * u[k];
    }
    __syncthreads();
    // W x into p, W u into ap.
    mulw_block<T>(sh, A, B, ke, y, (const T*)nullptr, [&](int64_t k, T w) {
        p[k] = w;
        return T(0);
    });
    mulw_block<T>(sh, A, B, ke, u, (const T*)nullptr, [&](int64_t k, T w) {
        ap[k] = w;
        return T(0);
    });
    __syncthreads();
    // λ = u / V where V > 0, else (c p p' + W u) / D; the q term
    // Σ D (c u − λ x) and the node coefficients λ (D c + W x) − [Lmin = 1]
    // c² p p', with c = c_A c_A' the class weights (mgk's gradient).
    T q = T(0), unused = T(0);
    for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
        const int i = (int)(k / B.n), ip = (int)(k % B.n);
        const T c = A.c(i) * B.c(ip), pp = A.start[i] * B.start[ip], v = s[k] * s[k];
        const T lam = v > T(0) ? u[k] / v : (c * pp + ap[k]) / dd[k];
        q += dd[k] * (c * u[k] - lam * y[k]);
        r[k] = lam * (dd[k] * c + p[k]) - (prm.lmin == 1 ? c * c * pp : T(0));
    }
    block_sum2<T>(sh, q, unused);
    *dq = q * T(2) / (T(1) - prm.q);
    if (Table) {
        // Edge coefficients per class pair, summed over the product's
        // nonzero pairs with atomics (a class pair recurs all over the tiles).
        const int64_t nc = (int64_t)A.nclass * B.nclass;
        for (int64_t c = threadIdx.x; c < nc; c += blockDim.x) ce[c] = T(0);
        __syncthreads();
        edge_pairs_block<T>(A, B, u, y, [&](int32_t ka, int32_t kb, T c) {
            atomicAdd(&ce[(int64_t)A.nz_class[ka] * B.nclass + B.nz_class[kb]], c);
        });
        __syncthreads();
    }
    return res;
}

// mgk_gsolve: mgk_solve for gradient jobs (persistent blocks, largest first).
// grad holds np doubles a job; this kernel writes the q derivative.
template <typename T, bool Table>
__global__ void __launch_bounds__(MGK_THREADS, Table ? MGK_MIN_BLOCKS : 1)
    mgk_gsolve(DevGraphs<T> X, DevGraphs<T> Y, const MgkJob* __restrict__ jobs, int njobs, int* counter,
               const ggc_mk_program* edge, MgkParams<T> prm, T* work, MgkResult* results, double* grad, int np) {
    GG_SHARED(MgkShared<T>, sh, );
    GG_SHARED(MgkPair<T>, pr, );
    GG_DYNAMIC_SHARED(stage);
    for (;;) {
        const int job = next_job(counter, sh.job);
        if (job >= njobs) return;
        const MgkJob jb = jobs[job];
        publish_pair<T, Table>(pr, stage, X, Y, jb, edge, work);
        MgkResult res;
        T dq;
        if (Table)
            res = gsolve_pair_block<T, EdgeTable<T>, true>(sh, pr.a, pr.b, pr.kt, prm, work + jb.vec,
                                                          work + jb.tab + (int64_t)pr.a.nclass * pr.b.nclass, &dq);
        else
            res = gsolve_pair_block<T, EdgeEval<T>, false>(sh, pr.a, pr.b, pr.ke, prm, work + jb.vec, (T*)nullptr,
                                                           &dq);
        res.staged = jb.stage;
        if (threadIdx.x == 0) {
            results[job] = res;
            grad[(int64_t)job * np] = double(dq);
        }
        __syncthreads();
    }
}

// block_sum_prep returns the sum of a over a block of PREP_THREADS threads to
// every thread.
template <typename T>
__device__ T block_sum_prep(T* red, T a) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
    __syncthreads();  // earlier readers of red are done
    if (lane == 0) red[warp] = a;
    __syncthreads();
    a = T(0);
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) a += red[w];
    return a;
}

// mgk_gterms (one block per gradient job, after mgk_gsolve) adds the base
// kernels' derivatives: node parameter t gets Σ_k r_k ∂κv_t at every product
// node; edge parameter t gets Σ ce ∂κe_t over the class pairs (table path) or
// Σ over the nonzero pairs of uᵀ dW x's terms times ∂κe_t (evaluated path).
// Parameters are differentiated one at a time (mk_eval_d), so a kernel with m
// parameters is evaluated m times per node pair or class pair.
template <typename T, bool Table>
__global__ void __launch_bounds__(PREP_THREADS) mgk_gterms(DevGraphs<T> X, DevGraphs<T> Y, const MgkJob* __restrict__ jobs,
                                                           const ggc_mk_program* node, const ggc_mk_program* edge,
                                                           T* work, double* grad, int np) {
    GG_SHARED(T, red, [PREP_THREADS / 32]);
    const MgkJob jb = jobs[blockIdx.x];
    const GraphRef<T> A = X.ref(jb.i), B = Y.ref(jb.j);
    const int64_t N = (int64_t)A.n * B.n;
    const T *y = work + jb.vec + 3 * N, *coef = work + jb.vec + 4 * N, *u = work + jb.vec + 7 * N;
    double* g = grad + (int64_t)blockIdx.x * np;
    const int nv = node->nparams, ne = edge->nparams;
    for (int t = 0; t < nv; t++) {
        T acc = T(0);
        for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
            const T c = coef[k];
            if (c == T(0)) continue;
            const int i = (int)(k / B.n), ip = (int)(k % B.n);
            acc += c * mk_eval_d<T>(*node, A.node_feat + (int64_t)i * A.node_cols,
                                    B.node_feat + (int64_t)ip * B.node_cols, t).d;
        }
        acc = block_sum_prep<T>(red, acc);
        if (threadIdx.x == 0) g[1 + t] = double(acc);
    }
    for (int t = 0; t < ne; t++) {
        T acc = T(0);
        if (Table) {
            const int64_t nc = (int64_t)A.nclass * B.nclass;
            const T* ce = work + jb.tab + nc;
            for (int64_t c = threadIdx.x; c < nc; c += blockDim.x) {
                if (ce[c] == T(0)) continue;
                acc += ce[c] * mk_eval_d<T>(*edge, A.class_feat + (c / B.nclass) * A.edge_cols,
                                            B.class_feat + (c % B.nclass) * B.edge_cols, t).d;
            }
        } else {
            edge_pairs_block<T>(A, B, u, y, [&](int32_t ka, int32_t kb, T c) {
                if (c == T(0)) return;
                acc += c * mk_eval_d<T>(*edge, A.class_feat + (int64_t)A.nz_class[ka] * A.edge_cols,
                                        B.class_feat + (int64_t)B.nz_class[kb] * B.edge_cols, t).d;
            });
        }
        acc = block_sum_prep<T>(red, acc);
        if (threadIdx.x == 0) g[1 + nv + t] = double(acc);
    }
}

// mgk_nodal_out (one block per solved job, after mgk_solve) writes the
// job's node-pair similarities p_i p'_i' s y (x − V·1 with Lmin = 1, as
// mgk.Nodal) into the ΣnX × ΣnY matrix out (row stride ld, nodes graph after
// graph), and for a symmetric call with i ≠ j also the transposed block.
template <typename T>
__global__ void __launch_bounds__(PREP_THREADS) mgk_nodal_out(DevGraphs<T> X, DevGraphs<T> Y,
                                                              const MgkJob* __restrict__ jobs, const T* work,
                                                              double* out, int64_t ld, int sym) {
    const MgkJob jb = jobs[blockIdx.x];
    const GraphRef<T> A = X.ref(jb.i), B = Y.ref(jb.j);
    const int64_t N = (int64_t)A.n * B.n;
    const T *s = work + jb.vec, *y = work + jb.vec + 3 * N;
    const int64_t r0 = X.g.desc[(int64_t)jb.i * GGC_DESC_FIELDS + GGC_DESC_NODE0];
    const int64_t c0 = Y.g.desc[(int64_t)jb.j * GGC_DESC_FIELDS + GGC_DESC_NODE0];
    const bool mirror = sym && jb.i != jb.j;
    for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
        const int i = (int)(k / B.n), ip = (int)(k % B.n);
        const double v = double(s[k] * y[k] * A.start[i] * B.start[ip]);
        out[(r0 + i) * ld + c0 + ip] = v;
        if (mirror) out[(c0 + ip) * ld + r0 + i] = v;
    }
}

}  // namespace gg
