"""The neighborhood hash kernel (Hido and Kashima 2009)."""

from ._base import document_execution
from ._seeded import label_key, seeded_words
from ._explicit import _EXACT, _ExplicitFeatureKernel, _check_integers

__all__ = ["NeighborhoodHashKernel"]

def label_bits(label, random_state, bits):
    """The initial bit string of one label value: the low ``bits`` bits of a word
    drawn from ``random_state`` and the value alone (:mod:`._seeded`'s rule, part
    ``"nh"`` then the label's key). Strings and numbers are kept apart ("1" is
    not 1); whole floats are the integers they equal."""
    return seeded_words(random_state, "nh", label_key(label), count=1)[0] & ((1 << bits) - 1)


@document_execution(_EXACT.replace("exact integer counts", "averages of ratios of exact integer counts")
                    .replace("The values are", "The label counts are"))
class NeighborhoodHashKernel(_ExplicitFeatureKernel):
    r"""Neighborhood hash kernel (Hido and Kashima 2009) on discrete node labels.

    Every node label becomes a string of ``bits`` bits: a hash of the label's
    value seeded by ``random_state`` (distinct labels can share a string, with
    probability about 1/2^bits per pair). Each round relabels every node v from
    its label l(v) and its neighbours' labels. The simple hash is

    .. math::

        l'(v) = \mathrm{ROT}_1(l(v)) \oplus l(u_1) \oplus \dots \oplus l(u_d),

    with ROT_d the rotation left by d places; the count-sensitive hash replaces
    the neighbours' exclusive or by that of ROT_o(l ⊕ o) over each distinct
    neighbour label l occurring o times (so that a label occurring twice does
    not cancel out). A self-loop makes a node its own neighbour once. With
    c_r(G, G') the number of matching labels of the two graphs after round r
    (the intersection of their label multisets) and n, n' their node counts,

    .. math::

        K(G, G') = \frac1R \sum_{r=1}^{R} \frac{c_r}{n + n' - c_r},

    so that K(G, G) = 1 for every graph with nodes (two empty graphs give 0).
    The initial labels (round 0) are not counted. Each c_r is a histogram
    intersection of label counts, computed exactly by the sparse Gram engine;
    the ratios and the average are taken afterwards, so the kernel is no
    product of one feature map and :meth:`features` raises
    ``NotImplementedError``. The ratio c/(n + n' − c) is the min–max
    (weighted Jaccard) kernel of the two label histograms, which is positive
    semi-definite.

    With the same initial bit strings, the values equal GraKeL's
    ``NeighborhoodHash(R, nh_type, bits)`` (which draws them at random for the
    labels of each fit instead; see :meth:`label_bits`), except where a label
    occurs 2^bits times or more among one node's neighbours, where GraKeL lets
    the count spill beyond ``bits`` bits.

    Parameters
    ----------
    R : int, default=3
        The number of hash rounds (1 to 100).
    nh_type : {"simple", "count_sensitive"}, default="simple"
        The hash of a node's neighbourhood.
    bits : int, default=8
        The length of the labels' bit strings (1 to 64).
    node_label : str, default="label"
        The node attribute holding the discrete label.
    random_state : int, default=0
        Seed of the labels' initial bit strings.
    normalize : bool or float in [0, 1], default=False
        Cosine normalization (K(G, G) is already 1, so this changes nothing but
        empty graphs).
    %(execution_parameters)s

    Examples
    --------
    >>> from graphgram import NeighborhoodHashKernel, datasets
    >>> graphs, y = datasets.load_mutag()
    >>> K = NeighborhoodHashKernel(R=3, nh_type="count_sensitive")(graphs)
    >>> K.shape, float(K[0, 0])
    ((188, 188), 1.0)
    """

    def __init__(self, R=3, nh_type="simple", bits=8, node_label="label", random_state=0, normalize=False,
                 n_jobs=None, verbose=None, device="auto", precision="float64"):
        self.R = R
        self.nh_type = nh_type
        self.bits = bits
        self.node_label = node_label
        self.random_state = random_state
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.precision = precision

    _required_labels = ("node_label",)

    def _check_params(self):
        super()._check_params()
        _check_integers(self, self._ranges(("R", "rounds"), ("bits", "bits")), seed="the labels' bit strings")
        if self.nh_type not in ("simple", "count_sensitive"):
            raise ValueError("nh_type must be 'simple' or 'count_sensitive', got %r" % (self.nh_type,))

    def _labels(self):
        return self.node_label, None

    def label_bits(self, labels):
        """Return the initial bit string (an int below 2^bits) of each label value in ``labels``.

        It depends on the value and ``random_state`` only, never on the other
        labels of a call.
        """
        self._check_params()
        return [label_bits(label, self.random_state, int(self.bits)) for label in labels]

    def _params(self, node_layout, edge_layout):
        _, _, kind, vocabulary = node_layout[self.node_label]
        if kind == "str":
            # Strings travel as their codes 0..V-1 in this call's vocabulary.
            labels = vocabulary
            values = list(range(len(vocabulary)))
        else:
            values = vocabulary()
            labels = values
        return dict(super()._params(node_layout, edge_layout),
                    nh={"rounds": int(self.R), "bits": int(self.bits),
                        "count_sensitive": self.nh_type == "count_sensitive",
                        "label_values": [float(v) for v in values], "label_bits": self.label_bits(labels)})

    def _feature_params(self):
        return {"features": "nh", "semiring": "min"}
