"""Ready-made GPyTorch covariances for Bayesian optimisation over molecules."""

import numpy as np
import torch
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import ScaleKernel
from gpytorch.priors import LogNormalPrior, NormalPrior

from ..gaussian_process._lbfgs import positive
from ..kernels.presets import molecular_gp_kernel
from ._kernel import GPyTorchGraphKernel

__all__ = ["molecular_bo_kernel"]


def molecular_bo_kernel(graphs, theta_spread=0.5, signal_spread=1.5, **kwargs):
    """The covariance of a BoTorch model of molecules, with priors for BO's few measurements.

    Returns ``ScaleKernel(GPyTorchGraphKernel(k, graphs, theta_prior=...),
    outputscale_prior=...)`` where k is the marginalized graph kernel of
    :func:`~graphgram.molecular_gp_kernel` (the preset :func:`~graphgram.molecular_kernel`
    at the hyperparameters exact GPs of molecules end up at: q = 0.5, every
    h = 0.9, a signal variance of 30 in units of the targets' variance). Its
    priors are centred there: a normal prior of standard deviation
    ``theta_spread`` on each log hyperparameter (``theta``) and a log-normal
    prior of scale ``signal_spread`` on the output scale. A BO loop starts
    from ten or so measurements, too few to carry the preset's eleven graph
    hyperparameters by maximum likelihood alone: without priors the first
    fits move them to their bounds. With them the hyperparameters stay near
    where fits on hundreds of molecules end until the measurements say
    otherwise (``benchmarks/log/bo_issue52.md``).

    Use it as ``covar_module`` of a stock ``SingleTaskGP`` (whose default
    likelihood has BoTorch's own noise prior), with the pool's indices as
    inputs, as :class:`GPyTorchGraphKernel`.

    Parameters
    ----------
    graphs : list of Graph or GraphLibrary
        The pool (see :class:`GPyTorchGraphKernel`).
    theta_spread : float, default=0.5
        Standard deviation of the normal prior on each log hyperparameter.
    signal_spread : float, default=1.5
        Scale of the log-normal prior on the output scale (the signal variance).
    **kwargs
        Passed on to :func:`~graphgram.molecular_gp_kernel` (``q``, ``h``,
        ``signal``: the priors' centres; ``features``, ``n_jobs``, ``verbose``, ...).

    Returns
    -------
    gpytorch.kernels.ScaleKernel
        Its ``base_kernel`` is the :class:`GPyTorchGraphKernel`.
    """
    for name, value in (("theta_spread", theta_spread), ("signal_spread", signal_spread)):
        if not (positive(value) and np.isfinite(value)):
            raise ValueError("%s must be a positive number, got %r" % (name, value))
    preset = molecular_gp_kernel(**kwargs)       # ConstantKernel(signal) * mgk + WhiteKernel(noise)
    signal, graph_kernel = preset.k1.k1.constant_value, preset.k1.k2
    theta = torch.as_tensor(np.asarray(graph_kernel.theta, dtype=np.float64))
    prior = NormalPrior(theta, torch.full_like(theta, theta_spread))
    base = GPyTorchGraphKernel(graph_kernel, graphs, theta_prior=prior)
    # Above 1e-4 (of the targets' variance): GPyTorch's default softplus underflows to 0
    # on a wild line-search step, where the log-normal prior is undefined.
    covar = ScaleKernel(base, outputscale_constraint=GreaterThan(1e-4),
                        outputscale_prior=LogNormalPrior(torch.tensor(float(np.log(signal)), dtype=torch.float64),
                                                         torch.tensor(float(signal_spread), dtype=torch.float64)))
    covar.outputscale = signal
    return covar
