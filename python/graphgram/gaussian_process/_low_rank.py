"""The low-rank graph kernel: Nyström (subset of regressors) or FITC by m inducing graphs.

It calls the graph kernel it wraps through the internal API graphgram's modules
share, :class:`graphgram.kernels._base.GraphKernelInternals`, and scikit-learn's
public kernel interface. :class:`~graphgram.gaussian_process.LowRankGaussianProcessRegressor`
calls its ``_prepare``, ``_terms``, ``_block`` and ``_kernel_diag``.
"""

import dataclasses
import numbers

import numpy as np
import scipy.linalg
from sklearn.base import TransformerMixin, clone
from sklearn.exceptions import NotFittedError

from .. import _memory
from ..graph import as_graph_list, take
from ..kernels._base import GraphKernelBase
from ._nystrom import METHODS, check_jitter, cholesky_factor, choose as choose_inducing, project
from ._graph_kernel import GraphKernel

__all__ = ["LowRankGraphKernel", "LowRankTerms"]


# Rows per block of the n×n products: each block is a short BLAS call, so that
# Ctrl-C (checked by Python between calls) stops a large evaluation within a
# fraction of a second, and no temporary is as large as the result.
_ROW_BLOCK = 256


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


@dataclasses.dataclass(frozen=True, eq=False)
class LowRankTerms:
    """The pieces K̃(X, X) is built from, computed by :meth:`LowRankGraphKernel._terms` for
    the kernel and :class:`~graphgram.gaussian_process.LowRankGaussianProcessRegressor`.

    Parameters
    ----------
    L : ndarray of shape (m, m)
        The lower Cholesky factor of K(Z, Z) + εI.
    P : ndarray of shape (n, m)
        A L⁻ᵀ with A = K(X, Z): P Pᵀ is the Nyström kernel.
    W : ndarray of shape (n, m) or None
        A B with B = (K(Z, Z) + εI)⁻¹, with gradients only.
    GA : ndarray of shape (n, m, n_dims) or None
        ∂A, with gradients only.
    Gzz : ndarray of shape (m, m, n_dims) or None
        ∂K(Z, Z), with gradients only; ∂(P Pᵀ) = U Wᵀ + W Uᵀ with U = ∂A − ½ W ∂K(Z, Z).
    kd : ndarray of shape (n,) or None
        The exact k(x, x), with FITC only.
    gkd : ndarray of shape (n, n_dims) or None
        ∂k(x, x), with FITC and gradients only.
    """

    L: np.ndarray
    P: np.ndarray
    W: np.ndarray = None
    GA: np.ndarray = None
    Gzz: np.ndarray = None
    kd: np.ndarray = None
    gkd: np.ndarray = None

    def U(self, t):
        """U_t = ∂A_t − ½ W ∂K(Z, Z)_t (n×m): ∂(P Pᵀ) = U_t Wᵀ + W U_tᵀ for the t-th hyperparameter."""
        return self.GA[:, :, t] - 0.5 * self.W @ self.Gzz[:, :, t]


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
            if self.method not in METHODS:
                raise ValueError("method must be one of %s, got %r" % (", ".join(map(repr, METHODS)), self.method))
        elif isinstance(m, (bool, numbers.Number, str, bytes)) or not hasattr(m, "__len__"):
            raise TypeError("inducing must be a number of graphs or a list of graphs, got %r" % (m,))
        for name in ("fitc", "dask"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError("%s must be True or False, got %r" % (name, getattr(self, name)))
        check_jitter(self.jitter)

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
        idx = choose_inducing(self.kernel, X, m, self.method, self.random_state)
        self.inducing_indices_ = idx
        self.inducing_graphs_ = list(take(X, idx))
        return self.inducing_graphs_

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
        return cholesky_factor(Kzz, self.jitter, stacklevel=4)

    def _block(self, X, Z):
        """K(X, Z) without gradient, on the current Dask client with ``dask=True``."""
        if self.dask:
            from .. import distributed
            return _naming_inducing(lambda X, Z: distributed.gram(self.kernel, X, Z), X, Z)
        return _naming_inducing(self.kernel._cross_gram, X, Z)

    def _features(self, X, Z, L):
        """Φ = K(X, Z) L⁻ᵀ, so that Φ Φᵀ is the Nyström kernel."""
        return project(self._block(X, Z), L)

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
        """The :class:`LowRankTerms` of K̃(X, X) (validated X, inducing graphs Z), one owner for
        this kernel and :class:`~graphgram.gaussian_process.LowRankGaussianProcessRegressor`.

        Without ``eval_gradient`` the gradient terms are None and A = K(X, Z) is
        computed on Dask with ``dask=True``; without ``fitc`` the diagonal terms are None.
        """
        W = GA = Gzz = None
        if eval_gradient:
            A, GA = _naming_inducing(self.kernel._block_gradient, X, Z)
            rows = self._inducing_rows(X, Z)
            if rows is None:
                Kzz, Gzz = self.kernel._block_gradient(Z)
            else:
                # Z's rows of K(X, Z): a kernel value depends only on its two
                # graphs, so on the CPU these are K(Z, Z)'s values bit for bit
                # (the mean of a number and itself is that number); elsewhere the
                # mean makes them symmetric. m(m + 1)/2 graph pairs fewer.
                Kzz, Gzz = A[rows], GA[rows]
                Kzz, Gzz = 0.5 * (Kzz + Kzz.T), 0.5 * (Gzz + Gzz.transpose(1, 0, 2))
            L = self._factor(Kzz)
            # W = A B = A (K_ZZ + εI)⁻¹, P = A L⁻ᵀ: K̃ = P Pᵀ = W Aᵀ.
            P = project(A, L)
            W = scipy.linalg.solve_triangular(L.T, P.T, lower=False, check_finite=False).T
        else:
            L = self._zz_factor(Z)
            P = self._features(X, Z, L)
        kd = gkd = None
        if self.fitc:
            if eval_gradient:
                kd, gkd = self.kernel._diag_gradient(X)
            else:
                kd = self._kernel_diag(X)
        return LowRankTerms(L=L, P=P, W=W, GA=GA, Gzz=Gzz, kd=kd, gkd=gkd)

    def _inducing_rows(self, X, Z):
        """The positions of the inducing graphs Z in X when they were chosen from these very
        graphs (the same objects: a fit's training graphs), else None."""
        idx = getattr(self, "inducing_indices_", None)
        if idx is None or len(idx) != len(Z) or any(i >= len(X) or X[i] is not z for i, z in zip(idx, Z)):
            return None
        return np.asarray(idx)

    def _value_gradient(self, X, Z):
        n = len(X)
        # scikit-learn's interface asks for the whole n×n×n_dims gradient: refuse
        # it before the graph pairs are computed when it cannot fit in memory.
        _memory.check_memory((n, n), n_params=self.kernel.n_dims)
        T = self._terms(X, Z, eval_gradient=True)
        W, p = T.W, T.Gzz.shape[2]
        K = self._outer(T.P, T.P)
        # One contiguous n×n matrix per hyperparameter (fast products), seen as
        # (n, n, n_dims) as scikit-learn reads it.
        G = _memory.allocate((p, n, n), what="the gradient")
        for t in range(p):
            U = T.U(t)
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
