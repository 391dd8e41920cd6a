"""Multi-task and multi-fidelity models with a graph kernel (issue #52 item 1), the recipe
of docs/gaussian_processes.md run end to end on FreeSolv's measured (expt) and computed
(calc) hydration free energies: BoTorch's MultiTaskGP with the graph kernel times its task
IndexKernel, its graph hyperparameters started from a scikit-learn fit on the cheap task
and learnt by fit_gpytorch_mll, its posterior against the closed form K_graph ⊙ B written
out in NumPy; SingleTaskMultiFidelityGP with the graph kernel times the fidelity kernel,
driving a cost-aware multi-fidelity acquisition over (molecule, fidelity) candidates."""

import csv

import numpy as np
import pytest
import torch
from botorch.acquisition.cost_aware import InverseCostWeightedUtility
from botorch.acquisition.max_value_entropy_search import qMultiFidelityMaxValueEntropy
from botorch.acquisition.utils import project_to_target_fidelity
from botorch.fit import fit_gpytorch_mll
from botorch.models import MultiTaskGP, SingleTaskMultiFidelityGP
from botorch.models.cost import AffineFidelityCostModel
from botorch.optim import optimize_acqf_discrete
from gpytorch.mlls import ExactMarginalLogLikelihood
from sklearn.gaussian_process import GaussianProcessRegressor

from graphgram import molecular_gp_kernel, molecules
from graphgram.gaussian_process import FisherScoring
from graphgram.gpytorch import GPyTorchGraphKernel

from conftest import dataset_dir


@pytest.fixture(scope="module")
def freesolv():
    rows = list(csv.DictReader(open(dataset_dir("FreeSolv") / "SAMPL.csv")))[:48]
    pool = [molecules.from_smiles(r["smiles"]) for r in rows]
    return pool, np.array([float(r["expt"]) for r in rows]), np.array([float(r["calc"]) for r in rows])


def graph_kernel_from_cheap_task(pool, calc, n):
    """The recipe's first step: the graph hyperparameters of an exact GP on the cheap values."""
    gp = GaussianProcessRegressor(molecular_gp_kernel(verbose=False), normalize_y=True, optimizer=FisherScoring())
    gp.fit(pool[:n], calc[:n])
    return gp.kernel_.k1.k2


def test_multitask_gp_learns_the_graph_kernel_and_is_the_closed_form(freesolv):
    pool, expt, calc = freesolv
    graph = graph_kernel_from_cheap_task(pool, calc, 36)
    # 10 measured, 36 computed values; the last 12 molecules held out.
    X = torch.tensor([[i, 0] for i in range(10)] + [[i, 1] for i in range(36)], dtype=torch.float64)
    Y = torch.as_tensor(np.r_[expt[:10], calc[:36]])[:, None]
    gk = GPyTorchGraphKernel(graph, pool)
    gp = MultiTaskGP(X, Y, task_feature=1, covar_module=gk, output_tasks=[0], outcome_transform=None)
    theta0 = gk.theta.detach().clone()
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    gp.train()
    with torch.no_grad():
        before = float(mll(gp(X), gp.train_targets, X))
    fit_gpytorch_mll(mll)
    gp.train()
    with torch.no_grad():
        after = float(mll(gp(X), gp.train_targets, X))
    assert after > before
    assert float((gk.theta.detach() - theta0).abs().max()) > 1e-4      # the graph kernel was learnt too
    gp.eval()
    test = torch.arange(36, 48, dtype=torch.float64)[:, None]
    Xt = torch.cat([test, torch.zeros_like(test)], dim=1)                   # the measured task
    with torch.no_grad():
        mean = gp.posterior(test).mean[:, 0].numpy()
        prior = gp.forward(X)
        noise = np.diag(gp.likelihood(prior, X).covariance_matrix.numpy() - prior.covariance_matrix.numpy())
        m, mt = prior.mean.numpy(), gp.forward(Xt).mean.numpy()
        task_kernel = gp.covar_module.kernels[1]                             # BoTorch's task kernel
        B = task_kernel(torch.tensor([[0.0, 0.0], [0.0, 1.0]], dtype=torch.float64)).to_dense().numpy()
    # The closed form: K = K_graph[i, j] · B[t, t'] with the graph Gram from the scikit-learn kernel.
    Kg = gk.to_sklearn()(pool)
    idx, task = X[:, 0].long().numpy(), X[:, 1].long().numpy()
    K = Kg[np.ix_(idx, idx)] * B[np.ix_(task, task)]
    K[np.diag_indices_from(K)] += noise
    ks = Kg[np.ix_(range(36, 48), idx)] * B[0, task][None, :]
    ref = mt + ks @ np.linalg.solve(K, Y[:, 0].numpy() - m)
    np.testing.assert_allclose(mean, ref, rtol=1e-7, atol=1e-8)


def test_multifidelity_gp_drives_a_cost_aware_acquisition(freesolv):
    pool, expt, calc = freesolv
    graph = graph_kernel_from_cheap_task(pool, calc, 30)
    # fidelity 1 = measured, 0 = computed (BoTorch's downsampling kernel: 1 is the target).
    X = torch.tensor([[i, 1.0] for i in range(8)] + [[i, 0.0] for i in range(30)], dtype=torch.float64)
    Y = torch.as_tensor(np.r_[expt[:8], calc[:30]])[:, None]
    gk = GPyTorchGraphKernel(graph, pool, active_dims=[0])
    gp = SingleTaskMultiFidelityGP(X, Y, data_fidelities=[1], linear_truncated=False, covar_module=gk)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    cost = AffineFidelityCostModel(fidelity_weights={1: 9.0}, fixed_cost=1.0)     # a measurement costs 10×
    candidates = torch.tensor([[i, f] for i in range(30, 48) for f in (0.0, 1.0)], dtype=torch.float64)
    acq = qMultiFidelityMaxValueEntropy(gp, candidate_set=candidates[candidates[:, 1] == 1.0],
                                        cost_aware_utility=InverseCostWeightedUtility(cost),
                                        project=lambda x: project_to_target_fidelity(x, d=2, target_fidelities={1: 1.0}))
    picked, value = optimize_acqf_discrete(acq, q=1, choices=candidates)
    assert bool((candidates == picked[0]).all(dim=1).any())
    assert np.isfinite(float(value))
    with torch.no_grad():
        values = acq(candidates[:, None, :])
    assert torch.isfinite(values).all() and float(values.max()) == pytest.approx(float(value), rel=1e-9)
