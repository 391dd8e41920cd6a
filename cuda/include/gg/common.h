// common.h: portability macros shared by the host (g++) and device (nvcc) builds.
#pragma once
#include <stdint.h>
#if !defined(__CUDACC__)
#include <math.h>
#endif

#if defined(__CUDACC__)
#define GG_HD __host__ __device__ __forceinline__
#else
#define GG_HD inline
#endif

// GG_UNROLL asks nvcc to unroll the next loop; g++ unrolls constant trip
// counts on its own and would warn about the pragma.
#if defined(__CUDA_ARCH__)
#define GG_UNROLL _Pragma("unroll")
#define GG_NO_UNROLL _Pragma("unroll 1")
#else
#define GG_UNROLL
#define GG_NO_UNROLL
#endif

// GG_SHARED(type, name, dims) declares a kernel's static shared variable
// `type name dims`. The host emulation (cuda/emu/emu.h) defines its own,
// which gives every concurrently running block its own poisoned copy.
#ifndef GG_SHARED
#define GG_SHARED(type, name, dims) __shared__ type name dims
#endif

namespace gg {

// popcount and count-trailing-zeros on 64-bit masks, on either side.
GG_HD int popc64(uint64_t m) {
#if defined(__CUDA_ARCH__)
    return __popcll(m);
#else
    return __builtin_popcountll(m);
#endif
}

GG_HD int ctz64(uint64_t m) {
#if defined(__CUDA_ARCH__)
    return __ffsll((long long)m) - 1;
#else
    return __builtin_ctzll(m);
#endif
}

template <typename T> GG_HD T gg_exp(T x);
template <> GG_HD double gg_exp<double>(double x) { return exp(x); }
template <> GG_HD float gg_exp<float>(float x) { return expf(x); }
template <typename T> GG_HD T gg_sqrt(T x);
template <> GG_HD double gg_sqrt<double>(double x) { return sqrt(x); }
template <> GG_HD float gg_sqrt<float>(float x) { return sqrtf(x); }
template <typename T> GG_HD T gg_abs(T x) { return x < T(0) ? -x : x; }

}  // namespace gg
