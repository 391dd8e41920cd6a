"""graphkit-learn's marginalized kernel as the peer of bench_mgk.py.

gklearn's ``Marginalized`` (``gklearn/kernels/marginalized.py``) follows Kashima
et al. (2003) with a uniform start probability 1/n, a uniform transition
probability (1 − p)/deg over the neighbours, a stop probability p, and
0/1 Kronecker deltas on node and edge labels. For a graph pair it sets, on the
product nodes (i, i') of non-isolated nodes,

    R_1 = p² · 1,    R_N = p² · 1 + T R_{N−1},
    T[(i,i'),(j,j')] = (1−p)² / (deg_i deg'_i') · A_ij A'_i'j' · δ(l_j, l'_j') · δ(e_ij, e'_i'j'),
    K_N = Σ_(i,i') δ(l_i, l'_i') R_N(i,i') / (n n'),

with N = ``n_iteration``: R_N is the Neumann series Σ_{k<N} T^k p² 1 cut after
N terms, so K_N rises monotonically to its limit as N grows.

graphgram solves (D V⁻¹ − W) x = D 1 with D = diag(d⊗d')/(1−q)², V the node
kernel and W the edge-kernel-weighted product adjacency, and returns
K = Σ x. With unit weights, h = 0 deltas and x = V y this is
(I − T) y = 1 for the same T when q = p, so x = V R_∞ / p² and

    K_gklearn(N → ∞) = K_graphgram · q² / (n n').

Isolated nodes differ (gklearn starts them at p or 1, graphgram takes their
degree as 1), so the comparison uses graphs without isolated nodes; gklearn's
single-process mode also drops self-loops, which the data sets used here do not
have.

``needed_iterations`` replays gklearn's iteration with SciPy sparse matrices
to find the smallest N at which K_N is within a relative ``tol`` of the
rescaled graphgram value for every pair of a subset; gklearn is then run once
with that N and its actual agreement is measured.
"""

import time

import numpy as np
import scipy.sparse as sp


def has_isolated(g):
    return bool(np.any(g.degrees() == 0))


def _label_adjacency(g, edge_label):
    """{edge label: sparse symmetric 0/1 adjacency of the edges with that label}."""
    n = g.n_nodes
    e = np.asarray(g.edges)
    if edge_label is None:
        labels = np.zeros(len(e), dtype=np.int64)
    else:
        labels = np.asarray(g.edge_attrs[edge_label])
    out = {}
    for lab in np.unique(labels):
        sel = e[labels == lab]
        rows = np.concatenate([sel[:, 0], sel[:, 1]])
        cols = np.concatenate([sel[:, 1], sel[:, 0]])
        out[lab.item()] = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return out


def _transition(g1, g2, p, node_label, edge_label):
    """gklearn's T of the pair as a sparse matrix, and the node delta vector."""
    n1, n2 = g1.n_nodes, g2.n_nodes
    l1 = np.asarray(g1.node_attrs[node_label])
    l2 = np.asarray(g2.node_attrs[node_label])
    dv = (l1[:, None] == l2[None, :]).ravel().astype(np.float64)
    a1, a2 = _label_adjacency(g1, edge_label), _label_adjacency(g2, edge_label)
    W = sp.csr_matrix((n1 * n2, n1 * n2))
    for lab, m1 in a1.items():
        if lab in a2:
            W = W + sp.kron(m1, a2[lab], format="csr")
    deg1 = np.diff(sum(a1.values()).indptr).astype(np.float64)
    deg2 = np.diff(sum(a2.values()).indptr).astype(np.float64)
    c = (1.0 - p) ** 2 / np.outer(deg1, deg2).ravel()
    T = (sp.diags(c) @ W @ sp.diags(dv)).tocsr()
    return T, dv


def kashima_series(g1, g2, p, node_label, edge_label, nmax, ref=None, tol=0.0):
    """K_N of gklearn's iteration for N = 1 .. nmax (an array).

    With ``ref`` given, stops at the first N with (ref − K_N) / ref <= tol (K_N
    rises monotonically to its limit), so the array may be shorter than nmax.
    """
    T, dv = _transition(g1, g2, p, node_label, edge_label)
    r1 = p * p
    scale = 1.0 / (g1.n_nodes * g2.n_nodes)
    R = np.full(T.shape[0], r1)
    out = [dv @ R * scale]
    while len(out) < nmax:
        if ref is not None and (ref - out[-1]) <= tol * ref:
            break
        R = r1 + T @ R
        out.append(dv @ R * scale)
    return np.array(out)


def needed_iterations(graphs, K_ref, p, node_label, edge_label, tol, nmax=20000):
    """Smallest gklearn n_iteration giving relative error <= tol on every pair.

    K_ref holds graphgram's values already rescaled by q²/(n n'). Returns
    (N, True if tol was reached on every pair within nmax iterations).
    """
    worst_n, reached = 1, True
    for i in range(len(graphs)):
        for j in range(i, len(graphs)):
            ref = K_ref[i, j]
            if ref <= 0:
                continue
            ks = kashima_series(graphs[i], graphs[j], p, node_label, edge_label, nmax, ref=ref, tol=tol)
            if (ref - ks[-1]) > tol * ref:
                reached = False
            worst_n = max(worst_n, len(ks))
    return worst_n, reached


def run_gklearn(graphs, node_label, edge_label, p, n_iteration, jobs=1):
    """Run gklearn's Marginalized Gram matrix; return (K, wall seconds, mode)."""
    from gklearn.kernels import Marginalized

    nxg = [g.to_networkx(weight=None) for g in graphs]
    kern = Marginalized(node_labels=[node_label], edge_labels=[edge_label] if edge_label else [],
                        p_quit=p, n_iteration=int(n_iteration))
    parallel = "imap_unordered" if jobs > 1 else None
    t = time.perf_counter()
    K, _ = kern.compute(nxg, parallel=parallel, n_jobs=jobs, normalize=False, verbose=0)
    t = time.perf_counter() - t
    return np.asarray(K, dtype=np.float64), t, ("imap_unordered, %d processes" % jobs if parallel else "series")


def max_relative_difference(K_peer, K_ref):
    """max |K_peer − K_ref| / |K_ref| over pairs with K_ref != 0; inf if a zero differs."""
    nz = K_ref != 0
    if np.any(K_peer[~nz] != 0):
        return float("inf")
    if not nz.any():
        return 0.0
    return float(np.max(np.abs(K_peer[nz] - K_ref[nz]) / np.abs(K_ref[nz])))
