// explicit.cuh: the Gram matrix of explicit sparse feature maps
// (gokernel/sparsegram: Weisfeiler–Lehman subtree and optimal assignment,
// vertex and edge histograms, the hash graph kernel) on the device.
//
// The feature columns are split on the host (ggcuda.cu, explicit_gram) by
// their work nX_f·nY_f: the few frequent columns, which hold most of Σ_f
// nX_f·nY_f on heavy-tailed data, form a dense panel (rows × panel columns of
// uint32 counts) multiplied tile by tile (ex_dense: no atomics, coalesced); the
// many rare columns are summed from an inverted index, one term per pair of
// rows sharing a column (ex_sparse: 64-bit integer atomics into the result).
// ex_finish then converts the sums to double and mirrors a symmetric result.
// See cuda/README.md, "Explicit features on the device".
//
// Exactness: every sum accumulates in unsigned 64-bit integers. Integer
// addition is associative, so the order in which tiles, threads and atomics
// add terms cannot change the result, and arithmetic modulo 2^64 is bit for bit
// Go's int64 arithmetic in sparsegram (which wraps, unchecked, past 2^63):
// (uint64)x·(uint64)y of two uint32 counts is exact, and the final cast of the
// sum to a signed 64-bit integer and then to double rounds as Go's
// float64(int64) does (to nearest, exact below 2^53). One 32×32→64-bit
// multiply-add is a single instruction (IMAD.WIDE.U32) on the device.
#pragma once
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif
#include <stdint.h>
#include <string.h>

#include "gg/common.h"
#include "ggcuda.h"

namespace gg {

#ifndef GG_EX_THREADS
#define GG_EX_THREADS 256
#endif
constexpr int EX_THREADS = GG_EX_THREADS;
// A block of ex_dense computes an EX_TILE × EX_TILE output tile; its threads
// form an EX_TR × EX_TR grid, each owning EX_RM × EX_RM entries strided by
// EX_TR (so that a warp's loads from shared memory and stores to the result
// are consecutive).
constexpr int EX_TILE = 64;
constexpr int EX_TR = EX_THREADS == 256 ? 16 : EX_THREADS == 64 ? 8 : EX_THREADS == 16 ? 4 : 0;
static_assert(EX_TR * EX_TR == EX_THREADS, "GG_EX_THREADS must be 16, 64 or 256");
constexpr int EX_RM = EX_TILE / EX_TR;
// Panel columns staged in shared memory per step; the panel's row stride is
// a multiple of it (zero columns pad it).
constexpr int EX_KT = 16;

typedef unsigned long long ExAcc;

// ex_op is one term of the semiring: x·y or min(x, y), in 64 bits.
template <int S>
GG_HD ExAcc ex_op(uint32_t x, uint32_t y) {
    if (S == GGC_SUM_MIN) return (ExAcc)(x < y ? x : y);
    return (ExAcc)x * (ExAcc)y;
}

// ex_f64_bits: the bits of the double nearest to the signed 64-bit value of v
// (the result buffer holds the integer sums, then, in place, the doubles).
GG_HD ExAcc ex_f64_bits(ExAcc v) {
    const double d = (double)(long long)v;
#if defined(__CUDA_ARCH__)
    return (ExAcc)__double_as_longlong(d);
#else
    ExAcc r;
    memcpy(&r, &d, sizeof r);
    return r;
#endif
}

// ExPostings is the inverted index of one matrix over the remainder columns:
// column c's rows are row[off[c]] .. row[off[c+1]-1] with counts val[...].
struct ExPostings {
    const int64_t* off;
    const int32_t* row;
    const uint32_t* val;
};

// ex_dense (one block an output tile, blockIdx.x = tile row · tile columns +
// tile column): acc[i·ny + j] = Σ_k op(dx[i·pw + k], dy[j·pw + k]) over the
// panel's pw columns, stored (not added: it runs first). Symmetric calls skip
// the tiles below the diagonal (ex_finish mirrors them).
template <int S>
__global__ void __launch_bounds__(EX_THREADS) ex_dense(const uint32_t* __restrict__ dx, const uint32_t* __restrict__ dy,
                                                       int nx, int ny, int pw, int sym, ExAcc* acc) {
    GG_SHARED(uint32_t, as, [EX_KT][EX_TILE]);
    GG_SHARED(uint32_t, bs, [EX_KT][EX_TILE]);
    const int ntj = (ny + EX_TILE - 1) / EX_TILE;
    const int ti = (int)(blockIdx.x / ntj), tj = (int)(blockIdx.x % ntj);
    if (sym && tj < ti) return;  // the whole block: no barrier is left waiting
    const int i0 = ti * EX_TILE, j0 = tj * EX_TILE;
    const int tx = (int)threadIdx.x % EX_TR, ty = (int)threadIdx.x / EX_TR;
    ExAcc c[EX_RM][EX_RM];
    GG_UNROLL
    for (int a = 0; a < EX_RM; a++) {
        GG_UNROLL
        for (int b = 0; b < EX_RM; b++) c[a][b] = 0;
    }
    for (int k0 = 0; k0 < pw; k0 += EX_KT) {
        // Stage EX_TILE rows × EX_KT columns of each panel, transposed so that
        // the product loop reads consecutive rows; rows past the end are 0.
        for (int e = (int)threadIdx.x; e < EX_TILE * EX_KT; e += EX_THREADS) {
            const int r = e / EX_KT, k = e % EX_KT;
            as[k][r] = i0 + r < nx ? dx[(int64_t)(i0 + r) * pw + k0 + k] : 0u;
            bs[k][r] = j0 + r < ny ? dy[(int64_t)(j0 + r) * pw + k0 + k] : 0u;
        }
        __syncthreads();
        GG_UNROLL
        for (int k = 0; k < EX_KT; k++) {
            uint32_t x[EX_RM], y[EX_RM];
            GG_UNROLL
            for (int a = 0; a < EX_RM; a++) x[a] = as[k][ty + a * EX_TR], y[a] = bs[k][tx + a * EX_TR];
            GG_UNROLL
            for (int a = 0; a < EX_RM; a++) {
                GG_UNROLL
                for (int b = 0; b < EX_RM; b++) c[a][b] += ex_op<S>(x[a], y[b]);
            }
        }
        __syncthreads();
    }
    GG_UNROLL
    for (int a = 0; a < EX_RM; a++) {
        const int i = i0 + ty + a * EX_TR;
        GG_UNROLL
        for (int b = 0; b < EX_RM; b++) {
            const int j = j0 + tx + b * EX_TR;
            if (i < nx && j < ny) acc[(int64_t)i * ny + j] = c[a][b];
        }
    }
}

// ex_sparse (grid-stride over the terms): the remainder columns' terms, one
// per pair of a row of X and a row of Y sharing the column, added into acc
// with 64-bit atomics (exact and order-independent). Term t belongs to the
// column c with wpre[c] <= t < wpre[c+1] (wpre: prefix sums of nX_c·nY_c,
// every column's count > 0, so c is unique), found by binary search.
// Symmetric calls (px is py) add the pairs a <= b only.
template <int S>
__global__ void __launch_bounds__(EX_THREADS) ex_sparse(ExPostings px, ExPostings py, const int64_t* __restrict__ wpre,
                                                        int ncols, int ny, int sym, ExAcc* acc) {
    const int64_t total = wpre[ncols];
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        int lo = 0, hi = ncols - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (wpre[mid] <= t)
                lo = mid;
            else
                hi = mid - 1;
        }
        const int64_t w = t - wpre[lo], bx = px.off[lo], by = py.off[lo];
        const int64_t m = py.off[lo + 1] - by;
        const int64_t p = bx + w / m, q = by + w % m;
        const int32_t a = px.row[p], b = py.row[q];
        if (sym && a > b) continue;
        atomicAdd(acc + (int64_t)a * ny + b, ex_op<S>(px.val[p], py.val[q]));
    }
}

// ex_finish (grid-stride over the entries): the integer sums become doubles in
// place; symmetric calls read the upper triangle only and write both halves
// (entry (i, j), i < j, is read by its own thread alone, and (j, i) by none).
__global__ void __launch_bounds__(EX_THREADS) ex_finish(ExAcc* acc, int nx, int ny, int sym) {
    const int64_t n = (int64_t)nx * ny;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = k / ny, j = k % ny;
        if (sym && i > j) continue;
        const ExAcc bits = ex_f64_bits(acc[k]);
        acc[k] = bits;
        if (sym && i < j) acc[j * ny + i] = bits;
    }
}

}  // namespace gg
