"""The exact Gaussian process's log marginal likelihood, gradient and Fisher information, for
:class:`~graphgram.gaussian_process.FisherScoring` on scikit-learn's ``GaussianProcessRegressor``."""

import numpy as np
import scipy.linalg
from sklearn.gaussian_process import GaussianProcessRegressor

__all__ = ["regressor_of", "information", "whitened"]


def regressor_of(obj_func):
    """The scikit-learn ``GaussianProcessRegressor`` whose ``fit`` made ``obj_func``, or None.

    scikit-learn hands its optimizer a closure over the regressor being
    fitted (``self``); Fisher scoring needs the kernel's gradient matrices,
    which that closure does not return.
    """
    code, cells = getattr(obj_func, "__code__", None), getattr(obj_func, "__closure__", None)
    if code is None or cells is None:
        return None
    for name, cell in zip(code.co_freevars, cells):
        if name == "self":
            try:
                gpr = cell.cell_contents
            except ValueError:  # an empty cell
                return None
            if isinstance(gpr, GaussianProcessRegressor) and hasattr(gpr, "X_train_"):
                return gpr
    return None


def information(gpr, theta):
    """The log marginal likelihood of ``gpr`` at ``theta``, its gradient and its Fisher information.

    The likelihood and gradient are scikit-learn's
    ``gpr.log_marginal_likelihood(theta, eval_gradient=True, clone_kernel=False)``
    (the same formulas, the same rounding up to the order of sums); like it
    this sets ``gpr.kernel_.theta``. The Fisher information of the
    log hyperparameters, the expected negative Hessian of the likelihood, is

        F_ij = ½ t tr(K⁻¹ ∂_i K K⁻¹ ∂_j K) = ½ t ⟨L⁻¹ ∂_i K L⁻ᵀ, L⁻¹ ∂_j K L⁻ᵀ⟩

    for t target columns (K = L Lᵀ): 2 p n³ flops for p hyperparameters, on
    top of the kernel's gradient matrices.

    Parameters
    ----------
    gpr : sklearn.gaussian_process.GaussianProcessRegressor
        Being fitted: ``kernel_``, ``X_train_``, ``y_train_`` and ``alpha``.
    theta : ndarray of shape (n_dims,)

    Returns
    -------
    lml : float
        -inf when K + alpha I is not positive definite, as scikit-learn.
    grad : ndarray of shape (n_dims,)
        Zeros with -inf.
    fisher : ndarray of shape (n_dims, n_dims) or None
        None with -inf.
    """
    kernel = gpr.kernel_
    kernel.theta = theta
    K, dK = kernel(gpr.X_train_, eval_gradient=True)
    K[np.diag_indices_from(K)] += gpr.alpha
    try:
        L = scipy.linalg.cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return -np.inf, np.zeros_like(theta), None
    y = gpr.y_train_ if gpr.y_train_.ndim == 2 else gpr.y_train_[:, np.newaxis]
    n, t = len(K), y.shape[1]
    a = scipy.linalg.cho_solve((L, True), y, check_finite=False)
    lml = float(np.sum(-0.5 * np.einsum("ik,ik->k", y, a) - np.log(np.diag(L)).sum() - n / 2 * np.log(2 * np.pi)))
    traces, fisher = whitened(L, dK)
    data = np.einsum("ik,ijp,jk->p", a, dK, a, optimize=True)
    grad = 0.5 * data - 0.5 * t * traces
    return lml, grad, t * fisher


def whitened(L, dK):
    """tr(K⁻¹ ∂_i K) and the Fisher information ½ tr(K⁻¹ ∂_i K K⁻¹ ∂_j K) of one
    target column, from K's Cholesky factor L and dK (n, n, p).

    With M_i = L⁻¹ ∂_i K L⁻ᵀ (symmetric), tr(K⁻¹ ∂_i K) = tr(M_i) and
    F = ½ M Mᵀ over the flattened M_i.
    """
    n, p = dK.shape[0], dK.shape[2]
    M = np.empty((p, n, n))
    for i in range(p):
        half = scipy.linalg.solve_triangular(L, dK[:, :, i], lower=True, check_finite=False)
        M[i] = scipy.linalg.solve_triangular(L, half.T, lower=True, check_finite=False)
    traces = np.trace(M, axis1=1, axis2=2)
    M = M.reshape(p, n * n)
    return traces, 0.5 * (M @ M.T)
