"""A graphgram graph kernel as a GPyTorch kernel over indices into a pool of graphs."""


import numbers
from collections import OrderedDict

import gpytorch
import numpy as np
import torch
from gpytorch.constraints import Interval
from linear_operator.operators import LowRankRootLinearOperator, MatmulLinearOperator
from sklearn.base import clone
from sklearn.utils import check_random_state

from ..gaussian_process import LowRankGraphKernel
from ..gaussian_process._nystrom import METHODS, check_jitter, cholesky_factor, choose, project
from ..graph import as_graph_list, take
from ..kernels._base import GraphKernelBase
from ..kernels._normalize import cosine_normalize, normalize_exponent, normalize_symmetric, normalized_diag
from ..kernels._explicit import _ExplicitFeatureKernel
from ._blocks import cover

__all__ = ["GPyTorchGraphKernel"]

# Pools of at most this many graphs keep every value computed at the current
# hyperparameters in one dense matrix (at most 128 MiB), so that BoTorch's
# repeated posteriors over a candidate library compute each pair once per θ.
_DENSE_CACHE_MAX = 4096
# Larger pools keep, at the current θ, the columns K(pool, j) of the graphs j
# that a call pairs with half of its graphs or more (the measured molecules of
# a BO loop against a batch of candidates), each computed whole in one call, in
# at most this many bytes (the least recently used dropped first): the round
# after a new measurement computes the new molecule's column, not the
# library's values against every measured molecule again.
_COLUMN_CACHE_BYTES = 1 << 30
# A graph is paired with this many graphs of a call at least to get a column.
_COLUMN_MIN_PAIRS = 64


class _Cache:
    """What a kernel keeps between calls at one θ: computed values and the last gradient.

    Dropped on pickling and whenever θ changes; values are those the graph
    kernel computes, so a cached value and a fresh one are the same bits.
    """

    def __init__(self):
        self.theta = None
        self.values = None          # (pool, pool) float64, NaN where not computed
        self.gradient_key = None
        self.gradient = None        # (K, dK) on the positions of gradient_key
        self.features = None        # the pool's feature map and raw diagonal; False: not applicable
        self.columns = None         # large pools: pool index -> (pool,) float64, NaN where not computed
        self.diagonal = None        # large pools: the self-similarities, NaN where not computed
        self.raw_diagonal = None    # large pools: the raw self-similarities, for normalized columns

    def __reduce__(self):
        return (_Cache, ())

    def at(self, theta, n_pool):
        """The value matrix for θ (None for large pools), emptied if θ changed."""
        key = theta.tobytes()
        if key != self.theta:
            self.theta, self.values, self.gradient_key, self.gradient = key, None, None, None
            self.columns = self.diagonal = self.raw_diagonal = None
        if self.values is None and n_pool <= _DENSE_CACHE_MAX:
            self.values = np.full((n_pool, n_pool), np.nan)
        if n_pool > _DENSE_CACHE_MAX and self.columns is None:
            self.columns, self.diagonal = OrderedDict(), np.full(n_pool, np.nan)
        return self.values

    def from_columns(self, positions):
        """K on positions (u×u) from the kept columns and diagonal, NaN where none has it."""
        K = np.diag(self.diagonal[positions])
        K[~np.eye(len(positions), dtype=bool)] = np.nan
        for k, p in enumerate(positions):
            col = self.columns.get(p)
            if col is not None:
                self.columns.move_to_end(p)
                K[:, k] = K[k, :] = col[positions]  # symmetric, bit for bit
        return K

    def new_hubs(self, positions, need, n_pool):
        """The positions paired with half of the call's graphs or more (at least
        _COLUMN_MIN_PAIRS), some of them outside that set (candidates: a training
        Gram makes no columns), that have no column yet; none when their columns
        would not fit in _COLUMN_CACHE_BYTES."""
        pairs = need.sum(axis=0) + need.sum(axis=1)
        hubs = pairs >= max(_COLUMN_MIN_PAIRS, len(positions) // 2)
        new = np.array([k for k in np.flatnonzero(hubs) if positions[k] not in self.columns], dtype=np.int64)
        if len(new):
            new = new[need[np.ix_(new, ~hubs)].any(axis=1) | need[np.ix_(~hubs, new)].any(axis=0)]
        return self.fitting(new, n_pool)

    def fitting(self, new, n_pool):
        """new, or none of it when its columns would not fit in _COLUMN_CACHE_BYTES."""
        return new if len(new) * n_pool * 8 <= _COLUMN_CACHE_BYTES else new[:0]

    def store_columns(self, positions, columns):
        """Keep whole columns K(pool, p), one per position (least recently used dropped
        first beyond _COLUMN_CACHE_BYTES), and the self-similarities they hold."""
        n_pool = columns.shape[0]
        for k, p in enumerate(positions):
            self.columns[p] = np.ascontiguousarray(columns[:, k])
            self.diagonal[p] = columns[p, k]
        while len(self.columns) * n_pool * 8 > _COLUMN_CACHE_BYTES and len(self.columns) > 1:
            self.columns.popitem(last=False)

    def to_diagonal(self, positions, K):
        """Keep the self-similarities K holds."""
        d = np.diagonal(K)
        self.diagonal[positions[~np.isnan(d)]] = d[~np.isnan(d)]


class _Gram(torch.autograd.Function):
    """K(x1, x2) from the graph kernel, with its gradient in θ from the same core call."""

    @staticmethod
    def forward(ctx, theta, module, request):
        # In training the gradient is all but certain to be asked for: one core
        # call gives K and every ∂K/∂θ. Elsewhere it is computed only if asked.
        t = theta.detach().cpu().numpy().astype(np.float64)
        G = None
        ctx.module, ctx.request, ctx.theta, ctx.theta_dtype, ctx.theta_device = module, request, t, theta.dtype, theta.device
        if ctx.needs_input_grad[0] and module.training:
            Kl, G = module._local_gradient(t, request)
        elif request.self_only and len(module.graphs) > _DENSE_CACHE_MAX:
            # Self-similarities of a large pool (a posterior's variances over a
            # library): a vector, never a u×u matrix.
            ctx.G = None
            return torch.from_numpy(module._self_values(t, request.positions)[request.rows])
        else:
            Kl = module._local_values(t, request)
        ctx.G = G
        return torch.from_numpy(Kl[request.rows, request.cols])

    @staticmethod
    def backward(ctx, grad_K):
        G = ctx.G if ctx.G is not None else ctx.module._local_gradient(ctx.theta, ctx.request)[1]
        r = ctx.request
        u = len(r.positions)
        g = grad_K.detach().cpu().numpy().astype(np.float64)
        flat = (r.rows * u + r.cols).ravel()
        S = np.bincount(flat, weights=np.broadcast_to(g, r.rows.shape).ravel(), minlength=u * u).reshape(u, u)
        grad = np.tensordot(S, G, axes=([0, 1], [0, 1]))
        return torch.as_tensor(grad, dtype=ctx.theta_dtype, device=ctx.theta_device), None, None

    @staticmethod
    def jvp(ctx, theta_tangent, module_tangent, request_tangent):
        # Forward mode (FisherScoring's ∂K/∂θ_i, one direction per pass): ∂K/∂θ · t
        # from the same gradient matrices as backward (kept at this θ by the cache).
        G = ctx.G if ctx.G is not None else ctx.module._local_gradient(ctx.theta, ctx.request)[1]
        t = theta_tangent.detach().cpu().numpy().astype(np.float64)
        r = ctx.request
        return torch.from_numpy((G @ t)[r.rows, r.cols])


def _theta_of(module):
    """The prior's closure (a module-level function, so that the kernel pickles)."""
    return module.theta


def _set_theta(module, value):
    """The prior's setting closure (BoTorch's ``sample_all_priors`` draws starting points)."""
    module.theta = value


def _hubs(request):
    """For a batched request (BoTorch's posteriors: each batch one candidate with the
    same measured graphs), the positions present in at least half the batches, when
    every batch has at most one other position on each side, the same one where it
    has one on both (pairs with the hubs and self-similarities are then all it
    needs); else None."""
    r, c = request.local_rows, request.local_cols
    if request.diag or r.ndim < 2 or c.ndim < 2 or r.shape[:-1] != c.shape[:-1]:
        return None
    batches = int(np.prod(r.shape[:-1]))
    if batches < 8:
        return None
    u = len(request.positions)
    hub = np.bincount(r.reshape(-1), minlength=u) + np.bincount(c.reshape(-1), minlength=u) >= batches
    other_r, other_c = ~hub[r], ~hub[c]
    if other_r.sum(axis=-1).max() > 1 or other_c.sum(axis=-1).max() > 1:
        return None
    # Each batch's pair of other positions, if it has one on both sides, is a self-pair.
    rr = np.where(other_r, r, -1).max(axis=-1)
    cc = np.where(other_c, c, -1).max(axis=-1)
    return hub if np.all((rr == cc) | (rr < 0) | (cc < 0)) else None


def _feature_gram(features, s, request):
    """The request's local values from the pool's feature map (F, raw diagonal d),
    normalized with exponent s: the pairs with the hubs and the self-similarities
    for BoTorch's batched posteriors (_hubs), else the whole local Gram matrix."""
    F, d = features
    pos = request.positions
    hub = _hubs(request)
    if hub is None:
        K = (F[pos] @ F[pos].T).toarray()
        return normalize_symmetric(K, d[pos], s) if s else K
    K = np.full((len(pos),) * 2, np.nan)
    H = np.flatnonzero(hub)
    B = (F[pos[H]] @ F[pos].T).toarray()
    if s:
        B = cosine_normalize(B, d[pos[H]], d[pos], s)
    K[H, :] = B
    K[:, H] = B.T
    np.fill_diagonal(K, normalized_diag(d[pos], s))
    return K


def _feature_block(features, s, rows, cols):
    """K(rows, cols) from the pool's features (F, raw d), normalized with exponent s
    as the kernel's calls normalize it; rows None: every graph of the pool."""
    F, d = features
    Fr, dr = (F, d) if rows is None else (F[rows], d[rows])
    B = np.asarray((Fr @ F[cols].T).toarray(), dtype=np.float64)
    return cosine_normalize(B, dr, d[cols], s) if s else B


class _Request:
    """The pairs one call needs: pool positions, and each entry's local row and column.

    ``rows`` and ``cols`` index ``positions`` and have the output's shape (they
    are broadcast views); ``need`` marks the local pairs to compute.
    """

    def __init__(self, i1, i2, diag):
        both = np.concatenate([i1.ravel(), i2.ravel()])
        self.positions, inverse = np.unique(both, return_inverse=True)
        inverse = np.ravel(inverse)
        r = inverse[:i1.size].reshape(i1.shape)
        c = inverse[i1.size:].reshape(i2.shape)
        if diag:
            self.rows, self.cols = np.broadcast_arrays(r, c)
        else:
            self.rows, self.cols = np.broadcast_arrays(r[..., :, None], c[..., None, :])
        # Only self-similarities: K(x, x) for each x (diag=True on one set).
        self.self_only = bool(diag) and r.shape == c.shape and np.array_equal(r, c)
        self.diag, self.local_rows, self.local_cols = bool(diag), r, c  # before broadcasting
        self._need = None

    @property
    def need(self):
        """ndarray of bool (u, u): the local pairs to compute (built on first use)."""
        if self._need is None:
            u = len(self.positions)
            self._need = np.zeros((u, u), dtype=bool)
            self._need[self.rows, self.cols] = True
        return self._need


class GPyTorchGraphKernel(gpytorch.kernels.Kernel):
    r"""A graphgram graph kernel as a GPyTorch kernel, with its hyperparameters learnt.

    GPyTorch and BoTorch models take tensors, not graphs: the kernel holds a
    pool of graphs (the training graphs and the candidates) and its inputs are tensors whose
    column holds indices into the pool (``graphs``), float or integer (``train_X =
    torch.arange(n, dtype=torch.float64)[:, None]`` for the first n graphs).
    Stock ``SingleTaskGP``, ``fit_gpytorch_mll``, ``ScaleKernel`` and the kernel
    algebra, BoTorch's batched posteriors (``batch × q × 1``) and
    ``optimize_acqf_discrete`` over candidate indices work unchanged.

    The graph kernel's non-fixed hyperparameters (scikit-learn's ``theta``:
    the log of q and of the base kernels' parameters) are one GPyTorch
    parameter, ``raw_theta``, under an ``Interval`` constraint equal to their
    bounds; ``theta`` is the constrained value. Gradients come from the graph
    kernel's analytic derivatives (for the marginalized kernel, one adjoint
    solve per pair): K and every ∂K/∂θ in one call of graphgram's core, never
    finite differences.

    Each call computes only the pairs it has not computed at the same θ:
    pools of up to 4096 graphs keep every value computed at the current θ (the
    cache empties when θ changes), and the last gradient is kept too. Larger
    pools (a library) keep, at the current θ, the self-similarities and the
    columns K(pool, j) of the graphs paired with many others in a call (the
    measured molecules of a BO loop), up to 1 GiB: reuse the kernel from round to round (``covar_module``
    of the last model) and a round with the hyperparameters kept computes the
    new measurements' columns only.
    Explicit-feature kernels whose values are dot products of integer counts
    (Weisfeiler-Lehman, vertex and edge histograms) compute the whole pool's
    features once and every block from them by sparse products, with the
    same values: a BoTorch round over a library of 10⁵ molecules does not
    compute features again.

    To combine the graph with other inputs (descriptors, temperature), give the
    inputs more columns and the kernel ``active_dims=[k]``, the column of
    indices, then multiply or add GPyTorch kernels on the other columns.

    Parameters
    ----------
    kernel : graphgram graph kernel
        Any of graphgram's graph kernels (marginalized, :func:`molecular_kernel`,
        Weisfeiler-Lehman and the other explicit-feature kernels, shortest
        path, ...). Copied; its values at the current ``theta`` come from
        :meth:`to_sklearn`. Its ``verbose`` shows progress bars of long
        calls, and Ctrl-C stops them, as in scikit-learn.
    graphs : list of Graph or GraphLibrary
        The pool: the graphs the input indices refer to (training graphs and
        candidates alike), kept as the attribute ``graphs``; checked once for
        the attributes the kernel reads. A :class:`~graphgram.GraphLibrary`
        (candidate molecules loaded from its store) is used as it is. The
        docs of this module call it the pool whatever holds it.
    learn_hyperparameters : bool, default=None
        Register the hyperparameters as a parameter to learn (``True``) or keep
        them at the kernel's values (``False``). ``None``: learn them when the
        kernel has any.
    theta_prior : gpytorch.priors.Prior, default=None
        A prior over ``theta`` (the log hyperparameters, one entry each, in
        the order of ``hyperparameter_names``), registered as
        ``theta_prior``: the marginal log likelihood adds its log density,
        so that a fit on few data stays near where the prior puts the
        hyperparameters (:func:`molecular_bo_kernel`'s use). Only with
        hyperparameters to learn.
    inducing : int or sequence of int, default=None
        Make the kernel low-rank (Nyström, subset of regressors): K(X, Y) =
        K(X, Z) K(Z, Z)⁻¹ K(Z, Y) through m inducing graphs Z of the pool, given
        by their indices, or a number m of them chosen from the whole pool at
        the first call by ``inducing_method`` (m columns of the pool's kernel
        matrix). A call on n graphs then computes n·m pairs instead of n²/2,
        and GPyTorch solves with K as a rank-m root (Woodbury) plus the noise.
        Gradients flow through both factors.
    inducing_method : {"kmeans++", "pivoted_cholesky", "random"}, default="kmeans++"
        How m inducing graphs are chosen, as in
        :class:`~graphgram.LowRankGraphKernel`.
    jitter : float, default=1e-8
        Added to K(Z, Z)'s diagonal, relative to its mean, and raised tenfold
        (to at most 1e-2, with a RuntimeWarning) while its Cholesky
        factorization fails, as in :class:`~graphgram.LowRankGraphKernel`.
    random_state : int, RandomState or None, default=0
        Seed of the inducing graphs' choice.
    dask : bool, default=False
        ``True``: whole columns K(pool, j) — a BO round's measured molecules
        against a large library, the kept columns above 4,096 graphs —
        are computed as blocks on the current Dask client
        (``distributed.get_client()``) by :func:`graphgram.distributed.gram`,
        the same values bit for bit as in one process; the rest (the
        training Gram and its gradient, BoTorch's batches) stays local. A
        flag rather than a client object, so that the kernel stays plain data.
    **kwargs
        GPyTorch's kernel arguments (``active_dims``, ``batch_shape``).

    Attributes
    ----------
    hyperparameter_names : tuple of str
        The names of ``theta``'s entries, scikit-learn's (``q``,
        ``node_kernel__element__h``, ...).
    inducing_indices_ : ndarray of int
        With ``inducing``: the pool indices of the inducing graphs (set at
        the first call when they are chosen).

    Examples
    --------
    >>> import torch
    >>> from botorch.models import SingleTaskGP
    >>> from botorch.fit import fit_gpytorch_mll
    >>> from gpytorch.kernels import ScaleKernel
    >>> from gpytorch.mlls import ExactMarginalLogLikelihood
    >>> from graphgram import molecular_kernel, molecules
    >>> from graphgram.gpytorch import GPyTorchGraphKernel
    >>> pool = [molecules.from_smiles(s) for s in ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl"]]
    >>> X = torch.arange(4, dtype=torch.float64)[:, None]
    >>> y = torch.tensor([[0.1], [0.3], [-0.2], [1.0]], dtype=torch.float64)
    >>> covar = ScaleKernel(GPyTorchGraphKernel(molecular_kernel(verbose=False), pool))
    >>> gp = SingleTaskGP(X, y, covar_module=covar)
    >>> _ = fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    >>> gp.posterior(torch.tensor([[4.0], [5.0]], dtype=torch.float64)).mean.shape
    torch.Size([2, 1])
    """

    has_lengthscale = False

    def __init__(self, kernel, graphs, learn_hyperparameters=None, inducing=None, inducing_method="kmeans++",
                 jitter=1e-8, random_state=0, dask=False, theta_prior=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(kernel, LowRankGraphKernel):
            raise TypeError("give GPyTorchGraphKernel the LowRankGraphKernel's graph kernel and inducing=m (or the "
                            "inducing graphs' pool indices): it makes the kernel low-rank itself")
        if not isinstance(kernel, GraphKernelBase):
            raise TypeError("kernel must be a graphgram graph kernel (e.g. MarginalizedGraphKernel), got %s"
                            % type(kernel).__name__)
        kernel = clone(kernel)
        kernel._check_params()
        pool = as_graph_list(graphs, "graphs")
        kernel._validate(pool, "graphs")
        self.graph_kernel = kernel
        self.graphs = pool
        names = []
        for h in kernel.hyperparameters:
            if not h.fixed:
                names += [h.name] if h.n_elements == 1 else ["%s[%d]" % (h.name, e) for e in range(h.n_elements)]
        self.hyperparameter_names = tuple(names)
        theta = np.asarray(kernel.theta, dtype=np.float64)
        learn = learn_hyperparameters
        if learn is None:
            learn = len(theta) > 0
        elif not isinstance(learn, (bool, np.bool_)):
            raise TypeError("learn_hyperparameters must be True, False or None, got %r" % (learn,))
        if learn and not len(theta):
            raise ValueError("%s has no hyperparameters to learn (its theta is empty): leave "
                             "learn_hyperparameters at None or set it to False" % type(kernel).__name__)
        if learn:
            bounds = np.asarray(kernel.bounds, dtype=np.float64).reshape(-1, 2)
            for name, (lo, hi) in zip(names, bounds):
                if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                    raise ValueError("hyperparameter %s has bounds (%g, %g): learning it needs finite bounds "
                                     "with lower < upper" % (name, np.exp(lo), np.exp(hi)))
            self.register_parameter("raw_theta", torch.nn.Parameter(torch.zeros(len(theta), dtype=torch.float64)))
            interval = Interval(bounds[0, 0], bounds[0, 1])
            # Interval rounds its bounds to the default dtype (float32): a theta on
            # its bound (fits often end there) would map outside them, to NaN.
            interval.lower_bound = torch.as_tensor(bounds[:, 0])
            interval.upper_bound = torch.as_tensor(bounds[:, 1])
            self.register_constraint("raw_theta", interval)
            self.theta = theta
        else:
            self.register_buffer("fixed_theta", torch.as_tensor(theta))
        if theta_prior is not None:
            if not learn:
                raise ValueError("theta_prior is a prior over hyperparameters to learn: %s"
                                 % ("the kernel has none" if not len(theta) else "learn_hyperparameters is False"))
            if not isinstance(theta_prior, gpytorch.priors.Prior):
                raise TypeError("theta_prior must be a gpytorch.priors.Prior over theta, got %s"
                                % type(theta_prior).__name__)
            self.register_prior("theta_prior", theta_prior, _theta_of, _set_theta)
        self._check_inducing(inducing, inducing_method, jitter, len(pool))
        if not isinstance(dask, (bool, np.bool_)):
            raise TypeError("dask must be True or False, got %r" % (dask,))
        self.inducing, self.inducing_method, self.jitter, self.random_state = (inducing, inducing_method, jitter,
                                                                               random_state)
        self.dask = bool(dask)
        if inducing is not None and not isinstance(inducing, numbers.Integral):
            self.inducing_indices_ = self._indices(torch.as_tensor(np.asarray(inducing))[:, None], "inducing")
        self._cache = _Cache()

    @staticmethod
    def _check_inducing(inducing, method, jitter, n):
        if inducing is None:
            return
        if isinstance(inducing, numbers.Integral) and not isinstance(inducing, bool):
            if not 1 <= inducing <= n:
                raise ValueError("inducing=%d graphs to choose from a pool of %d: give 1 to %d" % (inducing, n, n))
            if method not in METHODS:
                raise ValueError("inducing_method must be one of %s, got %r" % (", ".join(map(repr, METHODS)),
                                                                               method))
        elif isinstance(inducing, (bool, float, str, bytes)) or np.ndim(inducing) != 1 or not len(inducing):
            raise TypeError("inducing must be None, a number of graphs or a list of pool indices, got %r"
                            % (inducing,))
        check_jitter(jitter)

    # --- hyperparameters ------------------------------------------------------
    @property
    def theta(self):
        """Tensor: the log of the graph kernel's non-fixed hyperparameters (scikit-learn's ``theta``)."""
        if hasattr(self, "raw_theta"):
            return self.raw_theta_constraint.transform(self.raw_theta)
        return self.fixed_theta

    @theta.setter
    def theta(self, value):
        if not hasattr(self, "raw_theta"):
            raise AttributeError("the hyperparameters are fixed (learn_hyperparameters=False)")
        c = self.raw_theta_constraint
        v = torch.as_tensor(value, dtype=self.raw_theta.dtype, device=self.raw_theta.device).reshape(-1)
        if v.shape != self.raw_theta.shape:
            raise ValueError("theta has %d values, the kernel %d hyperparameters" % (v.numel(), self.raw_theta.numel()))
        # Strictly inside the bounds: the constraint's inverse is infinite on them.
        lo, hi = c.lower_bound.to(v), c.upper_bound.to(v)
        margin = 1e-9 * (hi - lo)
        self.initialize(raw_theta=c.inverse_transform(torch.minimum(torch.maximum(v, lo + margin), hi - margin)))

    def hyperparameter_values(self):
        """Return the hyperparameters' current values (not logs) by scikit-learn name, as floats."""
        return dict(zip(self.hyperparameter_names, np.exp(self.theta.detach().cpu().numpy()).tolist()))

    def to_sklearn(self):
        """Return the graph kernel at the current hyperparameters, a graphgram (scikit-learn) kernel."""
        return self._kernel_at(self.theta.detach().cpu().numpy().astype(np.float64))

    def _kernel_at(self, theta):
        kernel = clone(self.graph_kernel)
        if len(theta):
            kernel.theta = theta
        return kernel

    # --- inputs -------------------------------------------------------------------
    def _indices(self, x, name):
        """The pool indices held by x (..., n, 1), as an int64 array (..., n); errors name the entry."""
        if x.shape[-1] != 1:
            raise ValueError("%s has %d columns: GPyTorchGraphKernel reads one column of graph indices; give it "
                             "active_dims=[k], k the column holding them" % (name, x.shape[-1]))
        if x.is_complex() or x.dtype == torch.bool:
            raise TypeError("%s holds %s: graph indices are integers (in a float or integer tensor)" % (name, x.dtype))
        v = x[..., 0].detach().cpu().numpy()
        n = len(self.graphs)
        if np.issubdtype(v.dtype, np.floating):
            bad = ~np.isfinite(v) | (v != np.round(v))
            if bad.any():
                at = tuple(int(a) for a in np.argwhere(bad)[0])
                raise ValueError("%s%s = %r is not a graph index: indices are integers from 0 to %d, the pool's "
                                 "positions (an input transform such as BoTorch's Normalize must leave the index "
                                 "column out: indices=[the other columns])" % (name, list(at) + [0], float(v[at]), n - 1))
        out = (v < 0) | (v >= n)
        if out.any():
            at = tuple(int(a) for a in np.argwhere(out)[0])
            raise IndexError("%s%s = %d is out of range: the kernel's pool holds %d graphs (indices 0 to %d)"
                             % (name, list(at) + [0], int(v[at]), n, n - 1))
        return v.astype(np.int64)

    def forward(self, x1, x2, diag=False, last_dim_is_batch=False, **params):
        if last_dim_is_batch:
            raise NotImplementedError("GPyTorchGraphKernel has one input column: last_dim_is_batch does not apply")
        if x1.device != x2.device:
            raise ValueError("x1 is on %s and x2 on %s: give both on one device" % (x1.device, x2.device))
        i1, i2 = self._indices(x1, "x1"), self._indices(x2, "x2")
        dtype = x1.dtype if x1.is_floating_point() else torch.float64
        if self.inducing is None:
            K = _Gram.apply(self.theta, self, _Request(i1, i2, bool(diag)))
            return K.to(dtype=dtype, device=x1.device)
        # Low rank: K(X, Y) = R_X R_Yᵀ with R = K(·, Z) L⁻ᵀ, L L ᵀ = K(Z, Z) + εI.
        theta, Z = self.theta, self._inducing_positions()
        L = self._factor(_Gram.apply(theta, self, _Request(Z, Z, False)))
        roots = []
        for i in (i1,) if (x1 is x2 or np.array_equal(i1, i2)) else (i1, i2):
            Kxz = _Gram.apply(theta, self, _Request(i, Z, False))
            roots.append(project(Kxz, L).to(dtype=dtype, device=x1.device))
        Rx, Ry = roots[0], roots[-1]
        if diag:
            return (Rx * Ry).sum(-1)
        if len(roots) == 1:
            return LowRankRootLinearOperator(Rx)
        return MatmulLinearOperator(Rx, Ry.transpose(-1, -2))

    def _inducing_positions(self):
        """The inducing graphs' pool indices, chosen at the first call when ``inducing`` is a number."""
        if not hasattr(self, "inducing_indices_"):
            theta = self.theta.detach().cpu().numpy().astype(np.float64)
            self.inducing_indices_ = np.asarray(choose(self._kernel_at(theta), self.graphs, int(self.inducing),
                                                       self.inducing_method, check_random_state(self.random_state)),
                                                dtype=np.int64)
        return self.inducing_indices_

    def _factor(self, Kzz):
        """The lower Cholesky factor of K(Z, Z) + εI (differentiable), ε raised as LowRankGraphKernel's."""
        return cholesky_factor(Kzz, self.jitter, stacklevel=6)

    def _subset(self, request, local):
        return take(self.graphs, request.positions[local])

    def _local_values(self, theta, request):
        """K on the request's positions (u×u, NaN where not needed), from the cache where it has them."""
        pos = request.positions
        cache = self._cache.at(theta, len(self.graphs))
        kernel = self._kernel_at(theta)
        features = self._pool_features(kernel) if cache is None else None
        if features is not None:
            # Blocks from the pool's features cost less than keeping them; a few
            # thousand graphs (a batch of BoTorch's candidates with the measured
            # ones) get their whole local Gram matrix in one product.
            if len(pos) <= _DENSE_CACHE_MAX:
                return _feature_gram(features, normalize_exponent(kernel.normalize), request)
            K = np.full((len(pos),) * 2, np.nan)
            self._fill(kernel, request, request.need, K)
            return K
        if cache is not None:
            K = cache[np.ix_(pos, pos)]
        elif (hub := _hubs(request)) is not None:
            # BoTorch's batched posteriors: rows of the measured graphs (whole columns,
            # kept) and self-similarities (kept) are all they need; no u×u need matrix.
            H = np.flatnonzero(hub)
            self._keep_columns(kernel, pos[H])
            if all(p in self._cache.columns for p in pos[H]):
                K = self._cache.from_columns(pos)
                d = np.flatnonzero(np.isnan(np.diagonal(K)))
                if len(d):
                    K[d, d] = self._self_values(theta, pos[d])
                return K
            K = self._cache.from_columns(pos)
        else:
            # A graph paired with many in this call (a measured molecule against a
            # batch of candidates) gets its whole column K(pool, j) in one call of
            # the core, which the later batches and rounds read.
            K = self._cache.from_columns(pos)
            new = self._cache.new_hubs(pos, request.need & np.isnan(K), len(self.graphs))
            if len(new):
                self._cache.store_columns(pos[new], self._columns(kernel, pos[new]))
                K = self._cache.from_columns(pos)
        missing = request.need & np.isnan(K)
        if missing.any():
            self._fill(kernel, request, missing, K)
            if cache is not None:
                cache[np.ix_(pos, pos)] = K
            else:
                self._cache.to_diagonal(pos, K)
        return K

    def _columns(self, kernel, positions):
        """The whole columns K(pool, positions), normalized as the kernel is, with the
        pool's raw self-similarities computed once per θ (a column of a normalized
        kernel needs all of them); on the current Dask client with ``dask=True``."""
        if self.dask:
            from .. import distributed
            return distributed.gram(kernel, self.graphs, take(self.graphs, positions))
        raw = None
        if normalize_exponent(kernel.normalize):
            if self._cache.raw_diagonal is None:
                self._cache.raw_diagonal = kernel._raw_diag(self.graphs)
            raw = self._cache.raw_diagonal
        return kernel._cross_gram(self.graphs, take(self.graphs, positions), raw)

    def _pool_columns(self, theta, positions):
        """K(pool, positions) at θ (pool × len(positions)), the values the kernel's calls
        give: from the pool's features, else from the kept columns or dense cache, the
        missing columns computed whole (and kept where they fit)."""
        positions = np.asarray(positions, dtype=np.int64)
        kernel = self._kernel_at(theta)
        features = self._pool_features(kernel)
        if features is not None:
            return _feature_block(features, normalize_exponent(kernel.normalize), None, positions)
        values = self._cache.at(theta, len(self.graphs))
        if values is not None:
            new = np.unique(positions[np.isnan(values[:, positions]).any(axis=0)])
            if len(new):
                C = self._columns(kernel, new)
                values[:, new], values[new, :] = C, C.T
            return values[:, positions].copy()
        self._keep_columns(kernel, positions)
        out = np.empty((len(self.graphs), len(positions)))
        rest = [k for k, p in enumerate(positions) if p not in self._cache.columns]
        if rest:
            out[:, rest] = self._columns(kernel, positions[rest])
        for k, p in enumerate(positions):
            col = self._cache.columns.get(p)
            if col is not None:
                out[:, k] = col
        return out

    def _keep_columns(self, kernel, positions):
        """Compute and keep the whole columns of the positions that have none yet (large
        pools), all of them or none when they would not fit in _COLUMN_CACHE_BYTES."""
        new = np.array([p for p in dict.fromkeys(positions.tolist()) if p not in self._cache.columns],
                       dtype=np.int64)
        new = self._cache.fitting(new, len(self.graphs))
        if len(new):
            self._cache.store_columns(new, self._columns(kernel, new))

    def _block_values(self, theta, rows, cols):
        """K(pool[rows], pool[cols]) at θ, the values the kernel's calls give (normalized
        as it is; the large pool's kept raw self-similarities used where it has them)."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        kernel = self._kernel_at(theta)
        features = self._pool_features(kernel)
        s = normalize_exponent(kernel.normalize)
        if features is not None:
            return _feature_block(features, s, rows, cols)
        self._cache.at(theta, len(self.graphs))
        raw = self._cache.raw_diagonal
        return kernel._cross_gram(take(self.graphs, rows), take(self.graphs, cols),
                                  None if raw is None or not s else raw[rows])

    def _self_values(self, theta, positions):
        """K(x, x) for the pool positions, from the pool's features or the kept diagonal
        (computing those it lacks): the same values as in a Gram block."""
        kernel = self._kernel_at(theta)
        features = self._pool_features(kernel)
        s = normalize_exponent(kernel.normalize)
        if features is not None:
            d = features[1][positions]
            return normalized_diag(d, s)
        values = self._cache.at(theta, len(self.graphs))
        diagonal = self._cache.diagonal if values is None else np.diagonal(values).copy()
        todo = np.unique(positions[np.isnan(diagonal[positions])])
        if len(todo):
            diagonal[todo] = kernel.diag(take(self.graphs, todo))
            if values is not None:
                values[todo, todo] = diagonal[todo]
        return diagonal[positions]

    def _local_gradient(self, theta, request):
        """K and ∂K/∂θ on the request's positions (u×u and u×u×d), zero where not needed."""
        self._cache.at(theta, len(self.graphs))
        key = (request.positions.tobytes(), np.packbits(request.need).tobytes())
        if self._cache.gradient_key == key:
            return self._cache.gradient
        u, d = len(request.positions), len(theta)
        K, G = np.zeros((u, u)), np.zeros((u, u, d))
        self._fill(self._kernel_at(theta), request, request.need, K, G)
        cache = self._cache.values
        if cache is not None:
            pos = request.positions
            cache[np.ix_(pos, pos)] = np.where(request.need | request.need.T, K, cache[np.ix_(pos, pos)])
        self._cache.gradient_key, self._cache.gradient = key, (K, G)
        return K, G

    def _pool_features(self, kernel):
        """(F, d): the whole pool's explicit feature map (CSR) and raw self-similarities,
        computed once, when the kernel's raw values are F's dot products exactly: an
        explicit-feature kernel without hyperparameters whose features are integer counts
        (their float64 products and sums are exact, so the values are the core's bits),
        checked against the core on a few graphs of the pool. None otherwise."""
        c = self._cache
        if c.features is None:
            c.features = False
            if isinstance(kernel, _ExplicitFeatureKernel) and not len(kernel.theta):
                try:
                    F = kernel.features(self.graphs).tocsr()
                except NotImplementedError:
                    return None
                if F.nnz and not np.all(F.data == np.round(F.data)):
                    return None
                few = np.arange(min(8, len(self.graphs)))
                sub = take(self.graphs, few)
                if np.array_equal((F[few] @ F[few].T).toarray(), kernel._compute("gram", sub, sub)[0]):
                    c.features = (F, np.asarray(F.multiply(F).sum(axis=1), dtype=np.float64).ravel())
        return c.features or None

    def _fill(self, kernel, request, missing, K, G=None):
        """Compute the local pairs ``missing`` marks (read as symmetric) into K, and their
        ∂K/∂θ into G when given: few Gram blocks (:func:`cover`), each written with its
        mirror, then the self-similarities that no symmetric block gave. Explicit-feature
        kernels take their blocks from the pool's feature map (computed once: a BO round
        over a large library then costs sparse products, not features again)."""
        features = self._pool_features(kernel)
        if features is not None:
            self._fill_from_features(kernel, features, request, missing, K)
            return
        covered = np.zeros(len(K), dtype=bool)
        for R, C in cover(missing):
            X = self._subset(request, R)
            Y = None if R is C else self._subset(request, C)
            covered[R] |= Y is None
            if G is None:
                B = kernel._symmetric_gram(X)[0] if Y is None else kernel._cross_gram(X, Y)
            else:
                B, GB = kernel._block_gradient(X, Y)
                G[np.ix_(R, C)], G[np.ix_(C, R)] = GB, GB.transpose(1, 0, 2)
            K[np.ix_(R, C)], K[np.ix_(C, R)] = B, B.T
        d = np.flatnonzero(np.diagonal(missing) & ~covered)
        if len(d):
            if G is None:
                K[d, d] = kernel.diag(self._subset(request, d))
            else:
                K[d, d], G[d, d] = kernel._diag_gradient(self._subset(request, d))

    def _fill_from_features(self, kernel, features, request, missing, K):
        """_fill from the pool's feature map: the same values as the kernel's calls, bit
        for bit (raw products exact; normalized by the same functions)."""
        d = features[1]
        s = normalize_exponent(kernel.normalize)
        covered = np.zeros(len(K), dtype=bool)
        for R, C in cover(missing):
            covered[R] |= R is C
            B = _feature_block(features, s, request.positions[R], request.positions[C])
            K[np.ix_(R, C)], K[np.ix_(C, R)] = B, B.T
        diag = np.flatnonzero(np.diagonal(missing) & ~covered)
        if len(diag):
            pos = request.positions[diag]
            K[diag, diag] = normalized_diag(d[pos], s)

    def __repr__(self):
        return "GPyTorchGraphKernel(%r, %d graphs)" % (self.graph_kernel, len(self.graphs))
