"""The explicit-feature kernels (Weisfeiler–Lehman subtree and optimal assignment,
vertex and edge histograms): GraKeL's numbers on the TU data sets, a brute-force
reference of the definitions (edge labels, degrees, self-loops, isolated nodes),
the shared calling convention, and scikit-learn use."""

import pickle
from collections import Counter

import numpy as np
import pytest
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from conftest import dataset_dir, random_graph, to_grakel
from graphgram import EdgeHistogramKernel, Graph, VertexHistogramKernel, WeisfeilerLehmanKernel
from graphgram.datasets import load_tu

grakel = pytest.importorskip("grakel")

# Spread subsets keep GraKeL's pure-Python relabelling within the test budget
# (its optimal assignment is quadratic in Python); benchmarks/ compare whole sets.
SUBSETS = {"ENZYMES": 200, "PROTEINS": 200, "NCI1": 300}


def has_isolated_nodes(g):
    return g.n_nodes > np.unique(g.edges).size


def spread(graphs, n):
    return [graphs[i * len(graphs) // n] for i in range(min(n, len(graphs)))]


@pytest.fixture(scope="module", params=["MUTAG"] + sorted(SUBSETS))
def tu_graphs(request, mutag):
    name = request.param
    if name == "MUTAG":
        return name, mutag[0]
    graphs, _ = load_tu(dataset_dir(name))
    return name, spread(graphs, SUBSETS[name])


def test_grakel_equivalence(tu_graphs):
    from grakel.kernels import (EdgeHistogram, VertexHistogram, WeisfeilerLehman,
                                WeisfeilerLehmanOptimalAssignment)

    name, graphs = tu_graphs
    gk = [to_grakel(g) for g in graphs]
    for n_iter in (1, 5):
        ref = WeisfeilerLehman(n_iter=n_iter, base_graph_kernel=VertexHistogram).fit_transform(gk)
        np.testing.assert_array_equal(WeisfeilerLehmanKernel(n_iter=n_iter)(graphs), ref, err_msg=name)
    np.testing.assert_array_equal(VertexHistogramKernel()(graphs), VertexHistogram().fit_transform(gk))
    ref = WeisfeilerLehman(n_iter=5, base_graph_kernel=VertexHistogram, normalize=True).fit_transform(gk)
    np.testing.assert_allclose(WeisfeilerLehmanKernel(n_iter=5, normalize=True)(graphs), ref, rtol=1e-13)
    # GraKeL's optimal assignment drops isolated nodes; on graphs without any it is the definition.
    connected = [g for g in graphs if not has_isolated_nodes(g)]
    ref = WeisfeilerLehmanOptimalAssignment(n_iter=5).fit_transform([to_grakel(g) for g in connected])
    np.testing.assert_array_equal(WeisfeilerLehmanKernel(n_iter=5, base="optimal_assignment")(connected), ref)
    if "label" in graphs[0].edge_attrs:
        ref = EdgeHistogram().fit_transform([to_grakel(g, "label") for g in graphs])
        np.testing.assert_array_equal(EdgeHistogramKernel()(graphs), ref)


def reference_histograms(g, n_iter, node_label="label", edge_label=None):
    """The definition, with labels as nested tuples: one Counter per round."""
    if node_label is None:
        labels = [("deg", int(np.sum(np.any(g.edges == v, axis=1)))) for v in range(g.n_nodes)]
    else:
        labels = [g.node_attrs[node_label][v].item() for v in range(g.n_nodes)]
    rounds = [Counter(labels)]
    for _ in range(n_iter):
        new = []
        for v in range(g.n_nodes):
            nb = []
            for k, (a, b) in enumerate(g.edges.tolist()):
                if v in (a, b):
                    other = b if a == v else a
                    nb.append(labels[other] if edge_label is None
                              else (g.edge_attrs[edge_label][k].item(), labels[other]))
            new.append((labels[v], tuple(sorted(nb, key=repr))))
        labels = new
        rounds.append(Counter(labels))
    return rounds


def reference_kernel(a, b, base):
    combine = min if base == "optimal_assignment" else (lambda x, y: x * y)
    return float(sum(combine(ca, rb[label]) for ra, rb in zip(a, b) for label, ca in ra.items()))


@pytest.mark.parametrize("node_label, edge_label", [("label", None), (None, None), ("label", "label"),
                                                    (None, "label")])
@pytest.mark.parametrize("base", ["subtree", "optimal_assignment"])
def test_definition_on_random_graphs(rng, node_label, edge_label, base):
    graphs = [random_graph(rng, int(n), p_edge=0.3) for n in rng.integers(0, 9, 14)]
    graphs.append(Graph(3, [(0, 1)], node_attrs={"label": [1, 1, 2]}, edge_attrs={"label": [0]}))  # isolated node
    hist = [reference_histograms(g, 3, node_label, edge_label) for g in graphs]
    K = WeisfeilerLehmanKernel(n_iter=3, node_label=node_label, edge_label=edge_label, base=base)(graphs)
    want = np.array([[reference_kernel(a, b, base) for b in hist] for a in hist])
    np.testing.assert_array_equal(K, want)


def test_string_labels_cross_matrix_and_unseen_labels(mutag):
    """Strings and integers coding the same labels give the same values; K(X, Y),
    fit/transform and diag agree with the symmetric matrix, also for labels that
    occur only in Y."""
    graphs = mutag[0][:40]
    names = np.array(["C", "N", "O", "F", "I", "Cl", "Br"])
    strings = [Graph(g.n_nodes, g.edges, node_attrs={"label": names[g.node_attrs["label"]]}) for g in graphs]
    X, Y = strings[:25], strings[25:] + [Graph(2, [(0, 1)], node_attrs={"label": ["Zn", "Zn"]})]
    for kernel in (WeisfeilerLehmanKernel(n_iter=3), WeisfeilerLehmanKernel(n_iter=2, base="optimal_assignment"),
                   WeisfeilerLehmanKernel(n_iter=3, normalize=True), VertexHistogramKernel(normalize=0.5)):
        np.testing.assert_array_equal(kernel(strings), kernel(graphs))
        full = kernel(X + Y)
        np.testing.assert_array_equal(kernel(X, Y), full[:25, 25:])
        np.testing.assert_array_equal(kernel.fit(X).transform(Y), full[25:, :25])
        np.testing.assert_array_equal(kernel.fit_transform(X), full[:25, :25])
        np.testing.assert_allclose(kernel.diag(Y), np.diag(full)[25:], rtol=1e-14)  # d**(1-s) vs d/d**s
    raw = WeisfeilerLehmanKernel(n_iter=1).fit(X)
    assert raw.transform(Y[-1:])[0].tolist() == [0.0] * 25  # Zn and its neighbourhood are new


def test_edge_histogram_counts_both_orientations():
    g = Graph(3, [(0, 1), (1, 2), (2, 2)], node_attrs={"label": [0, 0, 0]}, edge_attrs={"label": ["s", "d", "s"]})
    h = Graph(2, [(0, 1)], node_attrs={"label": [0, 0]}, edge_attrs={"label": ["s"]})
    # g: s twice (0-1 both ways) + once (the self-loop), d twice; h: s twice.
    np.testing.assert_array_equal(EdgeHistogramKernel()([g, h]), [[13.0, 6.0], [6.0, 4.0]])


def test_pickle_params_and_sklearn(mutag):
    graphs, y = mutag
    kernel = WeisfeilerLehmanKernel(n_iter=3, base="optimal_assignment", normalize=True, n_jobs=1)
    assert kernel.get_params()["base"] == "optimal_assignment"
    again = pickle.loads(pickle.dumps(kernel.fit(graphs[:50])))
    np.testing.assert_array_equal(again.transform(graphs[50:60]), kernel.transform(graphs[50:60]))
    pipe = Pipeline([("k", WeisfeilerLehmanKernel(n_iter=3, normalize=True)), ("svm", SVC(kernel="precomputed"))])
    assert pipe.fit(graphs[:150], y[:150]).score(graphs[150:], y[150:]) > 0.7
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
    from graphgram import ShortestPathKernel
    for k in (WeisfeilerLehmanKernel(n_iter=2, normalize=True), ShortestPathKernel(normalize=True)):
        assert k.hyperparameters == [] and k.n_dims == 0  # not a recursion through dir()
        gp = GaussianProcessRegressor(ConstantKernel() * k + WhiteKernel()).fit(graphs[:60], y[:60].astype(float))
        assert np.all(np.isfinite(gp.predict(graphs[60:70])))


def test_empty_and_edgeless_graphs():
    graphs = [Graph(0), Graph(1, node_attrs={"label": [3]}), Graph(2, node_attrs={"label": [3, 3]})]
    np.testing.assert_array_equal(WeisfeilerLehmanKernel(n_iter=2)(graphs),
                                  [[0, 0, 0], [0, 3, 6], [0, 6, 12]])
    np.testing.assert_array_equal(WeisfeilerLehmanKernel(n_iter=2, normalize=True).diag(graphs), [0, 1, 1])


@pytest.mark.parametrize("kernel", [WeisfeilerLehmanKernel(n_iter=3),
                                    WeisfeilerLehmanKernel(n_iter=3, base="optimal_assignment"),
                                    WeisfeilerLehmanKernel(n_iter=2, node_label=None, edge_label="label"),
                                    VertexHistogramKernel(), EdgeHistogramKernel()],
                         ids=["subtree", "optimal_assignment", "degrees+edges", "vertex", "edge"])
def test_features_reproduce_the_gram_matrix(mutag, kernel):
    empty = Graph(0)
    lone = Graph(1, node_attrs={"label": [2]}, edge_attrs={"label": np.zeros(0, dtype=int)})
    graphs = [empty] + mutag[0][:60] + [lone, empty]
    F = kernel.features(graphs)
    assert F.format == "csr" and F.dtype == np.float64 and F.shape[0] == len(graphs)
    np.testing.assert_array_equal((F @ F.T).toarray(), kernel(graphs))
    if kernel.get_params().get("base") == "optimal_assignment":
        assert set(np.unique(F.data)) == {1.0}  # the unary expansion


def test_features_train_a_linear_model(mutag):
    from sklearn.svm import LinearSVC

    graphs, y = mutag
    F = WeisfeilerLehmanKernel(n_iter=3).features(graphs)  # train and test featurized together
    model = LinearSVC(C=0.01, max_iter=20000).fit(F[:150], y[:150])
    assert model.score(F[150:], y[150:]) > 0.7


@pytest.mark.parametrize("node_label, n_projections", [(None, 1), ("label", 2)])
def test_hash_graph_kernel_definition(rng, node_label, n_projections):
    """The average over T hashed labellings of the WL subtree kernel, the hashes
    recomputed here from the kernel's directions and offsets."""
    from graphgram import HashGraphKernel

    graphs = [random_graph(rng, int(n), p_edge=0.35, vec=3) for n in rng.integers(0, 8, 12)]
    kernel = HashGraphKernel(attributes="vec", node_label=node_label, n_iter=2, n_hashes=4,
                             n_projections=n_projections, bin_width=0.7, random_state=5)
    directions, offsets = kernel.hash_functions(3)
    want = np.zeros((len(graphs), len(graphs)))
    for t in range(4):
        rows = slice(t * n_projections, (t + 1) * n_projections)
        hashed = []
        for g in graphs:
            buckets = np.floor((g.node_attrs["vec"] @ directions[rows].T + offsets[rows]) / 0.7).astype(int)
            labels = [str(tuple(b)) + ("" if node_label is None else "/%d" % g.node_attrs["label"][v])
                      for v, b in enumerate(buckets.reshape(g.n_nodes, n_projections))]
            hashed.append(Graph(g.n_nodes, g.edges, node_attrs={"label": labels}))
        hist = [reference_histograms(g, 2) for g in hashed]
        want += np.array([[reference_kernel(a, b, "subtree") for b in hist] for a in hist])
    K = kernel(graphs)
    np.testing.assert_allclose(K, want / 4, rtol=1e-15)
    np.testing.assert_allclose(kernel(graphs[:5], graphs[5:]), K[:5, 5:], rtol=1e-15)
    F = kernel.features(graphs)
    np.testing.assert_allclose((F @ F.T).toarray(), K, rtol=1e-12)


def test_hash_graph_kernel_parameters():
    from graphgram import HashGraphKernel

    g = Graph(2, [(0, 1)], node_attrs={"attributes": [[0.1, 0.2], [0.3, 0.4]], "name": ["a", "b"]})
    with pytest.raises(TypeError, match="random_state must be an integer"):
        HashGraphKernel(random_state=None)([g])
    with pytest.raises(ValueError, match="bin_width must be a positive finite number"):
        HashGraphKernel(bin_width=0.0)([g])
    with pytest.raises(TypeError, match="holds strings; HashGraphKernel hashes numbers"):
        HashGraphKernel(attributes="name")([g])
    assert HashGraphKernel(n_hashes=3)([g]).shape == (1, 1)
