"""The graphlet kernel (Shervashidze, Vishwanathan, Petri, Mehlhorn and Borgwardt 2009),
exact or by sampling."""

import math
import numbers

import numpy as np

from .. import _backend
from ._base import document_execution
from ._explicit import _EXACT, _ExplicitFeatureKernel, _check_integers

__all__ = ["GraphletSamplingKernel"]


@document_execution(_EXACT.replace("The values are exact integer counts", "The graphlet counts are exact integers"))
class GraphletSamplingKernel(_ExplicitFeatureKernel):
    r"""Graphlet kernel on graph structure, exact or by sampling.

    A graphlet is a graph on k nodes (k = 3, 4 or 5); up to isomorphism there
    are 4, 11 and 34 of them, connected or not. Each graph G becomes the vector
    φ(G) counting, for every graphlet, the k-node subsets of G whose induced
    subgraph is that graphlet, and

    .. math::

        K(G, G') = \langle f(G), f(G') \rangle, \qquad
        f(G) = \varphi(G) / \textstyle\sum_c \varphi_c(G)

    with ``frequencies=True`` (the paper's frequency vectors), or
    ⟨φ(G), φ(G')⟩ on the counts themselves with ``frequencies=False``. Node and
    edge labels, weights and self-loops play no part; a graph with fewer than k
    nodes has no graphlets (a zero vector).

    ``sampling=None`` counts all C(n, k) subsets exactly (for graphs of up to a
    few dozen nodes at k = 5; larger ones should be sampled). Otherwise each
    graph draws ``n_samples`` subsets of k distinct nodes uniformly at random
    from a generator seeded by ``random_state`` and the graph's own structure
    (its node count and edge set), so that a graph's counts are the same in
    every call and the kernel value of two graphs does not depend on the others.
    With ``{"epsilon": ε, "delta": δ}``, n_samples is the bound of
    Shervashidze et al. (2009, Theorem 1), ⌈2(a ln 2 + ln(1/δ))/ε²⌉ with a the
    number of graphlets of size k, for which the sampled frequency vector is
    within ε of the exact one in L1 norm with probability 1 − δ.

    Columns (see :meth:`graphlets`) are numbered once, by number of edges, so
    that ``features`` of two calls are comparable.

    GraKeL's ``GraphletSampling(k, sampling=None)`` counts the connected
    graphlets of size k (``connected=True, frequencies=False`` here), but adds 1
    to the first count of a graphlet in each graph but the first one it meets
    it in; its sampling draws subsets of every size from 3 to k, mixed in one
    vector, and its (ε, δ) bound uses log10 where the theorem has ln.

    Parameters
    ----------
    k : {3, 4, 5}, default=5
        The graphlet size.
    sampling : None, int or dict, default=None
        None counts exactly; an int is the number of samples per graph; a dict
        holds either ``"n_samples"`` or ``"epsilon"`` and/or ``"delta"``
        (each 0.05 when absent).
    connected : bool, default=False
        Count only the connected graphlets (2, 6 and 21 of them; samples that
        fall on a disconnected one are dropped).
    frequencies : bool, default=True
        Divide each graph's counts by their sum (the subsets counted or samples
        kept), as the paper's kernel does.
    random_state : int, default=0
        Seed of the samples.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization.
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import GraphletSamplingKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = GraphletSamplingKernel(k=4)(graphs)
    >>> K.shape
    (188, 188)
    >>> Ks = GraphletSamplingKernel(k=5, sampling=2000, random_state=1)(graphs)
    """

    def __init__(self, k=5, sampling=None, connected=False, frequencies=True, random_state=0, normalize=False,
                 n_jobs=None, verbose=None, device="auto", precision="float64"):
        self.k = k
        self.sampling = sampling
        self.connected = connected
        self.frequencies = frequencies
        self.random_state = random_state
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    def _check_params(self):
        super()._check_params()
        _check_integers(self, self._ranges(("k", "k")), seed="the samples of a graph")
        for name in ("connected", "frequencies"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError("%s must be True or False, got %r" % (name, getattr(self, name)))
        self.n_samples()

    def n_samples(self):
        """Return the number of samples per graph that ``sampling`` asks for (0: exact counts)."""
        s = self.sampling
        if s is None:
            return 0
        if isinstance(s, dict):
            unknown = set(s) - {"n_samples", "epsilon", "delta"}
            if unknown or not s or ("n_samples" in s and len(s) > 1):
                raise ValueError("sampling must hold 'n_samples', or 'epsilon' and/or 'delta', got %r" % (s,))
            if "n_samples" in s:
                s = s["n_samples"]
            else:
                eps, delta = s.get("epsilon", 0.05), s.get("delta", 0.05)
                for name, v in (("epsilon", eps), ("delta", delta)):
                    if not isinstance(v, numbers.Real) or isinstance(v, bool) or not 0 < v < 1:
                        raise ValueError("sampling's %s must be in (0, 1), got %r" % (name, v))
                a = len(self._classes())
                return int(math.ceil(2 * (a * math.log(2) + math.log(1 / delta)) / eps ** 2))
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError("sampling must be None, a number of samples or a dict, got %r" % (self.sampling,))
        low, high = _backend.kernel_info("graphlets")["bounds"]["samples"]
        if not low <= s <= high:
            raise ValueError("the number of samples must be in [%d, %d], got %r" % (low, high, s))
        return int(s)

    def graphlets(self):
        """Return the graphlets of size k in column order: a list of dicts with
        ``"edges"`` (pairs of nodes 0..k-1) and ``"connected"``."""
        self._check_params()
        return self._classes()

    def _classes(self):
        """The graphlets of the columns, from the Go core's table (KernelInfo)."""
        return _backend.kernel_info("graphlets", k=int(self.k))["classes"]

    def _labels(self):
        return None, None

    def _params(self, node_layout, edge_layout):
        return dict(super()._params(node_layout, edge_layout),
                    graphlets={"k": int(self.k), "samples": self.n_samples(), "connected": bool(self.connected),
                               "seed": int(self.random_state) % 2 ** 64, "frequencies": bool(self.frequencies)})

    def _feature_params(self):
        return {"features": "graphlets", "semiring": "product"}

    def _max_nonzeros(self, X):
        return len(X) * len(self._classes())
