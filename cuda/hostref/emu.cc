// emu.cc: the library's device kernels (src/mgk.cuh, src/sp.cuh) run on host
// threads by the execution emulator (emu/emu.h), driven with ggcuda.cu's own
// plan (src/plan.cuh): the same jobs in the same order, staging, chunks and
// work-space offsets, and the same scatter of the results. What is the
// emulation's own: the launches (emu::launch, on host memory), the host
// copies of the values in precision T, the emulated device's shared memory
// (an sm_80's), a word budget of work space passed by the caller instead of
// the device memory, and a persistent grid of o->blocks (default 3) blocks.
// The emulation's block sizes (fewer host threads); emu256.cc builds this
// file again at the GPU's 256 threads a block.
#ifndef GG_MGK_THREADS
#define GG_MGK_THREADS 64
#define GG_PREP_THREADS 32
#define GG_SP_THREADS 64
#endif
#include "../emu/emu.h"
// emu.h first: the kernels' CUDA keywords must be defined before they are read.
#include <algorithm>
#include <climits>
#include <cstdio>

#include "../src/mgk.cuh"
#include "../src/plan.cuh"
#include "../src/sp.cuh"
#include "hostref.h"

using namespace gg;

namespace {

template <typename T>
struct HostCopy {
    std::vector<T> nz_w, class_feat, node_feat, deg, start, cw;
    static void conv(std::vector<T>& v, const double* s, int64_t n) {
        v.resize(n > 0 ? n : 1);
        for (int64_t i = 0; i < n; i++) v[i] = T(s[i]);
    }
    DevGraphs<T> dev(const ggc_graphs* g) {
        conv(nz_w, g->nz_w, g->total_nz);
        conv(class_feat, g->class_feat, g->total_classes * g->edge_cols);
        conv(node_feat, g->node_feat, g->total_nodes * g->node_cols);
        conv(deg, g->deg, g->total_nodes);
        conv(start, g->start, g->total_nodes);
        if (g->cw) conv(cw, g->cw, g->total_nodes);
        DevGraphs<T> d;
        d.g = *g;
        d.nz_w = nz_w.data(), d.class_feat = class_feat.data(), d.node_feat = node_feat.data();
        d.deg = deg.data(), d.start = start.data();
        d.cw = g->cw ? cw.data() : nullptr;
        return d;
    }
};

int64_t last_staged = 0;

// run is ggcuda.cu's run_jobs on the emulator: the plan's staging and chunks
// (plan.cuh) with chunk_words words of work space at most; false when one
// job needs more.
template <typename T, bool Table>
bool run(const DevGraphs<T>& dx, const DevGraphs<T>& dy, const ggc_graphs& hx, const ggc_graphs& hy,
         std::vector<MgkJob>& jobs, const ggc_mk_program* node, const ggc_mk_program* edge, MgkParams<T> prm,
         int blocks, int64_t chunk_words, int64_t stage_budget, std::vector<MgkResult>& res, std::vector<int>& bad,
         int np, std::vector<double>& grad) {
    const size_t nj = jobs.size();
    grad.assign(nj * (size_t)np + 1, NAN);
    res.assign(nj, MgkResult{});
    bad.assign(nj, 0);
    // Staging: a pair is staged when its octiles fit the budget, and a
    // chunk's launch gets as much dynamic shared memory as its largest
    // staged pair.
    int64_t call_dyn = 0;
    const std::vector<int64_t> sbytes = mgk_stage<T>(hx, hy, jobs, stage_budget, &call_dyn);
    const MgkWords words = mgk_words(hx, hy, jobs, np, Table);
    if (words.largest > chunk_words) return false;
    std::vector<T> work((size_t)chunk_words + 1);
    for (size_t k0 = 0; k0 < nj;) {
        const size_t k1 = mgk_chunk(jobs, words, hx, hy, np, k0, chunk_words);
        const int n = (int)(k1 - k0);
        const size_t dyn = (size_t)mgk_chunk_dyn(jobs, sbytes, k0, k1);
        // Poison the work space: the kernels must not read what they did not write.
        std::fill(work.begin(), work.end(), T(NAN));
        MgkJob* jb = jobs.data() + k0;
        int* bd = bad.data() + k0;
        emu::launch(
            n, PREP_THREADS, [&] { mgk_prep<T, Table>(dx, dy, jb, node, edge, prm, work.data(), bd); }, 0,
            "mgk_prep");
        int counter = 0;
        MgkResult* rs = res.data() + k0;
        if (np > 0) {
            double* gr = grad.data() + k0 * np;
            emu::launch(std::min(blocks, n), MGK_THREADS,
                        [&] { mgk_gsolve<T, Table>(dx, dy, jb, n, &counter, edge, prm, work.data(), rs, gr, np); },
                        dyn, "mgk_gsolve");
            emu::launch(
                n, PREP_THREADS, [&] { mgk_gterms<T, Table>(dx, dy, jb, node, edge, work.data(), gr, np); }, 0,
                "mgk_gterms");
        } else {
            emu::launch(std::min(blocks, n), MGK_THREADS,
                        [&] { mgk_solve<T, Table>(dx, dy, jb, n, &counter, edge, prm, work.data(), rs); }, dyn,
                        "mgk_solve");
        }
        k0 = k1;
    }
    return true;
}

template <typename T>
int gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node, const ggc_mk_program* edge,
         const ggc_mgk_options* o, int64_t chunk_words, double* out, double* grad, int32_t* iters, char* err,
         size_t errlen) {
    const int np = grad ? 1 + node->nparams + edge->nparams : 0;
    const bool diag = o->flags & GGC_FLAG_DIAG;
    const bool sym = o->symmetric || Y == nullptr || diag;
    if (sym) Y = X;
    HostCopy<T> cx, cy;
    DevGraphs<T> dx = cx.dev(X), dy = sym ? dx : cy.dev(Y);
    std::vector<MgkJob> tjobs, ejobs;
    mgk_jobs(*X, *Y, sym, diag, o->flags & GGC_FLAG_NO_TABLE, tjobs, ejobs);
    MgkParams<T> prm;
    prm.q = T(o->q), prm.tol = T(o->tol), prm.lmin = o->lmin, prm.max_iter = o->max_iter, prm.adj_tol = T(o->adj_tol);
    std::vector<double> tgrad, egrad;
    const int blocks = o->blocks > 0 ? o->blocks : 3;
    std::vector<MgkResult> tres, eres;
    std::vector<int> tbad, ebad;
    // The emulated device has an sm_80's shared memory (164 KiB an SM, 163
    // KiB a block, 1 KiB reserved a block).
    const int64_t budget = stage_budget(167936, 166912, 1024, sizeof(MgkShared<T>), o->stage_limit);
    if (!run<T, true>(dx, dy, *X, *Y, tjobs, node, edge, prm, blocks, chunk_words, budget, tres, tbad, np, tgrad) ||
        !run<T, false>(dx, dy, *X, *Y, ejobs, node, edge, prm, blocks, chunk_words, budget, eres, ebad, np, egrad)) {
        snprintf(err, errlen, "a pair needs more than %lld words", (long long)chunk_words);
        return GGC_ERR_OOM;
    }
    int64_t staged = 0;
    for (const auto* rs : {&tres, &eres})
        for (const MgkResult& r : *rs) staged += r.staged;
    last_staged = staged;
    const int ny = Y->num_graphs;
    auto scatter = [&](const std::vector<MgkJob>& jobs, const std::vector<MgkResult>& res, const std::vector<int>& bad,
                       const std::vector<double>& g) {
        const int64_t k = mgk_scatter(jobs, res, bad, g, np, sym, diag, ny, out, iters, nullptr, grad);
        if (k >= 0) mgk_bad_pair_message(err, errlen, jobs[k]);
        return k < 0;
    };
    if (!scatter(tjobs, tres, tbad, tgrad) || !scatter(ejobs, eres, ebad, egrad)) return GGC_ERR_ARG;
    return GGC_OK;
}

}  // namespace

extern "C" int hr_emu_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                           const ggc_mk_program* edge, const ggc_mgk_options* opt, int64_t chunk_words, double* out,
                           int32_t* iters, char* err, size_t errlen) {
    if (opt->precision == 32) return gram<float>(X, Y, node, edge, opt, chunk_words, out, nullptr, iters, err, errlen);
    return gram<double>(X, Y, node, edge, opt, chunk_words, out, nullptr, iters, err, errlen);
}

extern "C" int hr_emu_gram_grad(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                                const ggc_mk_program* edge, const ggc_mgk_options* opt, int64_t chunk_words,
                                double* out, double* grad, int32_t* iters, char* err, size_t errlen) {
    if (opt->precision == 32) return gram<float>(X, Y, node, edge, opt, chunk_words, out, grad, iters, err, errlen);
    return gram<double>(X, Y, node, edge, opt, chunk_words, out, grad, iters, err, errlen);
}

extern "C" int64_t hr_emu_staged(void) { return last_staged; }

namespace {

template <typename T>
int emu_sp(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node, const ggc_mk_program* length,
           const double* lengths, int L, const int32_t* pairs, int64_t npairs, int blocks, int64_t chunk_words,
           double* out) {
    if (!Y) Y = X;
    std::fill(out, out + npairs, NAN);
    // The plan of ggcuda.cu's sp_pairs (plan.cuh), in chunks of chunk_words.
    SpJobs plan;
    if (!sp_jobs(*X, *Y, pairs, npairs, &plan)) return GGC_ERR_ARG;
    if (plan.largest > chunk_words) return GGC_ERR_OOM;
    const size_t nj = plan.jobs.size();
    std::vector<SpJob> jobs(nj);
    std::vector<size_t> bounds;
    sp_chunks(*X, *Y, plan.jobs, chunk_words, jobs.data(), bounds);
    std::vector<T> ltab((size_t)L * L + 1, T(NAN));
    emu::launch(2, SP_THREADS, [&] { sp_length_table<T>(length, lengths, L, ltab.data()); }, 0, "sp_length_table");
    std::vector<T> work((size_t)chunk_words + 1);
    std::vector<double> res(nj + 1, NAN);
    for (size_t c = 0; c + 1 < bounds.size(); c++) {
        const size_t k0 = bounds[c], k1 = bounds[c + 1];
        // Poison the work space: the kernels must not read what they did not write.
        std::fill(work.begin(), work.end(), T(NAN));
        const int n = (int)(k1 - k0);
        SpJob* jb = jobs.data() + k0;
        emu::launch(n, SP_THREADS, [&] { sp_vertex<T>(*X, *Y, jb, node, work.data()); }, 0, "sp_vertex");
        int counter = 0;
        emu::launch(std::min(blocks, n), SP_THREADS,
                    [&] { sp_walk<T>(*X, *Y, jb, n, &counter, ltab.data(), L, work.data(), res.data()); }, 0,
                    "sp_walk");
    }
    sp_scatter(plan.jobs, res.data(), out);
    return GGC_OK;
}

}  // namespace

extern "C" int hr_emu_sp(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node,
                         const ggc_mk_program* length, const double* lengths, int L, const int32_t* pairs,
                         int64_t npairs, int blocks, int64_t chunk_words, int precision, double* out) {
    if (precision == 32)
        return emu_sp<float>(X, Y, node, length, lengths, L, pairs, npairs, blocks, chunk_words, out);
    return emu_sp<double>(X, Y, node, length, lengths, L, pairs, npairs, blocks, chunk_words, out);
}

// hr_emu_threads reports the block sizes this build runs the kernels with:
// mgk_solve/mgk_gsolve, mgk_prep/mgk_gterms, the shortest-path kernels.
extern "C" void hr_emu_threads(int* out) {
    out[0] = MGK_THREADS, out[1] = PREP_THREADS, out[2] = SP_THREADS;
}

#ifndef GG_EMU_SECOND_BUILD
// hr_emu_seed returns the emulator's base seed ($GGCUDA_EMU_SEED).
extern "C" uint64_t hr_emu_seed(void) { return emu::seed(); }
#endif
