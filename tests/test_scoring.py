"""Fisher scoring: the exact GP's Fisher information against independent references, the
optimizer on likelihoods with closed-form optima, and FisherScoring on scikit-learn's regressor."""

import csv
import io
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

from graphgram import molecular_kernel, molecules
from graphgram.gaussian_process import LBFGS, FisherScoring
from graphgram.gaussian_process import _exact
from graphgram.gaussian_process._scoring import maximize

from conftest import dataset_dir


def toy(n=40, seed=0, targets=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    y = np.sin(X[:, 0]) + 0.5 * np.cos(2 * X[:, 1])
    y = y[:, None] + 0.1 * rng.standard_normal((n, targets)) if targets > 1 else y + 0.1 * rng.standard_normal(n)
    return X, y


def toy_kernel():
    return ConstantKernel(1.0) * RBF([1.0, 1.0]) + WhiteKernel(0.1)


def fitted_regressor(X, y, kernel, **kw):
    """A regressor with the training data in place, as scikit-learn's fit has it when it calls the optimizer."""
    return GaussianProcessRegressor(kernel, optimizer=None, **kw).fit(X, y)


def dense_fisher(K, dK, targets=1):
    """½ t tr(K⁻¹ ∂_i K K⁻¹ ∂_j K) by an explicit inverse."""
    W = [np.linalg.inv(K) @ dK[:, :, i] for i in range(dK.shape[2])]
    return 0.5 * targets * np.array([[np.trace(a @ b) for b in W] for a in W])


@pytest.mark.parametrize("targets,alpha,normalize_y", [(1, 1e-10, False), (1, 1e-10, True), (2, 1e-6, True),
                                                      (1, "array", False)])
def test_information_is_scikit_learns_likelihood_and_the_dense_fisher(targets, alpha, normalize_y):
    X, y = toy(targets=targets)
    if alpha == "array":
        alpha = np.linspace(1e-6, 1e-3, len(X))
    gpr = fitted_regressor(X, y, toy_kernel(), alpha=alpha, normalize_y=normalize_y)
    theta = gpr.kernel_.theta + np.array([0.3, -0.2, 0.4, -1.0])
    lml_ref, grad_ref = gpr.log_marginal_likelihood(theta, eval_gradient=True)
    lml, grad, fisher = _exact.information(gpr, theta)
    assert lml == pytest.approx(lml_ref, rel=1e-12)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gpr.kernel_.theta, theta, rtol=1e-14)  # set, as clone_kernel=False does
    K, dK = gpr.kernel_(X, eval_gradient=True)
    K[np.diag_indices_from(K)] += alpha
    np.testing.assert_allclose(fisher, dense_fisher(K, dK, targets), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fisher, fisher.T, rtol=1e-12)


def test_fisher_is_the_covariance_of_the_score():
    # The Fisher information is E[g gᵀ] for y drawn from the model itself: a
    # Monte-Carlo check that shares no formula with the trace form.
    X, y = toy(n=25)
    gpr = fitted_regressor(X, y, toy_kernel())
    theta = gpr.kernel_.theta
    K, dK = gpr.kernel_(X, eval_gradient=True)
    K[np.diag_indices_from(K)] += gpr.alpha
    Kinv = np.linalg.inv(K)
    draws = np.random.default_rng(1).multivariate_normal(np.zeros(len(X)), K, size=40000)   # (s, n)
    A = draws @ Kinv                                                                         # α per draw
    scores = 0.5 * (np.einsum("si,ijp,sj->sp", A, dK, A) - np.einsum("ij,jip->p", Kinv, dK))
    _, _, fisher = _exact.information(gpr, theta)
    np.testing.assert_allclose(scores.T @ scores / len(draws), fisher, rtol=0.05, atol=0.02 * np.abs(fisher).max())


def normal_sample():
    return np.random.default_rng(2).normal(1.5, 0.7, 200)


def normal_information(theta, x=normal_sample()):
    """log N(x; μ, σ²) summed, its gradient and Fisher information in θ = (μ, log σ): diag(n/σ², 2n)."""
    mu, s2 = theta[0], np.exp(2 * theta[1])
    r = x - mu
    n = len(x)
    lml = -0.5 * np.sum(r ** 2) / s2 - n * theta[1] - 0.5 * n * np.log(2 * np.pi)
    grad = np.array([np.sum(r) / s2, np.sum(r ** 2) / s2 - n])
    return lml, grad, np.diag([n / s2, 2.0 * n])


def test_maximize_reaches_the_closed_form_optimum():
    x = normal_sample()
    calls = []

    def info(theta):
        calls.append(theta.copy())
        return normal_information(theta)

    bounds = np.array([[-10.0, 10.0], [-5.0, 5.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        theta, lml = maximize(info, np.array([-2.0, 1.5]), bounds, tol=1e-6)
    assert theta[0] == pytest.approx(x.mean(), abs=1e-5)
    assert theta[1] == pytest.approx(np.log(x.std()), abs=1e-5)
    assert lml == normal_information(theta)[0]
    assert len(calls) < 30


def test_maximize_ends_on_a_bound_that_cuts_off_the_optimum():
    x = normal_sample()
    bounds = np.array([[-10.0, 10.0], [0.0, 5.0]])  # σ ≥ 1, above the sample's 0.7
    theta, lml = maximize(normal_information, np.array([4.0, 2.0]), bounds, tol=1e-8)
    assert theta[1] == 0.0 and theta[0] == pytest.approx(x.mean(), abs=1e-6)
    assert lml == pytest.approx(normal_information(np.array([x.mean(), 0.0]))[0], abs=1e-8)


def test_maximize_backtracks_when_the_model_overshoots():
    # A likelihood whose curvature the "Fisher" matrix underestimates tenfold:
    # the first steps overshoot and must be cut back, and it still gets there.
    def info(theta):
        lml, grad, fisher = normal_information(theta)
        return lml, grad, fisher / 10

    x = normal_sample()
    theta, _ = maximize(info, np.array([-2.0, 1.5]), np.array([[-10.0, 10.0], [-5.0, 5.0]]), tol=1e-8)
    assert theta[0] == pytest.approx(x.mean(), abs=1e-4)


def test_maximize_takes_the_observed_curvature_where_the_model_is_too_curved():
    # A "Fisher" matrix ten times too curved: each plain step covers a tenth of
    # the way (linear convergence at 0.9); after one step that gained more than
    # the model said, the curvature measured along it takes over.
    def info(theta):
        lml, grad, fisher = normal_information(theta)
        calls.append(lml)
        return lml, grad, 10 * fisher

    x = normal_sample()
    calls = []
    theta, _ = maximize(info, np.array([-2.0, 1.5]), np.array([[-10.0, 10.0], [-5.0, 5.0]]), tol=1e-6)
    assert theta[0] == pytest.approx(x.mean(), abs=1e-4) and theta[1] == pytest.approx(np.log(x.std()), abs=1e-4)
    assert len(calls) < 25
    from graphgram.gaussian_process._scoring import _flatten
    F = np.array([[4.0, 1.0], [1.0, 3.0]])
    s = np.array([1.0, -0.5])
    flat = _flatten(F, s, 0.5 * F @ s)            # observed curvature half the model's along s
    assert s @ flat @ s == pytest.approx(0.5 * s @ F @ s)
    np.testing.assert_array_equal(_flatten(F, s, 2 * F @ s), F)     # never raised
    assert s @ _flatten(F, s, -F @ s) @ s == pytest.approx(0.1 * s @ F @ s)   # lowered by 90 % at most


def test_maximize_stops_once_a_window_of_steps_gained_less_than_tol():
    # A model ten times too curved: the steps fall short and the gains shrink
    # geometrically, so the rule, not the optimum, ends the optimization.
    x = normal_sample()
    optimum = normal_information(np.array([x.mean(), np.log(x.std())]))[0]

    def run(tol, patience):
        calls = []

        def info(theta):
            lml, grad, fisher = normal_information(theta)
            calls.append(lml)
            return lml, grad, 10 * fisher

        _, lml = maximize(info, np.array([-2.0, 1.5]), np.array([[-10.0, 10.0], [-5.0, 5.0]]), tol=tol,
                          patience=patience)
        best = [calls[0]]
        for v in calls[1:]:
            if v > best[-1]:
                best.append(v)
        assert lml == best[-1]
        # The last window gained less than tol, or the model predicted no gain at all.
        assert np.sum(np.diff(best)[-patience:]) < tol or optimum - lml < 1e-6
        return lml, len(calls)

    runs = [run(tol, patience) for tol, patience in [(0.5, 1), (0.5, 3), (1e-3, 3), (1e-3, 6)]]
    for (lml, n), (lml2, n2) in zip(runs, runs[1:]):
        assert lml <= lml2 and n <= n2                    # a stricter rule runs longer, to a higher value
    assert runs[0][1] < runs[-1][1]
    assert 0 < optimum - runs[1][0] < 5 and 0 <= optimum - runs[-1][0] < 1e-2


def test_maximize_budgets(ticking_clock):
    bounds = np.array([[-10.0, 10.0], [-5.0, 5.0]])
    with pytest.warns(RuntimeWarning, match="max_evaluations=2 reached"):
        theta, lml = maximize(normal_information, np.array([-2.0, 1.5]), bounds, max_evaluations=2)
    assert lml == normal_information(theta)[0] > normal_information(np.array([-2.0, 1.5]))[0]
    with pytest.warns(RuntimeWarning, match="time budget of 3 s"):
        maximize(ticking_clock.tick(normal_information), np.array([-2.0, 1.5]), bounds, tol=1e-12, max_seconds=3)
    assert ticking_clock.started == [0.0, 1.0, 2.0]


def test_newton_step_survives_an_unusable_fisher():
    from graphgram.gaussian_process._scoring import _newton
    g, free = np.array([1.0, -2.0]), np.array([True, True])
    np.testing.assert_allclose(_newton(g, np.diag([2.0, 4.0]), free, 0.0), [0.5, -0.5])
    for bad in (np.zeros((2, 2)), np.full((2, 2), np.nan)):
        step = _newton(g, bad, free, 1e-3)
        assert np.all(np.isfinite(step)) and step @ g > 0     # an ascent direction all the same
    np.testing.assert_array_equal(_newton(g, np.eye(2), np.array([False, True]), 0.0), [0.0, -2.0])


def test_maximize_refuses_a_start_without_a_likelihood():
    def info(theta):
        return -np.inf, np.zeros(2), None

    with pytest.raises(ValueError, match="not finite at the starting point"):
        maximize(info, np.zeros(2), np.array([[-1.0, 1.0]] * 2))


def test_fisher_scoring_fits_scikit_learns_regressor_to_its_optimum():
    X, y = toy(n=60)
    reference = GaussianProcessRegressor(toy_kernel()).fit(X, y)      # scikit-learn's own L-BFGS-B
    out = io.StringIO()
    opt = FisherScoring(tol=0.01, file=out)
    gp = GaussianProcessRegressor(toy_kernel(), optimizer=opt).fit(X, y)
    assert gp.log_marginal_likelihood_value_ > reference.log_marginal_likelihood_value_ - 0.01
    lines = out.getvalue().splitlines()
    assert len(lines) == opt.n_evaluations_ >= 2 and lines[0].startswith("evaluation 1: log marginal likelihood ")
    assert max(v for v, _ in opt.history_) == pytest.approx(gp.log_marginal_likelihood_value_, rel=1e-10)
    # The regressor is a plain one: cloned, pickled, its predictions scikit-learn's at the same θ.
    again = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(again.predict(X[:5]), gp.predict(X[:5]))
    assert isinstance(clone(gp).optimizer, FisherScoring)
    fixed = GaussianProcessRegressor(gp.kernel_, optimizer=None).fit(X, y)
    np.testing.assert_array_equal(fixed.predict(X[:5]), gp.predict(X[:5]))


def test_fisher_scoring_on_a_graph_gp():
    rows = list(csv.DictReader(open(dataset_dir("ESOL") / "delaney-processed.csv")))[:60]
    graphs = [molecules.from_smiles(r["smiles"]) for r in rows]
    y = np.array([float(r["measured log solubility in mols per litre"]) for r in rows])

    def kernel():
        return ConstantKernel() * molecular_kernel(verbose=False) + WhiteKernel(0.1, (1e-4, 1.0))

    full = LBFGS(tol=None, file=io.StringIO())
    reference = GaussianProcessRegressor(kernel(), normalize_y=True, optimizer=full).fit(graphs, y)
    opt = FisherScoring(tol=0.01, file=io.StringIO())
    gp = GaussianProcessRegressor(kernel(), normalize_y=True, optimizer=opt).fit(graphs, y)
    assert gp.log_marginal_likelihood_value_ > reference.log_marginal_likelihood_value_ - 0.1


def test_fisher_scoring_checks_its_parameters_and_its_objective():
    X, y = toy()
    for bad in (dict(tol=0), dict(tol="1"), dict(tol=True), dict(tol=float("nan")), dict(patience=0),
                dict(patience=1.5), dict(max_evaluations=0), dict(max_evaluations=2.5), dict(max_seconds=-1)):
        with pytest.raises(ValueError, match="FisherScoring: %s must be" % next(iter(bad))):
            GaussianProcessRegressor(toy_kernel(), optimizer=FisherScoring(**bad)).fit(X, y)
    with pytest.raises(TypeError, match="needs the kernel's gradient matrices"):
        FisherScoring()(lambda theta, eval_gradient=True: (0.0, np.zeros(2)), np.zeros(2), np.zeros((2, 2)))
    assert repr(FisherScoring(tol=0.1)) == ("FisherScoring(tol=0.1, patience=3, max_evaluations=200, max_seconds=None, "
                                            "verbose=True)")


def test_docstring_example():
    import doctest
    from graphgram.gaussian_process import _scoring
    result = doctest.testmod(_scoring)
    assert result.attempted > 0 and result.failed == 0
