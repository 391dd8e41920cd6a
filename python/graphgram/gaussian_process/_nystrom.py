"""The Nyström pieces both Gaussian-process paths share: the one internal module that
:class:`~graphgram.gaussian_process.LowRankGraphKernel` (NumPy) and
:class:`~graphgram.gpytorch.GPyTorchGraphKernel` (torch, differentiable) build their
low-rank kernels from.

A low-rank kernel through m inducing graphs Z is K̃(X, Y) = R_X R_Yᵀ, with the
Nyström root R_X = K(X, Z) L⁻ᵀ and L the lower Cholesky factor of
K(Z, Z) + εI. This module holds

- :func:`choose` and :data:`METHODS`: the choice of the inducing graphs
  (implemented in ``_inducing``, one plain function per method);
- :func:`check_jitter` and :func:`cholesky_factor`: L, with ε raised tenfold
  while the factorization fails (:func:`jittered_cholesky`, the rule for any
  factorization routine);
- :func:`project`: the Nyström root A L⁻ᵀ of the rows of A = K(X, Z).

:func:`cholesky_factor` and :func:`project` take NumPy arrays or torch tensors
and compute with SciPy or torch accordingly, so that each computation is written
once. Nothing here imports torch unless given a tensor.
"""

import numbers
import warnings

import numpy as np
import scipy.linalg

from ._inducing import METHODS, choose

__all__ = ["METHODS", "choose", "check_jitter", "jittered_cholesky", "cholesky_factor", "project"]

# Jitter is raised tenfold per failed Cholesky factorization up to this
# (relative to the mean diagonal of K_ZZ); beyond it the approximation would be
# too far from the kernel to be useful, and an error is raised.
_MAX_JITTER = 1e-2


def check_jitter(jitter):
    """Raise ValueError unless ``jitter`` is a number in [0, 1e-2) (relative to K(Z, Z)'s mean diagonal)."""
    j = jitter
    if not (isinstance(j, numbers.Real) and not isinstance(j, bool) and np.isfinite(j) and 0 <= j < _MAX_JITTER):
        raise ValueError("jitter must be a number in [0, %g), got %r" % (_MAX_JITTER, j))


def jittered_cholesky(Kzz, jitter, cholesky, stacklevel=2):
    """Return ``cholesky(ε)``, the factor of K(Z, Z) + εI, with ε = jitter × its mean
    diagonal raised tenfold while the factorization fails (to at most 1e-2 × it).

    Parameters
    ----------
    Kzz : ndarray of shape (m, m)
        K(Z, Z)'s values, for the checks and the scale.
    jitter : float
        The first relative jitter (:func:`check_jitter`).
    cholesky : callable
        ``cholesky(eps)`` returns the factor of K(Z, Z) + eps·I or raises
        ``numpy.linalg.LinAlgError`` (NumPy's, or torch's to keep the gradient).
    stacklevel : int, default=2
        Of the RuntimeWarning issued when ε had to be raised.

    Returns
    -------
    L : ndarray or torch.Tensor of shape (m, m)
        What ``cholesky`` returned for the first ε that worked.

    Raises
    ------
    ValueError
        When K(Z, Z) has non-finite entries.
    numpy.linalg.LinAlgError
        When its mean diagonal is not positive, or no ε up to 1e-2 × it makes it
        positive definite.
    """
    if not np.all(np.isfinite(Kzz)):
        raise ValueError("K(Z, Z) of the inducing graphs has non-finite entries")
    scale = float(np.mean(np.diag(Kzz)))
    if not scale > 0:
        raise np.linalg.LinAlgError("K(Z, Z) of the inducing graphs has a mean diagonal of %g: the inducing "
                                    "graphs have no similarity to themselves" % scale)
    rel = first = float(jitter)
    while True:
        try:
            L = cholesky(rel * scale)
            break
        except np.linalg.LinAlgError:
            rel = max(10.0 * rel, 1e-12)
            if rel > _MAX_JITTER:
                raise np.linalg.LinAlgError(
                    "K(Z, Z) of the %d inducing graphs is not positive definite even with a jitter of %g "
                    "(relative to its mean diagonal %g): choose fewer or more diverse inducing graphs"
                    % (len(Kzz), _MAX_JITTER, scale)) from None
    if rel != first:
        warnings.warn("K(Z, Z) of the %d inducing graphs is not numerically positive definite with jitter=%g; "
                      "added %g (%g × its mean diagonal %g) instead" % (len(Kzz), first, rel * scale, rel, scale),
                      RuntimeWarning, stacklevel=stacklevel)
    return L


def cholesky_factor(Kzz, jitter, stacklevel=2):
    """Return L, the lower Cholesky factor of K(Z, Z) + εI, ε raised as :func:`jittered_cholesky` does.

    Parameters
    ----------
    Kzz : ndarray or torch.Tensor of shape (m, m)
        K(Z, Z). A tensor is factored by torch (``torch.linalg.cholesky_ex``),
        so that L keeps its gradient; an array by SciPy.
    jitter : float
        The first relative jitter (:func:`check_jitter`).
    stacklevel : int, default=2
        Of the RuntimeWarning issued when ε had to be raised, counted from the caller.

    Returns
    -------
    L : ndarray or torch.Tensor of shape (m, m)
        Of Kzz's type.
    """
    n = len(Kzz)
    if isinstance(Kzz, np.ndarray):
        values = Kzz

        def cholesky(eps):
            return scipy.linalg.cholesky(Kzz + eps * np.eye(n), lower=True, check_finite=False)
    else:
        import torch

        values = Kzz.detach().cpu().numpy()
        eye = torch.eye(n, dtype=Kzz.dtype)

        def cholesky(eps):
            L, info = torch.linalg.cholesky_ex(Kzz + eps * eye)
            if int(info):
                raise np.linalg.LinAlgError("not positive definite")
            return L

    return jittered_cholesky(values, jitter, cholesky, stacklevel=stacklevel + 1)


def project(A, L):
    """Return the Nyström root A L⁻ᵀ of the rows of A = K(X, Z), L from :func:`cholesky_factor`.

    Parameters
    ----------
    A : ndarray or torch.Tensor of shape (n, m)
        K(X, Z). A tensor is solved by torch (differentiable), an array by SciPy.
    L : ndarray or torch.Tensor of shape (m, m)
        Lower triangular, of A's type.

    Returns
    -------
    R : ndarray or torch.Tensor of shape (n, m)
        R Rᵀ is the Nyström kernel K(X, Z) (K(Z, Z) + εI)⁻¹ K(Z, X).
    """
    if isinstance(A, np.ndarray):
        return scipy.linalg.solve_triangular(L, A.T, lower=True, check_finite=False).T
    import torch

    return torch.linalg.solve_triangular(L, A.transpose(-1, -2), upper=False).transpose(-1, -2)
