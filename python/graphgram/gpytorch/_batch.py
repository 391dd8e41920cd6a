"""A batch of q candidates of the pool by the Kriging believer, in memory linear in the pool."""

import numbers

import numpy as np
import scipy.linalg
import scipy.special

from ._posterior import read_model
from ._thompson import _dense, _features

__all__ = ["kriging_believer", "log_expected_improvement"]

# Below this standardized improvement, log EI from its asymptotic series (the
# closed form loses its digits to cancellation there).
_LOG_EI_SERIES_BELOW = -25.0
# Candidates per block of the triangular solves (n × block float64 at a time).
_BLOCK = 8192
# Candidates brought up to date together when the leading score is stale: one
# kernel block of this many rows against the picks they lack.
_REFRESH = 128


def log_expected_improvement(mean, std, best_f):
    """log E[max(f − best_f, 0)] for f ~ N(mean, std²), elementwise, without underflow.

    EI = σ h(z), z = (μ − best_f) / σ, h(z) = φ(z) + z Φ(z); log h(z) is
    −z²/2 + log(1/√(2π) + z/2 · erfcx(−z/√2)) and, far in the lower tail
    (z < −25), log φ(z) + log(1/z² − 3/z⁴ + 15/z⁶) (the series of the
    Mills ratio). −inf where σ is 0 and μ ≤ best_f.
    """
    mean, std = np.broadcast_arrays(np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64))
    out = np.full(mean.shape, -np.inf)
    pos = std > 0
    z = np.where(pos, (mean - best_f) / np.where(pos, std, 1.0), 0.0)
    tail = pos & (z < _LOG_EI_SERIES_BELOW)
    body = pos & ~tail
    zb = z[body]
    out[body] = -0.5 * zb ** 2 + np.log(1.0 / np.sqrt(2 * np.pi) + 0.5 * zb * scipy.special.erfcx(-zb / np.sqrt(2)))
    zt = z[tail]
    out[tail] = (-0.5 * zt ** 2 - 0.5 * np.log(2 * np.pi)
                 + np.log(1.0 / zt ** 2 - 3.0 / zt ** 4 + 15.0 / zt ** 6))
    out[pos] += np.log(std[pos])
    flat = ~pos & (mean > best_f)
    out[flat] = np.log(mean[flat] - best_f)
    return out


def kriging_believer(model, candidates, q=1, acquisition="log_ei", beta=2.0, best_f=None, noise=None,
                     exclude_train=True):
    """Choose a batch of q candidates by the Kriging believer, over a whole library.

    The first pick maximizes the analytic acquisition (log expected
    improvement, or the upper confidence bound) under the model's posterior;
    each next one maximizes it after the picks so far are believed measured
    at their posterior mean with noise (Ginsbourger et al., 2010): the
    posterior means stay, the variances shrink near the picks, so a batch
    spreads over the library instead of piling up on one optimum. With the
    kernel's columns k(·, x) and the training inputs X (n of them), A = K_XX
    + Σ, V = L⁻¹ K_Xc (L Lᵀ = A), and each pick's column updated by the picks
    before it,

        c_j = s k(c, x_j) − Vᵀ L⁻¹ s k(X, x_j) − Σ_{i<j} ĉ_i(c) ĉ_i(x_j),
        ĉ_j = c_j / √(σ²_{j−1}(x_j) + noise),  σ²_j = σ²_{j−1} − ĉ_j²,

    O(N·(n + q)) memory. A pick only lowers the others' variances, so
    their scores only fall: a candidate's last score bounds its current one,
    and only candidates whose last score leads are brought up to date
    (lazy greedy, the same picks), in blocks of 128 against the picks they
    lack — a few thousand kernel pairs per pick rather than a column over
    the library. Values from the kernel's features for explicit-feature
    kernels (computed once) and low-rank kernels, else kernel blocks (the
    training inputs' whole columns, which the kernel keeps). No N × N
    matrix; the result is exact for the model (not a Monte Carlo estimate).

    BoTorch's ``optimize_acqf_discrete(qLogNoisyExpectedImprovement(...), q=96,
    choices=...)`` selects sequentially too, with Monte Carlo estimates of the
    joint improvement of each batch: q passes over every candidate, each
    evaluating the posterior jointly with the picks so far; this is the
    analytic, one-pass-per-pick counterpart that a library of 10⁵ needs.

    Parameters
    ----------
    model : gpytorch.models.ExactGP
        A fitted model (BoTorch's ``SingleTaskGP``) whose ``covar_module`` is a
        :class:`GPyTorchGraphKernel` or a ``ScaleKernel`` of one, over one
        input column of pool indices, without batch dimensions or an input
        transform, with a Gaussian likelihood (fixed noise per point
        included). An outcome transform is fine: it rescales the values, not
        their ranking.
    candidates : array-like or tensor of int, shape (N,) or (N, 1)
        Pool indices to choose from.
    q : int, default=1
        How many to choose (distinct).
    acquisition : {"log_ei", "ucb"}, default="log_ei"
        log expected improvement over ``best_f``, or μ + √beta σ.
    beta : float, default=2.0
        The upper confidence bound's β (BoTorch's convention).
    best_f : float, default=None
        The value to improve on, in the model's outcome space; None: the
        largest training target.
    noise : float, default=None
        The noise variance a believed measurement carries; None: the model's
        noise level (its mean over the training inputs with fixed noise).
    exclude_train : bool, default=True
        Never pick a candidate that is a training input.

    Returns
    -------
    chosen : torch.Tensor of shape (q, 1), float64
        The chosen pool indices, in the order picked (as inputs for the model).
    values : torch.Tensor of shape (q,)
        Each pick's acquisition value when it was picked (log EI, or the bound).
    """
    import torch

    m = read_model(model, candidates, "kriging_believer")
    cand, n = m.candidates, len(m.train)
    if not isinstance(q, numbers.Integral) or isinstance(q, bool) or q < 1:
        raise ValueError("q must be a positive integer, got %r" % (q,))
    if acquisition not in ("log_ei", "ucb"):
        raise ValueError("acquisition must be 'log_ei' or 'ucb', got %r" % (acquisition,))
    if not (isinstance(beta, numbers.Real) and np.isfinite(beta) and beta >= 0):
        raise ValueError("beta must be a number >= 0, got %r" % (beta,))
    allowed = ~np.isin(cand, m.train) if exclude_train else np.ones(len(cand), dtype=bool)
    _, first = np.unique(cand, return_index=True)
    distinct = np.zeros(len(cand), dtype=bool)
    distinct[first] = True
    allowed &= distinct
    if q > int(allowed.sum()):
        raise ValueError("q=%d but only %d distinct candidates%s can be picked"
                         % (q, int(allowed.sum()), " outside the training inputs" if exclude_train else ""))
    if noise is None:
        noise = float(np.mean(m.noise))
    if not (isinstance(noise, numbers.Real) and np.isfinite(noise) and noise >= 0):
        raise ValueError("noise must be a number >= 0, got %r" % (noise,))
    best = float(np.max(m.y)) if best_f is None else float(best_f)
    with torch.no_grad():
        train_columns, block, diag = _value_source(m)
        KX = m.scale * train_columns()                                  # (n + N) × n
        A = KX[:n] + np.diag(m.noise)
        L = scipy.linalg.cholesky(0.5 * (A + A.T), lower=True, check_finite=False)
        alpha = scipy.linalg.cho_solve((L, True), m.y - m.mean_train, check_finite=False)
        mean = m.mean_candidates + KX[n:] @ alpha
        V = np.empty((n, len(cand)))
        for b in range(0, len(cand), _BLOCK):
            V[:, b:b + _BLOCK] = scipy.linalg.solve_triangular(L, KX[n + b:n + b + _BLOCK].T, lower=True,
                                                               check_finite=False)
        del KX
        var = np.maximum(m.scale * diag() - np.einsum("ij,ij->j", V, V), 0.0)

        def acquire(rows):
            if acquisition == "log_ei":
                return log_expected_improvement(mean[rows], np.sqrt(var[rows]), best)
            return mean[rows] + np.sqrt(beta * var[rows])

        # Lazily: a candidate's score only falls as picks shrink its variance, so a
        # stale score bounds its current one; only the candidates whose stale score
        # leads are brought up to date (their pairs with the picks they lack).
        C = np.zeros((len(cand), q))           # C[x, l]: ĉ_l(x), valid for l < done[x]
        done = np.zeros(len(cand), dtype=np.int64)
        W, d, picked = np.empty((n, q)), np.empty(q), []
        score = acquire(slice(None))

        def refresh(rows, j):
            lo = int(done[rows].min())
            P = m.scale * block(cand[rows], cand[picked[lo:j]])
            for l in range(lo, j):
                r = rows[done[rows] <= l]
                c = P[done[rows] <= l, l - lo] - V[:, r].T @ W[:, l] - C[r, :l] @ C[picked[l], :l]
                C[r, l] = c / np.sqrt(d[l]) if d[l] > 0 else 0.0
                var[r] = np.maximum(var[r] - C[r, l] ** 2, 0.0)
            done[rows] = j
            score[rows] = acquire(rows)

        chosen, values = [], []
        for j in range(q):
            while True:
                s = np.where(allowed, score, -np.inf)
                k = int(np.argmax(s))
                if not s[k] > -np.inf:
                    k = int(np.flatnonzero(allowed)[0])   # every score −inf: the first allowed
                if done[k] == j:
                    break
                stale = np.flatnonzero(allowed & (done < j))
                if len(stale) > _REFRESH:
                    stale = stale[np.argpartition(-s[stale], _REFRESH)[:_REFRESH]]
                refresh(np.union1d(stale, [k]), j)
            chosen.append(cand[k])
            values.append(float(score[k]))
            allowed[k] = False
            picked.append(k)
            if j == q - 1:
                break
            W[:, j] = scipy.linalg.solve_triangular(L, m.scale * block(m.train, cand[[k]])[:, 0], lower=True,
                                                    check_finite=False)
            d[j] = var[k] + noise
    return (torch.tensor(np.asarray(chosen, dtype=np.float64))[:, None],
            torch.tensor(np.asarray(values, dtype=np.float64)))


def _value_source(m):
    """(train_columns, block, diag), the kernel's values without the outputscale:
    train_columns() is K(train ∪ candidates, train) (rows the training inputs, then the
    candidates), block(rows, cols) K(rows, cols) for pool positions, diag() K(c, c)
    over the candidates. From finite features where the kernel has them exactly
    (explicit features, a low-rank kernel), else from the kernel: the training
    inputs' whole columns (kept by the kernel), blocks computed as asked."""
    kernel, theta = m.kernel, m.theta
    rows = np.concatenate([m.train, m.candidates])
    if kernel.inducing is not None or kernel._pool_features(kernel._kernel_at(theta)) is not None:
        phi = _features(kernel, rows, None, None)  # exact features: no inducing graphs to choose
        where = {int(p): k for k, p in reversed(list(enumerate(rows)))}

        def at(positions):
            return phi[[where[int(p)] for p in positions]]

        def diag():
            pc = phi[len(m.train):]
            return np.asarray(pc.multiply(pc).sum(axis=1)).ravel() if hasattr(pc, "multiply") \
                else np.einsum("ij,ij->i", pc, pc)
        return (lambda: _dense(phi @ at(m.train).T)), (lambda r, c: _dense(at(r) @ at(c).T)), diag
    return ((lambda: kernel._pool_columns(theta, m.train)[rows]), (lambda r, c: kernel._block_values(theta, r, c)),
            (lambda: kernel._self_values(theta, m.candidates)))
