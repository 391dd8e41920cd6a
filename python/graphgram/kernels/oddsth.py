"""The ODD-ST_h kernel (Da San Martino, Navarin and Sperduti 2012)."""

from ._base import document_execution
from ._explicit import _EXACT, _ExplicitFeatureKernel, _check_integers

__all__ = ["OddSthKernel"]


@document_execution(_EXACT)
class OddSthKernel(_ExplicitFeatureKernel):
    r"""ODD-ST_h kernel: subtrees of the ordered DAG decomposition of a graph
    (Da San Martino, Navarin and Sperduti 2012).

    Each graph is decomposed into one DAG per node r: the breadth-first DAG
    rooted at r, whose edges lead from each level to the next, down to depth
    ``h``. Every node v of every DAG contributes one feature, the tree visit
    of the DAG from v (the part of the DAG below v unfolded into a tree).
    With φ_t(G) the number of (root, node) pairs of G whose tree visit is t,

    .. math::

        K(G, G') = \sum_t \phi_t(G)\, \phi_t(G'),

    the subtree kernel with weight 1 summed over all pairs of DAGs of the two
    graphs. Two tree visits are the same feature when their roots' labels
    agree and their children's visits can be matched one to one: children
    are unordered, so the features do not depend on how the nodes are
    numbered. Visits are identified by this content exactly (no hashing).

    Differences from GraKeL's ``OddSth(h)`` (0.1.11), whose features are the
    same strings: (1) GraKeL joins a node's children in an order that follows
    the node numbering where labels tie, so its features of isomorphic graphs
    can differ; (2) it weighs feature t by the count of t in the first graph
    of the call that holds it, so a pair's value depends on the other graphs
    of the call and their order (here every weight is 1). With GraKeL's
    children sorted, its feature counts are ours, and its Gram matrix is
    ours with that weight (tests/test_oddsth.py).

    Parameters
    ----------
    h : int or None, default=None
        The largest depth of a DAG (1 to 1000); ``None``: the whole connected
        component of the root (GraKeL's default).
    node_label : str or None, default="label"
        The node attribute holding the discrete label; ``None``: all nodes alike.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization: K(G, G') / √(K(G, G) K(G', G')).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import OddSthKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = OddSthKernel(h=3, normalize=True)(graphs)
    >>> K.shape, float(K[0, 0])
    ((188, 188), 1.0)
    """

    def __init__(self, h=None, node_label="label", normalize=False, n_jobs=None, verbose=None, device="auto",
                 precision="float64"):
        self.h = h
        self.node_label = node_label
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    def _check_params(self):
        super()._check_params()
        if self.h is not None:
            _check_integers(self, self._ranges(("h", "h")))

    def _labels(self):
        return self.node_label, None

    def _params(self, node_layout, edge_layout):
        return dict(super()._params(node_layout, edge_layout), oddsth={"h": 0 if self.h is None else int(self.h)})

    def _feature_params(self):
        return {"features": "oddsth", "semiring": "product"}

    def _max_nonzeros(self, X):
        return sum(g.n_nodes * g.n_nodes for g in X)
