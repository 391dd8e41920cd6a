"""Packing one call's graphs into the arrays of the boundary (docs/abi.md).

:func:`pack` validates the attributes a kernel needs over every graph of a
call and lays them out as contiguous arrays: string labels interned into codes
shared by every graph of the call, numbers as columns. :class:`Packed` holds one
list's arrays and builds the descriptor (addresses and lengths) that Go reads
during the call; it lives only for that call.
"""

import numpy as np

from .graph import edge_counts, node_counts
from .library import GraphLibrary

__all__ = ["Packed", "pack"]

# Word 0 of every descriptor; Go refuses descriptors of another version.
_ABI_VERSION = 0x67670002
_DESC_WORDS = 18


class Packed:
    """One list of graphs packed into the arrays of docs/abi.md, for one call.

    Attributes
    ----------
    name : str
        ``"X"`` or ``"Y"``, the name used in error messages.
    node_ptr, edge_ptr : ndarray of int64, shape (N+1,)
        Graph g owns node rows ``node_ptr[g]:node_ptr[g+1]`` and edges ``edge_ptr[g]:edge_ptr[g+1]``.
    edges : ndarray of int64, shape (M, 2)
    weights : ndarray of float64, shape (M,)
    node_feat, edge_feat : ndarray of float64, shape (sum n, Fn) and (M, Fe)
    start : ndarray of float64, shape (sum n,), or None
        Start probabilities (marginalized kernel only).
    """

    def __init__(self, name, n_graphs, node_ptr, edge_ptr, edges, weights, node_feat, edge_feat, start=None):
        self.name = name
        self.n_graphs = n_graphs
        self.node_ptr = node_ptr
        self.edge_ptr = edge_ptr
        self.edges = edges
        self.weights = weights
        self.node_feat = node_feat
        self.edge_feat = edge_feat
        self.start = start

    def __len__(self):
        return self.n_graphs

    def graph(self, i, name="Y"):
        """Graph i alone, as a Packed over this one's arrays (views: nothing is
        copied), with the same feature coding: the other side of a call
        against one graph of an already packed list."""
        n0, n1 = int(self.node_ptr[i]), int(self.node_ptr[i + 1])
        e0, e1 = int(self.edge_ptr[i]), int(self.edge_ptr[i + 1])
        return Packed(name, 1, np.array([0, n1 - n0], dtype=np.int64), np.array([0, e1 - e0], dtype=np.int64),
                      self.edges[e0:e1], self.weights[e0:e1], self.node_feat[n0:n1], self.edge_feat[e0:e1],
                      None if self.start is None else self.start[n0:n1])

    @property
    def n_nodes(self):
        """int: the number of nodes of all graphs together."""
        return int(self.node_ptr[-1])

    def _descriptor(self):
        """The descriptor: addresses and lengths of the arrays, valid while self lives."""
        def addr(a):
            return a.ctypes.data if a is not None and a.size else 0

        def size(a):
            return 0 if a is None else int(a.size)

        start = self.start
        d = np.array([
            _ABI_VERSION, self.n_graphs,
            addr(self.node_ptr), size(self.node_ptr),
            addr(self.edge_ptr), size(self.edge_ptr),
            addr(self.edges), size(self.edges),
            addr(self.weights), size(self.weights),
            addr(self.node_feat), size(self.node_feat), self.node_feat.shape[1],
            addr(self.edge_feat), size(self.edge_feat), self.edge_feat.shape[1],
            addr(start), size(start),
        ], dtype=np.int64)
        assert d.size == _DESC_WORDS
        return d


def _kind_of(arr):
    """'str' for string labels, 'num' for numbers and booleans."""
    return "str" if arr.dtype.kind in "UO" else "num"


class _Coded:
    """A library's string attribute: codes into its sorted vocabulary."""

    def __init__(self, codes, vocab):
        self.codes, self.vocab = codes, vocab
        self.ndim, self.shape, self.size, self.dtype = 1, codes.shape, codes.size, vocab.dtype


def _parts(name, graphs, kind, attr):
    """(where, count, values, names of the attributes there) of each part of a
    list: each graph of a list of graphs, or a library whole (its strings as
    _Coded); values None where the attribute is missing."""
    if isinstance(graphs, GraphLibrary):
        entry = graphs._attribute(kind, attr)
        if entry is not None and entry[1] is not None:
            entry = (_Coded(*entry),)
        table = graphs.node_attributes if kind == "node" else graphs.edge_attributes
        count = int(graphs.n_nodes.sum() if kind == "node" else graphs.n_edges.sum())
        yield "%s (a GraphLibrary of %d graphs)" % (name, len(graphs)), count, entry and entry[0], list(table)
        return
    for i, g in enumerate(graphs):
        attrs = g._node_attrs if kind == "node" else g._edge_attrs
        yield "%s[%d]" % (name, i), (g.n_nodes if kind == "node" else g.n_edges), attrs.get(attr), list(attrs)


def _columns(graphs_by_name, attr, kind, why, discrete=False):
    """Validate one attribute over the graphs of a call; return (width, value kind).

    graphs_by_name: list of (list name, graphs or GraphLibrary). A graph with
    no nodes (edges) of that kind needs no such attribute. With ``discrete``,
    the attribute must be a label: one string, integer or boolean per node
    (edge), or floats that are all whole numbers.
    """
    width = value_kind = None
    first = None
    for name, graphs in graphs_by_name:
        for where, count, a, names in _parts(name, graphs, kind, attr):
            if count == 0:
                continue  # no values: neither needed nor telling the attribute's type
            if a is None:
                raise ValueError("%s has no %s attribute %r (%s); it has: %s"
                                 % (where, kind, attr, why, ", ".join(names) or "no %s attributes" % kind))
            w = 1 if a.ndim == 1 else a.shape[1]
            vk = _kind_of(a)
            if discrete:
                _check_discrete(a, where, kind, attr, why)
            if width is None:
                width, value_kind, first = w, vk, where
            elif w != width:
                raise ValueError("%s: %s attribute %r has width %d but %s has width %d; an attribute must "
                                 "have the same width in every graph" % (where, kind, attr, w, first, width))
            elif vk != value_kind:
                raise TypeError("%s: %s attribute %r holds %s but in %s it holds %s; an attribute must have "
                                "one type in every graph" % (where, kind, attr,
                                                             "strings" if vk == "str" else "numbers", first,
                                                             "strings" if value_kind == "str" else "numbers"))
    return (width or 1), (value_kind or "num")


def _check_discrete(a, where, kind, attr, why):
    """Raise TypeError, naming the graph and the attribute, unless ``a`` holds one
    discrete label per node (edge)."""
    what = "%s: %s attribute %r (%s)" % (where, kind, attr, why)
    if a.ndim != 1:
        raise TypeError("%s holds vectors of length %d; a label is one string or integer per %s"
                        % (what, a.shape[1], kind))
    if a.dtype.kind == "f":
        bad = a[np.asarray(a != np.round(a))]
        if bad.size:
            raise TypeError("%s holds non-integer numbers (e.g. %r); a label is a string or an integer, and "
                            "continuous attributes need another kernel" % (what, float(bad[0])))
    elif a.dtype.kind not in "iubUO":
        raise TypeError("%s holds %s values; a label is a string or an integer" % (what, a.dtype))


def _feature_matrix(graphs_by_name, attrs, kind, discrete=()):
    """Pack the attributes ``attrs`` (name -> why it is needed) of every graph of the call.

    Returns ({list name: feature matrix}, layout) with layout name -> (column, width,
    "str" or "num", vocabulary): the vocabulary is the sorted distinct values of a
    string attribute, or a function returning those of a numeric scalar attribute
    (computed on demand), in this call; None for vectors.
    String labels become codes from one vocabulary of all strings of the call:
    their sorted order, so equal strings get equal codes whatever process built
    the graphs.
    """
    layout = {}
    plan = []
    col = 0
    for attr, why in attrs.items():
        width, value_kind = _columns(graphs_by_name, attr, kind, why, attr in discrete)
        plan.append((attr, col, width, value_kind))
        col += width
    vocab = {}
    for attr, c, width, value_kind in plan:
        parts = [a for name, graphs in graphs_by_name for _, _, a, _ in _parts(name, graphs, kind, attr)
                 if a is not None and a.size]
        if value_kind == "str":
            parts = [a.vocab if isinstance(a, _Coded) else a for a in parts if a.dtype.kind == "U"]
            vocab[attr] = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype="U1")
            # The 4th entry: the call's vocabulary, label i coded as i (tables over labels).
            layout[attr] = (c, width, "str", vocab[attr].tolist())
        elif width == 1:
            # The distinct values of a numeric scalar attribute in this call, for base
            # kernels tabulated over the labels that occur (LabelFunction); computed
            # only when such a kernel asks (a callable), as most kernels never do.
            def values(parts=parts):
                v = np.unique(np.concatenate([np.ravel(a) for a in parts])) if parts else np.zeros(0)
                return v.astype(np.float64).tolist()
            layout[attr] = (c, width, "num", values)
        else:
            layout[attr] = (c, width, "num", None)
    out = {}
    for name, graphs in graphs_by_name:
        # Rows follow the graphs in order; a graph with nodes (edges) has the
        # attribute (_columns checked), one without adds no rows.
        total = None
        for attr, c, width, value_kind in plan:
            parts = [a for _, count, a, _ in _parts(name, graphs, kind, attr) if count]
            if total is None:
                total = sum(a.shape[0] for a in parts)
                feat = np.zeros((total, col))
            if not parts:
                break
            if isinstance(parts[0], _Coded):  # a library: one part
                feat[:, c] = np.searchsorted(vocab[attr], parts[0].vocab)[parts[0].codes]
                continue
            a = np.concatenate([p.reshape(-1, width) for p in parts])
            if value_kind == "str":
                a = np.searchsorted(vocab[attr], a)
            feat[:, c:c + width] = a
        if total is None:
            total = int(node_counts(graphs).sum() if kind == "node" else edge_counts(graphs).sum())
            feat = np.zeros((total, col))
        out[name] = feat
    return out, layout


def _structure(name, graphs):
    """node_ptr, edge_ptr, edges and weights of one list of graphs (validated by as_graph_list)."""
    if isinstance(graphs, GraphLibrary):
        return graphs._structure()
    n = len(graphs)
    n_nodes = np.fromiter((g.n_nodes for g in graphs), dtype=np.int64, count=n)
    n_edges = np.fromiter((g.n_edges for g in graphs), dtype=np.int64, count=n)
    node_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_nodes, out=node_ptr[1:])
    edge_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_edges, out=edge_ptr[1:])
    edges = np.concatenate([g._edges for g in graphs], axis=0) if n else np.zeros((0, 2), np.int64)
    weights = np.concatenate([g._weights for g in graphs]) if n else np.zeros(0)
    edges = np.ascontiguousarray(edges, dtype=np.int64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    return node_ptr, edge_ptr, edges, weights


def pack(X, Y=None, node_attrs=(), edge_attrs=(), start=None, discrete=((), ()), names=("X", "Y")):
    """Validate and pack the graphs of one call.

    Parameters
    ----------
    X : list of Graph
    Y : list of Graph, optional
    node_attrs, edge_attrs : dict of str to str
        The attributes to pack, mapped to why they are needed (for messages).
    start : callable, optional
        ``start(name, graphs)`` returns the start probability of every node of
        those graphs, concatenated.
    discrete : (node attribute names, edge attribute names)
        Attributes that must be discrete labels (strings, integers, or whole floats).
    names : pair of str
        How error messages call X and Y.

    Returns
    -------
    px, py : Packed (py is None without Y)
    node_layout, edge_layout : dict of str to tuple
        Attribute name -> (first column, width, "str" or "num", vocabulary) in the
        feature matrices (see ``_feature_matrix``).
    """
    lists = [(names[0], X)] + ([] if Y is None else [(names[1], Y)])
    node_feat, node_layout = _feature_matrix(lists, dict(node_attrs), "node", discrete[0])
    edge_feat, edge_layout = _feature_matrix(lists, dict(edge_attrs), "edge", discrete[1])
    packed = []
    for name, graphs in lists:
        node_ptr, edge_ptr, edges, weights = _structure(name, graphs)
        s = None if start is None else np.ascontiguousarray(start(name, graphs), dtype=np.float64)
        packed.append(Packed(name, len(graphs), node_ptr, edge_ptr, edges, weights,
                             node_feat[name], edge_feat[name], s))
    return packed[0], (packed[1] if Y is not None else None), node_layout, edge_layout
