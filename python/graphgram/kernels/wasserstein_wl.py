"""The Wasserstein Weisfeiler–Lehman kernel (Togninalli et al. 2019)."""

import numbers

import numpy as np

from .. import _backend
from ._base import GraphKernelBase, as_graph_list, document_execution
from ._explicit import _check_positive

__all__ = ["WassersteinWLKernel"]


@document_execution(
    "The Wasserstein Weisfeiler-Lehman kernel has no GPU path: it is always\n"
    "    computed in float64.")
class WassersteinWLKernel(GraphKernelBase):
    r"""Wasserstein Weisfeiler–Lehman kernel (Togninalli et al., NeurIPS 2019).

    Each graph becomes the set of its nodes' embeddings over ``n_iter``
    Weisfeiler–Lehman rounds, and two graphs are compared by the earth
    mover's (Wasserstein-1) distance between their node sets, each node of a
    graph with :math:`n` nodes weighing :math:`1/n`:

    .. math::

        D(G, G') = \min_{P \ge 0,\ P\mathbf 1 = \mathbf 1/n,\ P^\top\mathbf 1 = \mathbf 1/n'}
                   \sum_{v, v'} P_{v v'}\, d(v, v'),
        \qquad
        K(G, G') = e^{-\gamma D(G, G')}.

    Discrete (``continuous=False``): a node's embedding is the sequence of its
    WL labels in rounds :math:`0..h` (the subtree labels of
    :class:`WeisfeilerLehmanKernel`, round 0 the ``node_label``, or the degree
    when ``node_label`` is None), and :math:`d` the normalized Hamming
    distance, the fraction of the :math:`h+1` rounds in which the two labels
    differ. The distance is computed exactly (an integer divided once by
    :math:`(h+1) n n'`).

    Continuous (``continuous=True``): round 0 is the node's ``attributes``
    vector and :math:`x^{i+1}(v) = \tfrac12\big(x^i(v) + \tfrac{1}{\deg v}
    \sum_{u \in N(v)} x^i(u)\big)` (the paper's rule, unweighted; the sum is 0
    for an isolated node, which therefore halves its vector, as the authors'
    code does; a self-loop makes a node its own neighbour once). The
    embedding concatenates rounds :math:`0..h` and :math:`d` is Euclidean.
    The attributes are used as given: standardize them beforehand if their
    scales differ.

    The transport problem is solved exactly (a min-cost flow with integer
    flows, by the network simplex in Go, as POT's ``ot.emd2`` does), not by
    Sinkhorn iterations; nodes with equal embeddings are merged first, which
    does not change the distance.

    .. note::

       The kernel :math:`e^{-\gamma D}` is **not always positive
       semi-definite** (the paper proves it is for the discrete variant's
       ground distance only in special cases and uses a Krein SVM). Check the
       smallest eigenvalue of a training Gram matrix,
       ``np.linalg.eigvalsh(K).min()``; for an SVM or a Gaussian process you
       may clip the negative eigenvalues yourself,
       ``w, V = np.linalg.eigh(K); K_psd = (V * np.clip(w, 0, None)) @ V.T``
       (a transductive fix: it applies to that matrix, not to new graphs), or
       use the distances of :meth:`distances` with a Krein-space method. This
       class never alters its values silently.

    Parameters
    ----------
    n_iter : int, default=3
        The number :math:`h` of WL rounds (0 compares the labels or attributes
        alone).
    gamma : float, default=1.0
        The scale :math:`\gamma > 0` of the Laplacian kernel
        :math:`e^{-\gamma D}`; the paper tunes it.
    node_label : str or None, default="label"
        The discrete node label of the discrete variant; ``None`` starts from
        the node degrees. Not read when ``continuous=True``.
    attributes : str, default="attributes"
        The float vector node attribute of the continuous variant; only read
        when ``continuous=True``.
    continuous : bool, default=False
        Use the continuous variant.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization; a no-op in exact arithmetic since
        :math:`K(G, G) = 1`.
    %(execution_parameters)s

    Examples
    --------
    >>> import numpy as np
    >>> from graphgram import WassersteinWLKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> kernel = WassersteinWLKernel(n_iter=3, gamma=1.0)
    >>> K = kernel(graphs[:10])
    >>> D = kernel.distances(graphs[:10])
    >>> bool(np.allclose(K, np.exp(-D)))
    True
    """

    def __init__(self, n_iter=3, gamma=1.0, node_label="label", attributes="attributes", continuous=False,
                 normalize=False, n_jobs=None, verbose=None, device="auto", precision="float64"):
        self.n_iter = n_iter
        self.gamma = gamma
        self.node_label = node_label
        self.attributes = attributes
        self.continuous = continuous
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _kernel = "wwl"

    def _check_params(self):
        super()._check_params()
        h = self.n_iter
        low, high = _backend.kernel_info("wl")["bounds"]["n_iter"]  # the WL rounds' bound
        if not isinstance(h, numbers.Integral) or isinstance(h, bool) or not low <= h <= high:
            raise ValueError("n_iter must be an integer in [%d, %d], got %r" % (low, high, h))
        _check_positive(self.gamma, "gamma")
        if not isinstance(self.continuous, (bool, np.bool_)):
            raise TypeError("continuous must be True or False, got %r" % (self.continuous,))
        if self.continuous:
            if not isinstance(self.attributes, str):
                raise TypeError("attributes must be the name of a node attribute, got %r" % (self.attributes,))
        elif self.node_label is not None and not isinstance(self.node_label, str):
            raise TypeError("node_label must be the name of a node attribute or None, got %r" % (self.node_label,))

    def _attributes(self):
        who = type(self).__name__
        if self.continuous:
            return {self.attributes: "the continuous attributes of %s" % who}, {}
        return ({} if self.node_label is None else {self.node_label: "the node label of %s" % who}), {}

    def _discrete(self):
        if self.continuous or self.node_label is None:
            return (), ()
        return (self.node_label,), ()

    def _params(self, node_layout, edge_layout):
        p = {"n_iter": int(self.n_iter), "gamma": float(self.gamma), "continuous": bool(self.continuous),
             "node_label_col": -1, "attr_col": 0, "attr_width": 0, "n_jobs": self._go_jobs()}
        if self.continuous:
            col, width, kind = node_layout[self.attributes][:3]
            if kind == "str":
                raise TypeError("the node attribute %r holds strings; the continuous variant needs numbers "
                                "(use it as node_label)" % self.attributes)
            p.update(attr_col=col, attr_width=width)
        elif self.node_label is not None:
            p["node_label_col"] = node_layout[self.node_label][0]
        return p

    def distances(self, X, Y=None):
        """Return the Wasserstein distances D(X, X) or D(X, Y) (the kernel is exp(-gamma D)).

        Parameters
        ----------
        X : list of Graph
        Y : list of Graph, optional
            When omitted, the symmetric matrix D(X, X) (zero diagonal) is returned.

        Returns
        -------
        D : ndarray of shape (len(X), len(Y)), float64
            Not normalized, whatever ``normalize`` says.
        """
        self._check_params()
        X = as_graph_list(X, "X")
        Y = None if Y is None else as_graph_list(Y, "Y")
        px, py, params = self._pack(X, Y)
        params["distance"] = True
        return self._compute_packed("gram", px, py, params, self._shape("gram", X, Y))[0]
