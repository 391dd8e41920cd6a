// mk.h: the base kernels of gokernel/microkernel (constant, kronecker_delta,
// square_exponential, brownian_bridge, sum, product, normalized) as a small
// postfix program evaluated by __host__ __device__ code. The set of operations is
// fixed when the library is built; a kernel expression is data (a program), so no
// compiler runs at run time. Expressions longer than MK_MAX_INSTR instructions or
// deeper than MK_MAX_STACK are refused by the Go side, which then uses the CPU.
//
// The arithmetic follows microkernel.go operation by operation (same order of
// sums and products, same formulas), so float64 results agree with Go's to the
// last bit except where exp differs by an ulp.
#pragma once
#include "common.h"
#include "../ggcuda.h"

namespace gg {

// A register-resident stack: every access is unrolled over the fixed depth so
// that the compiler keeps it in registers (a dynamically indexed local array
// would live in local memory).
template <typename T, int D>
struct RegStack {
    T v[D];
    GG_HD void set(int i, T x) {
GG_UNROLL
        for (int k = 0; k < D; k++)
            if (k == i) v[k] = x;
    }
    GG_HD T get(int i) const {
        T r = T(0);
GG_UNROLL
        for (int k = 0; k < D; k++)
            if (k == i) r = v[k];
        return r;
    }
};

// mk_leaf evaluates a leaf instruction on rows x and y.
template <typename T>
GG_HD T mk_leaf(const ggc_mk_instr& in, const T* x, const T* y) {
    switch (in.op) {
    case GGC_MK_CONSTANT:
        return T(in.param);
    case GGC_MK_KRONECKER_DELTA: {
        for (int c = in.col; c < in.col + in.width; c++)
            if (x[c] != y[c]) return T(in.param);
        return T(1);
    }
    case GGC_MK_SQUARE_EXPONENTIAL: {
        T s = T(0);
        for (int c = in.col; c < in.col + in.width; c++) {
            T d = x[c] - y[c];
            s += d * d;
        }
        T l = T(in.param);
        return gg_exp<T>(-s / (T(2) * l * l));
    }
    case GGC_MK_BROWNIAN_BRIDGE: {
        T v = T(in.param) - gg_abs<T>(x[in.col] - y[in.col]);
        return v > T(0) ? v : T(0);
    }
    }
    return T(0);
}

// mk_norm is microkernel.Normalized on the three values K(x,y), K(x,x), K(y,y).
template <typename T>
GG_HD T mk_norm(T kxy, T kxx, T kyy) {
    if (kxx <= T(0) || kyy <= T(0)) return T(0);
    return kxy / gg_sqrt<T>(kxx * kyy);
}

// mk_eval returns k(x, y) for the program p. When the program normalizes
// (p.self), every value is carried as the triple (K(x,y), K(x,x), K(y,y)) so
// that nested normalizations need no recursion.
template <typename T>
GG_HD T mk_eval(const ggc_mk_program& p, const T* x, const T* y) {
    RegStack<T, GGC_MK_MAX_STACK> sxy, sxx, syy;
    int top = 0;
    for (int pc = 0; pc < p.n; pc++) {
        const ggc_mk_instr in = p.ins[pc];
        switch (in.op) {
        case GGC_MK_SUM:
        case GGC_MK_PRODUCT: {
            const bool sum = in.op == GGC_MK_SUM;
            T a = sum ? T(0) : T(1), b = a, c = a;
            for (int k = top - in.nargs; k < top; k++) {
                if (sum) {
                    a += sxy.get(k);
                    if (p.self) { b += sxx.get(k); c += syy.get(k); }
                } else {
                    a *= sxy.get(k);
                    if (p.self) { b *= sxx.get(k); c *= syy.get(k); }
                }
            }
            top -= in.nargs;
            sxy.set(top, a);
            if (p.self) { sxx.set(top, b); syy.set(top, c); }
            top++;
            break;
        }
        case GGC_MK_NORMALIZED: {
            // Inner normalizations see K(x,x) as their (x,y) argument, as
            // microkernel.Normalized.Eval(x, x) does.
            T kxx = sxx.get(top - 1), kyy = syy.get(top - 1);
            sxy.set(top - 1, mk_norm<T>(sxy.get(top - 1), kxx, kyy));
            sxx.set(top - 1, mk_norm<T>(kxx, kxx, kxx));
            syy.set(top - 1, mk_norm<T>(kyy, kyy, kyy));
            break;
        }
        default:
            sxy.set(top, mk_leaf<T>(in, x, y));
            if (p.self) {
                sxx.set(top, mk_leaf<T>(in, x, x));
                syy.set(top, mk_leaf<T>(in, y, y));
            }
            top++;
        }
    }
    return sxy.get(0);
}

// Dual is a value and its derivative with respect to one hyperparameter
// (forward mode, one tangent at a time: the gradient code evaluates a program
// once per parameter, which keeps the stacks at two values per slot instead of
// one per parameter).
template <typename T>
struct Dual {
    T v, d;
};

// mk_leaf_d is mk_leaf with the derivative with respect to the leaf's own
// parameter when seed (the leaf owns the parameter being differentiated),
// else 0. Formulas as microkernel's EvalGrad.
template <typename T>
GG_HD Dual<T> mk_leaf_d(const ggc_mk_instr& in, const T* x, const T* y, bool seed) {
    const T one = seed ? T(1) : T(0);
    switch (in.op) {
    case GGC_MK_CONSTANT:
        return {T(in.param), one};
    case GGC_MK_KRONECKER_DELTA: {
        for (int c = in.col; c < in.col + in.width; c++)
            if (x[c] != y[c]) return {T(in.param), one};
        return {T(1), T(0)};
    }
    case GGC_MK_SQUARE_EXPONENTIAL: {
        T s = T(0);
        for (int c = in.col; c < in.col + in.width; c++) {
            T d = x[c] - y[c];
            s += d * d;
        }
        const T l = T(in.param);
        const T v = gg_exp<T>(-s / (T(2) * l * l));
        return {v, seed ? v * s / (l * l * l) : T(0)};
    }
    case GGC_MK_BROWNIAN_BRIDGE: {
        const T v = T(in.param) - gg_abs<T>(x[in.col] - y[in.col]);
        if (v <= T(0)) return {T(0), T(0)};
        return {v, one};
    }
    }
    return {T(0), T(0)};
}

// mk_norm_d is mk_norm with its derivative, as microkernel.Normalized.EvalGrad:
// d = dK(x,y)/r − ½ v (dK(x,x)/K(x,x) + dK(y,y)/K(y,y)), r = √(K(x,x)K(y,y)).
template <typename T>
GG_HD Dual<T> mk_norm_d(Dual<T> kxy, Dual<T> kxx, Dual<T> kyy) {
    if (kxx.v <= T(0) || kyy.v <= T(0)) return {T(0), T(0)};
    const T r = gg_sqrt<T>(kxx.v * kyy.v);
    const T s = T(1) / r, v = kxy.v / r;
    return {v, kxy.d * s - T(0.5) * v * (kxx.d / kxx.v + kyy.d / kyy.v)};
}

// mk_eval_d returns k(x, y) and ∂k/∂θ_t for the program p, θ numbered as
// microkernel's EvalGrad numbers them (each leaf's pidx). The arithmetic of the
// values is mk_eval's; sums add derivatives, products use the product rule
// term by term (exact for zero factors, like microkernel.Product.EvalGrad).
template <typename T>
GG_HD Dual<T> mk_eval_d(const ggc_mk_program& p, const T* x, const T* y, int t) {
    RegStack<T, GGC_MK_MAX_STACK> sxy, sxx, syy, dxy, dxx, dyy;
    int top = 0;
    for (int pc = 0; pc < p.n; pc++) {
        const ggc_mk_instr in = p.ins[pc];
        switch (in.op) {
        case GGC_MK_SUM:
        case GGC_MK_PRODUCT: {
            const bool sum = in.op == GGC_MK_SUM;
            T a = sum ? T(0) : T(1), b = a, c = a, da = T(0), db = T(0), dc = T(0);
            for (int k = top - in.nargs; k < top; k++) {
                if (sum) {
                    a += sxy.get(k), da += dxy.get(k);
                    if (p.self) { b += sxx.get(k), db += dxx.get(k); c += syy.get(k), dc += dyy.get(k); }
                } else {
                    da = da * sxy.get(k) + a * dxy.get(k), a *= sxy.get(k);
                    if (p.self) {
                        db = db * sxx.get(k) + b * dxx.get(k), b *= sxx.get(k);
                        dc = dc * syy.get(k) + c * dyy.get(k), c *= syy.get(k);
                    }
                }
            }
            top -= in.nargs;
            sxy.set(top, a), dxy.set(top, da);
            if (p.self) { sxx.set(top, b), dxx.set(top, db); syy.set(top, c), dyy.set(top, dc); }
            top++;
            break;
        }
        case GGC_MK_NORMALIZED: {
            const Dual<T> kxy{sxy.get(top - 1), dxy.get(top - 1)}, kxx{sxx.get(top - 1), dxx.get(top - 1)},
                kyy{syy.get(top - 1), dyy.get(top - 1)};
            const Dual<T> nxy = mk_norm_d<T>(kxy, kxx, kyy), nxx = mk_norm_d<T>(kxx, kxx, kxx),
                          nyy = mk_norm_d<T>(kyy, kyy, kyy);
            sxy.set(top - 1, nxy.v), dxy.set(top - 1, nxy.d);
            sxx.set(top - 1, nxx.v), dxx.set(top - 1, nxx.d);
            syy.set(top - 1, nyy.v), dyy.set(top - 1, nyy.d);
            break;
        }
        default: {
            const bool seed = in.pidx == t;
            const Dual<T> r = mk_leaf_d<T>(in, x, y, seed);
            sxy.set(top, r.v), dxy.set(top, r.d);
            if (p.self) {
                const Dual<T> rx = mk_leaf_d<T>(in, x, x, seed), ry = mk_leaf_d<T>(in, y, y, seed);
                sxx.set(top, rx.v), dxx.set(top, rx.d);
                syy.set(top, ry.v), dyy.set(top, ry.d);
            }
            top++;
        }
        }
    }
    return {sxy.get(0), dxy.get(0)};
}

}  // namespace gg
