"""The Wasserstein Weisfeiler-Lehman kernel against a brute-force reference:
WL label sequences and propagated attributes computed here from the
definitions, every node pair's ground cost, and the transport problem solved by
POT's exact ``ot.emd2`` and by ``scipy.optimize.linprog``."""


import numpy as np
import pytest
from scipy.optimize import linprog

import graphgram
from graphgram import Graph, WassersteinWLKernel

from conftest import assert_bit_identical, dataset_dir, random_graph
from graphgram.datasets import load_tu


def _neighbours(g):
    nb = [[] for _ in range(g.n_nodes)]
    for u, v in g.edges.tolist():
        nb[u].append(v)
        if u != v:  # a self-loop makes a node its own neighbour once
            nb[v].append(u)
    return nb


def wl_sequences(g, h, label):
    """Each node's WL labels of rounds 0..h as nested signatures (equal exactly
    when the WL labels are): round i is (round i-1, sorted neighbours' round i-1)."""
    nb = _neighbours(g)
    if label is None:
        cur = [("deg", len(nb[v])) for v in range(g.n_nodes)]
    else:
        cur = [("lab", repr(x)) for x in np.asarray(g.node_attrs[label]).tolist()]
    seqs = [[c] for c in cur]
    for _ in range(h):
        cur = [(cur[v], tuple(sorted(cur[u] for u in nb[v]))) for v in range(g.n_nodes)]
        for v, c in enumerate(cur):
            seqs[v].append(c)
    return seqs


def propagated(g, h, attr):
    """x^{i+1}(v) = (x^i(v) + mean of the neighbours' x^i) / 2, 0 for no neighbours; rounds concatenated."""
    nb = _neighbours(g)
    x = np.asarray(g.node_attrs[attr], dtype=np.float64).reshape(g.n_nodes, -1)
    rounds = [x]
    for _ in range(h):
        m = np.array([x[n].mean(axis=0) if n else np.zeros(x.shape[1]) for n in nb])
        x = 0.5 * (x + m)
        rounds.append(x)
    return np.hstack(rounds)


def ground_costs(k, a, b):
    if k.continuous:
        ea, eb = propagated(a, k.n_iter, k.attributes), propagated(b, k.n_iter, k.attributes)
        return np.sqrt(((ea[:, None, :] - eb[None, :, :]) ** 2).sum(axis=2))
    sa, sb = wl_sequences(a, k.n_iter, k.node_label), wl_sequences(b, k.n_iter, k.node_label)
    return np.array([[sum(x != y for x, y in zip(p, q)) / (k.n_iter + 1) for q in sb] for p in sa])


try:
    import ot
except ImportError:  # POT is in the test extras; without it linprog alone checks
    ot = None


def emd_pot(M):
    """POT's exact EMD (network simplex), or HiGHS' LP optimum without POT."""
    if ot is None:
        return emd_linprog(M)
    n, m = M.shape
    return ot.emd2(np.full(n, 1.0 / n), np.full(m, 1.0 / m), M)


def emd_linprog(M):
    n, m = M.shape
    rows = np.kron(np.eye(n), np.ones(m))
    cols = np.kron(np.ones(n), np.eye(m))
    res = linprog(M.ravel(), A_eq=np.vstack([rows, cols]), b_eq=np.r_[np.full(n, 1.0 / n), np.full(m, 1.0 / m)],
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def graphs(seed, count=10, **kw):
    rng = np.random.default_rng(seed)
    return [random_graph(rng, int(rng.integers(1, 12)), **kw) for _ in range(count)]


SETTINGS = [dict(n_iter=0), dict(n_iter=3), dict(n_iter=2, node_label=None),
            dict(n_iter=0, continuous=True, attributes="vec"), dict(n_iter=3, continuous=True, attributes="vec"),
            dict(n_iter=2, continuous=True, attributes="charge", gamma=0.3)]


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
def test_against_pot_and_linprog(settings):
    X, Y = graphs(1, 8, n_labels=2), graphs(2, 5, n_labels=2)
    k = WassersteinWLKernel(**settings)
    D, K = k.distances(X, Y), k(X, Y)
    for i, a in enumerate(X):
        for j, b in enumerate(Y):
            M = ground_costs(k, a, b)
            ref = emd_pot(M)
            assert abs(D[i, j] - ref) <= 1e-12, (i, j, D[i, j], ref)
            assert abs(D[i, j] - emd_linprog(M)) <= 1e-9
            assert abs(K[i, j] - np.exp(-k.gamma * ref)) <= 1e-12
    # The symmetric call: zero diagonal, the same values.
    DX = k.distances(X)
    assert_bit_identical(np.diag(DX), np.zeros(len(X)))
    np.testing.assert_array_equal(DX, DX.T)
    np.testing.assert_allclose(k(X), np.exp(-k.gamma * DX), rtol=1e-15, atol=0)  # Go's exp and NumPy's: 1 ulp
    np.testing.assert_array_equal(k.diag(X), np.ones(len(X)))


@pytest.mark.skipif(ot is None, reason="POT not installed")
def test_dense_continuous_against_pot():
    """Dense problems (20..45 distinct points a side, few ties): what the network
    simplex is for. POT on the same direct-difference costs, to 1e-12 relative."""
    rng = np.random.default_rng(5)
    X = [random_graph(rng, int(rng.integers(20, 46)), p_edge=0.1, vec=4) for _ in range(6)]
    assert_matches_pot(WassersteinWLKernel(n_iter=2, continuous=True, attributes="vec"), X)


def assert_matches_pot(k, X):
    """Every pair of distinct graphs of X against POT, to 1e-12 relative."""
    D = k.distances(X)
    for i in range(len(X)):
        for j in range(i + 1, len(X)):
            ref = emd_pot(ground_costs(k, X[i], X[j]))
            assert abs(D[i, j] - ref) <= 1e-12 * ref, (i, j, D[i, j], ref)


@pytest.mark.skipif(ot is None, reason="POT not installed")
def test_enzymes_against_pot():
    """ENZYMES' 18 continuous attributes, h = 2, a spread subset: POT on the same
    costs to 1e-12 relative. (POT's own ``ot.dist`` expands |x−y|² = |x|²+|y|²−2x·y
    and is off by ~1e-11 relative on near pairs: the reference uses differences.)"""
    X = load_tu(dataset_dir("ENZYMES"))[0][::30]
    assert_matches_pot(WassersteinWLKernel(n_iter=2, continuous=True, attributes="attributes"), X)


def test_discrete_values_are_exact_rationals():
    """D = integer / ((h+1) n n'), rounded once: the reference is computed in exact fractions."""
    from fractions import Fraction
    X = graphs(3, 6)
    k = WassersteinWLKernel(n_iter=2)
    D = k.distances(X)
    for i, a in enumerate(X):
        for j, b in enumerate(X):
            M = ground_costs(k, a, b) * (k.n_iter + 1) * a.n_nodes * b.n_nodes
            total = round(emd_pot(M))  # the optimum of the integer-cost problem, an integer
            assert D[i, j] == float(Fraction(total, (k.n_iter + 1) * a.n_nodes * b.n_nodes))


@pytest.mark.parametrize("settings", [SETTINGS[1], SETTINGS[4]], ids=str)
def test_call_independence(settings):
    """A pair's value is the same bits in any call, on either side, with any n_jobs."""
    X = graphs(4, 12)
    ref = WassersteinWLKernel(**settings)(X)
    for n_jobs in (1, 2):
        k = WassersteinWLKernel(n_jobs=n_jobs, **settings)
        perm = np.random.default_rng(n_jobs).permutation(len(X))
        assert_bit_identical(k([X[p] for p in perm]), ref[np.ix_(perm, perm)])
        assert_bit_identical(k(X[5:], X[:5]), ref[5:, :5])
        assert_bit_identical(k(X[:5], X[5:]), ref[:5, 5:])
        assert_bit_identical(k([X[3]], [X[7]]), ref[3:4, 7:8])


def test_mutag_matches_reference():
    """MUTAG's first graphs, default settings, against the brute-force reference."""
    X = graphgram.datasets.load_mutag()[0][:6]
    k = WassersteinWLKernel()
    D = k.distances(X)
    for i in range(len(X)):
        for j in range(i + 1, len(X)):
            assert abs(D[i, j] - emd_pot(ground_costs(k, X[i], X[j]))) <= 1e-12


def test_sklearn_pipeline(mutag):
    """A precomputed-kernel SVC on the kernel (transform / fit_transform)."""
    from sklearn.svm import SVC
    X, y = mutag
    k = WassersteinWLKernel(n_iter=2)
    K = k.fit_transform(X[:60])
    clf = SVC(kernel="precomputed").fit(K, y[:60])
    assert clf.score(k.transform(X[60:90]), y[60:90]) > 0.6


@pytest.mark.parametrize("params, error, match", [
    (dict(gamma=0), ValueError, "gamma must be a positive finite number"),
    (dict(gamma=np.inf), ValueError, "gamma must be a positive finite number"),
    (dict(n_iter=-1), ValueError, "n_iter must be an integer"),
    (dict(n_iter=2.5), ValueError, "n_iter must be an integer"),
    (dict(continuous="yes"), TypeError, "continuous must be True or False"),
    (dict(node_label=3), TypeError, "node_label must be the name"),
    (dict(continuous=True, attributes=None), TypeError, "attributes must be the name"),
])
def test_bad_parameters(params, error, match):
    with pytest.raises(error, match=match):
        WassersteinWLKernel(**params)(graphs(5, 3))


def test_bad_graphs():
    X = graphs(6, 3)
    empty = Graph(0, np.zeros((0, 2), dtype=np.int64), np.zeros(0),
                  node_attrs={"label": np.zeros(0, dtype=np.int64), "vec": np.zeros((0, 2))},
                  edge_attrs={"label": np.zeros(0, dtype=np.int64), "length": np.zeros(0)})
    with pytest.raises(ValueError, match=r"graph Y\[0\] has no nodes"):
        WassersteinWLKernel()(X, [empty])
    with pytest.raises(ValueError, match=r"X\[0\] has no node attribute 'colour' \(the node label"):
        WassersteinWLKernel(node_label="colour")(X)
    with pytest.raises(ValueError, match=r"X\[0\] has no node attribute 'nope' \(the continuous attributes"):
        WassersteinWLKernel(continuous=True, attributes="nope")(X)
    strings = Graph(2, np.array([[0, 1]]), np.ones(1), node_attrs={"s": ["a", "b"]})
    with pytest.raises(TypeError, match="holds strings"):
        WassersteinWLKernel(continuous=True, attributes="s")([strings])
