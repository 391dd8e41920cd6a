"""The propagation kernels: a NumPy implementation of the definition with the hash
functions re-derived here from the documented seed rule (exact equality), GraKeL's
Propagation and PropagationAttr with their random draws replaced by ours (exact
equality), partially labelled graphs, call independence, and bad input."""

import hashlib
import math
import struct
from collections import Counter

import numpy as np
import pytest

from conftest import assert_bit_identical, dataset_dir, random_graph, to_grakel
from graphgram import Graph, PropagationAttrKernel, PropagationKernel
from graphgram.datasets import load_tu


# --- the hash functions, from the rule in graphgram.kernels.propagation's docstring ---
def uniforms(seed, t, key):
    a, b = struct.unpack("<QQ", hashlib.blake2b(("%d|%d|%s" % (seed, t, key)).encode(), digest_size=16).digest())
    return ((a >> 11) + 0.5) / 2.0 ** 53, ((b >> 11) + 0.5) / 2.0 ** 53


def coefficient(seed, t, key, cauchy):
    u, v = uniforms(seed, t, key)
    return math.tan(math.pi * (u - 0.5)) if cauchy else math.sqrt(-2 * math.log(u)) * math.cos(2 * math.pi * v)


def label_key(value):
    return "label:s:%s" % value if isinstance(value, str) else "label:i:%d" % value


def transition(g):
    """T = D⁻¹A, the weighted adjacency (self-loops once) normalized by rows; zero rows stay zero."""
    A = np.zeros((g.n_nodes, g.n_nodes))
    for (u, v), w in zip(g.edges.tolist(), g.weights):
        A[u, v] = A[v, u] = w
    d = A.sum(axis=1)
    return np.divide(A, d[:, None], out=np.zeros_like(A), where=d[:, None] > 0)


def reference_counts(g, t_max, w, metric, seed, node_label="label", unlabeled=None):
    """The definition: one Counter of bins per round."""
    labels = [x.item() for x in g.node_attrs[node_label]]
    own = sorted({x for x in labels if x != unlabeled})
    P0 = np.zeros((g.n_nodes, len(own)))
    for v, x in enumerate(labels):
        if x == unlabeled:
            P0[v] = 1 / len(own) if own else 0
        else:
            P0[v, own.index(x)] = 1
    T, P, out = transition(g), P0, []
    cauchy = metric == "TV"
    for t in range(t_max):
        a = np.array([coefficient(seed, t, label_key(x), cauchy) for x in own])
        b = w * uniforms(seed, t, "offset")[0]
        X = np.sqrt(P) if metric == "H" else P
        out.append(Counter(np.floor((X @ a + b) / w).astype(np.int64).tolist()))
        P = T @ P
        if unlabeled is not None:
            keep = np.array([x != unlabeled for x in labels], dtype=bool)
            P[keep] = P0[keep]
    return out


def reference_attr_counts(g, t_max, w, metric, seed, attributes="vec"):  # width-2 vectors
    X = np.asarray(g.node_attrs[attributes], dtype=np.float64).reshape(g.n_nodes, 2)
    T, out = transition(g), []
    for t in range(t_max):
        a = np.array([coefficient(seed, t, "attr:%d" % d, metric == "L1") for d in range(X.shape[1])])
        b = np.array([w * uniforms(seed, t, "offset:%d" % d)[0] for d in range(X.shape[1])])
        out.append(Counter(map(tuple, np.floor((X * a + b) / w).astype(np.int64).tolist())))
        X = T @ X
    return out


def reference_gram(counts):
    return np.array([[float(sum(sum(c * cb[k] for k, c in ca.items()) for ca, cb in zip(a, b))) for b in counts]
                     for a in counts])


def with_unlabeled(rng, graphs, fraction):
    """Copies of the graphs with about ``fraction`` of their labels replaced by -1."""
    out = []
    for g in graphs:
        lab = np.array(g.node_attrs["label"])
        lab[rng.random(g.n_nodes) < fraction] = -1
        out.append(Graph(g.n_nodes, g.edges, g.weights, node_attrs=dict(g.node_attrs, label=lab)))
    return out


def random_graphs(rng, count=16):
    graphs = [random_graph(rng, int(n), p_edge=0.35) for n in rng.integers(0, 10, count)]
    graphs.append(Graph(3, [(0, 1)], node_attrs={"label": [1, 1, 2], "vec": np.ones((3, 2))}))  # isolated node
    return graphs


# --- the definition -------------------------------------------------------------------
@pytest.mark.parametrize("metric, w", [("TV", 0.01), ("TV", 0.5), ("H", 0.05)])
@pytest.mark.parametrize("partial", [False, True])
def test_definition_on_random_graphs(rng, metric, w, partial):
    graphs = random_graphs(rng)
    unlabeled = None
    if partial:
        graphs, unlabeled = with_unlabeled(rng, graphs, 0.4), -1
    k = PropagationKernel(t_max=4, w=w, metric=metric, unlabeled=unlabeled, random_state=7)
    want = reference_gram([reference_counts(g, 4, w, metric, 7, unlabeled=unlabeled) for g in graphs])
    assert want.sum() > np.trace(want)  # not a diagonal matrix: graphs share bins
    np.testing.assert_array_equal(k(graphs), want)
    F = k.features(graphs)
    np.testing.assert_array_equal((F @ F.T).toarray(), want)


def test_definition_on_mutag_with_string_labels(mutag):
    names = np.array(["C", "N", "O", "F", "I", "Cl", "Br"])
    graphs = [Graph(g.n_nodes, g.edges, g.weights, node_attrs={"label": names[g.node_attrs["label"]]})
              for g in mutag[0][:40]]
    want = reference_gram([reference_counts(g, 5, 0.01, "TV", 0) for g in graphs])
    np.testing.assert_array_equal(PropagationKernel()(graphs), want)


@pytest.mark.parametrize("metric, w", [("L1", 0.5), ("L2", 2.0)])
def test_attr_definition_on_random_graphs(rng, metric, w):
    graphs = random_graphs(rng)
    want = reference_gram([reference_attr_counts(g, 3, w, metric, 5) for g in graphs])
    assert want.sum() > np.trace(want)
    k = PropagationAttrKernel(t_max=3, w=w, metric=metric, attributes="vec", random_state=5)
    np.testing.assert_array_equal(k(graphs), want)


# --- GraKeL, with its random draws replaced by ours -------------------------------------
def grakel_random_state(kernel_of, t_max, w, coef, offset, cauchy):
    """A RandomState whose draws, in the order GraKeL's Propagation(Attr).parse_input
    makes them, are our hash functions: per round the coefficients (a second
    normal draw, the Cauchy divisor, returns ones), then the offset over w.
    ``coef(t, column_keys)``; the discrete kernel's columns are its label
    enumeration, read when drawn."""
    class Ours(np.random.RandomState):
        def __init__(self):
            super().__init__(0)
            self.t, self.phase = 0, 0

        def randn(self, *shape):
            if self.phase == 0:
                self.phase = 1 if cauchy else 2
                return np.array(coef(self.t, kernel_of()))
            if self.phase == 1:
                self.phase = 2
                return np.ones(shape)
            self.phase, self.t = 0, self.t + 1  # PropagationAttr: the offsets, w·randn(d)
            return np.array(offset(self.t - 1)) / w

        def rand(self, *shape):  # Propagation: the offset, w·rand()
            self.phase, self.t = 0, self.t + 1
            return offset(self.t - 1) / w
    return Ours()


@pytest.mark.parametrize("metric, w", [("TV", 0.01), ("H", 0.01), ("TV", 1e6)])
def test_grakel_propagation_with_our_draws(mutag, metric, w):
    grakel = pytest.importorskip("grakel")
    graphs = mutag[0]
    gk = grakel.kernels.Propagation(t_max=5, w=w, M=metric)

    def columns():
        return [label for label, _ in sorted(gk._enum_labels.items(), key=lambda kv: kv[1])]
    gk.random_state = grakel_random_state(
        columns, 5, w, lambda t, labels: [coefficient(3, t, label_key(x), metric == "TV") for x in labels],
        lambda t: w * uniforms(3, t, "offset")[0], metric == "TV")
    ref = gk.fit_transform([to_grakel(g) for g in graphs])
    K = PropagationKernel(t_max=5, w=w, metric=metric, random_state=3)(graphs)
    np.testing.assert_array_equal(K, ref)


@pytest.mark.parametrize("metric", ["L1", "L2"])
def test_grakel_propagation_attr_with_our_draws(metric):
    grakel = pytest.importorskip("grakel")
    graphs, _ = load_tu(dataset_dir("ENZYMES"))
    graphs = [g for g in graphs[::6] if g.n_nodes][:100]
    w, d = 4.0, graphs[0].node_attrs["attributes"].shape[1]
    gk = grakel.kernels.PropagationAttr(t_max=4, w=w, M=metric)
    gk.random_state = grakel_random_state(
        lambda: None, 4, w, lambda t, _: [coefficient(1, t, "attr:%d" % k, metric == "L1") for k in range(d)],
        lambda t: [w * uniforms(1, t, "offset:%d" % k)[0] for k in range(d)], metric == "L1")
    ref = gk.fit_transform([to_grakel(g, attribute="attributes") for g in graphs])
    K = PropagationAttrKernel(t_max=4, w=w, metric=metric, random_state=1)(graphs)
    assert np.count_nonzero(K - np.diag(np.diag(K))) > 0
    np.testing.assert_array_equal(K, ref)


# --- call independence, partially labelled graphs -----------------------------------
def test_call_independence(rng, mutag):
    """A pair's value is the same bits whatever else is in the call, in what order, on
    which side, and with what n_jobs; also for labels occurring in only one call."""
    graphs = with_unlabeled(rng, mutag[0][:30], 0.2) + [
        Graph(2, [(0, 1)], node_attrs={"label": [99, -1]})]  # a label no other graph has
    for k in (PropagationKernel(unlabeled=-1, random_state=4), PropagationKernel(metric="H")):
        full = k(graphs)
        order = [30, 5, 17, 2]
        sub = type(k)(**dict(k.get_params(), n_jobs=1))([graphs[i] for i in order])
        assert_bit_identical(sub, full[np.ix_(order, order)], "sub-call")
        cross = k([graphs[i] for i in order[:2]], [graphs[i] for i in order[2:]])
        assert_bit_identical(cross, full[np.ix_(order[:2], order[2:])], "cross-call")
    ka = PropagationAttrKernel(attributes="vec", w=0.5)
    graphs = random_graphs(rng, 20)
    full = ka(graphs)
    assert_bit_identical(ka(graphs[::-1]), full[::-1, ::-1], "reversed call")


def test_partially_labelled_graphs_propagate_labels():
    """Label propagation: labelled nodes keep their label every round; an unlabelled
    node starts uniform over its graph's labels and takes the average of its
    neighbours."""
    path = Graph(3, [(0, 1), (1, 2)], node_attrs={"label": ["a", "?", "b"]})
    mirrored = Graph(3, [(0, 1), (1, 2)], node_attrs={"label": ["b", "?", "a"]})
    other = Graph(3, [(0, 1), (1, 2)], node_attrs={"label": ["a", "?", "a"]})
    k = PropagationKernel(t_max=3, unlabeled="?")
    K = k([path, mirrored, other])
    # path and mirrored: the distributions a, (½, ½), b in every round, three bins.
    assert K[0, 1] == K[0, 0] == 3 * 3
    # other's unlabelled node starts uniform over its graph's one label, a: all
    # three of its nodes share a's bin, which path's first node has too.
    assert K[2, 2] == 3 * 9 and K[0, 2] == 3 * 3
    want = reference_gram([reference_counts(g, 3, 0.01, "TV", 0, unlabeled="?") for g in (path, mirrored, other)])
    np.testing.assert_array_equal(K, want)


# --- bad input ------------------------------------------------------------------------
@pytest.mark.parametrize("params, error, match", [
    (dict(w=0), ValueError, "w .the bin width. must be a positive"),
    (dict(w=-1.0), ValueError, "w .the bin width."),
    (dict(w=float("nan")), ValueError, "w .the bin width."),
    (dict(w="wide"), ValueError, "w .the bin width."),
    (dict(t_max=0), ValueError, r"t_max must be in \[1, 1000\]"),
    (dict(t_max=2.5), TypeError, "t_max must be an integer"),
    (dict(metric="L1"), ValueError, "metric must be one of 'TV', 'H'"),
    (dict(random_state=None), TypeError, "random_state must be an integer"),
    (dict(unlabeled=1.5), TypeError, "unlabeled must be a label value"),
    (dict(unlabeled="?"), TypeError, "unlabeled='\\?' is a string but the node label 'label' holds numbers"),
    (dict(node_label="element"), ValueError, r"X\[0\] has no node attribute 'element'"),
    (dict(node_label="charge"), TypeError, r"X\[0\]: node attribute 'charge' .* non-integer"),
])
def test_bad_parameters(rng, params, error, match):
    graphs = [random_graph(rng, 4), random_graph(rng, 3)]
    with pytest.raises(error, match=match):
        PropagationKernel(**params)(graphs)


def test_bad_attributes(rng):
    graphs = [random_graph(rng, 4), random_graph(rng, 3)]
    with pytest.raises(ValueError, match=r"X\[0\] has no node attribute 'attributes'"):
        PropagationAttrKernel()(graphs)
    with pytest.raises(ValueError, match="metric must be one of 'L1', 'L2'"):
        PropagationAttrKernel(attributes="vec", metric="TV")(graphs)
    named = [Graph(2, [(0, 1)], node_attrs={"name": ["x", "y"]})]
    with pytest.raises(TypeError, match="holds strings; PropagationAttrKernel propagates numbers"):
        PropagationAttrKernel(attributes="name")(named)
    with pytest.raises(ValueError, match="bin index .* not representable"):
        PropagationAttrKernel(attributes="vec", w=1e-300)(graphs)
