"""The neighborhood subgraph pairwise distance kernel (Costa and De Grave 2010)."""

from ._base import document_execution
from ._explicit import _EXACT, _ExplicitFeatureKernel, _check_integers

__all__ = ["NSPDKKernel"]


@document_execution(_EXACT.replace("exact integer counts", "sums of cosines of exact integer count vectors")
                    .replace("The values are", "The pair counts are"))
class NSPDKKernel(_ExplicitFeatureKernel):
    r"""Neighborhood subgraph pairwise distance kernel (Costa and De Grave 2010).

    For every radius ρ ≤ ``r`` and distance δ ≤ ``d``, each ordered pair of
    nodes (u, v) at shortest-path distance δ (δ = 0: u = v, once) is one
    feature: the pair of classes of the neighbourhood subgraphs of radius ρ
    rooted at u and at v (the subgraphs induced by the nodes within ρ hops).
    With φ_ρδ(G) the count vector of G's features in block (ρ, δ),

    .. math::

        K(G, G') = \sum_{\rho=0}^{r} \sum_{\delta=0}^{d}
                   \frac{\langle \phi_{\rho\delta}(G), \phi_{\rho\delta}(G')\rangle}
                        {\lVert\phi_{\rho\delta}(G)\rVert \, \lVert\phi_{\rho\delta}(G')\rVert},

    a block where either graph has no pair counting 0; K(G, G) is the number of
    blocks where G has pairs, (r + 1) times the number of distances δ ≤ d that
    occur in G. Each block's counts are divided by their norm before the blocks
    are summed, so the kernel has no exact integer feature map: :meth:`features`
    raises ``NotImplementedError``.

    The class of a neighbourhood subgraph S is GraKeL's invariant, made
    independent of the node numbering: each node i of S is labelled by the
    multiset of pairs (dist(i, j), label(j)) over the nodes j of S with
    dist(i, j) ≤ d (distances in the whole graph), and two subgraphs share a
    class when their multisets of node labels and their multisets of directed
    edges (L(i), L(j), edge label) are equal. The root is not marked. The
    classes are numbered over all graphs of a call, without hashing, so there
    are no collisions; the invariant is implied by isomorphism but does not
    imply it. Self-loops count as edges, not as distances.

    Differences from GraKeL's ``NeighborhoodSubgraphPairwiseDistance(r, d)``
    (0.1.11), which otherwise computes the same sum: (1) GraKeL hashes its
    node labels in node-number order and its edges in set order without
    sorting, so its classes depend on how the graph's nodes are numbered; (2)
    its neighbourhoods of radius ρ ≥ 3 are the balls of radius 2^(ρ−1), and its
    "distance" δ ≥ 3 is the band 2^(δ−2) < dist ≤ 2^(δ−1), and with r = 0 it
    counts distance 0 only; (3) its Gram diagonal
    counts a block where the graph has no pair as 1 (and its ``normalize``
    divides by the number of blocks of the fit). Where none of these applies —
    radius and distance at most 2, its encoding sorted — the values are equal
    to GraKeL's (tests/test_nspdk.py).

    Parameters
    ----------
    r : int, default=3
        The largest neighbourhood radius (0 to 20).
    d : int, default=4
        The largest distance between two roots (0 to 100).
    node_label : str, default="label"
        The node attribute holding the discrete label.
    edge_label : str or None, default=None
        The edge attribute holding the discrete label (bond types); None: all
        edges alike.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization: K(G, G') / √(K(G, G) K(G', G')).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import NSPDKKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = NSPDKKernel(r=3, d=4, edge_label="label")(graphs)
    >>> K.shape, float(K[0, 0])
    ((188, 188), 20.0)
    """

    def __init__(self, r=3, d=4, node_label="label", edge_label=None, normalize=False, n_jobs=None, verbose=None,
                 device="auto", precision="float64"):
        self.r = r
        self.d = d
        self.node_label = node_label
        self.edge_label = edge_label
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _required_labels = ("node_label",)

    def _check_params(self):
        super()._check_params()
        _check_integers(self, self._ranges(("r", "r"), ("d", "d")))

    def _labels(self):
        return self.node_label, self.edge_label

    def _params(self, node_layout, edge_layout):
        return dict(super()._params(node_layout, edge_layout), nspdk={"r": int(self.r), "d": int(self.d)})

    def _feature_params(self):
        return {"features": "nspdk", "semiring": "product"}
