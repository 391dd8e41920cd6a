"""LowRankGaussianProcessRegressor: its log marginal likelihood, gradient and predictions
against scikit-learn's GaussianProcessRegressor on ConstantKernel * LowRankGraphKernel +
WhiteKernel (which forms the n×n matrices), finite differences, a fit, scikit-learn
conventions (clone, get_params, pickling) and bad input."""

import io
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel

import graphgram
from graphgram import MarginalizedGraphKernel
from graphgram.gaussian_process import FisherScoring, LBFGS, LowRankGaussianProcessRegressor, LowRankGraphKernel
from graphgram.gaussian_process import _exact
from graphgram.microkernels import KroneckerDelta, TensorProduct


def labeled():
    # normalize=0.5: self-similarities that vary, with a gradient (the FITC diagonal's ∂k(x, x));
    # accuracy=1e-12: the graph pairs agree across calls to ~1e-13, far below the tolerances.
    return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)),
                                   q=0.05, normalize=0.5, verbose=False, accuracy=1e-12)


@pytest.fixture(scope="module")
def data(mutag):
    graphs = mutag[0][:30]
    y = np.sin(np.arange(30.0)) + 0.1 * np.arange(30.0) + 3.0     # not centered: normalize_y matters
    return graphs, y


def sklearn_theta(theta):
    """Ours (log signal, log noise, kernel...) in sklearn's order (constant, kernel..., white)."""
    return np.concatenate([[theta[0]], theta[2:], [theta[1]]])


def ours_from_sklearn(grad):
    return np.concatenate([[grad[0], grad[-1]], grad[1:-1]])


def pair(graphs, y, fitc, normalize_y, signal=1.3, noise=0.05):
    """Ours and sklearn's GP, fitted without optimization on the same model (explicit inducing graphs)."""
    lr = LowRankGraphKernel(labeled(), inducing=list(graphs[::5]), fitc=fitc)
    ours = LowRankGaussianProcessRegressor(lr, signal=signal, noise=noise, normalize_y=normalize_y, optimizer=None)
    sk = GaussianProcessRegressor(ConstantKernel(signal) * lr + WhiteKernel(noise), normalize_y=normalize_y,
                                  optimizer=None)
    return ours.fit(graphs, y), sk.fit(graphs, y)


@pytest.mark.parametrize("normalize_y", [False, True])
@pytest.mark.parametrize("fitc", [False, True])
def test_log_marginal_likelihood_and_gradient_equal_sklearn(data, fitc, normalize_y):
    graphs, y = data
    ours, sk = pair(graphs, y, fitc, normalize_y)
    assert ours.kernel_.n_dims == 3
    np.testing.assert_allclose(ours.log_marginal_likelihood_value_, sk.log_marginal_likelihood_value_, rtol=1e-10)
    base = np.concatenate([[np.log(1.3), np.log(0.05)], ours.kernel_.theta])
    for shift in ([0, 0, 0, 0, 0], [0.4, -1.0, 0.3, -0.6, 0.5], [-0.7, 1.5, -0.4, 0.8, -0.3]):
        theta = base + np.array(shift)
        value, grad = ours.log_marginal_likelihood(theta, eval_gradient=True)
        ref, ref_grad = sk.log_marginal_likelihood(sklearn_theta(theta), eval_gradient=True)
        np.testing.assert_allclose(value, ref, rtol=1e-10)
        ref_grad = ours_from_sklearn(ref_grad)
        assert np.abs(grad - ref_grad).max() <= 1e-8 * np.abs(ref_grad).max(), (grad, ref_grad)
        np.testing.assert_allclose(ours.log_marginal_likelihood(theta), value, rtol=1e-13)
    assert ours.log_marginal_likelihood() == ours.log_marginal_likelihood_value_


@pytest.mark.parametrize("fitc", [False, True])
def test_gradient_matches_finite_differences(data, fitc):
    graphs, y = data
    ours, _ = pair(graphs, y, fitc, True)
    theta = np.concatenate([[np.log(0.8), np.log(0.2)], ours.kernel_.theta + [0.2, -0.3, 0.1]])
    _, grad = ours.log_marginal_likelihood(theta, eval_gradient=True)
    # The graph pairs are solved to ~1e-13, the likelihood is ~1e2: h = 1e-4 keeps both
    # that rounding and the O(h²) truncation below 1e-5 of the gradient.
    h = 1e-4
    for t in range(theta.size):
        e = np.zeros_like(theta)
        e[t] = h
        fd = (ours.log_marginal_likelihood(theta + e) - ours.log_marginal_likelihood(theta - e)) / (2 * h)
        assert abs(grad[t] - fd) <= 1e-5 * max(1.0, abs(fd)), (t, grad[t], fd)


@pytest.mark.parametrize("normalize_y", [False, True])
@pytest.mark.parametrize("fitc", [False, True])
def test_fisher_information_equals_the_dense_one(data, fitc, normalize_y):
    # The dense reference: scikit-learn's regressor on the same model, its n×n
    # kernel gradient contracted by _exact.information (itself tested against an
    # explicit inverse and the score's covariance, tests/test_scoring.py).
    graphs, y = data
    ours, sk = pair(graphs, y, fitc, normalize_y)
    order = [0, 4, 1, 2, 3]                       # ours (c, noise, kernel) from sklearn's (c, kernel, noise)
    base = np.concatenate([[np.log(1.3), np.log(0.05)], ours.kernel_.theta])
    for shift in ([0, 0, 0, 0, 0], [0.4, -1.0, 0.3, -0.6, 0.5]):
        theta = base + np.array(shift)
        value, grad, fisher = ours._evaluate(theta, True, eval_information=True)
        ref, _, ref_fisher = _exact.information(sk, sklearn_theta(theta))
        np.testing.assert_allclose(value, ref, rtol=1e-10)
        ref_fisher = ref_fisher[np.ix_(order, order)]
        assert np.abs(fisher - ref_fisher).max() <= 1e-8 * np.abs(ref_fisher).max(), (fisher, ref_fisher)
        np.testing.assert_array_equal(grad, ours.log_marginal_likelihood(theta, eval_gradient=True)[1])


def test_fisher_scoring_fits_to_the_optimum(data):
    # Targets the kernel explains (node counts), so that the optimum lies inside the
    # bounds; on data's targets it is the noise-only model at the signal's lower bound,
    # where the kernel's hyperparameters barely matter and any point is a plateau.
    graphs, _ = data
    y = np.array([g.n_nodes for g in graphs], float) + 0.3 * np.sin(np.arange(len(graphs)))
    fits = {}
    for name, opt in (("lbfgs", LBFGS(tol=None, file=io.StringIO())),
                      ("fisher", FisherScoring(tol=0.01, file=io.StringIO()))):
        lr = LowRankGraphKernel(labeled(), inducing=6, fitc=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fits[name] = LowRankGaussianProcessRegressor(lr, optimizer=opt).fit(graphs, y).log_marginal_likelihood_value_
    assert fits["fisher"] > fits["lbfgs"] - 0.05


@pytest.mark.parametrize("fitc", [False, True])
def test_predictions_equal_sklearn(data, fitc):
    graphs, y = data
    ours, sk = pair(graphs, y, fitc, True)
    new = graphs[1:12:2] + graphs[::7]             # training graphs (some inducing) and others
    mean, std = ours.predict(new, return_std=True)
    ref_mean, ref_std = sk.predict(new, return_std=True)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-9, atol=1e-9 * np.abs(ref_mean).max())
    np.testing.assert_allclose(std, ref_std, rtol=1e-8)
    _, cov = ours.predict(new, return_cov=True)
    np.testing.assert_allclose(cov, sk.predict(new, return_cov=True)[1], rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(ours.predict(new), mean)
    np.testing.assert_allclose(ours.alpha_, sk.alpha_, rtol=1e-8, atol=1e-10 * np.abs(sk.alpha_).max())
    # R² = 1 − SS_res/SS_tot is near 0 here (0.007): compared on its own scale, 1,
    # as the two regressors' algebra rounds differently (agreement ~2e-12).
    np.testing.assert_allclose(ours.score(graphs, y), sk.score(graphs, y), rtol=1e-10, atol=1e-10)
    with pytest.raises(RuntimeError, match="At most one of return_std or return_cov"):
        ours.predict(new, return_std=True, return_cov=True)


def test_fit_improves_the_likelihood_deterministically_and_reports_progress(data):
    graphs, y = data
    lr = LowRankGraphKernel(labeled(), inducing=6, fitc=True)
    gp0 = LowRankGaussianProcessRegressor(lr, optimizer=None).fit(graphs, y)
    out = io.StringIO()
    opt = LBFGS(max_iter=20, file=out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)        # L-BFGS-B stopped by max_iter
        gp = LowRankGaussianProcessRegressor(lr, optimizer=opt).fit(graphs, y)
    assert gp.log_marginal_likelihood_value_ > gp0.log_marginal_likelihood_value_ + 1.0
    lines = out.getvalue().splitlines()
    assert len(lines) == opt.n_evaluations_ >= 2 and lines[0].startswith("evaluation 1: log marginal likelihood ")
    assert max(v for v, _ in opt.history_) == pytest.approx(gp.log_marginal_likelihood_value_, rel=1e-9)
    # The inducing graphs were chosen from the training graphs once; the fitted values are in kernel_ etc.
    assert len(gp.kernel_.inducing_graphs_) == 6 and not hasattr(lr, "inducing_graphs_")
    assert all(any(z is x for x in graphs) for z in gp.kernel_.inducing_graphs_)
    theta = np.concatenate([[np.log(gp.signal_), np.log(gp.noise_)], gp.kernel_.theta])
    assert gp.log_marginal_likelihood(theta) == pytest.approx(gp.log_marginal_likelihood_value_, rel=1e-12)
    # Deterministic: the default optimizer (scikit-learn's L-BFGS-B) twice, the same result.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a, b = (LowRankGaussianProcessRegressor(LowRankGraphKernel(labeled(), inducing=4)).fit(graphs[:20], y[:20])
                for _ in range(2))
    assert a.log_marginal_likelihood_value_ == b.log_marginal_likelihood_value_
    np.testing.assert_array_equal(a.predict(graphs[:5]), b.predict(graphs[:5]))
    lo, hi = np.log(a.signal_bounds)
    assert lo <= np.log(a.signal_) <= hi


def test_restarts_keep_the_best(data):
    graphs, y = data
    calls = []

    def optimizer(obj_func, initial_theta, bounds):
        calls.append(np.array(initial_theta))
        return initial_theta, obj_func(initial_theta, eval_gradient=False)

    lr = LowRankGraphKernel(labeled(), inducing=5, method="random")
    gp = LowRankGaussianProcessRegressor(lr, optimizer=optimizer, n_restarts_optimizer=2, random_state=0)
    gp.fit(graphs, y)
    assert len(calls) == 3
    best = max(calls, key=gp.log_marginal_likelihood)
    np.testing.assert_allclose(np.log([gp.signal_, gp.noise_]), best[:2], rtol=1e-12)


def test_params_clone_and_pickle(data):
    graphs, y = data
    lr = LowRankGraphKernel(labeled(), inducing=5, fitc=True)
    gp = LowRankGaussianProcessRegressor(lr, signal=2.0, noise=0.3, optimizer=None, normalize_y=False)
    params = gp.get_params()
    assert params["kernel"] is lr and params["signal"] == 2.0 and params["noise"] == 0.3
    assert params["kernel__inducing"] == 5 and params["kernel__kernel__q"] == 0.05
    fresh = clone(gp)
    assert fresh.get_params()["signal"] == 2.0 and not hasattr(fresh, "kernel_")
    with pytest.raises(NotFittedError):
        fresh.predict(graphs)
    gp.fit(graphs, y)
    back = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(back.predict(graphs[:4], return_std=True)[1], gp.predict(graphs[:4], return_std=True)[1])
    assert back.log_marginal_likelihood_value_ == gp.log_marginal_likelihood_value_
    gp.set_params(signal=1.0)
    assert gp.signal == 1.0 and gp.signal_ == 2.0
    assert graphgram.LowRankGaussianProcessRegressor is LowRankGaussianProcessRegressor


def test_bad_input_raises_clear_errors(data):
    graphs, y = data
    lr = LowRankGraphKernel(labeled(), inducing=5)
    with pytest.raises(TypeError, match="kernel must be a LowRankGraphKernel"):
        LowRankGaussianProcessRegressor(labeled()).fit(graphs, y)
    with pytest.raises(ValueError, match="X has 30 graphs but y has 29 targets"):
        LowRankGaussianProcessRegressor(lr).fit(graphs, y[:-1])
    bad = y.copy()
    bad[[4, 9]] = [np.nan, np.inf]
    with pytest.raises(ValueError, match="y has 2 non-finite values .* the first at position 4"):
        LowRankGaussianProcessRegressor(lr).fit(graphs, bad)
    with pytest.raises(ValueError, match=r"y must be one target per graph \(shape \(n,\)\)"):
        LowRankGaussianProcessRegressor(lr).fit(graphs, np.ones((30, 2)))
    with pytest.raises(ValueError, match="signal must be a positive number"):
        LowRankGaussianProcessRegressor(lr, signal=0.0).fit(graphs, y)
    with pytest.raises(ValueError, match="noise_bounds must satisfy 0 < low <= high"):
        LowRankGaussianProcessRegressor(lr, noise_bounds=(1.0, 0.1)).fit(graphs, y)
    with pytest.raises(ValueError, match="optimizer must be 'fmin_l_bfgs_b', a callable or None"):
        LowRankGaussianProcessRegressor(lr, optimizer="adam").fit(graphs, y)
    with pytest.raises(ValueError, match="inducing=50 graphs to choose from 30"):     # the kernel's own check
        LowRankGaussianProcessRegressor(LowRankGraphKernel(labeled(), inducing=50)).fit(graphs, y)
    gp = LowRankGaussianProcessRegressor(lr, optimizer=None).fit(graphs, y)
    with pytest.raises(ValueError, match="theta must have 5 values"):
        gp.log_marginal_likelihood(np.zeros(3))
    with pytest.raises(ValueError, match="Gradient can only be evaluated for theta!=None"):
        gp.log_marginal_likelihood(eval_gradient=True)


def test_no_n_by_n_matrices(monkeypatch, data):
    # Memory for the n×m blocks with gradients (30×6×4 float64 and iteration counts) but not
    # for one n×n×p gradient (30×30×4 float64): sklearn's way is refused, this one runs.
    from graphgram import _memory

    graphs, y = data
    gp = LowRankGaussianProcessRegressor(LowRankGraphKernel(labeled(), inducing=list(graphs[::5]), fitc=True),
                                         optimizer=None).fit(graphs, y)
    theta = np.concatenate([[0.1, -2.0], gp.kernel_.theta])
    expected = gp.log_marginal_likelihood(theta, eval_gradient=True)
    monkeypatch.setattr(_memory, "_available_memory", lambda: 15000)
    with pytest.raises(MemoryError):
        gp.kernel_(graphs, eval_gradient=True)
    value, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
    np.testing.assert_allclose(value, expected[0], rtol=1e-12)
    np.testing.assert_allclose(grad, expected[1], rtol=1e-10, atol=1e-10 * np.abs(grad).max())
