r"""The mixture kernel: a graph kernel summed over the weighted graphs of two samples.

For mixtures A and B (:class:`~graphgram.Mixture`) and a graph kernel k,

.. math::

    K(A, B) = \sum_{a \in A} \sum_{b \in B} w_a w_b\, k(a, b),

computed as W_X G W_Yᵀ: G is one Gram matrix of the base kernel over the
distinct graphs of the call (:func:`graphgram.mixture.layout`), W the sparse
matrices of weights, so that each pair of graphs is computed once however many
mixtures hold it. Reactions (one mixture per role) sum the roles' kernels.
"""

import contextlib

import numpy as np
from sklearn.base import clone
from sklearn.gaussian_process.kernels import Hyperparameter
from sklearn.utils.validation import check_is_fitted

from ..mixture import as_sample_list, components, layout
from ._base import GraphKernelBase, SampleKernel
from ._normalize import (check_normalize, cosine_normalize, normalize_exponent, normalize_symmetric,
                         normalize_with_gradient, normalized_diag)

__all__ = ["MixtureKernel"]


def _contract(Wx, G, Wy):
    """Wx G Wyᵀ for sparse Wx (n×u), Wy (m×v) and G of shape (u, v) or (u, v, p):
    the result has shape (n, m) or (n, m, p), each slice G[:, :, k] contracted alike."""
    u, v = G.shape[:2]
    rest = G.shape[2:]
    n, m = Wx.shape[0], Wy.shape[0]
    A = np.asarray(Wx @ G.reshape(u, -1)).reshape((n, v) + rest)     # Σ_a w_ia G[a, b, ...]
    A = np.moveaxis(A, 1, 0).reshape(v, -1)                           # (v, n·p)
    B = np.asarray(Wy @ A).reshape((m, n) + rest)                     # Σ_b w_jb (...)
    return np.ascontiguousarray(np.swapaxes(B, 0, 1))


def _self_terms(W, G):
    """Σ_a Σ_b w_ia w_ib G[a, b] for every row i of the sparse W (n×u), G u×u."""
    return np.asarray(W.multiply(W @ G).sum(axis=1), dtype=np.float64).ravel()


def _used(weights):
    """The columns (distinct graphs) that some row of the role matrices uses, sorted."""
    return np.unique(np.concatenate([W.indices for W in weights]))


class MixtureKernel(SampleKernel):
    r"""A graph kernel between samples made of several weighted graphs: mixtures and reactions.

    .. math::

        K(A, B) = \sum_{a \in A} \sum_{b \in B} w_a w_b\, k(a, b)

    for mixtures A and B (:class:`~graphgram.Mixture`: solvent blends with their
    mole fractions) and the graph kernel k, ``base_kernel``. A sample is a
    :class:`~graphgram.Mixture`, a :class:`~graphgram.Graph` (the mixture of
    that graph alone, weight 1: pure solvents and blends go in one list, and on
    graphs alone the kernel is the base kernel's, bit for bit) or a tuple of
    those, one per role, with ``None`` for an empty role: a reaction
    ``(reactants, reagents, products)``. The kernel of two reactions is the sum
    over roles, K(R, R') = Σ_r K(R_r, R'_r), an empty role adding 0: reactions
    without reagents compare with others on their reactants and products.
    (A sum rather than a product, which an empty role would make 0.) A role
    weighs by the square of its weights' scale.

    Each call computes one Gram matrix G of the base kernel over the distinct
    graphs of the samples (an object listed in many mixtures, or graphs with
    the same content, counted once) and contracts it with the sparse weight
    matrices, K = Σ_r W^r_X G (W^r_Y)ᵀ, so a pair of graphs is computed once
    however many samples hold it: K(X, X) needs the pairs among the distinct
    graphs of X; K(X, Y) those between the distinct graphs of X and of Y, and
    with ``normalize`` the pairs among all of them (the self-similarities need
    the pairs within each mixture). Cheap for blends of a few hundred
    distinct solvents; for reactions over many distinct molecules prefer
    ``normalize=False``, whose cross matrices need no pairs within X or Y.

    It is a scikit-learn Gaussian-process kernel (``ConstantKernel() *
    MixtureKernel(...) + WhiteKernel()`` in ``GaussianProcessRegressor``) whose
    hyperparameters are the base kernel's (``base_kernel__q``, ...): the
    gradient with respect to them (``eval_gradient=True``, in log space) is the
    same contraction of the base kernel's analytic gradient, through the
    normalization's quotient rule. It is also a transformer for
    ``SVC(kernel="precomputed")``: ``fit`` keeps the training samples,
    ``transform(Y)`` returns K(Y, X_fit). For GPyTorch and BoTorch see
    :class:`graphgram.gpytorch.GPyTorchMixtureKernel`.

    Parameters
    ----------
    base_kernel : graphgram graph kernel
        The kernel k between single graphs, e.g. :func:`~graphgram.molecular_kernel`,
        with its own normalization of graphs; not modified (setting ``theta``
        replaces it by a copy).
    normalize : bool or float in [0, 1], default=False
        Normalization of the mixtures' kernel, as the graph kernels':
        ``True`` divides by sqrt(K(A, A) K(B, B)), so that a mixture's scale
        (the sum of its weights) and size do not matter, a number s by
        (K(A, A) K(B, B))^(s/2), ``False`` keeps the sum.

    Attributes
    ----------
    X_fit_ : list of tuple of (Mixture or None)
        After ``fit``: the training samples, each as its roles.
    n_samples_fit_ : int

    Examples
    --------
    >>> from graphgram import Mixture, MixtureKernel, molecular_kernel, molecules
    >>> water, ethanol, acetone = (molecules.from_smiles(s) for s in ("O", "CCO", "CC(C)=O"))
    >>> blends = [Mixture([water, ethanol], [0.7, 0.3]), Mixture([water, acetone], [0.5, 0.5]), ethanol]
    >>> K = MixtureKernel(molecular_kernel(verbose=False), normalize=True)(blends)
    >>> K.shape
    (3, 3)
    """

    def __init__(self, base_kernel, normalize=False):
        self.base_kernel = base_kernel
        self.normalize = normalize

    def _check_params(self):
        if not isinstance(self.base_kernel, GraphKernelBase):
            raise TypeError("base_kernel must be a graphgram graph kernel (e.g. molecular_kernel()), got %r"
                            % (self.base_kernel,))
        check_normalize(self.normalize)
        self.base_kernel._check_params()

    @contextlib.contextmanager
    def _naming(self, *samples_by_name):
        """Run the base kernel on the distinct graphs; when it finds a graph lacking
        what it reads, raise its error for the first such graph named by sample and
        component (``X[3].graphs[1]``) rather than by position among the distinct graphs."""
        try:
            yield
        except (TypeError, ValueError):
            for name, samples in samples_by_name:
                for where, gs in components(samples, name):
                    self.base_kernel._validate(list(gs), where + ".graphs")
            raise

    # --- the kernel as a function ------------------------------------------
    def __call__(self, X, Y=None, eval_gradient=False):
        """Return K(X, X) or K(X, Y), and with ``eval_gradient`` the gradient of K(X, X).

        Parameters
        ----------
        X : sequence of samples
            Each a :class:`~graphgram.Mixture`, a :class:`~graphgram.Graph` or a
            tuple of them (``None`` for an empty role), the same number of roles
            in every sample; scikit-learn's object arrays of them too.
        Y : sequence of samples, optional
            With the roles of X. When omitted, the symmetric matrix K(X, X).
        eval_gradient : bool, default=False
            Also return the gradient with respect to ``theta`` (the base kernel's
            log hyperparameters); only with ``Y=None``, as in scikit-learn.

        Returns
        -------
        K : ndarray of shape (len(X), len(Y)), float64
        K_gradient : ndarray of shape (len(X), len(X), n_dims), only with ``eval_gradient=True``
        """
        self._check_params()
        X = as_sample_list(X, "X")
        if eval_gradient and Y is not None:
            raise ValueError("eval_gradient=True is only supported for K(X, X) (Y=None)")
        if Y is None:
            return self._symmetric(X, eval_gradient)
        Y = as_sample_list(Y, "Y")
        if len(Y[0]) != len(X[0]):
            raise ValueError("Y's samples have %d roles but X's %d; give both the same roles" % (len(Y[0]), len(X[0])))
        return self._cross(X, Y)

    def _symmetric(self, X, eval_gradient=False):
        graphs, (Wx,) = layout(X)
        with self._naming(("X", X)):
            G, dG = self.base_kernel(graphs, eval_gradient=True) if eval_gradient else (self.base_kernel(graphs), None)
        K = sum(_contract(W, G, W) for W in Wx)
        K = (K + K.T) / 2  # exactly symmetric, as the graph kernels' matrices
        s = normalize_exponent(self.normalize)
        if not eval_gradient:
            return normalize_symmetric(K, np.diag(K).copy(), s) if s else K
        dK = sum(_contract(W, dG, W) for W in Wx)
        dK = (dK + dK.transpose(1, 0, 2)) / 2
        if s:
            d, gd = np.diag(K).copy(), np.einsum("iik->ik", dK).copy()
            K, dK = normalize_with_gradient(K, dK, d, gd, d, gd, s)
        return K, dK

    def _cross(self, X, Y):
        graphs, (Wx, Wy) = layout(X, Y)
        s = normalize_exponent(self.normalize)
        if s:
            # The self-similarities need the pairs within each mixture: one symmetric
            # Gram matrix over the distinct graphs of X and Y gives them and K(X, Y).
            with self._naming(("X", X), ("Y", Y)):
                G = self.base_kernel(graphs)
            K = sum(_contract(A, G, B) for A, B in zip(Wx, Wy))
            dx = sum(_self_terms(A, G) for A in Wx)
            dy = sum(_self_terms(B, G) for B in Wy)
            return cosine_normalize(K, dx, dy, s)
        cx, cy = _used(Wx), _used(Wy)
        with self._naming(("X", X), ("Y", Y)):
            if np.array_equal(cx, cy):
                G = self.base_kernel([graphs[p] for p in cx])
            else:
                G = self.base_kernel([graphs[p] for p in cx], [graphs[p] for p in cy])
        return sum(_contract(A[:, cx], G, B[:, cy]) for A, B in zip(Wx, Wy))

    def diag(self, X):
        """Return K(A, A) for each sample A of X (ones when normalized with the cosine
        and nonzero).

        Parameters
        ----------
        X : sequence of samples

        Returns
        -------
        d : ndarray of shape (len(X),), float64
        """
        self._check_params()
        X = as_sample_list(X, "X")
        graphs, (Wx,) = layout(X)
        with self._naming(("X", X)):
            if all(np.diff(W.indptr).max(initial=0) <= 1 for W in Wx):
                # One graph per role: the graphs' self-similarities suffice, no pairs.
                k = self.base_kernel.diag(graphs)
                d = sum(np.asarray(W.multiply(W) @ k, dtype=np.float64) for W in Wx)
            else:
                G = self.base_kernel(graphs)
                d = sum(_self_terms(W, G) for W in Wx)
        return normalized_diag(d, normalize_exponent(self.normalize))

    # --- scikit-learn Gaussian-process kernel --------------------------------
    @property
    def hyperparameters(self):
        """list of Hyperparameter: the base kernel's, named ``base_kernel__...``."""
        return [Hyperparameter("base_kernel__" + h.name, h.value_type, h.bounds, h.n_elements, h.fixed)
                for h in self.base_kernel.hyperparameters]

    @property
    def theta(self):
        """ndarray: the base kernel's ``theta`` (log of its non-fixed hyperparameters)."""
        return np.asarray(self.base_kernel.theta, dtype=np.float64)

    @theta.setter
    def theta(self, theta):
        base = clone(self.base_kernel)
        base.theta = theta
        self.base_kernel = base

    @property
    def bounds(self):
        """ndarray of shape (n_dims, 2): the base kernel's bounds (log space)."""
        return np.asarray(self.base_kernel.bounds, dtype=np.float64).reshape(-1, 2)

    # --- scikit-learn transformer -----------------------------------------
    def fit(self, X, y=None):
        """Store the training samples X.

        Parameters
        ----------
        X : sequence of samples
        y : ignored

        Returns
        -------
        self
        """
        self._check_params()
        self.X_fit_ = as_sample_list(X, "X")
        self.n_samples_fit_ = len(self.X_fit_)
        return self

    def transform(self, X):
        """Return K(X, X_fit): rows are the given samples, columns the training samples.

        Parameters
        ----------
        X : sequence of samples

        Returns
        -------
        K : ndarray of shape (len(X), n_samples_fit_)
        """
        check_is_fitted(self, "X_fit_")
        return self(X, self.X_fit_)

    def fit_transform(self, X, y=None):
        """Fit on X and return its symmetric kernel matrix (computed once).

        Parameters
        ----------
        X : sequence of samples
        y : ignored

        Returns
        -------
        K : ndarray of shape (len(X), len(X))
        """
        self.fit(X)
        return self._symmetric(self.X_fit_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags
