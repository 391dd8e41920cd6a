"""graphgram kernels as scikit-learn Gaussian-process kernels, exact and low-rank.

:class:`GraphKernel` wraps a graph kernel (kept for older code: graphgram's
kernels are Gaussian-process kernels themselves); :class:`LowRankGraphKernel`
approximates one by m inducing graphs (Nyström / subset of regressors, or FITC)
so that each evaluation of a Gaussian process computes n·m + m²/2 graph pairs
instead of n²/2; :class:`LowRankGaussianProcessRegressor` fits a Gaussian
process with it without n×n matrices; :class:`LBFGS` is scikit-learn's
optimizer with a report per evaluation, :class:`FisherScoring` an optimizer
that takes Newton steps with the likelihood's Fisher information;
:func:`negative_log_predictive_density`, :func:`mean_standardized_log_loss`,
:func:`calibration_curve` and :func:`calibration_error` check a predictive
distribution. docs/gaussian_processes.md says when to use which.

The modules, one job each: ``_graph_kernel`` (the wrapper), ``_inducing`` (the
choice of inducing graphs), ``_nystrom`` (the Nyström pieces this low-rank kernel
and the GPyTorch bridge share: inducing graphs, jittered Cholesky factor, root),
``_low_rank`` (the low-rank kernel), ``_woodbury``
(the regressor's linear algebra), ``_lbfgs`` (the L-BFGS-B driver and
:class:`LBFGS`), ``_scoring`` (Fisher scoring and :class:`FisherScoring`),
``_exact`` (the exact GP's Fisher information for scikit-learn's regressor),
``_regressor`` (the regressor), ``_metrics`` (the checks of uncertainty).
"""

from ._graph_kernel import GraphKernel
from ._lbfgs import LBFGS
from ._scoring import FisherScoring
from ._low_rank import LowRankGraphKernel
from ._regressor import LowRankGaussianProcessRegressor
from ._metrics import (calibration_curve, calibration_error, mean_standardized_log_loss,
                       negative_log_predictive_density)

__all__ = ["GraphKernel", "LowRankGraphKernel", "LowRankGaussianProcessRegressor", "LBFGS", "FisherScoring",
           "calibration_curve", "calibration_error", "mean_standardized_log_loss",
           "negative_log_predictive_density"]
