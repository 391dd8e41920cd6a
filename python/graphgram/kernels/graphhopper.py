"""The GraphHopper kernel (Feragen et al. 2013)."""

from ._base import GraphKernelBase, document_execution

__all__ = ["GraphHopperKernel"]


@document_execution(
    "The GraphHopper kernel has no GPU path: it is always computed in\n"
    "    float64.")
class GraphHopperKernel(GraphKernelBase):
    r"""GraphHopper kernel comparing nodes weighted by their positions on shortest paths.

    .. math::

        K(G, G') = \sum_{v \in V} \sum_{v' \in V'}
                   \langle M(v), M'(v') \rangle_F \, \kappa(v, v'),

    where :math:`M(v)[a, b]` counts the shortest paths of the graph with
    :math:`b` edges on which :math:`v` is node :math:`a` (0-based), over all
    ordered pairs of end nodes, every distinct shortest path counted and the
    one-node path :math:`(v)` included. Paths are measured in hops (edge
    weights are ignored) and stay within a connected component (Feragen et al.
    2013, "Scalable kernels for graphs with continuous attributes"). The values
    equal GraKeL's ``GraphHopper``: ``kernel_type="linear"`` is
    ``node_kernel=TensorProduct(x=DotProduct(0.0))``,
    ``kernel_type=("gaussian", mu)`` is
    ``node_kernel=TensorProduct(x=SquareExponential(1 / sqrt(2 mu)))``, and
    GraKeL's linear kernel on one-hot labels is
    ``node_kernel=TensorProduct(label=KroneckerDelta(0.0))``.

    The weights :math:`M` are counted once per graph by a pass over the
    shortest-path DAG of every root (:math:`O(n m \delta)` for :math:`n`
    nodes, :math:`m` edges and diameter :math:`\delta - 1`). With a linear node
    kernel (``None``, meaning :math:`\kappa \equiv 1`, or a ``DotProduct``) the
    kernel is the inner product of explicit features
    :math:`\sum_v M(v) \otimes x_v`; any other node kernel is summed over all
    node pairs, :math:`O(n n' \delta^2)` per pair of graphs. Pairs are spread
    over all cores.

    The node kernel's hyperparameters get no gradient: ``eval_gradient=True``
    is not supported.

    Parameters
    ----------
    node_kernel : microkernel, default=None
        Base kernel on node attributes, e.g.
        ``TensorProduct(x=SquareExponential(1.0))`` for continuous attributes
        ``x`` or ``TensorProduct(label=KroneckerDelta(0.0))`` for discrete
        labels. ``None`` means every node pair weighs 1.
    normalize : bool, default=False
        Return the cosine-normalized kernel K(x, y) / sqrt(K(x, x) K(y, y)).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import GraphHopperKernel, datasets
    >>> from graphgram.microkernels import TensorProduct, KroneckerDelta
    >>> graphs, y = datasets.load_mutag()
    >>> kernel = GraphHopperKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))
    >>> K = kernel(graphs[:10])
    >>> K.shape
    (10, 10)
    """

    def __init__(self, node_kernel=None, normalize=False, n_jobs=None, verbose=None, device="auto",
                 precision="float64"):
        self.node_kernel = node_kernel
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _kernel = "graphhopper"

    def _check_params(self):
        super()._check_params()
        self._check_microkernels("node_kernel")

    def _attributes(self):
        return self._reads("node kernel", self.node_kernel), {}

    def _params(self, node_layout, edge_layout):
        return {"node_kernel": self._spec("node kernel", self.node_kernel, node_layout), "n_jobs": self._go_jobs()}
