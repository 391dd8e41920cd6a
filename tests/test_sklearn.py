"""graphgram inside scikit-learn: transformers in pipelines and grid searches, and
Gaussian-process kernels with analytic gradients, tested with real scikit-learn objects."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Exponentiation, WhiteKernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from graphgram import MarginalizedGraphKernel, molecules
from graphgram.gaussian_process import GraphKernel
from graphgram.microkernels import Constant, KroneckerDelta, SquareExponential, TensorProduct

from conftest import random_graph


def labeled_mgk(**kw):
    return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)),
                                   TensorProduct(label=KroneckerDelta(0.5)), **kw)


# --- transformer API ------------------------------------------------------------------

def test_transformer_rows_are_new_graphs(mutag):
    graphs, _ = mutag
    train, test = graphs[:12], graphs[12:17]
    k = labeled_mgk(q=0.05)
    K_train = k.fit_transform(train)
    np.testing.assert_allclose(K_train, k(train), rtol=1e-12)
    K_test = k.transform(test)
    assert K_test.shape == (5, 12)
    np.testing.assert_allclose(K_test, k(test, train), rtol=1e-12)


def test_transformer_normalize_uses_the_right_diagonals(mutag):
    graphs, _ = mutag
    train, test = graphs[:10], graphs[10:14]
    k = labeled_mgk(q=0.05, normalize=True).fit(train)
    raw = labeled_mgk(q=0.05)
    expected = raw(test, train) / np.sqrt(np.outer(raw.diag(test), raw.diag(train)))
    np.testing.assert_allclose(k.transform(test), expected, rtol=1e-12)


def test_get_set_params_and_clone():
    k = labeled_mgk(q=0.05)
    params = k.get_params()
    assert params["q"] == 0.05
    assert params["node_kernel__label__h"] == 0.5
    k.set_params(q=0.2, node_kernel__label__h=0.1)
    assert k.q == 0.2 and k.node_kernel.get_params()["label__h"] == 0.1
    c = clone(k)
    assert c is not k and c.get_params()["node_kernel__label__h"] == 0.1


def test_pipeline_with_grid_search(mutag):
    graphs, y = mutag
    idx = np.r_[0:30, 150:188]
    X, y = [graphs[i] for i in idx], y[idx]
    pipe = Pipeline([("k", labeled_mgk(normalize=True)), ("svc", SVC(kernel="precomputed"))])
    search = GridSearchCV(pipe, {"k__q": [0.01, 0.2], "k__node_kernel__label__h": [0.1, 0.9]},
                          cv=StratifiedKFold(3, shuffle=True, random_state=0))
    search.fit(X, y)
    assert set(search.best_params_) == {"k__q", "k__node_kernel__label__h"}
    assert len(search.cv_results_["mean_test_score"]) == 4
    assert search.best_score_ > 0.7
    assert search.predict(graphs[40:45]).shape == (5,)


# --- Gaussian-process kernel --------------------------------------------------------

def small_set(rng, count=5):
    return [random_graph(rng, int(rng.integers(2, 7))) for _ in range(count)]


@pytest.mark.parametrize("normalize", [False, True])
def test_gradient_matches_finite_differences(rng, normalize):
    gs = small_set(rng)
    k = MarginalizedGraphKernel(
        TensorProduct(label=KroneckerDelta(0.4), charge=SquareExponential(1.2)),
        TensorProduct(label=KroneckerDelta(0.6), length=SquareExponential(0.9)) + Constant(0.1, "fixed"),
        q=0.1, normalize=normalize, tol=1e-15, maxiter=5000)
    K, G = k(gs, eval_gradient=True)
    assert G.shape == (5, 5, k.n_dims) == (5, 5, 5)
    np.testing.assert_allclose(K, k(gs), rtol=1e-12)
    theta, eps = k.theta, 1e-5
    for j in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[j] += eps
        down[j] -= eps
        fd = (k.clone_with_theta(up)(gs) - k.clone_with_theta(down)(gs)) / (2 * eps)
        scale = np.abs(fd).max()
        assert np.max(np.abs(G[:, :, j] - fd)) <= 1e-6 * scale, k.hyperparameters[j].name


def test_hyperparameters_theta_bounds():
    k = labeled_mgk(q=0.05, q_bounds=(1e-3, 0.5))
    names = [h.name for h in k.hyperparameters]
    assert names == ["q", "node_kernel__label__h", "edge_kernel__label__h"]
    np.testing.assert_allclose(np.exp(k.theta), [0.05, 0.5, 0.5])
    assert k.bounds.shape == (3, 2)
    np.testing.assert_allclose(np.exp(k.bounds[0]), [1e-3, 0.5])
    k2 = k.clone_with_theta(np.log([0.2, 0.3, 0.4]))
    assert k2.q == pytest.approx(0.2) and k.q == 0.05
    assert k2.get_params()["node_kernel__label__h"] == pytest.approx(0.3)
    fixed = labeled_mgk(q_bounds="fixed")
    assert fixed.n_dims == 2


def test_gp_kernel_protocol(mutag):
    graphs, _ = mutag
    gk = GraphKernel(labeled_mgk(q=0.05))
    assert not gk.requires_vector_input and not gk.is_stationary()
    assert [h.name for h in gk.hyperparameters][0] == "kernel__q"
    g2 = gk.clone_with_theta(gk.theta + 0.1)
    np.testing.assert_allclose(g2.theta, gk.theta + 0.1)
    np.testing.assert_allclose(gk.diag(graphs[:4]), np.diag(gk(graphs[:4])), rtol=1e-12)
    # scikit-learn's kernel algebra: products, sums and powers with its own kernels.
    combo = ConstantKernel(2.0) * gk + WhiteKernel(0.1)
    K, G = combo(np.array(graphs[:4], dtype=object), eval_gradient=True)
    assert G.shape == (4, 4, combo.n_dims)
    np.testing.assert_allclose(K, 2.0 * gk(graphs[:4]) + 0.1 * np.eye(4), rtol=1e-12)
    K3 = Exponentiation(gk, 2.0)(graphs[:3])
    np.testing.assert_allclose(K3, gk(graphs[:3]) ** 2, rtol=1e-12)


def test_gp_regressor_optimizes_hyperparameters_on_molecules(datasets_dir):
    pytest.importorskip("rdkit")
    import csv

    from graphgram import Graph
    rows = list(csv.DictReader(open(datasets_dir / "ESOL" / "delaney-processed.csv")))[:40]
    graphs = [molecules.from_smiles(r["smiles"].strip()) for r in rows]
    y = np.array([float(r["measured log solubility in mols per litre"]) for r in rows])
    mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.5)),
                                  TensorProduct(order=KroneckerDelta(0.5)), q=0.05, normalize=True)
    kernel = ConstantKernel(1.0) * GraphKernel(mgk) + WhiteKernel(0.1)
    gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=0, random_state=0)
    lml0 = gp.fit(graphs[:30], y[:30]).log_marginal_likelihood(kernel.theta)
    assert gp.log_marginal_likelihood_value_ >= lml0 - 1e-9
    assert not np.allclose(gp.kernel_.theta, kernel.theta)
    mean, std = gp.predict(graphs[30:], return_std=True)
    assert mean.shape == (10,) and np.all(np.isfinite(mean)) and np.all(std > 0)


def test_gp_classifier_on_mutag(mutag):
    graphs, y = mutag
    idx = np.r_[0:25, 163:188]
    X, yy = np.array([graphs[i] for i in idx], dtype=object), y[idx]
    gpc = GaussianProcessClassifier(GraphKernel(labeled_mgk(q=0.05, normalize=True)), random_state=0,
                                    max_iter_predict=50)
    gpc.fit(X, yy)
    assert gpc.score(X, yy) > 0.7


def test_graph_kernels_compose_directly_with_sklearn_kernels(datasets_dir):
    """No wrapper: ConstantKernel() * molecular_kernel() + WhiteKernel() in a GP, same
    numbers as through GraphKernel."""
    pytest.importorskip("rdkit")
    import csv

    from graphgram import molecular_kernel

    rows = list(csv.DictReader(open(datasets_dir / "ESOL" / "delaney-processed.csv")))[:30]
    graphs = [molecules.from_smiles(r["smiles"].strip()) for r in rows]
    y = np.array([float(r["measured log solubility in mols per litre"]) for r in rows])
    direct = ConstantKernel() * molecular_kernel() + WhiteKernel()
    wrapped = ConstantKernel() * GraphKernel(molecular_kernel()) + WhiteKernel()
    assert direct.n_dims == wrapped.n_dims == molecular_kernel().n_dims + 2
    np.testing.assert_array_equal(direct.theta, wrapped.theta)
    np.testing.assert_array_equal(direct.bounds, wrapped.bounds)
    K1, G1 = direct(np.array(graphs[:6], dtype=object), eval_gradient=True)
    K2, G2 = wrapped(np.array(graphs[:6], dtype=object), eval_gradient=True)
    np.testing.assert_array_equal(K1, K2)
    np.testing.assert_array_equal(G1, G2)
    gp = GaussianProcessRegressor(direct, normalize_y=True, random_state=0).fit(graphs[:24], y[:24])
    assert gp.log_marginal_likelihood_value_ >= gp.log_marginal_likelihood(direct.theta) - 1e-9
    assert np.all(np.isfinite(gp.predict(graphs[24:])))
    # + ConstantKernel(1.0) and its constant_value
    assert (molecular_kernel() + 1.0).n_dims == molecular_kernel().n_dims + 1
