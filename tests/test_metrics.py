"""Checks of predictive uncertainty (issue #52 item 5): against closed forms, direct
counts, predictions drawn from their own distribution, and a fitted GP."""

import numpy as np
import pytest
import scipy.stats
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel

from graphgram.gaussian_process import (calibration_curve, calibration_error, mean_standardized_log_loss,
                                        negative_log_predictive_density)


def test_log_densities_closed_forms():
    y, mu, sd = np.array([1.0, 2.0, -1.0]), np.array([1.0, 1.5, 0.0]), np.array([0.5, 2.0, 1.0])
    want = np.mean(0.5 * np.log(2 * np.pi * sd ** 2) + 0.5 * ((y - mu) / sd) ** 2)
    assert np.isclose(negative_log_predictive_density(y, mu, sd), want, rtol=1e-14)
    t = np.array([0.0, 2.0, 4.0])                                   # mean 2, variance 8/3
    trivial = np.mean(0.5 * np.log(2 * np.pi * 8 / 3) + 0.5 * (y - 2.0) ** 2 / (8 / 3))
    assert np.isclose(mean_standardized_log_loss(y, mu, sd, t), want - trivial, rtol=1e-13)
    # The trivial model itself scores 0.
    assert mean_standardized_log_loss(y, np.mean(t), np.std(t), t) == pytest.approx(0.0, abs=1e-15)


def test_calibration_counts_and_extremes():
    y, mu, sd = np.array([0.0, 1.0, 3.0, -0.5]), np.zeros(4), np.ones(4)
    p, observed = calibration_curve(y, mu, sd, levels=[0.5, 0.9])
    # Central 50 %: |z| <= 0.674 (0 and −0.5); 90 %: |z| <= 1.645 (0, 1, −0.5).
    np.testing.assert_array_equal(observed, [0.5, 0.75])
    assert calibration_error(y, mu, sd, levels=[0.5, 0.9]) == pytest.approx((0.0 + 0.15) / 2)
    # Far too confident: nothing inside any interval; far too cautious: everything.
    assert calibration_error(np.ones(50), 0.0, 1e-9) == pytest.approx(0.5)
    assert calibration_error(np.ones(50), 0.0, 1e9) == pytest.approx(0.5)


def test_draws_from_the_prediction_are_calibrated():
    rng = np.random.default_rng(7)
    mu, sd = rng.normal(size=20000), rng.uniform(0.1, 3.0, size=20000)
    y = rng.normal(mu, sd)
    assert calibration_error(y, mu, sd) < 0.01
    assert calibration_error(y, mu, 0.5 * sd) > 0.15                # overconfident by 2×
    assert negative_log_predictive_density(y, mu, sd) < negative_log_predictive_density(y, mu, 0.5 * sd)


def test_a_fitted_gp_scores_better_than_the_trivial_model():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 6, size=(80, 1))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=80)
    gp = GaussianProcessRegressor(RBF() + WhiteKernel(0.01), normalize_y=True).fit(X[:60], y[:60])
    mean, std = gp.predict(X[60:], return_std=True)
    assert mean_standardized_log_loss(y[60:], mean, std, y[:60]) < -1.0
    assert np.isclose(negative_log_predictive_density(y[60:], mean, std),
                      -np.mean(scipy.stats.norm.logpdf(y[60:], mean, std)))


def test_bad_input():
    with pytest.raises(ValueError, match="std must be positive"):
        negative_log_predictive_density([1.0, 2.0], [1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="mean has non-finite values, the first at position 1"):
        calibration_error([1.0, 2.0], [1.0, np.nan], 1.0)
    with pytest.raises(ValueError, match="at least two distinct"):
        mean_standardized_log_loss([1.0], [1.0], [1.0], [3.0, 3.0])
    with pytest.raises(ValueError, match="levels must be probabilities"):
        calibration_curve([1.0], [1.0], [1.0], levels=[0.0, 0.5])
    with pytest.raises(ValueError, match="one value per point"):
        negative_log_predictive_density([], [], [])


def test_graphgram_regressor_and_botorch_posterior(mutag):
    """The checks take graphgram's low-rank regressor's predictions as they come, and a
    BoTorch posterior's mean and standard deviation with the observation noise."""
    import torch
    from botorch.models import SingleTaskGP

    from graphgram.gaussian_process import FisherScoring, LowRankGaussianProcessRegressor, LowRankGraphKernel
    from graphgram import MarginalizedGraphKernel
    from graphgram.microkernels import KroneckerDelta, TensorProduct

    graphs = mutag[0][:60]
    y = np.array([g.n_nodes for g in graphs], float) + 0.3 * np.sin(np.arange(60.0))
    label = TensorProduct(label=KroneckerDelta(0.5))
    k = LowRankGraphKernel(MarginalizedGraphKernel(label, label, q=0.05, verbose=False), inducing=12, fitc=True)
    gp = LowRankGaussianProcessRegressor(k, optimizer=FisherScoring(verbose=False)).fit(graphs[:45], y[:45])
    mean, std = gp.predict(graphs[45:], return_std=True)
    yt, t = y[45:], y[:45]
    direct = np.mean(scipy.stats.norm.logpdf(yt, t.mean(), t.std()) - scipy.stats.norm.logpdf(yt, mean, std))
    assert np.isclose(mean_standardized_log_loss(yt, mean, std, t), direct, rtol=1e-12)
    p, observed = calibration_curve(yt, mean, std)
    assert np.all(np.diff(observed) >= 0) and 0 <= calibration_error(yt, mean, std) <= 0.5

    X = torch.linspace(0, 6, 40, dtype=torch.float64)[:, None]
    Y = torch.sin(X) + 0.2 * torch.from_numpy(np.random.default_rng(1).normal(size=(40, 1)))
    model = SingleTaskGP(X[::2], Y[::2]).eval()
    model.likelihood.noise = 0.04
    with torch.no_grad():
        noisy = model.posterior(X[1::2], observation_noise=True)
        mean, std = noisy.mean.detach().numpy().ravel(), noisy.variance.sqrt().detach().numpy().ravel()
        latent_std = model.posterior(X[1::2]).variance.sqrt().detach().numpy().ravel()
    yt = Y[1::2, 0].numpy()
    assert np.all(std > latent_std)                                   # the noise is in
    assert np.isclose(negative_log_predictive_density(yt, mean, std),
                      -np.mean(scipy.stats.norm.logpdf(yt, mean, std)), rtol=1e-12)
