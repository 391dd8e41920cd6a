"""The explicit-feature kernels' shared part (private): the family's base class,
its parameter checks and the unary expansion of the optimal-assignment counts.

A kernel of the family names its feature kind ("wl", "hash", "nh", ...), one of
the Go core's registry (``pybind/explicit.go``); every rule of a kind — its
parameters' bounds, the semirings it takes, the scale of its feature rows,
whether ``features`` is its feature map — is the core's, read through
:func:`graphgram._backend.kernel_info` (``KernelInfo``) and never restated here.
Adding a feature kernel is a Go package, a ``pybind`` file, a Python module
beside this one and a line in the core's registry.
"""

import numbers

import numpy as np
import scipy.sparse

from .. import _backend
from ..graph import as_graph_list, edge_counts, node_counts
from ._base import GraphKernelBase
from ._seeded import check_seed

_EXACT = ("The values are exact integer counts: ``\"float32\"`` changes nothing. On a GPU the\n"
          "    Gram matrix (``__call__``) is computed there, exactly as on the CPU; ``diag`` and\n"
          "    ``features`` use the CPU (a ``RuntimeWarning`` says so for ``device=\"cuda\"``).")


def _check_integers(kernel, ranges, seed=None):
    """Check that each parameter of ``ranges`` (name, low, high) is an integer in
    [low, high], and that ``random_state`` is an integer (``seed`` says what it seeds)."""
    for name, low, high in ranges:
        value = getattr(kernel, name)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError("%s must be an integer, got %r" % (name, value))
        if not low <= value <= high:
            raise ValueError("%s must be in [%d, %d], got %d" % (name, low, high, value))
    if seed is not None:
        check_seed(kernel, seed)


def _ranges(kind, *names):
    """(parameter, low, high) for each (parameter, bound) pair of ``names``: the Go
    core's bound of the feature kind ``kind`` (KernelInfo's ``bounds``, named as in
    the kind's JSON), for :func:`_check_integers`."""
    bounds = _backend.kernel_info(kind)["bounds"]
    return tuple((name, *bounds[bound]) for name, bound in names)


def _check_positive(value, name):
    """Raise ValueError unless ``value`` is a positive finite real number;
    ``name`` is how the message calls the parameter."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not (np.isfinite(value) and value > 0):
        raise ValueError("%s must be a positive finite number, got %r" % (name, value))


class _ExplicitFeatureKernel(GraphKernelBase):
    """The shared part of the explicit-feature kernels: what to pack, the Go
    parameters, the checks against the core's bounds and ``features``.

    Subclasses implement ``_labels()`` -> (node label or None, edge label or None)
    and ``_feature_params()``: the "features" (the kind) and "semiring"
    parameters, and "n_iter" for the kinds that refine by Weisfeiler–Lehman.
    """

    _kernel = "explicit"
    # The label parameters that may not be None.
    _required_labels = ()

    def _kind(self):
        """The Go core's name of the kernel's feature kind."""
        return self._feature_params()["features"]

    def _ranges(self, *names):
        """(parameter, low, high) of each (parameter, bound) pair: the core's bounds of this kind."""
        return _ranges(self._kind(), *names)

    def _labels(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_params(self):
        super()._check_params()
        for what, value in zip(("node_label", "edge_label"), self._labels()):
            if value is None and what not in self._required_labels:
                continue
            if not isinstance(value, str):
                raise TypeError("%s must be the name of an attribute%s, got %r"
                                % (what, "" if what in self._required_labels else " or None", value))

    def _attributes(self):
        node, edge = self._labels()
        who = type(self).__name__
        return ({} if node is None else {node: "the node label of %s" % who},
                {} if edge is None else {edge: "the edge label of %s" % who})

    def _discrete(self):
        node, edge = self._labels()
        return (() if node is None else (node,)), (() if edge is None else (edge,))

    def _params(self, node_layout, edge_layout):
        node, edge = self._labels()
        return dict(self._feature_params(),
                    node_label_col=-1 if node is None else node_layout[node][0],
                    edge_label_col=-1 if edge is None else edge_layout[edge][0],
                    n_jobs=self._go_jobs())

    def features(self, X):
        """Return the explicit feature map of the graphs X, one row per graph.

        ``features(X) @ features(X).T`` equals ``kernel(X)`` without
        normalization (for the optimal assignment, rows are the unary expansion
        of the counts — a count c becomes c ones — so that their dot product is
        the histogram intersection; rows are scaled where the kernel averages
        or weighs its counts). Linear models then need no Gram matrix:
        ``LinearSVC().fit(kernel.features(X), y)`` scales to millions of graphs.

        Columns number the labels of *this call*: rows of two calls are not
        comparable. Featurize training and test graphs together and split the
        rows (``F = kernel.features(train + test); F[:n_train]``). The graphlet
        kernel's columns are the exception: column c is the graphlet
        ``graphlets()[c]`` in every call.

        A kernel that is no dot product of one feature map per graph (the
        neighborhood hash and NSPDK kernels) raises ``NotImplementedError``
        saying why.

        Parameters
        ----------
        X : list of Graph

        Returns
        -------
        F : scipy.sparse.csr_matrix of shape (len(X), n_features), float64
        """
        info = _backend.kernel_info(self._kind())
        if not info["feature_map"]:
            raise NotImplementedError("%s has %s; use the Gram matrix (kernel(X), or kernel(X, Y)) instead"
                                      % (type(self).__name__, info["no_feature_map"]))
        self._check_params()
        X = as_graph_list(X, "X")
        n = len(X)
        # The CSR arrays in one int64 buffer, sized by a bound on the nonzeros (docs/abi.md).
        buf, extras = self._compute("features", X, shape=(2 + (n + 1) + 2 * self._max_nonzeros(X),))
        nnz, n_cols = int(buf[0]), int(buf[1])
        indptr = buf[2:n + 3]
        indices = buf[n + 3:n + 3 + nnz]
        counts = buf[n + 3 + nnz:n + 3 + 2 * nnz]
        if self._semiring() == "min":
            F = _unary_expansion(indptr, indices, counts, n, n_cols)
        else:
            F = scipy.sparse.csr_matrix((counts.astype(np.float64), indices, indptr), shape=(n, n_cols))
        # Each row's factor, the core's rules (the kind's scale, the graphlets' frequencies).
        factors = extras["row_factors"]
        if not np.all(factors == 1):
            F.data *= np.repeat(factors, np.diff(F.indptr))
        return F

    def _semiring(self):
        return self._feature_params()["semiring"]

    def _max_nonzeros(self, X):
        """A bound on the nonzeros of the feature map of X."""
        if self._kind() == "edges":
            return 2 * int(edge_counts(X).sum())
        return (self._feature_params().get("n_iter", 0) + 1) * int(node_counts(X).sum())


def _unary_expansion(indptr, indices, counts, n, n_cols):
    """The 0/1 matrix whose dot products are the histogram intersections of the
    count rows: column f becomes max_f columns, and a count c sets the first c."""
    width = np.zeros(n_cols, dtype=np.int64)
    np.maximum.at(width, indices, counts)
    offset = np.concatenate([[0], np.cumsum(width)])
    total = np.concatenate([[0], np.cumsum(counts)])  # ones before entry k: total[k]
    # Entry k (column f, count c) expands to columns offset[f] .. offset[f] + c - 1.
    starts = np.repeat(offset[indices], counts)
    within = np.arange(total[-1]) - np.repeat(total[:-1], counts)
    new_indptr = total[indptr]
    return scipy.sparse.csr_matrix((np.ones(starts.size), starts + within, new_indptr), shape=(n, int(offset[-1])))


