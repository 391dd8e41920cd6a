"""The shortest-path kernel: GraKeL's numbers on the TU data sets, a term-by-term
reference on random graphs, closed forms, and input errors."""

import numpy as np
import pytest

from graphgram import Graph
from graphgram.datasets import load_tu
from graphgram.microkernels import BrownianBridge, Constant, KroneckerDelta, SquareExponential, TensorProduct
from graphgram.kernels import ShortestPathKernel

from conftest import random_graph

LABEL = TensorProduct(label=KroneckerDelta(0.0))

# Subsets (the first graphs of at most 60 nodes) keep GraKeL's pure-Python
# preprocessing within the test budget; benchmarks/bench_sp_rw.py compares the
# whole data sets.
SUBSETS = {"MUTAG": 188, "ENZYMES": 100, "PROTEINS": 100, "NCI1": 200}


def to_grakel(g, labels=True):
    """GraKeL input: an edge dictionary with every node (isolated ones too) and labels."""
    adj = {i: {} for i in range(g.n_nodes)}
    for u, v in g.edges:
        if u != v:
            adj[int(u)][int(v)] = 1.0
            adj[int(v)][int(u)] = 1.0
    if not labels:
        return [adj]
    return [adj, {i: int(x) for i, x in enumerate(g.node_attrs["label"])}]


@pytest.fixture(scope="module", params=sorted(SUBSETS))
def tu_subset(request, datasets_dir):
    name = request.param
    graphs, _ = load_tu(datasets_dir / name)
    return name, [g for g in graphs if g.n_nodes <= 60][:SUBSETS[name]]


def test_grakel_equivalence(tu_subset):
    grakel = pytest.importorskip("grakel")
    name, graphs = tu_subset
    for labeled in (True, False):
        ref = grakel.ShortestPath(with_labels=labeled).fit_transform([to_grakel(g, labeled) for g in graphs])
        K = ShortestPathKernel(node_kernel=LABEL if labeled else None)(graphs)
        assert K.dtype == np.float64
        # Counts of shortest paths: both sides are exact integers.
        np.testing.assert_array_equal(K, ref, err_msg="%s labeled=%s" % (name, labeled))
    # The rectangular matrix and the diagonal agree with the symmetric one.
    kernel = ShortestPathKernel(node_kernel=LABEL)
    a = len(graphs) // 3
    full = kernel(graphs)
    np.testing.assert_array_equal(kernel(graphs[:a], graphs[a:]), full[:a, a:])
    np.testing.assert_array_equal(kernel.diag(graphs), np.diag(full))


def reference(g, h, node_kernel, length_kernel, weight):
    """The definition term by term: ordered pairs of distinct connected nodes."""
    def distances(x):
        n = x.n_nodes
        w = np.full((n, n), np.inf)
        for e, (u, v) in enumerate(x.edges):
            if u != v:
                length = 1.0 if weight is None else float(x.edge_attrs[weight][e])
                w[u, v] = w[v, u] = min(w[u, v], length)
        np.fill_diagonal(w, 0)
        for k in range(n):  # Floyd–Warshall (scipy's dense input would drop 0-length edges)
            w = np.minimum(w, w[:, k:k + 1] + w[k:k + 1, :])
        return w

    def node(x, i):
        return {k: v[i] for k, v in x.node_attrs.items()}

    dg, dh = distances(g), distances(h)
    kn = (lambda a, b: 1.0) if node_kernel is None else node_kernel
    kl = (lambda a, b: float(a == b)) if length_kernel is None else length_kernel
    total = 0.0
    for u in range(g.n_nodes):
        for v in range(g.n_nodes):
            if u == v or np.isinf(dg[u, v]):
                continue
            for x in range(h.n_nodes):
                for y in range(h.n_nodes):
                    if x == y or np.isinf(dh[x, y]):
                        continue
                    total += (kn(node(g, u), node(h, x)) * kl(dg[u, v], dh[x, y]) * kn(node(g, v), node(h, y)))
    return total


@pytest.mark.parametrize("node_kernel", [None, LABEL, TensorProduct(label=KroneckerDelta(0.3)),
                                         TensorProduct(charge=SquareExponential(0.8)),
                                         TensorProduct(label=KroneckerDelta(0.0), vec=SquareExponential(1.5))],
                         ids=["none", "label", "label-h", "charge", "label*vec"])
@pytest.mark.parametrize("length_kernel", [None, KroneckerDelta(0.5), SquareExponential(1.0), BrownianBridge(2.0)],
                         ids=["exact", "delta-h", "gauss", "brownian"])
@pytest.mark.parametrize("weight", [None, "length"])
def test_matches_definition(rng, node_kernel, length_kernel, weight):
    graphs = [random_graph(rng, int(rng.integers(1, 7))) for _ in range(4)]
    graphs.append(Graph(4, [(0, 1), (2, 3)], node_attrs={"label": [0, 1, 0, 1], "charge": np.zeros(4),
                                                          "vec": np.ones((4, 2))},
                        edge_attrs={"label": [0, 0], "length": [0.5, 0.0]}))  # disconnected, a 0 length
    kernel = ShortestPathKernel(node_kernel=node_kernel, length_kernel=length_kernel, weight=weight)
    K = kernel(graphs)
    ref = np.array([[reference(g, h, node_kernel, length_kernel, weight) for h in graphs] for g in graphs])
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel(graphs[:2], graphs[2:]), ref[:2, 2:], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(kernel.diag(graphs), np.diag(K))


def test_closed_forms():
    # A path with n nodes has n - d node pairs at distance d; K_n has n(n-1) ordered
    # pairs, all at distance 1.
    paths = [Graph(n, [(i, i + 1) for i in range(n - 1)]) for n in (1, 2, 5, 30)]
    d = ShortestPathKernel().diag(paths)
    np.testing.assert_array_equal(d, [4 * sum((n - k) ** 2 for k in range(1, n)) for n in (1, 2, 5, 30)])
    complete = [Graph(n, [(i, j) for i in range(n) for j in range(i + 1, n)]) for n in (3, 6)]
    np.testing.assert_array_equal(ShortestPathKernel()(complete), [[36, 180], [180, 900]])
    # A constant length kernel ignores lengths: every pair of SP edges counts.
    np.testing.assert_array_equal(ShortestPathKernel(length_kernel=Constant(1.0))(complete),
                                  [[36, 180], [180, 900]])


def test_normalize_and_sklearn(mutag):
    graphs, _ = mutag
    graphs = graphs[:20]
    kernel = ShortestPathKernel(node_kernel=LABEL, normalize=True)
    K = kernel(graphs)
    np.testing.assert_allclose(np.diag(K), 1.0)
    raw = ShortestPathKernel(node_kernel=LABEL)(graphs)
    d = np.sqrt(np.diag(raw))
    np.testing.assert_allclose(K, raw / np.outer(d, d), rtol=1e-14)
    np.testing.assert_allclose(kernel.fit(graphs[:10]).transform(graphs[10:]), K[10:, :10], rtol=1e-14)
    from sklearn.base import clone
    assert clone(kernel).get_params()["node_kernel"] is not None


def test_errors(rng):
    g = random_graph(rng, 5)
    bad = Graph(3, [(0, 1), (1, 2)], node_attrs={"label": [0, 1, 0]}, edge_attrs={"length": [1.0, -2.0]})
    with pytest.raises(ValueError, match=r"X\[1\]: edge 1 .* has length -2"):
        ShortestPathKernel(weight="length")([g, bad])
    with pytest.raises(ValueError, match=r"Y\[0\]: edge 1 .* has length -2"):
        ShortestPathKernel(weight="length")([g], [bad])
    with pytest.raises(ValueError, match="has no node attribute 'color'"):
        ShortestPathKernel(node_kernel=TensorProduct(color=KroneckerDelta(0.0)))([g])
    with pytest.raises(ValueError, match="has no edge attribute 'dist'"):
        ShortestPathKernel(weight="dist")([g])
    vec = Graph(2, [(0, 1)], edge_attrs={"w": np.ones((1, 2))})
    with pytest.raises(ValueError, match="edge lengths must be scalars"):
        ShortestPathKernel(weight="w")([vec])
    with pytest.raises(TypeError, match="node_kernel must be a graphgram microkernel"):
        ShortestPathKernel(node_kernel="label")([g])
    with pytest.raises(TypeError, match="weight must be the name"):
        ShortestPathKernel(weight=1)([g])
    with pytest.raises(ValueError, match="length_kernel must compare lengths"):
        ShortestPathKernel(length_kernel=TensorProduct(charge=SquareExponential(1.0)))([g])
    with pytest.raises(TypeError, match="single Graph"):
        ShortestPathKernel()(g)
