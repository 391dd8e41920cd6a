// ggcuda.cu: the C API of libggcuda.so (include/ggcuda.h): device queries, the
// marginalized-kernel Gram matrix, the shortest-path kernel and the Gram matrix
// of explicit feature maps on one device.
#if defined(GG_EMU)
// The host emulation build (emu/emu_lib.cc): kernels on host threads,
// the runtime calls below mocked in host memory.
#include "../emu/emu_runtime.h"
#else
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "explicit.cuh"
#include "ggcuda.h"
#include "mgk.cuh"
#include "plan.cuh"
#include "resources.cuh"
#include "sp.cuh"

using namespace gg;

// GG_LAUNCH(kernel, grid, block, stream, args...) launches a kernel, or queues
// it on the stream's host worker in the emulation build (emu_runtime.h), which
// runs it later: the arguments are captured by value, as a launch does.
// kernel is a variable holding the kernel (template arguments would split the
// macro's arguments).
#if defined(GG_EMU)
#define GG_LAUNCH(k, grid, block, stream, ...) \
    emu::launch_async((stream), (unsigned)(grid), (unsigned)(block), [=] { k(__VA_ARGS__); }, #k)
#else
#define GG_LAUNCH(k, grid, block, stream, ...) k<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif
// GG_LAUNCH_DYN is GG_LAUNCH with smem bytes of dynamic shared memory; the
// emulation checks them against the kernel's limit (emu_runtime.h) as a
// launch would.
#if defined(GG_EMU)
#define GG_LAUNCH_DYN(k, grid, block, smem, stream, ...)                                                   \
    emu::launch_async_dyn((stream), reinterpret_cast<const void*>(k), (unsigned)(grid), (unsigned)(block), \
                          (size_t)(smem), [=] { k(__VA_ARGS__); }, #k)
#else
#define GG_LAUNCH_DYN(k, grid, block, smem, stream, ...) \
    k<<<(grid), (block), (size_t)(smem), (stream)>>>(__VA_ARGS__)
#endif

namespace {

// say writes one line to err.
void say(char* err, size_t errlen, const char* fmt, const char* a = "", const char* b = "", const char* c = "") {
    if (err && errlen) snprintf(err, errlen, fmt, a, b, c);
}

int cuda_fail(cudaError_t e, const char* what, char* err, size_t errlen) {
    say(err, errlen, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    if (e == cudaErrorMemoryAllocation) return GGC_ERR_OOM;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice ||
        e == cudaErrorNotSupported || e == cudaErrorSystemDriverMismatch || e == cudaErrorCompatNotSupportedOnDevice)
        return GGC_ERR_NO_DEVICE;
    return GGC_ERR_CUDA;
}

#define CK(call)                                                      \
    do {                                                              \
        cudaError_t e_ = (call);                                      \
        if (e_ != cudaSuccess) return cuda_fail(e_, #call, err, errlen); \
    } while (0)

// The RAII guards of every entry point, so that each return path releases
// what the call created: Streams (destroyed), EventPool (events destroyed),
// Arena (device memory freed; cudaFree synchronizes the device, so queued
// work that uses it finishes first) and HostStaging (pinned host memory, below).
// Declared in this order, they are released in the reverse one: memory first,
// then events, then streams.

struct Streams {
    cudaStream_t s[3] = {nullptr, nullptr, nullptr};
    ~Streams() {
        for (cudaStream_t x : s)
            if (x) cudaStreamDestroy(x);
    }
};

// EventPool: events destroyed together.
struct EventPool {
    std::vector<cudaEvent_t> ev;
    ~EventPool() {
        for (cudaEvent_t e : ev) cudaEventDestroy(e);
    }
    cudaError_t make(cudaEvent_t* e) {
        cudaError_t r = cudaEventCreate(e);
        if (r == cudaSuccess) ev.push_back(*e);
        return r;
    }
};

template <typename S>
cudaError_t upload(Arena& ar, const S** dst, const S* src, int64_t n, cudaStream_t st) {
    void* p;
    cudaError_t e = ar.alloc(&p, sizeof(S) * (size_t)std::max<int64_t>(n, 1));
    if (e != cudaSuccess) return e;
    if (n > 0) e = cudaMemcpyAsync(p, src, sizeof(S) * (size_t)n, cudaMemcpyHostToDevice, st);
    *dst = (const S*)p;
    return e;
}

// upload_values converts n doubles to T (on the host, into keep) and uploads them.
template <typename T>
cudaError_t upload_values(Arena& ar, std::vector<std::vector<T>>& keep, const T** dst, const double* src, int64_t n,
                          cudaStream_t st) {
    keep.emplace_back((size_t)std::max<int64_t>(n, 1));
    std::vector<T>& v = keep.back();
    for (int64_t i = 0; i < n; i++) v[i] = T(src[i]);
    return upload(ar, dst, v.data(), n, st);
}

template <typename T>
cudaError_t upload_graphs(Arena& ar, std::vector<std::vector<T>>& keep, const ggc_graphs& h, DevGraphs<T>* d,
                          cudaStream_t st) {
    d->g = h;
    cudaError_t e;
    const int64_t ng = h.num_graphs;
    if ((e = upload(ar, &d->g.desc, h.desc, ng * GGC_DESC_FIELDS, st))) return e;
    if ((e = upload(ar, &d->g.tile_ptr, h.tile_ptr, h.total_tileptr, st))) return e;
    if ((e = upload(ar, &d->g.tile_col, h.tile_col, h.total_tiles, st))) return e;
    if ((e = upload(ar, &d->g.mask, h.mask, h.total_tiles, st))) return e;
    if ((e = upload(ar, &d->g.nz_ptr, h.nz_ptr, h.total_tiles + 1, st))) return e;
    if ((e = upload(ar, &d->g.nz_pos, h.nz_pos, h.total_nz, st))) return e;
    if ((e = upload(ar, &d->g.nz_class, h.nz_class, h.total_nz, st))) return e;
    if ((e = upload(ar, &d->g.loop_nz, h.loop_nz, h.total_nodes, st))) return e;
    d->g.nz_w = nullptr, d->g.class_feat = nullptr, d->g.node_feat = nullptr, d->g.deg = nullptr, d->g.start = nullptr;
    d->g.cw = nullptr, d->cw = nullptr;
    if ((e = upload_values<T>(ar, keep, &d->nz_w, h.nz_w, h.total_nz, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->class_feat, h.class_feat, h.total_classes * h.edge_cols, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->node_feat, h.node_feat, h.total_nodes * h.node_cols, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->deg, h.deg, h.total_nodes, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->start, h.start, h.total_nodes, st))) return e;
    if (h.cw && (e = upload_values<T>(ar, keep, &d->cw, h.cw, h.total_nodes, st))) return e;
    return cudaSuccess;
}

// graph_bytes is the device memory a graph list takes in precision T.
template <typename T>
int64_t graph_bytes(const ggc_graphs& g) {
    return g.num_graphs * GGC_DESC_FIELDS * 8 + g.total_tileptr * 4 + g.total_tiles * (4 + 8 + 4) +
           g.total_nz * (1 + 4) + g.total_nodes * 4 +
           (int64_t)sizeof(T) * (g.total_nz + g.total_classes * g.edge_cols + g.total_nodes * (g.node_cols + 2 + (g.cw ? 1 : 0)));
}

// Work space of one chunk of jobs at most (bytes), and at most this share of
// the free device memory.
constexpr int64_t CHUNK_BYTES = int64_t(1) << 31;
constexpr double FREE_SHARE = 0.8;

// WIDE_BATCH is how many CG iterations of a wide pair are queued between two
// looks at whether it is done (a stream synchronization each).
constexpr int WIDE_BATCH = 16;

// solve_wide solves one prepared Gram job by a grid of blocks: the launches
// of mgk.cuh's mgk_wide_* on stream st, the scalars in *state, the partial
// sums in partial, the result into *result (device memory).
template <typename T, bool Table>
int solve_wide(const DevGraphs<T>& dx, const DevGraphs<T>& dy, const ggc_graphs& hx, const ggc_graphs& hy,
               const MgkJob& jb, const ggc_mk_program* dedge, const MgkParams<T>& prm, T* work, T* partial,
               WideState<T>* state, MgkResult* result, cudaStream_t st, char* err, size_t errlen) {
    const int64_t N = desc(hx, jb.i, GGC_DESC_N) * desc(hy, jb.j, GGC_DESC_N);
    const int g = wide_blocks(desc(hx, jb.i, GGC_DESC_NT), desc(hy, jb.j, GGC_DESC_NT));
    auto rhs = mgk_wide_rhs<T, Table>;
    auto init = mgk_wide_init<T>;
    auto matvec = mgk_wide_matvec<T, Table>;
    auto update = mgk_wide_update<T>;
    auto direction = mgk_wide_direction<T>;
    auto value = mgk_wide_value<T>;
    auto scalar = mgk_wide_scalar<T>;
    GG_LAUNCH(rhs, g, MGK_THREADS, st, dx, dy, jb, dedge, prm, work);
    GG_LAUNCH(init, g, MGK_THREADS, st, jb, N, work, partial);
    GG_LAUNCH(scalar, 1, 32, st, (int)WIDE_INIT, g, (const T*)partial, state, prm, result);
    CK(cudaGetLastError());
    for (int it = 0; it < prm.max_iter; it += WIDE_BATCH) {
        for (int b = 0; b < WIDE_BATCH; b++) {
            GG_LAUNCH(matvec, g, MGK_THREADS, st, dx, dy, jb, dedge, work, (const WideState<T>*)state, partial);
            GG_LAUNCH(scalar, 1, 32, st, (int)WIDE_MATVEC, g, (const T*)partial, state, prm, result);
            GG_LAUNCH(update, g, MGK_THREADS, st, jb, N, work, (const WideState<T>*)state, partial);
            GG_LAUNCH(scalar, 1, 32, st, (int)WIDE_UPDATE, g, (const T*)partial, state, prm, result);
            GG_LAUNCH(direction, g, MGK_THREADS, st, jb, N, work, (const WideState<T>*)state);
        }
        CK(cudaGetLastError());
        int32_t done = 0;
        CK(cudaMemcpyAsync(&done, &state->done, sizeof(done), cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        if (done) break;
    }
    GG_LAUNCH(value, g, MGK_THREADS, st, dx, dy, jb, work, partial);
    GG_LAUNCH(scalar, 1, 32, st, (int)WIDE_VALUE, g, (const T*)partial, state, prm, result);
    CK(cudaGetLastError());
    return GGC_OK;
}

// max_blocks_of is the persistent grid of kernel k without dynamic shared
// memory: what fits the device's multiprocessors, at most max_blocks (> 0).
template <typename K>
int64_t max_blocks_of(K k, const DeviceProps& prop, int max_blocks) {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, MGK_THREADS, 0) != cudaSuccess) per_sm = 1;
    int64_t g = std::max(1, per_sm) * (int64_t)prop.sm_count;
    return max_blocks > 0 ? std::min<int64_t>(g, max_blocks) : g;
}

// run_jobs prepares and solves jobs (largest first) in chunks whose work space
// fits in device memory (the plan: plan.cuh): a chunk's pairs are prepared by mgk_prep, then solved
// by persistent mgk_solve blocks. A single pair too large for the free memory
// is GGC_ERR_OOM; the caller then splits the work. With np > 0 the jobs are
// gradient jobs (mgk_gsolve then mgk_gterms; eight vectors and two class
// tables each) and gout receives np doubles a job. Gram jobs small enough
// are solved one warp a pair (warp_split, mgk_solve_warp) unless no_warp,
// large ones by a grid of blocks each (wide_split, solve_wide; every Gram job
// with wide_all).
// Its work space is its own and freed on return, so that the next path's
// call (table, then evaluated κe) sizes its chunks against the memory
// actually free.
template <typename T, bool Table>
int run_jobs(const DevGraphs<T>& dx, const DevGraphs<T>& dy, const ggc_graphs& hx, const ggc_graphs& hy,
             std::vector<MgkJob>& jobs, const ggc_mk_program* dnode, const ggc_mk_program* dedge, MgkParams<T> prm,
             int max_blocks, int64_t mem_limit, int64_t graph_mem, std::vector<MgkResult>& out, std::vector<int>& bad, cudaStream_t st,
             ggc_stats* stats, char* err, size_t errlen, int np, std::vector<double>& gout, double* dnodal = nullptr,
             int64_t ld = 0, bool sym = false, int32_t stage_limit = 0, bool no_warp = false,
             bool wide_all = false) {
    if (jobs.empty()) return GGC_OK;
    int dev;
    CK(cudaGetDevice(&dev));
    DeviceProps prop;
    CK(device_props(dev, &prop));
    // The solver kernel of these jobs, as a function pointer for the
    // attribute and occupancy calls (one type for both kernels is not
    // possible: their parameters differ).
    auto solve = mgk_solve<T, Table>;
    auto wsolve = mgk_solve_warp<T, Table>;
    auto gsolve = mgk_gsolve<T, Table>;
    const void* solver = np > 0 ? reinterpret_cast<const void*>(gsolve) : reinterpret_cast<const void*>(solve);
    // Staging budget from the device's shared memory (stage_budget): what
    // leaves room for MGK_MIN_BLOCKS blocks an SM with their static shared
    // memory and the system's reserve. The carveout between L1 and shared
    // memory is left to the driver, which sizes it to the launch.
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, solver));
    const int64_t static_smem = std::max<int64_t>((int64_t)fa.sharedSizeBytes, (int64_t)sizeof(MgkShared<T>));
    const int64_t stage_max = stage_budget(prop.smem_sm, prop.smem_optin, prop.smem_reserved, static_smem, stage_limit);
    const size_t nj = jobs.size();
    // Which pairs are staged, and the most dynamic shared memory a launch of
    // this call takes (opted in above 48 KiB).
    int64_t call_dyn = 0;
    const std::vector<int64_t> sbytes = mgk_stage<T>(hx, hy, jobs, stage_max, &call_dyn);
    if (call_dyn > 0)
        CK(np > 0 ? cudaFuncSetAttribute(gsolve, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)call_dyn)
                  : cudaFuncSetAttribute(solve, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)call_dyn));
    const MgkWords words = mgk_words(hx, hy, jobs, np, Table);
    const int64_t total = words.total, largest = words.largest;
    size_t free_b = 0;
    CK(free_memory(dev, &free_b));
    const int64_t fixed = (int64_t)nj * (int64_t)(sizeof(MgkJob) + sizeof(MgkResult) + sizeof(int) + sizeof(double) * np) + 64;
    int64_t avail = (int64_t)(FREE_SHARE * (double)free_b) - fixed;
    // mem_limit (tests) simulates a device of that size: the graphs, already
    // uploaded, count against it.
    if (mem_limit > 0) avail = std::min<int64_t>(avail, mem_limit - graph_mem - fixed);
    const int64_t budget = std::min<int64_t>(CHUNK_BYTES, avail) / (int64_t)sizeof(T);
    if (largest > budget) {
        char a[96];
        snprintf(a, sizeof a, "%.3g GB", double(largest) * sizeof(T) / 1e9);
        say(err, errlen, "device memory exhausted: one pair needs %s of work space", a);
        return GGC_ERR_OOM;
    }
    const int64_t cap = std::min(total, budget);
    Arena ar;
    EventPool evs;
    MgkJob* djobs;
    int *counter, *dbad;
    T* work;
    MgkResult* dres;
    double* dgrad = nullptr;
    if (np > 0) CK(ar.alloc((void**)&dgrad, sizeof(double) * nj * (size_t)np));
    CK(ar.alloc((void**)&djobs, sizeof(MgkJob) * nj));
    CK(ar.alloc((void**)&counter, sizeof(int)));
    CK(ar.alloc((void**)&dbad, sizeof(int) * nj));
    CK(ar.alloc((void**)&work, sizeof(T) * (size_t)cap));
    CK(ar.alloc((void**)&dres, sizeof(MgkResult) * nj));
    CK(cudaMemsetAsync(dbad, 0, sizeof(int) * nj, st));
    cudaEvent_t e0, e1, e2;
    CK(evs.make(&e0));
    CK(evs.make(&e1));
    CK(evs.make(&e2));
    CK(cudaEventRecord(e0, st));
    int64_t grid_used = 0;
    // The warp solver's persistent grid (no dynamic shared memory: it does
    // not stage) and its warps, for warp_split.
    int64_t warp_grid = 0, warp_pairs = 0, wide_pairs = 0;
    const bool warps = np == 0 && !no_warp;
    // The block solver's block slots, against which a chunk's large pairs
    // are counted (wide_split).
    const int64_t block_slots = np == 0 ? max_blocks_of(solve, prop, max_blocks) : 0;
    // A wide pair's partial sums (two a block) and PCG scalars.
    T* wpart = nullptr;
    WideState<T>* wstate = nullptr;
    if (np == 0) {
        CK(ar.alloc((void**)&wpart, sizeof(T) * 2 * WIDE_MAX_BLOCKS));
        CK(ar.alloc((void**)&wstate, sizeof(WideState<T>)));
    }
    if (warps) {
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wsolve, MGK_THREADS, 0));
        warp_grid = std::max(1, per_sm) * (int64_t)prop.sm_count;
        if (max_blocks > 0) warp_grid = std::min<int64_t>(warp_grid, max_blocks);
    }
    for (size_t k0 = 0; k0 < nj;) {
        const size_t k1 = mgk_chunk(jobs, words, hx, hy, np, k0, cap);
        const int n = (int)(k1 - k0);
        // Gram jobs before kw are solved by a grid each (wide_split), from ks
        // on one warp a pair (warp_split), the others one block a pair.
        const size_t kw = np == 0 ? wide_split(jobs, hx, hy, k0, k1, block_slots, wide_all) : k0;
        const size_t ks = warps ? warp_split(jobs, hx, hy, kw, k1, warp_grid * MGK_WARPS) : k1;
        const int nb = (int)(ks - kw), nw = (int)(k1 - ks);
        // The block solver's launch gets the dynamic shared memory of its
        // largest staged pair (none when no pair is staged, so that such
        // chunks run as before), and as many persistent blocks as fit with it.
        const int64_t dyn = mgk_chunk_dyn(jobs, sbytes, kw, ks);
        int per_sm = 0;
        if (np > 0)
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gsolve, MGK_THREADS, (size_t)dyn));
        else
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, solve, MGK_THREADS, (size_t)dyn));
        int64_t max_grid = std::max(1, per_sm) * (int64_t)prop.sm_count;
        if (max_blocks > 0) max_grid = std::min<int64_t>(max_grid, max_blocks);
        CK(cudaMemcpyAsync(djobs + k0, jobs.data() + k0, sizeof(MgkJob) * n, cudaMemcpyHostToDevice, st));
        auto prep = mgk_prep<T, Table>;
        GG_LAUNCH(prep, n, PREP_THREADS, st, dx, dy, djobs + k0, dnode, dedge, prm, work, dbad + k0);
        CK(cudaGetLastError());
        CK(cudaMemsetAsync(counter, 0, sizeof(int), st));
        const int64_t grid = std::min<int64_t>(max_grid, nb);
        grid_used = std::max(grid_used, grid);
        if (np > 0) {
            GG_LAUNCH_DYN(gsolve, grid, MGK_THREADS, dyn, st, dx, dy, djobs + k0, n, counter, dedge, prm, work,
                          dres + k0, dgrad + k0 * np, np);
            CK(cudaGetLastError());
            auto gterms = mgk_gterms<T, Table>;
            GG_LAUNCH(gterms, n, PREP_THREADS, st, dx, dy, djobs + k0, dnode, dedge, work, dgrad + k0 * np, np);
        } else {
            for (size_t k = k0; k < kw; k++) {
                const int rc = solve_wide<T, Table>(dx, dy, hx, hy, jobs[k], dedge, prm, work, wpart, wstate, dres + k, st,
                                                    err, errlen);
                if (rc != GGC_OK) return rc;
                wide_pairs++;
            }
            if (nb > 0) {
                GG_LAUNCH_DYN(solve, grid, MGK_THREADS, dyn, st, dx, dy, djobs + kw, nb, counter, dedge, prm, work,
                              dres + kw);
                CK(cudaGetLastError());
            }
            if (nw > 0) {
                CK(cudaMemsetAsync(counter, 0, sizeof(int), st));
                const int64_t wgrid = std::min<int64_t>(warp_grid, (nw + MGK_WARPS - 1) / MGK_WARPS);
                grid_used = std::max(grid_used, wgrid);
                GG_LAUNCH(wsolve, wgrid, MGK_THREADS, st, dx, dy, djobs + ks, nw, counter, dedge, prm, work,
                          dres + ks);
                warp_pairs += nw;
            }
            if (dnodal) {
                CK(cudaGetLastError());
                auto nodal = mgk_nodal_out<T>;
                GG_LAUNCH(nodal, n, PREP_THREADS, st, dx, dy, djobs + k0, work, dnodal, ld, (int)sym);
            }
        }
        CK(cudaGetLastError());
        k0 = k1;
    }
    CK(cudaEventRecord(e1, st));
    out.resize(nj);
    bad.resize(nj);
    CK(cudaMemcpyAsync(out.data(), dres, sizeof(MgkResult) * nj, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(bad.data(), dbad, sizeof(int) * nj, cudaMemcpyDeviceToHost, st));
    if (np > 0) {
        gout.resize(nj * (size_t)np);
        CK(cudaMemcpyAsync(gout.data(), dgrad, sizeof(double) * nj * (size_t)np, cudaMemcpyDeviceToHost, st));
    }
    CK(cudaEventRecord(e2, st));
    CK(cudaStreamSynchronize(st));
    if (stats) {
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        stats->solve_ms += ms;
        CK(cudaEventElapsedTime(&ms, e1, e2));
        stats->download_ms += ms;
        stats->blocks = (int32_t)std::max<int64_t>(stats->blocks, grid_used);
        stats->threads = MGK_THREADS;
        stats->scratch_bytes = std::max<int64_t>(stats->scratch_bytes, cap * (int64_t)sizeof(T));
        // Counted from what the solver blocks report, not from the plan.
        for (const MgkResult& r : out) stats->staged += r.staged;
        stats->warp_pairs += (int32_t)std::min<int64_t>(warp_pairs, INT32_MAX);
        stats->wide_pairs += (int32_t)std::min<int64_t>(wide_pairs, INT32_MAX);
    }
    return GGC_OK;
}

template <typename T>
int mgk_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node, const ggc_mk_program* edge,
             const ggc_mgk_options* o, double* out, double* grad, int32_t* iters, double* resid, ggc_stats* stats,
             char* err, size_t errlen, double* nodal = nullptr) {
    const bool diag = o->flags & GGC_FLAG_DIAG;
    const bool sym = o->symmetric || Y == nullptr || diag;
    if (sym) Y = X;
    const int nx = X->num_graphs, ny = Y->num_graphs;
    if (nx == 0 || ny == 0) return GGC_OK;
    // Jobs, split by whether the class table fits, largest first.
    std::vector<MgkJob> tjobs, ejobs;
    mgk_jobs(*X, *Y, sym, diag, o->flags & GGC_FLAG_NO_TABLE, tjobs, ejobs);

    CK(cudaSetDevice(o->device));
    Streams ss;
    CK(cudaStreamCreateWithFlags(&ss.s[0], cudaStreamNonBlocking));
    cudaStream_t st = ss.s[0];
    // keep (host copies being uploaded) outlives the arena, whose release
    // waits for the queued copies.
    std::vector<std::vector<T>> keep;
    EventPool evs;
    Arena ar;
    cudaEvent_t u0, u1;
    CK(evs.make(&u0));
    CK(evs.make(&u1));
    CK(cudaEventRecord(u0, st));
    DevGraphs<T> dx, dy;
    CK(upload_graphs<T>(ar, keep, *X, &dx, st));
    if (sym)
        dy = dx;
    else
        CK(upload_graphs<T>(ar, keep, *Y, &dy, st));
    const ggc_mk_program *dnode, *dedge;
    CK(upload(ar, &dnode, node, 1, st));
    CK(upload(ar, &dedge, edge, 1, st));
    CK(cudaEventRecord(u1, st));
    CK(cudaStreamSynchronize(st));
    if (stats) {
        memset(stats, 0, sizeof(*stats));
        float ms;
        CK(cudaEventElapsedTime(&ms, u0, u1));
        stats->upload_ms = ms;
    }

    MgkParams<T> prm;
    prm.q = T(o->q);
    prm.tol = T(o->tol);
    prm.lmin = o->lmin;
    prm.max_iter = o->max_iter;
    prm.adj_tol = T(o->adj_tol);
    const int np = grad ? 1 + node->nparams + edge->nparams : 0;
    std::vector<double> tgrad, egrad;
    std::vector<MgkResult> tres, eres;
    std::vector<int> tbad, ebad;
    int64_t gmem = graph_bytes<T>(*X) + (sym ? 0 : graph_bytes<T>(*Y));
    // Nodal: the whole ΣnX × ΣnY output lives on the device (the caller
    // splits the matrix when it does not fit).
    double* dnodal = nullptr;
    const int64_t ld = Y->total_nodes, nodal_len = X->total_nodes * Y->total_nodes;
    if (nodal) {
        gmem += 8 * nodal_len;
        if (o->mem_limit > 0 && gmem > o->mem_limit) {
            say(err, errlen, "device memory exhausted: the nodal matrix does not fit");
            return GGC_ERR_OOM;
        }
        CK(ar.alloc((void**)&dnodal, sizeof(double) * (size_t)std::max<int64_t>(nodal_len, 1)));
    }
    int rc = run_jobs<T, true>(dx, dy, *X, *Y, tjobs, dnode, dedge, prm, o->blocks, o->mem_limit, gmem, tres, tbad, st, stats, err,
                               errlen, np, tgrad, dnodal, ld, sym, o->stage_limit, o->flags & GGC_FLAG_NO_WARP,
                               o->flags & GGC_FLAG_WIDE_ALL);
    if (rc != GGC_OK) return rc;
    rc = run_jobs<T, false>(dx, dy, *X, *Y, ejobs, dnode, dedge, prm, o->blocks, o->mem_limit, gmem, eres, ebad, st, stats, err,
                            errlen, np, egrad, dnodal, ld, sym, o->stage_limit, o->flags & GGC_FLAG_NO_WARP,
                            o->flags & GGC_FLAG_WIDE_ALL);
    if (rc != GGC_OK) return rc;
    auto scatter = [&](const std::vector<MgkJob>& jobs, const std::vector<MgkResult>& res, const std::vector<int>& bad,
                       const std::vector<double>& g) {
        const int64_t k = mgk_scatter(jobs, res, bad, g, np, sym, diag, ny, out, iters, resid, grad);
        if (k >= 0) mgk_bad_pair_message(err, errlen, jobs[k]);
        return k < 0;
    };
    if (!scatter(tjobs, tres, tbad, tgrad) || !scatter(ejobs, eres, ebad, egrad)) return GGC_ERR_ARG;
    if (nodal && nodal_len > 0) {
        CK(cudaMemcpyAsync(nodal, dnodal, sizeof(double) * (size_t)nodal_len, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
    }
    return GGC_OK;
}

}  // namespace

extern "C" int ggc_abi_version(void) { return GGC_ABI_VERSION; }

extern "C" int ggc_device_count(int* count, char* err, size_t errlen) {
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        *count = 0;
        int rc = cuda_fail(e, "cudaGetDeviceCount", err, errlen);
        return rc == GGC_ERR_CUDA ? GGC_ERR_NO_DEVICE : rc;
    }
    if (*count == 0) {
        say(err, errlen, "no CUDA device found");
        return GGC_ERR_NO_DEVICE;
    }
    return GGC_OK;
}

extern "C" int ggc_device_info(int dev, char* name, size_t namelen, int* cc_major, int* cc_minor, int64_t* total_mem,
                               int* sm_count, char* err, size_t errlen) {
    DeviceProps p;
    CK(device_props(dev, &p));
    if (name && namelen) snprintf(name, namelen, "%s", p.name);
    *cc_major = p.major;
    *cc_minor = p.minor;
    *total_mem = p.total_mem;
    *sm_count = p.sm_count;
    return GGC_OK;
}

extern "C" int ggc_mgk_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                            const ggc_mk_program* edge, const ggc_mgk_options* opt, double* out, int32_t* iters,
                            double* resid, ggc_stats* stats, char* err, size_t errlen) {
    if (!X || !node || !edge || !opt || !out) {
        say(err, errlen, "ggc_mgk_gram: a required argument is NULL");
        return GGC_ERR_ARG;
    }
    if (node->n < 1 || node->n > GGC_MK_MAX_INSTR || edge->n < 1 || edge->n > GGC_MK_MAX_INSTR) {
        say(err, errlen, "ggc_mgk_gram: base-kernel program out of range");
        return GGC_ERR_UNSUPPORTED;
    }
    if (opt->precision == 32)
        return mgk_gram<float>(X, Y, node, edge, opt, out, nullptr, iters, resid, stats, err, errlen);
    if (opt->precision != 64) {
        say(err, errlen, "ggc_mgk_gram: precision must be 32 or 64");
        return GGC_ERR_ARG;
    }
    return mgk_gram<double>(X, Y, node, edge, opt, out, nullptr, iters, resid, stats, err, errlen);
}

extern "C" int ggc_mgk_gram_grad(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                                 const ggc_mk_program* edge, const ggc_mgk_options* opt, double* out, double* grad,
                                 int32_t* iters, double* resid, ggc_stats* stats, char* err, size_t errlen) {
    if (!X || !node || !edge || !opt || !out || !grad) {
        say(err, errlen, "ggc_mgk_gram_grad: a required argument is NULL");
        return GGC_ERR_ARG;
    }
    if (node->n < 1 || node->n > GGC_MK_MAX_INSTR || edge->n < 1 || edge->n > GGC_MK_MAX_INSTR ||
        node->nparams < 0 || node->nparams > GGC_MK_MAX_INSTR || edge->nparams < 0 || edge->nparams > GGC_MK_MAX_INSTR) {
        say(err, errlen, "ggc_mgk_gram_grad: base-kernel program out of range");
        return GGC_ERR_UNSUPPORTED;
    }
    if (opt->flags & GGC_FLAG_DIAG) {
        say(err, errlen, "ggc_mgk_gram_grad: no gradient of the diagonal alone");
        return GGC_ERR_ARG;
    }
    if (opt->precision == 32)
        return mgk_gram<float>(X, Y, node, edge, opt, out, grad, iters, resid, stats, err, errlen);
    if (opt->precision != 64) {
        say(err, errlen, "ggc_mgk_gram_grad: precision must be 32 or 64");
        return GGC_ERR_ARG;
    }
    return mgk_gram<double>(X, Y, node, edge, opt, out, grad, iters, resid, stats, err, errlen);
}

extern "C" int ggc_mgk_nodal(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                             const ggc_mk_program* edge, const ggc_mgk_options* opt, double* out, double* nodal,
                             int32_t* iters, double* resid, ggc_stats* stats, char* err, size_t errlen) {
    if (!X || !node || !edge || !opt || !out || !nodal) {
        say(err, errlen, "ggc_mgk_nodal: a required argument is NULL");
        return GGC_ERR_ARG;
    }
    if (node->n < 1 || node->n > GGC_MK_MAX_INSTR || edge->n < 1 || edge->n > GGC_MK_MAX_INSTR) {
        say(err, errlen, "ggc_mgk_nodal: base-kernel program out of range");
        return GGC_ERR_UNSUPPORTED;
    }
    if (opt->flags & GGC_FLAG_DIAG) {
        say(err, errlen, "ggc_mgk_nodal: GGC_FLAG_DIAG is not for nodal matrices");
        return GGC_ERR_ARG;
    }
    if (opt->precision == 32)
        return mgk_gram<float>(X, Y, node, edge, opt, out, nullptr, iters, resid, stats, err, errlen, nodal);
    if (opt->precision != 64) {
        say(err, errlen, "ggc_mgk_nodal: precision must be 32 or 64");
        return GGC_ERR_ARG;
    }
    return mgk_gram<double>(X, Y, node, edge, opt, out, nullptr, iters, resid, stats, err, errlen, nodal);
}


// ---- The shortest-path kernel (FCSP): a pipeline over three streams. ----

namespace {

// sp_bytes is the device memory of an SP-graph list (features stay double).
int64_t sp_bytes(const ggc_sp_graphs& g) {
    return 16 * ((int64_t)g.num_graphs + 1) + 12 * g.total_sp + 8 * g.total_nodes * g.node_cols;
}

// Length tables larger than this (entries) are not built: such calls use the CPU.
constexpr int64_t SP_LENGTH_TABLE_MAX = int64_t(1) << 24;
// The pairs are cut into at least this many chunks when each still holds at
// least SP_CHUNK_MIN_BYTES of node-kernel matrices: more chunks let uploads
// overlap with computation, but a chunk must keep the device's blocks busy.
constexpr int64_t SP_MIN_CHUNKS = 4;
constexpr int64_t SP_CHUNK_MIN_BYTES = int64_t(64) << 20;

// Pinned staging buffers, one a device, kept between calls: pinning memory
// (cudaMallocHost) costs far more than the copies of a small call. A buffer
// grows when a call needs more and is freed at library unload (or by
// ggc_emu_release_host_buffers in the emulation's tests). Its mutex is held
// by the call using it; calls come from several threads at once, and one that
// finds its device's buffer in use stages in ordinary memory instead.
struct PinnedBuf {
    std::mutex m;
    void* p = nullptr;
    size_t cap = 0;
};
struct PinnedCache {
    PinnedBuf dev[MAX_DEVICES];
    ~PinnedCache() { release(); }
    // release frees the buffers not in use (one in use at exit is left to
    // the process's end rather than waited for).
    void release() {
        for (int d = 0; d < MAX_DEVICES; d++) release(d);
    }
    // release(d) frees device d's buffer unless in use, returning its bytes.
    int64_t release(int d) {
        if (d < 0 || d >= MAX_DEVICES) return 0;
        PinnedBuf& b = dev[d];
        if (!b.m.try_lock()) return 0;
        const int64_t n = b.p ? (int64_t)b.cap : 0;
        if (b.p) cudaFreeHost(b.p);
        b.p = nullptr, b.cap = 0;
        b.m.unlock();
        return n;
    }
    // held returns the bytes of device d's buffer (0 while in use).
    int64_t held(int d) {
        if (d < 0 || d >= MAX_DEVICES || !dev[d].m.try_lock()) return 0;
        const int64_t n = dev[d].p ? (int64_t)dev[d].cap : 0;
        dev[d].m.unlock();
        return n;
    }
};
// First used after the call's streams are created, so destroyed before the
// runtime's own statics in the emulation.
PinnedCache& pinned_cache() {
    static PinnedCache c;
    return c;
}

// HostStaging: a call's host staging memory: its device's pinned buffer when
// free (held until the guard's release), else ordinary memory (the copies are
// then correct but not overlapped), also where pinning fails.
struct HostStaging {
    void* p = nullptr;
    PinnedBuf* held = nullptr;
    ~HostStaging() {
        if (held)
            held->m.unlock();
        else
            free(p);
    }
    bool alloc(int device, size_t bytes) {
        bytes = bytes ? bytes : 1;
        if (device >= 0 && device < MAX_DEVICES && pinned_cache().dev[device].m.try_lock()) {
            PinnedBuf& b = pinned_cache().dev[device];
            if (b.cap < bytes) {
                if (b.p) cudaFreeHost(b.p);
                b.p = nullptr, b.cap = 0;
                if (cudaMallocHost(&b.p, bytes) == cudaSuccess) {
                    b.cap = bytes;
                } else {
                    b.p = nullptr;
                    cudaGetLastError();  // clear the failed pinning
                }
            }
            if (b.p) {
                held = &b;
                p = b.p;
                return true;
            }
            b.m.unlock();
        }
        p = malloc(bytes);
        return p != nullptr;
    }
};

// SpList is one SP-graph list on its way to the device: the device arrays
// (whole lists, at the host offsets) in d, the pinned staging copies in h, and
// which graphs have been uploaded.
struct SpList {
    const ggc_sp_graphs* src;
    ggc_sp_graphs d, h;
    std::vector<char> resident;
};

// Staging lays out pinned host memory: put reserves n elements of S.
struct Staging {
    size_t off = 0;
    char* base = nullptr;
    template <typename S>
    S* put(int64_t n) {
        off = (off + 15) & ~size_t(15);
        S* r = (S*)(base + off);
        off += sizeof(S) * (size_t)std::max<int64_t>(n, 1);
        return r;
    }
};

template <typename S>
cudaError_t h2d(S* d, const S* h, int64_t n, cudaStream_t st) {
    if (n <= 0) return cudaSuccess;
    return cudaMemcpyAsync((void*)d, (const void*)h, sizeof(S) * (size_t)n, cudaMemcpyHostToDevice, st);
}

// upload_graphs queues the upload of graphs [a, b) of l (copied into the
// pinned staging first, then one copy per array on stream st).
cudaError_t upload_range(SpList& l, int a, int b, cudaStream_t st) {
    const ggc_sp_graphs& s = *l.src;
    const int64_t e0 = s.sp_off[a], e1 = s.sp_off[b];
    const int64_t f0 = s.node_off[a] * s.node_cols, f1 = s.node_off[b] * s.node_cols;
    std::copy(s.sp_u + e0, s.sp_u + e1, (int32_t*)l.h.sp_u + e0);
    std::copy(s.sp_v + e0, s.sp_v + e1, (int32_t*)l.h.sp_v + e0);
    std::copy(s.sp_len + e0, s.sp_len + e1, (int32_t*)l.h.sp_len + e0);
    std::copy(s.node_feat + f0, s.node_feat + f1, (double*)l.h.node_feat + f0);
    cudaError_t e;
    if ((e = h2d((int32_t*)l.d.sp_u + e0, l.h.sp_u + e0, e1 - e0, st))) return e;
    if ((e = h2d((int32_t*)l.d.sp_v + e0, l.h.sp_v + e0, e1 - e0, st))) return e;
    if ((e = h2d((int32_t*)l.d.sp_len + e0, l.h.sp_len + e0, e1 - e0, st))) return e;
    return h2d((double*)l.d.node_feat + f0, l.h.node_feat + f0, f1 - f0, st);
}

// upload_needed queues the graphs of l that the listed graph indices need and
// that are not resident yet, contiguous runs in one copy per array.
cudaError_t upload_needed(SpList& l, std::vector<int>& need, cudaStream_t st) {
    std::sort(need.begin(), need.end());
    need.erase(std::unique(need.begin(), need.end()), need.end());
    for (size_t a = 0; a < need.size();) {
        size_t b = a + 1;
        while (b < need.size() && need[b] == need[b - 1] + 1) b++;
        cudaError_t e = upload_range(l, need[a], need[b - 1] + 1, st);
        if (e != cudaSuccess) return e;
        for (size_t k = a; k < b; k++) l.resident[need[k]] = 1;
        a = b;
    }
    return cudaSuccess;
}

float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return 0;
    return ms;
}

template <typename T>
int sp_pairs(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node,
             const ggc_mk_program* length, const ggc_sp_options* o, const int32_t* pairs, int64_t npairs,
             double* out, ggc_stats* stats, char* err, size_t errlen) {
    const int L = o->num_lengths;
    const bool same = Y == X;
    // Jobs, largest first (plan.cuh); kv offsets by chunk below.
    SpJobs plan;
    if (!sp_jobs(*X, *Y, pairs, npairs, &plan)) {
        say(err, errlen, "ggc_sp_pairs: pair index out of range");
        return GGC_ERR_ARG;
    }
    const int64_t largest = plan.largest, total = plan.total;
    const size_t nj = plan.jobs.size();
    const int64_t gbytes = sp_bytes(*X) + (same ? 0 : sp_bytes(*Y));
    const int64_t tbytes = (int64_t)sizeof(T) * L * L;
    if (o->mem_limit > 0 && gbytes + tbytes + (int64_t)sizeof(T) * largest > o->mem_limit) {
        say(err, errlen, "device memory exhausted (mem_limit)");
        return GGC_ERR_OOM;
    }
    CK(cudaSetDevice(o->device));
    Streams ss;
    for (auto& x : ss.s) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    cudaStream_t up = ss.s[0], ks = ss.s[1], dn = ss.s[2];
    EventPool evs;
    Arena ar;  // after the streams: freed (and synchronized) first on every return

    // Device arrays: whole lists at the host offsets, filled as chunks need them.
    SpList lx{X, *X, *X, std::vector<char>(X->num_graphs, 0)}, ly{Y, *Y, *Y, std::vector<char>(Y->num_graphs, 0)};
    auto dalloc = [&](SpList& l) -> cudaError_t {
        const ggc_sp_graphs& s = *l.src;
        cudaError_t e;
        if ((e = ar.alloc((void**)&l.d.node_off, 8 * ((size_t)s.num_graphs + 1)))) return e;
        if ((e = ar.alloc((void**)&l.d.sp_off, 8 * ((size_t)s.num_graphs + 1)))) return e;
        if ((e = ar.alloc((void**)&l.d.sp_u, 4 * (size_t)std::max<int64_t>(s.total_sp, 1)))) return e;
        if ((e = ar.alloc((void**)&l.d.sp_v, 4 * (size_t)std::max<int64_t>(s.total_sp, 1)))) return e;
        if ((e = ar.alloc((void**)&l.d.sp_len, 4 * (size_t)std::max<int64_t>(s.total_sp, 1)))) return e;
        return ar.alloc((void**)&l.d.node_feat, 8 * (size_t)std::max<int64_t>(s.total_nodes * s.node_cols, 1));
    };
    CK(dalloc(lx));
    if (!same) CK(dalloc(ly));
    const ggc_sp_graphs& dy = same ? lx.d : ly.d;
    ggc_mk_program *dnode, *dlen;
    double *dlengths, *dres;
    T *ltab, *work;
    SpJob* djobs;
    int* counter;
    CK(ar.alloc((void**)&dnode, sizeof(ggc_mk_program)));
    CK(ar.alloc((void**)&dlen, sizeof(ggc_mk_program)));
    CK(ar.alloc((void**)&dlengths, 8 * (size_t)std::max(L, 1)));
    CK(ar.alloc((void**)&ltab, sizeof(T) * (size_t)std::max<int64_t>((int64_t)L * L, 1)));
    CK(ar.alloc((void**)&djobs, sizeof(SpJob) * nj));
    CK(ar.alloc((void**)&dres, sizeof(double) * nj));
    CK(ar.alloc((void**)&counter, sizeof(int)));
    // Work space: the node-kernel matrices of one chunk.
    size_t free_b = 0;
    CK(free_memory(o->device, &free_b));
    int64_t avail = (int64_t)(FREE_SHARE * (double)free_b);
    if (o->mem_limit > 0)
        avail = std::min<int64_t>(avail, o->mem_limit - gbytes - tbytes - (int64_t)nj * (int64_t)(sizeof(SpJob) + 8) - 64);
    const int64_t cap = std::min<int64_t>(CHUNK_BYTES, avail) / (int64_t)sizeof(T);
    if (largest > cap) {
        say(err, errlen, "device memory exhausted: one pair's node-kernel matrix does not fit");
        return GGC_ERR_OOM;
    }
    const int64_t chunk_words = std::min(
        cap, std::max({largest, (total + SP_MIN_CHUNKS - 1) / SP_MIN_CHUNKS, SP_CHUNK_MIN_BYTES / (int64_t)sizeof(T)}));
    CK(ar.alloc((void**)&work, sizeof(T) * (size_t)std::max<int64_t>(std::min(total, chunk_words), 1)));

    // Pinned staging: offsets, graph arrays, programs, lengths, jobs, results.
    Staging sg;
    auto layout = [&](Staging& g) {
        for (SpList* l : {&lx, &ly}) {
            if (l == &ly && same) break;
            const ggc_sp_graphs& s = *l->src;
            l->h.node_off = g.put<int64_t>(s.num_graphs + 1);
            l->h.sp_off = g.put<int64_t>(s.num_graphs + 1);
            l->h.sp_u = g.put<int32_t>(s.total_sp);
            l->h.sp_v = g.put<int32_t>(s.total_sp);
            l->h.sp_len = g.put<int32_t>(s.total_sp);
            l->h.node_feat = g.put<double>(s.total_nodes * s.node_cols);
        }
    };
    layout(sg);  // sizes only (base null)
    ggc_mk_program* hprog = sg.put<ggc_mk_program>(2);
    double* hlengths = sg.put<double>(L);
    SpJob* hjobs = sg.put<SpJob>((int64_t)nj);
    double* hres = sg.put<double>((int64_t)nj);
    HostStaging hb;
    // On every return, the streams finish before hb is released (to the next
    // call) and the device memory freed: an early error return must not
    // release what queued copies still read.
    struct SyncGuard {
        Streams& s;
        ~SyncGuard() {
            for (cudaStream_t x : s.s)
                if (x) cudaStreamSynchronize(x);
        }
    } sync_guard{ss};
    if (!hb.alloc(o->device, sg.off)) {
        say(err, errlen, "ggc_sp_pairs: out of host memory for the staging buffers");
        return GGC_ERR_OOM;
    }
    Staging real;
    real.base = (char*)hb.p;
    layout(real);
    hprog = real.put<ggc_mk_program>(2);
    hlengths = real.put<double>(L);
    hjobs = real.put<SpJob>((int64_t)nj);
    hres = real.put<double>((int64_t)nj);

    // Chunks (job ranges) and kv offsets; hjobs[k].out is the job's slot k.
    std::vector<size_t> bounds;
    sp_chunks(*X, *Y, plan.jobs, chunk_words, hjobs, bounds);
    const size_t nchunks = bounds.size() - 1;

    // Prologue (copy stream): offsets, programs, lengths, all jobs.
    cudaEvent_t ev_start, ev_pro, ev_tab0, ev_tab1;
    CK(evs.make(&ev_start));
    CK(evs.make(&ev_pro));
    CK(evs.make(&ev_tab0));
    CK(evs.make(&ev_tab1));
    CK(cudaEventRecord(ev_start, up));
    for (SpList* l : {&lx, &ly}) {
        if (l == &ly && same) break;
        const ggc_sp_graphs& s = *l->src;
        std::copy(s.node_off, s.node_off + s.num_graphs + 1, (int64_t*)l->h.node_off);
        std::copy(s.sp_off, s.sp_off + s.num_graphs + 1, (int64_t*)l->h.sp_off);
        CK(h2d((int64_t*)l->d.node_off, l->h.node_off, s.num_graphs + 1, up));
        CK(h2d((int64_t*)l->d.sp_off, l->h.sp_off, s.num_graphs + 1, up));
    }
    hprog[0] = *node;
    hprog[1] = *length;
    std::copy(o->lengths, o->lengths + L, hlengths);
    CK(h2d(dnode, hprog, 1, up));
    CK(h2d(dlen, hprog + 1, 1, up));
    CK(h2d(dlengths, (const double*)hlengths, L, up));
    CK(h2d(djobs, (const SpJob*)hjobs, (int64_t)nj, up));
    CK(cudaEventRecord(ev_pro, up));
    CK(cudaStreamWaitEvent(ks, ev_pro, 0));
    CK(cudaEventRecord(ev_tab0, ks));
    if (L > 0) {
        auto table = sp_length_table<T>;
        GG_LAUNCH(table, std::min<int64_t>(((int64_t)L * L + SP_THREADS - 1) / SP_THREADS, 1024), SP_THREADS, ks,
                  dlen, dlengths, L, ltab);
        CK(cudaGetLastError());
    }
    CK(cudaEventRecord(ev_tab1, ks));

    DeviceProps prop;
    CK(device_props(o->device, &prop));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sp_walk<T>, SP_THREADS, 0));
    int64_t max_grid = std::max(1, per_sm) * (int64_t)prop.sm_count;
    if (o->blocks > 0) max_grid = std::min<int64_t>(max_grid, o->blocks);
#if defined(GG_EMU)
    // Test only (emulated library): skip the compute stream's wait for a
    // chunk's uploads, to show that the tests catch the missing dependency.
    const bool skip_wait = getenv("GGCUDA_EMU_SKIP_UPLOAD_WAIT") != nullptr;
#else
    constexpr bool skip_wait = false;
#endif
    // Per chunk: uploads [0, 1] on up, stages [2, 3] on ks, download [4, 5] on dn.
    std::vector<std::array<cudaEvent_t, 6>> cev(nchunks);
    int64_t grid_used = 0;
    std::vector<int> nx, ny;
    for (size_t c = 0; c < nchunks; c++) {
        for (cudaEvent_t& e : cev[c]) CK(evs.make(&e));
        const size_t k0 = bounds[c], k1 = bounds[c + 1];
        const int n = (int)(k1 - k0);
        nx.clear(), ny.clear();
        for (size_t k = k0; k < k1; k++) {
            if (!lx.resident[hjobs[k].i]) nx.push_back(hjobs[k].i);
            SpList& l = same ? lx : ly;
            if (!l.resident[hjobs[k].j]) (same ? nx : ny).push_back(hjobs[k].j);
        }
        CK(cudaEventRecord(cev[c][0], up));
        CK(upload_needed(lx, nx, up));
        if (!same) CK(upload_needed(ly, ny, up));
        CK(cudaEventRecord(cev[c][1], up));
        if (!skip_wait) CK(cudaStreamWaitEvent(ks, cev[c][1], 0));
        CK(cudaEventRecord(cev[c][2], ks));
        auto vertex = sp_vertex<T>;
        GG_LAUNCH(vertex, n, SP_THREADS, ks, lx.d, dy, djobs + k0, dnode, work);
        CK(cudaGetLastError());
        CK(cudaMemsetAsync(counter, 0, sizeof(int), ks));
        const int64_t grid = std::min<int64_t>(max_grid, n);
        grid_used = std::max(grid_used, grid);
        auto walk = sp_walk<T>;
        GG_LAUNCH(walk, grid, SP_THREADS, ks, lx.d, dy, djobs + k0, n, counter, (const T*)ltab, L, (const T*)work, dres);
        CK(cudaGetLastError());
        CK(cudaEventRecord(cev[c][3], ks));
        CK(cudaStreamWaitEvent(dn, cev[c][3], 0));
        CK(cudaEventRecord(cev[c][4], dn));
        CK(cudaMemcpyAsync(hres + k0, dres + k0, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost, dn));
        CK(cudaEventRecord(cev[c][5], dn));
    }
    // Downloads first: what they need, and nothing else, must have run (the
    // emulation runs work only when waited for, so this order is what makes a
    // missing upload dependency visible there; on a device it is immaterial).
    CK(cudaStreamSynchronize(dn));
    CK(cudaStreamSynchronize(ks));
    CK(cudaStreamSynchronize(up));
    sp_scatter(plan.jobs, hres, out);
    if (stats) {
        double u = elapsed(ev_start, ev_pro), kt = elapsed(ev_tab0, ev_tab1), d = 0;
        for (auto& e : cev) {
            u += elapsed(e[0], e[1]);
            kt += elapsed(e[2], e[3]);
            d += elapsed(e[4], e[5]);
        }
        stats->upload_ms = u;
        stats->solve_ms = kt;
        stats->download_ms = d;
        stats->wall_ms = nchunks ? elapsed(ev_start, cev.back()[5]) : 0;
        stats->overlap_ms = std::max(0.0, u + kt + d - stats->wall_ms);
        stats->chunks = (int32_t)nchunks;
        stats->blocks = (int32_t)grid_used;
        stats->threads = SP_THREADS;
        stats->scratch_bytes = (int64_t)sizeof(T) * std::min(total, chunk_words);
    }
    return GGC_OK;
}

}  // namespace

#if defined(GG_EMU)
// Emulation only (tests): free the cached pinned staging buffers.
extern "C" void ggc_emu_release_host_buffers(void) { pinned_cache().release(); }
#endif

extern "C" int ggc_sp_pairs(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node,
                            const ggc_mk_program* length, const ggc_sp_options* o, const int32_t* pairs,
                            int64_t npairs, double* out, ggc_stats* stats, char* err, size_t errlen) {
    if (!X || !node || !length || !o || (!pairs && npairs) || (!out && npairs)) {
        say(err, errlen, "ggc_sp_pairs: a required argument is NULL");
        return GGC_ERR_ARG;
    }
    if (!Y) Y = X;
    if ((int64_t)o->num_lengths * o->num_lengths > SP_LENGTH_TABLE_MAX) {
        say(err, errlen, "ggc_sp_pairs: too many distinct path lengths for the length-kernel table");
        return GGC_ERR_UNSUPPORTED;
    }
    if (o->precision != 0 && o->precision != 32 && o->precision != 64) {
        say(err, errlen, "ggc_sp_pairs: precision must be 32 or 64");
        return GGC_ERR_ARG;
    }
    if (stats) memset(stats, 0, sizeof(*stats));
    if (npairs == 0) return GGC_OK;
    if (o->precision == 32) return sp_pairs<float>(X, Y, node, length, o, pairs, npairs, out, stats, err, errlen);
    return sp_pairs<double>(X, Y, node, length, o, pairs, npairs, out, stats, err, errlen);
}


// ---- Explicit feature maps (sparsegram): a dense panel and a sparse remainder. ----

namespace {

// A column goes into the dense panel when its work nX_f·nY_f (terms, i.e.
// atomics, on the sparse path) times EX_DENSE_RATIO is at least the panel's
// cost for it, nx·ny multiply-adds in registers: a guess at what a scattered
// 64-bit global atomic costs against one IMAD.WIDE in a tile (to be measured
// on a GPU: cuda/README.md, "Not done yet").
constexpr int64_t EX_DENSE_RATIO = 64;
// At most this many panel columns (the cost model's choice): bounds the
// panels' memory at 16 KiB a row.
constexpr int64_t EX_MAX_PANEL = 4096;
// Blocks a grid-stride kernel gets per multiprocessor.
constexpr int64_t EX_BLOCKS_PER_SM = 16;

// ExSide is one matrix on the host, split: its dense panel (rows × pw) and
// its inverted index over the remainder columns.
struct ExSide {
    std::vector<uint32_t> panel;
    std::vector<int64_t> off;
    std::vector<int32_t> row;
    std::vector<uint32_t> val;
};

// ex_split fills s from A: place[f] is column f's rank among the
// contributing columns (< p: panel slot; else remainder column place[f] − p;
// −1: none), count[f] its nonzeros in A.
void ex_split(const ggc_csr& A, const std::vector<int32_t>& place, const std::vector<int32_t>& count,
              const std::vector<int32_t>& cols, int64_t p, int64_t pw, ExSide& s) {
    const int64_t R = (int64_t)cols.size() - p;
    s.panel.assign((size_t)A.num_rows * (size_t)pw, 0u);
    s.off.assign((size_t)R + 1, 0);
    for (int64_t r = 0; r < R; r++) s.off[r + 1] = s.off[r] + count[cols[p + r]];
    s.row.resize((size_t)s.off[R]);
    s.val.resize((size_t)s.off[R]);
    std::vector<int64_t> fill(s.off.begin(), s.off.end() - 1);
    for (int32_t i = 0; i < A.num_rows; i++)
        for (int64_t k = A.ptr[i]; k < A.ptr[i + 1]; k++) {
            const int32_t at = place[A.col[k]];
            if (at < 0) continue;
            if (at < p) {
                s.panel[(size_t)i * pw + at] = A.val[k];
            } else {
                const int64_t q = fill[at - p]++;
                s.row[q] = i;
                s.val[q] = A.val[k];
            }
        }
}

int explicit_gram(const ggc_csr* X, const ggc_csr* Y, const ggc_explicit_options* o, double* out, ggc_stats* stats,
                  char* err, size_t errlen) {
    const bool sym = o->symmetric || Y == nullptr;
    if (sym) Y = X;
    const int nx = X->num_rows, ny = Y->num_rows;
    const int64_t F = X->num_cols;
    // Column counts, checking what indexes host arrays below.
    std::vector<int32_t> cx((size_t)F, 0), cy(sym ? 0 : (size_t)F, 0);
    auto count = [&](const ggc_csr& A, std::vector<int32_t>& c) {
        for (int32_t i = 0; i < A.num_rows; i++) {
            if (A.ptr[i + 1] < A.ptr[i]) return false;
            for (int64_t k = A.ptr[i]; k < A.ptr[i + 1]; k++) {
                if (A.col[k] < 0 || A.col[k] >= F) return false;
                c[A.col[k]]++;
            }
        }
        return true;
    };
    if (!count(*X, cx) || (!sym && !count(*Y, cy))) {
        say(err, errlen, "ggc_explicit_gram: row pointers decrease or a column index is out of range");
        return GGC_ERR_ARG;
    }
    const std::vector<int32_t>& cyr = sym ? cx : cy;
    // The contributing columns (in X and in Y), largest work first; equal
    // work in column order, so the split is deterministic.
    std::vector<int32_t> cols;
    for (int64_t f = 0; f < F; f++)
        if (cx[f] > 0 && cyr[f] > 0) cols.push_back((int32_t)f);
    auto work = [&](int32_t f) { return (int64_t)cx[f] * cyr[f]; };
    std::stable_sort(cols.begin(), cols.end(), [&](int32_t a, int32_t b) { return work(a) > work(b); });
    const int64_t nc = (int64_t)cols.size();
    int64_t p = 0;
    if (o->panel > 0) {
        p = std::min<int64_t>(o->panel, nc);
    } else if (o->panel == 0) {
        // work·EX_DENSE_RATIO >= nx·ny, without forming the product (it can
        // pass 2^63 when nx·ny does not).
        const int64_t least = ((int64_t)nx * ny + EX_DENSE_RATIO - 1) / EX_DENSE_RATIO;
        while (p < nc && p < EX_MAX_PANEL && work(cols[p]) >= least) p++;
        // The padding of the panel's width costs the same whether it holds
        // zeros or the next columns: fill it.
        if (p > 0) p = std::min({nc, EX_MAX_PANEL, (p + EX_KT - 1) / EX_KT * EX_KT});
    }
    const int64_t pw = (p + EX_KT - 1) / EX_KT * EX_KT;
    const int64_t R = nc - p;
    std::vector<int32_t> place((size_t)F, -1);
    for (int64_t k = 0; k < nc; k++) place[cols[k]] = (int32_t)k;
    std::vector<int64_t> wpre((size_t)R + 1, 0);
    for (int64_t r = 0; r < R; r++) wpre[r + 1] = wpre[r] + work(cols[p + r]);
    ExSide hx, hy;
    ex_split(*X, place, cx, cols, p, pw, hx);
    if (!sym) ex_split(*Y, place, cy, cols, p, pw, hy);

    // Device memory: the result (integer sums, then in place the doubles),
    // the panels, the inverted indexes and the term prefix.
    const int64_t res_bytes = 8 * (int64_t)nx * ny;
    auto side_bytes = [&](const ExSide& s) {
        return 4 * (int64_t)s.panel.size() + 8 * (int64_t)s.off.size() + 8 * (int64_t)s.row.size();
    };
    const int64_t bytes = res_bytes + side_bytes(hx) + (sym ? 0 : side_bytes(hy)) + 8 * (R + 1);
    if (o->mem_limit > 0 && bytes > o->mem_limit) {
        say(err, errlen, "device memory exhausted (mem_limit)");
        return GGC_ERR_OOM;
    }
    CK(cudaSetDevice(o->device));
    size_t free_b = 0;
    CK(free_memory(o->device, &free_b));
    if ((double)bytes > FREE_SHARE * (double)free_b) {
        char a[64];
        snprintf(a, sizeof a, "%.3g GB", double(bytes) / 1e9);
        say(err, errlen, "device memory exhausted: the result, panels and index need %s", a);
        return GGC_ERR_OOM;
    }
    DeviceProps prop;
    CK(device_props(o->device, &prop));
    // Destroyed in reverse order: the allocations first (the arena
    // synchronizes), then the events and the stream; the host arrays above
    // outlive every copy queued from them.
    Streams ss;
    CK(cudaStreamCreateWithFlags(&ss.s[0], cudaStreamNonBlocking));
    cudaStream_t st = ss.s[0];
    EventPool evs;
    Arena ar;
    cudaEvent_t ev[4];
    for (cudaEvent_t& e : ev) CK(evs.make(&e));
    CK(cudaEventRecord(ev[0], st));
    ExAcc* acc;
    CK(ar.alloc((void**)&acc, (size_t)res_bytes));
    CK(cudaMemsetAsync(acc, 0, (size_t)res_bytes, st));
    auto up = [&](const ExSide& s, const uint32_t** panel, ExPostings* ix) -> cudaError_t {
        cudaError_t e;
        if ((e = upload(ar, panel, s.panel.data(), (int64_t)s.panel.size(), st))) return e;
        if ((e = upload(ar, &ix->off, s.off.data(), (int64_t)s.off.size(), st))) return e;
        if ((e = upload(ar, &ix->row, s.row.data(), (int64_t)s.row.size(), st))) return e;
        return upload(ar, &ix->val, s.val.data(), (int64_t)s.val.size(), st);
    };
    const uint32_t *dxp, *dyp;
    ExPostings ix, iy;
    CK(up(hx, &dxp, &ix));
    if (sym)
        dyp = dxp, iy = ix;
    else
        CK(up(hy, &dyp, &iy));
    const int64_t* dwpre;
    CK(upload(ar, &dwpre, wpre.data(), R + 1, st));
    CK(cudaEventRecord(ev[1], st));
    const bool is_min = o->semiring == GGC_SUM_MIN;
    const int64_t max_grid = EX_BLOCKS_PER_SM * (int64_t)prop.sm_count;
    int64_t grid_used = 0;
    if (pw > 0 && nx > 0 && ny > 0) {
        const int64_t tiles = (int64_t)((nx + EX_TILE - 1) / EX_TILE) * ((ny + EX_TILE - 1) / EX_TILE);
        auto dense = is_min ? ex_dense<GGC_SUM_MIN> : ex_dense<GGC_SUM_PRODUCT>;
        GG_LAUNCH(dense, tiles, EX_THREADS, st, dxp, dyp, nx, ny, (int)pw, (int)sym, acc);
        CK(cudaGetLastError());
        grid_used = tiles;
    }
    if (R > 0) {
        const int64_t grid = std::min<int64_t>(max_grid, (wpre[R] + EX_THREADS - 1) / EX_THREADS);
        auto sparse = is_min ? ex_sparse<GGC_SUM_MIN> : ex_sparse<GGC_SUM_PRODUCT>;
        GG_LAUNCH(sparse, grid, EX_THREADS, st, ix, iy, dwpre, (int)R, ny, (int)sym, acc);
        CK(cudaGetLastError());
        grid_used = std::max(grid_used, grid);
    }
    if (res_bytes > 0) {
        const int64_t grid = std::min<int64_t>(max_grid, ((int64_t)nx * ny + EX_THREADS - 1) / EX_THREADS);
        auto finish = ex_finish;
        GG_LAUNCH(finish, grid, EX_THREADS, st, acc, nx, ny, (int)sym);
        CK(cudaGetLastError());
        CK(cudaEventRecord(ev[2], st));
        CK(cudaMemcpyAsync(out, acc, (size_t)res_bytes, cudaMemcpyDeviceToHost, st));
    } else {
        CK(cudaEventRecord(ev[2], st));
    }
    CK(cudaEventRecord(ev[3], st));
    CK(cudaStreamSynchronize(st));
    if (stats) {
        stats->upload_ms = elapsed(ev[0], ev[1]);
        stats->solve_ms = elapsed(ev[1], ev[2]);
        stats->download_ms = elapsed(ev[2], ev[3]);
        stats->wall_ms = elapsed(ev[0], ev[3]);
        stats->blocks = (int32_t)std::min<int64_t>(grid_used, INT32_MAX);
        stats->threads = EX_THREADS;
        stats->scratch_bytes = bytes;
        stats->chunks = 1;
        stats->dense_cols = (int32_t)p;
    }
    return GGC_OK;
}

}  // namespace

extern "C" int ggc_explicit_gram(const ggc_csr* X, const ggc_csr* Y, const ggc_explicit_options* o, double* out,
                                 ggc_stats* stats, char* err, size_t errlen) {
    if (!X || !o || !X->ptr || (!out && X->num_rows > 0)) {
        say(err, errlen, "ggc_explicit_gram: a required argument is NULL");
        return GGC_ERR_ARG;
    }
    const ggc_csr* y = o->symmetric || !Y ? X : Y;
    if (!y->ptr || X->num_rows < 0 || y->num_rows < 0 || X->num_cols < 0 || X->num_cols != y->num_cols) {
        say(err, errlen, "ggc_explicit_gram: X and Y must have the same number of columns and valid rows");
        return GGC_ERR_ARG;
    }
    if (o->semiring != GGC_SUM_PRODUCT && o->semiring != GGC_SUM_MIN) {
        say(err, errlen, "ggc_explicit_gram: semiring must be GGC_SUM_PRODUCT or GGC_SUM_MIN");
        return GGC_ERR_ARG;
    }
    if (stats) memset(stats, 0, sizeof(*stats));
    if (X->num_rows == 0 || y->num_rows == 0) return GGC_OK;
    return explicit_gram(X, y, o, out, stats, err, errlen);
}

namespace {

// load_kernels asks for the attributes of every kernel in precision T, which
// loads its code: the runtime otherwise loads a kernel on its first launch
// (lazy module loading, the default since CUDA 12.2), inside a user's call.
template <typename T>
cudaError_t load_kernels() {
    const void* ks[] = {
        reinterpret_cast<const void*>(mgk_prep<T, true>),         reinterpret_cast<const void*>(mgk_prep<T, false>),
        reinterpret_cast<const void*>(mgk_solve<T, true>),        reinterpret_cast<const void*>(mgk_solve<T, false>),
        reinterpret_cast<const void*>(mgk_solve_warp<T, true>),   reinterpret_cast<const void*>(mgk_solve_warp<T, false>),
        reinterpret_cast<const void*>(mgk_gsolve<T, true>),       reinterpret_cast<const void*>(mgk_gsolve<T, false>),
        reinterpret_cast<const void*>(mgk_gterms<T, true>),       reinterpret_cast<const void*>(mgk_gterms<T, false>),
        reinterpret_cast<const void*>(mgk_nodal_out<T>),          reinterpret_cast<const void*>(mgk_wide_rhs<T, true>),
        reinterpret_cast<const void*>(mgk_wide_rhs<T, false>),    reinterpret_cast<const void*>(mgk_wide_init<T>),
        reinterpret_cast<const void*>(mgk_wide_matvec<T, true>),  reinterpret_cast<const void*>(mgk_wide_matvec<T, false>),
        reinterpret_cast<const void*>(mgk_wide_update<T>),        reinterpret_cast<const void*>(mgk_wide_direction<T>),
        reinterpret_cast<const void*>(mgk_wide_value<T>),         reinterpret_cast<const void*>(mgk_wide_scalar<T>),
        reinterpret_cast<const void*>(sp_length_table<T>),        reinterpret_cast<const void*>(sp_vertex<T>),
        reinterpret_cast<const void*>(sp_walk<T>),
    };
    for (const void* k : ks) {
        cudaFuncAttributes a;
        cudaError_t e = cudaFuncGetAttributes(&a, k);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

cudaError_t load_explicit_kernels() {
    const void* ks[] = {reinterpret_cast<const void*>(ex_dense<GGC_SUM_MIN>),
                        reinterpret_cast<const void*>(ex_dense<GGC_SUM_PRODUCT>),
                        reinterpret_cast<const void*>(ex_sparse<GGC_SUM_MIN>),
                        reinterpret_cast<const void*>(ex_sparse<GGC_SUM_PRODUCT>), reinterpret_cast<const void*>(ex_finish)};
    for (const void* k : ks) {
        cudaFuncAttributes a;
        cudaError_t e = cudaFuncGetAttributes(&a, k);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

}  // namespace

extern "C" int ggc_warm_up(int dev, char* err, size_t errlen) {
    CK(cudaSetDevice(dev));
    CK(cudaFree(nullptr));  // creates the device's context now
    DeviceProps p;
    CK(device_props(dev, &p));
    CK(load_kernels<double>());
    CK(load_kernels<float>());
    CK(load_explicit_kernels());
    return GGC_OK;
}

extern "C" int ggc_cached_memory(int dev, int64_t* device_bytes, int64_t* pinned_bytes) {
    *device_bytes = memory_cache().idle(dev);
    *pinned_bytes = pinned_cache().held(dev);
    return GGC_OK;
}

extern "C" int ggc_release_memory(int dev, int64_t* device_bytes, int64_t* pinned_bytes) {
    *device_bytes = memory_cache().release(dev);
    *pinned_bytes = pinned_cache().release(dev);
    return GGC_OK;
}
