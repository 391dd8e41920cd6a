r"""Propagation kernels (Neumann, Garnett, Bauckhage and Kersting 2016), on
discrete labels (partially labelled graphs included) and on continuous
attributes, as explicit feature maps.

Every node carries a vector — the distribution of its label, or its attribute
vector — propagated along the edges by the row-normalized adjacency
T = D⁻¹A for ``t_max − 1`` steps; in every round t the vectors are hashed to
bins by a locality-sensitive hash h_t, and

.. math::

    K(G, G') = \sum_{t=0}^{t_\text{max}-1} \sum_{b} c_t(G, b)\, c_t(G', b),

with c_t(G, b) the number of nodes of G whose round-t vector falls in bin b.
The counts are exact integers: the Gram matrix is the sparse Gram engine's
product of two count vectors (on a GPU too).

The hash functions are drawn so that a kernel value depends only on its two
graphs and the settings: the coefficient of a label (or of an attribute column)
in round t is a function of (``random_state``, t, the label's own value), never
of which labels happen to be in a call (GraKeL draws one coefficient per label
of its fitted vocabulary, so its values change with the data set). The rule,
for reproducing them elsewhere (:mod:`graphgram.kernels._seeded`'s, shared by the
randomized kernels): the text ``"{random_state}|{t}|{key}"`` (UTF-8)
is hashed by BLAKE2b with a 16-byte digest, read as two little-endian 64-bit
words a, b; u = ((a >> 11) + 0.5) / 2⁵³ and v = ((b >> 11) + 0.5) / 2⁵³ lie in
(0, 1). A Cauchy coefficient is tan(π(u − ½)), a Gaussian one
√(−2 ln u)·cos(2πv), an offset w·u. The keys: ``label:s:<string>`` for a string
label, ``label:i:<integer>`` for a numeric (whole) one, ``attr:<d>`` for
attribute column d, ``offset`` for a round's offset (discrete labels) and
``offset:<d>`` for column d's (attributes).
"""

import math
import numbers

from ._base import document_execution
from ._seeded import label_key, seeded_uniforms
from ._explicit import _EXACT, _ExplicitFeatureKernel, _check_integers, _check_positive
from ..graph import node_counts

__all__ = ["PropagationKernel", "PropagationAttrKernel"]


def _coefficient(random_state, t, key, cauchy):
    """The projection coefficient of key in round t: standard Cauchy or standard Gaussian."""
    u, v = seeded_uniforms(random_state, t, key)
    if cauchy:
        return math.tan(math.pi * (u - 0.5))
    return math.sqrt(-2.0 * math.log(u)) * math.cos(2.0 * math.pi * v)


class _PropagationBase(_ExplicitFeatureKernel):
    """What the two propagation kernels share: t_max, w, metric and random_state,
    the hash rule, and the bound on their features."""

    # metric -> whether its coefficients are Cauchy (L1-type distances) or Gaussian.
    _metrics = {}

    def _check_params(self):
        super()._check_params()
        _check_integers(self, self._ranges(("t_max", "t_max")), seed="the hash functions")
        _check_positive(self.w, "w (the bin width)")
        if not isinstance(self.metric, str) or self.metric not in self._metrics:
            raise ValueError("metric must be one of %s, got %r"
                             % (", ".join(repr(m) for m in self._metrics), self.metric))

    def _coefficients(self, keys):
        """The t_max × len(keys) coefficients of the keys, row-major by round, as a list."""
        cauchy = self._metrics[self.metric]
        seed = int(self.random_state)
        return [_coefficient(seed, t, key, cauchy) for t in range(int(self.t_max)) for key in keys]

    def _offset(self, t, key):
        return float(self.w) * seeded_uniforms(int(self.random_state), t, key)[0]

    def _max_nonzeros(self, X):
        return int(self.t_max) * int(node_counts(X).sum())


@document_execution(_EXACT)
class PropagationKernel(_PropagationBase):
    r"""Propagation kernel on discrete node labels, for fully or partially
    labelled graphs (Neumann et al. 2016; GraKeL's ``Propagation``).

    Node v starts with the one-hot distribution p₀(v) of its label. Each step
    replaces the distributions by P ← T P, T = D⁻¹A the weighted adjacency
    normalized by rows (a node without edges gets the zero vector: label
    diffusion). Round t hashes a distribution p to the bin

    .. math::

        h_t(p) = \left\lfloor \frac{\sum_\ell f(p_\ell)\, a_{t,\ell} + b_t}{w} \right\rfloor,

    with f(p) = p and Cauchy a_{t,ℓ} for ``metric="TV"`` (total variation),
    f(p) = √p and Gaussian a_{t,ℓ} for ``metric="H"`` (Hellinger), and b_t
    uniform in [0, w); the kernel counts common (round, bin) pairs (see
    :mod:`graphgram.kernels.propagation` for the formula and for how a_{t,ℓ}
    and b_t derive from ``random_state`` and the label's value).

    Partially labelled graphs: with ``unlabeled`` set to a label value, the
    nodes carrying it are unlabelled and the kernel runs label propagation, as
    in the paper: after every step the labelled nodes are reset to their
    one-hot distribution, and an unlabelled node starts uniform over the
    labels of its own graph's labelled nodes (the paper's uniform over all
    labels would depend on which labels are in a call; zero vector when the
    graph has no labelled node).

    On unweighted graphs (edge weights enter T here) and with the same hash
    functions, the values equal GraKeL's ``Propagation(t_max, w, M)``, whose
    random draws depend on the labels of the data set it is fitted on
    (tests/test_propagation.py swaps them for these to compare).

    Parameters
    ----------
    t_max : int, default=5
        The number of hashed rounds (t_max − 1 propagation steps); at most 1000.
    w : float, default=0.01
        The bin width of the hash.
    metric : {"TV", "H"}, default="TV"
        The distance between distributions the hash preserves: total variation
        or Hellinger.
    node_label : str, default="label"
        The node attribute holding the discrete label (strings, integers, or
        whole numbers).
    unlabeled : str, int or None, default=None
        The label value marking an unlabelled node; set, the kernel runs label
        propagation (see above), also on graphs where every node is labelled.
    random_state : int, default=0
        Seed of the hash functions.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization.
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import PropagationKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = PropagationKernel(t_max=5, w=0.01, normalize=True)(graphs)
    >>> K.shape
    (188, 188)
    """

    _metrics = {"TV": True, "H": False}
    _required_labels = ("node_label",)

    def __init__(self, t_max=5, w=0.01, metric="TV", node_label="label", unlabeled=None, random_state=0,
                 normalize=False, n_jobs=None, verbose=None, device="auto", precision="float64"):
        self.t_max = t_max
        self.w = w
        self.metric = metric
        self.node_label = node_label
        self.unlabeled = unlabeled
        self.random_state = random_state
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    def _check_params(self):
        super()._check_params()
        u = self.unlabeled
        if u is not None and not isinstance(u, (str, numbers.Integral)):
            raise TypeError("unlabeled must be a label value (a string or an integer) or None, got %r" % (u,))

    def _labels(self):
        return self.node_label, None

    def _feature_params(self):
        return {"features": "propagation", "semiring": "product"}

    def _params(self, node_layout, edge_layout):
        _, _, kind, vocabulary = node_layout[self.node_label]
        if kind == "str":
            values = [float(i) for i in range(len(vocabulary))]
            keys = ["label:" + label_key(str(s)) for s in vocabulary]
        else:
            values = vocabulary()
            keys = ["label:" + label_key(int(v)) for v in values]
        unlabeled = -1
        if self.unlabeled is not None and values:
            if isinstance(self.unlabeled, str) != (kind == "str"):
                raise TypeError("unlabeled=%r is a %s but the node label %r holds %s"
                                % (self.unlabeled, "string" if isinstance(self.unlabeled, str) else "number",
                                   self.node_label, "strings" if kind == "str" else "numbers"))
            key = "label:" + label_key(self.unlabeled)
            unlabeled = keys.index(key) if key in keys else -1
        t_max = int(self.t_max)
        return dict(super()._params(node_layout, edge_layout),
                    propagation={"t_max": t_max, "w": float(self.w), "labels": values,
                                 "coef": self._coefficients(keys),
                                 "offsets": [self._offset(t, "offset") for t in range(t_max)],
                                 "sqrt": self.metric == "H", "unlabeled": unlabeled,
                                 "clamp": self.unlabeled is not None})


@document_execution(_EXACT)
class PropagationAttrKernel(_PropagationBase):
    r"""Propagation kernel on continuous node attributes (GraKeL's ``PropagationAttr``).

    The attribute vectors x(v) are propagated as :class:`PropagationKernel`
    propagates label distributions, P ← T P, and round t hashes every column
    d of a vector on its own,

    .. math::

        h_t(x) = \left(\left\lfloor \frac{x_d\, a_{t,d} + b_{t,d}}{w} \right\rfloor\right)_{d},

    with Cauchy a_{t,d} for ``metric="L1"``, Gaussian for ``"L2"``, and
    b_{t,d} uniform in [0, w) (drawn from ``random_state`` and d, see
    :mod:`graphgram.kernels.propagation`); the kernel counts common
    (round, bin vector) pairs. This is GraKeL's hash: the partition of
    space it makes equals this one's when it draws the same a and
    b ≡ b (mod w). Attributes on very different scales should be
    standardized first; ``w`` is in their units.

    Parameters
    ----------
    t_max : int, default=5
        The number of hashed rounds (t_max − 1 propagation steps); at most 1000.
    w : float, default=4.0
        The bin width (GraKeL's default for ``PropagationAttr``).
    metric : {"L1", "L2"}, default="L1"
        The distance the hash preserves.
    attributes : str, default="attributes"
        The node attribute holding the continuous values (a number or a vector per node).
    random_state : int, default=0
        Seed of the hash functions.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization.
    %(execution_parameters)s

    Examples
    --------
    >>> import numpy as np
    >>> from graphgram import Graph, PropagationAttrKernel
    >>> g = Graph(3, [(0, 1), (1, 2)], node_attrs={"attributes": np.array([[0.0, 1.0], [2.0, 0.5], [1.0, 1.0]])})
    >>> PropagationAttrKernel(t_max=3)([g, g]).shape
    (2, 2)
    """

    _metrics = {"L1": True, "L2": False}

    def __init__(self, t_max=5, w=4.0, metric="L1", attributes="attributes", random_state=0, normalize=False,
                 n_jobs=None, verbose=None, device="auto", precision="float64"):
        self.t_max = t_max
        self.w = w
        self.metric = metric
        self.attributes = attributes
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

    def _labels(self):
        return None, None

    def _attributes(self):
        return {self.attributes: "the continuous attributes of PropagationAttrKernel"}, {}

    def _feature_params(self):
        return {"features": "propagation_attr", "semiring": "product"}

    def _params(self, node_layout, edge_layout):
        col, width, kind, _ = node_layout[self.attributes]
        if kind == "str":
            raise TypeError("the node attribute %r holds strings; PropagationAttrKernel propagates numbers "
                            "(use PropagationKernel with node_label=%r)" % (self.attributes, self.attributes))
        t_max = int(self.t_max)
        return dict(super()._params(node_layout, edge_layout),
                    propagation={"t_max": t_max, "w": float(self.w), "attr_col": col, "attr_width": width,
                                 "coef": self._coefficients(["attr:%d" % d for d in range(width)]),
                                 "offsets": [self._offset(t, "offset:%d" % d)
                                             for t in range(t_max) for d in range(width)]})
