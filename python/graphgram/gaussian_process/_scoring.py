"""Fisher scoring for Gaussian-process hyperparameters: :func:`maximize` and the optimizer
:class:`FisherScoring`."""

import numbers
import sys
import warnings

import numpy as np

from . import _exact, _lbfgs

__all__ = ["FisherScoring", "maximize"]


def _free(theta, grad, bounds):
    """The components not held at a bound by a gradient pushing out of the box."""
    return ~(((theta <= bounds[:, 0]) & (grad < 0)) | ((theta >= bounds[:, 1]) & (grad > 0)))


def _newton(grad, fisher, free, damping):
    """The damped Newton step on the free components, (F + λ diag F) s = g, zero elsewhere."""
    step = np.zeros_like(grad)
    if not free.any():
        return step
    F = fisher[np.ix_(free, free)]
    d = np.diag(F).copy()
    floor = 1e-12 * d.max() if d.max() > 0 else 1.0
    d[d < floor] = floor
    for _ in range(20):
        try:
            step[free] = np.linalg.solve(F + damping * np.diag(d), grad[free])
        except np.linalg.LinAlgError:
            damping = max(10 * damping, 1e-8)
            continue
        if np.all(np.isfinite(step)):
            return step
        break
    # F unusable (singular however damped, or not finite): the gradient scaled by F's diagonal.
    step[free] = grad[free] / np.where(np.isfinite(d), d, 1.0)
    return step


def _flatten(fisher, s, y):
    """F with its curvature along the last step s lowered to the observed one, sᵀy (y the
    fall of the gradient along s), by a rank-one change in the direction F s; by at
    most 90 %, never raised (a step that overshoots is cut back instead)."""
    Fs = fisher @ s
    sFs = float(s @ Fs)
    if not sFs > 0:
        return fisher
    gamma = min(max(float(y @ s) / sFs - 1.0, -0.9), 0.0)
    return fisher + gamma * np.outer(Fs, Fs) / sFs


def maximize(information, initial_theta, bounds, tol=0.5, patience=3, max_evaluations=200, max_seconds=None,
             radius=1.0, warning=RuntimeWarning, stacklevel=1):
    """Maximize a log likelihood by Fisher scoring within box bounds.

    Each step solves (F + λ diag F) s = g on the components not held at a
    bound (Levenberg–Marquardt damping λ, adapted to how well the quadratic
    model g·s − ½ sᵀF s predicted the last gain), shortens s to a trust
    radius in its largest component (doubled after a shortened step the
    model predicted well, halved after a poor prediction, set to the length
    that worked after a backtrack), projects θ + s onto the box, and
    backtracks along s (quadratic interpolation) until the likelihood
    rises. The Fisher information F is the expected negative Hessian, so the
    steps are Newton's near the optimum, without second derivatives of the
    kernel. Where the likelihood is flatter than F says (a step that gained
    more than 1.25 times the model's prediction), the next step's model takes
    the curvature measured along that step instead (:func:`_flatten`): on
    the long ridges of a GP's likelihood (signal level against length
    scales) plain Fisher scoring creeps, at half the gain it could have.

    It stops once the last ``patience`` steps together gained less than
    ``tol`` and the model predicts less than ``tol`` for the next (½ gᵀF⁻¹g
    over the free components), or when the model predicts no gain at all (a
    zero projected gradient).

    Parameters
    ----------
    information : callable
        ``information(theta)`` returns the log likelihood (-inf where it is
        undefined), its gradient and its Fisher information (n_dims, n_dims).
    initial_theta : ndarray of shape (n_dims,)
    bounds : ndarray of shape (n_dims, 2)
    tol : float, default=0.5
        Nats of likelihood: the least gain over ``patience`` steps that keeps
        the optimization going.
    patience : int, default=3
        The steps ``tol`` looks back over.
    max_evaluations : int, default=200
    max_seconds : float or None, default=None
        No evaluation starts after this many seconds; the best point so far is
        returned with a warning.
    radius : float, default=1.0
        The first trust radius: no component of the first step is longer (for
        log hyperparameters, one e-fold).
    warning : type of Warning, default=RuntimeWarning
        The category of the warnings (budgets spent, no ascent found).
    stacklevel : int, default=1

    Returns
    -------
    theta_opt : ndarray of shape (n_dims,)
    lml_opt : float
    """
    bounds = np.asarray(bounds, dtype=float)
    theta = np.clip(np.asarray(initial_theta, dtype=float), bounds[:, 0], bounds[:, 1])
    start = _lbfgs._clock()
    evaluations = 1
    lml, grad, fisher = information(theta)
    if not np.isfinite(lml):
        raise ValueError("the log marginal likelihood is not finite at the starting point %s: the covariance is "
                         "not positive definite there (increase alpha or the noise level)" % (np.exp(theta),))
    damping = 1e-3
    gains = []

    def stop(message):
        warnings.warn("Fisher scoring stopped after %d evaluations: %s; returning the best point so far"
                      % (evaluations, message), warning, stacklevel=stacklevel + 2)
        return theta, lml

    secant = None  # (s, y) of the last step when it gained more than the model said
    while True:
        free = _free(theta, grad, bounds)
        model_matrix = fisher if secant is None else _flatten(fisher, *secant)
        step = _newton(grad, model_matrix, free, damping)
        predicted = 0.5 * float(grad @ step)  # the model's gain of the full step; ½ gᵀF⁻¹g
        longest = float(np.max(np.abs(step)))
        capped = longest > radius
        if capped:
            step *= radius / longest
        if predicted <= 1e-12 * max(1.0, abs(lml)):
            return theta, lml
        if len(gains) >= patience and sum(gains[-patience:]) < tol and predicted < tol:
            return theta, lml
        t = 1.0
        while True:
            if evaluations >= max_evaluations:
                return stop("max_evaluations=%d reached" % max_evaluations)
            if max_seconds is not None and _lbfgs._clock() - start >= max_seconds:
                return stop("the time budget of %g s is spent" % max_seconds)
            new = np.clip(theta + t * step, bounds[:, 0], bounds[:, 1])
            s = new - theta
            slope = float(grad @ s)
            model = slope - 0.5 * float(s @ model_matrix @ s)
            evaluations += 1
            lml2, grad2, fisher2 = information(new)
            if np.isfinite(lml2) and lml2 > lml:
                break
            # Backtrack to the maximum of the quadratic through the two values and the slope.
            drop = lml2 - lml if np.isfinite(lml2) else -np.inf
            t *= float(np.clip(slope / (2 * (slope - drop)), 0.1, 0.5)) if np.isfinite(drop) else 0.1
            damping = max(4 * damping, 1e-6)
            if t < 1e-6:
                if predicted < tol:
                    return theta, lml  # within tol of the optimum: rounding stopped it, not a failure
                return stop("no step along the scoring direction raised the likelihood")
        rho = (lml2 - lml) / model if model > 0 else 0.0
        damping = max(damping / 3, 1e-10) if rho > 0.75 else (2 * damping if rho < 0.25 else damping)
        if t < 1.0:
            radius = max(float(np.max(np.abs(s))), 1e-3)   # the length that worked
        elif capped and rho > 0.75:
            radius *= 2.0
        elif rho < 0.25:
            radius /= 2.0
        gains.append(lml2 - lml)
        secant = (s, grad - grad2) if t == 1.0 and rho > 1.25 else None
        theta, lml, grad, fisher = new, lml2, grad2, fisher2


class FisherScoring:
    """An optimizer for Gaussian-process hyperparameters that takes Newton steps with the Fisher information.

    Pass an instance as ``optimizer`` of scikit-learn's
    ``GaussianProcessRegressor`` (any kernel) or of
    :class:`LowRankGaussianProcessRegressor`. Besides the log marginal
    likelihood and its gradient, each evaluation computes the Fisher
    information of the log hyperparameters, F_ij = ½ tr(K⁻¹ ∂_i K K⁻¹ ∂_j K)
    — the expected negative Hessian, from the same kernel gradients — and
    the optimizer takes damped, bound-projected Newton steps with it
    (:func:`maximize`). Where L-BFGS-B spends dozens of evaluations learning
    the curvature, Fisher scoring has it at every step: on ten exact GPs of
    drug-size molecules it took a quarter of the evaluations of ``LBFGS()``
    (192 against 726), and on two low-rank GPs 27 and 38 against 94 and 64
    (docs/gaussian_processes.md, "Fitting in minutes"). On molecules, start
    it from :func:`~graphgram.molecular_gp_kernel`: 29 % fewer evaluations
    again on six fits that did not set its values.

    The information adds 2·p·n³ flops per evaluation of an exact GP (p
    hyperparameters, n training graphs; about 0.3 s at n = 500, p = 13, on
    two cores) and memory for p n×n matrices besides the kernel's gradient; the
    low-rank regressor's costs O(p·n·m²) in n×m products.

    With scikit-learn's regressor the optimizer reads the regressor being
    fitted from the objective scikit-learn passes it (a closure over the
    regressor), and computes the likelihood itself with scikit-learn's
    formulas; it raises a TypeError for an objective from elsewhere.

    The same instance fits GPyTorch and BoTorch models:
    ``fit_gpytorch_mll(mll, optimizer=FisherScoring())`` with an
    ``ExactMarginalLogLikelihood`` (any exact GP, batched or not, with
    priors). It moves each parameter kept non-negative by its constraint
    as a log (noise, output scale) and the others as values (the graph
    kernels' θ, already logs) within the constraints' bounds, and adds the
    priors' curvature to the information; ∂Σ/∂p comes by forward-mode
    differentiation (graph kernels give it from the gradient matrices of
    the same core call), or by central differences where a part of the
    model has no forward mode (see ``graphgram.gpytorch``).

    Parameters
    ----------
    tol : float, default=0.5
        Stop once the last ``patience`` steps together raised the log marginal
        likelihood by less than ``tol`` nats and the quadratic model predicts
        less than ``tol`` for the next. Half a nat is the likelihood one
        standard error of a single hyperparameter away from its optimum. On
        drug-size molecules the fits that went on beyond it mostly crept
        along ridges of the likelihood, their test errors barely moving:
        0.5 ended ten exact GPs in 192 evaluations in all instead of a
        stricter rule's 231, and a low-rank GP in 27 instead of 46, with
        test errors within 0.3 % (docs/gaussian_processes.md, "Fitting in
        minutes").
    patience : int, default=3
        The steps ``tol`` looks back over.
    max_evaluations : int, default=200
        At most this many evaluations (with a warning when reached).
    max_seconds : float or None, default=None
        A time budget: no evaluation starts after it, and the best point so
        far is the result, with a warning.
    verbose : bool, default=True
        Print one line per evaluation.
    file : file object, default=None
        Where to print; ``None`` is ``sys.stderr``.

    Attributes
    ----------
    n_evaluations_ : int
        Evaluations of the last optimization.
    history_ : list of (float, float)
        (log marginal likelihood, seconds) per evaluation of the last optimization.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process import GaussianProcessRegressor
    >>> from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    >>> from graphgram.gaussian_process import FisherScoring
    >>> X = np.linspace(0.0, 5.0, 30)[:, None]
    >>> y = np.sin(X[:, 0])
    >>> gp = GaussianProcessRegressor(RBF() + WhiteKernel(), optimizer=FisherScoring(verbose=False)).fit(X, y)
    >>> bool(gp.score(X, y) > 0.99)
    True
    """

    def __init__(self, tol=0.5, patience=3, max_evaluations=200, max_seconds=None, verbose=True, file=None):
        self.tol = tol
        self.patience = patience
        self.max_evaluations = max_evaluations
        self.max_seconds = max_seconds
        self.verbose = verbose
        self.file = file

    def _check_params(self):
        positive = _lbfgs.positive
        if not positive(self.tol):
            raise ValueError("FisherScoring: tol must be a positive number, got %r" % (self.tol,))
        if not positive(self.patience, numbers.Integral):
            raise ValueError("FisherScoring: patience must be a positive integer, got %r" % (self.patience,))
        if not positive(self.max_evaluations, numbers.Integral):
            raise ValueError("FisherScoring: max_evaluations must be a positive integer, got %r"
                             % (self.max_evaluations,))
        if self.max_seconds is not None and not positive(self.max_seconds):
            raise ValueError("FisherScoring: max_seconds must be a positive number or None, got %r"
                             % (self.max_seconds,))

    def __call__(self, obj_func, initial_theta=None, bounds=None, closure=None):
        self._check_params()
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(obj_func, torch.nn.Module):
            # BoTorch's fit_gpytorch_mll(mll, optimizer=FisherScoring()): optimizer(mll, closure=None).
            from ..gpytorch._scoring import fit
            return fit(self, obj_func, closure)
        if initial_theta is None or bounds is None:
            raise TypeError("FisherScoring takes scikit-learn's (obj_func, initial_theta, bounds) or a GPyTorch "
                            "marginal log likelihood (fit_gpytorch_mll(mll, optimizer=FisherScoring()))")
        information = getattr(obj_func, "information", None)
        if information is None:
            gpr = _exact.regressor_of(obj_func)
            if gpr is None:
                raise TypeError("FisherScoring needs the kernel's gradient matrices: use it as the optimizer of "
                                "scikit-learn's GaussianProcessRegressor or of LowRankGaussianProcessRegressor "
                                "(got an objective from neither)")

            def information(theta):
                return _exact.information(gpr, theta)

        report = _lbfgs.counted(self, information, sign=1)
        theta, lml = maximize(report, initial_theta, bounds, tol=self.tol, patience=self.patience,
                              max_evaluations=self.max_evaluations, max_seconds=self.max_seconds,
                              warning=RuntimeWarning, stacklevel=2)
        return theta, -lml

    def __repr__(self):
        return "FisherScoring(tol=%r, patience=%r, max_evaluations=%r, max_seconds=%r, verbose=%r)" % (
            self.tol, self.patience, self.max_evaluations, self.max_seconds, self.verbose)
