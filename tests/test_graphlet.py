"""The graphlet kernel: exact counts against a brute-force networkx isomorphism count
and against GraKeL's exact enumeration (connected graphlets), sampling's seed
reproducibility, call independence and convergence to the exact frequencies."""

from itertools import combinations

import networkx as nx
import numpy as np
import pytest

from conftest import assert_bit_identical, random_graph
from graphgram import GraphletSamplingKernel

grakel = pytest.importorskip("grakel")


def brute_force_counts(g, k, reps):
    """Count every k-subset's induced subgraph by networkx isomorphism with the column representatives."""
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from((u, v) for u, v in g.edges.tolist() if u != v)
    counts = np.zeros(len(reps))
    for sub in combinations(range(g.n_nodes), k):
        H = G.subgraph(sub)
        matches = [c for c, R in enumerate(reps) if nx.is_isomorphic(H, R)]
        assert len(matches) == 1
        counts[matches[0]] += 1
    return counts


def representatives(kernel):
    reps = []
    for cls in kernel.graphlets():
        R = nx.Graph()
        R.add_nodes_from(range(kernel.k))
        R.add_edges_from(cls["edges"])
        assert nx.is_connected(R) == cls["connected"]
        reps.append(R)
    return reps


@pytest.mark.parametrize("k", [3, 4, 5])
def test_exact_counts_brute_force(rng, mutag, k):
    kernel = GraphletSamplingKernel(k=k, frequencies=False)
    reps = representatives(kernel)
    assert len(reps) == {3: 4, 4: 11, 5: 34}[k]
    assert sum(r["connected"] for r in kernel.graphlets()) == {3: 2, 4: 6, 5: 21}[k]
    graphs = [random_graph(rng, n) for n in (0, 2, k, 7, 9)]
    if k == 3:
        graphs += mutag[0][:3]
    F = kernel.features(graphs).toarray()
    ref = np.array([brute_force_counts(g, k, reps) for g in graphs])
    np.testing.assert_array_equal(F, ref)
    np.testing.assert_array_equal(kernel(graphs), ref @ ref.T)
    # Frequencies: counts over C(n, k); connected: the disconnected columns dropped.
    freq = ref / np.maximum(ref.sum(axis=1, keepdims=True), 1)
    np.testing.assert_allclose(GraphletSamplingKernel(k=k)(graphs), freq @ freq.T, rtol=1e-14)
    conn = ref * np.array([r["connected"] for r in kernel.graphlets()])
    np.testing.assert_array_equal(GraphletSamplingKernel(k=k, connected=True, frequencies=False)(graphs),
                                  conn @ conn.T)


def test_grakel_exact_enumeration(mutag):
    """GraKeL's sampling=None enumerates the connected graphlets of size k. Fit on one
    graph, its bins hold exact counts; in a fit of several graphs it adds 1 to the
    first count of every class that an earlier graph had already met. Only k = 3
    compares: for k ≥ 4 its enumeration (ConSubg) misses subsets (MUTAG's first
    graph: 33 induced 4-node paths where networkx, and this kernel, count 37)."""
    k = 3
    from grakel.kernels import GraphletSampling
    from test_neighborhood_hash import to_grakel

    graphs = mutag[0][:12]
    F = GraphletSamplingKernel(k=k, connected=True, frequencies=False).features(graphs).toarray()
    for i, g in enumerate(graphs):
        gk = GraphletSampling(k=k, sampling=None)
        gk.fit([to_grakel(g)])
        assert sorted(gk.X.values()) == sorted(F[i][F[i] > 0].astype(int).tolist())
        assert gk.fit_transform([to_grakel(g)])[0, 0] == F[i] @ F[i]
    gk = GraphletSampling(k=k, sampling=None)
    K = gk.fit_transform([to_grakel(g) for g in graphs[:2]])
    # Graph 1's classes were all met in graph 0 here (its count vector is ours + 1).
    seen = (F[0] > 0)
    assert np.all(seen[F[1] > 0])
    shifted = F[1] + (F[1] > 0)
    assert K[1, 1] == shifted @ shifted and K[0, 0] == F[0] @ F[0]


def test_sampling_reproducible_and_call_independent(mutag, rng):
    graphs = mutag[0][:20]
    kernel = GraphletSamplingKernel(k=5, sampling=500, random_state=3)
    full = kernel(graphs)
    order = rng.permutation(len(graphs))
    back = np.argsort(order)
    assert_bit_identical(kernel([graphs[i] for i in order])[np.ix_(back, back)], full, "permuted")
    assert_bit_identical(kernel.set_params(n_jobs=1)(graphs[:4], graphs[10:]), full[:4, 10:], "cross")
    assert_bit_identical(kernel(graphs[10:], graphs[:4]), full[10:, :4], "swapped")
    # Features of two calls share columns; another seed draws other samples.
    F1 = kernel.features(graphs[:4]).toarray()
    np.testing.assert_array_equal(kernel.features(graphs[2:6]).toarray()[:2], F1[2:4])
    assert not np.array_equal(GraphletSamplingKernel(k=5, sampling=500, random_state=4).features(graphs[:4])
                              .toarray(), F1)
    F = kernel.features(graphs).toarray()
    np.testing.assert_allclose(F @ F.T, full, rtol=1e-13)


def test_sampling_converges_to_exact_frequencies(mutag):
    g = max(mutag[0], key=lambda g: g.n_nodes)  # 28 nodes
    exact = GraphletSamplingKernel(k=4).features([g]).toarray()[0]
    for n, tol in ((2000, 0.08), (200000, 0.008)):
        sampled = GraphletSamplingKernel(k=4, sampling=n, random_state=5).features([g]).toarray()[0]
        assert np.abs(sampled - exact).sum() < tol, n


def test_sample_count_rules_and_errors(mutag):
    kernel = GraphletSamplingKernel(k=5, sampling={"epsilon": 0.1, "delta": 0.1})
    assert kernel.n_samples() == int(np.ceil(2 * (34 * np.log(2) + np.log(10)) / 0.01))
    assert GraphletSamplingKernel(sampling={"n_samples": 7}).n_samples() == 7
    graphs = mutag[0][:2]
    for params, err in [({"k": 6}, ValueError), ({"k": 4.0}, TypeError), ({"sampling": 0}, ValueError),
                        ({"sampling": {"n_samples": 5, "delta": 0.1}}, ValueError),
                        ({"sampling": {"epsilon": 2}}, ValueError), ({"sampling": 1.5}, TypeError),
                        ({"random_state": None}, TypeError), ({"connected": 1}, TypeError)]:
        with pytest.raises(err):
            GraphletSamplingKernel(**params)(graphs)
    big = random_graph(np.random.default_rng(0), 300, p_edge=0.02)
    with pytest.raises(ValueError, match="graph 1: 300 nodes .* sample them"):
        GraphletSamplingKernel(k=5)([graphs[0], big])
    assert GraphletSamplingKernel(k=5, sampling=100)([big]).shape == (1, 1)
