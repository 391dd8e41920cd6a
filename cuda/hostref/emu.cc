// emu.cc: the library's device kernels (src/mgk.cuh) run on host threads by
// emu/emu.h, driven like ggcuda.cu drives them: pairs sorted largest first, cut
// into chunks of at most chunk_words of work space, mgk_prep then persistent
// mgk_solve blocks per chunk.
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
#include "../src/sp.cuh"
#include "hostref.h"

using namespace gg;

namespace {

template <typename T>
struct HostCopy {
    std::vector<T> nz_w, class_feat, node_feat, deg, start;
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
        DevGraphs<T> d;
        d.g = *g;
        d.nz_w = nz_w.data(), d.class_feat = class_feat.data(), d.node_feat = node_feat.data();
        d.deg = deg.data(), d.start = start.data();
        return d;
    }
};

int64_t last_staged = 0;

int64_t dsc(const ggc_graphs& g, int i, int f) { return g.desc[(int64_t)i * GGC_DESC_FIELDS + f]; }

template <typename T, bool Table>
bool run(const DevGraphs<T>& dx, const DevGraphs<T>& dy, const ggc_graphs& hx, const ggc_graphs& hy,
         std::vector<MgkJob>& jobs, const ggc_mk_program* node, const ggc_mk_program* edge, MgkParams<T> prm,
         int blocks, int64_t chunk_words, int64_t stage_budget, std::vector<MgkResult>& res, std::vector<int>& bad,
         int np, std::vector<double>& grad) {
    const size_t nj = jobs.size();
    const int64_t nvec = np > 0 ? 8 : 7, ntab = np > 0 ? 2 : 1;
    grad.assign(nj * (size_t)np + 1, NAN);
    res.assign(nj, MgkResult{});
    bad.assign(nj, 0);
    std::vector<int64_t> words(nj);
    for (size_t k = 0; k < nj; k++) {
        int64_t w = nvec * dsc(hx, jobs[k].i, GGC_DESC_N) * dsc(hy, jobs[k].j, GGC_DESC_N);
        if (Table) w += ntab * dsc(hx, jobs[k].i, GGC_DESC_NCLASS) * dsc(hy, jobs[k].j, GGC_DESC_NCLASS);
        words[k] = (w + 1) & ~int64_t(1);
        if (words[k] > chunk_words) return false;
    }
    // Staging as ggcuda.cu's run_jobs decides it: a pair is staged when its
    // octiles fit the budget, and a chunk's launch gets as much dynamic
    // shared memory as its largest staged pair.
    std::vector<int64_t> sbytes(nj);
    for (size_t k = 0; k < nj; k++) {
        sbytes[k] = stage_pair_bytes<T>(hx, jobs[k].i, hy, jobs[k].j);
        jobs[k].stage = sbytes[k] <= stage_budget ? 1 : 0;
    }
    std::vector<T> work((size_t)chunk_words + 1);
    for (size_t k0 = 0; k0 < nj;) {
        size_t k1 = k0;
        int64_t off = 0;
        while (k1 < nj && off + words[k1] <= chunk_words) {
            jobs[k1].vec = off;
            jobs[k1].tab = off + nvec * dsc(hx, jobs[k1].i, GGC_DESC_N) * dsc(hy, jobs[k1].j, GGC_DESC_N);
            off += words[k1];
            k1++;
        }
        const int n = (int)(k1 - k0);
        size_t dyn = 0;
        for (size_t k = k0; k < k1; k++)
            if (jobs[k].stage) dyn = std::max(dyn, (size_t)sbytes[k]);
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
    const bool sym = o->symmetric || Y == nullptr;
    if (sym) Y = X;
    HostCopy<T> cx, cy;
    DevGraphs<T> dx = cx.dev(X), dy = sym ? dx : cy.dev(Y);
    std::vector<std::pair<double, MgkJob>> tj, ej;
    for (int i = 0; i < X->num_graphs; i++)
        for (int j = sym ? i : 0; j < Y->num_graphs; j++) {
            const double cost = double(dsc(*X, i, GGC_DESC_NNZ) + dsc(*X, i, GGC_DESC_N)) *
                                double(dsc(*Y, j, GGC_DESC_NNZ) + dsc(*Y, j, GGC_DESC_N));
            ((o->flags & GGC_FLAG_NO_TABLE) ? ej : tj).push_back({cost, MgkJob{i, j, 0, 0, 0, 0}});
        }
    auto order = [](std::vector<std::pair<double, MgkJob>>& v) {
        std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first > b.first; });
        std::vector<MgkJob> r;
        for (auto& p : v) r.push_back(p.second);
        return r;
    };
    std::vector<MgkJob> tjobs = order(tj), ejobs = order(ej);
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
        for (size_t k = 0; k < jobs.size(); k++) {
            if (bad[k]) return false;
            for (int m = 0; m < (sym && jobs[k].i != jobs[k].j ? 2 : 1); m++) {
                const int64_t at = m == 0 ? (int64_t)jobs[k].i * ny + jobs[k].j : (int64_t)jobs[k].j * ny + jobs[k].i;
                out[at] = res[k].value;
                if (iters) iters[at] = res[k].iters;
                if (np > 0) std::copy(g.begin() + k * np, g.begin() + (k + 1) * np, grad + at * np);
            }
        }
        return true;
    };
    if (!scatter(tjobs, tres, tbad, tgrad) || !scatter(ejobs, eres, ebad, egrad)) {
        snprintf(err, errlen, "node kernel gave a negative or non-finite value");
        return GGC_ERR_ARG;
    }
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
    std::vector<T> ltab((size_t)L * L + 1, T(NAN));
    emu::launch(2, SP_THREADS, [&] { sp_length_table<T>(length, lengths, L, ltab.data()); }, 0, "sp_length_table");
    std::vector<std::pair<double, SpJob>> order;
    for (int64_t k = 0; k < npairs; k++) {
        const int i = pairs[2 * k], j = pairs[2 * k + 1];
        const double c = double(X->sp_off[i + 1] - X->sp_off[i]) * double(Y->sp_off[j + 1] - Y->sp_off[j]);
        order.push_back({c, SpJob{i, j, 0, k}});
    }
    std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::vector<SpJob> jobs;
    for (auto& p : order) jobs.push_back(p.second);
    std::vector<T> work((size_t)chunk_words + 1);
    std::fill(out, out + npairs, NAN);
    for (size_t k0 = 0; k0 < jobs.size();) {
        size_t k1 = k0;
        int64_t off = 0;
        while (k1 < jobs.size()) {
            const int64_t w = (X->node_off[jobs[k1].i + 1] - X->node_off[jobs[k1].i]) *
                              (Y->node_off[jobs[k1].j + 1] - Y->node_off[jobs[k1].j]);
            if (off + w > chunk_words) break;
            jobs[k1].kv = off;
            off += w;
            k1++;
        }
        if (k1 == k0) return GGC_ERR_OOM;
        // Poison the work space: the kernels must not read what they did not write.
        std::fill(work.begin(), work.end(), T(NAN));
        const int n = (int)(k1 - k0);
        SpJob* jb = jobs.data() + k0;
        emu::launch(n, SP_THREADS, [&] { sp_vertex<T>(*X, *Y, jb, node, work.data()); }, 0, "sp_vertex");
        int counter = 0;
        emu::launch(std::min(blocks, n), SP_THREADS,
                    [&] { sp_walk<T>(*X, *Y, jb, n, &counter, ltab.data(), L, work.data(), out); }, 0, "sp_walk");
        k0 = k1;
    }
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
