"""Molecules with conditions (issue #52 item 3), the recipe of docs/gaussian_processes.md
run end to end: a graph kernel on the molecule column times a Matern kernel on continuous
conditions and a categorical kernel on a discrete one, in a stock BoTorch SingleTaskGP with
an input transform that rescales the conditions only; fitted, predicting better than the
mean on held-out (molecule, condition) rows, and driving a discrete and a mixed
acquisition; an input transform over the index column is refused with the column named."""

import numpy as np
import pytest
import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.kernels.categorical import CategoricalKernel
from botorch.models.transforms.input import Normalize
from botorch.optim import optimize_acqf_discrete, optimize_acqf_mixed
from gpytorch.kernels import MaternKernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood
from rdkit import Chem
from rdkit.Chem import Crippen

from graphgram import molecular_kernel, molecules
from graphgram.gpytorch import GPyTorchGraphKernel

SMILES = ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl", "CCOC", "c1ccncc1", "OCC(O)CO", "CC(C)CC=O",
          "C1CCCCC1", "Oc1ccccc1", "CCCCO", "Cc1ccccc1", "ClCCl", "CC(=O)OC"]
SOLVENT_SHIFT = [0.0, 0.6, -0.4]          # a categorical condition with three levels


def truth(logp, T, c, s):
    """A property of molecule and conditions: temperature scales the molecule's effect."""
    return logp * (T / 300.0) + 0.8 * c + np.take(SOLVENT_SHIFT, s.astype(int))


def model(pool, X, Y, transform=None):
    graph = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool, active_dims=[0])
    covar = ScaleKernel(graph * MaternKernel(nu=2.5, ard_num_dims=2, active_dims=[1, 2])
                        * CategoricalKernel(active_dims=[3]))
    if transform is None:
        transform = Normalize(d=4, indices=[1, 2], bounds=torch.tensor([[0.0, 270.0, 0.0, 0.0],
                                                                        [0.0, 370.0, 1.0, 0.0]],
                                                                       dtype=torch.float64))
    return SingleTaskGP(X, Y, covar_module=covar, input_transform=transform)


@pytest.fixture(scope="module")
def setting():
    pool = [molecules.from_smiles(s) for s in SMILES]
    logp = np.array([Crippen.MolLogP(Chem.MolFromSmiles(s)) for s in SMILES])
    rng = np.random.default_rng(7)
    n = 60
    rows = np.column_stack([rng.integers(len(SMILES), size=n), rng.uniform(280, 360, n), rng.uniform(0.1, 1.0, n),
                            rng.integers(3, size=n)]).astype(np.float64)
    y = truth(logp[rows[:, 0].astype(int)], rows[:, 1], rows[:, 2], rows[:, 3])
    return pool, logp, torch.as_tensor(rows), torch.as_tensor(y)[:, None]


def test_molecule_times_conditions_fits_and_predicts(setting):
    pool, logp, X, Y = setting
    train, test = slice(0, 45), slice(45, 60)
    gp = model(pool, X[train], Y[train])
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    fit_gpytorch_mll(mll)
    gp.eval()
    with torch.no_grad():
        pred = gp.posterior(X[test]).mean[:, 0].numpy()
    y = Y[test, 0].numpy()
    rmse = float(np.sqrt(np.mean((pred - y) ** 2)))
    baseline = float(np.sqrt(np.mean((y - Y[train, 0].numpy().mean()) ** 2)))
    assert rmse < 0.5 * baseline, (rmse, baseline)
    # The conditions' kernel learnt a finite length scale per condition column.
    lengths = gp.covar_module.base_kernel.kernels[1].lengthscale.detach().numpy().ravel()
    assert lengths.shape == (2,) and np.all(np.isfinite(lengths))


def test_acquisition_over_molecule_condition_candidates(setting):
    pool, logp, X, Y = setting
    gp = model(pool, X[:30], Y[:30])
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    acq = qLogNoisyExpectedImprovement(gp, X[:30])
    # Discrete: every molecule at a grid of conditions.
    grid = torch.tensor([[m, T, c, s] for m in range(len(SMILES)) for T in (290.0, 330.0) for c in (0.2, 0.9)
                         for s in range(3)], dtype=torch.float64)
    picked, _ = optimize_acqf_discrete(acq, q=2, choices=grid)
    assert picked.shape == (2, 4)
    for row in picked:
        assert bool((grid == row).all(dim=1).any())
    # Mixed: molecule and solvent fixed per option, temperature and concentration optimized.
    bounds = torch.tensor([[0.0, 280.0, 0.1, 0.0], [len(SMILES) - 1.0, 360.0, 1.0, 2.0]], dtype=torch.float64)
    options = [{0: float(m), 3: float(s)} for m in (3, 11, 13) for s in range(3)]
    best, _ = optimize_acqf_mixed(acq, bounds=bounds, q=1, num_restarts=2, raw_samples=32,
                                  fixed_features_list=options)
    best = best[0]
    assert {0: float(best[0]), 3: float(best[3])} in options
    assert 280.0 - 1e-9 <= float(best[1]) <= 360.0 + 1e-9 and 0.1 - 1e-9 <= float(best[2]) <= 1.0 + 1e-9


def test_an_input_transform_over_the_index_column_is_refused(setting):
    pool, logp, X, Y = setting
    gp = model(pool, X[:20], Y[:20], transform=Normalize(d=4))      # rescales column 0 too
    with pytest.raises(ValueError, match=r"not a graph index.*Normalize must leave the index column out"):
        gp.posterior(X[20:25])
