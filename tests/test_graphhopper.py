"""The GraphHopper kernel: GraKeL's GraphHopper on ENZYMES (continuous
attributes, linear and Gaussian node kernels) and MUTAG (one-hot labels), a
brute-force reference over networkx's shortest paths, call independence and
bad input."""

import itertools

import networkx as nx
import numpy as np
import pytest

from conftest import assert_bit_identical, dataset_dir, random_graph
from graphgram import GraphHopperKernel
from graphgram.datasets import load_tu
from graphgram.microkernels import DotProduct, KroneckerDelta, SquareExponential, TensorProduct
from test_explicit import spread

grakel = pytest.importorskip("grakel")


def to_grakel(g, attrs):
    """GraKeL input: the edge dictionary (both orientations, every node a key,
    self-loops dropped as GraKeL drops them) and one attribute vector per node."""
    adj = {i: {} for i in range(g.n_nodes)}
    for u, v in g.edges.tolist():
        if u != v:
            adj[u][v] = adj[v][u] = 1.0
    return [adj, {i: np.asarray(a, dtype=float) for i, a in enumerate(attrs)}]


def has_isolated_nodes(g):
    return g.n_nodes > np.unique(g.edges[g.edges[:, 0] != g.edges[:, 1]]).size


def grakel_gram(graphs, attrs, kernel_type):
    from grakel.kernels import GraphHopper
    return GraphHopper(kernel_type=kernel_type).fit_transform(
        [to_grakel(g, a) for g, a in zip(graphs, attrs)])


@pytest.fixture(scope="module")
def enzymes():
    graphs, _ = load_tu(dataset_dir("ENZYMES"))
    # GraKeL's counting is pure Python: a spread subset keeps it to a second.
    # GraKeL fails on a one-node component under NumPy 2 (np.squeeze of its 1×1
    # DAG matrix gives a 0-d array): graphs with isolated nodes are left out
    # here and covered by the brute-force test.
    return spread([g for g in graphs if not has_isolated_nodes(g)], 16)


@pytest.mark.parametrize("kernel_type, node_kernel", [
    ("linear", TensorProduct(attributes=DotProduct(0.0))),
    ("gaussian", TensorProduct(attributes=SquareExponential(1 / np.sqrt(2.0)))),
    (("gaussian", 0.05), TensorProduct(attributes=SquareExponential(1 / np.sqrt(2 * 0.05)))),
])
def test_grakel_enzymes(enzymes, kernel_type, node_kernel):
    ref = grakel_gram(enzymes, [g.node_attrs["attributes"] for g in enzymes], kernel_type)
    K = GraphHopperKernel(node_kernel=node_kernel)(enzymes)
    # Sums of products in a different order (GraKeL forms M Mᵀ, then one dot
    # product): rounding only.
    np.testing.assert_allclose(K, ref, rtol=1e-10, atol=0)


def test_grakel_mutag_labels(mutag):
    graphs = [g for g in mutag[0] if not has_isolated_nodes(g)][:30]
    onehot = [np.eye(7)[g.node_attrs["label"]] for g in graphs]
    ref = grakel_gram(graphs, onehot, "linear")
    K = GraphHopperKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))(graphs)
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=0)
    # Without a node kernel every node pair weighs 1: GraKeL's linear kernel
    # on the constant attribute 1 — integer counts, so exactly equal.
    ref1 = grakel_gram(graphs, [np.ones((g.n_nodes, 1)) for g in graphs], "linear")
    np.testing.assert_array_equal(GraphHopperKernel()(graphs), ref1)


def brute_weights(g):
    """M(v)[a, b] from every shortest path networkx lists, for every ordered
    pair of end nodes (a node alone is the path of one node)."""
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from((u, v) for u, v in g.edges.tolist() if u != v)
    M = {}
    for s, t in itertools.product(range(g.n_nodes), repeat=2):
        if not nx.has_path(G, s, t):
            continue
        for path in nx.all_shortest_paths(G, s, t):
            for a, v in enumerate(path):
                M[v, a, len(path) - 1] = M.get((v, a, len(path) - 1), 0) + 1
    return M


def brute_kernel(g, h, node_kernel):
    Mg, Mh = brute_weights(g), brute_weights(h)
    total = 0.0
    for (v, a, b), x in Mg.items():
        for (w, a2, b2), y in Mh.items():
            if (a, b) == (a2, b2):
                total += x * y * node_kernel(v, w)
    return total


@pytest.mark.parametrize("name", ["none", "dot", "gauss", "label-gauss"])
def test_brute_force(name):
    rng = np.random.default_rng(7)
    graphs = [random_graph(rng, n, p_edge=p) for n, p in [(0, 0.3), (1, 0.3), (5, 0.2), (7, 0.35), (8, 0.5), (6, 0.0)]]
    kernels = {
        "none": (None, lambda g, h: lambda v, w: 1.0),
        "dot": (TensorProduct(vec=DotProduct(0.5)),
                lambda g, h: lambda v, w: 0.25 + g.node_attrs["vec"][v] @ h.node_attrs["vec"][w]),
        "gauss": (TensorProduct(vec=SquareExponential(0.8)),
                  lambda g, h: lambda v, w: np.exp(-np.sum((g.node_attrs["vec"][v] - h.node_attrs["vec"][w]) ** 2)
                                                   / (2 * 0.8 ** 2))),
        "label-gauss": (TensorProduct(label=KroneckerDelta(0.3), charge=SquareExponential(1.5)),
                        lambda g, h: lambda v, w: (1.0 if g.node_attrs["label"][v] == h.node_attrs["label"][w]
                                                   else 0.3)
                        * np.exp(-(g.node_attrs["charge"][v] - h.node_attrs["charge"][w]) ** 2 / (2 * 1.5 ** 2))),
    }
    node_kernel, ref = kernels[name]
    K = GraphHopperKernel(node_kernel=node_kernel)(graphs)
    want = np.array([[brute_kernel(g, h, ref(g, h)) for h in graphs] for g in graphs])
    np.testing.assert_allclose(K, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("node_kernel", [None, TensorProduct(vec=DotProduct(0.5)),
                                         TensorProduct(label=KroneckerDelta(0.3), vec=SquareExponential(1.0))])
def test_call_independence(node_kernel):
    """K(G, G') is the same bits whatever else the call holds, on either side,
    in any order, for any n_jobs, and from diag."""
    rng = np.random.default_rng(3)
    graphs = [random_graph(rng, int(rng.integers(1, 12))) for _ in range(10)]
    full = GraphHopperKernel(node_kernel=node_kernel, n_jobs=1)(graphs)
    perm = rng.permutation(10)
    a, b = perm[:4], perm[4:]
    for n_jobs in (1, 2):
        k = GraphHopperKernel(node_kernel=node_kernel, n_jobs=n_jobs)
        assert_bit_identical(k([graphs[i] for i in a], [graphs[j] for j in b]), full[np.ix_(a, b)], "cross")
        assert_bit_identical(k([graphs[j] for j in b], [graphs[i] for i in a]), full[np.ix_(b, a)], "swapped")
        assert_bit_identical(k([graphs[i] for i in perm]), full[np.ix_(perm, perm)], "permuted")
        assert_bit_identical(k.diag(graphs), np.diag(full), "diag")


def test_normalize():
    rng = np.random.default_rng(4)
    graphs = [random_graph(rng, n) for n in (4, 6, 9)]
    nk = TensorProduct(vec=SquareExponential(1.0))
    K = GraphHopperKernel(node_kernel=nk)(graphs)
    d = np.sqrt(np.diag(K))
    np.testing.assert_allclose(GraphHopperKernel(node_kernel=nk, normalize=True)(graphs), K / np.outer(d, d),
                               rtol=1e-14)


def test_bad_input(mutag):
    graphs = mutag[0][:3]
    with pytest.raises(TypeError, match="node_kernel must be a graphgram microkernel"):
        GraphHopperKernel(node_kernel="linear")(graphs)
    with pytest.raises((KeyError, ValueError), match="charge"):
        GraphHopperKernel(node_kernel=TensorProduct(charge=SquareExponential(1.0)))(graphs)
    # The node kernel's hyperparameters are not the graph kernel's: as for the
    # shortest-path kernel, theta is empty and so is the gradient.
    k = GraphHopperKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.5)))
    K, dK = k(graphs, eval_gradient=True)
    assert k.n_dims == 0 and dK.shape == (3, 3, 0)
    np.testing.assert_array_equal(K, k(graphs))
