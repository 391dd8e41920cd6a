// plan.cuh: the host-side planning of the library's device work, one copy for
// the C API (ggcuda.cu) and for the emulation drivers (hostref/emu.cc), which
// run the same kernels on host threads: which pairs become jobs and in which
// order, the work space of each job, which pairs are staged in shared memory,
// how jobs are cut into chunks with their work-space offsets, and how results
// go back to the caller's arrays. Plain C++ (no CUDA runtime calls), compiled
// by nvcc for the library and by g++ for the emulations; the callers own the
// budgets (device memory, or the emulation's word budget) and the launches.
#pragma once
#include <stdint.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "ggcuda.h"
#include "mgk.cuh"
#include "sp.cuh"

namespace gg {

// ---- The marginalized kernel (mgk.cuh). ----

// Class tables larger than this (entries) are not built: such pairs evaluate
// κe inside the product instead.
constexpr int64_t TABLE_BUDGET = 1 << 22;

// desc is field f of graph i's descriptor.
inline int64_t desc(const ggc_graphs& g, int i, int f) { return g.desc[(int64_t)i * GGC_DESC_FIELDS + f]; }

// by_cost returns the jobs of v ordered by cost, largest first; equal costs
// keep their order (stable), so the plan is deterministic.
template <typename Job>
std::vector<Job> by_cost(std::vector<std::pair<double, Job>>& v) {
    std::stable_sort(v.begin(), v.end(),
                     [](const std::pair<double, Job>& a, const std::pair<double, Job>& b) { return a.first > b.first; });
    std::vector<Job> r;
    r.reserve(v.size());
    for (auto& p : v) r.push_back(p.second);
    return r;
}

// mgk_cost is the cost of the pair (X[i], Y[j]) by which jobs are ordered:
// the terms of one product mat-vec, (nnz + n)·(nnz' + n').
inline double mgk_cost(const ggc_graphs& X, int i, const ggc_graphs& Y, int j) {
    return double(desc(X, i, GGC_DESC_NNZ) + desc(X, i, GGC_DESC_N)) *
           double(desc(Y, j, GGC_DESC_NNZ) + desc(Y, j, GGC_DESC_N));
}

// mgk_jobs lists the pairs of a call as jobs, largest first by mgk_cost:
// X × Y, the upper triangle i ≤ j when sym, or the diagonal (i, i) alone
// when diag. A pair goes to tjobs (κe from a class table) when its table has
// at most TABLE_BUDGET entries and no_table is false, else to ejobs (κe
// evaluated inside the product).
inline void mgk_jobs(const ggc_graphs& X, const ggc_graphs& Y, bool sym, bool diag, bool no_table,
                     std::vector<MgkJob>& tjobs, std::vector<MgkJob>& ejobs) {
    std::vector<std::pair<double, MgkJob>> tj, ej;
    const int nx = (int)X.num_graphs, ny = (int)Y.num_graphs;
    for (int i = 0; i < nx; i++)
        for (int j = diag ? i : sym ? i : 0; j < (diag ? i + 1 : ny); j++) {
            const double cost = mgk_cost(X, i, Y, j);
            const int64_t ncls = desc(X, i, GGC_DESC_NCLASS) * desc(Y, j, GGC_DESC_NCLASS);
            const bool table = ncls <= TABLE_BUDGET && !no_table;
            (table ? tj : ej).push_back({cost, MgkJob{i, j, 0, 0, 0, 0}});
        }
    tjobs = by_cost(tj);
    ejobs = by_cost(ej);
}

// Gram jobs of at most WARP_MAX_TERMS (mgk_cost: two molecules of about 40
// atoms, n + nnz ≈ 128 each) are solved one warp a pair (mgk_solve_warp)
// when a chunk has at least as many of them as the launch has warps, so
// that every warp gets one; the others, and all of a chunk with too few
// small ones, one block a pair (mgk_solve). A first choice from the counts
// of cuda/README.md ("Where the time goes"), to be measured on a GPU.
constexpr double WARP_MAX_TERMS = 1 << 14;

// warp_split returns the first job of the chunk [k0, k1) that mgk_solve_warp
// solves (k1: none): the chunk's jobs of at most WARP_MAX_TERMS, a suffix of
// it since jobs are ordered by cost, when there are at least warp_slots of
// them.
inline size_t warp_split(const std::vector<MgkJob>& jobs, const ggc_graphs& hx, const ggc_graphs& hy, size_t k0,
                         size_t k1, int64_t warp_slots) {
    size_t ks = k1;
    while (ks > k0 && mgk_cost(hx, jobs[ks - 1].i, hy, jobs[ks - 1].j) <= WARP_MAX_TERMS) ks--;
    return (int64_t)(k1 - ks) >= warp_slots ? ks : k1;
}

// Gram jobs of at least WIDE_MIN_TERMS (two graphs of about 300 nodes and
// 350 edges, n + nnz ≈ 1024 each) are solved each by a grid of blocks in
// turn (mgk_wide_*) when a chunk has fewer of them than the block solver's
// persistent grid has blocks, which one block a pair would leave mostly idle
// (cuda/README.md, "Where the time goes"). A first choice, to be measured on
// a GPU.
constexpr double WIDE_MIN_TERMS = 1 << 20;

// wide_split returns the end of the chunk's jobs that are solved by a grid
// each: its leading jobs (the largest) of at least WIDE_MIN_TERMS when they
// are fewer than block_slots, none otherwise (k0); every job with all
// (GGC_FLAG_WIDE_ALL, tests).
inline size_t wide_split(const std::vector<MgkJob>& jobs, const ggc_graphs& hx, const ggc_graphs& hy, size_t k0,
                         size_t k1, int64_t block_slots, bool all) {
    if (all) return k1;
    size_t kw = k0;
    while (kw < k1 && mgk_cost(hx, jobs[kw].i, hy, jobs[kw].j) >= WIDE_MIN_TERMS) kw++;
    return (int64_t)(kw - k0) < block_slots ? kw : k0;
}

// mgk_nvec is the number of n·n' vectors of a job's work space: seven for a
// Gram job (s, dd, inv, y, r, p, ap), eight for a gradient job (np > 0).
inline int64_t mgk_nvec(int np) { return np > 0 ? 8 : 7; }
// mgk_ntab is the number of class tables of a table job: two for gradients.
inline int64_t mgk_ntab(int np) { return np > 0 ? 2 : 1; }

// MgkWords is the work space of a list of jobs, in elements of T ("words").
struct MgkWords {
    std::vector<int64_t> w;  // each job's, rounded up to even (16-byte aligned jobs)
    int64_t total = 0, largest = 0;
};

// mgk_words returns each job's work space: mgk_nvec(np)·n·n', plus
// mgk_ntab(np)·nclass·nclass' for table jobs, rounded up to an even count.
inline MgkWords mgk_words(const ggc_graphs& hx, const ggc_graphs& hy, const std::vector<MgkJob>& jobs, int np,
                          bool table) {
    const int64_t nvec = mgk_nvec(np), ntab = mgk_ntab(np);
    MgkWords r;
    r.w.resize(jobs.size());
    for (size_t k = 0; k < jobs.size(); k++) {
        const int64_t na = desc(hx, jobs[k].i, GGC_DESC_N), nb = desc(hy, jobs[k].j, GGC_DESC_N);
        int64_t w = nvec * na * nb;
        if (table) w += ntab * desc(hx, jobs[k].i, GGC_DESC_NCLASS) * desc(hy, jobs[k].j, GGC_DESC_NCLASS);
        w = (w + 1) & ~int64_t(1);  // keep every job 16-byte aligned
        r.w[k] = w;
        r.total += w;
        r.largest = std::max(r.largest, w);
    }
    return r;
}

// mgk_stage marks the jobs whose pair fits stage_max bytes of dynamic shared
// memory (stage_pair_bytes) as staged and returns every job's staged bytes;
// *call_dyn receives the largest staged pair's bytes (0: none staged), the
// most dynamic shared memory a launch of these jobs takes.
template <typename T>
std::vector<int64_t> mgk_stage(const ggc_graphs& hx, const ggc_graphs& hy, std::vector<MgkJob>& jobs,
                               int64_t stage_max, int64_t* call_dyn) {
    std::vector<int64_t> sbytes(jobs.size());
    int64_t dyn = 0;
    for (size_t k = 0; k < jobs.size(); k++) {
        sbytes[k] = stage_pair_bytes<T>(hx, jobs[k].i, hy, jobs[k].j);
        jobs[k].stage = sbytes[k] <= stage_max ? 1 : 0;
        if (jobs[k].stage) dyn = std::max(dyn, sbytes[k]);
    }
    *call_dyn = dyn;
    return sbytes;
}

// mgk_chunk cuts the next chunk of jobs, from k0 on, that fits cap words of
// work space (cap ≥ the largest job's words, so a chunk is never empty), and
// gives each of its jobs its offsets into the chunk's work space: vec for
// its vectors, tab (after them) for its class tables. Returns the chunk's
// end k1.
inline size_t mgk_chunk(std::vector<MgkJob>& jobs, const MgkWords& words, const ggc_graphs& hx,
                        const ggc_graphs& hy, int np, size_t k0, int64_t cap) {
    const int64_t nvec = mgk_nvec(np);
    size_t k1 = k0;
    int64_t off = 0;
    while (k1 < jobs.size() && off + words.w[k1] <= cap) {
        jobs[k1].vec = off;
        jobs[k1].tab = off + nvec * desc(hx, jobs[k1].i, GGC_DESC_N) * desc(hy, jobs[k1].j, GGC_DESC_N);
        off += words.w[k1];
        k1++;
    }
    return k1;
}

// mgk_chunk_dyn is the dynamic shared memory of the launch of jobs [k0, k1):
// its largest staged pair's bytes (0 when no pair is staged, so that such
// chunks run unstaged).
inline int64_t mgk_chunk_dyn(const std::vector<MgkJob>& jobs, const std::vector<int64_t>& sbytes, size_t k0,
                             size_t k1) {
    int64_t dyn = 0;
    for (size_t k = k0; k < k1; k++)
        if (jobs[k].stage) dyn = std::max(dyn, sbytes[k]);
    return dyn;
}

// mgk_scatter writes the results of jobs (res, and np gradient columns a job
// in g) into out, iters, resid and grad (each optional but out): entry
// i·ny + j, and j·ny + i too for an off-diagonal pair of a symmetric call;
// entry i when diag. It stops at the first job its bad flag marks (a
// negative or non-finite node kernel value) and returns that job's index,
// having written the jobs before it; -1 when none is bad.
inline int64_t mgk_scatter(const std::vector<MgkJob>& jobs, const std::vector<MgkResult>& res,
                           const std::vector<int>& bad, const std::vector<double>& g, int np, bool sym, bool diag,
                           int ny, double* out, int32_t* iters, double* resid, double* grad) {
    for (size_t k = 0; k < jobs.size(); k++) {
        const MgkJob jb = jobs[k];
        if (bad[k]) return (int64_t)k;
        for (int m = 0; m < (sym && jb.i != jb.j ? 2 : 1); m++) {
            const int64_t at = diag ? jb.i : m == 0 ? (int64_t)jb.i * ny + jb.j : (int64_t)jb.j * ny + jb.i;
            out[at] = res[k].value;
            if (iters) iters[at] = res[k].iters;
            if (resid) resid[at] = res[k].residual;
            if (np > 0) std::copy(g.begin() + k * np, g.begin() + (k + 1) * np, grad + at * np);
        }
    }
    return -1;
}

// mgk_bad_pair_message writes the error of a job that mgk_scatter found bad.
inline void mgk_bad_pair_message(char* err, size_t errlen, const MgkJob& jb) {
    if (!err || !errlen) return;
    char a[64];
    snprintf(a, sizeof a, "(%d, %d)", jb.i, jb.j);
    snprintf(err, errlen, "node kernel gave a negative or non-finite value in pair %s", a);
}

// ---- The shortest-path kernel (sp.cuh). ----

// sp_job_words is the work space of a job (its n·n' node-kernel matrix).
inline int64_t sp_job_words(const ggc_sp_graphs& X, const ggc_sp_graphs& Y, const SpJob& j) {
    return (X.node_off[j.i + 1] - X.node_off[j.i]) * (Y.node_off[j.j + 1] - Y.node_off[j.j]);
}

// SpJobs is the job list of a shortest-path call.
struct SpJobs {
    std::vector<SpJob> jobs;  // largest first; out: the pair's index in the call's list
    int64_t total = 0, largest = 0;  // words (sp_job_words) of all jobs, of the largest
};

// sp_jobs lists the pairs (pairs[2k], pairs[2k+1]) of X × Y as jobs, largest
// first by the cost m·m' + n·n' (SP-edge pairs, then node-kernel entries),
// stable. Returns false when a pair index is out of range.
inline bool sp_jobs(const ggc_sp_graphs& X, const ggc_sp_graphs& Y, const int32_t* pairs, int64_t npairs,
                    SpJobs* r) {
    std::vector<std::pair<double, SpJob>> order;
    order.reserve((size_t)std::max<int64_t>(npairs, 0));
    r->total = r->largest = 0;
    for (int64_t k = 0; k < npairs; k++) {
        const int i = pairs[2 * k], j = pairs[2 * k + 1];
        if (i < 0 || i >= X.num_graphs || j < 0 || j >= Y.num_graphs) return false;
        const int64_t ma = X.sp_off[i + 1] - X.sp_off[i], mb = Y.sp_off[j + 1] - Y.sp_off[j];
        const SpJob jb{i, j, 0, k};
        const int64_t w = sp_job_words(X, Y, jb);
        r->largest = std::max(r->largest, w);
        r->total += w;
        order.push_back({double(ma) * double(mb) + double(w), jb});
    }
    r->jobs = by_cost(order);
    return true;
}

// sp_chunks cuts the ordered jobs into chunks of at most chunk_words of
// node-kernel matrices (chunk_words ≥ the largest job's words): hjobs[k]
// receives job k with its offset kv in its chunk's work space and out = k
// (its slot in the results), bounds the chunks' job ranges [bounds[c],
// bounds[c+1]) after a leading 0.
inline void sp_chunks(const ggc_sp_graphs& X, const ggc_sp_graphs& Y, const std::vector<SpJob>& jobs,
                      int64_t chunk_words, SpJob* hjobs, std::vector<size_t>& bounds) {
    const size_t nj = jobs.size();
    bounds.assign(1, 0);
    for (size_t k = 0; k < nj;) {
        int64_t off = 0;
        while (k < nj && off + sp_job_words(X, Y, jobs[k]) <= chunk_words) {
            hjobs[k] = jobs[k];
            hjobs[k].kv = off;
            hjobs[k].out = (int64_t)k;
            off += sp_job_words(X, Y, jobs[k]);
            k++;
        }
        bounds.push_back(k);
    }
}

// sp_scatter writes the results by slot (res[k], job k's) into out by pair.
inline void sp_scatter(const std::vector<SpJob>& jobs, const double* res, double* out) {
    for (size_t k = 0; k < jobs.size(); k++) out[jobs[k].out] = res[k];
}

}  // namespace gg
