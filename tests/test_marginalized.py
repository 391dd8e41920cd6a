"""The marginalized graph kernel against independent references: a dense NumPy solve
of the product system, closed forms, GraphDot's published test values, golden files."""

import warnings

import networkx as nx
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from graphgram import Graph, MarginalizedGraphKernel
from graphgram.microkernels import (Additive, Constant, KroneckerDelta, SquareExponential,
                                    TensorProduct)

from conftest import GOLDEN, random_graph
from reference import mgk_dense

LABELED_NODE = TensorProduct(label=KroneckerDelta(0.3), charge=SquareExponential(0.8),
                             vec=SquareExponential(1.5))
LABELED_EDGE = TensorProduct(label=KroneckerDelta(0.4), length=SquareExponential(0.7))


def rel_err(a, b):
    """Largest relative difference; entries that are zero in exact arithmetic (pairs without
    walks of length >= 1 under lmin=1) are compared on the scale of the whole matrix."""
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12 * np.abs(b).max()))


def random_set(rng, count=8):
    """Random graphs of 1..7 nodes: isolated nodes, self-loops, disconnected parts."""
    gs = [random_graph(rng, int(rng.integers(1, 8))) for _ in range(count)]
    gs.append(random_graph(rng, 1, self_loops=False))                     # one node, no edge
    gs.append(Graph(5, [(0, 1), (3, 4), (2, 2)], [1.0, 0.5, 2.0],          # disconnected
                    node_attrs={"label": [0, 1, 0, 1, 2], "charge": np.zeros(5), "vec": np.ones((5, 2))},
                    edge_attrs={"label": [0, 1, 1], "length": [1.0, 1.5, 0.7]}))
    return gs


@pytest.mark.parametrize("q", [0.001, 0.01, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("lmin", [0, 1])
def test_matches_dense_solve(rng, q, lmin):
    gs = random_set(rng)
    kernel = MarginalizedGraphKernel(LABELED_NODE, LABELED_EDGE, q=q, lmin=lmin)
    K = kernel(gs)
    ref = np.array([[mgk_dense(a, b, LABELED_NODE, LABELED_EDGE, q, lmin=lmin) for b in gs] for a in gs])
    assert rel_err(K, ref) < 1e-9


def test_composite_kernels_and_start_probabilities_match_dense_solve(rng):
    # Sums are scaled or normalized to stay at most 1: larger base kernels make the
    # walk series diverge (the product system is then indefinite).
    node = (TensorProduct(label=KroneckerDelta(0.2)) + 0.5 * TensorProduct(vec=SquareExponential(1.0))).normalized
    edge = Additive(label=KroneckerDelta(0.5), length=SquareExponential(2.0)) * Constant(0.5)
    gs = random_set(rng, 5)

    def pfun(g):
        return 1.0 + 0.1 * np.arange(g.n_nodes)

    K = MarginalizedGraphKernel(node, edge, q=0.05, p=pfun)(gs)
    ref = np.array([[mgk_dense(a, b, node, edge, 0.05, p1=pfun(a), p2=pfun(b)) for b in gs] for a in gs])
    assert rel_err(K, ref) < 1e-9


def test_nodal_matches_dense_solve(rng):
    gs = random_set(rng, 4)
    kernel = MarginalizedGraphKernel(LABELED_NODE, LABELED_EDGE, q=0.1)
    R = kernel(gs, nodal=True)
    offs = np.cumsum([0] + [g.n_nodes for g in gs])
    assert R.shape == (offs[-1], offs[-1])
    for a, ga in enumerate(gs):
        for b, gb in enumerate(gs):
            block = R[offs[a]:offs[a + 1], offs[b]:offs[b + 1]]
            ref = mgk_dense(ga, gb, LABELED_NODE, LABELED_EDGE, 0.1, nodal=True)
            assert rel_err(block, ref) < 1e-9
    # Summing a block of node-pair similarities gives the graph-level value.
    K = kernel(gs)
    assert rel_err(R[offs[1]:offs[2], offs[2]:offs[3]].sum(), K[1, 2]) < 1e-12


@pytest.mark.parametrize("q", [0.001, 0.05, 0.3, 0.9])
def test_closed_form_unlabeled(q):
    # Unlabeled graphs without isolated nodes, constant kernels: K = n n' / (q (2 - q)).
    gs = [Graph.from_networkx(g) for g in (nx.path_graph(4), nx.cycle_graph(7), nx.star_graph(5),
                                            nx.complete_graph(6), nx.barbell_graph(3, 2))]
    K = MarginalizedGraphKernel(Constant(1.0), Constant(1.0), q=q)(gs)
    n = np.array([g.n_nodes for g in gs], dtype=float)
    assert rel_err(K, np.outer(n, n) / (q * (2 - q))) < 1e-9


@pytest.mark.parametrize("q, value", [(0.01, 452.2613065), (0.05, 92.30769231), (0.1, 47.36842105), (0.5, 12.0)])
def test_graphdot_unlabeled_values(q, value):
    star = Graph(3, [(0, 1), (0, 2)])
    triangle = Graph(3, [(0, 1), (1, 2), (0, 2)])
    K = MarginalizedGraphKernel(Constant(1.0), Constant(1.0), q=q)([star, triangle])
    np.testing.assert_allclose(K, np.full((2, 2), value), rtol=1e-8)


def graphdot_labeled_pair():
    L1 = Graph(3, [(0, 1), (0, 2)], node_attrs={"hybridization": [2, 3, 1], "charge": [1.0, -1.0, 2.0]},
               edge_attrs={"order": [1, 2], "length": [0.5, 1.0]})
    L2 = Graph(2, [(0, 1)], node_attrs={"hybridization": [1, 1], "charge": [1.0, -1.0]},
               edge_attrs={"order": [2], "length": [1.0]})
    node = TensorProduct(hybridization=KroneckerDelta(0.3),
                         charge=SquareExponential(1.0) + Constant(0.01)).normalized
    edge = Additive(order=KroneckerDelta(0.3), length=SquareExponential(0.05)).normalized
    return [L1, L2], node, edge


def test_graphdot_labeled_values():
    gs, node, edge = graphdot_labeled_pair()
    K = MarginalizedGraphKernel(node, edge, q=0.05)(gs)
    np.testing.assert_allclose(K, [[9.376686029, 1.389743589], [1.389743589, 20.84356587]], rtol=1e-8)
    K = MarginalizedGraphKernel(node, edge, q=0.01)(gs)
    np.testing.assert_allclose(K, [[11.00202139, 1.396874008], [1.396874008, 100.8375575]], rtol=1e-8)


def test_invariants(rng):
    gs = random_set(rng, 6)
    kernel = MarginalizedGraphKernel(LABELED_NODE, LABELED_EDGE, q=0.05)
    K = kernel(gs)
    assert K.dtype == np.float64 and K.flags.c_contiguous
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(kernel.diag(gs), np.diag(K), rtol=1e-12)
    np.testing.assert_allclose(kernel(gs[:3], gs[3:]), K[:3, 3:], rtol=1e-12)
    assert np.all(np.linalg.eigvalsh(K) > -1e-9 * np.abs(K).max())          # positive semi-definite
    # Relabeling the nodes of a graph changes nothing.
    g = gs[0]
    perm = rng.permutation(g.n_nodes)
    inv = np.argsort(perm)
    h = Graph(g.n_nodes, inv[g.edges], g.weights,
              node_attrs={k: v[perm] for k, v in g.node_attrs.items()}, edge_attrs=dict(g.edge_attrs))
    np.testing.assert_allclose(kernel([h], gs), K[:1], rtol=1e-10)


def test_normalized(rng):
    gs = random_set(rng, 5)
    raw = MarginalizedGraphKernel(LABELED_NODE, LABELED_EDGE, q=0.05)
    norm = MarginalizedGraphKernel(LABELED_NODE, LABELED_EDGE, q=0.05, normalize=True)
    K, N = raw(gs), norm(gs)
    d = np.diag(K)
    np.testing.assert_allclose(N, K / np.sqrt(np.outer(d, d)), rtol=1e-12)
    np.testing.assert_allclose(np.diag(N), 1.0)
    np.testing.assert_allclose(norm(gs[:2], gs[2:]), N[:2, 2:], rtol=1e-12)
    np.testing.assert_allclose(norm.diag(gs), 1.0)


def test_mutag_against_dense_solve(mutag):
    graphs, _ = mutag
    node = edge = TensorProduct(label=KroneckerDelta(0.5))
    sub = [graphs[i] for i in (0, 7, 31, 100, 187)]
    K = MarginalizedGraphKernel(node, edge, q=0.01)(sub)
    ref = np.array([[mgk_dense(a, b, node, edge, 0.01) for b in sub] for a in sub])
    assert rel_err(K, ref) < 1e-9


def test_golden_file_shared_with_go(mutag):
    golden = GOLDEN / "mutag20_q0.05.npy"
    assert golden.exists(), "golden file %s is missing" % golden
    graphs, _ = mutag
    node = edge = TensorProduct(label=KroneckerDelta(0.5))
    K = MarginalizedGraphKernel(node, edge, q=0.05)(graphs[:20])
    assert rel_err(K, np.load(golden)) < 1e-9


def test_unconverged_solve_warns_with_pair_and_residual(mutag):
    graphs, _ = mutag
    kernel = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), None, q=0.001, maxiter=2)
    with pytest.warns(ConvergenceWarning, match=r"did not reach the accuracy 1e-09 within 2 iterations.*"
                                                r"X\[\d\] × Y\[\d\] residual"):
        kernel(graphs[:3])


def test_converged_solve_is_silent(mutag):
    graphs, _ = mutag
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), None, q=0.01)(graphs[:10])


def test_n_jobs_gives_identical_values(mutag):
    graphs, _ = mutag
    node = TensorProduct(label=KroneckerDelta(0.5))
    K1 = MarginalizedGraphKernel(node, node, n_jobs=1)(graphs[:25])
    K2 = MarginalizedGraphKernel(node, node, n_jobs=2)(graphs[:25])
    np.testing.assert_array_equal(K1, K2)


def test_gradient_accuracy_changes_gradients_only(mutag):
    # The optimizer's gradients may be looser; the values keep the accuracy
    # contract bit for bit, so a fitted model does not depend on the setting.
    graphs, _ = mutag
    node = edge = TensorProduct(label=KroneckerDelta(0.5))
    sub = graphs[:12]
    K, G = MarginalizedGraphKernel(node, edge, q=0.05)(sub, eval_gradient=True)
    K3, G3 = MarginalizedGraphKernel(node, edge, q=0.05, gradient_accuracy=1e-3)(sub, eval_gradient=True)
    np.testing.assert_array_equal(K3, K)
    assert not np.array_equal(G3, G)  # it reaches the solver
    assert np.max(np.abs(G3 - G)) < 1e-2 * np.max(np.abs(G))
    np.testing.assert_allclose(G3, G, rtol=1e-2, atol=1e-3 * np.max(np.abs(G)))


@pytest.mark.parametrize("value", [0.0, 1.0, -1e-3, "1e-4", float("nan")])
def test_error_gradient_accuracy(value):
    with pytest.raises(ValueError, match="gradient_accuracy"):
        MarginalizedGraphKernel(gradient_accuracy=value)([labeled()])


def test_demo_classifies_mutag():
    from graphgram import demo
    assert demo.main([]) > 0.83  # about 0.86 with the defaults


# --- bad input: clear Python exceptions naming the graph and the field ---------------

def labeled(n=3):
    return Graph(n, [(i, i + 1) for i in range(n - 1)], node_attrs={"label": np.arange(n)},
                 edge_attrs={"label": np.zeros(n - 1, dtype=int)})


def test_error_missing_attribute():
    gs = [labeled(), Graph(2, [(0, 1)])]
    kernel = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), None)
    with pytest.raises(ValueError, match=r"X\[1\].*label"):
        kernel(gs)
    with pytest.raises(ValueError, match=r"Y\[1\].*label"):
        kernel([labeled()], gs)


def test_error_nan_label_and_bad_weights():
    with pytest.raises(ValueError, match=r"(?i)nan|finite"):
        Graph(2, [(0, 1)], node_attrs={"charge": [np.nan, 1.0]})
    with pytest.raises(ValueError, match=r"(?i)weight"):
        Graph(2, [(0, 1)], weights=[-1.0])
    with pytest.raises(ValueError, match=r"(?i)weight"):
        Graph(2, [(0, 1)], weights=[np.inf])


@pytest.mark.parametrize("q", [0.0, 1.0, -0.5, 1.5, float("nan")])
def test_error_q_out_of_range(q):
    with pytest.raises(ValueError, match="q"):
        MarginalizedGraphKernel(q=q)([labeled()])


def test_error_not_graphs():
    kernel = MarginalizedGraphKernel()
    with pytest.raises(ValueError, match="empty"):
        kernel([])
    with pytest.raises(TypeError, match=r"X\[1\]"):
        kernel([labeled(), "CCO"])
    with pytest.raises(TypeError, match="single Graph"):
        kernel(labeled())


def test_go_panic_becomes_python_exception():
    from graphgram import _backend
    with pytest.raises(RuntimeError, match="panic"):
        _backend.self_test_panic()
