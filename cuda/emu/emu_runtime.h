// emu_runtime.h: the CUDA runtime calls of src/ggcuda.cu, mocked in host memory
// for the emulation build of the library (emu_lib.cc): one "device" whose
// memory is the host's. $GGCUDA_EMU_FREE sets the free memory it reports
// (bytes, default 1 GiB) so that the out-of-memory paths can be exercised.
//
// Streams and events are honoured, so that the library's ordering between
// streams is tested, not assumed: each stream is a host worker thread running
// its operations (copies, memsets, kernels, event records and waits) in issue
// order, and streams run concurrently with each other and with the host.
// Missing dependencies then show as wrong results rather than passing by luck:
//
// * streams are lazy (below): an operation runs only when something that
//   waits for it needs it, so a missing dependency between streams shows every
//   time, not by chance;
// * an asynchronous copy poisons its destination (0xFF bytes: NaN for floats,
//   -1 for integers) when it is issued, and writes the data only when its stream
//   runs it (after $GGCUDA_EMU_COPY_DELAY_US µs, default 0), so a kernel that
//   does not wait for its upload reads poison, and a host that reads a download
//   before synchronizing reads NaN;
// * device allocations start poisoned and have poisoned guard bands on both
//   sides, so a kernel that indexes with a poisoned (-1) integer reads NaN
//   rather than the neighbouring allocation or unmapped memory;
// * one kernel runs at a time (emu.h's blockDim and gridDim are the
//   launch's), as if the device had one queue for kernels; copies overlap with
//   it; its blocks run concurrently (emu.h);
// * the device has an sm_80's shared memory (cudaDeviceGetAttribute), and a
//   launch asking for more than 48 KiB of dynamic shared memory without the
//   kernel's cudaFuncSetAttribute opt-in (or more than the device has) does
//   not run and leaves cudaErrorInvalidValue for cudaGetLastError; the
//   dynamic shared memory itself is emu.h's (poisoned, guarded).
// cudaFree waits for all streams (as the real one synchronizes the device).
//
// Leak checks and fault injection (tests, through the emulation-only
// ggc_emu_* functions below): the runtime counts live streams, events, device
// allocations (and their bytes, which cudaMemGetInfo subtracts from the free
// memory it reports, as a device would) and pinned host allocations, and
// ggc_emu_fail_after(n) makes the n-th next runtime call that can fail (an
// allocation, an event or stream creation, a record, a wait, a copy, a memset,
// a synchronization) return an error, once.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "emu.h"

namespace emu {
// Live objects of the runtime (leak checks).
struct live_counts {
    std::atomic<int64_t> streams{0}, events{0}, dev_allocs{0}, dev_bytes{0}, pinned{0}, pinned_calls{0}, dev_alloc_calls{0};
};
inline live_counts& live() {
    static live_counts c;
    return c;
}
// fail_countdown > 0: calls of inject() left until one fails.
inline std::atomic<int64_t>& fail_countdown() {
    static std::atomic<int64_t> n{0};
    return n;
}
// inject is true for the call that the countdown selects.
inline bool inject() {
    int64_t n = fail_countdown().load();
    while (n > 0)
        if (fail_countdown().compare_exchange_weak(n, n - 1)) return n == 1;
    return false;
}
// A watchdog's kill (ggc_emu_launch_timeout): timeout_countdown > 0 kernel
// launches are left until one is stopped; lost then holds
// cudaErrorLaunchTimeout (702) and, as on a real device whose context is
// lost, no later kernel runs and every synchronization returns it.
inline std::atomic<int64_t>& timeout_countdown() {
    static std::atomic<int64_t> n{0};
    return n;
}
inline std::atomic<int>& lost() {
    static std::atomic<int> e{0};
    return e;
}
// killed is true when a kernel about to run must not: the countdown selects
// it (the context is then lost) or the context is lost already.
inline bool killed() {
    int64_t n = timeout_countdown().load();
    while (n > 0)
        if (timeout_countdown().compare_exchange_weak(n, n - 1)) {
            if (n == 1) lost() = 702;
            break;
        }
    return lost() != 0;
}
}  // namespace emu

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNotReady = 600,
    cudaErrorLaunchTimeout = 702,
    cudaErrorNotSupported = 801,
    cudaErrorSystemDriverMismatch = 803,
    cudaErrorCompatNotSupportedOnDevice = 804
};
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
constexpr unsigned cudaStreamNonBlocking = 1;

namespace emu {

using clock = std::chrono::steady_clock;

// stream: a worker thread running queued operations in order. Streams are
// lazy: an operation runs only once something needs it (a stream or event
// synchronization, or a wait on an event recorded after it by another stream's
// operation that itself runs), the latest a CUDA device may run it. Work on
// one stream that should wait for another but does not then reliably runs
// first, rather than by chance. $GGCUDA_EMU_EAGER runs every operation as soon
// as its stream reaches it.
struct stream {
    std::mutex m;
    std::condition_variable cv, idle;
    std::deque<std::function<void()>> q;
    uint64_t issued = 0, demanded = 0, executed = 0;
    bool stop = false, busy = false;
    std::thread worker;
    stream() {
        if (getenv("GGCUDA_EMU_EAGER")) demanded = UINT64_MAX;
        worker = std::thread([this] {
            std::unique_lock<std::mutex> l(m);
            for (;;) {
                cv.wait(l, [this] { return stop || (!q.empty() && executed < demanded); });
                if (q.empty()) return;  // stop, drained
                if (executed >= demanded) demanded = issued;  // stop: run the rest
                std::function<void()> op = std::move(q.front());
                q.pop_front();
                busy = true;
                l.unlock();
                op();
                l.lock();
                busy = false;
                executed++;
                if (q.empty()) idle.notify_all();
                idle.notify_all();
            }
        });
    }
    // push queues op and returns the number of operations issued so far.
    uint64_t push(std::function<void()> op) {
        std::lock_guard<std::mutex> l(m);
        q.push_back(std::move(op));
        cv.notify_one();
        return ++issued;
    }
    // demand lets the first n operations run.
    void demand(uint64_t n) {
        std::lock_guard<std::mutex> l(m);
        if (n > demanded) demanded = n;
        cv.notify_one();
    }
    void sync() {
        std::unique_lock<std::mutex> l(m);
        if (issued > demanded) demanded = issued;
        cv.notify_one();
        idle.wait(l, [this] { return q.empty() && !busy; });
    }
    ~stream() {
        {
            std::lock_guard<std::mutex> l(m);
            stop = true;
            cv.notify_one();
        }
        worker.join();
    }
};

// event: recorded is the number of records issued, done the highest record
// completed; a wait issued after record number k waits until done >= k, and
// first demands the recording stream's operations up to that record.
struct event {
    std::mutex m;
    std::condition_variable cv;
    uint64_t recorded = 0, done = 0;
    stream* by = nullptr;  // the stream of the latest record, and its position
    uint64_t at = 0;
    clock::time_point t;
};

inline std::mutex& streams_mu() {
    static std::mutex m;
    return m;
}
inline std::set<stream*>& streams() {
    static std::set<stream*> s;
    return s;
}
inline std::mutex& kernel_mu() {
    static std::mutex m;
    return m;
}

// sync_all waits until every stream is idle.
inline void sync_all() {
    std::lock_guard<std::mutex> l(streams_mu());
    for (stream* s : streams()) s->sync();
}

inline long copy_delay_us() {
    const char* e = getenv("GGCUDA_EMU_COPY_DELAY_US");
    return e ? atol(e) : 0;
}

constexpr size_t GUARD = size_t(256) << 10;
constexpr unsigned char POISON = 0xFF;

// submit runs op on stream s, or at once on the legacy default stream (null).
inline void submit(stream* s, std::function<void()> op) {
    if (s)
        s->push(std::move(op));
    else {
        sync_all();
        op();
    }
}

// launch_async queues a kernel (fn captures its arguments by value).
inline void launch_async(stream* s, unsigned grid, unsigned block, std::function<void()> fn,
                         const char* name = "kernel") {
    submit(s, [grid, block, fn, name] {
        if (killed()) return;
        std::lock_guard<std::mutex> l(kernel_mu());
        launch(grid, block, fn, 0, name);
    });
}

// Shared memory of the emulated device: an sm_80's (164 KiB an SM, at most
// 163 KiB a block by opting in, 1 KiB reserved by the system a block; 48 KiB
// a block without opting in).
constexpr int SMEM_PER_SM = 167936, SMEM_OPTIN = 166912, SMEM_RESERVED = 1024, SMEM_DEFAULT = 48 * 1024;

// The dynamic shared memory each kernel opted in to
// (cudaFuncAttributeMaxDynamicSharedMemorySize), by kernel address.
inline std::mutex& attr_mu() {
    static std::mutex m;
    return m;
}
inline std::map<const void*, int>& max_dyn() {
    static std::map<const void*, int> m;
    return m;
}
// The error of the latest failed launch, returned and cleared by
// cudaGetLastError.
inline int& last_error() {
    static int e = 0;
    return e;
}

// launch_async_dyn queues a kernel with smem bytes of dynamic shared memory
// after the checks a launch makes: more than 48 KiB needs the kernel's
// opt-in, and never more than the device allows a block. A refused launch
// does not run and leaves cudaErrorInvalidValue for cudaGetLastError.
inline void launch_async_dyn(stream* s, const void* kernel, unsigned grid, unsigned block, size_t smem,
                             std::function<void()> fn, const char* name = "kernel") {
    int allowed = SMEM_DEFAULT;
    {
        std::lock_guard<std::mutex> l(attr_mu());
        auto it = max_dyn().find(kernel);
        if (it != max_dyn().end()) allowed = it->second;
    }
    if (smem > (size_t)allowed || smem > (size_t)SMEM_OPTIN) {
        last_error() = 1;  // cudaErrorInvalidValue
        return;
    }
    submit(s, [grid, block, smem, fn, name] {
        if (killed()) return;
        std::lock_guard<std::mutex> l(kernel_mu());
        launch(grid, block, fn, smem, name);
    });
}

}  // namespace emu

typedef emu::stream* cudaStream_t;
typedef emu::event* cudaEvent_t;

struct cudaDeviceProp {
    char name[256];
    int major, minor;
    size_t totalGlobalMem;
    int multiProcessorCount;
};

inline const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    default: return "emulated error";
    }
}
inline const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorLaunchTimeout: return "cudaErrorLaunchTimeout";
    default: return "cudaErrorUnknown";
    }
}
inline cudaError_t cudaGetDeviceCount(int* n) {
    *n = 1;
    return cudaSuccess;
}
inline int& emu_current_device() {
    static int d = 0;
    return d;
}
inline cudaError_t cudaSetDevice(int d) {
    if (d != 0) return cudaErrorInvalidDevice;
    emu_current_device() = d;
    return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) {
    *d = emu_current_device();
    return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
    if (d != 0) return cudaErrorInvalidDevice;
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof p->name, "graphgram host emulation");
    p->major = 0, p->minor = 0;
    p->totalGlobalMem = size_t(1) << 30;
    p->multiProcessorCount = 2;
    return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_b, size_t* total_b) {
    const char* e = getenv("GGCUDA_EMU_FREE");
    const int64_t f = e ? (int64_t)strtoull(e, nullptr, 10) : int64_t(1) << 30;
    // What is allocated is not free.
    *free_b = (size_t)std::max<int64_t>(0, f - emu::live().dev_bytes.load());
    *total_b = size_t(1) << 30;
    return cudaSuccess;
}
template <typename K>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, K, int, size_t smem) {
    *n = smem > (size_t)emu::SMEM_OPTIN ? 0 : 1;
    return cudaSuccess;
}
enum cudaDeviceAttr {
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrReservedSharedMemoryPerBlock = 111
};
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int d) {
    if (d != 0) return cudaErrorInvalidDevice;
    switch (a) {
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = emu::SMEM_PER_SM; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = emu::SMEM_OPTIN; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *v = emu::SMEM_RESERVED; break;
    default: return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}
// The emulation does not know a kernel's static shared memory: 0 (the
// library takes the larger of this and its own sizeof).
struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    int maxDynamicSharedSizeBytes;
};
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void* k) {
    a->sharedSizeBytes = 0;
    std::lock_guard<std::mutex> l(emu::attr_mu());
    auto it = emu::max_dyn().find(k);
    a->maxDynamicSharedSizeBytes = it == emu::max_dyn().end() ? emu::SMEM_DEFAULT : it->second;
    return cudaSuccess;
}
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <typename K>
cudaError_t cudaFuncSetAttribute(K* k, cudaFuncAttribute a, int v) {
    if (a != cudaFuncAttributeMaxDynamicSharedMemorySize || v < 0 || v > emu::SMEM_OPTIN) return cudaErrorInvalidValue;
    std::lock_guard<std::mutex> l(emu::attr_mu());
    emu::max_dyn()[reinterpret_cast<const void*>(k)] = v;
    return cudaSuccess;
}
// Device memory: [size][guard][bytes][guard], all poisoned.
inline cudaError_t cudaMalloc(void** p, size_t bytes) {
    const size_t hdr = 64;
    unsigned char* b = emu::inject() ? nullptr : (unsigned char*)malloc(hdr + 2 * emu::GUARD + bytes);
    if (!b) {
        *p = nullptr;
        return cudaErrorMemoryAllocation;
    }
    emu::live().dev_allocs++;
    emu::live().dev_alloc_calls++;
    emu::live().dev_bytes += (int64_t)bytes;
    memcpy(b, &bytes, sizeof bytes);
    memset(b + hdr, emu::POISON, 2 * emu::GUARD + bytes);
    *p = b + hdr + emu::GUARD;
    return cudaSuccess;
}
inline cudaError_t cudaFree(void* p) {
    if (!p) return cudaSuccess;
    emu::sync_all();
    unsigned char* b = (unsigned char*)p - emu::GUARD - 64;
    size_t bytes;
    memcpy(&bytes, b, sizeof bytes);
    emu::live().dev_allocs--;
    emu::live().dev_bytes -= (int64_t)bytes;
    free(b);
    return cudaSuccess;
}
// Pinned host memory is ordinary host memory here.
inline cudaError_t cudaMallocHost(void** p, size_t bytes) {
    emu::live().pinned_calls++;
    *p = emu::inject() ? nullptr : malloc(bytes ? bytes : 1);
    if (!*p) return cudaErrorMemoryAllocation;
    emu::live().pinned++;
    return cudaSuccess;
}
inline cudaError_t cudaFreeHost(void* p) {
    if (!p) return cudaSuccess;
    emu::sync_all();
    emu::live().pinned--;
    free(p);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t st) {
    if (emu::inject()) return cudaErrorInvalidValue;
    if (!st) {
        emu::sync_all();
        memcpy(d, s, n);
        return cudaSuccess;
    }
    // Poisoned from issue to completion: readers that do not wait see it.
    memset(d, emu::POISON, n);
    const long us = emu::copy_delay_us();
    st->push([d, s, n, us] {
        if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
        memcpy(d, s, n);
    });
    return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t st) {
    if (emu::inject()) return cudaErrorInvalidValue;
    emu::submit(st, [d, v, n] { memset(d, v, n); });
    return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
    if (emu::inject()) return cudaErrorMemoryAllocation;
    emu::live().streams++;
    *s = new emu::stream();
    std::lock_guard<std::mutex> l(emu::streams_mu());
    emu::streams().insert(*s);
    return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (!s) return cudaSuccess;
    {
        std::lock_guard<std::mutex> l(emu::streams_mu());
        emu::streams().erase(s);
    }
    delete s;  // drains the queue first
    emu::live().streams--;
    return cudaSuccess;
}
// An injected failure still synchronizes (as a real one reporting an earlier
// asynchronous error does).
inline cudaError_t cudaDeviceSynchronize() {
    emu::sync_all();
    if (emu::lost()) return (cudaError_t)emu::lost().load();
    return emu::inject() ? cudaErrorInvalidValue : cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    if (s)
        s->sync();
    else
        emu::sync_all();
    if (emu::lost()) return (cudaError_t)emu::lost().load();
    return emu::inject() ? cudaErrorInvalidValue : cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
    if (emu::inject()) return cudaErrorMemoryAllocation;
    emu::live().events++;
    *e = new emu::event();
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    if (emu::inject()) return cudaErrorInvalidValue;
    uint64_t k;
    {
        std::lock_guard<std::mutex> l(e->m);
        k = ++e->recorded;
    }
    auto op = [e, k] {
        std::lock_guard<std::mutex> l(e->m);
        e->t = emu::clock::now();
        e->done = std::max(e->done, k);
        e->cv.notify_all();
    };
    if (!s) {
        emu::submit(s, op);
        return cudaSuccess;
    }
    // The record's position is set before the operation can run (under e->m).
    std::lock_guard<std::mutex> l(e->m);
    e->by = s;
    e->at = s->push(op);
    return cudaSuccess;
}
// wait_record demands the stream of record k of e up to it and waits for it.
inline void emu_wait_record(cudaEvent_t e, uint64_t k, emu::stream* by, uint64_t at) {
    if (by) by->demand(at);
    std::unique_lock<std::mutex> l(e->m);
    e->cv.wait(l, [e, k] { return e->done >= k; });
}
// cudaStreamWaitEvent: s's later work waits for e's latest record (none: no wait).
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned = 0) {
    if (emu::inject()) return cudaErrorInvalidValue;
    uint64_t k, at;
    emu::stream* by;
    {
        std::lock_guard<std::mutex> l(e->m);
        k = e->recorded, by = e->by, at = e->at;
    }
    if (k == 0) return cudaSuccess;
    emu::submit(s, [e, k, by, at] { emu_wait_record(e, k, by, at); });
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    uint64_t k, at;
    emu::stream* by;
    {
        std::lock_guard<std::mutex> l(e->m);
        k = e->recorded, by = e->by, at = e->at;
    }
    if (k == 0) return cudaSuccess;
    emu_wait_record(e, k, by, at);
    return emu::lost() ? (cudaError_t)emu::lost().load() : cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
    std::lock_guard<std::mutex> la(a->m);
    if (a->done == 0 || a->done < a->recorded) return cudaErrorNotReady;
    const emu::clock::time_point ta = a->t;
    if (a != b) {
        std::lock_guard<std::mutex> lb(b->m);
        if (b->done == 0 || b->done < b->recorded) return cudaErrorNotReady;
        *ms = std::chrono::duration<float, std::milli>(b->t - ta).count();
    } else {
        *ms = 0;
    }
    return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
    // Records still queued hold e: let them finish first.
    cudaEventSynchronize(e);
    delete e;
    emu::live().events--;
    return cudaSuccess;
}
inline cudaError_t cudaGetLastError() {
    if (emu::lost()) return (cudaError_t)emu::lost().load();  // sticky
    const int e = emu::last_error();
    emu::last_error() = 0;
    return (cudaError_t)e;
}

// Emulation only (tests): live runtime objects, and the fault injection
// (above). counts[]: streams, events, device allocations, device bytes,
// pinned host allocations, cudaMallocHost calls so far, cudaMalloc calls so far.
extern "C" __attribute__((visibility("default"))) void ggc_emu_counts(int64_t* counts) {
    const emu::live_counts& c = emu::live();
    counts[0] = c.streams, counts[1] = c.events, counts[2] = c.dev_allocs, counts[3] = c.dev_bytes;
    counts[4] = c.pinned, counts[5] = c.pinned_calls, counts[6] = c.dev_alloc_calls;
}
// ggc_emu_fail_after(n): the n-th next fallible runtime call fails (n <= 0:
// none); returns the countdown left from the previous setting (0 when its
// failure happened or none was set).
extern "C" __attribute__((visibility("default"))) int64_t ggc_emu_fail_after(int64_t n) {
    return emu::fail_countdown().exchange(n > 0 ? n : 0);
}
// ggc_emu_launch_timeout(n): the n-th next kernel launch is stopped as by a
// display driver's watchdog: it does not run, and the emulated context is
// lost (cudaErrorLaunchTimeout from every synchronization, no kernel runs)
// until ggc_emu_launch_timeout(0) restores it. Returns whether the context
// was lost before the call.
extern "C" __attribute__((visibility("default"))) int64_t ggc_emu_launch_timeout(int64_t n) {
    emu::timeout_countdown() = n > 0 ? n : 0;
    return n > 0 ? emu::lost().load() != 0 : emu::lost().exchange(0) != 0;
}
