"""The ODD-ST_h kernel: GraKeL's feature counts on MUTAG (its children sorted),
its call-dependent weights, a brute-force reference of the definition, call
independence, node renumbering, the feature map and hostile parameters."""

import warnings
from collections import Counter

import numpy as np
import pytest

from conftest import assert_bit_identical, assert_label_errors, assert_pair_only, random_graph, to_grakel
from graphgram import Graph, OddSthKernel

grakel = pytest.importorskip("grakel")


def sorted_hash_trees(tree):
    """GraKeL's hash_trees with each node's children's strings sorted (GraKeL
    joins them in an order that follows the node numbering where labels tie)."""
    vertices, edges, ordering, labels = tree
    order = sorted(vertices, key=lambda v: (ordering[v], labels[v]))
    out, by_string = {}, {}
    for v in order:  # children before parents
        kids = sorted(out[c][2] for c in edges.get(v, ()))
        s = "%s(%s)" % (labels[v], ",".join(kids)) if kids else str(labels[v])
        out[v] = [0, 1, s]
        by_string.setdefault(s, []).append(v)
    return out, by_string, order


def grakel_features(graphs, h, monkeypatch):
    """GraKeL's per-graph feature counts (rows: graphs) and weights, its children sorted."""
    from grakel.kernels import OddSth
    from grakel.kernels import odd_sth as module

    monkeypatch.setattr(module, "hash_trees", sorted_hash_trees)
    kernel = OddSth(h=h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        K = kernel.fit_transform([to_grakel(g, self_loops=False) for g in graphs])
    nodes = kernel.X[0]
    phi = np.array([nodes[v][1] for v in nodes], dtype=np.float64).T
    weight = np.array([nodes[v][0] for v in nodes], dtype=np.float64)
    return phi, weight, K


@pytest.mark.parametrize("h", [None, 1, 2, 4])
def test_grakel_features(mutag, monkeypatch, h):
    """GraKeL's feature counts give our Gram matrix bit for bit; GraKeL's own Gram
    weighs feature t by its count in the first graph of the call that holds it."""
    graphs = mutag[0][:40]
    phi, weight, K_grakel = grakel_features(graphs, h, monkeypatch)
    K = OddSthKernel(h=h)(graphs)
    assert_bit_identical(K, phi @ phi.T, "h=%s" % h)
    first = phi[np.argmax(phi > 0, axis=0), np.arange(phi.shape[1])]
    np.testing.assert_array_equal(weight, first)
    np.testing.assert_array_equal(K_grakel, (phi * weight) @ phi.T)


def test_grakel_depends_on_the_call(mutag, monkeypatch):
    """Why the weights are 1: GraKeL's value of a pair changes with the order of the call."""
    graphs = mutag[0][:6]
    _, _, K = grakel_features(graphs, 2, monkeypatch)
    _, _, R = grakel_features(graphs[::-1], 2, monkeypatch)
    assert not np.array_equal(K, R[::-1, ::-1])
    ours = OddSthKernel(h=2)
    assert_bit_identical(ours(graphs), ours(graphs[::-1])[::-1, ::-1], "reversed")


def reference_counts(g, h, node_label):
    """The definition written out: per root a BFS to depth h, each reached node's
    tree visit as a nested sorted tuple, counted."""
    n = g.n_nodes
    labels = g.node_attrs[node_label].tolist() if node_label and n else [0] * n
    nb = [set() for _ in range(n)]
    for u, v in g.edges.tolist():
        nb[u].add(v)
        nb[v].add(u)
    counts = Counter()
    for r in range(n):
        dist, frontier = {r: 0}, [r]
        while frontier and (h is None or dist[frontier[0]] < h):
            nxt = []
            for u in frontier:
                for w in nb[u]:
                    if w not in dist:
                        dist[w] = dist[u] + 1
                        nxt.append(w)
            frontier = nxt

        def visit(v):
            return labels[v], tuple(sorted(visit(w) for w in nb[v] if dist.get(w) == dist[v] + 1))

        counts.update(visit(v) for v in dist)
    return counts


@pytest.mark.parametrize("h, node_label", [(None, "label"), (1, "label"), (3, None), (2, "label")])
def test_definition_on_random_graphs(rng, h, node_label):
    """Self-loops, string labels, an empty and an edgeless graph."""
    graphs = [random_graph(rng, int(rng.integers(1, 10)), p_edge=0.35) for _ in range(12)]
    names = np.array(["C", "N", "O"])
    graphs = [Graph(g.n_nodes, g.edges, node_attrs={"label": names[g.node_attrs["label"] % 3]}) for g in graphs]
    graphs += [Graph(0, np.zeros((0, 2), np.int64)), Graph(3, node_attrs={"label": np.array(["C", "C", "N"])})]
    kernel = OddSthKernel(h=h, node_label=node_label)
    K = kernel(graphs)
    ref = [reference_counts(g, h, node_label) for g in graphs]
    R = np.array([[sum(c * b[k] for k, c in a.items()) for b in ref] for a in ref], dtype=np.float64)
    assert_bit_identical(K, R, "h=%s" % h)
    assert_bit_identical(kernel.diag(graphs), np.diag(R), "diag")
    F = kernel.features(graphs)
    assert_bit_identical((F @ F.T).toarray(), R, "features")


def test_values_depend_only_on_the_pair(mutag, rng):
    """Other graphs (other labels), order, side, n_jobs and node numbering change no bit."""
    graphs = mutag[0][:30]
    kernel = OddSthKernel(h=3)
    full = assert_pair_only(kernel, graphs, rng)
    g = graphs[0]
    perm = rng.permutation(g.n_nodes)
    renumbered = Graph(g.n_nodes, perm[g.edges], node_attrs={"label": g.node_attrs["label"][np.argsort(perm)]})
    assert_bit_identical(kernel([renumbered] + graphs[1:]), full, "renumbered")
    normalized = OddSthKernel(h=3, normalize=True)(graphs)
    dg = np.diag(full)
    np.testing.assert_allclose(normalized, full / np.sqrt(np.outer(dg, dg)), rtol=1e-15)


def test_errors(mutag):
    graphs = mutag[0][:3]
    for params, err in [({"h": 0}, ValueError), ({"h": -2}, ValueError), ({"h": 1001}, ValueError),
                        ({"h": 2.0}, TypeError), ({"h": True}, TypeError), ({"h": float("nan")}, TypeError),
                        ({"node_label": 3}, TypeError)]:
        with pytest.raises(err):
            OddSthKernel(**params)(graphs)
    assert_label_errors(OddSthKernel, graphs)
