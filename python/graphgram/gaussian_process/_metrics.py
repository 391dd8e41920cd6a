"""Checks of predictive uncertainty: log predictive density, standardized log loss, calibration.

Plain functions of the true values and a Gaussian prediction (mean and standard
deviation per point), so that graphgram's regressors, scikit-learn's and a
BoTorch posterior are scored alike.
"""

import numpy as np
import scipy.stats

__all__ = ["calibration_curve", "calibration_error", "mean_standardized_log_loss",
           "negative_log_predictive_density"]


def _check(y_true, mean, std):
    y, mu, sd = (np.asarray(a, dtype=np.float64).reshape(-1) if np.ndim(a) else np.asarray(a, dtype=np.float64)
                 for a in (y_true, mean, std))
    y, mu, sd = np.broadcast_arrays(y, mu, sd)
    if y.ndim != 1 or not len(y):
        raise ValueError("y_true, mean and std must be one value per point (non-empty), got %d values" % y.size)
    for name, a in (("y_true", y), ("mean", mu), ("std", sd)):
        if not np.all(np.isfinite(a)):
            raise ValueError("%s has non-finite values, the first at position %d"
                             % (name, int(np.flatnonzero(~np.isfinite(a))[0])))
    if np.any(sd <= 0):
        raise ValueError("std must be positive (include the noise: a predictive standard deviation), got %g at "
                         "position %d" % (sd[sd <= 0][0], int(np.flatnonzero(sd <= 0)[0])))
    return y, mu, sd


def negative_log_predictive_density(y_true, mean, std):
    """The mean of −log N(y; μ, σ²) over the points: lower is better.

    Parameters
    ----------
    y_true, mean, std : array-like of shape (n,)
        True values and the predictive mean and standard deviation (of a new
        measurement: noise included, as ``predict(X, return_std=True)`` of
        graphgram's and scikit-learn's regressors with a ``WhiteKernel``; for
        a BoTorch model, ``model.posterior(X, observation_noise=True)``).

    Returns
    -------
    float
    """
    y, mu, sd = _check(y_true, mean, std)
    return float(-np.mean(scipy.stats.norm.logpdf(y, loc=mu, scale=sd)))


def mean_standardized_log_loss(y_true, mean, std, y_train):
    """The negative log predictive density minus that of a Gaussian fitted to the training
    targets (their mean and variance), averaged over the points (Rasmussen and Williams
    2006, eq. 2.34): 0 for the trivial model, negative when the model beats it.

    Parameters
    ----------
    y_true, mean, std : array-like of shape (n,)
        As :func:`negative_log_predictive_density`.
    y_train : array-like of shape (n_train,)
        The training targets (at least two distinct values).

    Returns
    -------
    float
    """
    y, mu, sd = _check(y_true, mean, std)
    t = np.asarray(y_train, dtype=np.float64).reshape(-1)
    if len(t) < 2 or not np.all(np.isfinite(t)) or not np.std(t) > 0:
        raise ValueError("y_train must hold at least two distinct finite values")
    model = scipy.stats.norm.logpdf(y, loc=mu, scale=sd)
    trivial = scipy.stats.norm.logpdf(y, loc=np.mean(t), scale=np.std(t))
    return float(np.mean(trivial - model))


def calibration_curve(y_true, mean, std, levels=None):
    """How often the true values fall in the central predictive intervals, against how
    often they should.

    Parameters
    ----------
    y_true, mean, std : array-like of shape (n,)
        As :func:`negative_log_predictive_density`.
    levels : array-like of float in (0, 1), default=None
        The intervals' probabilities; None: 0.01, 0.02, …, 0.99.

    Returns
    -------
    expected : ndarray
        The levels p.
    observed : ndarray
        The fraction of points with |y − μ| ≤ z σ, z the standard normal's
        (1 + p)/2 quantile: equal to ``expected`` for calibrated predictions,
        below it for overconfident ones.
    """
    y, mu, sd = _check(y_true, mean, std)
    p = np.arange(1, 100) / 100.0 if levels is None else np.asarray(levels, dtype=np.float64).reshape(-1)
    if not len(p) or np.any(~(p > 0) | ~(p < 1)):
        raise ValueError("levels must be probabilities strictly between 0 and 1")
    z = np.abs(y - mu) / sd
    half = scipy.stats.norm.ppf(0.5 + p / 2)
    return p, (z[None, :] <= half[:, None]).mean(axis=1)


def calibration_error(y_true, mean, std, levels=None):
    """The mean absolute difference between the observed and expected coverage of
    :func:`calibration_curve` (the area between the curve and the diagonal, for
    evenly spaced levels): 0 for calibrated predictions, at most 0.5.

    Parameters
    ----------
    y_true, mean, std : array-like of shape (n,)
    levels : array-like of float in (0, 1), default=None

    Returns
    -------
    float
    """
    p, observed = calibration_curve(y_true, mean, std, levels)
    return float(np.mean(np.abs(observed - p)))
