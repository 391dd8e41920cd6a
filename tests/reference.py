"""A dense NumPy reference of the marginalized graph kernel (GraphDot's convention).

It forms the product-graph linear system explicitly, evaluating the base kernels
with the Python microkernel evaluation, and solves it with ``numpy.linalg.solve``.
Only for small graphs: the system has (n1 n2)^2 entries.

With degrees d_i = Σ_j w_ij (a self-loop counted once; d_i = 0 taken as 1),

    D = diag(d ⊗ d') / (1 − q)^2,  V = diag(κv(v_i, v'_i')),
    W[(i,i'), (j,j')] = w_ij w'_i'j' κe(e_ij, e'_i'j'),
    (D V⁻¹ − W) x = D 1,           K = Σ p_i p'_i' x_(i,i').

When V has zeros the equivalent system (D − V W) x = V D 1 is solved instead.
"""

import numpy as np

from graphgram.microkernels import Constant


def _node_values(g):
    items = list(g.node_attrs.items())
    return [{k: (v[i] if v.ndim == 2 else v[i].item()) for k, v in items} for i in range(g.n_nodes)]


def _edge_values(g):
    items = list(g.edge_attrs.items())
    return [{k: (v[e] if v.ndim == 2 else v[e].item()) for k, v in items} for e in range(g.n_edges)]


def _degrees(g):
    d = g.adjacency().sum(axis=1)
    d[d == 0] = 1.0
    return d


def product_system(g1, g2, node_kernel=None, edge_kernel=None, q=0.01):
    """Return (D, V, W) of the product graph as dense arrays (D, V as vectors).

    Product node (i, i') has index i * n2 + i'.
    """
    node_kernel = Constant(1.0) if node_kernel is None else node_kernel
    edge_kernel = Constant(1.0) if edge_kernel is None else edge_kernel
    n1, n2 = g1.n_nodes, g2.n_nodes
    x1, x2 = _node_values(g1), _node_values(g2)
    V = np.array([node_kernel(a, b) for a in x1 for b in x2], dtype=np.float64)
    D = np.outer(_degrees(g1), _degrees(g2)).ravel() / (1.0 - q) ** 2
    W = np.zeros((n1 * n2, n1 * n2))
    e1, e2 = _edge_values(g1), _edge_values(g2)
    for a, (i, j) in enumerate(g1.edges):
        for b, (k, l) in enumerate(g2.edges):
            val = g1.weights[a] * g2.weights[b] * edge_kernel(e1[a], e2[b])
            # Both traversal directions of each edge; for self-loops some coincide.
            for (s, t) in ((i, j), (j, i)):
                for (u, v) in ((k, l), (l, k)):
                    W[s * n2 + u, t * n2 + v] = val
    return D, V, W


def mgk_dense(g1, g2, node_kernel=None, edge_kernel=None, q=0.01, lmin=0, p1=None, p2=None, nodal=False):
    """Marginalized graph kernel between two graphs by a dense direct solve.

    Parameters
    ----------
    g1, g2 : graphgram.Graph
    node_kernel, edge_kernel : MicroKernel, optional
        ``None`` means ``Constant(1.0)``.
    q : float
        Stopping probability, in (0, 1).
    lmin : {0, 1}
        1 drops the length-0 walks, i.e. subtracts V 1 from the solution.
    p1, p2 : array-like, optional
        Start probabilities per node (default all 1).
    nodal : bool
        Return the n1 × n2 matrix p_i p'_i' x_(i,i') instead of its sum.

    Returns
    -------
    float or ndarray of shape (n1, n2)
    """
    n1, n2 = g1.n_nodes, g2.n_nodes
    p1 = np.ones(n1) if p1 is None else np.asarray(p1, dtype=np.float64)
    p2 = np.ones(n2) if p2 is None else np.asarray(p2, dtype=np.float64)
    if n1 == 0 or n2 == 0:
        return np.zeros((n1, n2)) if nodal else 0.0
    D, V, W = product_system(g1, g2, node_kernel, edge_kernel, q)
    # Multiplying (D V^-1 - W) x = D by V gives (D - V W) x = V D, which stays valid
    # where V has zeros. With lmin=1 the unknown is y = x - V·1 (walks of length >= 1);
    # substituting gives (D - V W) y = V (W V), solved directly rather than by
    # subtracting two nearly equal vectors.
    if lmin == 0:
        rhs = V * D
    elif lmin == 1:
        rhs = V * (W @ V)
    else:
        raise ValueError("lmin must be 0 or 1")
    x = np.linalg.solve(np.diag(D) - V[:, None] * W, rhs)
    R = np.outer(p1, p2) * x.reshape(n1, n2)
    return R if nodal else float(R.sum())
