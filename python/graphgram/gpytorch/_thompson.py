"""Thompson sampling over the pool's candidates: posterior samples from finite features, pathwise."""

import numpy as np
import scipy.linalg
import scipy.sparse
import torch
from sklearn.utils import check_random_state

from ..gaussian_process._nystrom import choose, project
from ..graph import take
from ..kernels._normalize import normalize_exponent
from ._posterior import read_model

__all__ = ["thompson_sampling"]


def thompson_sampling(model, candidates, q=1, random_state=None, n_inducing=256, chunk=16):
    """Choose q candidates by Thompson sampling from a fitted GP over graph indices.

    Each of q posterior samples of f over the candidates is drawn whole, and
    each picks its best candidate not already picked. A sample is drawn from
    finite features φ with K = σ² φ φᵀ (σ² the ``ScaleKernel``'s outputscale)
    by pathwise conditioning (Wilson et al., 2020): f = m + φ (σ w + σ² φ_Xᵀ v)
    with w ~ N(0, I), v = (K_XX + Σ)⁻¹ (y − m_X − σ φ_X w − ε), ε ~ N(0, Σ), Σ
    the likelihood's noise — one sparse or dense product over the candidates
    per block of samples, O(N·D) for N candidates and D features, never an
    N × N matrix. The features are:

    - explicit-feature kernels with integer features (Weisfeiler-Lehman,
      histograms; as the kernel computes them from the pool's feature map):
      the counts, scaled by the normalization — **exact** samples of the GP;
    - a low-rank kernel (``inducing=`` given): its Nyström root K(·, Z) L⁻ᵀ,
      exact for that model;
    - other kernels (the marginalized kernel): the Nyström root on
      ``n_inducing`` graphs of the pool chosen as the low-rank kernel chooses
      them — samples of that low-rank approximation of the GP, computing
      (N + n) × m kernel pairs.

    Parameters
    ----------
    model : gpytorch.models.ExactGP
        A fitted model (BoTorch's ``SingleTaskGP``) whose ``covar_module`` is a
        :class:`GPyTorchGraphKernel` or a ``ScaleKernel`` of one, with one
        input column of pool indices, no batch dimensions, a Gaussian
        likelihood (a fixed noise per point, ``train_Yvar``, included) and no
        input transform. An outcome transform is fine: it rescales the
        samples, not their ranking.
    candidates : array-like or tensor of int, shape (N,) or (N, 1)
        Pool indices to choose from.
    q : int, default=1
        How many to choose (distinct; at most N).
    random_state : int, RandomState or None
    n_inducing : int, default=256
        Inducing graphs of the Nyström features (third case above).
    chunk : int, default=16
        Samples drawn together (memory N × chunk).

    Returns
    -------
    chosen : torch.Tensor of shape (q, 1), float64
        The chosen pool indices, in the order picked (as inputs for the model).
    values : torch.Tensor of shape (q,)
        Each one's value in the sample that picked it (in the model's outcome
        space, before its outcome transform is undone).
    """
    m = read_model(model, candidates, "thompson_sampling")
    cand = m.candidates
    if not isinstance(q, (int, np.integer)) or not 1 <= q <= len(cand):
        raise ValueError("q must be an integer from 1 to the %d candidates, got %r" % (len(cand), q))
    if not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError("chunk must be a positive integer, got %r" % (chunk,))
    rng = check_random_state(random_state)
    with torch.no_grad():
        phi = _features(m.kernel, np.concatenate([m.train, cand]), n_inducing, rng)
    return _pick(phi, len(m.train), m.scale, m.y, m.noise, m.mean_train, m.mean_candidates, cand, q, rng, chunk)


def _features(kernel, positions, n_inducing, rng):
    """φ (sparse or dense) with the kernel's K(positions, positions) = φ φᵀ; see thompson_sampling."""
    theta = kernel.theta.detach().cpu().numpy().astype(np.float64)
    graph_kernel = kernel._kernel_at(theta)
    if kernel.inducing is None:
        features = kernel._pool_features(graph_kernel)
        if features is not None:
            F, d = features
            s = normalize_exponent(graph_kernel.normalize)
            rows = F[positions]
            if not s:
                return rows
            dp = d[positions]
            w = np.divide(1.0, dp ** (s / 2), out=np.zeros_like(dp), where=dp > 0)
            return scipy.sparse.diags(w) @ rows
        Z = np.asarray(choose(graph_kernel, kernel.graphs, min(int(n_inducing), len(kernel.graphs)), "kmeans++",
                              rng), dtype=np.int64)
    else:
        Z = kernel._inducing_positions()
    Kzz = graph_kernel(take(kernel.graphs, Z))
    L = kernel._factor(torch.as_tensor(Kzz)).numpy()
    Kxz = graph_kernel(take(kernel.graphs, positions), take(kernel.graphs, Z))
    return project(Kxz, L)


def _pick(phi, n, scale, y, noise, mean_x, mean_c, cand, q, rng, chunk, prior=True):
    """The picks of q pathwise samples (prior=False: the posterior mean, for tests)."""
    px, pc = phi[:n], phi[n:]
    Kxx = scale * _dense(px @ px.T) + np.diag(noise)
    factor = scipy.linalg.cho_factor(Kxx, lower=True)
    D = phi.shape[1]
    chosen, values = [], []
    taken = np.zeros(len(cand), dtype=bool)
    for s0 in range(0, q, chunk):
        b = min(chunk, q - s0)
        W = rng.standard_normal((D, b)) if prior else np.zeros((D, b))
        E = rng.standard_normal((n, b)) * np.sqrt(noise)[:, None] if prior else np.zeros((n, b))
        V = scipy.linalg.cho_solve(factor, (y - mean_x)[:, None] - np.sqrt(scale) * _dense(px @ W) - E)
        U = np.sqrt(scale) * W + scale * _dense(px.T @ V)
        samples = mean_c[:, None] + _dense(pc @ U)
        for j in range(b):
            f = np.where(taken, -np.inf, samples[:, j])
            k = int(np.argmax(f))
            taken[k] = True
            chosen.append(cand[k])
            values.append(samples[k, j])
    return (torch.tensor(np.asarray(chosen, dtype=np.float64))[:, None],
            torch.tensor(np.asarray(values, dtype=np.float64)))


def _dense(a):
    return a.toarray() if scipy.sparse.issparse(a) else np.asarray(a)
