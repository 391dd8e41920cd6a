"""The pyramid match kernel: GraKeL's values on MUTAG and ENZYMES graphs whose
embedding is well defined (its level sum corrected; uncorrected for L = 1), a
brute-force reference of the definition, call independence, the feature map and
hostile parameters."""

import warnings

import numpy as np
import pytest

from conftest import DATASETS, assert_bit_identical, assert_label_errors, assert_pair_only, random_graph, to_grakel
from graphgram import Graph, PyramidMatchKernel, datasets

grakel = pytest.importorskip("grakel")


def adjacency(g):
    A = np.zeros((g.n_nodes, g.n_nodes))
    for (u, v), w in zip(g.edges.tolist(), g.weights.tolist()):
        A[u, v] += w
        if u != v:
            A[v, u] += w
    return A


def embedding(g, d):
    """|eigenvectors| of the min(n, d) eigenvalues of largest magnitude (a positive
    one first on ties), ordered by decreasing value; and the eigenvalues."""
    w, U = np.linalg.eigh(adjacency(g))
    keep = np.lexsort((-w, -np.abs(w)))[:min(g.n_nodes, d)]
    keep = keep[np.argsort(-w[keep], kind="stable")]
    return np.abs(U[:, keep]), w, keep


def well_defined(g, L, d, tol=1e-7, grakel=True):
    """Whether the embedding is unique and no coordinate is near a cell boundary:
    the kept eigenvalues are simple, the d-th magnitude differs from the (d+1)-th,
    and (for GraKeL) n ≠ d + 1, where GraKeL keeps the largest values, not magnitudes."""
    n = g.n_nodes
    if n == 0:
        return not grakel
    if n == d + 1 and grakel:
        return False
    u, w, keep = embedding(g, d)
    mags = np.sort(np.abs(w))[::-1]
    if n > d and mags[d - 1] - mags[d] < tol:
        return False
    if any(np.sum(np.abs(w - w[k]) < tol) > 1 for k in keep):
        return False
    x = u * 2 ** (L - 1)
    return not np.any(np.abs(x - np.round(x)) < tol)


def corrected_pairwise(self, x, y):
    """GraKeL's PyramidMatch.pairwise_operation with its level sum taken after the
    level loop (GraKeL 0.1.11 adds it inside the loop, once per level)."""
    if len(x) == 0 or len(y) == 0:
        return 0.0
    inter = [np.minimum(a[:min(len(a), len(b))], b[:min(len(a), len(b))]).sum() for a, b in zip(x, y)]
    L = self.L
    return inter[L - 1] + sum((inter[j] - inter[j + 1]) / 2 ** (L - 1 - j) for j in range(L - 1))


def data(name, mutag):
    """80 MUTAG graphs, or every tenth ENZYMES graph (skipped without the data set)."""
    if name == "MUTAG":
        return mutag[0][:80]
    path = DATASETS / name
    if not path.exists():
        pytest.skip("no %s data set" % name)
    return datasets.load_tu(path)[0][::10]


@pytest.mark.parametrize("name", ["MUTAG", "ENZYMES"])
@pytest.mark.parametrize("L, d, labels", [(4, 6, True), (4, 6, False), (3, 4, True), (5, 8, False)])
def test_grakel_equivalence(mutag, monkeypatch, name, L, d, labels):
    from grakel.kernels import PyramidMatch
    from grakel.kernels import pyramid_match as module

    monkeypatch.setattr(module.PyramidMatch, "pairwise_operation", corrected_pairwise)
    graphs = [g for g in data(name, mutag) if well_defined(g, L, d)]
    assert len(graphs) > 25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = PyramidMatch(L=L, d=d, with_labels=labels).fit_transform([to_grakel(g) for g in graphs])
    K = PyramidMatchKernel(L=L, d=d, node_label="label" if labels else None)(graphs)
    np.testing.assert_allclose(K, ref, rtol=1e-14, atol=0, err_msg="%s L=%d d=%d" % (name, L, d))


def test_grakel_uncorrected_for_one_level(mutag):
    """With L = 1 GraKeL's misplaced sum runs once: its values as they are."""
    from grakel.kernels import PyramidMatch

    graphs = [g for g in mutag[0][:60] if well_defined(g, 1, 6)]
    ref = PyramidMatch(L=1, d=6).fit_transform([to_grakel(g) for g in graphs])
    assert_bit_identical(PyramidMatchKernel(L=1, d=6)(graphs), ref, "L=1")


def reference_gram(graphs, L, d, node_label):
    """The definition written out: per level, the histogram intersection of the
    (label, axis, cell) counts, combined as I_{L-1} + Σ 2^-(L-1-j) (I_j − I_{j+1})."""
    def hist(g, j):
        if g.n_nodes == 0:
            return {}
        u, _, _ = embedding(g, d)
        cells = np.minimum(np.floor(u * 2 ** j).astype(int), 2 ** j - 1)
        labels = g.node_attrs[node_label].tolist() if node_label else [0] * g.n_nodes
        h = {}
        for v in range(g.n_nodes):
            for q in range(u.shape[1]):
                key = (labels[v], q, cells[v, q])
                h[key] = h.get(key, 0) + 1
        return h

    H = [[hist(g, j) for j in range(L)] for g in graphs]
    K = np.zeros((len(graphs), len(graphs)))
    for a in range(len(graphs)):
        for b in range(len(graphs)):
            inter = [sum(min(c, H[b][j].get(k, 0)) for k, c in H[a][j].items()) for j in range(L)]
            K[a, b] = inter[L - 1] + sum((inter[j] - inter[j + 1]) / 2 ** (L - 1 - j) for j in range(L - 1))
    return K


@pytest.mark.parametrize("L, d, node_label", [(4, 6, "label"), (1, 2, None), (6, 3, "label")])
def test_definition_on_random_graphs(rng, L, d, node_label):
    """Weighted edges, self-loops, string labels, an empty and a one-node graph,
    graphs smaller than d; graphs whose embedding is unique, so that numpy's
    eigenvectors and the Go core's agree up to sign."""
    graphs = [random_graph(rng, int(rng.integers(1, 12)), p_edge=0.4) for _ in range(20)]
    graphs = [g for g in graphs if well_defined(g, L, d, grakel=False)]
    assert len(graphs) > 8
    names = np.array(["C", "N", "O"])
    graphs = [Graph(g.n_nodes, g.edges, g.weights, node_attrs={"label": names[g.node_attrs["label"] % 3]})
              for g in graphs]
    graphs += [Graph(0, np.zeros((0, 2), np.int64)), Graph(1, node_attrs={"label": np.array(["N"])})]
    kernel = PyramidMatchKernel(L=L, d=d, node_label=node_label)
    K = kernel(graphs)
    np.testing.assert_allclose(K, reference_gram(graphs, L, d, node_label), rtol=1e-15, atol=0)
    assert_bit_identical(kernel.diag(graphs), np.diag(K), "diag")
    # The values are multiples of 2^-(L-1) (exact integers before the scale).
    np.testing.assert_array_equal(K * 2 ** (L - 1), np.round(K * 2 ** (L - 1)))
    F = kernel.features(graphs)
    np.testing.assert_allclose((F @ F.T).toarray(), K, rtol=1e-14, atol=0)


def test_values_depend_only_on_the_pair(mutag, rng):
    """Other graphs (other labels), order, side and n_jobs change no bit, on all
    graphs, degenerate eigenvalues included."""
    graphs = mutag[0][:30]
    full = assert_pair_only(PyramidMatchKernel(), graphs, rng)
    normalized = PyramidMatchKernel(normalize=True)(graphs)
    dg = np.diag(full)
    np.testing.assert_allclose(normalized, full / np.sqrt(np.outer(dg, dg)), rtol=1e-15)


def test_errors(mutag):
    graphs = mutag[0][:3]
    for params, err in [({"L": 0}, ValueError), ({"L": 17}, ValueError), ({"d": 0}, ValueError),
                        ({"d": -3}, ValueError), ({"L": 2.0}, TypeError), ({"d": float("nan")}, TypeError),
                        ({"node_label": 3}, TypeError)]:
        with pytest.raises(err):
            PyramidMatchKernel(**params)(graphs)
    assert_label_errors(PyramidMatchKernel, graphs)
    with pytest.raises(ValueError, match="NaN|finite"):
        Graph(2, np.array([[0, 1]]), np.array([np.nan]), node_attrs={"label": np.array([0, 1])})
