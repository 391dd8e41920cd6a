"""Batches from a library by the Kriging believer (issue #51 item 2): the first pick is
BoTorch's analytic acquisition on the model's posterior, and each next one what the
posterior covariance, conditioned on the picks so far by dense linear algebra, says."""

import numpy as np
import pytest
import scipy.stats
import torch
from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound

from graphgram import WeisfeilerLehmanKernel, molecular_kernel
from graphgram.gpytorch import GPyTorchGraphKernel, kriging_believer
from graphgram.gpytorch import _kernel as kernel_module
from graphgram.gpytorch._batch import log_expected_improvement

from index_models import esol_library, index_model


@pytest.fixture(scope="module")
def esol():
    return esol_library()



def brute_force(gp, cand, q, acquisition, beta=2.0):
    """The Kriging believer from the model's joint posterior over the candidates (dense,
    GPyTorch's arithmetic), each pick conditioning the covariance on a noisy observation."""
    with torch.no_grad():
        post = gp.posterior(torch.tensor(cand, dtype=torch.float64)[:, None])
        mean, cov = post.mean.numpy().ravel(), post.covariance_matrix.numpy().copy()
    noise, best = float(gp.likelihood.noise.detach()), float(gp.train_targets.max())
    taken, picks, values = np.zeros(len(cand), dtype=bool), [], []
    for _ in range(q):
        sd = np.sqrt(np.maximum(np.diag(cov), 0))
        if acquisition == "ucb":
            score = mean + np.sqrt(beta) * sd
        else:
            z = (mean - best) / sd
            score = np.log(sd * (z * scipy.stats.norm.cdf(z) + scipy.stats.norm.pdf(z)))
        score[taken] = -np.inf
        k = int(np.argmax(score))
        picks.append(cand[k])
        values.append(score[k])
        taken[k] = True
        cov = cov - np.outer(cov[:, k], cov[k, :]) / (cov[k, k] + noise)
    return np.array(picks), np.array(values)


KERNELS = {
    "wl_normalized": lambda lib: GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element", normalize=True,
                                                                            verbose=False), lib),
    "molecular": lambda lib: GPyTorchGraphKernel(molecular_kernel(verbose=False), lib),
    "molecular_low_rank": lambda lib: GPyTorchGraphKernel(molecular_kernel(verbose=False), lib, inducing=10),
}


@pytest.mark.parametrize("acquisition", ["log_ei", "ucb"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_batch_is_the_sequentially_conditioned_posterior(esol, name, acquisition):
    lib, y = esol
    train = np.arange(0, 60, 4)
    gp = index_model(KERNELS[name](lib), y, train)
    cand = np.setdiff1d(np.arange(60), train)
    want, want_values = brute_force(gp, cand, 8, acquisition)
    got, values = kriging_believer(gp, cand, q=8, acquisition=acquisition)
    np.testing.assert_array_equal(got.numpy().ravel(), want)
    np.testing.assert_allclose(values.numpy(), want_values, rtol=1e-6, atol=1e-9)


def test_batch_through_kept_columns(esol, monkeypatch):
    """A pool above the dense cache's size: the training inputs' columns come from the
    kept columns (computed once, read again by the next batch); the picks need blocks
    against the few candidates whose scores lead, never a column over the pool."""
    monkeypatch.setattr(kernel_module, "_DENSE_CACHE_MAX", 16)
    lib, y = esol
    train = np.arange(0, 60, 4)
    gp = index_model(KERNELS["molecular"](lib), y, train)
    cand = np.setdiff1d(np.arange(60), train)
    want, _ = brute_force(gp, cand, 6, "log_ei")
    got, _ = kriging_believer(gp, cand, q=6)
    np.testing.assert_array_equal(got.numpy().ravel(), want)
    kept = gp.covar_module.base_kernel._cache.columns
    assert set(kept) == set(train)
    again, _ = kriging_believer(gp, cand, q=6)
    np.testing.assert_array_equal(again.numpy(), got.numpy())


def test_first_pick_is_botorchs_analytic_acquisition(esol):
    lib, y = esol
    train = np.arange(0, 60, 3)
    gp = index_model(KERNELS["wl_normalized"](lib), y, train)
    cand = np.setdiff1d(np.arange(60), train)
    X = torch.tensor(cand, dtype=torch.float64)[:, None, None]
    with torch.no_grad():
        for acq, kw in ((LogExpectedImprovement(gp, best_f=float(gp.train_targets.max())), {}),
                        (UpperConfidenceBound(gp, beta=3.0), dict(acquisition="ucb", beta=3.0))):
            want = acq(X).numpy()
            got, value = kriging_believer(gp, cand, q=1, **kw)
            assert int(got[0, 0]) == cand[int(np.argmax(want))]
            np.testing.assert_allclose(float(value[0]), want.max(), rtol=1e-6)


def test_log_expected_improvement_tail_and_limits():
    z = np.linspace(-24.9, 5, 400)
    want = np.log(z * scipy.stats.norm.cdf(z) + scipy.stats.norm.pdf(z))
    np.testing.assert_allclose(log_expected_improvement(z, 1.0, 0.0), want, rtol=1e-8)
    # Both sides of the switch to the series agree, and the tail falls as log φ(z) − 2 log|z|.
    edge = log_expected_improvement(np.array([-25.0 + 1e-9, -25.0 - 1e-9]), 1.0, 0.0)
    assert abs(edge[0] - edge[1]) < 1e-6 * abs(edge[0])
    far = log_expected_improvement(np.array([-1e3]), 1.0, 0.0)[0]
    assert np.isclose(far, -0.5e6 - 0.5 * np.log(2 * np.pi) - 2 * np.log(1e3), rtol=1e-9)
    # Scaling: EI(μ, σ; f*) = σ EI((μ − f*)/σ, 1; 0); no spread: log(μ − f*) or −inf.
    np.testing.assert_allclose(log_expected_improvement(3.0, 2.0, 1.0), np.log(2.0) + log_expected_improvement(1.0, 1.0, 0.0))
    np.testing.assert_array_equal(log_expected_improvement(np.array([2.0, 0.5]), 0.0, 1.0), [0.0, -np.inf])


def test_bad_arguments(esol):
    lib, y = esol
    train = np.arange(0, 60, 4)
    gp = index_model(KERNELS["wl_normalized"](lib), y, train)
    with pytest.raises(ValueError, match="only 45 distinct candidates"):
        kriging_believer(gp, np.arange(60), q=46)
    with pytest.raises(ValueError, match="acquisition"):
        kriging_believer(gp, np.arange(60), acquisition="ei")
    with pytest.raises(IndexError, match="candidates"):
        kriging_believer(gp, [0, 60])
    with pytest.raises(ValueError, match="q must be"):
        kriging_believer(gp, np.arange(60), q=0)
