// ggcuda.cu: the C API of libggcuda.so (include/ggcuda.h): device queries and
// the marginalized-kernel Gram matrix on one device.
#if defined(GG_EMU)
// The host emulation build (hostref/emu_lib.cc): kernels on host threads,
// the runtime calls below mocked in host memory.
#include "../emu/emu_runtime.h"
#else
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ggcuda.h"
#include "mgk.cuh"
#include "sp.cuh"

using namespace gg;

// GG_LAUNCH(kernel, grid, block, stream, args...) launches a kernel, or runs it
// on host threads in the emulation build. kernel is a variable holding the
// kernel (template arguments would split the macro's arguments).
#if defined(GG_EMU)
#define GG_LAUNCH(k, grid, block, stream, ...) emu::launch((unsigned)(grid), (unsigned)(block), [&] { k(__VA_ARGS__); })
#else
#define GG_LAUNCH(k, grid, block, stream, ...) k<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
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

// Arena: device allocations freed together.
struct Arena {
    std::vector<void*> ptrs;
    ~Arena() {
        for (void* p : ptrs) cudaFree(p);
    }
    cudaError_t alloc(void** p, size_t bytes) {
        cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
        if (e == cudaSuccess) ptrs.push_back(*p);
        return e;
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
    if ((e = upload_values<T>(ar, keep, &d->nz_w, h.nz_w, h.total_nz, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->class_feat, h.class_feat, h.total_classes * h.edge_cols, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->node_feat, h.node_feat, h.total_nodes * h.node_cols, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->deg, h.deg, h.total_nodes, st))) return e;
    if ((e = upload_values<T>(ar, keep, &d->start, h.start, h.total_nodes, st))) return e;
    return cudaSuccess;
}

int64_t desc(const ggc_graphs& g, int i, int f) { return g.desc[(int64_t)i * GGC_DESC_FIELDS + f]; }

// graph_bytes is the device memory a graph list takes in precision T.
template <typename T>
int64_t graph_bytes(const ggc_graphs& g) {
    return g.num_graphs * GGC_DESC_FIELDS * 8 + g.total_tileptr * 4 + g.total_tiles * (4 + 8 + 4) +
           g.total_nz * (1 + 4) + g.total_nodes * 4 +
           (int64_t)sizeof(T) * (g.total_nz + g.total_classes * g.edge_cols + g.total_nodes * (g.node_cols + 2));
}

// Class tables larger than this (entries) are not built: such pairs evaluate
// κe inside the product instead.
constexpr int64_t TABLE_BUDGET = 1 << 22;
// Work space of one chunk of jobs at most (bytes), and at most this share of
// the free device memory.
constexpr int64_t CHUNK_BYTES = int64_t(1) << 31;
constexpr double FREE_SHARE = 0.8;

// run_jobs prepares and solves jobs (largest first) in chunks whose work space
// fits in device memory: a chunk's pairs are prepared by mgk_prep, then solved
// by persistent mgk_solve blocks. A single pair too large for the free memory
// is GGC_ERR_OOM; the caller then splits the work. With np > 0 the jobs are
// gradient jobs (mgk_gsolve then mgk_gterms; eight vectors and two class
// tables each) and gout receives np doubles a job.
template <typename T, bool Table>
int run_jobs(const DevGraphs<T>& dx, const DevGraphs<T>& dy, const ggc_graphs& hx, const ggc_graphs& hy,
             std::vector<MgkJob>& jobs, const ggc_mk_program* dnode, const ggc_mk_program* dedge, MgkParams<T> prm,
             int max_blocks, int64_t mem_limit, int64_t graph_mem, std::vector<MgkResult>& out, std::vector<int>& bad, Arena& ar, cudaStream_t st,
             ggc_stats* stats, char* err, size_t errlen, int np, std::vector<double>& gout, double* dnodal = nullptr,
             int64_t ld = 0, bool sym = false) {
    if (jobs.empty()) return GGC_OK;
    int dev;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int per_sm = 0;
    if (np > 0)
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mgk_gsolve<T, Table>, MGK_THREADS, 0));
    else
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mgk_solve<T, Table>, MGK_THREADS, 0));
    const int64_t nvec = np > 0 ? 8 : 7, ntab = np > 0 ? 2 : 1;
    int64_t max_grid = std::max(1, per_sm) * (int64_t)prop.multiProcessorCount;
    if (max_blocks > 0) max_grid = std::min<int64_t>(max_grid, max_blocks);
    const size_t nj = jobs.size();
    std::vector<int64_t> words(nj);
    int64_t total = 0, largest = 0;
    for (size_t k = 0; k < nj; k++) {
        const int64_t na = desc(hx, jobs[k].i, GGC_DESC_N), nb = desc(hy, jobs[k].j, GGC_DESC_N);
        int64_t w = nvec * na * nb;
        if (Table) w += ntab * desc(hx, jobs[k].i, GGC_DESC_NCLASS) * desc(hy, jobs[k].j, GGC_DESC_NCLASS);
        w = (w + 1) & ~int64_t(1);  // keep every job 16-byte aligned
        words[k] = w;
        total += w;
        largest = std::max(largest, w);
    }
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
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
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    CK(cudaEventRecord(e0, st));
    int64_t grid_used = 0;
    for (size_t k0 = 0; k0 < nj;) {
        size_t k1 = k0;
        int64_t off = 0;
        while (k1 < nj && off + words[k1] <= cap) {
            jobs[k1].vec = off;
            jobs[k1].tab = off + nvec * desc(hx, jobs[k1].i, GGC_DESC_N) * desc(hy, jobs[k1].j, GGC_DESC_N);
            off += words[k1];
            k1++;
        }
        const int n = (int)(k1 - k0);
        CK(cudaMemcpyAsync(djobs + k0, jobs.data() + k0, sizeof(MgkJob) * n, cudaMemcpyHostToDevice, st));
        auto prep = mgk_prep<T, Table>;
        GG_LAUNCH(prep, n, PREP_THREADS, st, dx, dy, djobs + k0, dnode, dedge, prm, work, dbad + k0);
        CK(cudaGetLastError());
        CK(cudaMemsetAsync(counter, 0, sizeof(int), st));
        const int64_t grid = std::min<int64_t>(max_grid, n);
        grid_used = std::max(grid_used, grid);
        if (np > 0) {
            auto gsolve = mgk_gsolve<T, Table>;
            GG_LAUNCH(gsolve, grid, MGK_THREADS, st, dx, dy, djobs + k0, n, counter, dedge, prm, work, dres + k0,
                      dgrad + k0 * np, np);
            CK(cudaGetLastError());
            auto gterms = mgk_gterms<T, Table>;
            GG_LAUNCH(gterms, n, PREP_THREADS, st, dx, dy, djobs + k0, dnode, dedge, work, dgrad + k0 * np, np);
        } else {
            auto solve = mgk_solve<T, Table>;
            GG_LAUNCH(solve, grid, MGK_THREADS, st, dx, dy, djobs + k0, n, counter, dedge, prm, work, dres + k0);
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
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
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
    std::vector<std::pair<double, MgkJob>> tj, ej;
    for (int i = 0; i < nx; i++)
        for (int j = diag ? i : sym ? i : 0; j < (diag ? i + 1 : ny); j++) {
            const int64_t na = desc(*X, i, GGC_DESC_N), nb = desc(*Y, j, GGC_DESC_N);
            const double cost = double(desc(*X, i, GGC_DESC_NNZ) + na) * double(desc(*Y, j, GGC_DESC_NNZ) + nb);
            const int64_t ncls = desc(*X, i, GGC_DESC_NCLASS) * desc(*Y, j, GGC_DESC_NCLASS);
            const bool table = ncls <= TABLE_BUDGET && !(o->flags & GGC_FLAG_NO_TABLE);
            (table ? tj : ej).push_back({cost, MgkJob{i, j, 0, 0}});
        }
    auto order = [](std::vector<std::pair<double, MgkJob>>& v) {
        std::stable_sort(v.begin(), v.end(), [](const std::pair<double, MgkJob>& a, const std::pair<double, MgkJob>& b) {
            return a.first > b.first;
        });
        std::vector<MgkJob> r;
        for (auto& p : v) r.push_back(p.second);
        return r;
    };
    std::vector<MgkJob> tjobs = order(tj), ejobs = order(ej);

    CK(cudaSetDevice(o->device));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct StreamGuard {
        cudaStream_t s;
        ~StreamGuard() { cudaStreamDestroy(s); }
    } guard{st};
    Arena ar;
    std::vector<std::vector<T>> keep;
    cudaEvent_t u0, u1;
    CK(cudaEventCreate(&u0));
    CK(cudaEventCreate(&u1));
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
    cudaEventDestroy(u0);
    cudaEventDestroy(u1);

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
    int rc = run_jobs<T, true>(dx, dy, *X, *Y, tjobs, dnode, dedge, prm, o->blocks, o->mem_limit, gmem, tres, tbad, ar, st, stats, err,
                               errlen, np, tgrad, dnodal, ld, sym);
    if (rc != GGC_OK) return rc;
    rc = run_jobs<T, false>(dx, dy, *X, *Y, ejobs, dnode, dedge, prm, o->blocks, o->mem_limit, gmem, eres, ebad, ar, st, stats, err,
                            errlen, np, egrad, dnodal, ld, sym);
    if (rc != GGC_OK) return rc;
    auto scatter = [&](const std::vector<MgkJob>& jobs, const std::vector<MgkResult>& res, const std::vector<int>& bad,
                       const std::vector<double>& g) {
        for (size_t k = 0; k < jobs.size(); k++) {
            const MgkJob jb = jobs[k];
            if (bad[k]) {
                char a[64];
                snprintf(a, sizeof a, "(%d, %d)", jb.i, jb.j);
                say(err, errlen, "node kernel gave a negative or non-finite value in pair %s", a);
                return false;
            }
            for (int m = 0; m < (sym && jb.i != jb.j ? 2 : 1); m++) {
                const int64_t at = diag ? jb.i : m == 0 ? (int64_t)jb.i * ny + jb.j : (int64_t)jb.j * ny + jb.i;
                out[at] = res[k].value;
                if (iters) iters[at] = res[k].iters;
                if (resid) resid[at] = res[k].residual;
                if (np > 0) std::copy(g.begin() + k * np, g.begin() + (k + 1) * np, grad + at * np);
            }
        }
        return true;
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
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    if (name && namelen) snprintf(name, namelen, "%s", p.name);
    *cc_major = p.major;
    *cc_minor = p.minor;
    *total_mem = (int64_t)p.totalGlobalMem;
    *sm_count = p.multiProcessorCount;
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

namespace {

cudaError_t upload_sp(Arena& ar, const ggc_sp_graphs& h, ggc_sp_graphs* d, cudaStream_t st) {
    *d = h;
    cudaError_t e;
    if ((e = upload(ar, &d->node_off, h.node_off, (int64_t)h.num_graphs + 1, st))) return e;
    if ((e = upload(ar, &d->sp_off, h.sp_off, (int64_t)h.num_graphs + 1, st))) return e;
    if ((e = upload(ar, &d->sp_u, h.sp_u, h.total_sp, st))) return e;
    if ((e = upload(ar, &d->sp_v, h.sp_v, h.total_sp, st))) return e;
    if ((e = upload(ar, &d->sp_len, h.sp_len, h.total_sp, st))) return e;
    return upload(ar, &d->node_feat, h.node_feat, h.total_nodes * h.node_cols, st);
}

int64_t sp_bytes(const ggc_sp_graphs& g) {
    return 16 * ((int64_t)g.num_graphs + 1) + 12 * g.total_sp + 8 * g.total_nodes * g.node_cols;
}

// Length tables larger than this (entries) are not built: such calls use the CPU.
constexpr int64_t SP_LENGTH_TABLE_MAX = int64_t(1) << 24;

}  // namespace

extern "C" int ggc_sp_pairs(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node,
                            const ggc_mk_program* length, const ggc_sp_options* o, const int32_t* pairs,
                            int64_t npairs, double* out, ggc_stats* stats, char* err, size_t errlen) {
    if (!X || !node || !length || !o || (!pairs && npairs) || (!out && npairs)) {
        say(err, errlen, "ggc_sp_pairs: a required argument is NULL");
        return GGC_ERR_ARG;
    }
    if (!Y) Y = X;
    const int L = o->num_lengths;
    if ((int64_t)L * L > SP_LENGTH_TABLE_MAX) {
        say(err, errlen, "ggc_sp_pairs: too many distinct path lengths for the length-kernel table");
        return GGC_ERR_UNSUPPORTED;
    }
    if (stats) memset(stats, 0, sizeof(*stats));
    if (npairs == 0) return GGC_OK;
    std::vector<std::pair<double, SpJob>> order;
    int64_t largest = 0;
    for (int64_t k = 0; k < npairs; k++) {
        const int i = pairs[2 * k], j = pairs[2 * k + 1];
        if (i < 0 || i >= X->num_graphs || j < 0 || j >= Y->num_graphs) {
            say(err, errlen, "ggc_sp_pairs: pair index out of range");
            return GGC_ERR_ARG;
        }
        const int64_t ma = X->sp_off[i + 1] - X->sp_off[i], mb = Y->sp_off[j + 1] - Y->sp_off[j];
        const int64_t na = X->node_off[i + 1] - X->node_off[i], nb = Y->node_off[j + 1] - Y->node_off[j];
        largest = std::max(largest, na * nb);
        order.push_back({double(ma) * double(mb) + double(na * nb), SpJob{i, j, 0, k}});
    }
    std::stable_sort(order.begin(), order.end(), [](const std::pair<double, SpJob>& a, const std::pair<double, SpJob>& b) {
        return a.first > b.first;
    });
    std::vector<SpJob> jobs;
    for (auto& p : order) jobs.push_back(p.second);
    const bool same = Y == X;
    if (o->mem_limit > 0 &&
        sp_bytes(*X) + (same ? 0 : sp_bytes(*Y)) + 8 * ((int64_t)L * L + largest) > o->mem_limit) {
        say(err, errlen, "device memory exhausted (mem_limit)");
        return GGC_ERR_OOM;
    }
    CK(cudaSetDevice(o->device));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct StreamGuard {
        cudaStream_t s;
        ~StreamGuard() { cudaStreamDestroy(s); }
    } guard{st};
    Arena ar;
    cudaEvent_t ev[4];
    for (auto& e : ev) CK(cudaEventCreate(&e));
    struct EventGuard {
        cudaEvent_t* e;
        ~EventGuard() {
            for (int k = 0; k < 4; k++) cudaEventDestroy(e[k]);
        }
    } eguard{ev};
    CK(cudaEventRecord(ev[0], st));
    ggc_sp_graphs dx, dy;
    CK(upload_sp(ar, *X, &dx, st));
    if (same)
        dy = dx;
    else
        CK(upload_sp(ar, *Y, &dy, st));
    const ggc_mk_program *dnode, *dlen;
    const double* dlengths;
    CK(upload(ar, &dnode, node, 1, st));
    CK(upload(ar, &dlen, length, 1, st));
    CK(upload(ar, &dlengths, o->lengths, L, st));
    CK(cudaEventRecord(ev[1], st));
    double* ltab;
    CK(ar.alloc((void**)&ltab, sizeof(double) * (size_t)std::max<int64_t>((int64_t)L * L, 1)));
    if (L > 0) {
        auto table = sp_length_table;
        GG_LAUNCH(table, std::min<int64_t>(((int64_t)L * L + SP_THREADS - 1) / SP_THREADS, 1024), SP_THREADS, st, dlen,
                  dlengths, L, ltab);
        CK(cudaGetLastError());
    }
    // Work space: the node-kernel matrices of a chunk of pairs.
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    int64_t avail = (int64_t)(FREE_SHARE * (double)free_b) - npairs * (int64_t)(sizeof(SpJob) + 8) - 64;
    if (o->mem_limit > 0) avail = std::min<int64_t>(avail, o->mem_limit - sp_bytes(*X) - sp_bytes(*Y) - 8 * (int64_t)L * L);
    const int64_t cap = std::min<int64_t>(CHUNK_BYTES, avail) / 8;
    if (largest > cap) {
        say(err, errlen, "device memory exhausted: one pair's node-kernel matrix does not fit");
        return GGC_ERR_OOM;
    }
    int64_t total = 0;
    for (auto& j : jobs) total += (int64_t)(X->node_off[j.i + 1] - X->node_off[j.i]) * (Y->node_off[j.j + 1] - Y->node_off[j.j]);
    double* work;
    SpJob* djobs;
    double* dout;
    int* counter;
    CK(ar.alloc((void**)&work, 8 * (size_t)std::max<int64_t>(std::min(total, cap), 1)));
    CK(ar.alloc((void**)&djobs, sizeof(SpJob) * jobs.size()));
    CK(ar.alloc((void**)&dout, sizeof(double) * (size_t)npairs));
    CK(ar.alloc((void**)&counter, sizeof(int)));
    int dev;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sp_walk, SP_THREADS, 0));
    int64_t max_grid = std::max(1, per_sm) * (int64_t)prop.multiProcessorCount;
    if (o->blocks > 0) max_grid = std::min<int64_t>(max_grid, o->blocks);
    int64_t grid_used = 0;
    const size_t nj = jobs.size();
    for (size_t k0 = 0; k0 < nj;) {
        size_t k1 = k0;
        int64_t off = 0;
        while (k1 < nj) {
            const int64_t w = (int64_t)(X->node_off[jobs[k1].i + 1] - X->node_off[jobs[k1].i]) *
                              (Y->node_off[jobs[k1].j + 1] - Y->node_off[jobs[k1].j]);
            if (off + w > cap) break;
            jobs[k1].kv = off;
            off += w;
            k1++;
        }
        const int n = (int)(k1 - k0);
        CK(cudaMemcpyAsync(djobs + k0, jobs.data() + k0, sizeof(SpJob) * n, cudaMemcpyHostToDevice, st));
        auto vertex = sp_vertex;
        GG_LAUNCH(vertex, n, SP_THREADS, st, dx, dy, djobs + k0, dnode, work);
        CK(cudaGetLastError());
        CK(cudaMemsetAsync(counter, 0, sizeof(int), st));
        const int64_t grid = std::min<int64_t>(max_grid, n);
        grid_used = std::max(grid_used, grid);
        auto walk = sp_walk;
        GG_LAUNCH(walk, grid, SP_THREADS, st, dx, dy, djobs + k0, n, counter, ltab, L, work, dout);
        CK(cudaGetLastError());
        k0 = k1;
    }
    CK(cudaEventRecord(ev[2], st));
    CK(cudaMemcpyAsync(out, dout, sizeof(double) * (size_t)npairs, cudaMemcpyDeviceToHost, st));
    CK(cudaEventRecord(ev[3], st));
    CK(cudaStreamSynchronize(st));
    if (stats) {
        float ms;
        CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
        stats->upload_ms = ms;
        CK(cudaEventElapsedTime(&ms, ev[1], ev[2]));
        stats->solve_ms = ms;
        CK(cudaEventElapsedTime(&ms, ev[2], ev[3]));
        stats->download_ms = ms;
        stats->blocks = (int32_t)grid_used;
        stats->threads = SP_THREADS;
        stats->scratch_bytes = 8 * std::min(total, cap);
    }
    return GGC_OK;
}
