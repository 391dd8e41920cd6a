"""What the batch rules over the pool's candidates read of a fitted GP: one reader and its checks.

:func:`thompson_sampling` and :func:`kriging_believer` take a fitted BoTorch or
GPyTorch model over graph indices and the candidates' indices; both read the
same pieces through :func:`read_model`.
"""

import dataclasses

import numpy as np
import torch
from gpytorch.kernels import ScaleKernel

from ._kernel import GPyTorchGraphKernel

__all__ = ["ModelParts", "read_model"]


@dataclasses.dataclass(frozen=True, eq=False)
class ModelParts:
    """A fitted model's pieces, as float64 NumPy arrays.

    Parameters
    ----------
    kernel : GPyTorchGraphKernel
        The model's graph kernel (inside its ``ScaleKernel``, if any).
    scale : float
        The ``ScaleKernel``'s outputscale (1 without one).
    train, candidates : ndarray of int
        The pool indices of the training inputs and of the candidates.
    y : ndarray of shape (n,)
        The training targets (in the model's outcome space).
    noise : ndarray of shape (n,)
        The likelihood's noise variance at each training input.
    mean_train, mean_candidates : ndarray
        The prior mean at the training inputs and at the candidates.
    """

    kernel: GPyTorchGraphKernel
    scale: float
    train: np.ndarray
    candidates: np.ndarray
    y: np.ndarray
    noise: np.ndarray
    mean_train: np.ndarray
    mean_candidates: np.ndarray

    @property
    def theta(self):
        """The graph kernel's log hyperparameters, float64."""
        return self.kernel.theta.detach().cpu().numpy().astype(np.float64)


def _numpy(t):
    return t.detach().cpu().numpy().astype(np.float64).reshape(-1)


def read_model(model, candidates, who):
    """Return the :class:`ModelParts` of ``model`` and ``candidates`` for the function named ``who``.

    The model's ``covar_module`` must be a :class:`GPyTorchGraphKernel` or a
    ``ScaleKernel`` of one, over one input column of pool indices, without
    batch dimensions or an input transform (which would rescale the indices),
    with a Gaussian likelihood (fixed noise per point included).
    """
    covar = model.covar_module
    scale = 1.0
    if isinstance(covar, ScaleKernel):
        scale, covar = float(covar.outputscale.detach().reshape(-1)[0]), covar.base_kernel
    if not isinstance(covar, GPyTorchGraphKernel):
        raise TypeError("%s needs a model whose covar_module is a GPyTorchGraphKernel or a ScaleKernel of one, "
                        "got %s" % (who, type(covar).__name__))
    if getattr(model, "input_transform", None) is not None:
        raise ValueError("the model has an input transform: it would rescale the column of graph indices; "
                         "fit it without one")
    train_x = model.train_inputs[0]
    if train_x.dim() != 2:
        raise ValueError("the model's training inputs have shape %s: %s takes models without batch dimensions, "
                         "inputs (n, 1)" % (tuple(train_x.shape), who))
    train = covar._indices(train_x, "the model's training inputs")
    cand_x = torch.as_tensor(np.asarray(candidates) if not torch.is_tensor(candidates) else candidates)
    if cand_x.dim() == 1:
        cand_x = cand_x[:, None]
    cand = covar._indices(cand_x.to(torch.float64), "candidates")
    if cand.ndim != 1 or not len(cand):
        raise ValueError("candidates must be a non-empty list of pool indices (shape (N,) or (N, 1)), got shape %s"
                         % (tuple(cand_x.shape),))
    with torch.no_grad():
        y = _numpy(model.train_targets)
        noise = np.broadcast_to(_numpy(model.likelihood.noise), y.shape).copy()
        mean_x = _numpy(model.mean_module(train_x))
        mean_c = _numpy(model.mean_module(cand_x.to(train_x)))
    return ModelParts(covar, scale, train, cand, y, noise, mean_x, mean_c)
