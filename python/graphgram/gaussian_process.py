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
from sklearn.base import TransformerMixin, clone
from sklearn.gaussian_process.kernels import Hyperparameter, Kernel
from sklearn.utils import check_random_state
from sklearn.exceptions import NotFittedError

from . import _backend
from ._backend import as_graph_list
from .kernels._base import GraphKernelBase, normalize_exponent, normalized_diag

__all__ = ["GraphKernel", "LowRankGraphKernel", "LBFGS"]


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
        chosen = []
        if self.method == "kmeans++":
            p = int(rng.integers(n)) if hasattr(rng, "integers") else int(rng.randint(n))
            dist = np.full(n, np.inf)
            for _ in range(m):
                chosen.append(p)
                col = k._cross_gram(X, [X[p]], raw)[:, 0]
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
            col = k._cross_gram(X, [X[p]], raw)[:, 0]
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
        A = self._block(X, Z)
        return scipy.linalg.solve_triangular(L, A.T, lower=True, check_finite=False).T

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
        Kzz = self.kernel._symmetric_gram(Z)[0]
        L = self._factor(Kzz)
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
        if eval_gradient:
            Kzz, Gzz = k._block_gradient(Z)
            A, GA = _naming_inducing(k._block_gradient, X, Z)
        else:
            Kzz, Gzz = k._symmetric_gram(Z)[0], None
            A, GA = self._block(X, Z), None
        L = self._factor(Kzz)
        # W = A B = A (K_ZZ + εI)⁻¹, P = A L⁻ᵀ: K̃ = P Pᵀ = W Aᵀ.
        P = scipy.linalg.solve_triangular(L, A.T, lower=True, check_finite=False).T
        W = scipy.linalg.solve_triangular(L.T, P.T, lower=False, check_finite=False).T if eval_gradient else None
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
        L = self._factor(self.kernel._symmetric_gram(Z)[0])
        P = self._features(X, Z, L)
        return np.einsum("ij,ij->i", P, P)

    # --- scikit-learn transformer -------------------------------------------------
    def transform(self, X):
        """Return the explicit features Φ = K(X, Z) L⁻ᵀ, shape (len(X), m), with Φ Φᵀ = K̃(X, X)
        (without the FITC diagonal, which no finite feature map has)."""
        if not hasattr(self, "inducing_graphs_"):
            raise NotFittedError("This LowRankGraphKernel has no inducing graphs yet: call fit(X) first")
        X, Z = self._prepare(X)
        return self._features(X, Z, self._factor(self.kernel._symmetric_gram(Z)[0]))


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
