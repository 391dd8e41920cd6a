"""Fisher scoring of a GPyTorch exact GP's parameters, for BoTorch's ``fit_gpytorch_mll``.

:class:`graphgram.gaussian_process.FisherScoring` calls :func:`fit` when it is
given a marginal log likelihood (``fit_gpytorch_mll(mll, optimizer=FisherScoring())``)
instead of scikit-learn's objective; the steps are the same
(:func:`graphgram.gaussian_process._scoring.maximize`), the information is
this module's.
"""

import contextlib
import time

import numpy as np
import scipy.linalg
import gpytorch
import torch
import torch.autograd.forward_ad as fwAD
from gpytorch.mlls import ExactMarginalLogLikelihood

from ..gaussian_process._exact import whitened

__all__ = ["fit", "information"]


class _Marginal(torch.nn.Module):
    """The model's marginal distribution of its training targets: covariance and mean."""

    def __init__(self, mll):
        super().__init__()
        self.mll = mll

    def inputs(self):
        model = self.mll.model
        transform = getattr(model, "transform_inputs", None)
        return [transform(X=x) if transform is not None else x for x in model.train_inputs]

    def forward(self):
        # Dense here, while the parameters are swapped: GPyTorch evaluates kernels lazily, and
        # after the call the parameters are the module's own again.
        model = self.mll.model
        out = self.mll.likelihood(model(*model.train_inputs), *self.inputs())
        return out.covariance_matrix, out.mean


@contextlib.contextmanager
def _swapped(root, values):
    """The parameters ``values`` maps (by identity) replaced by other tensors (duals,
    differentiable functions of z) in every module of ``root`` holding them, and put
    back on leaving. (torch.func.functional_call leaves a parameter that two paths of
    an mll reach, the likelihood's, replaced.)"""
    held = []
    try:
        for module in root.modules():
            for key, p in list(module._parameters.items()):
                if p is not None and id(p) in values:
                    held.append((module, key, p))
                    module._parameters[key] = values[id(p)]
        yield
    finally:
        for module, key, p in held:
            module._parameters[key] = p


class _Prior(torch.nn.Module):
    """The sum of the model's log prior densities (the part of the objective besides the likelihood)."""

    def __init__(self, mll):
        super().__init__()
        self.mll = mll

    def forward(self):
        total = torch.zeros((), dtype=torch.float64)
        for _, module, prior, closure, _ in self.mll.named_priors():
            total = total + prior.log_prob(closure(module)).sum()
        return total


class _Coordinates:
    """The coordinates Fisher scoring moves in, z, one per entry of the fitted raw parameters.

    Like scikit-learn's log hyperparameters within box bounds: a parameter
    whose constraint keeps it non-negative is moved as the log of its value
    (noise, output scale), any other as its value (a mean constant; the graph
    kernels' θ, already logs), within the constraint's bounds. The raw
    parameter is the value itself where the constraint is not enforced by a
    transform (BoTorch's noise and length scales, which BoTorch also bounds
    rather than transforms), else the transform's inverse of the value.
    """

    def __init__(self, mll):
        if not isinstance(mll, ExactMarginalLogLikelihood):
            raise TypeError("FisherScoring fits GPyTorch models through an ExactMarginalLogLikelihood (an exact GP "
                            "with a Gaussian likelihood), got %s" % type(mll).__name__)
        self.params, seen = [], set()
        for name, p, c in mll.named_parameters_and_constraints():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                self.params.append((name, p, c))
        if not self.params:
            raise ValueError("the model has no parameter to fit (none requires grad)")
        self.sizes = [p.numel() for _, p, _ in self.params]
        lo, hi, log = [], [], []
        for _, p, c in self.params:
            a, b = (np.broadcast_to(np.inf * sign if c is None else bound.detach().cpu().numpy().astype(np.float64),
                                    p.shape).ravel() for sign, bound in ((-1, getattr(c, "lower_bound", None)),
                                                                         (1, getattr(c, "upper_bound", None))))
            as_log = np.full(p.numel(), c is not None and bool(np.all(a >= 0)))
            with np.errstate(divide="ignore", invalid="ignore"):
                lo.append(np.where(as_log, np.log(a), a))
                hi.append(np.where(as_log, np.log(b), b))
            log.append(as_log)
        self.bounds, self.log = np.column_stack([np.concatenate(lo), np.concatenate(hi)]), np.concatenate(log)

    def z(self):
        """The parameters' coordinates now."""
        out = []
        for _, p, c in self.params:
            v = p.detach()
            if c is not None and c.enforced:
                v = c.transform(v)
            out.append(v.reshape(-1).cpu().numpy().astype(np.float64))
        v = np.concatenate(out)
        with np.errstate(divide="ignore"):
            return np.where(self.log, np.log(np.where(self.log, v, 1.0)), v)

    def raw(self, z):
        """The raw parameters (a list of tensors, differentiable in z, a tensor) at z."""
        lo, hi = (torch.as_tensor(b, dtype=z.dtype) for b in self.bounds.T)
        # Strictly inside finite bounds: a transform's inverse is infinite on them.
        width = torch.where(torch.isfinite(hi - lo), hi - lo, torch.ones_like(lo))
        margin = 1e-9 * width
        z = torch.minimum(torch.maximum(z, lo + margin), hi - margin)
        v = torch.where(torch.as_tensor(self.log), torch.exp(z), z)
        out = []
        for (_, p, c), piece in zip(self.params, torch.split(v, self.sizes)):
            # A clone: GPyTorch reshapes some parameters in place, which views of one split refuse.
            piece = piece.clone().reshape(p.shape).to(p.dtype)
            out.append(c.inverse_transform(piece) if c is not None and c.enforced else piece)
        return out

    def assign(self, z):
        with torch.no_grad():
            for (_, p, _), r in zip(self.params, self.raw(torch.as_tensor(z, dtype=torch.float64))):
                p.copy_(r)

    def slopes(self, z):
        """d raw / dz, entry by entry (each raw entry depends on its own z only)."""
        with fwAD.dual_level():
            zt = fwAD.make_dual(torch.as_tensor(z, dtype=torch.float64), torch.ones(len(z), dtype=torch.float64))
            return np.concatenate([fwAD.unpack_dual(r).tangent.reshape(-1).detach().cpu().numpy()
                                   for r in self.raw(zt)])


def _log_likelihood(mll, marginal):
    """The objective in nats: GPyTorch's ``mll`` (log likelihood + log priors, per
    datum) times the number of data, summed over the model's batches."""
    model = mll.model
    value = mll(model(*model.train_inputs), model.train_targets, *marginal.inputs())
    return value.sum() * model.train_targets.shape[-1]


def information(mll):
    """(coordinates, information): Fisher scoring's view of ``mll``.

    ``information(z)`` sets the parameters to the coordinates z (see
    :class:`_Coordinates`) and returns the objective in nats (log likelihood
    + log priors), its gradient in z by one backward pass, and the Fisher
    information of the likelihood in z,
    F_ij = ½ tr(Σ⁻¹ ∂_iΣ Σ⁻¹ ∂_jΣ) + ∂_iμᵀ Σ⁻¹ ∂_jμ summed over the model's
    batches, with ∂Σ and ∂μ by forward-mode differentiation (one pass per
    parameter entry; graph kernels give theirs from the gradient matrices of
    the same core call), plus the log priors' negative Hessian with its
    negative eigenvalues dropped. (-inf, zeros, None) where Σ is not
    positive definite.
    """
    coords = _Coordinates(mll)
    params = [p for _, p, _ in coords.params]
    marginal, prior = _Marginal(mll), _Prior(mll)
    has_priors = any(True for _ in mll.named_priors())

    def tangents(z, D):
        """Σ, and ∂Σ/∂z_k and ∂μ/∂z_k for every coordinate k (D: d raw / dz): by
        forward mode, in raw coordinates, Σ from the first pass's primal (GPyTorch's
        trace mode computes kernels such as RBF and Matern with plain torch
        operations rather than its own autograd functions, which have no forward
        mode); by central differences in z where some part of the model has none."""
        S, dS, dm = None, [], []
        try:
            with fwAD.dual_level(), gpytorch.settings.trace_mode(True):
                for p in params:
                    for e in range(p.numel()):
                        t = torch.zeros(p.numel(), dtype=p.dtype, device=p.device)
                        t[e] = 1.0
                        with _swapped(mll, {id(p): fwAD.make_dual(p.detach(), t.reshape(p.shape))}):
                            Sd, md = marginal()
                        (S0, tS), tm = fwAD.unpack_dual(Sd), fwAD.unpack_dual(md).tangent
                        if S is None:
                            S = S0.detach().cpu().numpy()
                        dS.append(np.zeros(S.shape) if tS is None else tS.detach().cpu().numpy())
                        dm.append(np.zeros(md.shape) if tm is None else tm.detach().cpu().numpy())
        except NotImplementedError:
            return differences(z)
        dS, dm = np.array(dS), np.array(dm)
        return S, dS * D.reshape((-1,) + (1,) * (dS.ndim - 1)), dm * D.reshape((-1,) + (1,) * (dm.ndim - 1))

    def differences(z, eps=1e-6):
        """Σ, ∂Σ/∂z and ∂μ/∂z, the derivatives by central differences (the Fisher information is the steps'
        metric only: its rounding moves the path, not the optimum)."""
        dS, dm = [], []
        with torch.no_grad():
            for k in range(len(z)):
                pair = []
                for sign in (1.0, -1.0):
                    v = z.copy()
                    v[k] += sign * eps
                    coords.assign(v)
                    pair.append([np.array(a.detach().cpu().numpy()) for a in marginal()])  # copies: views of parameters
                dS.append((pair[0][0] - pair[1][0]) / (2 * eps))
                dm.append((pair[0][1] - pair[1][1]) / (2 * eps))
            coords.assign(z)
            S = marginal()[0].detach().cpu().numpy()
        return S, np.array(dS), np.array(dm)

    def prior_curvature(z):
        """The log priors' negative Hessian in z, its negative eigenvalues dropped."""
        if not has_priors:
            return 0.0

        def log_prior(zt):
            with _swapped(mll, {id(p): r for p, r in zip(params, coords.raw(zt))}):
                return prior()

        H = torch.autograd.functional.hessian(log_prior, torch.as_tensor(z, dtype=torch.float64))
        H = H.detach().cpu().numpy()
        w, V = np.linalg.eigh(-(H + H.T) / 2)
        return (V * np.clip(w, 0.0, None)) @ V.T

    def evaluate(z):
        coords.assign(z)
        mll.zero_grad()
        try:
            value = _log_likelihood(mll, marginal)
            value.backward()
        except Exception as exc:  # noqa: BLE001 - GPyTorch's NotPSDError and friends: not a point of the domain
            if type(exc).__name__ != "NotPSDError" and "positive definite" not in str(exc):
                raise
            return -np.inf, np.zeros(len(z)), None
        raw_grad = [(p.grad if p.grad is not None else torch.zeros_like(p)).detach().cpu().numpy().ravel()
                    for p in params]
        D = coords.slopes(z)
        grad = D * np.concatenate(raw_grad)
        S, dS, dm = tangents(z, D)
        k = len(z)
        S = S.reshape((-1,) + S.shape[-2:])
        dS, dm = dS.reshape((k, -1) + S.shape[-2:]), dm.reshape(k, -1, S.shape[-1])
        fisher = np.zeros((k, k))
        for b in range(len(S)):
            try:
                L = scipy.linalg.cholesky(S[b], lower=True, check_finite=False)
            except np.linalg.LinAlgError:
                return -np.inf, np.zeros(k), None
            fisher += whitened(L, np.moveaxis(dS[:, b], 0, -1))[1]
            half = scipy.linalg.solve_triangular(L, dm[:, b].T, lower=True, check_finite=False)
            fisher += half.T @ half
        return float(value.detach()), grad, fisher + prior_curvature(z)

    return coords, evaluate


def fit(optimizer, mll, closure=None):
    """Fit ``mll``'s parameters in place by Fisher scoring (:func:`information`, the steps
    of :func:`~graphgram.gaussian_process._scoring.maximize`); BoTorch's ``OptimizationResult``."""
    from botorch.exceptions.warnings import OptimizationWarning
    from botorch.optim.core import OptimizationResult, OptimizationStatus

    from ..gaussian_process import _lbfgs
    from ..gaussian_process._scoring import maximize

    if closure is not None:
        raise TypeError("FisherScoring computes the objective and its information itself: call fit_gpytorch_mll "
                        "without closure")
    coords, evaluate = information(mll)
    mll.train()
    report = _lbfgs.counted(optimizer, evaluate, sign=1)
    t0 = time.monotonic()
    z, value = maximize(report, np.clip(coords.z(), coords.bounds[:, 0], coords.bounds[:, 1]), coords.bounds,
                        tol=optimizer.tol, patience=optimizer.patience, max_evaluations=optimizer.max_evaluations,
                        max_seconds=optimizer.max_seconds, warning=OptimizationWarning, stacklevel=3)
    coords.assign(z)
    mll.zero_grad()
    stopped = optimizer.n_evaluations_ >= optimizer.max_evaluations
    return OptimizationResult(step=optimizer.n_evaluations_, fval=-value / mll.model.train_targets.shape[-1],
                              status=OptimizationStatus.STOPPED if stopped else OptimizationStatus.SUCCESS,
                              runtime=time.monotonic() - t0,
                              message="Fisher scoring: %d evaluations" % optimizer.n_evaluations_)
