"""The calling convention shared by every graphgram graph kernel."""

import numbers
import re
import typing
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process.kernels import Kernel
from sklearn.utils.validation import check_is_fitted

from .. import _backend, _memory, _packing
from ..graph import as_graph_list, node_counts
from ..microkernels import MicroKernel
# The normalization helpers, re-exported for the modules that import them from here.
from ._normalize import check_normalize, cosine_normalize, normalize_exponent, normalize_symmetric, normalized_diag

__all__ = ["GraphKernelBase", "GraphKernelInternals", "as_graph_list", "cosine_normalize", "normalize_exponent",
           "normalize_symmetric", "normalized_diag"]


# The parameters of where and how every graph kernel computes, documented
# once: a kernel's docstring holds the line "    %(execution_parameters)s" and
# the class is decorated with document_execution(what float32 means for it).
_EXECUTION_PARAMETERS = """\
n_jobs : int, default=None
    Number of threads; ``None`` or -1 uses all cores.
verbose : bool, default=None
    Show a progress bar for computations that take more than about two
    seconds; ``None`` follows ``graphgram.get_config()["progress"]``.
device : {"auto", "cpu", "cuda"} or "cuda:N", default="auto"
    Where to compute. "auto" uses a GPU only where it is expected to be
    faster: graphgram has its CUDA library (the x86-64 Linux wheels do; Linux
    source builds with ``GRAPHGRAM_CUDA=1``), a device is present and passed
    its self-validation, and a cost model of the call (its pairs and their
    sizes, the kernel, the precision, the device, ``n_jobs``), calibrated by a
    small sample timed on both the first time the process would use the
    device, predicts the GPU faster than the CPU; else the CPU, silently.
    Calls the GPU backend does not implement stay on the CPU.
    :func:`graphgram.devices` says what "auto" does and why. "cuda" (or
    "cuda:N" for device N) forces the GPU and raises an error naming the CUDA
    error when none can be used; modes the GPU backend lacks, and base
    kernels outside its compiled-in set, then run on the CPU with a
    ``RuntimeWarning``.
precision : {"float64", "float32"}, default="float64"
    Floating-point precision of the computation. The CPU always computes in
    float64 (at least as accurate as asked); results are float64 arrays.
    %s
"""


def document_execution(float32):
    """Class decorator filling in the execution parameters' documentation;
    ``float32`` says what precision="float32" does for this kernel."""
    def fill(cls):
        doc = cls.__doc__
        if doc:  # None under python -OO
            # The placeholder's own indentation: Python 3.13 strips docstrings' common indent.
            m = re.search(r"^([ \t]*)%\(execution_parameters\)s\n", doc, re.MULTILINE)
            if m is None:
                raise TypeError("%s's docstring has no %%(execution_parameters)s line" % cls.__name__)
            text = _EXECUTION_PARAMETERS % float32
            block = "".join(m.group(1) + line if line.strip() else line for line in text.splitlines(True))
            cls.__doc__ = doc[:m.start()] + block + doc[m.end():]
        return cls
    return fill


@typing.runtime_checkable
class GraphKernelInternals(typing.Protocol):
    """The internal API of a graph kernel: what graphgram's own modules call on one.

    :mod:`graphgram.distributed` (blocks of a Gram matrix as Dask tasks) and
    :mod:`graphgram.gaussian_process` (the low-rank kernel and the choice of its
    inducing graphs) call a graph kernel through these members and, besides
    them, only scikit-learn's public kernel interface (``diag``, ``theta``,
    ``bounds``, ``hyperparameters``, ``n_dims``, ``get_params``). They are
    private to graphgram, not to their class: :class:`GraphKernelBase`
    implements them all, a subclass that overrides one keeps its signature and
    meaning, and a module outside ``kernels/`` calls no other private member of
    a graph kernel (tests/test_kernel_internals.py checks both).

    Every ``X`` and ``Y`` is a list of graphs already validated by the caller
    (:func:`~graphgram.graph.as_graph_list`), and the kernel's parameters are
    checked (:meth:`_check_params`) before the first computation.

    Attributes
    ----------
    _kernel : str
        The Go core's name of the kernel (None on the abstract base).
    normalize : bool or float
        The normalization exponent (see :func:`cosine_normalize`).
    """

    _kernel: typing.Optional[str]
    normalize: typing.Union[bool, float]

    def _check_params(self):
        """Validate the hyperparameters; raise ``ValueError`` or ``TypeError``."""

    def _validate(self, X, name):
        """Check that the graphs X carry what the kernel reads, as a call would; errors call them ``name``."""

    def _compute(self, mode, X, Y=None, n_params=0, iterations=False, shape=None):
        """Run the Go core's ``mode`` ("gram", "diag", ...) on X (and Y), raw (not
        normalized); return (result, extras)."""

    def _raw_diag(self, X):
        """Return the raw (not normalized) self-similarities of X, shape (len(X),)."""

    def _symmetric_gram(self, X):
        """Return (K(X, X) normalized if asked, its raw diagonal)."""

    def _cross_gram(self, X, Y, raw_diag_x=None):
        """Return K(X, Y) normalized if asked; ``raw_diag_x`` (X's raw self-similarities) saves computing them."""

    def _column_source(self, X, raw_diag_x=None):
        """Return ``column(p)``, the column K(X, [X[p]])[:, 0] normalized if asked, with X packed once."""

    def _block_gradient(self, X, Y=None):
        """Return K(X, Y) (K(X, X) without Y) normalized if asked, and its gradient with
        respect to ``theta``, shape ``K.shape + (n_dims,)``."""

    def _diag_gradient(self, X):
        """Return the self-similarities (as ``diag``) and their gradient, shape (len(X), n_dims)."""


class SampleKernel(TransformerMixin, BaseEstimator, Kernel):
    """What every graphgram kernel is besides its values: a scikit-learn kernel on
    samples that are not feature vectors (graphs, mixtures of graphs), an estimator
    compared by its parameters, and a transformer (``fit``/``transform``)."""

    def is_stationary(self):
        """False: the kernel is not a function of a difference of inputs."""
        return False

    @property
    def requires_vector_input(self):
        """False: the inputs are graphs or samples of graphs, not feature vectors."""
        return False

    def __eq__(self, other):
        return type(self) is type(other) and repr(self.get_params()) == repr(other.get_params())

    def __hash__(self):
        return id(self)


class GraphKernelBase(SampleKernel):
    """Base class of graphgram's graph kernels.

    A kernel is called like a function, ``kernel(X)`` for the symmetric Gram matrix
    of a list of graphs and ``kernel(X, Y)`` for the cross matrix, with
    ``kernel.diag(X)`` for self-similarities. It is a scikit-learn transformer:
    ``fit(X)`` keeps the training graphs, ``transform(Y)`` returns
    ``K(Y, X_fit)`` (rows: new graphs, columns: training graphs) and
    ``fit_transform(X)`` the training Gram matrix, so that a kernel can stand
    first in a ``Pipeline`` before ``SVC(kernel="precomputed")``. It is also a
    scikit-learn Gaussian-process kernel: ``ConstantKernel() * kernel + WhiteKernel()``
    works in ``GaussianProcessRegressor`` directly.

    Everything an instance holds is plain data (parameters, and after ``fit`` the
    training graphs), so kernels pickle and copy safely; the Go core's view of
    the graphs is built anew by each call.

    Subclasses set ``_kernel`` (the Go core's name), implement ``_attributes()``
    (the node and edge attributes to pack) and ``_params(node_layout,
    edge_layout)`` (the JSON parameters), and may override ``_start`` and
    ``_discrete()`` (attributes that must be labels).

    Of its private methods, those of :class:`GraphKernelInternals` are the
    internal API that other modules of graphgram call (:mod:`graphgram.distributed`,
    :mod:`graphgram.gaussian_process`); the rest are this class's and its
    subclasses' own.
    """

    _kernel = None

    # --- subclass hooks -----------------------------------------------------
    def _attributes(self):  # pragma: no cover - abstract
        """Return (node attributes, edge attributes) as dicts name -> why they are needed."""
        raise NotImplementedError

    def _params(self, node_layout, edge_layout):  # pragma: no cover - abstract
        """Return the Go core's parameters (a JSON-able dict) for this packed layout."""
        raise NotImplementedError

    _start = None  # or a method (name, graphs) -> start probabilities of every node

    def _discrete(self):
        """Return (node attributes, edge attributes) that must hold discrete labels."""
        return (), ()

    @staticmethod
    def _spec(what, kernel, layout, index=None, prefix=""):
        """The JSON expression of a base kernel (None for none); errors say which kernel."""
        if kernel is None:
            return None
        try:
            return kernel.to_spec(layout, index, prefix)
        except (ValueError, TypeError) as exc:
            raise type(exc)("%s: %s" % (what, exc)) from None

    @staticmethod
    def _reads(what, kernel):
        """The attributes a base kernel reads, mapped to why they are packed."""
        return {} if kernel is None else {a: "needed by the %s" % what for a in kernel._attr_order()}

    def _check_params(self):
        """Validate hyperparameters; subclasses extend. Called before any computation."""
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is not None and (not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool)
                                   or n_jobs == 0 or n_jobs < -1):
            raise ValueError("n_jobs must be None, -1 or a positive integer, got %r" % (n_jobs,))
        verbose = getattr(self, "verbose", None)
        if verbose is not None and not isinstance(verbose, (bool, np.bool_)):
            raise TypeError("verbose must be True, False or None, got %r" % (verbose,))
        check_normalize(self.normalize)
        _backend.device_params(self.device, self.precision)

    def _check_microkernels(self, *names):
        """Raise TypeError unless each parameter of ``names`` is a graphgram
        microkernel or None."""
        for name in names:
            k = getattr(self, name)
            if k is not None and not isinstance(k, MicroKernel):
                raise TypeError("%s must be a graphgram microkernel or None, got %s" % (name, type(k).__name__))

    def _go_jobs(self):
        n_jobs = getattr(self, "n_jobs", None)
        return 0 if n_jobs in (None, -1) else int(n_jobs)

    # --- computation ----------------------------------------------------------
    def _compute(self, mode, X, Y=None, n_params=0, iterations=False, shape=None):
        """Pack X (and Y) for one call and run ``mode`` in the Go core.

        ``shape`` is the result's, by default the mode's (:meth:`_shape`).
        Returns (result, extras) as :func:`graphgram._backend.compute`.
        """
        if shape is None:
            shape = self._shape(mode, X, Y)
        # Refuse a result that cannot fit before spending time on packing.
        _memory.check_memory(shape, n_params, iterations)
        px, py, params = self._pack(X, Y)
        return self._compute_packed(mode, px, py, params, shape, n_params, iterations)

    def _pack(self, X, Y=None):
        """Validate and pack X (and Y) for the Go core: (px, py, params)."""
        node_attrs, edge_attrs = self._attributes()
        px, py, node_layout, edge_layout = _packing.pack(X, Y, node_attrs, edge_attrs, start=self._start,
                                                         discrete=self._discrete())
        params = dict(self._params(node_layout, edge_layout), **_backend.device_params(self.device, self.precision))
        return px, py, params

    def _compute_packed(self, mode, px, py, params, shape, n_params=0, iterations=False):
        """Run ``mode`` on graphs packed by :meth:`_pack`; the Go core's warnings become Python warnings."""
        out, extras = _backend.compute(self._kernel, mode, params, px, py, shape, n_params=n_params,
                                       iterations=iterations, verbose=getattr(self, "verbose", None))
        for line in filter(None, extras["warning"].split("\n")):
            category, _, message = line.partition(": ")
            warnings.warn("%s: %s" % (type(self).__name__, message),
                          ConvergenceWarning if category == "ConvergenceWarning" else RuntimeWarning, stacklevel=5)
        return out, extras

    def _column_source(self, X, raw_diag_x=None):
        """Return ``column(p)``, the column ``K(X, [X[p]])[:, 0]`` (normalized if
        asked), for a caller that asks for many columns of one list of graphs:
        X (a validated list) is packed once, and each column is one call against
        graph p of that packing. ``raw_diag_x``, X's raw self-similarities, is
        needed with normalization (computed here when not given)."""
        px, _, params = self._pack(X)
        s = normalize_exponent(self.normalize)
        if s and raw_diag_x is None:
            raw_diag_x = self._raw_diag(X)

        def column(p):
            K = self._compute_packed("gram", px, px.graph(p), params, (len(X), 1))[0]
            if s:
                K = cosine_normalize(K, raw_diag_x, raw_diag_x[p:p + 1], s)
            return K[:, 0]
        return column

    def _validate(self, X, name):
        """Check that the graphs X (a list) carry what this kernel reads, in the form it
        needs, as a call would; errors call them ``name``."""
        node_attrs, edge_attrs = self._attributes()
        _packing.pack(X, None, node_attrs, edge_attrs, start=self._start, discrete=self._discrete(), names=(name,))

    @staticmethod
    def _shape(mode, X, Y):
        """The shape of mode's result for X (and Y)."""
        nx = len(X)
        if mode in ("diag", "diag_grad"):
            return (nx,)
        if mode == "nodal":
            return (int(node_counts(X).sum()), int(node_counts(X if Y is None else Y).sum()))
        return (nx, nx if Y is None else len(Y))

    def _raw_diag(self, X):
        return self._compute("diag", X)[0]

    def _symmetric_gram(self, X):
        """Return K(X, X), normalized if asked, and its raw diagonal."""
        K = self._compute("gram", X)[0]
        d = np.diag(K).copy()
        s = normalize_exponent(self.normalize)
        if s:
            K = normalize_symmetric(K, d, s)
        return K, d

    # --- the kernel as a function ------------------------------------------
    def __call__(self, X, Y=None, eval_gradient=False):
        """Return the Gram matrix K(X, X) or K(X, Y).

        Parameters
        ----------
        X : list of Graph
        Y : list of Graph, optional
            When omitted, the symmetric matrix K(X, X) is returned and only its
            upper triangle is computed.
        eval_gradient : bool, default=False
            Also return the gradient with respect to ``theta`` (shape
            ``(len(X), len(X), n_dims)``); only with ``Y=None``, as in scikit-learn.

        Returns
        -------
        K : ndarray of shape (len(X), len(Y)), float64
        K_gradient : ndarray, only with ``eval_gradient=True``
        """
        self._check_params()
        X = as_graph_list(X, "X")
        if eval_gradient:
            if Y is not None:
                raise ValueError("eval_gradient=True is only supported for K(X, X) (Y=None)")
            return self._gram_gradient(X)
        if Y is None:
            return self._symmetric_gram(X)[0]
        return self._cross_gram(X, as_graph_list(Y, "Y"))

    def _cross_gram(self, X, Y, raw_diag_x=None):
        """Return K(X, Y), normalized if asked (validated graph lists); ``raw_diag_x``,
        X's raw self-similarities when the caller has them, saves computing them again."""
        K = self._compute("gram", X, Y)[0]
        if normalize_exponent(self.normalize):
            if raw_diag_x is None:
                raw_diag_x = self._raw_diag(X)
            K = cosine_normalize(K, raw_diag_x, self._raw_diag(Y), normalize_exponent(self.normalize))
        return K

    def _gram_gradient(self, X):
        """K(X, X) and its gradient in log space (``__call__`` with eval_gradient)."""
        return self._block_gradient(X)

    def _block_gradient(self, X, Y=None):
        """Return K(X, Y) (K(X, X) without Y), normalized if asked, and its gradient with
        respect to ``theta``, shape ``K.shape + (n_dims,)``.

        Private: X and Y are validated graph lists, the parameters checked by the
        caller. Unlike ``__call__`` it takes a rectangular block, which the
        low-rank Gaussian-process kernel needs (K(X, Z) with the inducing graphs).
        Kernels without hyperparameters have an empty gradient; those with some
        override it.
        """
        K = self._symmetric_gram(X)[0] if Y is None else self._cross_gram(X, Y)
        return K, np.empty(K.shape + (0,))

    def _diag_gradient(self, X):
        """Return the self-similarities K(x, x) (as :meth:`diag`) and their gradient with
        respect to ``theta``, shape (len(X), n_dims); private as :meth:`_block_gradient`."""
        d = normalized_diag(self._raw_diag(X), normalize_exponent(self.normalize))
        return d, np.empty((len(X), 0))

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
        return normalized_diag(self._raw_diag(as_graph_list(X, "X")), normalize_exponent(self.normalize))

    # --- scikit-learn Gaussian-process kernel --------------------------------
    @property
    def hyperparameters(self):
        """list of Hyperparameter: none here; kernels with hyperparameters declare them.

        scikit-learn's default collects ``hyperparameter_*`` attributes through
        ``dir()``, which on an estimator evaluates ``n_dims`` and so ``theta`` and
        this property again: a recursion without end for a kernel that has none.
        """
        return []

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
        self._remember(X)
        self.fit_diag_ = self._raw_diag(self.X_fit_) if normalize_exponent(self.normalize) else None
        return self

    def _remember(self, X):
        """Validate parameters and the training graphs, and keep the graphs."""
        self._check_params()
        self.X_fit_ = as_graph_list(X, "X")
        self.n_graphs_fit_ = len(self.X_fit_)

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
        K = self._compute("gram", X, self.X_fit_)[0]
        s = normalize_exponent(self.normalize)
        if s:
            fit_diag = self.fit_diag_ if self.fit_diag_ is not None else self._raw_diag(self.X_fit_)
            K = cosine_normalize(K, self._raw_diag(X), fit_diag, s)
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
        self._remember(X)
        K, d = self._symmetric_gram(self.X_fit_)
        self.fit_diag_ = d if normalize_exponent(self.normalize) else None
        return K

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags
