"""The neighborhood hash kernel: GraKeL's values on MUTAG with the same initial bit
strings (both hashes), a brute-force reference of the definition, call independence,
and the kernel's conventions (K(G, G) = 1, no feature map, parameter checks)."""

from collections import Counter

import numpy as np
import pytest

from conftest import assert_bit_identical, random_graph, to_grakel
from graphgram import Graph, NeighborhoodHashKernel

grakel = pytest.importorskip("grakel")


@pytest.mark.parametrize("bits", [3, 8])
@pytest.mark.parametrize("nh_type", ["simple", "count_sensitive"])
def test_grakel_equivalence(mutag, monkeypatch, nh_type, bits):
    """GraKeL draws one bit string per label of its fit; made to draw ours, it gives
    the same values, bit for bit."""
    from grakel.kernels import NeighborhoodHash
    from grakel.kernels import neighborhood_hash as module

    graphs = mutag[0][:80]
    kernel = NeighborhoodHashKernel(R=3, nh_type=nh_type, bits=bits, random_state=7)
    # GraKeL pairs its label set with its random draw by zip(labels, draws): substitute ours.
    monkeypatch.setattr(module, "zip", lambda labels, draws: iter(
        [(label, bits) for label, bits in zip(labels, kernel.label_bits(list(labels)))]), raising=False)
    ref = NeighborhoodHash(R=3, nh_type=nh_type, bits=bits).fit_transform([to_grakel(g) for g in graphs])
    assert_bit_identical(kernel(graphs), ref, nh_type)


def rot(x, d, bits):
    d %= bits
    return ((x << d) | (x >> (bits - d))) & ((1 << bits) - 1) if d else x


def reference(g1, g2, R, nh_type, bits, bits_of):
    """The definition: labels as Python ints, intersections by Counter."""
    def rounds(g):
        nb = [[] for _ in range(g.n_nodes)]
        for u, v in g.edges.tolist():
            nb[u].append(v)
            if u != v:
                nb[v].append(u)
        lab = [bits_of[x] for x in g.node_attrs["label"].tolist()] if g.n_nodes else []
        out = []
        for _ in range(R):
            new = []
            for v in range(g.n_nodes):
                x = rot(lab[v], 1, bits)
                if nh_type == "simple":
                    for u in nb[v]:
                        x ^= lab[u]
                else:
                    for label, o in Counter(lab[u] for u in nb[v]).items():
                        x ^= rot((label ^ o) & ((1 << bits) - 1), o, bits)
                new.append(x)
            lab = new
            out.append(Counter(lab))
        return out
    total = 0.0
    for a, b in zip(rounds(g1), rounds(g2)):
        c = sum((a & b).values())
        total += c / (g1.n_nodes + g2.n_nodes - c) if c else 0.0
    return total / R


@pytest.mark.parametrize("nh_type", ["simple", "count_sensitive"])
@pytest.mark.parametrize("bits", [3, 8, 64])
def test_definition_on_random_graphs(rng, nh_type, bits):
    graphs = [random_graph(rng, int(rng.integers(0, 9)), n_labels=4) for _ in range(12)]
    # String labels, and an empty graph.
    def strings(g):
        return np.array(["ab"[x % 2] * (1 + x) for x in g.node_attrs["label"].tolist()], dtype="U8")
    graphs = [Graph(g.n_nodes, g.edges, node_attrs={"label": strings(g)}) for g in graphs]
    graphs.append(Graph(0, np.zeros((0, 2), np.int64)))
    kernel = NeighborhoodHashKernel(R=4, nh_type=nh_type, bits=bits, random_state=3)
    labels = sorted({x for g in graphs if "label" in g.node_attrs for x in g.node_attrs["label"].tolist()})
    bits_of = dict(zip(labels, kernel.label_bits(labels)))
    K = kernel(graphs)
    ref = np.array([[reference(a, b, 4, nh_type, bits, bits_of) for b in graphs] for a in graphs])
    np.testing.assert_allclose(K, ref, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(kernel.diag(graphs), [1.0 if g.n_nodes else 0.0 for g in graphs])


def test_values_depend_only_on_the_pair(mutag, rng):
    """A pair's value is the same bits in any call: other graphs (other labels),
    order, side and n_jobs change nothing; the bit strings depend on the label alone."""
    graphs = mutag[0][:30]
    kernel = NeighborhoodHashKernel(nh_type="count_sensitive", random_state=1)
    full = kernel(graphs)
    order = rng.permutation(len(graphs))
    back = np.argsort(order)
    assert_bit_identical(kernel([graphs[i] for i in order])[np.ix_(back, back)], full, "permuted")
    assert_bit_identical(kernel.set_params(n_jobs=1)(graphs[:5], graphs[20:]), full[:5, 20:], "cross")
    assert_bit_identical(kernel(graphs[20:], graphs[:5]), full[20:, :5], "swapped")
    # A graph with labels the others lack joins the call.
    odd = Graph(3, np.array([[0, 1], [1, 2]]), node_attrs={"label": np.array([99, 100, 0])})
    assert_bit_identical(kernel(graphs[:7] + [odd])[:7, :7], full[:7, :7], "extra labels")
    assert kernel.label_bits([0, 5]) == kernel.label_bits([0, 1, 2, 5])[::3]
    assert kernel.label_bits([1]) == kernel.label_bits([1.0]) != kernel.label_bits(["1"])
    assert kernel.label_bits([1]) != NeighborhoodHashKernel(random_state=2).label_bits([1])


def test_errors_and_feature_map(mutag):
    graphs = mutag[0][:3]
    with pytest.raises(NotImplementedError, match="no explicit feature map"):
        NeighborhoodHashKernel().features(graphs)
    for params, err in [({"R": 0}, ValueError), ({"bits": 65}, ValueError), ({"nh_type": "x"}, ValueError),
                        ({"random_state": None}, TypeError), ({"R": 2.0}, TypeError)]:
        with pytest.raises(err):
            NeighborhoodHashKernel(**params)(graphs)
    with pytest.raises(ValueError, match=r"X\[0\] has no node attribute 'kind'"):
        NeighborhoodHashKernel(node_label="kind")(graphs)
    with pytest.raises(TypeError, match=r"X\[1\].*non-integer"):
        bad = Graph(2, np.array([[0, 1]]), node_attrs={"label": np.array([0.5, 1.0])})
        NeighborhoodHashKernel()([graphs[0], bad])
