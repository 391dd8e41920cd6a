"""The NSPDK kernel: GraKeL's values on MUTAG with bond labels (its subgraph
encoding sorted, where its distances are right), a brute-force reference of the
definition, call independence, and the kernel's conventions."""

from collections import Counter, deque

import numpy as np
import pytest

from conftest import assert_bit_identical, random_graph, to_grakel
from graphgram import Graph, NSPDKKernel

grakel = pytest.importorskip("grakel")


def sorted_hash_graph(D, vertices, edges, glv, gle):
    """GraKeL's hash_graph with its node labels and edge tokens sorted (GraKeL joins
    them in node-number and set order), left unhashed."""
    lv = {i: "|".join(sorted("%s,%s" % (D[i, j], glv[j]) for j in vertices if (i, j) in D)) for i in vertices}
    return ".".join(sorted(lv.values())) + ":" + "_".join(
        sorted("%s,%s,%s" % (lv[i], lv[j], gle[i, j]) for i, j in edges))


@pytest.mark.parametrize("r, d", [(2, 2), (1, 2), (2, 0), (1, 1)])
def test_grakel_equivalence(mutag, monkeypatch, r, d):
    """With its encoding sorted, GraKeL gives the same values bit for bit (it also
    sums the blocks distance-major). Its radii and distances are right up to 2 only:
    its neighbourhood of level l + 1 is the union of the level-l neighbourhoods of
    the level-l neighbourhood, a ball of radius 2^l; with r = 0 it counts distance 0
    only."""
    from grakel.kernels import NeighborhoodSubgraphPairwiseDistance
    from grakel.kernels import neighborhood_subgraph_pairwise_distance as module

    monkeypatch.setattr(module, "hash_graph", sorted_hash_graph)
    graphs = mutag[0][:60]
    ref = NeighborhoodSubgraphPairwiseDistance(r=r, d=d).fit_transform(
        [to_grakel(g, edge_label="label") for g in graphs])
    assert_bit_identical(NSPDKKernel(r=r, d=d, edge_label="label")(graphs), ref, "r=%d, d=%d" % (r, d))


def test_grakel_depends_on_node_numbering(mutag):
    """Why the encoding is sorted: GraKeL's own changes with a renumbering of the
    nodes, ours does not."""
    from grakel.kernels import NeighborhoodSubgraphPairwiseDistance

    g = mutag[0][0]
    perm = np.random.default_rng(1).permutation(g.n_nodes)
    h = Graph(g.n_nodes, perm[g.edges], node_attrs={"label": g.node_attrs["label"][np.argsort(perm)]},
              edge_attrs={"label": g.edge_attrs["label"]})
    ref = NeighborhoodSubgraphPairwiseDistance(r=2, d=2).fit_transform(
        [to_grakel(g, edge_label="label"), to_grakel(h, edge_label="label")])
    assert ref[0, 1] < ref[0, 0] - 1
    K = NSPDKKernel(r=2, d=2, edge_label="label")([g, h])
    assert_bit_identical(K, np.full((2, 2), 9.0), "renumbered")


def reference_gram(graphs, r, d, edge_label):
    """The definition written out: BFS distances, classes as nested sorted tuples,
    block counts by Counter, the sum of the blocks' cosines (distance-major)."""
    def blocks(g):
        n = g.n_nodes
        labels = g.node_attrs["label"].tolist() if n else []
        nb = [[] for _ in range(n)]
        for k, (u, v) in enumerate(g.edges.tolist()):
            e = g.edge_attrs[edge_label][k].item() if edge_label else 0
            nb[u].append((v, e))
            if u != v:
                nb[v].append((u, e))
        dist = []
        for s in range(n):
            ds, queue = {s: 0}, deque([s])
            while queue:
                u = queue.popleft()
                for v, _ in nb[u]:
                    if v not in ds:
                        ds[v] = ds[u] + 1
                        queue.append(v)
            dist.append(ds)

        def cls(root, rho):
            ball = [u for u, x in dist[root].items() if x <= rho]
            lab = {i: tuple(sorted((dist[i][j], labels[j]) for j in ball if j in dist[i] and dist[i][j] <= d))
                   for i in ball}
            edges = sorted((lab[i], lab[j], e) for i in ball for j, e in nb[i] if j in lab)
            return tuple(sorted(lab.values())), tuple(edges)

        c = {(rho, v): cls(v, rho) for rho in range(r + 1) for v in range(n)}
        return {(rho, delta): Counter((c[rho, u], c[rho, v]) for u in range(n) for v, x in dist[u].items()
                                      if x == delta)
                for delta in range(d + 1) for rho in range(r + 1)}

    feats = [blocks(g) for g in graphs]

    def dot(a, b):
        return float(sum(x * b[k] for k, x in a.items()))

    K = np.zeros((len(graphs), len(graphs)))
    for i, a in enumerate(feats):
        for j, b in enumerate(feats):
            for block in a:
                c = dot(a[block], b[block])
                if c:
                    K[i, j] += c / np.sqrt(dot(a[block], a[block]) * dot(b[block], b[block]))
    return K


@pytest.mark.parametrize("r, d, edge_label", [(3, 4, "label"), (2, 1, None), (0, 0, "label")])
def test_definition_on_random_graphs(rng, r, d, edge_label):
    """Self-loops, edge labels, string node labels, an empty and an edgeless graph."""
    graphs = [random_graph(rng, int(rng.integers(1, 9)), p_edge=0.35) for _ in range(12)]
    names = np.array(["C", "N", "O"])
    graphs = [Graph(g.n_nodes, g.edges, node_attrs={"label": names[g.node_attrs["label"] % 3]},
                    edge_attrs={"label": g.edge_attrs["label"]}) for g in graphs]
    graphs += [Graph(0, np.zeros((0, 2), np.int64), edge_attrs={"label": np.zeros(0, np.int64)}),
               Graph(3, np.zeros((0, 2), np.int64), node_attrs={"label": np.array(["C", "C", "N"])},
                     edge_attrs={"label": np.zeros(0, np.int64)})]
    kernel = NSPDKKernel(r=r, d=d, edge_label=edge_label)
    K = kernel(graphs)
    ref = reference_gram(graphs, r, d, edge_label)
    np.testing.assert_allclose(K, ref, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(kernel.diag(graphs), np.diag(ref))


def test_values_depend_only_on_the_pair(mutag, rng):
    """Other graphs (other labels), order, side and n_jobs change no bit."""
    graphs = mutag[0][:30]
    kernel = NSPDKKernel(edge_label="label")
    full = kernel(graphs)
    order = rng.permutation(len(graphs))
    back = np.argsort(order)
    assert_bit_identical(kernel([graphs[i] for i in order])[np.ix_(back, back)], full, "permuted")
    assert_bit_identical(kernel.set_params(n_jobs=1)(graphs[:5], graphs[20:]), full[:5, 20:], "cross")
    assert_bit_identical(kernel(graphs[20:], graphs[:5]), full[20:, :5], "swapped")
    assert_bit_identical(kernel.diag(graphs[3:9]), np.diag(full)[3:9], "diag")
    odd = Graph(3, np.array([[0, 1], [1, 2]]), node_attrs={"label": np.array([99, 100, 0])},
                edge_attrs={"label": np.array([7, 8])})
    assert_bit_identical(kernel(graphs[:7] + [odd])[:7, :7], full[:7, :7], "extra labels")
    normalized = NSPDKKernel(edge_label="label", normalize=True)(graphs)
    dg = np.diag(full)
    np.testing.assert_allclose(normalized, full / np.sqrt(np.outer(dg, dg)), rtol=1e-15)


def test_errors_and_feature_map(mutag):
    graphs = mutag[0][:3]
    with pytest.raises(NotImplementedError, match="no exact integer feature map"):
        NSPDKKernel().features(graphs)
    for params, err in [({"r": -1}, ValueError), ({"d": 101}, ValueError), ({"r": 2.0}, TypeError),
                        ({"node_label": None}, TypeError), ({"edge_label": 3}, TypeError)]:
        with pytest.raises(err):
            NSPDKKernel(**params)(graphs)
    with pytest.raises(ValueError, match=r"X\[0\] has no edge attribute 'bond'"):
        NSPDKKernel(edge_label="bond")(graphs)
    with pytest.raises(TypeError, match=r"X\[1\].*non-integer"):
        bad = Graph(2, np.array([[0, 1]]), node_attrs={"label": np.array([0.5, 1.0])})
        NSPDKKernel()([graphs[0], bad])
