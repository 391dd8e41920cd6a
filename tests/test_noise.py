"""Known per-measurement noise (issue #52 item 2): the low-rank regressor's per-sample
``alpha`` against scikit-learn's GaussianProcessRegressor on the same model (which forms
the n×n matrices), a measurement with a huge known variance dropping out of the fit,
bad input; BoTorch's ``train_Yvar`` with a graph kernel against the closed-form posterior
of scikit-learn's regressor at the same hyperparameters."""

import numpy as np
import pytest
import torch  # the [test] extra installs torch, gpytorch and botorch: these tests never skip
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.kernels import ScaleKernel
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood
from gpytorch.mlls import ExactMarginalLogLikelihood
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel

from graphgram import molecular_kernel, molecules
from graphgram.gaussian_process import LowRankGaussianProcessRegressor, LowRankGraphKernel
from graphgram.gpytorch import GPyTorchGraphKernel

from test_lowrank_gpr import labeled  # the same labelled marginalized kernel


@pytest.fixture(scope="module")
def data(mutag):
    graphs = mutag[0][:30]
    y = np.sin(np.arange(30.0)) + 0.1 * np.arange(30.0) + 3.0
    alpha = 0.01 + 0.2 * np.cos(np.arange(30.0)) ** 2         # known variances, one per measurement
    return graphs, y, alpha


def pair(graphs, y, alpha, fitc, normalize_y, signal=1.3, noise=0.05):
    lr = LowRankGraphKernel(labeled(), inducing=list(graphs[::5]), fitc=fitc)
    ours = LowRankGaussianProcessRegressor(lr, alpha=alpha, signal=signal, noise=noise, normalize_y=normalize_y,
                                           optimizer=None)
    sk = GaussianProcessRegressor(ConstantKernel(signal) * lr + WhiteKernel(noise), alpha=alpha,
                                  normalize_y=normalize_y, optimizer=None)
    return ours.fit(graphs, y), sk.fit(graphs, y)


@pytest.mark.parametrize("normalize_y", [False, True])
@pytest.mark.parametrize("fitc", [False, True])
def test_per_sample_alpha_equals_sklearn(data, fitc, normalize_y):
    graphs, y, alpha = data
    ours, sk = pair(graphs, y, alpha, fitc, normalize_y)
    np.testing.assert_allclose(ours.log_marginal_likelihood_value_, sk.log_marginal_likelihood_value_, rtol=1e-10)
    base = np.concatenate([[np.log(1.3), np.log(0.05)], ours.kernel_.theta])
    for shift in ([0, 0, 0, 0, 0], [0.4, -1.0, 0.3, -0.6, 0.5]):
        theta = base + np.array(shift)
        value, grad = ours.log_marginal_likelihood(theta, eval_gradient=True)
        sk_theta = np.concatenate([[theta[0]], theta[2:], [theta[1]]])
        ref, ref_grad = sk.log_marginal_likelihood(sk_theta, eval_gradient=True)
        ref_grad = np.concatenate([[ref_grad[0], ref_grad[-1]], ref_grad[1:-1]])
        np.testing.assert_allclose(value, ref, rtol=1e-10)
        assert np.abs(grad - ref_grad).max() <= 1e-8 * np.abs(ref_grad).max(), (grad, ref_grad)
    new = graphs[1:12:2] + graphs[::7]
    mean, std = ours.predict(new, return_std=True)
    ref_mean, ref_std = sk.predict(new, return_std=True)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-9, atol=1e-9 * np.abs(ref_mean).max())
    np.testing.assert_allclose(std, ref_std, rtol=1e-8)


def test_one_alpha_for_all_equals_the_scalar(data):
    graphs, y, _ = data
    lr = LowRankGraphKernel(labeled(), inducing=list(graphs[::5]), fitc=True)
    a = LowRankGaussianProcessRegressor(lr, alpha=0.03, optimizer=None).fit(graphs, y)
    b = LowRankGaussianProcessRegressor(lr, alpha=[0.03] * len(y), optimizer=None).fit(graphs, y)
    np.testing.assert_allclose(b.log_marginal_likelihood_value_, a.log_marginal_likelihood_value_, rtol=1e-13)
    theta = np.concatenate([[0.2, -2.0], a.kernel_.theta + 0.3])
    for x, z in zip(a.log_marginal_likelihood(theta, True), b.log_marginal_likelihood(theta, True)):
        np.testing.assert_allclose(z, x, rtol=1e-12)
    np.testing.assert_allclose(b.predict(graphs[:7]), a.predict(graphs[:7]), rtol=1e-12)


def test_a_measurement_known_to_be_worthless_drops_out(data):
    # A variance of 1e12 on measurement k: the fit is the fit without it (same hyperparameters).
    graphs, y, alpha = data
    lr = LowRankGraphKernel(labeled(), inducing=list(graphs[::5]), fitc=True)
    k = 11
    big = alpha.copy()
    big[k] = 1e12
    keep = [i for i in range(len(y)) if i != k]
    with_k = LowRankGaussianProcessRegressor(lr, alpha=big, normalize_y=False, optimizer=None).fit(graphs, y)
    without = LowRankGaussianProcessRegressor(lr, alpha=alpha[keep], normalize_y=False, optimizer=None).fit(
        [graphs[i] for i in keep], y[keep])
    new = graphs[:15]
    np.testing.assert_allclose(with_k.predict(new), without.predict(new), rtol=1e-8)
    # …and a large but finite variance does matter: the prediction at k moves.
    plain = LowRankGaussianProcessRegressor(lr, alpha=alpha, normalize_y=False, optimizer=None).fit(graphs, y)
    assert abs(plain.predict([graphs[k]])[0] - with_k.predict([graphs[k]])[0]) > 1e-3


def test_fit_with_per_sample_alpha_improves_the_likelihood(data):
    graphs, y, alpha = data
    lr = LowRankGraphKernel(labeled(), inducing=6, fitc=True)
    start = LowRankGaussianProcessRegressor(lr, alpha=alpha, optimizer=None, random_state=0).fit(graphs, y)
    fitted = LowRankGaussianProcessRegressor(lr, alpha=alpha, random_state=0).fit(graphs, y)
    assert fitted.log_marginal_likelihood_value_ > start.log_marginal_likelihood_value_ + 1e-3


@pytest.mark.parametrize("alpha,match", [
    (np.ones(29), r"one value per training graph \(shape \(30,\)\), got shape \(29,\)"),
    (np.ones((30, 1)), r"got shape \(30, 1\)"),
    (np.r_[np.ones(29), -1.0], r"alpha\[29\] is -1"),
    (np.r_[np.nan, np.ones(29)], r"alpha\[0\] is nan"),
    (-1.0, "alpha must be a number >= 0"),
    ("much", "alpha must be a number >= 0 or one per training graph"),
])
def test_bad_alpha_is_named(data, alpha, match):
    graphs, y, _ = data
    lr = LowRankGraphKernel(labeled(), inducing=4)
    with pytest.raises(ValueError, match=match):
        LowRankGaussianProcessRegressor(lr, alpha=alpha, optimizer=None).fit(graphs, y)


# --- BoTorch: known noise through train_Yvar ----------------------------------------------
SMILES = ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl", "CCOC", "c1ccncc1", "OCC(O)CO", "CC(C)CC=O",
          "C1CCCCC1", "Oc1ccccc1"]


def test_botorch_train_yvar_is_the_closed_form_posterior():
    pool = [molecules.from_smiles(s) for s in SMILES]
    n = 8
    X = torch.arange(n, dtype=torch.float64)[:, None]
    y = np.array([0.3, -0.1, 0.8, 1.2, 0.0, 0.5, -0.4, 0.9])
    yvar = np.array([0.01, 0.2, 0.05, 0.01, 0.5, 0.02, 0.1, 0.03])
    gk = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    gp = SingleTaskGP(X, torch.as_tensor(y)[:, None], torch.as_tensor(yvar)[:, None],
                      covar_module=ScaleKernel(gk), outcome_transform=None)
    assert isinstance(gp.likelihood, FixedNoiseGaussianLikelihood)
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    fit_gpytorch_mll(mll)
    gp.eval()
    test = torch.arange(n, len(pool), dtype=torch.float64)[:, None]
    with torch.no_grad():
        post = gp.posterior(test)
        mean, var = post.mean.numpy()[:, 0], post.variance.numpy()[:, 0]
        c = float(gp.covar_module.outputscale)
        mu = float(gp.mean_module.constant)
    # The same model in scikit-learn: c·k with the fitted graph hyperparameters, alpha = the known variances.
    sk = GaussianProcessRegressor(ConstantKernel(c, "fixed") * gk.to_sklearn(), alpha=yvar, optimizer=None)
    sk.fit(pool[:n], y - mu)
    ref_mean, ref_std = sk.predict(pool[n:], return_std=True)
    np.testing.assert_allclose(mean, ref_mean + mu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var, ref_std ** 2, rtol=1e-7, atol=1e-12)
    # The known variances are the likelihood's, not learnt.
    np.testing.assert_array_equal(gp.likelihood.noise.detach().numpy(), yvar)
