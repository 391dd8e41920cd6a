// emu.h: just enough of CUDA's execution model on host threads to run the
// library's kernels (src/mgk.cuh) unchanged under g++: one std::thread per CUDA
// thread, blocks run one after another, __syncthreads and __syncwarp as
// barriers, warp shuffles through a shared buffer, atomics as std::atomic_ref.
// It checks the kernels' logic (indexing, ownership, synchronization,
// reductions, the persistent job loop), not their speed or memory model.
#pragma once
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

struct emu_dim3 {
    unsigned x = 1, y = 1, z = 1;
};

namespace emu {
inline thread_local emu_dim3 thread_idx;
inline emu_dim3 block_idx, block_dim, grid_dim;
inline std::unique_ptr<std::barrier<>> block_bar;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_bars;
// One 8-byte slot per thread for shuffles.
inline std::vector<unsigned char> shfl_buf;

inline void syncwarp() { warp_bars[thread_idx.x / 32]->arrive_and_wait(); }

// Dynamic shared memory of the running launch: dyn_bytes bytes (16-byte
// aligned) followed by a guard band. Blocks run one at a time, so one buffer
// serves them all. It is poisoned (0xFF: NaN weights, all-ones masks, -1
// indices) before every block, as a real block's shared memory starts
// undefined, so a kernel that reads what it did not stage computes garbage;
// a block that writes past dyn_bytes into the guard aborts the process.
constexpr size_t DYN_GUARD = 4096;
constexpr unsigned char DYN_POISON = 0xFF;
inline std::unique_ptr<std::max_align_t[]> dyn_buf;
inline size_t dyn_bytes = 0;
inline unsigned char* dyn_smem() { return reinterpret_cast<unsigned char*>(dyn_buf.get()); }

// launch runs fn as grid×block threads, one block at a time, with shmem bytes
// of dynamic shared memory.
inline void launch(unsigned grid, unsigned block, const std::function<void()>& fn, size_t shmem = 0) {
    grid_dim.x = grid;
    block_dim.x = block;
    block_bar = std::make_unique<std::barrier<>>(block);
    warp_bars.clear();
    for (unsigned w = 0; w < (block + 31) / 32; w++)
        warp_bars.push_back(std::make_unique<std::barrier<>>(std::min(32u, block - 32 * w)));
    shfl_buf.assign(8 * block, 0);
    dyn_bytes = shmem;
    dyn_buf.reset(new std::max_align_t[(shmem + DYN_GUARD) / sizeof(std::max_align_t) + 1]);
    for (unsigned b = 0; b < grid; b++) {
        block_idx.x = b;
        std::memset(dyn_smem(), DYN_POISON, shmem + DYN_GUARD);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < block; t++)
            ts.emplace_back([t, &fn] {
                thread_idx.x = t;
                fn();
            });
        for (auto& t : ts) t.join();
        for (size_t k = shmem; k < shmem + DYN_GUARD; k++)
            if (dyn_smem()[k] != DYN_POISON) {
                fprintf(stderr, "emu: block %u wrote past its %zu bytes of dynamic shared memory (byte %zu)\n", b,
                        shmem, k);
                abort();
            }
    }
}
}  // namespace emu

// The kernels' dynamic shared memory (mgk.cuh's GG_DYNAMIC_SHARED): the
// launch's buffer.
#define GG_DYNAMIC_SHARED(name) unsigned char* name = emu::dyn_smem()

#define threadIdx (emu::thread_idx)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
#define __syncthreads() (emu::block_bar->arrive_and_wait())
#define __syncwarp(...) (emu::syncwarp())
#define __global__
#define __device__
#define __host__
#define __forceinline__
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static

template <typename T>
T __shfl_xor_sync(unsigned, T v, int o) {
    static_assert(sizeof(T) <= 8, "shuffle of a wide type");
    const unsigned t = threadIdx.x;
    std::memcpy(&emu::shfl_buf[8 * t], &v, sizeof(T));
    emu::syncwarp();
    T r;
    std::memcpy(&r, &emu::shfl_buf[8 * (t ^ (unsigned)o)], sizeof(T));
    emu::syncwarp();
    return r;
}

template <typename T>
T atomicAdd(T* p, T v) {
    return std::atomic_ref<T>(*p).fetch_add(v);
}

using std::isinf;
using std::sqrt;
