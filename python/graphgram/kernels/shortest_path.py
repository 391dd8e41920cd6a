"""The shortest-path graph kernel (Borgwardt and Kriegel 2005)."""

from ..microkernels import TensorProduct
from ._base import GraphKernelBase, document_execution

__all__ = ["ShortestPathKernel"]


@document_execution(
    "On the GPU, ``\"float32\"`` computes products in single precision,\n"
    "    summed in double, and agrees with float64 to 1e-5 relative.")
class ShortestPathKernel(GraphKernelBase):
    r"""Shortest-path kernel between graphs with optional node labels or attributes.

    Each graph is turned once into its shortest-path graph: an edge between every
    pair of distinct connected nodes, labeled with their shortest distance (hop
    counts, or sums of edge lengths when ``weight`` names an edge attribute). Then

    .. math::

        K(G, G') = \sum_{(u,v)} \sum_{(u',v')} \kappa_v(u, u')\,
                   \kappa_\ell(d(u,v), d'(u',v'))\, \kappa_v(v, v'),

    summed over *ordered* pairs of distinct connected nodes of each graph, so each
    undirected shortest-path edge counts in both orientations and isolated nodes
    contribute nothing. With ``node_kernel=TensorProduct(label=KroneckerDelta(0.0))``
    and the default length kernel the values equal GraKeL's
    ``ShortestPath(with_labels=True)`` exactly; without a node kernel, GraKeL's
    ``ShortestPath(with_labels=False)``.

    The Go core chooses the algorithm from the kernels: with exact-match node and
    length kernels (the default, and Kronecker deltas with ``h=0``) it counts
    (label, label, length) triplets and multiplies the sparse count vectors, an
    exact integer computation; with other kernels it joins shortest-path edges by
    label or by length where one of the kernels is an exact match, and otherwise
    runs one branch-free pass over all pairs of shortest-path edges per pair of
    graphs (FCSP, Xu et al.). All-pairs shortest paths use BFS for hop counts and
    Floyd–Warshall or Dijkstra for lengths. Pairs of graphs are spread over all
    cores, and a pair of very large graphs is itself split over the cores.

    Parameters
    ----------
    node_kernel : microkernel, default=None
        Base kernel on node attributes, e.g.
        ``TensorProduct(label=KroneckerDelta(0.0))`` for an exact match of labels.
        ``None`` means unlabeled nodes (every node pair weighs 1).
    length_kernel : microkernel, default=None
        Kernel on two path lengths, given *unbound* (it compares two numbers), e.g.
        ``KroneckerDelta(0.0)``, ``SquareExponential(1.0)`` or the Brownian bridge
        kernel ``BrownianBridge(c)`` = max(0, c − |x − y|). ``None`` means an exact
        match of lengths. ``TensorProduct(length=...)`` is accepted too.
    weight : str, default=None
        Name of the edge attribute holding edge lengths (finite, >= 0; 0 is
        allowed). ``None`` measures paths in hops. With real-valued lengths an
        exact-match length kernel compares floating-point sums, which can differ
        by rounding between paths of equal length; prefer a smooth length kernel
        there.
    normalize : bool, default=False
        Return the cosine-normalized kernel K(x, y) / sqrt(K(x, x) K(y, y)).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import ShortestPathKernel, datasets
    >>> from graphgram.microkernels import TensorProduct, KroneckerDelta
    >>> graphs, y = datasets.load_mutag()
    >>> kernel = ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))
    >>> K = kernel(graphs[:10])
    >>> K.shape
    (10, 10)
    """

    def __init__(self, node_kernel=None, length_kernel=None, weight=None, normalize=False, n_jobs=None,
                 verbose=None, device="auto",
                 precision="float64"):
        self.node_kernel = node_kernel
        self.length_kernel = length_kernel
        self.weight = weight
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _kernel = "shortest_path"

    def _check_params(self):
        super()._check_params()
        self._check_microkernels("node_kernel", "length_kernel")
        if self.weight is not None and not isinstance(self.weight, str):
            raise TypeError("weight must be the name of an edge attribute or None, got %r" % (self.weight,))

    def _length_spec(self):
        """The JSON expression of the length kernel, reading column 0 (the length)."""
        k = self.length_kernel
        if k is None:
            return None
        if not k._has_binding():
            k = TensorProduct(length=k)
        elif k.attributes() != {"length"}:
            raise ValueError("length_kernel must compare lengths: give it unbound (e.g. SquareExponential(1.0)) "
                             "or bound to the name 'length', not to %s" % sorted(k.attributes()))
        return k.to_spec({"length": (0, 1)})

    def _attributes(self):
        edges = {} if self.weight is None else {self.weight: "named by weight"}
        return self._reads("node kernel", self.node_kernel), edges

    def _params(self, node_layout, edge_layout):
        weight_col = -1
        if self.weight is not None:
            entry = edge_layout[self.weight]
            col, width = entry[0], entry[1]
            if len(entry) > 2 and entry[2] == "str":
                raise TypeError("the edge attribute %r holds strings; edge lengths must be numbers" % self.weight)
            if width != 1:
                raise ValueError("the edge attribute %r holds vectors of length %d; edge lengths must be scalars"
                                 % (self.weight, width))
            weight_col = col
        return {"node_kernel": self._spec("node kernel", self.node_kernel, node_layout), "length_kernel": self._length_spec(), "weight_col": weight_col,
                "n_jobs": self._go_jobs()}
