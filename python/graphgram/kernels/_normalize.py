"""Normalization of graph kernels: K(x, y) / (K(x, x) K(y, y))^(s/2), s = 0 (raw), 1 (the
cosine) or in between, one implementation for every kernel and for the Gaussian-process
and Dask code that assemble Gram matrices from blocks."""

import numbers

import numpy as np

__all__ = ["check_normalize", "cosine_normalize", "normalize_exponent", "normalize_symmetric", "normalized_diag",
           "normalize_with_gradient", "normalized_diag_gradient"]


def check_normalize(normalize):
    """Raise ``TypeError`` or ``ValueError`` unless ``normalize`` is True, False or an exponent in [0, 1]."""
    if not isinstance(normalize, (bool, np.bool_)):
        if not isinstance(normalize, numbers.Real):
            raise TypeError("normalize must be True, False or an exponent in [0, 1], got %r" % (normalize,))
        if not 0.0 <= float(normalize) <= 1.0:
            raise ValueError("normalize must be True, False or an exponent in [0, 1], got %r" % (normalize,))


def normalize_exponent(normalize):
    """The exponent s of ``normalize`` (see :func:`cosine_normalize`): 0 for False, 1 for True."""
    if isinstance(normalize, (bool, np.bool_)):
        return 1.0 if normalize else 0.0
    return float(normalize)


def cosine_normalize(K, diag_x, diag_y, s=1.0):
    """Scale K in place to K[i, j] / (diag_x[i] * diag_y[j]) ** (s / 2), with 0 where a
    diagonal is 0, and return it.

    s = 1 is the cosine normalization; 0 < s < 1 keeps part of the dependence of
    K on the graphs' sizes (their self-similarities), s = 0 all of it. Every s
    gives a positive semi-definite kernel (K scaled by g(x) g(y)).

    An entry whose raw value equals both self-similarities, bit for bit (a graph
    against itself, or against a copy, on whichever side), is set to the
    normalized self-similarity (:func:`normalized_diag`: exactly 1 for the
    cosine), so that it carries no rounding and is the same in symmetric and
    cross calls. (By Cauchy–Schwarz such graphs are kernel-equivalent, whose
    normalized similarity is that value exactly.)
    """
    scale_x = np.zeros_like(diag_x)
    scale_y = np.zeros_like(diag_y)
    np.divide(1.0, np.sqrt(diag_x) ** s, out=scale_x, where=diag_x > 0)
    np.divide(1.0, np.sqrt(diag_y) ** s, out=scale_y, where=diag_y > 0)
    self_x = normalized_diag(diag_x, s)
    # One factor per entry (s_i s_j, which is s_j s_i exactly): a symmetric K stays
    # symmetric. Rows in blocks of about 64 Ki entries: no temporary as large as K.
    step = max(1, 2**16 // max(1, K.shape[1]))
    for a in range(0, K.shape[0], step):
        b = slice(a, a + step)
        same = (K[b] == diag_x[b, None]) & (K[b] == diag_y[None, :])
        K[b] *= np.outer(scale_x[b], scale_y)
        if same.any():
            rows, cols = np.nonzero(same)
            K[b][rows, cols] = self_x[b][rows]
    return K


def normalized_diag(d, s=1.0):
    """The self-similarities of the kernel normalized with exponent s, from the raw ones d:
    d^(1 − s), exactly 1 for the cosine, 0 where d is 0."""
    if s == 1:
        return np.where(d > 0, 1.0, 0.0)
    if s:
        return np.where(d > 0, d ** (1 - s), 0.0)
    return d


def normalize_symmetric(K, d, s=1.0):
    """Return the normalized symmetric block K(X, X) whose raw diagonal is d (exponent s).

    The diagonal is the normalized self-similarities without rounding (exactly 1
    for the cosine, 0 where d is 0), as are the entries of copies (see
    :func:`cosine_normalize`).
    """
    return cosine_normalize(K, d, d, s)


def normalize_with_gradient(K, G, dx, gx, dy, gy, e):
    """Normalize the raw block K (exponent e) and its gradient G (shape K.shape + (n,)),
    given the raw self-similarities dx, dy and their gradients gx, gy (len × n).

    Kn_ij = K_ij / (dx_i dy_j)^(e/2), so
    ∂Kn_ij = ∂K_ij / (dx_i dy_j)^(e/2) − e Kn_ij (∂dx_i / dx_i + ∂dy_j / dy_j) / 2.
    K and G are changed in place; returns (Kn, G) with G contiguous.
    """
    def scale(d):
        return np.divide(1.0, np.sqrt(d) ** e, out=np.zeros_like(d), where=d > 0)

    def relative(d, g):
        return g * np.divide(1.0, d, out=np.zeros_like(d), where=d > 0)[:, None]

    rx, ry = relative(dx, gx), relative(dy, gy)
    K = cosine_normalize(K, dx, dy, e)
    sx, sy = scale(dx), scale(dy)
    # In place, by blocks of rows (about 64 Ki entries each): no temporary as
    # large as G, which is n·m·n_dims.
    step = max(1, 2**16 // max(1, G.shape[1] * G.shape[2]))
    for a in range(0, G.shape[0], step):
        b = slice(a, a + step)
        Gb = G[b]
        Gb *= (sx[b, None] * sy[None, :])[:, :, None]
        Gb -= 0.5 * e * K[b, :, None] * (rx[b, None, :] + ry[None, :, :])
    return K, np.ascontiguousarray(G)


def normalized_diag_gradient(d, g, e):
    """The self-similarities normalized with exponent e and their gradient, from the raw
    ones d and their gradient g (len × n): d^(1 − e), whose gradient is
    (1 − e) d^(−e) ∂d (0 for the cosine, where it is 1)."""
    if e:
        g = g * ((1 - e) * np.divide(1.0, d ** e, out=np.zeros_like(d), where=d > 0))[:, None]
    return normalized_diag(d, e), g
