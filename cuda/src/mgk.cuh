// mgk.cuh: the marginalized graph kernel's device solver. One persistent block
// solves one pair at a time by Jacobi-preconditioned CG on the product graph
// (the same scaled system and preconditioner as gokernel/mgk), pulling pairs,
// largest first, from an atomic counter. The product mat-vec is formed on the
// fly from the octiles: each warp owns 8×8 output blocks (tile row I of A ×
// tile row I' of B) and sweeps the tile pairs of those rows with the dense or
// the sparse primitive of gg/tile.h, staging the input block in shared memory.
#pragma once
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif
#include <stdint.h>

#include "gg/mk.h"
#include "gg/pair.h"
#include "gg/tile.h"

namespace gg {

// Threads of a solver block. The host emulation (cuda/hostref/emu.h) builds the
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
    __device__ GraphRef<T> ref(int i) const {
        return make_graph_ref<T>(g, i, nz_w, class_feat, node_feat, deg, start);
    }
};

// MgkJob is one pair of a chunk with the offsets of its work space: seven
// vectors of n·n' entries (s, dd, inv, y, r, p, ap) and the κe class table.
struct MgkJob {
    int32_t i, j;
    int64_t vec, tab;
};

// MgkResult is written once per job.
struct MgkResult {
    double value, residual;
    int32_t iters;  // negative: not converged; INT32_MIN: bad node kernel value
    int32_t pad;
};

template <typename T>
struct MgkParams {
    T q;
    T tol;
    int32_t lmin, max_iter;
};

// Shared memory of one block.
template <typename T>
struct MgkShared {
    T x[MGK_WARPS][64];
    T y[MGK_WARPS][64];
    T red[2][MGK_WARPS];
    int32_t job;
};

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

// mulw_block computes W·(scale∘x) over the pair and hands each product node's
// value to epi(k, w), which returns a term of a block dot product; the sum of
// those terms over the block is returned to every thread.
template <typename T, typename K, typename Epi>
__device__ T mulw_block(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const K& ke, const T* x,
                        const T* scale, const Epi& epi) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T* sx = sh.x[warp];
    T* sy = sh.y[warp];
    T dot = T(0);
    const int nblocks = A.nt * B.nt;
    for (int ob = warp; ob < nblocks; ob += MGK_WARPS) {
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
    block_sum2<T>(sh, dot, unused);
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
        v[k] = pn.v;
    }
}

// solve_pair_block solves one prepared pair with the whole block and returns
// its result (valid in every thread).
template <typename T, typename K>
__device__ MgkResult solve_pair_block(MgkShared<T>& sh, const GraphRef<T>& A, const GraphRef<T>& B, const K& ke,
                                      const MgkParams<T>& prm, T* vec) {
    const int64_t N = (int64_t)A.n * B.n;
    T *s = vec, *dd = vec + N, *inv = vec + 2 * N, *y = vec + 3 * N, *r = vec + 4 * N, *p = vec + 5 * N,
      *ap = vec + 6 * N;
    MgkResult res{};
    // Right-hand side into ap (y holds V from mgk_prep).
    if (prm.lmin == 1) {
        mulw_block<T>(sh, A, B, ke, y, (const T*)nullptr, [&](int64_t k, T w) {
            ap[k] = s[k] * w;
            return T(0);
        });
    } else {
        for (int64_t k = threadIdx.x; k < N; k += blockDim.x) ap[k] = s[k] * dd[k];
    }
    __syncthreads();
    T rz = T(0), bb = T(0);
    for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
        const T rk = ap[k];
        r[k] = rk;
        y[k] = T(0);
        p[k] = inv[k] * rk;
        rz += rk * p[k];
        bb += rk * rk;
    }
    block_sum2<T>(sh, rz, bb);
    if (bb == T(0)) return res;
    T rr = bb;
    const T thr = prm.tol * prm.tol * bb;
    int it = 0;
    bool ok = true;
    for (;; it++) {
        if (rr <= thr) break;
        if (it >= prm.max_iter) {
            ok = false;
            break;
        }
        // ap = M p = dd∘p − s∘W(s∘p), and pᵀ M p in the same pass.
        const T pap = mulw_block<T>(sh, A, B, ke, p, s, [&](int64_t k, T w) {
            const T v = dd[k] * p[k] - s[k] * w;
            ap[k] = v;
            return p[k] * v;
        });
        if (!(pap > T(0)) || isinf(pap)) {
            ok = false;
            break;
        }
        const T alpha = rz / pap;
        T rzn = T(0), rrn = T(0);
        for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
            y[k] += alpha * p[k];
            const T rk = r[k] - alpha * ap[k];
            r[k] = rk;
            rzn += rk * rk * inv[k];
            rrn += rk * rk;
        }
        block_sum2<T>(sh, rzn, rrn);
        const T beta = rzn / rz;
        rz = rzn, rr = rrn;
        for (int64_t k = threadIdx.x; k < N; k += blockDim.x) p[k] = inv[k] * r[k] + beta * p[k];
        __syncthreads();
    }
    T val = T(0), unused = T(0);
    for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
        const int i = (int)(k / B.n), ip = (int)(k % B.n);
        val += A.start[i] * B.start[ip] * s[k] * y[k];
    }
    block_sum2<T>(sh, val, unused);
    res.value = double(val);
    res.residual = sqrt(double(rr) / double(bb));
    res.iters = ok ? it : -it;
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
    __shared__ MgkShared<T> sh;
    for (;;) {
        if (threadIdx.x == 0) sh.job = atomicAdd(counter, 1);
        __syncthreads();
        const int job = sh.job;
        __syncthreads();
        if (job >= njobs) return;
        const MgkJob jb = jobs[job];
        const GraphRef<T> A = X.ref(jb.i), B = Y.ref(jb.j);
        MgkResult res;
        if (Table) {
            const EdgeTable<T> ke{work + jb.tab, A.nz_class, B.nz_class, B.nclass};
            res = solve_pair_block<T>(sh, A, B, ke, prm, work + jb.vec);
        } else {
            const EdgeEval<T> ke{edge, A.class_feat, B.class_feat, A.nz_class, B.nz_class, A.edge_cols};
            res = solve_pair_block<T>(sh, A, B, ke, prm, work + jb.vec);
        }
        if (threadIdx.x == 0) results[job] = res;
        __syncthreads();
    }
}

}  // namespace gg
