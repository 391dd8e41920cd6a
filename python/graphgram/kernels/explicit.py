"""Kernels with explicit sparse feature maps: Weisfeiler–Lehman subtree and
optimal assignment (Shervashidze et al. 2011; Kriege et al. 2016), vertex and
edge label histograms.

Each graph becomes a vector of label counts and the kernel is the product of
two vectors over a semiring — Σ x·y, or Σ min(x, y) for the optimal
assignment — computed by the Go core's sparse Gram engine
(``gokernel/sparsegram``). Labels are numbered afresh in every call over all
its graphs (X and Y together), so ``kernel(X, Y)``, ``fit``/``transform`` and
labels never seen at fit time agree by construction and no dictionary is kept
on the object. Values are exact integers, returned as float64.
"""

import numpy as np

from ._base import document_execution
# The family's shared part; its private names stay importable from here.
from ._explicit import (_EXACT, _ExplicitFeatureKernel, _check_integers, _check_positive,  # noqa: F401
                        _unary_expansion)

__all__ = ["WeisfeilerLehmanKernel", "VertexHistogramKernel", "EdgeHistogramKernel", "HashGraphKernel"]


@document_execution(_EXACT)
class WeisfeilerLehmanKernel(_ExplicitFeatureKernel):
    r"""Weisfeiler–Lehman subtree and optimal-assignment kernels on discrete labels.

    Colour refinement relabels every node, round after round: its label in
    round i is the pair (its label in round i − 1, the sorted multiset of its
    neighbours' labels in round i − 1), numbered over all graphs of the call;
    round 0 is the node label, or the node's degree (its number of incident
    edges, a self-loop counted once) when ``node_label=None``. With
    ``edge_label``, the multiset holds (edge label, neighbour label) pairs
    instead: the label of the edge to each neighbour joins the neighbour's. A
    self-loop makes a node its own neighbour once. Let c_i(G, ℓ) count the nodes
    of G labeled ℓ in round i. Then

    .. math::

        K_\text{subtree}(G, G') = \sum_{i=0}^{h} \sum_\ell c_i(G, \ell)\, c_i(G', \ell),
        \qquad
        K_\text{OA}(G, G') = \sum_{i=0}^{h} \sum_\ell \min(c_i(G, \ell), c_i(G', \ell)).

    The optimal-assignment kernel (Kriege, Giscard and Wilson 2016) is the
    value of the best matching of the two graphs' nodes under the WL hierarchy,
    computed as this histogram intersection.

    With the defaults (``edge_label=None``) the subtree values equal GraKeL's
    ``WeisfeilerLehman(n_iter, base_graph_kernel=VertexHistogram)``, and the
    optimal-assignment values GraKeL's ``WeisfeilerLehmanOptimalAssignment(n_iter)``
    on graphs without isolated nodes: GraKeL drops isolated nodes from the
    optimal assignment (they count in every round here, as in the definition).

    Parameters
    ----------
    n_iter : int, default=5
        The number h of refinement rounds (rounds 0..h are counted; 0 gives
        the vertex histogram kernel). At most 100.
    node_label : str or None, default="label"
        The node attribute holding the discrete label (strings, integers, or
        whole numbers). ``None`` starts from the node degrees.
    edge_label : str or None, default=None
        An edge attribute holding a discrete label that joins the refinement.
    base : {"subtree", "optimal_assignment"}, default="subtree"
        Combine the label counts by products (subtree) or by minima
        (optimal assignment).
    normalize : bool or float in [0, 1], default=False
        Cosine normalization K(x, y) / sqrt(K(x, x) K(y, y)) (an exponent in
        (0, 1) keeps part of the graphs' sizes).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import WeisfeilerLehmanKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = WeisfeilerLehmanKernel(n_iter=3, normalize=True)(graphs)
    >>> K.shape
    (188, 188)
    """

    def __init__(self, n_iter=5, node_label="label", edge_label=None, base="subtree", normalize=False,
                 n_jobs=None, verbose=None, device="auto", precision="float64"):
        self.n_iter = n_iter
        self.node_label = node_label
        self.edge_label = edge_label
        self.base = base
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    def _check_params(self):
        super()._check_params()
        _check_integers(self, self._ranges(("n_iter", "n_iter")))
        if self.base not in ("subtree", "optimal_assignment"):
            raise ValueError("base must be 'subtree' or 'optimal_assignment', got %r" % (self.base,))

    def _labels(self):
        return self.node_label, self.edge_label

    def _feature_params(self):
        return {"features": "wl", "n_iter": int(self.n_iter),
                "semiring": "min" if self.base == "optimal_assignment" else "product"}


@document_execution(_EXACT)
class VertexHistogramKernel(_ExplicitFeatureKernel):
    r"""Vertex label histogram kernel: K(G, G') = Σ_ℓ c(G, ℓ) c(G', ℓ), with c(G, ℓ)
    the number of nodes of G labeled ℓ (GraKeL's ``VertexHistogram``).

    Parameters
    ----------
    node_label : str, default="label"
        The node attribute holding the discrete label.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization.
    %(execution_parameters)s
    """

    def __init__(self, node_label="label", normalize=False, n_jobs=None, verbose=None, device="auto",
                 precision="float64"):
        self.node_label = node_label
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _required_labels = ("node_label",)

    def _labels(self):
        return self.node_label, None

    def _feature_params(self):
        return {"features": "wl", "n_iter": 0, "semiring": "product"}


@document_execution(_EXACT)
class EdgeHistogramKernel(_ExplicitFeatureKernel):
    r"""Edge label histogram kernel: K(G, G') = Σ_ℓ c(G, ℓ) c(G', ℓ), with c(G, ℓ)
    the number of edges of G labeled ℓ counted in both orientations (a
    self-loop once), as GraKeL's ``EdgeHistogram`` counts them on undirected
    graphs.

    Parameters
    ----------
    edge_label : str, default="label"
        The edge attribute holding the discrete label.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization.
    %(execution_parameters)s
    """

    def __init__(self, edge_label="label", normalize=False, n_jobs=None, verbose=None, device="auto",
                 precision="float64"):
        self.edge_label = edge_label
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _required_labels = ("edge_label",)

    def _labels(self):
        return None, self.edge_label

    def _feature_params(self):
        return {"features": "edges", "semiring": "product"}


@document_execution(_EXACT.replace("exact integer counts", "averages of exact integer counts"))
class HashGraphKernel(_ExplicitFeatureKernel):
    r"""Hash graph kernel for continuous node attributes (Morris, Kriege, Kersting
    and Mutzel 2016), on the Weisfeiler–Lehman subtree kernel.

    T hash functions map each node's attribute vector x to a discrete label, the
    bucket of x along ``n_projections`` random directions,

    .. math::

        h_t(x) = \left(\left\lfloor \frac{a_{t,p}\cdot x + b_{t,p}}{w} \right\rfloor\right)_{p=1..P},
        \qquad a_{t,p} \sim \mathcal N(0, I),\ b_{t,p} \sim U[0, w),

    paired with the node's discrete label when ``node_label`` is given (a
    p-stable locality-sensitive hash: near vectors share buckets more often
    than far ones). Each hashed labelling is refined by Weisfeiler–Lehman as in
    :class:`WeisfeilerLehmanKernel` and

    .. math::

        K(G, G') = \frac1T \sum_{t=1}^{T} K_\text{WL}(h_t(G), h_t(G')).

    The directions and offsets are drawn from ``random_state``, so that every
    call of one kernel object uses the same hash functions. Attributes on very
    different scales should be standardized first; ``bin_width`` is in their units.

    Parameters
    ----------
    attributes : str, default="attributes"
        The node attribute holding the continuous values (a number or a vector per node).
    node_label : str or None, default=None
        A discrete node label paired with the hashed attributes.
    n_iter : int, default=3
        Weisfeiler–Lehman rounds on each hashed labelling (at most 100).
    n_hashes : int, default=20
        The number T of hash functions.
    n_projections : int, default=1
        Directions per hash function (P): 1 cuts space into slabs, more into cells.
    bin_width : float, default=1.0
        The width w of a bucket along a direction.
    random_state : int, default=0
        Seed of the hash functions.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization.
    %(execution_parameters)s
    """

    def __init__(self, attributes="attributes", node_label=None, n_iter=3, n_hashes=20, n_projections=1,
                 bin_width=1.0, random_state=0, normalize=False, n_jobs=None, verbose=None, device="auto",
                 precision="float64"):
        self.attributes = attributes
        self.node_label = node_label
        self.n_iter = n_iter
        self.n_hashes = n_hashes
        self.n_projections = n_projections
        self.bin_width = bin_width
        self.random_state = random_state
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    def _check_params(self):
        super()._check_params()
        if not isinstance(self.attributes, str):
            raise TypeError("attributes must be the name of a node attribute, got %r" % (self.attributes,))
        _check_integers(self, self._ranges(("n_iter", "n_iter"), ("n_hashes", "hashes"), ("n_projections", "per_hash")),
                        seed="the hash functions")
        _check_positive(self.bin_width, "bin_width")

    def _labels(self):
        return self.node_label, None

    def _attributes(self):
        nodes, edges = super()._attributes()
        return dict(nodes, **{self.attributes: "the continuous attributes of HashGraphKernel"}), edges

    def hash_functions(self, width):
        """Return the directions (T·P × width) and offsets (T·P) for attributes of ``width`` values."""
        rng = np.random.default_rng(self.random_state)
        rows = self.n_hashes * self.n_projections
        return rng.standard_normal((rows, width)), rng.uniform(0.0, self.bin_width, rows)

    def _params(self, node_layout, edge_layout):
        col, width = node_layout[self.attributes][0], node_layout[self.attributes][1]
        if node_layout[self.attributes][2] == "str":
            raise TypeError("the node attribute %r holds strings; HashGraphKernel hashes numbers "
                            "(use it as node_label)" % self.attributes)
        directions, offsets = self.hash_functions(width)
        return dict(super()._params(node_layout, edge_layout),
                    hash={"attr_col": col, "attr_width": width, "projections": directions.ravel().tolist(),
                          "offsets": offsets.tolist(), "hashes": int(self.n_hashes),
                          "per_hash": int(self.n_projections), "bin_width": float(self.bin_width)})

    def _feature_params(self):
        return {"features": "hash", "n_iter": int(self.n_iter), "semiring": "product"}

    def _max_nonzeros(self, X):
        return self.n_hashes * super()._max_nonzeros(X)
