// emu.h: just enough of CUDA's execution model on host threads to run the
// library's kernels (src/mgk.cuh, sp.cuh, explicit.cuh) unchanged under g++:
// one std::thread per CUDA thread, __syncthreads and __syncwarp as barriers,
// warp shuffles through a per-block buffer, atomics as std::atomic_ref. It
// checks the kernels' logic (indexing, ownership, synchronization,
// reductions, the persistent job loop), not their speed or memory model.
//
// It is meant to fail where hardware would, not to pass where it might:
//
// * the blocks of a launch run concurrently, $GGCUDA_EMU_CONCURRENT of them at
//   a time (default 3) on their own host threads, in an order shuffled by
//   $GGCUDA_EMU_SEED (default 1; every failure message names it), so atomics
//   on global memory (the persistent job counter) race between blocks and a
//   kernel that assumes block order fails; $GGCUDA_EMU_CONCURRENT=1 runs them
//   one after another in the shuffled order;
// * a block's threads are started in a shuffled order, and each thread yields
//   its host thread before a random half of its __syncthreads, so which warp
//   runs first varies;
// * every block gets its own static (GG_SHARED) and dynamic shared memory,
//   poisoned with 0xFF bytes (NaN for floats, -1 for integers) before it
//   starts, and the dynamic part is followed by a guard band that aborts on
//   overrun: a kernel that reads shared memory nobody in its block wrote, or
//   reads it before the writer's barrier, computes garbage;
// * barrier divergence aborts with a message naming the kernel, the launch and
//   the seed: a __syncthreads reached by some threads of a block while others
//   have exited, or wait at a different __syncthreads (another line); a
//   __syncwarp or shuffle while a lane has exited; and any state where every
//   live thread of a block waits at a barrier that cannot complete.
//
// The block sizes are the kernels' compile-time constants (GG_MGK_THREADS,
// ...); hostref builds the kernels at the emulation's small sizes (emu.cc) and
// at the GPU's 256 threads (emu256.cc).
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

struct emu_dim3 {
    unsigned x = 1, y = 1, z = 1;
};

namespace emu {

constexpr size_t DYN_GUARD = 4096;
constexpr unsigned char DYN_POISON = 0xFF;

// seed returns the base seed of the shuffles ($GGCUDA_EMU_SEED, default 1).
inline uint64_t seed() {
    static const uint64_t s = [] {
        const char* e = getenv("GGCUDA_EMU_SEED");
        return e ? strtoull(e, nullptr, 0) : uint64_t(1);
    }();
    return s;
}
// concurrency returns how many blocks of a launch run at once
// ($GGCUDA_EMU_CONCURRENT, default 3, at least 1).
inline unsigned concurrency() {
    const char* e = getenv("GGCUDA_EMU_CONCURRENT");
    const long n = e ? atol(e) : 3;
    return n < 1 ? 1u : (unsigned)n;
}
inline uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// launch_info describes the running launch for failure messages.
struct launch_info {
    const char* name;
    uint64_t number, seed;
    unsigned grid, block;
};

// block_ctx is one running block: its index, barriers, shuffle buffer and
// shared memory. __syncthreads holds the block's mutex, __syncwarp its warp's
// (warps do not contend with each other); exited and waiting count the
// block's threads that left the kernel and that wait at any barrier not yet
// complete, so that a barrier can see the whole block.
struct block_ctx {
    struct warp {
        std::mutex m;
        unsigned size = 0, arrived = 0, exited = 0;
        std::atomic<uint64_t> gen{0};
    };
    const launch_info* li;
    emu_dim3 idx;
    unsigned n;
    std::mutex m;
    std::atomic<int64_t> exited{0}, waiting{0};
    unsigned arrived = 0;
    std::atomic<uint64_t> gen{0};
    const char* site = nullptr;
    std::unique_ptr<warp[]> warps;
    std::vector<unsigned char> shfl;
    std::unique_ptr<std::max_align_t[]> dyn;
    size_t dyn_bytes = 0;
    std::map<const void*, std::unique_ptr<std::max_align_t[]>> statics;
};

inline thread_local emu_dim3 thread_idx;
inline thread_local block_ctx* cur = nullptr;
inline thread_local uint64_t rng_state = 0;
inline emu_dim3 block_dim, grid_dim;

// rand_bit returns a pseudo-random bit of the calling thread's stream.
inline bool rand_bit() {
    rng_state = mix(rng_state, 1);
    return rng_state & 1;
}

[[noreturn]] inline void diverge(block_ctx* b, const std::string& what) {
    fprintf(stderr,
            "emu: barrier divergence in kernel %s (launch %llu of the process, grid %u, block %u, "
            "GGCUDA_EMU_SEED=%llu), block %u: %s\n",
            b->li->name, (unsigned long long)b->li->number, b->li->grid, b->li->block, (unsigned long long)seed(),
            b->idx.x, what.c_str());
    fflush(stderr);
    abort();
}

// check_stuck aborts when every live thread of the block waits at a barrier
// (none can complete). A thread counts itself in waiting only after its
// arrival did not complete its barrier, and the thread that completes one
// subtracts the others, so waiting never exceeds the true count: no false
// alarms (a racing update can at worst delay the alarm to the next arrival).
inline void check_stuck(block_ctx* b) {
    const int64_t w = b->waiting.load(), e = b->exited.load();
    if (w == 0 || w < (int64_t)b->n - e) return;
    diverge(b, "all " + std::to_string(w) + " live threads wait at barriers that cannot complete (" +
                   std::to_string(b->arrived) + " at __syncthreads" +
                   (b->site ? std::string(" (") + b->site + ")" : std::string()) + ", the others at __syncwarp or "
                   "shuffles; " + std::to_string(e) + " exited)");
}

// syncthreads is __syncthreads at site (file:line).
inline void syncthreads(const char* site) {
    block_ctx* b = cur;
    if (rand_bit()) std::this_thread::yield();
    std::unique_lock<std::mutex> l(b->m);
    if (b->exited.load())
        diverge(b, "thread " + std::to_string(thread_idx.x) + " reached __syncthreads (" + site + ") after " +
                       std::to_string(b->exited.load()) + " threads of its block exited");
    if (b->arrived == 0)
        b->site = site;
    else if (strcmp(site, b->site) != 0)
        diverge(b, "thread " + std::to_string(thread_idx.x) + " reached __syncthreads (" + site + ") while " +
                       std::to_string(b->arrived) + " wait at another (" + b->site + ")");
    if (++b->arrived == b->n) {
        b->waiting -= b->n - 1;
        b->arrived = 0;
        b->gen++;
        l.unlock();
        b->gen.notify_all();
        return;
    }
    const uint64_t g = b->gen.load();
    b->waiting++;
    check_stuck(b);
    l.unlock();
    // Waiters sleep on the generation (a futex), not on the mutex.
    while (b->gen.load() == g) b->gen.wait(g);
}

// syncwarp is __syncwarp (and the two halves of a shuffle) of the calling
// thread's warp. Volta's __syncwarp may be reached from different lines, so
// only exited lanes and deadlocks are divergence here.
inline void syncwarp() {
    block_ctx* b = cur;
    block_ctx::warp& w = b->warps[thread_idx.x / 32];
    std::unique_lock<std::mutex> l(w.m);
    if (w.exited)
        diverge(b, "thread " + std::to_string(thread_idx.x) + " reached __syncwarp or a shuffle after " +
                       std::to_string(w.exited) + " lanes of its warp exited");
    if (++w.arrived == w.size) {
        b->waiting -= w.size - 1;
        w.arrived = 0;
        w.gen++;
        l.unlock();
        w.gen.notify_all();
        return;
    }
    const uint64_t g = w.gen.load();
    b->waiting++;
    check_stuck(b);
    l.unlock();
    while (w.gen.load() == g) w.gen.wait(g);
}

// thread_exit records that the calling thread left the kernel.
inline void thread_exit() {
    block_ctx* b = cur;
    block_ctx::warp& w = b->warps[thread_idx.x / 32];
    std::lock_guard<std::mutex> l(b->m);  // the block's, then the warp's
    std::lock_guard<std::mutex> lw(w.m);
    b->exited++;
    w.exited++;
    if (b->arrived)
        diverge(b, "thread " + std::to_string(thread_idx.x) + " exited while " + std::to_string(b->arrived) +
                       " threads wait at __syncthreads (" + b->site + ")");
    if (w.arrived)
        diverge(b, "thread " + std::to_string(thread_idx.x) + " exited while " + std::to_string(w.arrived) +
                       " lanes of its warp wait at __syncwarp or a shuffle");
    check_stuck(b);
}

inline unsigned char* dyn_smem() { return reinterpret_cast<unsigned char*>(cur->dyn.get()); }

// shared_var returns the calling block's copy of the static shared variable
// identified by key (one per declaration and template instance), created
// poisoned by the block's first thread to reach it.
template <typename T>
T& shared_var(const void* key) {
    block_ctx* b = cur;
    std::lock_guard<std::mutex> l(b->m);
    auto& p = b->statics[key];
    if (!p) {
        constexpr size_t bytes = sizeof(T), words = bytes / sizeof(std::max_align_t) + 1;
        p.reset(new std::max_align_t[words]);
        std::memset(p.get(), DYN_POISON, sizeof(T));
    }
    return *reinterpret_cast<T*>(p.get());
}

inline std::atomic<uint64_t>& launches() {
    static std::atomic<uint64_t> n{0};
    return n;
}

// run_block runs block bi of the launch li on block threads.
inline void run_block(const launch_info& li, unsigned bi, unsigned block, size_t shmem,
                      const std::function<void()>& fn) {
    block_ctx b;
    b.li = &li;
    b.idx.x = bi;
    b.n = block;
    b.warps.reset(new block_ctx::warp[(block + 31) / 32]);
    for (unsigned w = 0; w < (block + 31) / 32; w++) b.warps[w].size = std::min(32u, block - 32 * w);
    b.shfl.assign(8 * (size_t)block, 0);
    b.dyn_bytes = shmem;
    b.dyn.reset(new std::max_align_t[(shmem + DYN_GUARD) / sizeof(std::max_align_t) + 1]);
    std::memset(b.dyn.get(), DYN_POISON, shmem + DYN_GUARD);
    // Threads start in a shuffled order, so that no warp is reliably first.
    std::vector<unsigned> order(block);
    for (unsigned t = 0; t < block; t++) order[t] = t;
    std::mt19937_64 g(mix(li.seed, bi));
    std::shuffle(order.begin(), order.end(), g);
    std::vector<std::thread> ts;
    ts.reserve(block);
    for (unsigned t : order)
        ts.emplace_back([t, &b, &fn, &li, bi] {
            thread_idx.x = t;
            cur = &b;
            rng_state = mix(mix(li.seed, bi), t + 1);
            fn();
            thread_exit();
        });
    for (auto& t : ts) t.join();
    const unsigned char* d = reinterpret_cast<const unsigned char*>(b.dyn.get());
    for (size_t k = shmem; k < shmem + DYN_GUARD; k++)
        if (d[k] != DYN_POISON) {
            fprintf(stderr,
                    "emu: block %u of kernel %s (launch %llu of the process, GGCUDA_EMU_SEED=%llu) wrote past "
                    "its %zu bytes of dynamic shared memory (byte %zu)\n",
                    bi, li.name, (unsigned long long)li.number, (unsigned long long)seed(), shmem, k);
            abort();
        }
}

// launch runs fn as grid blocks of block threads with shmem bytes of dynamic
// shared memory: concurrency() blocks at a time, in a shuffled order. One
// launch runs at a time (blockDim and gridDim are the launch's).
inline void launch(unsigned grid, unsigned block, const std::function<void()>& fn, size_t shmem = 0,
                   const char* name = "kernel") {
    grid_dim.x = grid;
    block_dim.x = block;
    launch_info li{name, launches()++, 0, grid, block};
    li.seed = mix(seed(), li.number);
    std::vector<unsigned> order(grid);
    for (unsigned b = 0; b < grid; b++) order[b] = b;
    std::mt19937_64 g(li.seed);
    std::shuffle(order.begin(), order.end(), g);
    std::atomic<unsigned> next{0};
    auto worker = [&] {
        for (unsigned k; (k = next++) < grid;) run_block(li, order[k], block, shmem, fn);
    };
    const unsigned c = std::min(grid, concurrency());
    std::vector<std::thread> ws;
    for (unsigned k = 1; k < c; k++) ws.emplace_back(worker);
    worker();
    for (auto& w : ws) w.join();
}

}  // namespace emu

// The kernels' shared memory: GG_SHARED(type, name, dims) (gg/common.h on the
// device) is the block's own poisoned copy, GG_DYNAMIC_SHARED (mgk.cuh) the
// block's dynamic shared memory. A bare __shared__ would be one variable for
// all concurrent blocks, so it does not compile here.
#define GG_SHARED(type, name, dims)                                  \
    typedef type gg_shared_##name##_t dims;                          \
    static const char gg_shared_##name##_key = 0;                    \
    gg_shared_##name##_t& name = emu::shared_var<gg_shared_##name##_t>(&gg_shared_##name##_key)
#define GG_DYNAMIC_SHARED(name) unsigned char* name = emu::dyn_smem()
#define __shared__ __shared___needs_GG_SHARED_in_the_emulation

#define GG_EMU_STR2(x) #x
#define GG_EMU_STR(x) GG_EMU_STR2(x)
#define threadIdx (emu::thread_idx)
#define blockIdx (emu::cur->idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
#define __syncthreads() (emu::syncthreads(__FILE__ ":" GG_EMU_STR(__LINE__)))
#define __syncwarp(...) (emu::syncwarp())
#define __global__
#define __device__
#define __host__
#define __forceinline__
#define __noinline__
#define __launch_bounds__(...)

template <typename T>
T __shfl_xor_sync(unsigned, T v, int o) {
    static_assert(sizeof(T) <= 8, "shuffle of a wide type");
    const unsigned t = threadIdx.x;
    unsigned char* buf = emu::cur->shfl.data();
    std::memcpy(&buf[8 * t], &v, sizeof(T));
    emu::syncwarp();
    T r;
    std::memcpy(&r, &buf[8 * (t ^ (unsigned)o)], sizeof(T));
    emu::syncwarp();
    return r;
}

template <typename T>
T atomicAdd(T* p, T v) {
    return std::atomic_ref<T>(*p).fetch_add(v);
}

using std::isinf;
using std::sqrt;
