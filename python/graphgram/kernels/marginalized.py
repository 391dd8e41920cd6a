"""The marginalized graph kernel (Kashima et al. 2003) in GraphDot's convention."""

import numbers

import numpy as np
from sklearn.base import clone
from sklearn.gaussian_process.kernels import Hyperparameter

from ..graph import node_counts
from ..microkernels import Constant
from ._base import GraphKernelBase, document_execution, as_graph_list
from ._normalize import (cosine_normalize, normalize_exponent, normalize_with_gradient,
                         normalized_diag_gradient)

__all__ = ["MarginalizedGraphKernel"]


def _is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and np.isfinite(x)


@document_execution(
    "On the GPU, ``\"float32\"`` stores and computes in single precision\n"
    "    (faster on most GPUs) and agrees with float64 to 1e-4 relative; ``accuracy``\n"
    "    finer than about 1e-6 cannot be met then.")
class MarginalizedGraphKernel(GraphKernelBase):
    r"""Marginalized graph kernel between labeled, weighted graphs.

    The kernel averages, over all pairs of random walks on two graphs, the
    product of node and edge base-kernel values along the walks (Kashima, Tsuda
    and Inokuchi 2003). Values follow GraphDot's convention, so that users moving
    from GraphDot get the same numbers: with degrees :math:`d_i=\sum_j w_{ij}` (a
    self-loop counted once, :math:`d_i=0` taken as 1),

    .. math::

        D = \mathrm{diag}(d \otimes d') / (1-q)^2,\quad
        V = \mathrm{diag}(\kappa_v(v_i, v'_{i'})),\quad
        W_{(i,i'),(j,j')} = w_{ij} w'_{i'j'} \kappa_e(e_{ij}, e'_{i'j'}),

    :math:`(D V^{-1} - W)\,x = D\,\mathbf 1` and
    :math:`K(G, G') = \sum_{i,i'} p_i p'_{i'} x_{(i,i')}`.

    The product system is solved in the Go core by conjugate gradient,
    preconditioned by symmetric Gauss–Seidel (or Jacobi with 8×8-tiled products
    for large pairs), formed on the fly from the two graphs, pairs spread over all
    cores; each graph is first reduced to its quotient under colour refinement
    where that is exact, and graphs with identical quotients are solved once.
    Each pair is solved in one orientation chosen from the two graphs' content,
    so that a value is the same bits in every call that holds the pair (see the
    README's "One value per pair"). On
    Gauss–Seidel pairs each value comes from two solves run side by side, the
    product system and its adjoint, whose solution corrects the value's error
    to the product of the two solves' errors: each stops near the square root
    of the accuracy asked for, in about 0.6 of the iterations one solve would
    take. A solve that reaches ``maxiter`` before its tolerance raises a
    ``ConvergenceWarning`` naming the pairs and their residuals.

    Parameters
    ----------
    node_kernel : microkernel, default=None
        Base kernel on node attributes, e.g. ``TensorProduct(label=KroneckerDelta(0.5))``.
        ``None`` means ``Constant(1.0)`` (unlabeled nodes).
    edge_kernel : microkernel, default=None
        Base kernel on edge attributes; ``None`` means ``Constant(1.0)``.
    q : float, default=0.01
        Stopping probability of the random walks, in (0, 1). Smaller values weigh
        longer walks more and need more solver iterations.
    q_bounds : pair of float or "fixed", default=(1e-4, 1 - 1e-4)
        Range of q for hyperparameter optimization; ``"fixed"`` excludes it from ``theta``.
    p : float, str or callable, default=1.0
        Start probability of each node: a constant, the name of a node attribute,
        or a function mapping a ``Graph`` to an array of one value per node.
    lmin : {0, 1}, default=0
        Shortest walk length counted; 1 drops the length-0 term (the node kernel).
    normalize : bool or float, default=False
        ``True``: the cosine-normalized kernel K(x, y) / sqrt(K(x, x) K(y, y)),
        which compares graphs independently of their sizes. A number s in
        [0, 1]: K(x, y) / (K(x, x) K(y, y))^(s/2), a size-dependent exponent
        between the raw kernel (s = 0, similarities grow with the graphs' sizes,
        suited to extensive properties such as atomization energies) and the
        cosine (s = 1, suited to intensive ones such as solubilities).
    accuracy : float, default=None
        The accuracy contract: every kernel value agrees with the exact solution
        of its linear system to this relative error. ``None`` means 1e-9; ask for
        less (e.g. 1e-6 for screening, faster) or more (down to about 1e-13).
        The solver derives its stopping tolerance from it (calibrated on MUTAG,
        ENZYMES and NCI1; see benchmarks/log/gradients_issue21.md).
    tol : float, default=None
        Expert setting: the relative residual at which each conjugate-gradient
        solve stops, overriding what ``accuracy`` implies; each value then
        comes from the product system's solve alone.
    maxiter : int, default=None
        Iteration cap of each solve (of each pair of solves run side by side);
        ``None`` uses the Go core's default.
    gradient_accuracy : float, default=None
        The relative accuracy of the gradients ∂K/∂θ that a Gaussian process's
        optimizer reads; ``None`` means 1e-6. The kernel values keep
        ``accuracy`` whatever this is, so a fitted model does not depend on
        it, only the optimizer's path does: 1e-3 made each evaluation on
        drug-size molecules 12-19 %% cheaper, but the changed paths took more
        evaluations or reached another local maximum (docs/gaussian_processes.md,
        "Fitting in minutes").
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import MarginalizedGraphKernel, datasets
    >>> from graphgram.microkernels import TensorProduct, KroneckerDelta
    >>> graphs, y = datasets.load_mutag()
    >>> kernel = MarginalizedGraphKernel(
    ...     TensorProduct(label=KroneckerDelta(0.5)),
    ...     TensorProduct(label=KroneckerDelta(0.5)), q=0.05)
    >>> K = kernel(graphs[:10])
    >>> K.shape
    (10, 10)
    """

    def __init__(self, node_kernel=None, edge_kernel=None, q=0.01, q_bounds=(1e-4, 1 - 1e-4), p=1.0, lmin=0,
                 normalize=False, accuracy=None, tol=None, maxiter=None, n_jobs=None, verbose=None, device="auto",
                 precision="float64", gradient_accuracy=None):
        self.node_kernel = node_kernel
        self.edge_kernel = edge_kernel
        self.q = q
        self.q_bounds = q_bounds
        self.p = p
        self.lmin = lmin
        self.normalize = normalize
        self.accuracy = accuracy
        self.tol = tol
        self.maxiter = maxiter
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision
        self.gradient_accuracy = gradient_accuracy

    _kernel = "marginalized"

    # --- parameters ---------------------------------------------------------
    def _kernels(self):
        # The stand-in for a missing base kernel has no free hyperparameter: a
        # constant factor on V or W is not something to optimize.
        node = Constant(1.0, "fixed") if self.node_kernel is None else self.node_kernel
        edge = Constant(1.0, "fixed") if self.edge_kernel is None else self.edge_kernel
        return node, edge

    def _q_fixed(self):
        return isinstance(self.q_bounds, str) and self.q_bounds == "fixed"

    @property
    def hyperparameters(self):
        """list of Hyperparameter: q, then the node kernel's (``node_kernel__...``), then
        the edge kernel's (``edge_kernel__...``), fixed ones included."""
        node, edge = self._kernels()
        hps = [Hyperparameter("q", "numeric", self.q_bounds)]
        for prefix, k in (("node_kernel__", node), ("edge_kernel__", edge)):
            hps += [Hyperparameter(prefix + h.name, h.value_type, h.bounds) for h in k.hyperparameters]
        return hps

    def _free_mask(self):
        return np.array([not h.fixed for h in self.hyperparameters], dtype=bool)

    def _raw_values(self):
        node, edge = self._kernels()
        return np.concatenate([[float(self.q)], node.hyperparameter_values(), edge.hyperparameter_values()])

    @property
    def theta(self):
        """ndarray: log of the non-fixed hyperparameters (see ``hyperparameters``)."""
        return np.log(self._raw_values()[self._free_mask()])

    @theta.setter
    def theta(self, theta):
        theta = np.asarray(theta, dtype=np.float64).ravel()
        if theta.shape[0] != self.n_dims:
            raise ValueError("theta has %d values, the kernel %d non-fixed hyperparameters"
                             % (theta.shape[0], self.n_dims))
        node, edge = self._kernels()
        k = 0
        if not self._q_fixed():
            self.q = float(np.exp(theta[0]))
            k = 1
        if self.node_kernel is not None:
            self.node_kernel = node.clone_with_theta(theta[k:k + node.n_dims])
        k += node.n_dims
        if self.edge_kernel is not None:
            self.edge_kernel = edge.clone_with_theta(theta[k:k + edge.n_dims])

    @property
    def n_dims(self):
        """int: the number of non-fixed hyperparameters."""
        return int(self._free_mask().sum())

    @property
    def bounds(self):
        """ndarray of shape (n_dims, 2): log of the bounds of the non-fixed hyperparameters."""
        rows = [np.log(np.asarray(h.bounds, dtype=np.float64).ravel()) for h in self.hyperparameters if not h.fixed]
        return np.vstack(rows) if rows else np.empty((0, 2))

    def clone_with_theta(self, theta):
        """Return a copy of this kernel with the non-fixed hyperparameters set to ``exp(theta)``."""
        k = clone(self)
        k.theta = theta
        return k

    def _check_params(self):
        super()._check_params()
        q = self.q
        if not _is_number(q) or not 0.0 < float(q) < 1.0:
            raise ValueError("q must be a number in (0, 1), got %r" % (q,))
        if not self._q_fixed():
            b = np.asarray(self.q_bounds, dtype=object)
            if b.shape != (2,) or not all(_is_number(t) for t in b) or not 0 < b[0] <= b[1] < 1:
                raise ValueError("q_bounds must be 'fixed' or a pair (low, high) with 0 < low <= high < 1, got %r"
                                 % (self.q_bounds,))
        if isinstance(self.lmin, bool) or self.lmin not in (0, 1):
            raise ValueError("lmin must be 0 or 1, got %r" % (self.lmin,))
        for name in ("accuracy", "gradient_accuracy"):
            value = getattr(self, name)
            if value is not None and not (_is_number(value) and 0 < value < 1):
                raise ValueError("%s must be a number in (0, 1) or None, got %r" % (name, value))
        if self.tol is not None and not (_is_number(self.tol) and 0 < self.tol < 1):
            raise ValueError("tol must be a number in (0, 1) or None, got %r" % (self.tol,))
        if self.maxiter is not None and not (isinstance(self.maxiter, numbers.Integral)
                                             and not isinstance(self.maxiter, bool) and self.maxiter > 0):
            raise ValueError("maxiter must be a positive integer or None, got %r" % (self.maxiter,))
        self._check_microkernels("node_kernel", "edge_kernel")
        p = self.p
        if isinstance(p, numbers.Real) and not isinstance(p, bool):
            if not np.isfinite(p) or p <= 0:
                raise ValueError("p must be a positive finite number, got %r" % (p,))
        elif not (isinstance(p, str) or callable(p)):
            raise TypeError("p must be a number, a node attribute name or a callable, got %r" % (p,))

    # --- packing ------------------------------------------------------------
    def _start(self, name, graphs):
        """Start probability of every node of ``graphs``, concatenated."""
        p = self.p
        if isinstance(p, numbers.Real):
            return np.full(int(node_counts(graphs).sum()), float(p))
        parts = []
        for i, g in enumerate(graphs):
            if isinstance(p, str):
                if p not in g.node_attrs:
                    raise ValueError("%s[%d] has no node attribute %r (named by p)" % (name, i, p))
                v = g.node_attrs[p]
                if v.dtype.kind not in "biuf":
                    raise ValueError("%s[%d]: node attribute %r (named by p) holds %s, not numbers"
                                     % (name, i, p, v.dtype))
            else:
                v = p(g)
            try:
                v = np.asarray(v, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError("%s[%d]: start probabilities p are not numbers" % (name, i)) from None
            if v.shape != (g.n_nodes,):
                raise ValueError("%s[%d]: start probabilities p have shape %s, expected (%d,)"
                                 % (name, i, v.shape, g.n_nodes))
            if not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError("%s[%d]: start probabilities p must be finite and non-negative" % (name, i))
            parts.append(v)
        return np.concatenate(parts) if parts else np.zeros(0)

    def _attributes(self):
        node, edge = self._kernels()
        return self._reads("node kernel", node), self._reads("edge kernel", edge)

    def _params(self, node_layout, edge_layout):
        node, edge = self._kernels()
        column = {h.name: k for k, h in enumerate(self.hyperparameters)}
        return {"node_kernel": self._spec("node kernel", node, node_layout, column, "node_kernel__"),
                "edge_kernel": self._spec("edge kernel", edge, edge_layout, column, "edge_kernel__"), "q": float(self.q),
                "q_index": column["q"], "n_params": len(column), "lmin": int(self.lmin),
                "accuracy": float(self.accuracy or 0.0), "gradient_accuracy": float(self.gradient_accuracy or 0.0),
                "tol": float(self.tol or 0.0), "maxiter": int(self.maxiter or 0), "n_jobs": self._go_jobs()}

    # --- computation --------------------------------------------------------
    def _nodal_self(self, X):
        """Node-pair self-similarities: the diagonal of each graph's own nodal block."""
        return np.concatenate([np.diag(self._compute("nodal", [g])[0]) for g in X])

    def _log_gradient(self, G):
        """The Go core's gradient (raw hyperparameters, every one, last axis) moved to
        ``theta``: the free ones only, by the chain rule ∂/∂log θ = θ ∂/∂θ."""
        raw = self._raw_values()
        mask = self._free_mask()
        if mask.all():
            G *= raw  # in place: G is the call's own buffer, and may be gigabytes
            return G
        return G[..., mask] * raw[mask]

    def _raw_diag_gradient(self, X):
        """The raw self-similarities K(x, x) and their gradient in log space, (len(X), n_dims)."""
        d, extras = self._compute("diag_grad", X, n_params=self._raw_values().size)
        return d, self._log_gradient(extras["gradient"])

    def _block_gradient(self, X, Y=None):
        """Return K(X, Y) (K(X, X) without Y), normalized if asked, and ∂K/∂log θ for the
        non-fixed hyperparameters, shape ``K.shape + (n_dims,)``.

        The Go core differentiates each solve by the adjoint method (one extra
        solve per pair) with respect to the raw hyperparameters, writing each
        into the column ``hyperparameters`` gives it; :meth:`_log_gradient`
        moves the result to scikit-learn's log space. Normalizing needs the
        diagonals' gradients too: the block's own diagonal for K(X, X), one
        "diag_grad" call per side (the self pairs only) for K(X, Y).
        """
        K, extras = self._compute("gram_grad", X, Y, n_params=self._raw_values().size)
        G = self._log_gradient(extras["gradient"])
        e = normalize_exponent(self.normalize)
        if e:
            if Y is None:
                dx = dy = np.diag(K).copy()
                gx = gy = np.einsum("iik->ik", G).copy()  # G changes in place below
            else:
                dx, gx = self._raw_diag_gradient(X)
                dy, gy = self._raw_diag_gradient(Y)
            K, G = normalize_with_gradient(K, G, dx, gx, dy, gy, e)
        return K, np.ascontiguousarray(G)

    def _diag_gradient(self, X):
        """Return the self-similarities (as :meth:`diag`) and their gradient in log space.

        With exponent e the normalized self-similarity is d^(1 − e), whose
        gradient is (1 − e) d^(−e) ∂d (0 for the cosine, where it is 1).
        """
        d, g = self._raw_diag_gradient(X)
        return normalized_diag_gradient(d, g, normalize_exponent(self.normalize))

    def __call__(self, X, Y=None, eval_gradient=False, nodal=False):
        """Return the Gram matrix, or node-pair similarities with ``nodal=True``.

        Parameters
        ----------
        X : list of Graph
        Y : list of Graph, optional
            When omitted, K(X, X) is returned; only its upper triangle is solved.
        eval_gradient : bool, default=False
            Also return the gradient of K(X, X) with respect to the logarithms of
            the non-fixed hyperparameters (``theta``), computed analytically. Only
            with ``Y=None`` and ``nodal=False``, as in scikit-learn.
        nodal : bool, default=False
            Return the (Σ nodes of X) × (Σ nodes of Y) matrix of node-pair
            similarities p_i p'_j x_(i,j) instead of graph-level values; rows follow
            the graphs of X and their nodes in order. With ``normalize=True`` each
            entry is divided by the square root of the two nodes' similarities to
            themselves within their own graphs.

        Returns
        -------
        K : ndarray, float64
        K_gradient : ndarray of shape (len(X), len(X), n_dims), only with ``eval_gradient=True``
        """
        if not nodal:
            return super().__call__(X, Y, eval_gradient=eval_gradient)
        if eval_gradient:
            raise ValueError("eval_gradient=True is only supported for K(X, X) without nodal=True")
        self._check_params()
        X = as_graph_list(X, "X")
        Y = None if Y is None else as_graph_list(Y, "Y")
        R = self._compute("nodal", X, Y)[0]
        if normalize_exponent(self.normalize):
            dx = self._nodal_self(X)
            dy = dx if Y is None else self._nodal_self(Y)
            R = cosine_normalize(R, dx, dy, normalize_exponent(self.normalize))
        return R
