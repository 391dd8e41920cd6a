"""The low-rank Gaussian-process kernel (Nyström / subset of regressors, FITC): values
and gradients against a NumPy implementation of the formulas built from the wrapped
kernel's exact Gram matrix and gradient, finite differences, scikit-learn's GP, the
explicit features, pickling, and bad input."""

import csv
import dataclasses
import io
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from graphgram import Graph, LowRankGraphKernel, MarginalizedGraphKernel, ShortestPathKernel, molecular_kernel
from graphgram.gaussian_process import LBFGS
from graphgram.microkernels import KroneckerDelta, TensorProduct
from graphgram.molecules import from_smiles

from conftest import dataset_dir

JITTER = 1e-10


def labeled(normalize=False, **kw):
    return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)),
                                   q=0.05, normalize=normalize, verbose=False, **kw)


def formula(A, dA, Kzz, dKzz, kd=None, dkd=None, jitter=JITTER):
    """The low-rank K(X, X) and its gradient by the formulas, in NumPy: A = K(X, Z),
    Kzz = K(Z, Z), their gradients (last axis), and for FITC the diagonal k(x, x)."""
    n, m = A.shape
    C = Kzz + jitter * np.mean(np.diag(Kzz)) * np.eye(m)
    B = np.linalg.solve(C, np.eye(m))
    Q = A @ B @ A.T
    dQ = np.empty((n, n, dA.shape[2]))
    for t in range(dA.shape[2]):
        # ∂(A B Aᵀ) = ∂A B Aᵀ + A B ∂Aᵀ − A B ∂K_ZZ B Aᵀ
        dQ[:, :, t] = dA[:, :, t] @ B @ A.T + A @ B @ dA[:, :, t].T - A @ B @ dKzz[:, :, t] @ B @ A.T
    if kd is not None:
        i = np.arange(n)
        Q[i, i] = kd               # Q + diag(k − q): the exact diagonal
        dQ[i, i, :] = dkd
    return Q, dQ


def reference(kernel, X, Z, fitc):
    """formula() on the exact K and ∂K of X ∪ Z: one symmetric call of the wrapped kernel, sliced."""
    n = len(X)
    Kf, Gf = kernel(list(X) + list(Z), eval_gradient=True)
    i = np.arange(n)
    Q, dQ = formula(Kf[:n, n:], Gf[:n, n:], Kf[n:, n:], Gf[n:, n:],
                    *((Kf[i, i], Gf[i, i]) if fitc else ()))
    return Q, dQ, Kf[n:, n:]


def assert_close(actual, expected, rtol):
    scale = np.abs(expected).max()
    assert np.abs(actual - expected).max() <= rtol * scale, np.abs(actual - expected).max() / scale


@pytest.fixture(scope="module")
def graphs(mutag):
    return mutag[0][:14]


@pytest.mark.parametrize("normalize", [False, True, 0.5])
@pytest.mark.parametrize("fitc", [False, True])
def test_values_and_gradient_match_numpy_formula(graphs, normalize, fitc):
    # accuracy=1e-12: the wrapped kernel's values agree across calls to ~1e-13 (its
    # solves stop at a tolerance, and a pair in two calls need not be solved alike).
    k = labeled(normalize, accuracy=1e-12)
    lr = LowRankGraphKernel(k, inducing=5, fitc=fitc, random_state=1)
    K, G = lr(graphs, eval_gradient=True)
    Z = lr.inducing_graphs_
    assert len(Z) == 5 and all(z is graphs[i] for z, i in zip(Z, lr.inducing_indices_))
    assert G.shape == (14, 14, k.n_dims) and k.n_dims == 3
    # 1. The formula in NumPy on the wrapped kernel's own blocks: only rounding
    #    differs, which grows with K_ZZ's condition number c (B enters ∂K twice: c²).
    A, dA = k._block_gradient(graphs, Z)
    Kzz, dKzz = k._block_gradient(Z)
    c = np.linalg.cond(Kzz)
    assert 10 < c < 1e4
    rtol = 1e-15 * c ** 2
    Q, dQ = formula(A, dA, Kzz, dKzz, *(k._diag_gradient(graphs) if fitc else ()))
    assert_close(K, Q, rtol)
    assert_close(G, dQ, rtol)
    # 2. The same on a slice of the exact Gram matrix of X ∪ Z and its gradient. Its
    #    gradient entries come from other adjoint solves, which agree with those of
    #    the blocks to about 1e-9 relative; K_ZZ's conditioning amplifies that.
    Q, dQ, _ = reference(k, graphs, Z, fitc)
    assert_close(K, Q, rtol)
    assert_close(G, dQ, 1e-7)
    np.testing.assert_array_equal(lr(graphs), K)              # the same values without gradient
    np.testing.assert_allclose(lr.diag(graphs), np.diag(Q), rtol=rtol, atol=rtol * np.abs(Q).max())
    # Cross matrix: the Nyström block A B K(Z, Y), no FITC term off the diagonal.
    Y = graphs[3:7]
    expected = k(graphs, Z) @ np.linalg.solve(Kzz + JITTER * np.mean(np.diag(Kzz)) * np.eye(5), k(Z, Y))
    assert_close(lr(graphs, Y), expected, rtol)


@pytest.mark.parametrize("normalize", [False, 0.5])
@pytest.mark.parametrize("fitc", [False, True])
def test_inducing_rows_of_the_cross_block_are_the_inducing_block_bit_for_bit(graphs, normalize, fitc):
    # With Z chosen from X, K(Z, Z) and its gradient are taken from Z's rows of
    # K(X, Z) instead of a call of their own: the same bits, since a kernel value
    # depends only on its two graphs.
    lr = LowRankGraphKernel(labeled(normalize), inducing=5, fitc=fitc, random_state=2).fit(graphs)
    idx, Z = lr.inducing_indices_, lr.inducing_graphs_
    assert lr._inducing_rows(graphs, Z).tolist() == list(idx)
    Kzz, Gzz = lr.kernel._block_gradient(Z)
    A, GA = lr.kernel._block_gradient(graphs, Z)
    np.testing.assert_array_equal(A[idx], Kzz)
    np.testing.assert_array_equal(GA[idx], Gzz)
    # The whole evaluation equals the one with a K(Z, Z) call of its own (other
    # objects than Z's in X, so that their rows are not looked for).
    copies = [pickle.loads(pickle.dumps(g)) for g in graphs]
    assert lr._inducing_rows(copies, Z) is None
    for got, want in zip(dataclasses.astuple(lr._terms(graphs, Z, eval_gradient=True)),
                         dataclasses.astuple(lr._terms(copies, Z, eval_gradient=True))):
        np.testing.assert_array_equal(got, want)


def test_a_fit_takes_the_inducing_block_from_the_cross_block(graphs, monkeypatch):
    from graphgram.gaussian_process import LowRankGaussianProcessRegressor
    gp = LowRankGaussianProcessRegressor(LowRankGraphKernel(labeled(0.5), inducing=4, fitc=True),
                                         optimizer=None).fit(graphs, np.arange(len(graphs), dtype=float))
    theta = np.concatenate([[0.0, np.log(0.1)], gp.kernel_.theta])
    before = gp.log_marginal_likelihood(theta, eval_gradient=True)
    calls, block_gradient = [], MarginalizedGraphKernel._block_gradient

    def recorded(self, X, Y=None):
        calls.append(None if Y is None else len(Y))
        return block_gradient(self, X, Y)

    monkeypatch.setattr(MarginalizedGraphKernel, "_block_gradient", recorded)
    after = gp.log_marginal_likelihood(theta, eval_gradient=True)
    assert calls == [4]                 # K(X, Z) only: no call of its own for K(Z, Z)
    assert after[0] == before[0] and np.array_equal(after[1], before[1])


def test_gradient_matches_finite_differences(graphs):
    k = labeled(0.5, accuracy=1e-12)
    lr = LowRankGraphKernel(k, inducing=4, fitc=True, method="pivoted_cholesky")
    X = graphs[:8]
    K, G = lr(X, eval_gradient=True)
    theta = lr.theta
    for t in range(theta.size):
        h = 1e-5
        tp, tm = theta.copy(), theta.copy()
        tp[t] += h
        tm[t] -= h
        kp, km = lr.clone_with_theta(tp), lr.clone_with_theta(tm)
        assert kp.inducing_graphs_ is lr.inducing_graphs_           # kept fixed while theta moves
        fd = (kp(X) - km(X)) / (2 * h)
        assert_close(G[:, :, t], fd, 1e-5)


@pytest.mark.parametrize("normalize", [False, True])
def test_all_graphs_inducing_reproduce_the_exact_kernel(graphs, normalize):
    k = labeled(normalize)
    X = graphs[:10]
    exact, exact_grad = k(X, eval_gradient=True)
    assert np.linalg.cond(exact) < 1e6        # else the jitter would show beyond 1e-8
    for inducing in (list(X), 10):
        lr = LowRankGraphKernel(k, inducing=inducing, method="pivoted_cholesky")
        K, G = lr(X, eval_gradient=True)
        assert_close(K, exact, 1e-8)
        assert_close(G, exact_grad, 1e-8)


def test_transform_features_give_the_kernel(graphs):
    lr = LowRankGraphKernel(labeled(True), inducing=6, method="random", random_state=3)
    with pytest.raises(NotFittedError, match="call fit"):
        lr.transform(graphs)
    Phi = lr.fit(graphs).transform(graphs)
    assert Phi.shape == (14, 6)
    assert_close(Phi @ Phi.T, lr(graphs), 1e-12)
    new = graphs[:3]
    assert_close(lr.transform(new) @ Phi.T, lr(new, graphs), 1e-12)
    np.testing.assert_array_equal(lr.fit_transform(graphs), Phi)   # fitted already: same inducing graphs
    # In a pipeline, for a linear classifier: the kernel's features, chosen on the training graphs.
    y = np.arange(14) % 2
    clf = make_pipeline(LowRankGraphKernel(labeled(True), inducing=6, method="random", random_state=3),
                        LinearSVC()).fit(graphs, y)
    np.testing.assert_array_equal(clf.predict(graphs), LinearSVC().fit(Phi, y).predict(Phi))


def test_selection_methods_are_deterministic_and_distinct(graphs):
    k = labeled(True)
    dup = list(graphs) + list(graphs[:5])          # duplicates: the same point in feature space
    for method in ("kmeans++", "pivoted_cholesky", "random"):
        a = LowRankGraphKernel(k, inducing=8, method=method, random_state=7).fit(dup).inducing_indices_
        b = LowRankGraphKernel(k, inducing=8, method=method, random_state=7).fit(dup).inducing_indices_
        np.testing.assert_array_equal(a, b)
        assert len(set(a)) == 8
        if method != "random":
            # No graph equal to one chosen is chosen again: K_ZZ stays well conditioned.
            assert len({id(dup[i]) for i in a}) == 8


@pytest.mark.parametrize("normalize", [False, True, 0.5])
def test_column_source_gives_the_columns_of_the_cross_gram(graphs, normalize):
    # The inducing-graph choices pack X once and ask for one column per choice.
    for k in (labeled(normalize), ShortestPathKernel(normalize=normalize)):
        column = k._column_source(graphs)
        for p in (0, 6, len(graphs) - 1):
            np.testing.assert_allclose(column(p), k(graphs, [graphs[p]])[:, 0], rtol=1e-12, atol=0)


def test_pivoted_cholesky_choice_matches_numpy_on_the_full_gram(graphs):
    k = labeled(True)
    K = k(graphs)
    residual, L, chosen = np.diag(K).copy(), np.zeros((6, len(graphs))), []
    for j in range(6):                      # greedy pivoted Cholesky on the exact K
        p = int(np.argmax(residual))
        chosen.append(p)
        L[j] = (K[:, p] - L[:j].T @ L[:j, p]) / np.sqrt(residual[p])
        residual -= L[j] ** 2
        residual[chosen] = 0.0
    got = LowRankGraphKernel(k, inducing=6, method="pivoted_cholesky").fit(graphs).inducing_indices_
    np.testing.assert_array_equal(got, chosen)


def test_gradient_too_large_for_memory_is_refused_before_computing(monkeypatch, graphs):
    from graphgram import _memory

    monkeypatch.setattr(_memory, "_available_memory", lambda: 1000)
    with pytest.raises(MemoryError, match=r"shape \(14, 14\) with 3 gradient columns\) needs"):
        LowRankGraphKernel(labeled(), inducing=list(graphs[:3]))(graphs, eval_gradient=True)


def test_kernel_without_hyperparameters(graphs):
    sp = ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)), normalize=True)
    lr = LowRankGraphKernel(sp, inducing=5)
    K, G = lr(graphs, eval_gradient=True)
    assert G.shape == (14, 14, 0)
    Z = lr.inducing_graphs_
    Kzz = sp(Z)
    expected = sp(graphs, Z) @ np.linalg.solve(Kzz + JITTER * np.mean(np.diag(Kzz)) * np.eye(5), sp(Z, graphs))
    assert_close(K, expected, 1e-15 * np.linalg.cond(Kzz) ** 2)


def test_hyperparameters_params_pickle_and_clone(graphs):
    k = labeled(True)
    lr = LowRankGraphKernel(k, inducing=4, fitc=True)
    assert [h.name for h in lr.hyperparameters] == ["kernel__q", "kernel__node_kernel__label__h",
                                                    "kernel__edge_kernel__label__h"]
    np.testing.assert_array_equal(lr.theta, k.theta)
    params = lr.get_params()
    assert params["inducing"] == 4 and params["fitc"] is True and params["kernel__q"] == 0.05
    K = lr(graphs)
    back = pickle.loads(pickle.dumps(lr))
    np.testing.assert_array_equal(back(graphs), K)
    assert back.inducing_indices_.tolist() == lr.inducing_indices_.tolist()
    fresh = clone(lr)
    assert not hasattr(fresh, "inducing_graphs_")          # a new fit chooses anew
    moved = lr.clone_with_theta(lr.theta + 0.1)
    assert moved.inducing_graphs_ is lr.inducing_graphs_
    np.testing.assert_allclose(moved.theta, lr.theta + 0.1)
    assert k.q == 0.05                                     # the wrapped kernel is never modified


def esol(n):
    path = dataset_dir("ESOL") / "delaney-processed.csv"
    with open(path) as f:
        rows = list(csv.DictReader(f))[:n]
    return [from_smiles(r["smiles"]) for r in rows], np.array([float(r["measured log solubility in mols per litre"])
                                                              for r in rows])


def test_gaussian_process_optimizes_and_reports_progress():
    X, y = esol(40)
    lr = LowRankGraphKernel(molecular_kernel(features="basic", verbose=False), inducing=12, fitc=True)
    kernel = ConstantKernel(1.0) * lr + WhiteKernel(0.1)
    gp0 = GaussianProcessRegressor(kernel, optimizer=None, normalize_y=True).fit(X, y)
    out = io.StringIO()
    opt = LBFGS(max_iter=8, file=out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # L-BFGS-B stopped by max_iter
        gp = GaussianProcessRegressor(kernel, optimizer=opt, normalize_y=True).fit(X, y)
    assert gp.log_marginal_likelihood_value_ > gp0.log_marginal_likelihood_value_ + 1.0
    lines = out.getvalue().splitlines()
    assert len(lines) == opt.n_evaluations_ >= 2
    assert lines[0].startswith("evaluation 1: log marginal likelihood ") and lines[0].endswith(" s")
    np.testing.assert_allclose(float(lines[0].split()[5].rstrip(",")), opt.history_[0][0], rtol=1e-5)
    # The inducing graphs were chosen once, from the training graphs, and kept.
    fitted = gp.kernel_.k1.k2
    assert len(fitted.inducing_graphs_) == 12
    assert all(any(z is x for x in gp.X_train_) for z in fitted.inducing_graphs_)
    mean, std = gp.predict(X[:5], return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(std > 0)


# --- bad input -------------------------------------------------------------------------

def test_bad_input_raises_clear_errors(graphs):
    k = labeled()
    with pytest.raises(ValueError, match=r"inducing=20 graphs to choose from 14: m must be at most"):
        LowRankGraphKernel(k, inducing=20)(graphs)
    with pytest.raises(ValueError, match="inducing must be a positive number"):
        LowRankGraphKernel(k, inducing=0)(graphs)
    with pytest.raises(TypeError, match="inducing must be a number of graphs or a list"):
        LowRankGraphKernel(k, inducing=2.5)(graphs)
    with pytest.raises(ValueError, match="method must be one of"):
        LowRankGraphKernel(k, inducing=3, method="kmeans")(graphs)
    with pytest.raises(ValueError, match="jitter must be"):
        LowRankGraphKernel(k, inducing=3, jitter=-1.0)(graphs)
    with pytest.raises(TypeError, match="kernel must be a graphgram graph kernel"):
        LowRankGraphKernel(ConstantKernel(), inducing=3)(graphs)
    with pytest.raises(ValueError, match="Gradient can only be evaluated when Y is None"):
        LowRankGraphKernel(k, inducing=3)(graphs, graphs[:2], eval_gradient=True)
    unlabeled = Graph(2, [(0, 1)], node_attrs={"x": [1, 2]}, edge_attrs={"label": [1]})
    with pytest.raises(ValueError, match=r"inducing\[1\] has no node attribute 'label' \(needed by the node kernel\)"):
        LowRankGraphKernel(k, inducing=[graphs[0], unlabeled])(graphs)
    numeric = Graph(2, [(0, 1)], node_attrs={"label": ["C", "O"]}, edge_attrs={"label": ["a"]})
    with pytest.raises(TypeError, match=r"Y\[0\].*\(Y: the inducing graphs\)"):
        LowRankGraphKernel(k, inducing=[numeric])(graphs, eval_gradient=True)


def test_singular_inducing_matrix_adds_jitter_and_says_so(graphs):
    lr = LowRankGraphKernel(labeled(), inducing=2, jitter=0.0)
    # Exactly singular (Cholesky meets a zero pivot): the smallest jitter that works, said.
    with pytest.warns(RuntimeWarning, match=r"K\(Z, Z\) of the 2 inducing graphs is not numerically positive definite "
                                            r"with jitter=0; added 4e-12 \(1e-12 × its mean diagonal 4\) instead"):
        L = lr._factor(np.full((2, 2), 4.0))
    np.testing.assert_allclose(L @ L.T, np.full((2, 2), 4.0) + 4e-12 * np.eye(2), rtol=1e-15)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite even with a jitter of 0.01"):
        lr._factor(np.array([[1.0, 2.0], [2.0, 1.0]]))         # indefinite: no jitter helps
    with pytest.raises(np.linalg.LinAlgError, match="mean diagonal of 0"):
        lr._factor(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="non-finite"):
        lr._factor(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    # Through a Gaussian-process evaluation: duplicated inducing graphs never give NaN.
    dup = LowRankGraphKernel(labeled(), inducing=[graphs[0], graphs[0], graphs[1]], jitter=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        K, G = dup(graphs, eval_gradient=True)
    assert np.all(np.isfinite(K)) and np.all(np.isfinite(G))


def test_degenerate_data_cannot_give_m_distinct_inducing_graphs():
    const = MarginalizedGraphKernel(q=0.05, verbose=False)   # unlabeled: equal graphs, equal rows
    path = [Graph(3, [(0, 1), (1, 2)]) for _ in range(3)]
    with pytest.raises(ValueError, match="only 1 of the graphs are distinct"):
        LowRankGraphKernel(const, inducing=2, method="kmeans++").fit(path)
    with pytest.raises(ValueError, match="numerical rank 1 < inducing=2"):
        LowRankGraphKernel(const, inducing=2, method="pivoted_cholesky").fit(path)
