"""The calling convention shared by every graphgram kernel."""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .graph import Graph


def as_graph_list(X, name="X"):
    """Return ``X`` as a list of graphs, or raise a clear error.

    Parameters
    ----------
    X : sequence of Graph
        The graphs; a single ``Graph`` is rejected so that ``kernel(g)`` is not
        mistaken for ``kernel([g])``.
    name : str
        How error messages call the argument.
    """
    if isinstance(X, Graph):
        raise TypeError("%s must be a list of graphs, not a single Graph; use [g]" % name)
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
        raise TypeError("%s must be a list of graphgram.Graph, got %s" % (name, type(X).__name__))
    graphs = list(X)
    if not graphs:
        raise ValueError("%s is empty: at least one graph is needed" % name)
    for i, g in enumerate(graphs):
        if not isinstance(g, Graph):
            raise TypeError("%s[%d] is not a graphgram.Graph (got %s)" % (name, i, type(g).__name__))
    return graphs


def cosine_normalize(K, diag_x, diag_y):
    """Return K[i, j] / sqrt(diag_x[i] * diag_y[j]), with 0 where a diagonal is 0."""
    scale_x = np.zeros_like(diag_x)
    scale_y = np.zeros_like(diag_y)
    np.divide(1.0, np.sqrt(diag_x), out=scale_x, where=diag_x > 0)
    np.divide(1.0, np.sqrt(diag_y), out=scale_y, where=diag_y > 0)
    return K * scale_x[:, None] * scale_y[None, :]


class GraphKernelBase(TransformerMixin, BaseEstimator):
    """Base class of graphgram's graph kernels.

    A kernel is called like a function, ``kernel(X)`` for the symmetric Gram matrix
    of a list of graphs and ``kernel(X, Y)`` for the cross matrix, with
    ``kernel.diag(X)`` for self-similarities. It is also a scikit-learn
    transformer: ``fit(X)`` keeps the training graphs, ``transform(Y)`` returns
    ``K(Y, X_fit)`` (rows: new graphs, columns: training graphs) and
    ``fit_transform(X)`` the training Gram matrix, so that a kernel can stand
    first in a ``Pipeline`` before ``SVC(kernel="precomputed")``.

    Subclasses implement ``_pack(graphs, name)``, ``_gram(Xp, Yp, symmetric)``
    and ``_diag(Xp)`` on packed batches; this class does the validation,
    normalization and bookkeeping. ``normalize=True`` selects the cosine-normalized
    kernel K(x, y) / sqrt(K(x, x) K(y, y)).
    """

    # --- subclass hooks -----------------------------------------------------
    def _pack(self, graphs, name):  # pragma: no cover - abstract
        raise NotImplementedError

    def _gram(self, Xp, Yp, symmetric):  # pragma: no cover - abstract
        raise NotImplementedError

    def _diag(self, Xp):  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_params(self):
        """Validate hyperparameters; subclasses extend. Called before any computation."""
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is not None and (not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1):
            raise ValueError("n_jobs must be None, -1 or a positive integer, got %r" % (n_jobs,))

    def _go_jobs(self):
        n_jobs = getattr(self, "n_jobs", None)
        return 0 if n_jobs in (None, -1) else int(n_jobs)

    def _symmetric_gram(self, Xp):
        """Return K(X, X), normalized if asked, and its raw diagonal."""
        K = self._gram(Xp, Xp, True)
        d = np.diag(K).copy()
        if self.normalize:
            K = cosine_normalize(K, d, d)
            np.fill_diagonal(K, np.where(d > 0, 1.0, 0.0))
        return K, d

    # --- the kernel as a function ------------------------------------------
    def __call__(self, X, Y=None):
        """Return the Gram matrix K(X, X) or K(X, Y).

        Parameters
        ----------
        X : list of Graph
        Y : list of Graph, optional
            When omitted, the symmetric matrix K(X, X) is returned and only its
            upper triangle is computed.

        Returns
        -------
        K : ndarray of shape (len(X), len(Y)), float64
        """
        self._check_params()
        X = as_graph_list(X, "X")
        Xp = self._pack(X, "X")
        if Y is None:
            return self._symmetric_gram(Xp)[0]
        Y = as_graph_list(Y, "Y")
        Yp = self._pack(Y, "Y")
        K = self._gram(Xp, Yp, False)
        if self.normalize:
            K = cosine_normalize(K, self._diag(Xp), self._diag(Yp))
        return K

    def diag(self, X):
        """Return the self-similarities K(x, x) for each graph in X (ones when normalized
        and nonzero).

        Parameters
        ----------
        X : list of Graph

        Returns
        -------
        d : ndarray of shape (len(X),), float64
        """
        self._check_params()
        X = as_graph_list(X, "X")
        d = self._diag(self._pack(X, "X"))
        if self.normalize:
            return np.where(d > 0, 1.0, 0.0)
        return d

    # --- scikit-learn transformer -----------------------------------------
    def fit(self, X, y=None):
        """Store the training graphs X (and their self-similarities when normalizing).

        Parameters
        ----------
        X : list of Graph
        y : ignored

        Returns
        -------
        self
        """
        self._check_params()
        self.X_fit_ = as_graph_list(X, "X")
        self.n_graphs_fit_ = len(self.X_fit_)
        self._fit_pack_ = self._pack(self.X_fit_, "X")
        self._fit_diag_ = self._diag(self._fit_pack_) if self.normalize else None
        return self

    def transform(self, X):
        """Return K(X, X_fit): rows are the given graphs, columns the training graphs.

        Parameters
        ----------
        X : list of Graph

        Returns
        -------
        K : ndarray of shape (len(X), n_graphs_fit_)
        """
        check_is_fitted(self, "X_fit_")
        self._check_params()
        X = as_graph_list(X, "X")
        Xp = self._pack(X, "X")
        K = self._gram(Xp, self._fit_pack_, False)
        if self.normalize:
            K = cosine_normalize(K, self._diag(Xp), self._fit_diag_)
        return K

    def fit_transform(self, X, y=None):
        """Fit on X and return its symmetric Gram matrix (computed once).

        Parameters
        ----------
        X : list of Graph
        y : ignored

        Returns
        -------
        K : ndarray of shape (len(X), len(X))
        """
        self._check_params()
        self.X_fit_ = as_graph_list(X, "X")
        self.n_graphs_fit_ = len(self.X_fit_)
        self._fit_pack_ = self._pack(self.X_fit_, "X")
        K, d = self._symmetric_gram(self._fit_pack_)
        self._fit_diag_ = d if self.normalize else None
        return K

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags
