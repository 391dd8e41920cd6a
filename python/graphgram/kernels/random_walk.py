"""Random-walk graph kernels on the direct product graph (Gärtner et al. 2003)."""

import numbers

import numpy as np

from ._base import GraphKernelBase, document_execution

__all__ = ["RandomWalkKernel"]


@document_execution(
    "The random-walk kernel has no GPU path: it is always computed in\n"
    "    float64.")
class RandomWalkKernel(GraphKernelBase):
    r"""Random-walk kernel counting common walks of two graphs, exactly.

    .. math::

        K(G, G') = \sum_{k \ge 0} \mu_k\, \mathbf 1^\top (W_\times)^k \mathbf 1,
        \qquad
        W_\times[(i,k),(j,l)] = A_{ij}\, A'_{kl}\, \kappa(i,k)\, \kappa(j,l),

    on the direct product graph, whose nodes are all :math:`n \cdot n'` node pairs
    (the vectors of ones run over all of them, so the zero-length term is
    :math:`n n'`). :math:`A, A'` are the weighted adjacency matrices (edge
    ``weights``, 1 for unweighted graphs). ``kind="geometric"`` uses
    :math:`\mu_k = \lambda^k`, ``kind="exponential"`` :math:`\mu_k = \lambda^k / k!`;
    ``p`` truncates the sum after ``p`` steps.

    The node kernel :math:`\kappa` weighs the product graph's nodes: without one
    :math:`\kappa \equiv 1` and :math:`W_\times = A \otimes A'` (the unlabeled
    kernel); with ``TensorProduct(label=KroneckerDelta(0.0))`` a product node
    exists only for equal labels, the standard labeled kernel (GraKeL's
    ``RandomWalkLabeled(method_type="baseline")``); any other base kernel
    weighs each step between node pairs by κ at both ends. See
    ``docs/random_walk.md``.

    The sums are exact (to rounding), not iterated to a cap: unlabeled graphs go
    through one eigendecomposition of each adjacency matrix (then :math:`O(n n')`
    per pair), or walk counts when truncated; labeled graphs solve the product
    system by conjugate gradients with a guaranteed error bound far below 1e-12
    relative, apply :math:`e^{\lambda W_\times}` by a scaled Taylor series, or
    sum the ``p`` steps.

    Parameters
    ----------
    lamda : float, default=0.01
        The decay λ > 0. The geometric series converges only for
        λ < 1/ρ(W×), and since ρ(W×) ≤ ρ(A) ρ(A') max|κ|² (equal for unlabeled
        graphs) a larger λ raises ``ValueError`` naming the largest admissible
        value for the graphs given.
    kind : {"geometric", "exponential"}, default="geometric"
    node_kernel : microkernel, default=None
        Base kernel on node attributes weighing product nodes; ``None`` means
        unlabeled.
    p : int, default=None
        Number of steps of a truncated sum (walks of length 0..p); ``None`` sums
        the whole series.
    normalize : bool, default=False
        Return the cosine-normalized kernel K(x, y) / sqrt(K(x, x) K(y, y)).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import RandomWalkKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = RandomWalkKernel(lamda=0.01)(graphs[:10])
    >>> K.shape
    (10, 10)
    """

    def __init__(self, lamda=0.01, kind="geometric", node_kernel=None, p=None, normalize=False, n_jobs=None,
                 verbose=None, device="auto",
                 precision="float64"):
        self.lamda = lamda
        self.kind = kind
        self.node_kernel = node_kernel
        self.p = p
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _kernel = "random_walk"

    def _check_params(self):
        super()._check_params()
        lam = self.lamda
        if not isinstance(lam, numbers.Real) or isinstance(lam, bool) or not np.isfinite(lam) or lam <= 0:
            raise ValueError("lamda must be a positive finite number, got %r" % (lam,))
        if self.kind not in ("geometric", "exponential"):
            raise ValueError("kind must be 'geometric' or 'exponential', got %r" % (self.kind,))
        p = self.p
        if p is not None and (not isinstance(p, numbers.Integral) or isinstance(p, bool) or p < 1):
            raise ValueError("p must be a positive integer (the number of steps) or None, got %r" % (p,))
        self._check_microkernels("node_kernel")

    def _attributes(self):
        return self._reads("node kernel", self.node_kernel), {}

    def _params(self, node_layout, edge_layout):
        return {"node_kernel": self._spec("node kernel", self.node_kernel, node_layout), "lamda": float(self.lamda), "kind": self.kind,
                "steps": int(self.p or 0), "n_jobs": self._go_jobs()}
