"""The WL and core frameworks over a base kernel: against GraKeL on MUTAG, against
a brute-force reference (networkx cores, WL refinement written here, the base
kernel graph pair by graph pair), call independence, gradients, bad input."""

import pickle
import warnings

import networkx as nx
import numpy as np
import pytest
from sklearn.base import clone

from graphgram import (CoreFramework, Graph, MarginalizedGraphKernel, ShortestPathKernel, VertexHistogramKernel,
                       WeisfeilerLehmanKernel, WLFramework)
from graphgram.microkernels import KroneckerDelta, SquareExponential, TensorProduct

from conftest import assert_bit_identical, random_graph, to_grakel

LABEL = TensorProduct(label=KroneckerDelta(0.0))


def sp():
    return ShortestPathKernel(node_kernel=LABEL)


@pytest.fixture(scope="module")
def graphs():
    rng = np.random.default_rng(5)
    return [random_graph(rng, int(rng.integers(1, 9)), p_edge=0.45) for _ in range(12)]


@pytest.mark.parametrize("normalize", [False, True])
def test_grakel_equivalence(mutag, normalize):
    """GraKeL's WL-shortest-path and Core-SP / Core-WL on MUTAG: raw values are integer
    counts, equal exactly; normalized ones agree to an ulp (GraKeL divides by
    sqrt(d_i d_j), graphgram multiplies by the two factors 1/sqrt(d))."""
    grakel = pytest.importorskip("grakel.kernels")
    graphs = mutag[0][:80]
    gk = [to_grakel(g) for g in graphs]
    tol = dict(rtol=1e-14, atol=0) if normalize else dict(rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = grakel.WeisfeilerLehman(n_iter=3, base_graph_kernel=grakel.ShortestPath,
                                      normalize=normalize).fit_transform(gk)
        np.testing.assert_allclose(WLFramework(sp(), n_iter=3, normalize=normalize)(graphs), ref, **tol)
        ref = grakel.CoreFramework(base_graph_kernel=grakel.ShortestPath, normalize=normalize).fit_transform(gk)
        np.testing.assert_allclose(CoreFramework(sp(), normalize=normalize)(graphs), ref, **tol)
        ref = grakel.CoreFramework(base_graph_kernel=(grakel.WeisfeilerLehman, dict(n_iter=4)),
                                   normalize=normalize).fit_transform(gk)
        np.testing.assert_allclose(CoreFramework(WeisfeilerLehmanKernel(n_iter=4), normalize=normalize)(graphs),
                                   ref, **tol)


# --- brute force: the definitions, graph pair by graph pair ---------------------
def wl_rounds(g, h):
    """The WL labellings of g alone, rounds 0..h, as signatures (tuples): equal
    signatures in two graphs are equal labels."""
    adj = [[] for _ in range(g.n_nodes)]
    for u, v in g.edges.tolist():
        adj[u].append(v)
        if u != v:
            adj[v].append(u)
    lab = [("r0", int(x)) for x in g.node_attrs["label"]]
    out = [lab]
    for _ in range(h):
        lab = [(lab[v], tuple(sorted(lab[w] for w in adj[v]))) for v in range(g.n_nodes)]
        out.append(lab)
    return out


def with_labels(g, labels):
    return Graph(g.n_nodes, g.edges, g.weights, dict(g.node_attrs, label=labels), g.edge_attrs)


def wl_reference(base, g1, g2, h):
    total = 0.0
    for l1, l2 in zip(wl_rounds(g1, h), wl_rounds(g2, h)):
        codes = {s: k for k, s in enumerate(sorted(set(l1) | set(l2), key=repr))}
        total += base(*[[with_labels(g, np.array([codes[s] for s in lab], dtype=np.int64))]
                        for g, lab in ((g1, l1), (g2, l2))])[0, 0]
    return total


def k_core(g, i):
    """networkx's i-core of g (self-loops removed first, as CoreFramework ignores them), as a Graph."""
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from((u, v) for u, v in g.edges.tolist() if u != v)
    core = nx.core_number(G)
    keep = np.array([core[v] >= i for v in range(g.n_nodes)], dtype=bool)
    if not keep.any():
        return None
    index = np.cumsum(keep) - 1
    inside = [k for k, (u, v) in enumerate(g.edges.tolist()) if keep[u] and keep[v]]
    e = g.edges[inside]
    return Graph(int(keep.sum()), index[e] if len(e) else np.zeros((0, 2), np.int64), g.weights[inside],
                 {k: v[keep] for k, v in g.node_attrs.items()}, {k: v[inside] for k, v in g.edge_attrs.items()})


def core_reference(base, g1, g2, min_core):
    total = 0.0
    for i in range(max(0, min_core + 1), max(g1.n_nodes, g2.n_nodes) + 1):
        c1, c2 = k_core(g1, i), k_core(g2, i)
        if c1 is not None and c2 is not None:
            total += base([c1], [c2])[0, 0]
    return total


BASES = {
    "sp": sp,
    "wl": lambda: WeisfeilerLehmanKernel(n_iter=2),
    "sp-lengths": lambda: ShortestPathKernel(node_kernel=LABEL, weight="length"),
    "mgk": lambda: MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)),
                                          TensorProduct(length=SquareExponential(1.0)), q=0.2),
}


@pytest.mark.parametrize("base", ["sp", "mgk", "sp-lengths"])
def test_wl_brute_force(graphs, base):
    K = WLFramework(BASES[base](), n_iter=2)(graphs[:7], graphs[5:])
    b = BASES[base]()
    ref = [[wl_reference(b, x, y, 2) for y in graphs[5:]] for x in graphs[:7]]
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("base,min_core", [("sp", -1), ("wl", -1), ("wl", 1), ("mgk", 0), ("sp", 5)])
def test_core_brute_force(graphs, base, min_core):
    K = CoreFramework(BASES[base](), min_core=min_core)(graphs[:7], graphs[5:])
    b = BASES[base]()
    ref = [[core_reference(b, x, y, min_core) for y in graphs[5:]] for x in graphs[:7]]
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-12)


def frameworks():
    return {"wl-sp": WLFramework(sp(), n_iter=3, normalize=True),
            "core-wl": CoreFramework(WeisfeilerLehmanKernel(n_iter=3), normalize=True),
            "core-sp": CoreFramework(sp(), normalize=0.5)}


@pytest.mark.parametrize("name", ["wl-sp", "core-wl", "core-sp"])
def test_call_independence(graphs, name):
    """A pair's value, bit for bit, whatever else the call holds, its order, side, n_jobs."""
    k = frameworks()[name]
    full = k(graphs)
    sub = [graphs[3], graphs[7], graphs[0]]
    np.testing.assert_array_equal(k(sub)[0, 1], full[3, 7])
    assert_bit_identical(k(sub, graphs)[[0, 1, 2]][:, [3, 7, 0]], full[np.ix_([3, 7, 0], [3, 7, 0])])
    assert_bit_identical(k(graphs[::-1])[::-1, ::-1], full)
    assert_bit_identical(clone(k).set_params(n_jobs=1)(graphs[:5], graphs[:5]), full[:5, :5])
    assert_bit_identical(k.diag(graphs), np.diag(full))
    assert_bit_identical(k.fit(graphs[:6]).transform(graphs[6:]), full[6:, :6])


@pytest.mark.parametrize("framework", [WLFramework, CoreFramework])
@pytest.mark.parametrize("normalize", [False, True])
def test_gradient(graphs, framework, normalize):
    """The gradient (the sum of the marginalized kernel's) against central differences."""
    k = framework(BASES["mgk"](), normalize=normalize)
    X = graphs[:5]
    K, G = k(X, eval_gradient=True)
    np.testing.assert_allclose(K, k(X), rtol=1e-12)
    assert G.shape == (5, 5, k.n_dims) and k.n_dims == 3
    h = 1e-5
    for p in range(k.n_dims):
        t = k.theta.copy()
        t[p] += h
        up = k.clone_with_theta(t)(X)
        t[p] -= 2 * h
        down = k.clone_with_theta(t)(X)
        np.testing.assert_allclose(G[..., p], (up - down) / (2 * h), rtol=1e-5, atol=1e-8)
    d, gd = k._diag_gradient(X)
    np.testing.assert_allclose(d, np.diag(K), rtol=1e-12)
    np.testing.assert_allclose(gd, np.einsum("iik->ik", G), rtol=1e-10, atol=1e-12)


def test_parameters_and_pickling(graphs):
    k = WLFramework(BASES["mgk"](), n_iter=2, normalize=True)
    params = k.get_params(deep=True)
    assert params["base_kernel__q"] == 0.2 and params["n_iter"] == 2
    k.set_params(base_kernel__q=0.3)
    assert k.base_kernel.q == 0.3
    assert [h.name for h in k.hyperparameters][0] == "base_kernel__q"
    np.testing.assert_allclose(np.exp(k.theta)[0], 0.3)
    again = pickle.loads(pickle.dumps(k))
    assert_bit_identical(again(graphs[:4]), k(graphs[:4]))
    # The base kernel's own normalize and execution settings are the framework's.
    assert_bit_identical(WLFramework(ShortestPathKernel(node_kernel=LABEL, normalize=True), n_iter=1)(graphs),
                         WLFramework(sp(), n_iter=1)(graphs))
    # The WL subtree kernel is the framework over the vertex histogram.
    assert_bit_identical(WLFramework(VertexHistogramKernel(), n_iter=3)(graphs),
                         WeisfeilerLehmanKernel(n_iter=3)(graphs))


def test_gaussian_process(graphs):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel
    y = np.arange(8, dtype=float)
    gp = GaussianProcessRegressor(ConstantKernel() * CoreFramework(BASES["mgk"](), normalize=True), alpha=1e-2,
                                  optimizer=None)
    assert np.all(np.isfinite(gp.fit(graphs[:8], y).predict(graphs[8:])))


def test_bad_input(graphs):
    with pytest.raises(TypeError, match="base_kernel must be a graphgram graph kernel"):
        WLFramework("sp")(graphs)
    # None is GraKeL's default base kernel.
    assert_bit_identical(WLFramework(n_iter=2)(graphs), WeisfeilerLehmanKernel(n_iter=2)(graphs))
    assert_bit_identical(CoreFramework()(graphs), CoreFramework(sp())(graphs))
    with pytest.raises(ValueError, match=r"n_iter must be in \[0, 100\]"):
        WLFramework(sp(), n_iter=-1)(graphs)
    with pytest.raises(TypeError, match="node_label must be the name"):
        WLFramework(sp(), node_label=None)(graphs)
    with pytest.raises(ValueError, match="min_core must be >= -1"):
        CoreFramework(sp(), min_core=-2)(graphs)
    with pytest.raises(TypeError, match="min_core must be an integer"):
        CoreFramework(sp(), min_core=1.5)(graphs)
    bad = graphs[:2] + [Graph(2, [(0, 1)], node_attrs={"label": [0.5, 1.0]})]
    with pytest.raises(TypeError, match=r"X\[2\].*'label'.*non-integer"):
        WLFramework(sp())(bad)
    missing = [Graph(2, [(0, 1)], node_attrs={"other": [1, 2]})]
    with pytest.raises(ValueError, match=r"Y\[0\] has no node attribute 'label'"):
        CoreFramework(sp())(graphs[:2], missing)
    # A min_core above every core leaves no term: zeros, not an error.
    assert not CoreFramework(sp(), min_core=50)(graphs).any()
