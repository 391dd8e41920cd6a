"""Gaussian-process regression with a low-rank graph kernel, without n×n matrices."""

import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..graph import as_graph_list
from . import _lbfgs, _woodbury
from ._low_rank import LowRankGraphKernel
from ._nystrom import project

__all__ = ["LowRankGaussianProcessRegressor"]


class LowRankGaussianProcessRegressor(RegressorMixin, BaseEstimator):
    r"""Gaussian-process regression with a low-rank graph kernel in O(n·m²) per evaluation.

    Fits the same model as scikit-learn's
    ``GaussianProcessRegressor(ConstantKernel(signal) * kernel + WhiteKernel(noise),
    alpha=alpha, normalize_y=normalize_y)`` with ``kernel`` a
    :class:`LowRankGraphKernel` — the same log marginal likelihood, gradient,
    optimum and predictions, to rounding — without forming n×n matrices. With
    :math:`P = K(X, Z) L^{-\top}` (n×m, L the Cholesky factor of K_ZZ + εI) the
    covariance of the training targets is

    .. math::

        K = c\,(P P^\top + D) + \sigma^2 I,

    D = diag(k(x, x) − ‖P_x‖²) with FITC (0 without), c the signal and σ² the
    noise level (plus ``alpha``). With :math:`\Lambda = cD + \sigma^2 I`
    (diagonal) and :math:`M = I + c P^\top \Lambda^{-1} P` (m×m), the Woodbury
    identity and the matrix determinant lemma give K⁻¹y and log det K, and the
    gradient with respect to log c, log σ² and every free hyperparameter of the
    graph kernel follows from ∂K(X, Z) and ∂K(Z, Z) (and ∂k(x, x) with FITC)
    with n×m products: an evaluation costs n·m + m²/2 graph pairs with
    gradients, O(n·m² + m³ + n·m·p) arithmetic and O(n·m·p) memory, against
    scikit-learn's O(n²·p) memory and O(n³ + n²·m·p) time.

    Parameters
    ----------
    kernel : LowRankGraphKernel
        The low-rank graph kernel (its inducing graphs, FITC or not, jitter). It
        is cloned at ``fit``: a number of inducing graphs is chosen from the
        training graphs, a list is used as given.
    alpha : float or array-like of shape (n,), default=1e-10
        Added to the diagonal of K, as scikit-learn's ``alpha`` (not optimized):
        one value for all, or one per training graph — known per-measurement
        noise variances, on top of the learnt homoscedastic ``noise``. As in
        scikit-learn it is added to the standardized targets' covariance with
        ``normalize_y``: pass variances in y's units divided by ``np.var(y)``.
        Predictions at new graphs add the learnt ``noise_`` only.
    signal : float, default=1.0
        Initial signal variance c (``ConstantKernel``'s ``constant_value``).
        For molecules, ``signal=30.0, noise=0.05`` with
        ``molecular_kernel(q=0.5, h=0.9)`` is :func:`~graphgram.molecular_gp_kernel`'s
        start, where fits on molecules end up (fewer evaluations).
    signal_bounds : pair of float, default=(1e-2, 1e2)
        Bounds of the signal variance while optimizing.
    noise : float, default=0.1
        Initial noise variance σ² (``WhiteKernel``'s ``noise_level``).
    noise_bounds : pair of float, default=(1e-5, 1.0)
        Bounds of the noise variance while optimizing.
    normalize_y : bool, default=True
        Standardize the targets (mean 0, variance 1) before fitting, as
        scikit-learn; predictions are in the original units. The default bounds
        suit standardized targets.
    optimizer : "fmin_l_bfgs_b", callable or None, default="fmin_l_bfgs_b"
        scikit-learn's protocol: a callable ``optimizer(obj_func, initial_theta,
        bounds)`` returning ``(theta_opt, func_min)``, where
        ``obj_func(theta, eval_gradient=True)`` returns the negative log marginal
        likelihood and its gradient; ``obj_func.information(theta)`` returns the
        log marginal likelihood, its gradient and its Fisher information, for
        :class:`FisherScoring` (the fastest fits: a third to half the evaluations of
        L-BFGS-B on drug-size molecules). Pass :class:`LBFGS`
        (``LBFGS(verbose=True)``) for L-BFGS-B with a line per evaluation.
        None: keep the initial hyperparameters.
    n_restarts_optimizer : int, default=0
        Further optimizations from hyperparameters drawn log-uniformly within
        the bounds; the best one is kept.
    random_state : int, RandomState or None, default=None
        Seed of the restarts' initial hyperparameters.

    Attributes
    ----------
    kernel_ : LowRankGraphKernel
        The fitted graph kernel: optimized hyperparameters, the inducing graphs.
    signal_, noise_ : float
        The optimized signal and noise variances.
    log_marginal_likelihood_value_ : float
        The log marginal likelihood at the optimum (of the standardized targets
        with ``normalize_y``, as scikit-learn).
    X_train_ : list of Graph
    y_train_ : ndarray of shape (n,)
        The training targets (standardized with ``normalize_y``).
    alpha_ : ndarray of shape (n,)
        K⁻¹ y_train_.

    Notes
    -----
    ``theta`` in :meth:`log_marginal_likelihood` is, in log space: the signal
    variance, the noise variance, then the graph kernel's ``theta``
    (scikit-learn's ``ConstantKernel * kernel + WhiteKernel`` orders them
    constant, graph kernel, noise). The predictive standard deviation includes
    the noise, as scikit-learn's with a ``WhiteKernel``. Everything kernel-side
    (inducing graphs, jitter, validation, Dask) is the kernel's: this class
    adds the linear algebra.

    Examples
    --------
    >>> from graphgram import molecular_kernel, molecules
    >>> from graphgram.gaussian_process import LowRankGraphKernel, LowRankGaussianProcessRegressor
    >>> graphs = [molecules.from_smiles(s) for s in ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl"]]
    >>> y = [0.1, 0.3, -0.2, 1.0, 0.4, 0.0]
    >>> k = LowRankGraphKernel(molecular_kernel(verbose=False), inducing=3, fitc=True)
    >>> gp = LowRankGaussianProcessRegressor(k).fit(graphs, y)
    >>> mean, std = gp.predict(graphs[:2], return_std=True)
    >>> len(gp.kernel_.inducing_graphs_)
    3
    """

    def __init__(self, kernel, alpha=1e-10, signal=1.0, signal_bounds=(1e-2, 1e2), noise=0.1,
                 noise_bounds=(1e-5, 1.0), normalize_y=True, optimizer="fmin_l_bfgs_b", n_restarts_optimizer=0,
                 random_state=None):
        self.kernel = kernel
        self.alpha = alpha
        self.signal = signal
        self.signal_bounds = signal_bounds
        self.noise = noise
        self.noise_bounds = noise_bounds
        self.normalize_y = normalize_y
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.random_state = random_state

    # --- checks -----------------------------------------------------------------------
    def _check_params(self):
        if not isinstance(self.kernel, LowRankGraphKernel):
            raise TypeError("kernel must be a LowRankGraphKernel (graphgram.gaussian_process), got %s; for an exact "
                            "graph kernel use sklearn's GaussianProcessRegressor" % type(self.kernel).__name__)
        for name in ("signal", "noise"):
            v = getattr(self, name)
            if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v) and v > 0):
                raise ValueError("%s must be a positive number, got %r" % (name, v))
            b = getattr(self, name + "_bounds")
            try:
                lo, hi = (float(x) for x in b)
            except (TypeError, ValueError):
                raise ValueError("%s_bounds must be a pair (low, high), got %r" % (name, b)) from None
            if not 0 < lo <= hi:
                raise ValueError("%s_bounds must satisfy 0 < low <= high, got %r" % (name, b))
        self._check_alpha(None)
        if not (self.optimizer is None or self.optimizer == "fmin_l_bfgs_b" or callable(self.optimizer)):
            raise ValueError("optimizer must be 'fmin_l_bfgs_b', a callable or None, got %r" % (self.optimizer,))
        r = self.n_restarts_optimizer
        if not (isinstance(r, numbers.Integral) and not isinstance(r, bool) and r >= 0):
            raise ValueError("n_restarts_optimizer must be an integer >= 0, got %r" % (r,))

    def _check_alpha(self, n):
        """alpha as a float or, per training graph, an array of n values (n None: any length)."""
        a = self.alpha
        if isinstance(a, numbers.Real) and not isinstance(a, bool):
            if not (np.isfinite(a) and a >= 0):
                raise ValueError("alpha must be a number >= 0, got %r" % (a,))
            return float(a)
        try:
            v = np.asarray(a, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("alpha must be a number >= 0 or one per training graph, got %r" % (a,)) from None
        if v.ndim != 1 or (n is not None and len(v) != n):
            raise ValueError("alpha must be a number or one value per training graph (shape (%s,)), got shape %s"
                             % ("n" if n is None else n, v.shape))
        bad = np.flatnonzero(~(np.isfinite(v) & (v >= 0)))
        if len(bad):
            raise ValueError("alpha must be finite and >= 0: alpha[%d] is %r" % (bad[0], float(v[bad[0]])))
        return v

    @staticmethod
    def _check_y(y, n):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError("y must be one target per graph (shape (n,)), got shape %s" % (y.shape,))
        if len(y) != n:
            raise ValueError("X has %d graphs but y has %d targets" % (n, len(y)))
        if not np.all(np.isfinite(y)):
            bad = np.flatnonzero(~np.isfinite(y))
            raise ValueError("y has %d non-finite values (NaN or infinity), the first at position %d"
                             % (len(bad), bad[0]))
        return y

    # --- hyperparameters ------------------------------------------------------------
    def _bounds(self, kernel):
        return np.vstack([np.log(np.asarray(self.signal_bounds, dtype=float)),
                          np.log(np.asarray(self.noise_bounds, dtype=float)),
                          np.asarray(kernel.bounds, dtype=np.float64).reshape(-1, 2)])

    def _evaluate(self, theta, eval_gradient, eval_information=False):
        theta = np.asarray(theta, dtype=np.float64)
        kernel = self.kernel_.clone_with_theta(theta[2:])
        c, noise = float(np.exp(theta[0])), float(np.exp(theta[1]))
        T = kernel._terms(self.X_train_, kernel.inducing_graphs_, eval_gradient=eval_gradient)
        return _woodbury.log_marginal_likelihood(T, c, noise, noise + self._alpha, kernel.fitc, self.y_train_,
                                                 eval_gradient, eval_information)

    def log_marginal_likelihood(self, theta=None, eval_gradient=False):
        """Return the log marginal likelihood of the training targets, and its gradient.

        Parameters
        ----------
        theta : array-like of shape (2 + kernel.n_dims,), default=None
            log signal variance, log noise variance, then the graph kernel's
            ``theta``; None: the fitted value (``log_marginal_likelihood_value_``).
        eval_gradient : bool, default=False
            Also return the gradient with respect to theta (theta must be given).

        Returns
        -------
        log_likelihood : float
        log_likelihood_gradient : ndarray of shape (2 + kernel.n_dims,), with ``eval_gradient``
        """
        check_is_fitted(self, "kernel_")
        if theta is None:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated for theta!=None")
            return self.log_marginal_likelihood_value_
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (2 + self.kernel_.n_dims,):
            raise ValueError("theta must have %d values (log signal, log noise, the kernel's %d), got shape %s"
                             % (2 + self.kernel_.n_dims, self.kernel_.n_dims, theta.shape))
        return self._evaluate(theta, eval_gradient)

    def _optimize(self, obj_func, initial_theta, bounds):
        if self.optimizer == "fmin_l_bfgs_b":
            return _lbfgs.minimize(obj_func, initial_theta, bounds, warning=ConvergenceWarning, stacklevel=3)
        return self.optimizer(obj_func, initial_theta, bounds=bounds)

    # --- fit and predict --------------------------------------------------------------
    def fit(self, X, y):
        """Optimize the hyperparameters on the graphs X and targets y (unless
        ``optimizer=None``) and precompute what predictions need.

        Parameters
        ----------
        X : sequence of Graph
        y : array-like of shape (n,)

        Returns
        -------
        self
        """
        self._check_params()
        X = as_graph_list(X, "X")
        y = self._check_y(y, len(X))
        kernel = clone(self.kernel)
        X, _ = kernel._prepare(X)               # validates X, chooses the inducing graphs from it
        if self.normalize_y:
            self._y_train_mean = float(np.mean(y))
            std = float(np.std(y))
            self._y_train_std = std if std > 0 else 1.0
        else:
            self._y_train_mean, self._y_train_std = 0.0, 1.0
        self.X_train_ = X
        self.y_train_ = (y - self._y_train_mean) / self._y_train_std
        self._alpha = self._check_alpha(len(y))
        self.kernel_ = kernel
        theta = np.concatenate([[np.log(self.signal), np.log(self.noise)], kernel.theta])
        bounds = self._bounds(kernel)
        if self.optimizer is not None:
            def obj_func(theta, eval_gradient=True):
                if eval_gradient:
                    lml, grad = self._evaluate(theta, True)
                    return -lml, -grad
                return -self._evaluate(theta, False)

            # The likelihood, gradient and Fisher information, for optimizers that
            # take Newton steps with it (FisherScoring).
            obj_func.information = lambda theta: self._evaluate(theta, True, eval_information=True)
            optima = [self._optimize(obj_func, theta, bounds)]
            if self.n_restarts_optimizer > 0:
                rng = check_random_state(self.random_state)
                for _ in range(self.n_restarts_optimizer):
                    optima.append(self._optimize(obj_func, rng.uniform(bounds[:, 0], bounds[:, 1]), bounds))
            theta = np.asarray(optima[int(np.argmin([f for _, f in optima]))][0], dtype=np.float64)
        self.kernel_ = kernel.clone_with_theta(theta[2:])
        self.signal_, self.noise_ = float(np.exp(theta[0])), float(np.exp(theta[1]))
        # What predictions need (no gradients): K⁻¹y folded into m weights, the two factors.
        T = self.kernel_._terms(X, self.kernel_.inducing_graphs_)
        s = self.noise_ + self._alpha
        parts = _woodbury.factor(T, self.signal_, s, self.kernel_.fitc)
        if parts is None:
            raise np.linalg.LinAlgError("the low-rank covariance c (P Pᵀ + D) + (noise + alpha) I is not positive "
                                        "definite at signal=%g, noise=%g: increase alpha or the noise's lower bound"
                                        % (self.signal_, self.noise_))
        self.log_marginal_likelihood_value_ = float(_woodbury.log_marginal_likelihood(
            T, self.signal_, self.noise_, s, self.kernel_.fitc, self.y_train_, False))
        lam, Pl, Lm = parts
        c = self.signal_
        self.alpha_ = self.y_train_ / lam - c * (Pl @ scipy.linalg.cho_solve((Lm, True), Pl.T @ self.y_train_,
                                                                              check_finite=False))
        # mean(x) = c P_x Pᵀ α = K(x, Z) β with β = c L⁻ᵀ Pᵀ α.
        self._weights = c * scipy.linalg.solve_triangular(T.L.T, T.P.T @ self.alpha_, lower=False,
                                                          check_finite=False)
        self._L_zz, self._L_inner = T.L, Lm
        return self

    def predict(self, X, return_std=False, return_cov=False):
        """Predictive mean, and standard deviation or covariance, at the graphs X.

        O(n_test·m²) after the n_test·m graph pairs K(X, Z) (computed on the
        Dask client with the kernel's ``dask=True``). The variance is
        c (k̃(x, x) − ‖P_x‖² + ‖L_M⁻¹ P_xᵀ‖²) + σ², k̃(x, x) the exact k(x, x)
        with FITC and ‖P_x‖² without, as scikit-learn's GP with the same kernel
        (noise included).

        Parameters
        ----------
        X : sequence of Graph
        return_std : bool, default=False
        return_cov : bool, default=False
            The n_test×n_test covariance (not with return_std).

        Returns
        -------
        y_mean : ndarray of shape (n_test,)
        y_std : ndarray of shape (n_test,), with return_std
        y_cov : ndarray of shape (n_test, n_test), with return_cov
        """
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        check_is_fitted(self, "kernel_")
        k = self.kernel_
        X, Z = k._prepare(X)
        A = k._block(X, Z)
        mean = A @ self._weights * self._y_train_std + self._y_train_mean
        if not (return_std or return_cov):
            return mean
        c, scale = self.signal_, self._y_train_std ** 2
        P = project(A, self._L_zz)
        V = scipy.linalg.solve_triangular(self._L_inner, P.T, lower=True, check_finite=False)   # L_M⁻¹ P_xᵀ
        # Prior c k̃ + σ² minus the explained part c² P_x Pᵀ K⁻¹ P P_xᵀ = c P_x (I − M⁻¹) P_xᵀ.
        d = k._kernel_diag(X) - np.einsum("ij,ij->i", P, P) if k.fitc else np.zeros(len(X))
        if return_cov:
            cov = c * (V.T @ V)
            cov[np.diag_indices_from(cov)] += c * d + self.noise_
            return mean, cov * scale
        var = c * (d + np.einsum("ji,ji->i", V, V)) + self.noise_
        if np.any(var < 0):
            warnings.warn("Predicted variances smaller than 0; setting those variances to 0.", RuntimeWarning,
                          stacklevel=2)
            var = np.maximum(var, 0.0)
        return mean, np.sqrt(var * scale)
