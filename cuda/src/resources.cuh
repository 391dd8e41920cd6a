// resources.cuh: what the library keeps per device between calls, so that a
// call pays for its own work and not for setting the device up again: the
// device's properties (queried once), its idle device allocations (reused by
// the next call's Arena, up to a bound) and, through ggc_warm_up, the context
// and the kernels' code loaded before the first call needs them. Included by
// ggcuda.cu only, after the CUDA runtime (or the emulation's).
#pragma once

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace {

// Lock and Hold: a mutex and its scoped hold on pthreads. std::mutex::lock
// reports failure through libstdc++'s out-of-line __throw_system_error,
// which the wheels' portable link (libc++abi, cuda/build.py) does not have.
struct Lock {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
};
struct Hold {
    pthread_mutex_t* m;
    explicit Hold(Lock& l) : m(&l.m) { pthread_mutex_lock(m); }
    ~Hold() { pthread_mutex_unlock(m); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
};

// MAX_DEVICES bounds the device indices whose properties and memory are
// kept; a device beyond it is queried each call and its memory not kept.
constexpr int MAX_DEVICES = 64;

// DeviceProps is what the library reads of a device's properties.
struct DeviceProps {
    char name[256];
    int major, minor, sm_count;
    int64_t total_mem;
    int smem_sm, smem_optin, smem_reserved;  // shared memory per SM, per block opted in, reserved per block
};

// query_props asks the runtime for dev's properties.
cudaError_t query_props(int dev, DeviceProps* p) {
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, dev);
    if (e != cudaSuccess) return e;
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof p->name, "%s", prop.name);
    p->major = prop.major, p->minor = prop.minor, p->sm_count = prop.multiProcessorCount;
    p->total_mem = (int64_t)prop.totalGlobalMem;
    if ((e = cudaDeviceGetAttribute(&p->smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev))) return e;
    if ((e = cudaDeviceGetAttribute(&p->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev))) return e;
    return cudaDeviceGetAttribute(&p->smem_reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev);
}

// device_props returns dev's properties, queried on the first call for dev
// (cudaGetDeviceProperties costs far more than a small call's work).
cudaError_t device_props(int dev, DeviceProps* p) {
    struct Cached {
        Lock m;
        bool ready = false;
        DeviceProps p;
    };
    static Cached cache[MAX_DEVICES];
    if (dev < 0 || dev >= MAX_DEVICES) return query_props(dev, p);
    Cached& c = cache[dev];
    Hold l(c.m);
    if (!c.ready) {
        cudaError_t e = query_props(dev, &c.p);
        if (e != cudaSuccess) return e;
        c.ready = true;
    }
    *p = c.p;
    return cudaSuccess;
}

// The idle device allocations of one device: blocks a finished call's Arena
// returned, by capacity, for the next calls. At most KEEP_SHARE of the
// device's memory is kept idle (a GP fit's repeated calls of one size reuse
// all of theirs); ggc_release_memory frees them, and so does an allocation
// the device's free memory cannot serve.
constexpr int64_t KEEP_SHARE_DIV = 8;  // keep at most total memory / 8 idle
struct IdleBlocks {
    Lock m;
    std::vector<std::pair<size_t, void*>> blocks;  // sorted by capacity (a vector: no out-of-line tree code)
    int64_t bytes = 0;
    int64_t limit = -1;  // < 0: not yet known (set from the device's memory)
};
struct MemoryCache {
    IdleBlocks dev[MAX_DEVICES];
    ~MemoryCache() {
        for (int d = 0; d < MAX_DEVICES; d++) release(d);
    }
    // release frees device d's idle blocks and returns how many bytes.
    int64_t release(int d) {
        if (d < 0 || d >= MAX_DEVICES) return 0;
        IdleBlocks& ib = dev[d];
        Hold l(ib.m);
        int prev = -1;
        if (!ib.blocks.empty() && cudaGetDevice(&prev) == cudaSuccess && prev != d) cudaSetDevice(d);
        for (auto& b : ib.blocks) cudaFree(b.second);
        if (prev >= 0 && prev != d) cudaSetDevice(prev);
        const int64_t n = ib.bytes;
        ib.blocks.clear();
        ib.bytes = 0;
        return n;
    }
    int64_t idle(int d) {
        if (d < 0 || d >= MAX_DEVICES) return 0;
        Hold l(dev[d].m);
        return dev[d].bytes;
    }
};
// First used after a call's streams exist, so destroyed before the
// emulation's runtime statics (as pinned_cache).
MemoryCache& memory_cache() {
    static MemoryCache c;
    return c;
}

// fits reports whether an idle block of capacity cap serves bytes: at least
// as large, and not wastefully larger (twice, plus 1 MiB for small arrays).
inline bool fits(size_t cap, size_t bytes) { return cap >= bytes && cap <= 2 * bytes + (size_t(1) << 20); }

// Arena: a call's device allocations, taken from the device's idle blocks
// where one fits and returned to them together when the call ends. Its
// release first synchronizes the device, as the cudaFree it replaces did,
// so that no queued work of the call still uses a block another call gets.
struct Arena {
    struct Block {
        void* p;
        size_t cap;
    };
    int device = -1;
    std::vector<Block> blocks;
    ~Arena() {
        if (blocks.empty()) return;
        const bool ok = cudaDeviceSynchronize() == cudaSuccess;
        IdleBlocks* ib = device >= 0 && device < MAX_DEVICES ? &memory_cache().dev[device] : nullptr;
        if (!ok || !ib) {
            // A failed synchronization (a lost context) keeps nothing.
            for (const Block& b : blocks) cudaFree(b.p);
            if (!ok && ib) memory_cache().release(device);
            return;
        }
        Hold l(ib->m);
        if (ib->limit < 0) {
            DeviceProps p;
            ib->limit = device_props(device, &p) == cudaSuccess ? p.total_mem / KEEP_SHARE_DIV : 0;
        }
        for (const Block& b : blocks) {
            if (ib->bytes + (int64_t)b.cap <= ib->limit) {
                const std::pair<size_t, void*> e(b.cap, b.p);
                ib->blocks.insert(std::upper_bound(ib->blocks.begin(), ib->blocks.end(), e,
                                                   [](const std::pair<size_t, void*>& x,
                                                      const std::pair<size_t, void*>& y) { return x.first < y.first; }),
                                  e);
                ib->bytes += (int64_t)b.cap;
            } else {
                cudaFree(b.p);
            }
        }
    }
    cudaError_t alloc(void** p, size_t bytes) {
        bytes = bytes ? bytes : 1;
        if (device < 0) {
            cudaError_t e = cudaGetDevice(&device);
            if (e != cudaSuccess) return e;
        }
        if (device < MAX_DEVICES) {
            IdleBlocks& ib = memory_cache().dev[device];
            Hold l(ib.m);
            auto it = std::lower_bound(ib.blocks.begin(), ib.blocks.end(), bytes,
                                       [](const std::pair<size_t, void*>& x, size_t n) { return x.first < n; });
            if (it != ib.blocks.end() && fits(it->first, bytes)) {
                *p = it->second;
#if defined(GG_EMU)
                memset(*p, emu::POISON, it->first);  // what the last call left is garbage to this one
#endif
                blocks.push_back({it->second, it->first});
                ib.bytes -= (int64_t)it->first;
                ib.blocks.erase(it);
                return cudaSuccess;
            }
        }
        cudaError_t e = cudaMalloc(p, bytes);
        if (e == cudaErrorMemoryAllocation && memory_cache().release(device) > 0) {
            cudaGetLastError();  // clear the failed allocation before retrying
            e = cudaMalloc(p, bytes);
        }
        if (e == cudaSuccess) blocks.push_back({*p, bytes});
        return e;
    }
};

// free_memory is the device memory a call may plan with: what the runtime
// reports free plus this device's idle blocks (an allocation they cannot
// serve frees them).
cudaError_t free_memory(int dev, size_t* free_b) {
    size_t total_b = 0;
    cudaError_t e = cudaMemGetInfo(free_b, &total_b);
    if (e == cudaSuccess) *free_b += (size_t)memory_cache().idle(dev);
    return e;
}

}  // namespace
