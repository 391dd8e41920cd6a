"""Thompson sampling over a library (issue #51 item 3): pathwise posterior samples
from finite features. With the prior draws at zero a path is the posterior mean,
exactly; many paths have the posterior's covariance; picks are distinct
candidates, the same for a seed."""

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP

from graphgram import WeisfeilerLehmanKernel, molecular_kernel
from graphgram.gpytorch import GPyTorchGraphKernel, thompson_sampling
from graphgram.gpytorch._thompson import _features, _pick

from index_models import esol_library, index_model


@pytest.fixture(scope="module")
def esol():
    return esol_library()



def paths(gp, cand, prior, seeds=(0,)):
    """Pathwise samples over cand (one row per seed), whole, by thompson_sampling's
    arithmetic (_pick): each candidate alone, from the same seed, so the same prior draws."""
    base, scale = gp.covar_module.base_kernel, float(gp.covar_module.outputscale.detach())
    train = base._indices(gp.train_inputs[0], "train")
    phi = _features(base, np.concatenate([train, cand]), 8, np.random.RandomState(0))
    with torch.no_grad():
        mx = gp.mean_module(gp.train_inputs[0]).numpy()
        mc = gp.mean_module(torch.tensor(cand, dtype=torch.float64)[:, None]).numpy()
    y, noise = gp.train_targets.numpy(), np.full(len(train), float(gp.likelihood.noise.detach()))
    n = len(train)
    rows = [phi[np.r_[:n, n + c]] for c in range(len(cand))]
    return np.array([[float(_pick(rows[c], n, scale, y, noise, mx, mc[[c]], cand[[c]], 1, np.random.RandomState(s), 1,
                                  prior)[1][0]) for c in range(len(cand))] for s in seeds])


@pytest.mark.parametrize("make", [
    lambda lib: GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element", normalize=True, verbose=False), lib),
    lambda lib: GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element", verbose=False), lib),
    lambda lib: GPyTorchGraphKernel(molecular_kernel(verbose=False), lib, inducing=10),
], ids=["wl_normalized", "wl", "molecular_low_rank"])
def test_path_without_prior_draws_is_the_posterior_mean(esol, make):
    lib, y = esol
    train = np.arange(0, 60, 4)
    gp = index_model(make(lib), y, train)
    cand = np.setdiff1d(np.arange(60), train)
    with torch.no_grad():
        want = gp.posterior(torch.tensor(cand, dtype=torch.float64)[:, None]).mean.numpy().ravel()
    got = paths(gp, cand, prior=False)[0]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_paths_have_the_posterior_covariance(esol):
    """1,500 exact WL paths over 8 candidates: mean and covariance within Monte Carlo error."""
    lib, y = esol
    train = np.arange(0, 60, 5)
    gp = index_model(GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element", normalize=True, verbose=False), lib),
                     y, train)
    cand = np.arange(1, 60, 7)
    with torch.no_grad():
        post = gp.posterior(torch.tensor(cand, dtype=torch.float64)[:, None])
        mean, cov = post.mean.numpy().ravel(), post.covariance_matrix.numpy()
    F = paths(gp, cand, prior=True, seeds=range(1500)).T
    sd = np.sqrt(np.diag(cov))
    # Monte Carlo errors: mean ~ sd/√1500 = 0.026 sd, covariance ~ √(2/1500) var = 0.037 var.
    assert np.max(np.abs(F.mean(axis=1) - mean) / sd) < 0.15
    assert np.max(np.abs(np.cov(F) - cov)) < 0.2 * np.max(np.diag(cov))


def test_picks(esol):
    lib, y = esol
    train = np.arange(0, 60, 4)
    for kernel in (GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element", normalize=True, verbose=False), lib),
                   GPyTorchGraphKernel(molecular_kernel(verbose=False), lib)):   # Nyström features
        gp = index_model(kernel, y, train)
        cand = np.setdiff1d(np.arange(60), train)
        chosen, values = thompson_sampling(gp, cand, q=20, random_state=3, n_inducing=12, chunk=6)
        picks = chosen[:, 0].numpy().astype(int)
        assert chosen.shape == (20, 1) and values.shape == (20,)
        assert len(set(picks)) == 20 and set(picks) <= set(cand)
        again, _ = thompson_sampling(gp, torch.tensor(cand)[:, None], q=20, random_state=3, n_inducing=12, chunk=6)
        np.testing.assert_array_equal(again.numpy(), chosen.numpy())


def test_bad_models(esol):
    lib, y = esol
    from gpytorch.kernels import RBFKernel
    gp = SingleTaskGP(torch.zeros(3, 1, dtype=torch.float64), torch.zeros(3, 1, dtype=torch.float64),
                      covar_module=RBFKernel())
    with pytest.raises(TypeError, match="covar_module is a GPyTorchGraphKernel"):
        thompson_sampling(gp, [1, 2], q=1)
    gp = index_model(GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element", verbose=False), lib), y,
                     np.arange(5))
    with pytest.raises(ValueError, match="q must be an integer from 1 to the 2 candidates"):
        thompson_sampling(gp, [7, 8], q=3)
    with pytest.raises(IndexError, match="out of range"):
        thompson_sampling(gp, [7, 80], q=1)
