"""graphgram's graph kernels in GPyTorch and BoTorch models (the extra ``graphgram[torch]``).

:class:`GPyTorchGraphKernel` wraps any graphgram graph kernel as a GPyTorch
kernel whose inputs are indices into a pool of graphs, with the graph kernel's
hyperparameters learnt through its analytic gradients;
:class:`GPyTorchMixtureKernel` does the same for samples made of several
weighted graphs (:class:`~graphgram.Mixture`, reactions), whose input rows
:func:`mixture_inputs` makes; :class:`FitProgress` reports each iteration of
BoTorch's fit; :func:`molecular_bo_kernel` is the covariance for Bayesian optimisation of
molecules from few measurements; :func:`thompson_sampling` picks a batch of the pool's candidates by
posterior samples drawn from finite features, and :func:`kriging_believer` by
the analytic acquisition with the picks so far believed measured.
``import graphgram`` never imports torch; this module needs torch and GPyTorch (BoTorch for
Bayesian optimisation): ``pip install "graphgram[torch]"``.

The modules, one job each: ``_kernel`` (the kernel and its autograd function),
``_blocks`` (which Gram blocks a call computes), ``_mixture`` (the mixture
kernel and its inputs), ``_progress`` (the fit's report),
``_thompson`` (Thompson sampling), ``_batch`` (the Kriging believer),
``_posterior`` (what both read of a fitted model), ``_scoring`` (the Fisher
information of an exact GPyTorch model, for ``FisherScoring`` in
``fit_gpytorch_mll``), ``_presets`` (:func:`molecular_bo_kernel`, the BO
covariance with priors for few measurements). The pool is the kernel's
``graphs`` (a list or a :class:`~graphgram.GraphLibrary`), the one name the
docs use for it. The low-rank pieces (inducing graphs, jittered Cholesky
factor, Nyström root) come from ``graphgram.gaussian_process._nystrom``, as
:class:`~graphgram.LowRankGraphKernel`'s do.
"""

try:
    import gpytorch  # noqa: F401  (checked here for a clear message)
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("graphgram.gpytorch needs torch and gpytorch, which are not installed (%s): "
                      'pip install "graphgram[torch]"' % exc) from exc

from ._kernel import GPyTorchGraphKernel
from ._mixture import GPyTorchMixtureKernel, mixture_inputs
from ._presets import molecular_bo_kernel
from ._progress import FitProgress
from ._batch import kriging_believer
from ._thompson import thompson_sampling

__all__ = ["GPyTorchGraphKernel", "GPyTorchMixtureKernel", "mixture_inputs", "FitProgress", "kriging_believer",
           "thompson_sampling", "molecular_bo_kernel"]
