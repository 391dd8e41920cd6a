"""The choice of inducing graphs: one plain function per method, on a kernel's diagonal and
columns, and :func:`choose`, which feeds them a graph kernel's.

The methods see the kernel matrix K(X, X) only through ``diag`` (its diagonal,
an ndarray of shape (n,)) and ``column(p)`` (its column p, an ndarray of shape
(n,)), so that they compute m columns, never the n×n matrix, and can be tested
on any NumPy matrix.
"""

import numpy as np
from sklearn.utils import check_random_state

from ..kernels._normalize import normalize_exponent, normalized_diag

__all__ = ["METHODS", "choose", "kmeans_plus_plus", "pivoted_cholesky", "random_subset"]

METHODS = ("kmeans++", "pivoted_cholesky", "random")


def random_subset(n, m, rng):
    """Return m distinct positions among n, uniformly, sorted.

    Parameters
    ----------
    n, m : int
        1 ≤ m ≤ n.
    rng : numpy.random.RandomState or numpy.random.Generator

    Returns
    -------
    indices : ndarray of int, shape (m,)
    """
    return np.sort(rng.choice(n, size=m, replace=False))


def kmeans_plus_plus(diag, column, m, rng):
    """Return m positions by k-means++ seeding (D² sampling) in the kernel's feature space.

    The first position is uniform; each next one is drawn with probability
    proportional to its squared kernel distance k(x, x) + k(z, z) − 2 k(x, z) to
    the nearest one chosen (Arthur and Vassilvitskii 2007). A point identical to
    a chosen one is at distance 0 (to rounding) and in effect never chosen again.

    Parameters
    ----------
    diag : ndarray of shape (n,)
        The kernel's self-similarities k(x, x).
    column : callable
        ``column(p)`` returns column p of the kernel matrix, shape (n,).
    m : int
        1 ≤ m ≤ n.
    rng : numpy.random.RandomState or numpy.random.Generator

    Returns
    -------
    indices : ndarray of int, shape (m,)
        In the order chosen.

    Raises
    ------
    ValueError
        When fewer than m points are distinct in the feature space.
    """
    n = len(diag)
    chosen = []
    p = int(rng.integers(n)) if hasattr(rng, "integers") else int(rng.randint(n))
    dist = np.full(n, np.inf)
    for _ in range(m):
        chosen.append(p)
        col = column(p)
        dist = np.minimum(dist, np.maximum(diag + diag[p] - 2.0 * col, 0.0))
        dist[chosen] = 0.0
        total = dist.sum()
        if len(chosen) == m:
            break
        if not total > 0:
            raise ValueError("only %d of the graphs are distinct in the kernel's feature space; inducing=%d "
                             "needs as many: use fewer inducing graphs" % (len(chosen), m))
        p = int(rng.choice(n, p=dist / total))
    return np.array(chosen)


def pivoted_cholesky(diag, column, m):
    """Return m positions by greedy pivoted Cholesky on the kernel matrix.

    Each next position is the one worst approximated by those chosen: the
    largest diagonal of K − L Lᵀ, ties to the first. Deterministic; minimizes
    the trace error greedily.

    Parameters
    ----------
    diag : ndarray of shape (n,)
        The kernel's self-similarities k(x, x).
    column : callable
        ``column(p)`` returns column p of the kernel matrix, shape (n,).
    m : int
        1 ≤ m ≤ n.

    Returns
    -------
    indices : ndarray of int, shape (m,)
        In the order chosen.

    Raises
    ------
    ValueError
        When the kernel matrix has numerical rank below m.
    """
    n = len(diag)
    chosen = []
    residual = diag.astype(np.float64).copy()
    L = np.zeros((m, n))
    tiny = 1e-12 * max(float(np.max(diag)), np.finfo(float).tiny)
    for j in range(m):
        p = int(np.argmax(residual))
        if residual[p] <= tiny:
            raise ValueError("the kernel matrix of X has numerical rank %d < inducing=%d: use fewer inducing "
                             "graphs" % (j, m))
        chosen.append(p)
        col = column(p)
        L[j] = (col - L[:j].T @ L[:j, p]) / np.sqrt(residual[p])
        residual -= L[j] ** 2
        residual[chosen] = 0.0
    return np.array(chosen)


def choose(kernel, X, m, method, random_state):
    """Return the positions in X of m inducing graphs for a graph kernel, by ``method``.

    Parameters
    ----------
    kernel : graphgram.kernels._base.GraphKernelInternals
        The graph kernel, at the hyperparameters the choice uses.
    X : list of Graph
        Validated graphs to choose from; 1 ≤ m ≤ len(X).
    m : int
    method : {"kmeans++", "pivoted_cholesky", "random"}
    random_state : int, RandomState or None
        Seed of "kmeans++" and "random".

    Returns
    -------
    indices : ndarray of int, shape (m,)
    """
    rng = check_random_state(random_state)
    if method == "random":
        return random_subset(len(X), m, rng)
    raw = kernel._raw_diag(X)
    diag = normalized_diag(raw, normalize_exponent(kernel.normalize))
    column = kernel._column_source(X, raw)  # X packed once for all m columns
    if method == "kmeans++":
        return kmeans_plus_plus(diag, column, m, rng)
    return pivoted_cholesky(diag, column, m)
