// hostref.cc: serial host versions of the CUDA kernels' arithmetic, built by g++
// from the same headers (cuda/include/gg), so the Go tests can compare them with
// gokernel/microkernel, gokernel/octile and gokernel/mgk.
#include "hostref.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "gg/mk.h"
#include "gg/pair.h"
#include "gg/tile.h"

using namespace gg;

extern "C" double hr_mk_eval64(const ggc_mk_program* p, const double* x, const double* y) {
    return mk_eval<double>(*p, x, y);
}
extern "C" float hr_mk_eval32(const ggc_mk_program* p, const float* x, const float* y) {
    return mk_eval<float>(*p, x, y);
}
extern "C" double hr_mk_eval_d64(const ggc_mk_program* p, const double* x, const double* y, int t, double* d) {
    const Dual<double> r = mk_eval_d<double>(*p, x, y, t);
    *d = r.d;
    return r.v;
}
extern "C" float hr_mk_eval_d32(const ggc_mk_program* p, const float* x, const float* y, int t, float* d) {
    const Dual<float> r = mk_eval_d<float>(*p, x, y, t);
    *d = r.d;
    return r.v;
}

namespace {

template <typename T>
struct NzTable {
    const T* kappa;
    int nb;
    GG_HD T operator()(int32_t ka, int32_t kb) const { return kappa[ka * nb + kb]; }
};

template <typename T>
void tile_pair(uint64_t ma, const uint8_t* pa, const T* wa, uint64_t mb, const uint8_t* pb, const T* wb,
               const T* kappa, const T* X, T* yd, T* ys) {
    const int na = popc64(ma), nb = popc64(mb);
    NzTable<T> ke{kappa, nb};
    TileView a{ma, 0}, b{mb, 0};
    for (int r = 0; r < 8; r++)
        for (int rp = 0; rp < 8; rp++) yd[8 * r + rp] = dense_entry<T>(a, wa, b, wb, ke, X, r, rp);
    for (int s = 0; s < 64; s++) ys[s] = T(0);
    for (int k = 0; k < na * nb; k++) {
        int slot;
        T v = sparse_term<T>(k, 0, na, pa, wa, 0, nb, pb, wb, ke, X, &slot);
        ys[slot] += v;
    }
}

}  // namespace

extern "C" void hr_tile_pair64(uint64_t ma, const uint8_t* pa, const double* wa, uint64_t mb, const uint8_t* pb,
                               const double* wb, const double* kappa, const double* X, double* yd, double* ys) {
    tile_pair<double>(ma, pa, wa, mb, pb, wb, kappa, X, yd, ys);
}
extern "C" void hr_tile_pair32(uint64_t ma, const uint8_t* pa, const float* wa, uint64_t mb, const uint8_t* pb,
                               const float* wb, const float* kappa, const float* X, float* yd, float* ys) {
    tile_pair<float>(ma, pa, wa, mb, pb, wb, kappa, X, yd, ys);
}

namespace {

// Host copy of a graph list in precision T.
template <typename T>
struct HostGraphs {
    const ggc_graphs* g;
    std::vector<T> nz_w, class_feat, node_feat, deg, start;
    explicit HostGraphs(const ggc_graphs* g_) : g(g_) {
        conv(nz_w, g->nz_w, g->total_nz);
        conv(class_feat, g->class_feat, g->total_classes * g->edge_cols);
        conv(node_feat, g->node_feat, g->total_nodes * g->node_cols);
        conv(deg, g->deg, g->total_nodes);
        conv(start, g->start, g->total_nodes);
    }
    static void conv(std::vector<T>& v, const double* s, int64_t n) {
        v.resize(n > 0 ? n : 1);
        for (int64_t i = 0; i < n; i++) v[i] = T(s[i]);
    }
    GraphRef<T> ref(int i) const {
        return make_graph_ref<T>(*g, i, nz_w.data(), class_feat.data(), node_feat.data(), deg.data(),
                                 start.data());
    }
};

// mulw_host: y = W·(scale∘x) (scale may be null), tile row pair by tile row
// pair, each tile pair by the primitive the device kernel would pick.
template <typename T, typename K>
void mulw_host(const GraphRef<T>& A, const GraphRef<T>& B, const K& ke, const T* x, const T* scale, T* y) {
    const int nb = B.n;
    for (int I = 0; I < A.nt; I++)
        for (int Ip = 0; Ip < B.nt; Ip++) {
            T Y[64] = {};
            for (int32_t ta = A.tile_ptr[I]; ta < A.tile_ptr[I + 1]; ta++)
                for (int32_t tb = B.tile_ptr[Ip]; tb < B.tile_ptr[Ip + 1]; tb++) {
                    T X[64];
                    for (int e = 0; e < 64; e++) X[e] = load_x<T>(A, B, A.tile_col[ta], B.tile_col[tb], e, x, scale);
                    TileView a{A.mask[ta], A.nz_ptr[ta]}, b{B.mask[tb], B.nz_ptr[tb]};
                    const int na = A.nz_ptr[ta + 1] - A.nz_ptr[ta], nbb = B.nz_ptr[tb + 1] - B.nz_ptr[tb];
                    if (na * nbb >= DENSE_MIN_PAIRS) {
                        for (int e = 0; e < 64; e++) Y[e] += dense_entry<T>(a, A.nz_w, b, B.nz_w, ke, X, e >> 3, e & 7);
                    } else {
                        for (int k = 0; k < na * nbb; k++) {
                            int slot;
                            T v = sparse_term<T>(k, a.nz0, na, A.nz_pos, A.nz_w, b.nz0, nbb, B.nz_pos, B.nz_w, ke, X, &slot);
                            Y[slot] += v;
                        }
                    }
                }
            for (int e = 0; e < 64; e++) {
                const int i = 8 * I + (e >> 3), ip = 8 * Ip + (e & 7);
                if (i < A.n && ip < nb) y[(int64_t)i * nb + ip] = Y[e];
            }
        }
}

// HostPair holds one prepared pair: V, S, D and the Jacobi inverse.
template <typename T>
struct HostPair {
    std::vector<T> v, s, dd, inv;
};

template <typename T, typename K>
HostPair<T> prepare_pair(const GraphRef<T>& A, const GraphRef<T>& B, const ggc_mk_program& node, const K& ke,
                         const ggc_mgk_options& o, int* bad) {
    const int64_t N = (int64_t)A.n * B.n;
    HostPair<T> h;
    h.v.resize(N), h.s.resize(N), h.dd.resize(N), h.inv.resize(N);
    const T scale = T(1) / ((T(1) - T(o.q)) * (T(1) - T(o.q)));
    for (int i = 0; i < A.n; i++)
        for (int ip = 0; ip < B.n; ip++) {
            const int64_t k = (int64_t)i * B.n + ip;
            T kv = mk_eval<T>(node, A.node_feat + (int64_t)i * A.node_cols, B.node_feat + (int64_t)ip * B.node_cols);
            if (!(kv >= T(0)) || std::isinf(kv)) *bad = 1;
            ProductNode<T> pn = product_node<T>(kv, A.deg[i], B.deg[ip], scale, A.loop_nz[i], B.loop_nz[ip],
                                                A.nz_w, B.nz_w, ke);
            h.v[k] = pn.v, h.s[k] = pn.s, h.dd[k] = pn.dd, h.inv[k] = pn.inv;
        }
    return h;
}

// pcg: serial Jacobi-preconditioned CG on (D − S W S) y = rhs, the twin of
// the device's pcg_block.
template <typename T, typename K>
SolveResult<T> pcg(const GraphRef<T>& A, const GraphRef<T>& B, const K& ke, const HostPair<T>& h, T tol, int max_iter,
                   const std::vector<T>& rhs, std::vector<T>& y) {
    const int64_t N = (int64_t)A.n * B.n;
    const std::vector<T>&s = h.s, &dd = h.dd, &inv = h.inv;
    std::vector<T> r(N), p(N), ap(N);
    y.assign(N, T(0));
    SolveResult<T> res{};
    T bb = 0;
    for (int64_t k = 0; k < N; k++) bb += rhs[k] * rhs[k];
    res.converged = 1;
    if (bb == T(0)) return res;
    T rz = 0;
    for (int64_t k = 0; k < N; k++) {
        r[k] = rhs[k];
        p[k] = inv[k] * r[k];
        rz += r[k] * p[k];
    }
    T rr = bb;
    const T thr = tol * tol * bb;
    for (int it = 0;; it++) {
        if (rr <= thr) {
            res.iters = it;
            break;
        }
        if (it >= max_iter) {
            res.iters = it, res.converged = 0;
            break;
        }
        mulw_host<T>(A, B, ke, p.data(), s.data(), ap.data());
        T pap = 0;
        for (int64_t k = 0; k < N; k++) {
            ap[k] = dd[k] * p[k] - s[k] * ap[k];
            pap += p[k] * ap[k];
        }
        if (!(pap > T(0)) || std::isinf(pap)) {
            res.iters = it, res.converged = 0;
            break;
        }
        const T alpha = rz / pap;
        T rzn = 0, rrn = 0;
        for (int64_t k = 0; k < N; k++) {
            y[k] += alpha * p[k];
            r[k] -= alpha * ap[k];
            rzn += r[k] * r[k] * inv[k];
            rrn += r[k] * r[k];
        }
        const T beta = rzn / rz;
        rz = rzn, rr = rrn;
        for (int64_t k = 0; k < N; k++) p[k] = inv[k] * r[k] + beta * p[k];
    }
    res.residual = std::sqrt(double(rr) / double(bb));
    return res;
}

template <typename T, typename K>
std::vector<T> primal_rhs_host(const GraphRef<T>& A, const GraphRef<T>& B, const K& ke, const HostPair<T>& h,
                               const ggc_mgk_options& o) {
    const int64_t N = (int64_t)A.n * B.n;
    std::vector<T> rhs(N);
    if (o.lmin == 1) {
        mulw_host<T>(A, B, ke, h.v.data(), (const T*)nullptr, rhs.data());
        for (int64_t k = 0; k < N; k++) rhs[k] *= h.s[k];
    } else {
        for (int64_t k = 0; k < N; k++) rhs[k] = h.s[k] * h.dd[k];
    }
    return rhs;
}

template <typename T>
T value_host(const GraphRef<T>& A, const GraphRef<T>& B, const HostPair<T>& h, const std::vector<T>& y) {
    T val = 0;
    for (int i = 0; i < A.n; i++) {
        T row = 0;
        for (int ip = 0; ip < B.n; ip++) {
            const int64_t k = (int64_t)i * B.n + ip;
            row += B.start[ip] * h.s[k] * y[k];
        }
        val += A.start[i] * row;
    }
    return val;
}

// PCG on one pair, the serial twin of the device solver.
template <typename T, typename K>
SolveResult<T> solve_pair(const GraphRef<T>& A, const GraphRef<T>& B, const ggc_mk_program& node, const K& ke,
                          const ggc_mgk_options& o, int* bad) {
    HostPair<T> h = prepare_pair<T>(A, B, node, ke, o, bad);
    std::vector<T> y;
    SolveResult<T> res = pcg<T>(A, B, ke, h, T(o.tol), o.max_iter, primal_rhs_host<T>(A, B, ke, h, o), y);
    res.value = value_host<T>(A, B, h, y);
    return res;
}

// edge_pairs_host calls f(ka, kb, c) for every directed pair of nonzeros with
// c = u[(i,i')] w_ka w'_kb x[(j,j')], serially (twin of edge_pairs_block).
template <typename T, typename F>
void edge_pairs_host(const GraphRef<T>& A, const GraphRef<T>& B, const T* u, const T* x, const F& f) {
    for (int I = 0; I < A.nt; I++)
        for (int Ip = 0; Ip < B.nt; Ip++)
            for (int32_t ta = A.tile_ptr[I]; ta < A.tile_ptr[I + 1]; ta++)
                for (int32_t tb = B.tile_ptr[Ip]; tb < B.tile_ptr[Ip + 1]; tb++)
                    for (int32_t ka = A.nz_ptr[ta]; ka < A.nz_ptr[ta + 1]; ka++)
                        for (int32_t kb = B.nz_ptr[tb]; kb < B.nz_ptr[tb + 1]; kb++) {
                            const int pa = A.nz_pos[ka], pb = B.nz_pos[kb];
                            const int64_t row = (int64_t)(8 * I + (pa >> 3)) * B.n + 8 * Ip + (pb >> 3);
                            const int64_t col = (int64_t)(8 * A.tile_col[ta] + (pa & 7)) * B.n +
                                                8 * B.tile_col[tb] + (pb & 7);
                            f(ka, kb, u[row] * A.nz_w[ka] * B.nz_w[kb] * x[col]);
                        }
}

// grad_pair is the serial twin of mgk_gsolve + mgk_gterms: K and ∂K/∂θ into g
// (1 + node.nparams + edge.nparams entries). table: κe's derivatives per class
// pair from collected coefficients, else per nonzero pair.
template <typename T, typename K>
SolveResult<T> grad_pair(const GraphRef<T>& A, const GraphRef<T>& B, const ggc_mk_program& node,
                         const ggc_mk_program& edge, const K& ke, bool table, const ggc_mgk_options& o, int* bad,
                         double* g) {
    const int64_t N = (int64_t)A.n * B.n;
    HostPair<T> h = prepare_pair<T>(A, B, node, ke, o, bad);
    std::vector<T> x, ut;
    SolveResult<T> res = pcg<T>(A, B, ke, h, T(o.tol), o.max_iter, primal_rhs_host<T>(A, B, ke, h, o), x);
    res.value = value_host<T>(A, B, h, x);
    std::vector<T> rhs(N);
    for (int i = 0; i < A.n; i++)
        for (int ip = 0; ip < B.n; ip++) {
            const int64_t k = (int64_t)i * B.n + ip;
            rhs[k] = h.s[k] * A.start[i] * B.start[ip];
        }
    const SolveResult<T> adj = pcg<T>(A, B, ke, h, T(o.adj_tol), o.max_iter, rhs, ut);
    res.iters += adj.iters;
    res.converged = res.converged && adj.converged;
    res.residual = std::max(res.residual, adj.residual);
    std::vector<T> u(N), wx(N), wu(N), coef(N);
    for (int64_t k = 0; k < N; k++) {
        x[k] = h.s[k] * x[k] + (o.lmin == 1 ? h.s[k] * h.s[k] : T(0));
        u[k] = h.s[k] * ut[k];
    }
    mulw_host<T>(A, B, ke, x.data(), (const T*)nullptr, wx.data());
    mulw_host<T>(A, B, ke, u.data(), (const T*)nullptr, wu.data());
    T q = 0;
    for (int i = 0; i < A.n; i++)
        for (int ip = 0; ip < B.n; ip++) {
            const int64_t k = (int64_t)i * B.n + ip;
            const T pp = A.start[i] * B.start[ip], v = h.s[k] * h.s[k];
            const T lam = v > T(0) ? u[k] / v : (pp + wu[k]) / h.dd[k];
            q += h.dd[k] * (u[k] - lam * x[k]);
            coef[k] = lam * (h.dd[k] + wx[k]) - (o.lmin == 1 ? pp : T(0));
        }
    g[0] = double(q * T(2) / (T(1) - T(o.q)));
    const int nv = node.nparams, ne = edge.nparams;
    for (int t = 0; t < nv; t++) {
        T acc = 0;
        for (int i = 0; i < A.n; i++)
            for (int ip = 0; ip < B.n; ip++) {
                const T c = coef[(int64_t)i * B.n + ip];
                if (c == T(0)) continue;
                acc += c * mk_eval_d<T>(node, A.node_feat + (int64_t)i * A.node_cols,
                                        B.node_feat + (int64_t)ip * B.node_cols, t).d;
            }
        g[1 + t] = double(acc);
    }
    std::vector<T> ce;
    if (table) {
        ce.assign((size_t)A.nclass * B.nclass, T(0));
        edge_pairs_host<T>(A, B, u.data(), x.data(), [&](int32_t ka, int32_t kb, T c) {
            ce[(size_t)A.nz_class[ka] * B.nclass + B.nz_class[kb]] += c;
        });
    }
    for (int t = 0; t < ne; t++) {
        T acc = 0;
        auto d = [&](int ca, int cb) {
            return mk_eval_d<T>(edge, A.class_feat + (int64_t)ca * A.edge_cols, B.class_feat + (int64_t)cb * B.edge_cols,
                                t).d;
        };
        if (table) {
            for (int ca = 0; ca < A.nclass; ca++)
                for (int cb = 0; cb < B.nclass; cb++) {
                    const T c = ce[(size_t)ca * B.nclass + cb];
                    if (c != T(0)) acc += c * d(ca, cb);
                }
        } else {
            edge_pairs_host<T>(A, B, u.data(), x.data(), [&](int32_t ka, int32_t kb, T c) {
                if (c != T(0)) acc += c * d(A.nz_class[ka], B.nz_class[kb]);
            });
        }
        g[1 + nv + t] = double(acc);
    }
    return res;
}

template <typename T>
std::vector<T> class_table(const ggc_mk_program& edge, const GraphRef<T>& A, const GraphRef<T>& B) {
    std::vector<T> tab((size_t)A.nclass * B.nclass + 1);
    for (int ca = 0; ca < A.nclass; ca++)
        for (int cb = 0; cb < B.nclass; cb++)
            tab[(size_t)ca * B.nclass + cb] =
                mk_eval<T>(edge, A.class_feat + (int64_t)ca * A.edge_cols, B.class_feat + (int64_t)cb * B.edge_cols);
    return tab;
}

template <typename T>
int gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program& node, const ggc_mk_program& edge,
         const ggc_mgk_options& o, int table, double* out, double* grad, int32_t* iters, double* resid, char* err,
         size_t errlen) {
    const int np = 1 + node.nparams + edge.nparams;
    std::vector<double> g(np);
    HostGraphs<T> hx(X);
    HostGraphs<T> hy(o.symmetric || Y == nullptr ? X : Y);
    const int nx = X->num_graphs, ny = hy.g->num_graphs;
    for (int i = 0; i < nx; i++)
        for (int j = o.symmetric ? i : 0; j < ny; j++) {
            GraphRef<T> A = hx.ref(i), B = hy.ref(j);
            int bad = 0;
            SolveResult<T> res;
            if (table) {
                std::vector<T> tab = class_table<T>(edge, A, B);
                EdgeTable<T> ke{tab.data(), A.nz_class, B.nz_class, B.nclass};
                res = grad ? grad_pair<T>(A, B, node, edge, ke, true, o, &bad, g.data())
                           : solve_pair<T>(A, B, node, ke, o, &bad);
            } else {
                EdgeEval<T> ke{&edge, A.class_feat, B.class_feat, A.nz_class, B.nz_class, A.edge_cols};
                res = grad ? grad_pair<T>(A, B, node, edge, ke, false, o, &bad, g.data())
                           : solve_pair<T>(A, B, node, ke, o, &bad);
            }
            if (bad) {
                snprintf(err, errlen, "node kernel gave a negative or non-finite value in pair (%d, %d)", i, j);
                return GGC_ERR_ARG;
            }
            for (int m = 0; m < (o.symmetric && i != j ? 2 : 1); m++) {
                const int64_t at = m == 0 ? (int64_t)i * ny + j : (int64_t)j * ny + i;
                out[at] = double(res.value);
                if (iters) iters[at] = res.converged ? res.iters : -res.iters;
                if (resid) resid[at] = res.residual;
                if (grad) std::copy(g.begin(), g.end(), grad + at * np);
            }
        }
    return GGC_OK;
}

}  // namespace

extern "C" int hr_mulw(const ggc_graphs* A, int ga, const ggc_graphs* B, int gb, const ggc_mk_program* edge,
                       int table, const double* x, double* y) {
    HostGraphs<double> ha(A), hb(B);
    GraphRef<double> a = ha.ref(ga), b = hb.ref(gb);
    if (table) {
        std::vector<double> tab = class_table<double>(*edge, a, b);
        EdgeTable<double> ke{tab.data(), a.nz_class, b.nz_class, b.nclass};
        mulw_host<double>(a, b, ke, x, nullptr, y);
    } else {
        EdgeEval<double> ke{edge, a.class_feat, b.class_feat, a.nz_class, b.nz_class, a.edge_cols};
        mulw_host<double>(a, b, ke, x, nullptr, y);
    }
    return GGC_OK;
}

extern "C" int hr_mgk_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                           const ggc_mk_program* edge, const ggc_mgk_options* opt, int table, double* out,
                           int32_t* iters, double* resid, char* err, size_t errlen) {
    if (opt->precision == 32)
        return gram<float>(X, Y, *node, *edge, *opt, table, out, nullptr, iters, resid, err, errlen);
    return gram<double>(X, Y, *node, *edge, *opt, table, out, nullptr, iters, resid, err, errlen);
}

extern "C" int hr_mgk_gram_grad(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                                const ggc_mk_program* edge, const ggc_mgk_options* opt, int table, double* out,
                                double* grad, int32_t* iters, char* err, size_t errlen) {
    if (opt->precision == 32)
        return gram<float>(X, Y, *node, *edge, *opt, table, out, grad, iters, nullptr, err, errlen);
    return gram<double>(X, Y, *node, *edge, *opt, table, out, grad, iters, nullptr, err, errlen);
}
