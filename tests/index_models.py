"""Small BoTorch models over graph indices, shared by the tests of the batch rules.

The first 60 molecules of ESOL as a GraphLibrary with their measured
solubilities, and a SingleTaskGP on some of them with fixed, known
hyperparameters (no fit: the tests compare arithmetic, not optimizers).
"""

import csv

import numpy as np
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import ScaleKernel

from graphgram import GraphLibrary

from conftest import dataset_dir


def esol_library(n=60):
    """(GraphLibrary of ESOL's first n molecules, their measured log solubilities)."""
    rows = list(csv.DictReader(open(dataset_dir("ESOL") / "delaney-processed.csv")))[:n]
    lib = GraphLibrary.from_smiles([r["smiles"] for r in rows], verbose=False)
    return lib, np.array([float(r["measured log solubility in mols per litre"]) for r in rows])


def index_model(kernel, y, train, noise=0.05, scale=2.0):
    """A SingleTaskGP in eval mode over the pool indices ``train`` with targets y[train]:
    ScaleKernel(kernel) with this outputscale, this noise, a constant mean of −2."""
    X = torch.tensor(train, dtype=torch.float64)[:, None]
    Y = torch.tensor(y[train], dtype=torch.float64)[:, None]
    gp = SingleTaskGP(X, Y, covar_module=ScaleKernel(kernel), outcome_transform=None)
    gp.covar_module.outputscale = scale
    gp.likelihood.noise = noise
    gp.mean_module.constant.data.fill_(-2.0)
    return gp.eval()
