"""graphgram kernels as scikit-learn Gaussian-process kernels, exact and low-rank.

:class:`GraphKernel` wraps a graph kernel (kept for older code: graphgram's
kernels are Gaussian-process kernels themselves); :class:`LowRankGraphKernel`
approximates one by m inducing graphs (Nyström / subset of regressors, or FITC)
so that each evaluation of a Gaussian process computes n·m + m²/2 graph pairs
instead of n²/2; :class:`LBFGS` is scikit-learn's optimizer with a report per
evaluation. docs/gaussian_processes.md says when to use which.
"""

import numbers
import sys
import time
import types
import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.gaussian_process.kernels import Hyperparameter, Kernel
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from . import _backend
from ._backend import as_graph_list
from .kernels._base import GraphKernelBase, normalize_exponent, normalized_diag

__all__ = ["GraphKernel", "LowRankGraphKernel", "LowRankGaussianProcessRegressor", "LBFGS"]


class GraphKernel(Kernel):
    """A graphgram kernel usable in ``GaussianProcessRegressor`` and ``GaussianProcessClassifier``.

    graphgram's kernels are scikit-learn Gaussian-process kernels themselves
    (``ConstantKernel() * MarginalizedGraphKernel(...) + WhiteKernel()`` works);
    this wrapper is kept for code written before they were.

    It wraps a graphgram kernel (such as :class:`~graphgram.MarginalizedGraphKernel`)
    and exposes its hyperparameters to scikit-learn's optimizer in log space, with
    names prefixed ``kernel__`` (``kernel__q``,
    ``kernel__node_kernel__label__h``, ...). Gradients are analytic when the
    wrapped kernel computes them (the marginalized kernel does, by one adjoint
    solve per pair). It composes with scikit-learn's kernel algebra::

        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
        gp = GaussianProcessRegressor(ConstantKernel() * GraphKernel(mgk) + WhiteKernel())
        gp.fit(graphs, y)        # a plain list of graphgram.Graph

    Parameters
    ----------
    kernel : graphgram kernel
        The graph kernel; it is cloned when hyperparameters change, never modified.
    """

    def __init__(self, kernel):
        self.kernel = kernel

    @property
    def requires_vector_input(self):
        """False: the inputs are graphs, not feature vectors."""
        return False

    def is_stationary(self):
        """False: graph kernels are not functions of a difference of inputs."""
        return False

    @property
    def hyperparameters(self):
        """list of Hyperparameter of the wrapped kernel, named ``kernel__<name>``."""
        return [Hyperparameter("kernel__" + h.name, h.value_type, h.bounds, h.n_elements, h.fixed)
                for h in self.kernel.hyperparameters]

    @property
    def theta(self):
        """ndarray: log of the wrapped kernel's non-fixed hyperparameters."""
        return np.asarray(self.kernel.theta, dtype=np.float64)

    @theta.setter
    def theta(self, theta):
        k = clone(self.kernel)
        k.theta = theta
        self.kernel = k

    @property
    def bounds(self):
        """ndarray of shape (n_dims, 2): log of the bounds of the non-fixed hyperparameters."""
        return np.asarray(self.kernel.bounds, dtype=np.float64).reshape(-1, 2)

    def get_params(self, deep=True):
        params = Kernel.get_params(self, deep=False)  # the parameters of __init__, subclasses' too
        if deep and hasattr(self.kernel, "get_params"):
            params.update(("kernel__" + k, v) for k, v in self.kernel.get_params(deep=True).items())
        return params

    def __call__(self, X, Y=None, eval_gradient=False):
        """Return K(X, Y), and with ``eval_gradient`` its gradient in log space.

        Parameters
        ----------
        X : sequence of Graph (a list or scikit-learn's 1-D object array)
        Y : sequence of Graph, optional
        eval_gradient : bool, default=False
            Only when Y is None.

        Returns
        -------
        K : ndarray of shape (len(X), len(Y))
        K_gradient : ndarray of shape (len(X), len(X), n_dims), with ``eval_gradient``
        """
        X = as_graph_list(X, "X")
        if eval_gradient:
            if Y is not None:
                raise ValueError("Gradient can only be evaluated when Y is None.")
            return self.kernel(X, eval_gradient=True)
        return self.kernel(X, None if Y is None else as_graph_list(Y, "Y"))

    def diag(self, X):
        """Return K(x, x) for each graph of X."""
        return self.kernel.diag(as_graph_list(X, "X"))

    def __eq__(self, other):
        return type(self) is type(other) and repr(self.kernel.get_params()) == repr(other.kernel.get_params())

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return "GraphKernel(%r)" % (self.kernel,)


# Rows per block of the n×n products: each block is a short BLAS call, so that
# Ctrl-C (checked by Python between calls) stops a large evaluation within a
# fraction of a second, and no temporary is as large as the result.
_ROW_BLOCK = 256
# Jitter is raised tenfold per failed Cholesky factorization up to this
# (relative to the mean diagonal of K_ZZ); beyond it the approximation would be
# too far from the kernel to be useful, and an error is raised.
_MAX_JITTER = 1e-2
_METHODS = ("kmeans++", "pivoted_cholesky", "random")


def _rows(n):
    return range(0, n, _ROW_BLOCK)


def _project(A, L):
    """A L⁻ᵀ (L lower triangular): the Nyström features of the rows of A = K(X, Z)."""
    return scipy.linalg.solve_triangular(L, A.T, lower=True, check_finite=False).T


def _naming_inducing(f, X, Z, **kwargs):
    """f(X, Z, ...), its input errors saying that Y is the inducing graphs (the graph
    kernels call the second list of a call Y)."""
    try:
        return f(X, Z, **kwargs)
    except (ValueError, TypeError) as exc:
        if "Y[" in str(exc):
            raise type(exc)("%s (Y: the inducing graphs)" % (exc,)) from None
        raise


class LowRankGraphKernel(TransformerMixin, GraphKernel):
    r"""A low-rank approximation of a graph kernel by m inducing graphs, for large Gaussian processes.

    With Z the inducing graphs, :math:`A = K(X, Z)` and
    :math:`B = (K(Z, Z) + \epsilon I)^{-1}`, the kernel is the Nyström
    approximation (subset of regressors)

    .. math::

        \tilde K(X, Y) = K(X, Z)\, B\, K(Z, Y),

    and with ``fitc=True`` the FITC correction makes the diagonal of K(X, X)
    exact: :math:`\tilde K(X, X) + \mathrm{diag}(k(x, x) - \tilde k(x, x))`
    (the diagonal only: a cross matrix K(X, Y) stays the Nyström one).
    An evaluation computes n·m + m²/2 graph pairs (plus n self pairs with
    FITC or a normalized kernel) instead of the exact kernel's n²/2, and its
    gradient is analytic: with :math:`W = A B`,

    .. math::

        \partial \tilde K = U W^\top + W U^\top,\quad U = \partial A - \tfrac12 W\, \partial K(Z, Z),

    through the wrapped kernel's gradients of K(X, Z) and K(Z, Z), so that
    ``GaussianProcessRegressor`` tunes the graph kernel's hyperparameters. Its
    linear algebra is O(n²m) per hyperparameter: scikit-learn's kernel
    interface asks for the full n×n×n_dims gradient.

    The same object is a scikit-learn transformer: ``fit(X)`` chooses the
    inducing graphs and ``transform(X)`` returns the explicit m-dimensional
    features :math:`\Phi = K(X, Z) L^{-\top}` (L the Cholesky factor of
    K(Z, Z) + εI), with :math:`\Phi \Phi^\top = \tilde K`, for linear models
    (``LinearSVC``, ``Ridge``) or ``SVC(kernel="linear")``.

    **Which inducing graphs.** ``inducing`` is a list of graphs, or a number m
    of graphs to choose from the data: the first time the kernel is evaluated
    (``fit(X)``, ``K(X)``, ``K(X, Y)`` or ``diag(X)``: from X) it chooses them
    by ``method``, with ``random_state``, and keeps them as
    ``inducing_graphs_`` (and their positions in X, ``inducing_indices_``).
    Changing ``theta`` (what the optimizer does) and :meth:`clone_with_theta`
    keep them, so the objective the optimizer sees is smooth;
    ``sklearn.base.clone`` forgets them, so that each
    ``GaussianProcessRegressor.fit`` chooses from its own training graphs
    (pass ``inducing=kernel.inducing_graphs_`` to reuse a choice). The choice
    uses the kernel at its initial hyperparameters. Methods:

    - ``"kmeans++"``: D² sampling in the kernel's feature space: the first
      graph uniformly, each next one with probability proportional to its
      squared kernel distance k(x, x) + k(z, z) − 2 k(x, z) to the nearest one
      chosen (Arthur and Vassilvitskii 2007). Spreads Z over the data; a graph
      identical to a chosen one is at distance 0 (to rounding) and in effect
      never chosen again.
    - ``"pivoted_cholesky"``: greedy pivoted Cholesky on K(X, X): each next
      graph is the one worst approximated by the ones chosen (largest diagonal
      of K − K̃); deterministic (ties: the first). Minimizes the trace error
      greedily.
    - ``"random"``: m distinct graphs uniformly, with no kernel evaluation.

    The first two compute m columns K(X, z), n·m pairs (as one evaluation
    without gradient), one call per column.

    **Jitter.** ε = ``jitter`` × the mean diagonal of K(Z, Z). When K(Z, Z) + εI
    is not numerically positive definite (inducing graphs too similar, or a
    kernel of low rank), ε is raised tenfold until the Cholesky factorization
    succeeds, with a ``RuntimeWarning`` saying which ε was added; beyond
    1e-2 relative a ``numpy.linalg.LinAlgError`` says so. Never a silent NaN.

    Parameters
    ----------
    kernel : graphgram kernel
        The graph kernel to approximate (:class:`~graphgram.MarginalizedGraphKernel`,
        :func:`~graphgram.molecular_kernel`, ...); it is cloned when
        hyperparameters change, never modified. Hyperparameters are exposed
        as in :class:`GraphKernel` (``kernel__q``, ...).
    inducing : int or list of Graph, default=100
        The inducing graphs, or how many to choose from the data (1 ≤ m ≤ n).
    method : {"kmeans++", "pivoted_cholesky", "random"}, default="kmeans++"
        How m inducing graphs are chosen (see above); ignored for a list.
    fitc : bool, default=False
        Add the FITC diagonal correction to K(X, X) and ``diag``.
    jitter : float, default=1e-10
        Added to the diagonal of K(Z, Z), relative to its mean diagonal.
    random_state : int, RandomState or None, default=0
        Seed of the choice of inducing graphs ("kmeans++", "random").
    dask : bool, default=False
        ``True``: evaluations without gradient (``K(X, Y)``, ``diag``,
        ``transform``, predictions) compute their K(X, Z) block on the current
        Dask client (``distributed.get_client()``) through
        :func:`graphgram.distributed.gram`, with the same values as locally,
        so that predictions and features for more graphs than one machine
        computes in time run on a cluster. Gradient evaluations, K(Z, Z) and
        the choice of inducing graphs run locally. A flag rather than a client
        object, so that the kernel stays plain data (cloned, pickled).

    Attributes
    ----------
    inducing_graphs_ : list of Graph
        The inducing graphs, once chosen (or the given list).
    inducing_indices_ : ndarray of int or None
        Their positions in the graphs they were chosen from (None for a given list).

    Examples
    --------
    >>> from sklearn.gaussian_process import GaussianProcessRegressor
    >>> from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
    >>> from graphgram import molecular_kernel, molecules
    >>> from graphgram.gaussian_process import LowRankGraphKernel
    >>> graphs = [molecules.from_smiles(s) for s in ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl"]]
    >>> y = [0.1, 0.3, -0.2, 1.0, 0.4, 0.0]
    >>> k = LowRankGraphKernel(molecular_kernel(verbose=False), inducing=3)
    >>> gp = GaussianProcessRegressor(ConstantKernel() * k + WhiteKernel(), normalize_y=True).fit(graphs, y)
    >>> len(gp.kernel_.k1.k2.inducing_graphs_)
    3
    """

    def __init__(self, kernel, inducing=100, method="kmeans++", fitc=False, jitter=1e-10, random_state=0,
                 dask=False):
        self.kernel = kernel
        self.inducing = inducing
        self.method = method
        self.fitc = fitc
        self.jitter = jitter
        self.random_state = random_state
        self.dask = dask

    # --- parameters ---------------------------------------------------------
    def _check_params(self):
        if not isinstance(self.kernel, GraphKernelBase):
            raise TypeError("kernel must be a graphgram graph kernel (e.g. MarginalizedGraphKernel), got %s"
                            % type(self.kernel).__name__)
        self.kernel._check_params()
        m = self.inducing
        if isinstance(m, numbers.Integral) and not isinstance(m, bool):
            if m < 1:
                raise ValueError("inducing must be a positive number of graphs or a list of graphs, got %r" % (m,))
            if self.method not in _METHODS:
                raise ValueError("method must be one of %s, got %r" % (", ".join(map(repr, _METHODS)), self.method))
        elif isinstance(m, (bool, numbers.Number, str, bytes)) or not hasattr(m, "__len__"):
            raise TypeError("inducing must be a number of graphs or a list of graphs, got %r" % (m,))
        for name in ("fitc", "dask"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError("%s must be True or False, got %r" % (name, getattr(self, name)))
        j = self.jitter
        if not (isinstance(j, numbers.Real) and not isinstance(j, bool) and np.isfinite(j) and 0 <= j < _MAX_JITTER):
            raise ValueError("jitter must be a number in [0, %g), got %r" % (_MAX_JITTER, j))

    def clone_with_theta(self, theta):
        """Return a copy with the wrapped kernel's hyperparameters set to ``exp(theta)``,
        keeping the inducing graphs chosen (unlike ``sklearn.base.clone``)."""
        k = clone(self)
        k.theta = theta
        for name in ("inducing_graphs_", "inducing_indices_"):
            if hasattr(self, name):
                setattr(k, name, getattr(self, name))
        return k

    def __eq__(self, other):
        return (type(self) is type(other) and repr(self.get_params()) == repr(other.get_params())
                and getattr(self, "inducing_graphs_", None) is getattr(other, "inducing_graphs_", None))

    def __hash__(self):
        return id(self)

    def __repr__(self):
        m = self.inducing if isinstance(self.inducing, numbers.Integral) else "[%d graphs]" % len(self.inducing)
        return "LowRankGraphKernel(%r, inducing=%s, method=%r, fitc=%r)" % (self.kernel, m, self.method, self.fitc)

    # --- inducing graphs ------------------------------------------------------
    def _inducing(self, X):
        """The inducing graphs, chosen from X (a validated list) if not chosen yet."""
        if hasattr(self, "inducing_graphs_"):
            return self.inducing_graphs_
        if not isinstance(self.inducing, numbers.Integral):
            Z = as_graph_list(self.inducing, "inducing")
            self.kernel._validate(Z, "inducing")  # errors name the inducing graphs, not "X"
            self.inducing_graphs_, self.inducing_indices_ = Z, None
            return Z
        m, n = int(self.inducing), len(X)
        if m > n:
            raise ValueError("inducing=%d graphs to choose from %d: m must be at most the number of graphs "
                             "(n = %d); use fewer inducing graphs, or the exact kernel" % (m, n, n))
        idx = self._choose(X, m)
        self.inducing_indices_ = idx
        self.inducing_graphs_ = [X[i] for i in idx]
        return self.inducing_graphs_

    def _choose(self, X, m):
        """Positions in X of m inducing graphs, by ``method`` (see the class documentation)."""
        n = len(X)
        rng = check_random_state(self.random_state)
        if self.method == "random":
            return np.sort(rng.choice(n, size=m, replace=False))
        k = self.kernel
        raw = k._raw_diag(X)
        d = normalized_diag(raw, normalize_exponent(k.normalize))  # the wrapped kernel's self-similarities
        column = k._column_source(X, raw)  # K(X, [X[p]])[:, 0], X packed once for all m columns
        chosen = []
        if self.method == "kmeans++":
            p = int(rng.integers(n)) if hasattr(rng, "integers") else int(rng.randint(n))
            dist = np.full(n, np.inf)
            for _ in range(m):
                chosen.append(p)
                col = column(p)
                dist = np.minimum(dist, np.maximum(d + d[p] - 2.0 * col, 0.0))
                dist[chosen] = 0.0
                total = dist.sum()
                if len(chosen) == m:
                    break
                if not total > 0:
                    raise ValueError("only %d of the graphs are distinct in the kernel's feature space; inducing=%d "
                                     "needs as many: use fewer inducing graphs" % (len(chosen), m))
                p = int(rng.choice(n, p=dist / total))
            return np.array(chosen)
        # Greedy pivoted Cholesky: residual = diag(K − L Lᵀ) over the rows chosen so far.
        residual = d.astype(np.float64).copy()
        L = np.zeros((m, n))
        tiny = 1e-12 * max(float(np.max(d)), np.finfo(float).tiny)
        for j in range(m):
            p = int(np.argmax(residual))
            if residual[p] <= tiny:
                raise ValueError("the kernel matrix of X has numerical rank %d < inducing=%d: use fewer inducing "
                                 "graphs" % (j, m))
            chosen.append(p)
            col = column(p)
            L[j] = (col - L[:j].T @ L[:j, p]) / np.sqrt(residual[p])
            residual -= L[j] ** 2
            residual[chosen] = 0.0
        return np.array(chosen)

    def fit(self, X, y=None):
        """Choose the inducing graphs from X (when ``inducing`` is a number) and return self.

        A kernel fitted before keeps its inducing graphs: ``sklearn.base.clone``
        it for a fresh choice.
        """
        self._check_params()
        self._inducing(as_graph_list(X, "X"))
        return self

    # --- the computation --------------------------------------------------------
    def _factor(self, Kzz):
        """The lower Cholesky factor of K(Z, Z) + εI, raising ε as documented."""
        if not np.all(np.isfinite(Kzz)):
            raise ValueError("K(Z, Z) of the inducing graphs has non-finite entries")
        scale = float(np.mean(np.diag(Kzz)))
        if not scale > 0:
            raise np.linalg.LinAlgError("K(Z, Z) of the inducing graphs has a mean diagonal of %g: the inducing "
                                        "graphs have no similarity to themselves" % scale)
        rel = float(self.jitter)
        first = rel
        while True:
            try:
                L = scipy.linalg.cholesky(Kzz + rel * scale * np.eye(len(Kzz)), lower=True, check_finite=False)
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
                          RuntimeWarning, stacklevel=3)
        return L

    def _block(self, X, Z):
        """K(X, Z) without gradient, on the current Dask client with ``dask=True``."""
        if self.dask:
            from . import distributed
            return _naming_inducing(lambda X, Z: distributed.gram(self.kernel, X, Z), X, Z)
        return _naming_inducing(self.kernel._cross_gram, X, Z)

    def _features(self, X, Z, L):
        """Φ = K(X, Z) L⁻ᵀ, so that Φ Φᵀ is the Nyström kernel."""
        return _project(self._block(X, Z), L)

    def _zz_factor(self, Z):
        """The lower Cholesky factor of K(Z, Z) + εI (see :meth:`_factor`)."""
        return self._factor(self.kernel._symmetric_gram(Z)[0])

    def _prepare(self, X, name="X"):
        self._check_params()
        X = as_graph_list(X, name)
        Z = self._inducing(X)
        return X, Z

    def __call__(self, X, Y=None, eval_gradient=False):
        """Return the low-rank K(X, Y), and with ``eval_gradient`` its gradient in log space.

        Parameters
        ----------
        X : sequence of Graph (a list or scikit-learn's 1-D object array)
        Y : sequence of Graph, optional
            Without Y, K(X, X) (with the FITC diagonal when ``fitc=True``).
        eval_gradient : bool, default=False
            Only when Y is None.

        Returns
        -------
        K : ndarray of shape (len(X), len(Y))
        K_gradient : ndarray of shape (len(X), len(X), n_dims), with ``eval_gradient``
        """
        if eval_gradient and Y is not None:
            raise ValueError("Gradient can only be evaluated when Y is None.")
        X, Z = self._prepare(X)
        if eval_gradient:
            return self._value_gradient(X, Z)
        L = self._zz_factor(Z)
        P = self._features(X, Z, L)
        if Y is None:
            K = self._outer(P, P)
            if self.fitc:
                K[np.diag_indices_from(K)] = self._kernel_diag(X)
            return K
        return self._outer(P, self._features(as_graph_list(Y, "Y"), Z, L))

    @staticmethod
    def _outer(P, R):
        K = np.empty((len(P), len(R)))
        for a in _rows(len(P)):
            K[a:a + _ROW_BLOCK] = P[a:a + _ROW_BLOCK] @ R.T
        return K

    def _kernel_diag(self, X):
        return self.kernel.diag(X)

    def _terms(self, X, Z, eval_gradient=False):
        """The pieces K̃(X, X) is built from (validated X, inducing graphs Z), one owner for
        this kernel and :class:`LowRankGaussianProcessRegressor`: a namespace with

        - ``L``: the Cholesky factor of K_ZZ + εI (m×m), ``P`` = A L⁻ᵀ (n×m, P Pᵀ the
          Nyström kernel);
        - with ``eval_gradient``: ``W`` = A B (n×m), ``GA`` = ∂A (n×m×n_dims) and
          ``Gzz`` = ∂K_ZZ (m×m×n_dims), so that ∂(P Pᵀ) = U Wᵀ + W Uᵀ with
          U = ∂A − ½ W ∂K_ZZ; otherwise None (and A computed on Dask with ``dask=True``);
        - with ``fitc``: ``kd`` = k(x, x) and, with ``eval_gradient``, ``gkd`` = ∂k(x, x)
          (n×n_dims); otherwise None.
        """
        k = self.kernel
        W = GA = Gzz = None
        if eval_gradient:
            Kzz, Gzz = k._block_gradient(Z)
            A, GA = _naming_inducing(k._block_gradient, X, Z)
            L = self._factor(Kzz)
            # W = A B = A (K_ZZ + εI)⁻¹, P = A L⁻ᵀ: K̃ = P Pᵀ = W Aᵀ.
            P = _project(A, L)
            W = scipy.linalg.solve_triangular(L.T, P.T, lower=False, check_finite=False).T
        else:
            L = self._zz_factor(Z)
            P = self._features(X, Z, L)
        kd = gkd = None
        if self.fitc:
            if eval_gradient:
                kd, gkd = k._diag_gradient(X)
            else:
                kd = self._kernel_diag(X)
        return types.SimpleNamespace(L=L, P=P, W=W, GA=GA, Gzz=Gzz, kd=kd, gkd=gkd)

    def _value_gradient(self, X, Z):
        n = len(X)
        # scikit-learn's interface asks for the whole n×n×n_dims gradient: refuse
        # it before the graph pairs are computed when it cannot fit in memory.
        _backend.check_memory((n, n), n_params=self.kernel.n_dims)
        T = self._terms(X, Z, eval_gradient=True)
        W, p = T.W, T.Gzz.shape[2]
        K = self._outer(T.P, T.P)
        # One contiguous n×n matrix per hyperparameter (fast products), seen as
        # (n, n, n_dims) as scikit-learn reads it.
        G = _backend.allocate((p, n, n), what="the gradient")
        for t in range(p):
            U = T.GA[:, :, t] - 0.5 * W @ T.Gzz[:, :, t]
            for a in _rows(n):
                G[t, a:a + _ROW_BLOCK] = U[a:a + _ROW_BLOCK] @ W.T
            G[t] += G[t].T.copy()
        if self.fitc:
            i = np.arange(n)
            K[i, i] = T.kd
            G[:, i, i] = T.gkd.T
        return K, np.moveaxis(G, 0, 2)

    def diag(self, X):
        """Return K̃(x, x) for each graph of X: the exact k(x, x) with ``fitc=True``."""
        X, Z = self._prepare(X)
        if self.fitc:
            return self._kernel_diag(X)
        P = self._features(X, Z, self._zz_factor(Z))
        return np.einsum("ij,ij->i", P, P)

    # --- scikit-learn transformer -------------------------------------------------
    def transform(self, X):
        """Return the explicit features Φ = K(X, Z) L⁻ᵀ, shape (len(X), m), with Φ Φᵀ = K̃(X, X)
        (without the FITC diagonal, which no finite feature map has)."""
        if not hasattr(self, "inducing_graphs_"):
            raise NotFittedError("This LowRankGraphKernel has no inducing graphs yet: call fit(X) first")
        X, Z = self._prepare(X)
        return self._features(X, Z, self._zz_factor(Z))


class LBFGS:
    """scikit-learn's Gaussian-process optimizer (L-BFGS-B) with a report per evaluation.

    Pass an instance as ``GaussianProcessRegressor(optimizer=LBFGS(verbose=True))``:
    each evaluation of the log marginal likelihood prints its number, the value
    and the time it took (kernel and linear algebra), so that a long fit shows
    where it stands; Ctrl-C stops it within about a second (the graph kernel's
    calls and the low-rank kernel's products check for it) and raises
    ``KeyboardInterrupt``.

    Parameters
    ----------
    max_iter : int, default=15000
        L-BFGS-B iterations, as scikit-learn's default.
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
    """

    def __init__(self, max_iter=15000, verbose=True, file=None):
        self.max_iter = max_iter
        self.verbose = verbose
        self.file = file

    def __call__(self, obj_func, initial_theta, bounds):
        self.history_ = []
        self.n_evaluations_ = 0

        def report(theta):
            t0 = time.perf_counter()
            value, grad = obj_func(theta, eval_gradient=True)
            dt = time.perf_counter() - t0
            self.n_evaluations_ += 1
            self.history_.append((-float(value), dt))
            if self.verbose:
                print("evaluation %d: log marginal likelihood %.6g, %.2f s" % (self.n_evaluations_, -value, dt),
                      file=self.file or sys.stderr, flush=True)
            return value, grad

        res = scipy.optimize.minimize(report, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds,
                                      options={"maxiter": self.max_iter})
        if not res.success:
            warnings.warn("L-BFGS-B stopped: %s" % (res.message,), RuntimeWarning, stacklevel=2)
        return res.x, res.fun

    def __repr__(self):
        return "LBFGS(max_iter=%r, verbose=%r)" % (self.max_iter, self.verbose)


def _inner(T, c, s, fitc):
    """The Woodbury pieces of K = c (P Pᵀ + D) + s I: the diagonal Λ = c D + s (a
    vector) and the lower Cholesky factor of M = I + c Pᵀ Λ⁻¹ P; None when K is not
    positive definite."""
    P = T.P
    lam = np.full(len(P), s)
    if fitc:
        lam += c * (T.kd - np.einsum("ij,ij->i", P, P))
    if not np.all(lam > 0):
        return None
    Pl = P / lam[:, None]
    M = c * (P.T @ Pl)
    M[np.diag_indices_from(M)] += 1.0
    try:
        Lm = scipy.linalg.cholesky(M, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    return lam, Pl, Lm


def _lml(T, c, noise, s, fitc, y, eval_gradient):
    """The log marginal likelihood of y under K = c K̃ + s I (s = noise + alpha) and its
    gradient in (log c, log noise, the kernel's theta), in O(n·m²) with n×m products
    only; (-inf, zeros) when K is not positive definite, as scikit-learn."""
    n, m = T.P.shape
    p = 0 if T.GA is None else T.GA.shape[2]
    parts = _inner(T, c, s, fitc)
    if parts is None:
        return (-np.inf, np.zeros(2 + p)) if eval_gradient else -np.inf
    lam, Pl, Lm = parts
    P = T.P
    cho = (Lm, True)

    def kinv(Y):
        """K⁻¹ Y by Woodbury: Λ⁻¹ Y − c Λ⁻¹ P M⁻¹ Pᵀ Λ⁻¹ Y."""
        Yl = Y / (lam[:, None] if Y.ndim == 2 else lam)
        return Yl - c * (Pl @ scipy.linalg.cho_solve(cho, P.T @ Yl, check_finite=False))

    alpha = kinv(y)
    # log det K = Σ log Λ + log det M (the matrix determinant lemma).
    logdet = np.sum(np.log(lam)) + 2.0 * np.sum(np.log(np.diag(Lm)))
    lml = -0.5 * float(y @ alpha) - 0.5 * logdet - 0.5 * n * np.log(2 * np.pi)
    if not eval_gradient:
        return lml
    # ∂LML = ½ (αᵀ ∂K α − tr(K⁻¹ ∂K)); κ = diag(K⁻¹).
    V = scipy.linalg.solve_triangular(Lm, Pl.T, lower=True, check_finite=False)
    kappa = 1.0 / lam - c * np.einsum("ji,ji->i", V, V)
    aa = float(alpha @ alpha)
    grad = np.empty(2 + p)
    grad[0] = 0.5 * (float(y @ alpha) - s * aa - n + s * np.sum(kappa))      # ∂K = c K̃ = K − s I
    grad[1] = 0.5 * noise * (aa - np.sum(kappa))                              # ∂K = noise I
    if p:
        # ∂K = c ∂K̃, ∂K̃ = U Wᵀ + W Uᵀ (+ for FITC diag(∂kd − 2 rowdot(U, W))), U = ∂A − ½ W ∂K_ZZ:
        # αᵀ∂K̃α − tr(K⁻¹∂K̃) = 2 Σ S ⊙ U + Σ (α² − κ) ∂kd, S = α (Wᵀα)ᵀ − K⁻¹W − diag(α² − κ) W,
        # and Σ S ⊙ U = Σ S ⊙ ∂A − ½ Σ (Wᵀ S) ⊙ ∂K_ZZ: O(n·m) per hyperparameter.
        W = T.W
        S = np.outer(alpha, W.T @ alpha) - kinv(W)
        if fitc:
            S -= (alpha ** 2 - kappa)[:, None] * W
        q = 2.0 * (S.reshape(-1) @ T.GA.reshape(n * m, p)) - (W.T @ S).reshape(-1) @ T.Gzz.reshape(m * m, p)
        if fitc:
            q += (alpha ** 2 - kappa) @ T.gkd
        grad[2:] = 0.5 * c * q
    return lml, grad


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
    alpha : float, default=1e-10
        Added to the diagonal of K, as scikit-learn's ``alpha`` (not optimized).
    signal : float, default=1.0
        Initial signal variance c (``ConstantKernel``'s ``constant_value``).
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
        likelihood and its gradient. Pass :class:`LBFGS` (``LBFGS(verbose=True)``)
        for a line per evaluation. None: keep the initial hyperparameters.
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
        a = self.alpha
        if not (isinstance(a, numbers.Real) and not isinstance(a, bool) and np.isfinite(a) and a >= 0):
            raise ValueError("alpha must be a number >= 0, got %r" % (a,))
        if not (self.optimizer is None or self.optimizer == "fmin_l_bfgs_b" or callable(self.optimizer)):
            raise ValueError("optimizer must be 'fmin_l_bfgs_b', a callable or None, got %r" % (self.optimizer,))
        r = self.n_restarts_optimizer
        if not (isinstance(r, numbers.Integral) and not isinstance(r, bool) and r >= 0):
            raise ValueError("n_restarts_optimizer must be an integer >= 0, got %r" % (r,))

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

    def _evaluate(self, theta, eval_gradient):
        theta = np.asarray(theta, dtype=np.float64)
        kernel = self.kernel_.clone_with_theta(theta[2:])
        c, noise = float(np.exp(theta[0])), float(np.exp(theta[1]))
        T = kernel._terms(self.X_train_, kernel.inducing_graphs_, eval_gradient=eval_gradient)
        return _lml(T, c, noise, noise + self.alpha, kernel.fitc, self.y_train_, eval_gradient)

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
            res = scipy.optimize.minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds)
            if not res.success:
                warnings.warn("L-BFGS-B stopped: %s" % (res.message,), ConvergenceWarning, stacklevel=3)
            return res.x, res.fun
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
        self.kernel_ = kernel
        theta = np.concatenate([[np.log(self.signal), np.log(self.noise)], kernel.theta])
        bounds = self._bounds(kernel)
        if self.optimizer is not None:
            def obj_func(theta, eval_gradient=True):
                if eval_gradient:
                    lml, grad = self._evaluate(theta, True)
                    return -lml, -grad
                return -self._evaluate(theta, False)

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
        s = self.noise_ + self.alpha
        parts = _inner(T, self.signal_, s, self.kernel_.fitc)
        if parts is None:
            raise np.linalg.LinAlgError("the low-rank covariance c (P Pᵀ + D) + (noise + alpha) I is not positive "
                                        "definite at signal=%g, noise=%g: increase alpha or the noise's lower bound"
                                        % (self.signal_, self.noise_))
        self.log_marginal_likelihood_value_ = float(_lml(T, self.signal_, self.noise_, s, self.kernel_.fitc,
                                                         self.y_train_, False))
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
        P = _project(A, self._L_zz)
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
