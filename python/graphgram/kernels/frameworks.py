r"""Kernel frameworks: a base graph kernel evaluated on transformed graphs, summed.

:class:`WLFramework` evaluates the base kernel on the graphs relabeled by each
round of Weisfeiler–Lehman refinement (Shervashidze et al. 2011), and
:class:`CoreFramework` on their i-cores (Nikolentzos, Meladianos, Limnios and
Vazirgiannis 2018). The relabeling and the core numbers come from the Go core
(``wl.Labels`` and ``graph.CoreNumbers``, modes ``wl_labels`` and
``core_numbers`` of docs/abi.md); the base kernel computes each term as it
would on its own, and the terms are summed here, where the normalization of
the sum is applied.
"""

import numbers

import numpy as np
from sklearn.base import clone

from .. import _backend, _packing
from ..graph import Graph, node_counts
from ._base import GraphKernelBase, document_execution
from ._normalize import normalize_exponent, normalize_with_gradient, normalized_diag_gradient
from ..microkernels import KroneckerDelta, TensorProduct
from ._explicit import _check_integers, _ranges
from .explicit import VertexHistogramKernel, WeisfeilerLehmanKernel
from .shortest_path import ShortestPathKernel

__all__ = ["WLFramework", "CoreFramework"]

_EXECUTION = ("The base kernel computes every term with these execution parameters (its own\n"
              "    ``n_jobs``, ``verbose``, ``device`` and ``precision`` are replaced by the framework's),\n"
              "    so ``precision`` means for the terms what it means for the base kernel.")


class _Framework(GraphKernelBase):
    """A sum over terms k_base(T_i(G), T_i(G')) of transformed graphs.

    Subclasses implement ``_terms(X, Y)``, yielding for each term
    (X_i, Y_i, rows, cols): the transformed graphs (Y_i None for K(X, X)) and
    the positions of X_i in X and of Y_i in Y (None for all of them in order).
    """

    # The base kernel's parameters that the framework sets for every term.
    _passed = ("n_jobs", "verbose", "device", "precision")

    def _check_params(self):
        super()._check_params()
        if self.base_kernel is not None and not isinstance(self.base_kernel, GraphKernelBase):
            raise TypeError("base_kernel must be a graphgram graph kernel (e.g. ShortestPathKernel(...)) or None, "
                            "got %r" % (self.base_kernel,))
        self._base()._check_params()

    def _given_base(self):
        """The base kernel, or the default one (GraKeL's) for None."""
        return self._default_base() if self.base_kernel is None else self.base_kernel

    def _base(self):
        """The base kernel of the terms: raw (not normalized), with the framework's execution parameters."""
        base = clone(self._given_base())
        own = base.get_params(deep=False)
        base.set_params(normalize=False, **{p: getattr(self, p) for p in self._passed if p in own})
        return base

    def _validate(self, X, name):
        self._base()._validate(X, name)

    # --- the sum of the terms -------------------------------------------------
    def _compute(self, mode, X, Y=None, n_params=0, iterations=False, shape=None):
        if mode not in ("gram", "diag"):
            raise ValueError("%s computes modes 'gram' and 'diag', not %r" % (type(self).__name__, mode))
        self._validate(X, "X")
        if Y is not None:
            self._validate(Y, "Y")
        base = self._base()
        if mode == "diag":
            d = np.zeros(len(X))
            for Xi, _, rows, _ in self._terms(X, None):
                d[_where(rows)] += base._compute("diag", Xi)[0]
            return d, {"warning": ""}
        K = np.zeros((len(X), len(X) if Y is None else len(Y)))
        for Xi, Yi, rows, cols in self._terms(X, Y):
            K[_block(rows, cols if Y is not None else rows)] += base._compute("gram", Xi, Yi)[0]
        return K, {"warning": ""}

    def _column_source(self, X, raw_diag_x=None):
        if normalize_exponent(self.normalize) and raw_diag_x is None:
            raw_diag_x = self._raw_diag(X)
        return lambda p: self._cross_gram(X, [X[p]], raw_diag_x)[:, 0]

    # --- the Gaussian-process kernel: the base kernel's hyperparameters -------
    @property
    def hyperparameters(self):
        """list of Hyperparameter: the base kernel's, named ``base_kernel__...``."""
        from sklearn.gaussian_process.kernels import Hyperparameter
        return [Hyperparameter("base_kernel__" + h.name, h.value_type, h.bounds, h.n_elements, h.fixed)
                for h in self._given_base().hyperparameters]

    @property
    def theta(self):
        """ndarray: the base kernel's ``theta``."""
        return self._given_base().theta

    @theta.setter
    def theta(self, theta):
        if self.base_kernel is None:
            self._default_base().theta = theta  # checks that theta is empty
        else:
            self.base_kernel.theta = theta

    @property
    def n_dims(self):
        """int: the base kernel's number of non-fixed hyperparameters."""
        return self._given_base().n_dims

    @property
    def bounds(self):
        """ndarray of shape (n_dims, 2): the base kernel's bounds."""
        return self._given_base().bounds

    def clone_with_theta(self, theta):
        """Return a copy with the base kernel's non-fixed hyperparameters set to ``exp(theta)``."""
        k = clone(self)
        k.theta = theta
        return k

    def _raw_diag_gradient(self, X):
        base, n = self._base(), self.n_dims
        d, g = np.zeros(len(X)), np.zeros((len(X), n))
        for Xi, _, rows, _ in self._terms(X, None):
            di, gi = base._diag_gradient(Xi)
            d[_where(rows)] += di
            g[_where(rows)] += gi
        return d, g

    def _block_gradient(self, X, Y=None):
        """K(X, Y) (K(X, X) without Y), normalized if asked, and its gradient: the sum of
        the base kernel's gradients of the terms, normalized as the sum is."""
        self._validate(X, "X")
        if Y is not None:
            self._validate(Y, "Y")
        base, n = self._base(), self.n_dims
        K = np.zeros((len(X), len(X) if Y is None else len(Y)))
        G = np.zeros(K.shape + (n,))
        for Xi, Yi, rows, cols in self._terms(X, Y):
            Ki, Gi = base._block_gradient(Xi, Yi)
            b = _block(rows, cols if Y is not None else rows)
            K[b] += Ki
            G[b] += Gi
        e = normalize_exponent(self.normalize)
        if e:
            if Y is None:
                dx = dy = np.diag(K).copy()
                gx = gy = np.einsum("iik->ik", G).copy()
            else:
                dx, gx = self._raw_diag_gradient(X)
                dy, gy = self._raw_diag_gradient(Y)
            K, G = normalize_with_gradient(K, G, dx, gx, dy, gy, e)
        return K, G

    def _diag_gradient(self, X):
        self._validate(X, "X")
        d, g = self._raw_diag_gradient(X)
        return normalized_diag_gradient(d, g, normalize_exponent(self.normalize))


def _where(rows):
    return slice(None) if rows is None else rows


def _block(rows, cols):
    if rows is None and cols is None:
        return (slice(None), slice(None))
    return np.ix_(*(np.arange(len(r)) if r is None else r for r in (rows, cols)))


def _check_label(name):
    if not isinstance(name, str):
        raise TypeError("node_label must be the name of a node attribute, got %r" % (name,))


@document_execution(_EXECUTION)
class WLFramework(_Framework):
    r"""The Weisfeiler–Lehman framework over a base graph kernel (Shervashidze et al. 2011).

    Colour refinement relabels every node round after round, as in
    :class:`WeisfeilerLehmanKernel` (round 0 is the node label; the label of
    round i is the pair of the node's round i − 1 label and the sorted multiset
    of its neighbours'). Let G_i be G with the attribute ``node_label`` holding
    the round-i labels. Then

    .. math::

        K(G, G') = \sum_{i=0}^{h} k_\text{base}(G_i, G'_i).

    With ``ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))``
    this is the WL shortest-path kernel, equal to GraKeL's
    ``WeisfeilerLehman(n_iter=h, base_graph_kernel=ShortestPath)``; the WL
    subtree kernel is the framework over :class:`VertexHistogramKernel`.

    The round labels are numbered over all graphs of one call, in an order
    that depends only on their content (two labels compare the same way in
    every call), so the base kernel must compare ``node_label`` for equality
    only (a Kronecker delta, a histogram): then K(G, G') depends only on G and
    G', bit for bit even for iterative base kernels such as the marginalized
    kernel, whose arithmetic follows the order of label values. Other attributes the
    base kernel reads (edge labels, continuous attributes) are passed through
    unchanged. The refinement runs in the Go core, once per call over X and Y.

    Parameters
    ----------
    base_kernel : graph kernel or None, default=None
        The kernel of each round, e.g.
        ``ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))``;
        None is GraKeL's default, ``VertexHistogramKernel(node_label)`` (the WL
        subtree kernel).
        Its ``normalize`` is ignored (the terms are raw; ``normalize`` here
        normalizes the sum). Its hyperparameters are the framework's
        (``base_kernel__...``, ``theta``): the gradient is the sum of the
        base kernel's gradients of the rounds.
    n_iter : int, default=5
        The number h of refinement rounds (rounds 0..h are summed). At most 100.
    node_label : str, default="label"
        The discrete node attribute that is refined and that the base kernel reads.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization of the sum K(x, y) / sqrt(K(x, x) K(y, y)).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import ShortestPathKernel, WLFramework, datasets
    >>> from graphgram.microkernels import KroneckerDelta, TensorProduct
    >>> graphs, y = datasets.load_mutag()
    >>> sp = ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))
    >>> K = WLFramework(sp, n_iter=3, normalize=True)(graphs)
    >>> K.shape
    (188, 188)
    """

    def __init__(self, base_kernel=None, n_iter=5, node_label="label", normalize=False, n_jobs=None, verbose=None,
                 device="auto", precision="float64"):
        self.base_kernel = base_kernel
        self.n_iter = n_iter
        self.node_label = node_label
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    def _check_params(self):
        super()._check_params()
        _check_integers(self, _ranges("wl", ("n_iter", "n_iter")))
        _check_label(self.node_label)

    def _default_base(self):
        return VertexHistogramKernel(node_label=self.node_label)

    def _refiner(self):
        return WeisfeilerLehmanKernel(n_iter=int(self.n_iter), node_label=self.node_label, n_jobs=self.n_jobs,
                                      verbose=self.verbose, device="cpu")

    def _validate(self, X, name):
        self._refiner()._validate(X, name)
        super()._validate(X, name)

    def round_labels(self, X, Y=None):
        """Return the Weisfeiler–Lehman labels of the nodes of X (then Y), one row per round.

        Labels are numbered over the graphs of this call; only their equality
        is meaningful.

        Returns
        -------
        labels : ndarray of int64, shape (n_iter + 1, total nodes of X and Y)
        """
        wl = self._refiner()
        px, py, params = wl._pack(X, Y)
        nodes = px.n_nodes + (0 if py is None else py.n_nodes)
        return wl._compute_packed("wl_labels", px, py, params, (int(self.n_iter) + 1, nodes))[0]

    def _terms(self, X, Y):
        labels = self.round_labels(X, Y)
        X, Y = list(X), (None if Y is None else list(Y))  # relabelled graph by graph (a library too)
        starts = np.cumsum(np.concatenate([[0], node_counts(X)] + ([] if Y is None else [node_counts(Y)])))
        for lab in labels:
            relabeled = [_relabel(g, self.node_label, lab[a:b]) for g, a, b in
                         zip(X + ([] if Y is None else Y), starts[:-1], starts[1:])]
            yield relabeled[:len(X)], (None if Y is None else relabeled[len(X):]), None, None


def _relabel(g, name, values):
    """g with node attribute ``name`` holding ``values`` (arrays shared, nothing checked again)."""
    values.flags.writeable = False
    return Graph._trusted(g.n_nodes, g._edges, g._weights, dict(g._node_attrs, **{name: values}), g._edge_attrs)


def _subgraph(g, keep):
    """The subgraph of g induced by the nodes where ``keep`` is true, with their attributes."""
    if keep.all():
        return g
    index = np.cumsum(keep) - 1
    e = g._edges
    inside = keep[e[:, 0]] & keep[e[:, 1]] if len(e) else np.zeros(0, dtype=bool)
    edges = index[e[inside]] if len(e) else e

    def frozen(a):
        a.flags.writeable = False
        return a
    return Graph._trusted(int(keep.sum()), frozen(edges), frozen(g._weights[inside]),
                          {k: frozen(v[keep]) for k, v in g._node_attrs.items()},
                          {k: frozen(v[inside]) for k, v in g._edge_attrs.items()})


@document_execution(_EXECUTION)
class CoreFramework(_Framework):
    r"""The core framework over a base graph kernel (Nikolentzos et al. 2018).

    The i-core C_i(G) of a graph is its maximal subgraph whose nodes all have
    degree ≥ i within it (degrees count neighbours other than the node itself:
    self-loops are ignored); a node's core number is the largest i whose core
    holds it. With c the largest core number of the call's graphs,

    .. math::

        K(G, G') = \sum_{i=\max(0,\ m+1)}^{c} k_\text{base}(C_i(G), C_i(G')),

    m = ``min_core``, where a term whose core is empty in G or G' is 0 (the base
    kernel is not called on empty graphs; terms with i above a graph's own
    largest core are so empty for it, and c does not change any value). The
    0-core is the whole graph. Core-SP and Core-WL are the framework over
    :class:`ShortestPathKernel` and :class:`WeisfeilerLehmanKernel`; with
    ``min_core=-1`` their values equal GraKeL's
    ``CoreFramework(base_graph_kernel=ShortestPath)`` and
    ``(WeisfeilerLehman, ...)``, whose ``min_core`` is always -1 (GraKeL 0.1.11
    ignores the argument). A min_core at or above every core number of the
    call gives zeros (GraKeL raises an error). Core numbers are computed in
    the Go core (Batagelj and Zaversnik 2003, linear time).

    Parameters
    ----------
    base_kernel : graph kernel or None, default=None
        The kernel of each core, e.g. ``WeisfeilerLehmanKernel(n_iter=5)``; None
        is GraKeL's default, the shortest-path kernel on the node attribute
        "label" (``ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))``). Its
        ``normalize`` is ignored (the terms are raw; ``normalize`` here
        normalizes the sum). Its hyperparameters are the framework's
        (``base_kernel__...``, ``theta``): the gradient is the sum of the
        base kernel's gradients of the cores.
    min_core : int, default=-1
        Sum over the i-cores with i > min_core (-1: from the whole graph).
    normalize : bool or float in [0, 1], default=False
        Cosine normalization of the sum.
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import CoreFramework, WeisfeilerLehmanKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = CoreFramework(WeisfeilerLehmanKernel(n_iter=4), normalize=True)(graphs)
    >>> K.shape
    (188, 188)
    """

    def __init__(self, base_kernel=None, min_core=-1, normalize=False, n_jobs=None, verbose=None, device="auto",
                 precision="float64"):
        self.base_kernel = base_kernel
        self.min_core = min_core
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    def _check_params(self):
        super()._check_params()
        m = self.min_core
        if not isinstance(m, numbers.Integral) or isinstance(m, bool):
            raise TypeError("min_core must be an integer, got %r" % (m,))
        if m < -1:
            raise ValueError("min_core must be >= -1, got %d" % m)

    def _default_base(self):
        return ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))

    def core_numbers(self, X, Y=None):
        """Return the core number of every node of X (then Y), graph after graph.

        Returns
        -------
        cores : ndarray of int64, shape (total nodes of X and Y,)
        """
        # A mode of the explicit kernel that reads the bare structure only: no
        # attributes packed, no feature kind (docs/abi.md).
        px, py, _, _ = _packing.pack(X, Y)
        params = dict(n_jobs=self._go_jobs(), **_backend.device_params("cpu", "float64"))
        nodes = px.n_nodes + (0 if py is None else py.n_nodes)
        return _backend.compute("explicit", "core_numbers", params, px, py, (nodes,), verbose=self.verbose)[0]

    def _terms(self, X, Y):
        cores = self.core_numbers(X, Y)
        X, Y = list(X), (None if Y is None else list(Y))  # subgraphs graph by graph (a library too)
        graphs = X + ([] if Y is None else Y)
        starts = np.cumsum(np.concatenate([[0], node_counts(graphs)]))
        per_graph = [cores[a:b] for a, b in zip(starts[:-1], starts[1:])]
        top = np.array([c.max() if c.size else -1 for c in per_graph])
        for i in range(max(0, int(self.min_core) + 1), int(top.max()) + 1):
            has = np.flatnonzero(top >= i)  # the graphs whose i-core is not empty
            rows = has[has < len(X)]
            if Y is None:
                if rows.size:
                    yield [_subgraph(X[r], per_graph[r] >= i) for r in rows], None, rows, None
                continue
            cols = has[has >= len(X)]
            if rows.size and cols.size:
                yield ([_subgraph(X[r], per_graph[r] >= i) for r in rows],
                       [_subgraph(Y[c - len(X)], per_graph[c] >= i) for c in cols], rows, cols - len(X))
