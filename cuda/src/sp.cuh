// sp.cuh: the shortest-path kernel on the device, after FCSP (Xu et al.): all
// graphs' SP-edge arrays resident; per chunk of pairs, a vertex-kernel stage
// (sp_vertex: the n×n' node-kernel matrix of each pair) and a walk-kernel stage
// with its reduction (sp_walk: persistent blocks pull pairs, largest first, and
// sum κlength·(Kv(u,u')Kv(v,v') + Kv(u,v')Kv(v,u')) over all pairs of SP edges
// in a grid-stride loop, then reduce over the block). κlength comes from a table
// over the distinct lengths, so the walk stage does no base-kernel arithmetic.
//
// Precision T (float or double) is that of the stored node-kernel matrices and
// length table and of the walk stage's products; base kernels are always
// evaluated in double (on the double features: that stage is O(n·n'), the walk
// O(|SP|·|SP'|)) and rounded once to T. In float, each thread adds its terms in
// float SP_FLUSH at a time and then into a double, and the block reduces in
// double: every term is nonnegative for graphgram's base kernels, so the error
// of an entry stays below (7 + SP_FLUSH)·2⁻²⁴ relative, whatever the number of
// terms (README, "The shortest-path kernel on the device").
#pragma once
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif
#include <stdint.h>

#include "gg/mk.h"
#include "persistent.cuh"

namespace gg {

#ifndef GG_SP_THREADS
#define GG_SP_THREADS 256
#endif
constexpr int SP_THREADS = GG_SP_THREADS;
constexpr int SP_WARPS = SP_THREADS / 32;
// Terms a thread sums in T before adding them into its double accumulator
// (float only): bounds the float summation error to SP_FLUSH roundings.
// GG_SP_FLUSH overrides it for measurements (hostref, CGO_CXXFLAGS).
#ifndef GG_SP_FLUSH
#define GG_SP_FLUSH 32
#endif
constexpr int SP_FLUSH = GG_SP_FLUSH;

struct SpJob {
    int32_t i, j;
    int64_t kv;  // offset of the pair's node-kernel matrix in the work space
    int64_t out; // index into the results (the job's position in the sorted list)
};

// SpGraph is graph i of a ggc_sp_graphs list.
struct SpGraph {
    int32_t n;
    int64_t m;
    const int32_t* u;
    const int32_t* v;
    const int32_t* len;
    const double* feat;
};

__host__ __device__ inline SpGraph sp_graph(const ggc_sp_graphs& g, int i) {
    SpGraph r;
    const int64_t n0 = g.node_off[i], e0 = g.sp_off[i];
    r.n = (int32_t)(g.node_off[i + 1] - n0);
    r.m = g.sp_off[i + 1] - e0;
    r.u = g.sp_u + e0;
    r.v = g.sp_v + e0;
    r.len = g.sp_len + e0;
    r.feat = g.node_feat + n0 * g.node_cols;
    return r;
}

// sp_length_table: tab[a·L + b] = κlength(length a, length b), evaluated in
// double and rounded to T.
template <typename T>
__global__ void __launch_bounds__(SP_THREADS) sp_length_table(const ggc_mk_program* length, const double* lengths,
                                                              int L, T* tab) {
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < (int64_t)L * L;
         k += (int64_t)gridDim.x * blockDim.x)
        tab[k] = T(mk_eval<double>(*length, lengths + k / L, lengths + k % L));
}

// sp_vertex (one block a job): the node-kernel matrix Kv[u·n' + u'], evaluated
// in double and rounded to T.
template <typename T>
__global__ void __launch_bounds__(SP_THREADS) sp_vertex(ggc_sp_graphs X, ggc_sp_graphs Y, const SpJob* __restrict__ jobs,
                                                        const ggc_mk_program* node, T* work) {
    const SpJob jb = jobs[blockIdx.x];
    const SpGraph A = sp_graph(X, jb.i), B = sp_graph(Y, jb.j);
    T* kv = work + jb.kv;
    for (int64_t k = threadIdx.x; k < (int64_t)A.n * B.n; k += blockDim.x)
        kv[k] = T(mk_eval<double>(*node, A.feat + (k / B.n) * X.node_cols, B.feat + (k % B.n) * Y.node_cols));
}

// sp_walk: persistent blocks; the walk-kernel stage and the reduction. out[jb.out]
// receives the job's kernel value (double in both precisions).
template <typename T>
__global__ void __launch_bounds__(SP_THREADS) sp_walk(ggc_sp_graphs X, ggc_sp_graphs Y, const SpJob* __restrict__ jobs,
                                                      int njobs, int* counter, const T* __restrict__ ltab, int L,
                                                      const T* work, double* out) {
    GG_SHARED(double, red, [SP_WARPS]);
    GG_SHARED(int, job_s, );
    for (;;) {
        const int job = next_job(counter, job_s);
        if (job >= njobs) return;
        const SpJob jb = jobs[job];
        const SpGraph A = sp_graph(X, jb.i), B = sp_graph(Y, jb.j);
        const T* kv = work + jb.kv;
        const int nb = B.n;
        double acc = 0;
        T part = 0;  // float: the last < SP_FLUSH terms; double: all of them
        int cnt = 0;
        for (int64_t k = threadIdx.x; k < A.m * B.m; k += blockDim.x) {
            const int64_t e = k / B.m, f = k % B.m;
            const int u = A.u[e], v = A.v[e], up = B.u[f], vp = B.v[f];
            const T kl = ltab[(int64_t)A.len[e] * L + B.len[f]];
            part += kl * (kv[(int64_t)u * nb + up] * kv[(int64_t)v * nb + vp] +
                          kv[(int64_t)u * nb + vp] * kv[(int64_t)v * nb + up]);
            if (sizeof(T) < sizeof(double) && ++cnt == SP_FLUSH) {
                acc += part;
                part = 0;
                cnt = 0;
            }
        }
        acc += part;
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            double s = 0;
            for (int w = 0; w < SP_WARPS; w++) s += red[w];
            // Both orientations of each unordered SP edge of G.
            out[jb.out] = 2 * s;
        }
        __syncthreads();
    }
}

}  // namespace gg
