"""Pack a list of graphs into the contiguous arrays the Go core reads (docs/abi.md)."""

import json

import numpy as np

from .graph import Graph
from .microkernels import MicroKernel

__all__ = ["PackedGraphs", "pack"]


class PackedGraphs:
    """A batch of graphs packed into contiguous arrays, plus their descriptor.

    The object owns every buffer whose address appears in ``desc``; keep it alive
    for as long as the Go core may read ``desc``.

    Attributes
    ----------
    desc : ndarray of int64, shape (9,)
        The descriptor of docs/abi.md.
    n_graphs : int
    n_nodes : ndarray of int64, shape (N,)
    n_edges : ndarray of int64, shape (N,)
    node_offsets : ndarray of int64, shape (N+1,)
        Graph g owns packed node rows ``node_offsets[g] .. node_offsets[g+1]-1``
        (this array is ``node_ptr`` of the descriptor).
    edge_offsets : ndarray of int64, shape (N+1,)
        Same for edges (``edge_ptr``).
    edges : ndarray of int64, shape (M, 2)
        Local node indices of each edge.
    weights : ndarray of float64, shape (M,)
    node_feat : ndarray of float64, shape (sum n, Fn)
    edge_feat : ndarray of float64, shape (M, Fe)
    node_layout, edge_layout : dict of str to (int, int)
        Attribute name → (first column, width) in ``node_feat`` / ``edge_feat``.
    node_spec, edge_spec : str or None
        JSON expression of the node / edge kernel given to :func:`pack`, for this layout.
    graphs : tuple of Graph
        The packed graphs.
    """

    def __init__(self, graphs, n_nodes, n_edges, node_offsets, edge_offsets, edges, weights,
                 node_feat, edge_feat, node_layout, edge_layout, node_spec, edge_spec):
        self.graphs = graphs
        self.n_graphs = len(graphs)
        self.n_nodes = n_nodes
        self.n_edges = n_edges
        self.node_offsets = node_offsets
        self.edge_offsets = edge_offsets
        self.edges = edges
        self.weights = weights
        self.node_feat = node_feat
        self.edge_feat = edge_feat
        self.node_layout = node_layout
        self.edge_layout = edge_layout
        self.node_spec = node_spec
        self.edge_spec = edge_spec
        fn, fe = node_feat.shape[1], edge_feat.shape[1]
        self.desc = np.array([
            self.n_graphs,
            node_offsets.ctypes.data,
            edge_offsets.ctypes.data,
            edges.ctypes.data,
            weights.ctypes.data,
            node_feat.ctypes.data if fn else 0,
            fn,
            edge_feat.ctypes.data if fe else 0,
            fe,
        ], dtype=np.int64)

    def __len__(self):
        return self.n_graphs

    def __repr__(self):
        return "PackedGraphs(n_graphs=%d, nodes=%d, edges=%d, node_layout=%s, edge_layout=%s)" % (
            self.n_graphs, self.node_offsets[-1], self.edge_offsets[-1], self.node_layout, self.edge_layout)


def _names(kernel, extra, kind, role):
    """Ordered attribute names (with who needs them) for one side."""
    out = {}
    if kernel is not None:
        if not isinstance(kernel, MicroKernel):
            raise TypeError("the %s kernel must be a graphgram microkernel, got %s" % (kind, type(kernel).__name__))
        for a in kernel._attr_order():
            out.setdefault(a, "needed by the %s kernel" % kind)
    if isinstance(extra, str):
        extra = (extra,)
    for a in extra:
        if not isinstance(a, str):
            raise TypeError("%s: attribute names must be strings, got %r" % (role, a))
        out.setdefault(a, "requested by %s" % role)
    return out


def _locate(offsets, row):
    g = int(np.searchsorted(offsets, row, side="right") - 1)
    return g, int(row - offsets[g])


def _gather(graphs, names, kind, name, counts, offsets):
    """Fill the feature matrix of one side; return (feat, layout)."""
    total = int(offsets[-1])
    layout = {}
    columns = []
    col = 0
    for attr, why in names.items():
        arrays = []
        widths = np.empty(len(graphs), dtype=np.int64)
        for i, g in enumerate(graphs):
            attrs = g._node_attrs if kind == "node" else g._edge_attrs
            a = attrs.get(attr)
            if a is None:
                raise ValueError("%s[%d] has no %s attribute %r (%s); it has: %s"
                                 % (name, i, kind, attr, why, ", ".join(attrs) or "no %s attributes" % kind))
            if a.ndim == 1:
                widths[i] = 1
            elif a.ndim == 2:
                widths[i] = a.shape[1]
            else:
                raise ValueError("%s[%d]: %s attribute %r has shape %s; expected (n,) or (n, w)"
                                 % (name, i, kind, attr, a.shape))
            if a.shape[0] != counts[i]:
                raise ValueError("%s[%d]: %s attribute %r has %d values but the graph has %d %ss"
                                 % (name, i, kind, attr, a.shape[0], counts[i], kind))
            if a.dtype.kind not in "biuf":
                raise ValueError("%s[%d]: %s attribute %r has dtype %s, which cannot be packed"
                                 % (name, i, kind, attr, a.dtype))
            arrays.append(a.reshape(a.shape[0], 1) if a.ndim == 1 else a)
        bad = np.nonzero(widths != widths[0])[0]
        if bad.size:
            i = int(bad[0])
            raise ValueError("%s[%d]: %s attribute %r has width %d but %s[0] has width %d; an attribute "
                             "must have the same width in every graph"
                             % (name, i, kind, attr, widths[i], name, widths[0]))
        w = int(widths[0])
        layout[attr] = (col, w)
        col += w
        columns.append(np.concatenate(arrays, axis=0) if arrays else np.zeros((0, w)))
    feat = np.empty((total, col), dtype=np.float64)
    for (attr, (c, w)), block in zip(layout.items(), columns):
        feat[:, c:c + w] = block
    if col:
        fin = np.isfinite(feat)
        if not fin.all():
            r, c = (int(t) for t in np.argwhere(~fin)[0])
            g, local = _locate(offsets, r)
            attr = next(a for a, (c0, w) in layout.items() if c0 <= c < c0 + w)
            raise ValueError("%s[%d]: %s attribute %r contains NaN or infinity (%s %d)"
                             % (name, g, kind, attr, kind, local))
    return feat, layout


def _spec(kernel, layout, kind):
    if kernel is None:
        return None
    try:
        return json.dumps(kernel.to_spec(layout))
    except ValueError as exc:
        raise ValueError("%s kernel: %s" % (kind, exc)) from None


def pack(graphs, node_kernel=None, edge_kernel=None, node_extra=(), edge_extra=(), name="X"):
    """Validate and pack graphs into the arrays described in docs/abi.md.

    Parameters
    ----------
    graphs : sequence of Graph
        At least one graph.
    node_kernel, edge_kernel : MicroKernel, optional
        The base kernels; the attributes they read are packed as feature columns,
        in order of first appearance in the kernel expression.
    node_extra, edge_extra : sequence of str, default=()
        Further attributes to pack after the kernels' ones (e.g. an edge attribute
        ``"weight"`` for a shortest-path kernel).
    name : str, default="X"
        Name of the graph list in error messages (``X[3] ...``).

    Returns
    -------
    PackedGraphs

    Raises
    ------
    TypeError
        An item is not a :class:`Graph` (``"X[3] is not a graphgram.Graph (got int)"``).
    ValueError
        Empty list; a graph lacks an attribute the kernel reads; an attribute's
        width differs between graphs; invalid weights, edges or attribute values.
        Messages name the graph as ``X[i]`` and the field.
    """
    if isinstance(graphs, Graph):
        raise TypeError("%s must be a list of graphs, not a single Graph; use [g]" % name)
    if isinstance(graphs, (str, bytes)):
        raise TypeError("%s must be a list of graphgram.Graph, got %s" % (name, type(graphs).__name__))
    graphs = tuple(graphs)
    if not graphs:
        raise ValueError("%s is empty: at least one graph is needed" % name)
    node_names = _names(node_kernel, node_extra, "node", "node_extra")
    edge_names = _names(edge_kernel, edge_extra, "edge", "edge_extra")

    N = len(graphs)
    n_nodes = np.empty(N, dtype=np.int64)
    n_edges = np.empty(N, dtype=np.int64)
    edge_list = []
    weight_list = []
    for i, g in enumerate(graphs):
        if not isinstance(g, Graph):
            raise TypeError("%s[%d] is not a graphgram.Graph (got %s)" % (name, i, type(g).__name__))
        e, w = g._edges, g._weights
        if e.ndim != 2 or e.shape[1] != 2 or e.dtype.kind not in "iu":
            raise ValueError("%s[%d]: edges must be an integer array of shape (m, 2), got %s %s"
                             % (name, i, e.dtype, e.shape))
        if w.shape != (e.shape[0],):
            raise ValueError("%s[%d]: weights has shape %s but there are %d edges" % (name, i, w.shape, e.shape[0]))
        n_nodes[i] = g._n_nodes
        n_edges[i] = e.shape[0]
        edge_list.append(e)
        weight_list.append(w)
    node_offsets = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(n_nodes, out=node_offsets[1:])
    edge_offsets = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(n_edges, out=edge_offsets[1:])

    edges = np.ascontiguousarray(np.concatenate(edge_list, axis=0), dtype=np.int64)
    weights = np.ascontiguousarray(np.concatenate(weight_list), dtype=np.float64)
    if edges.shape[0]:
        limit = np.repeat(n_nodes, n_edges)
        bad = (edges.min(axis=1) < 0) | (edges.max(axis=1) >= limit)
        if bad.any():
            g, e = _locate(edge_offsets, int(np.argmax(bad)))
            u, v = graphs[g]._edges[e]
            raise ValueError("%s[%d]: edge %d (%d, %d) refers to a node outside 0..%d"
                             % (name, g, e, u, v, n_nodes[g] - 1))
        fin = np.isfinite(weights)
        if not fin.all():
            g, e = _locate(edge_offsets, int(np.argmin(fin)))
            raise ValueError("%s[%d]: weights[%d] = %r is not finite" % (name, g, e, float(graphs[g]._weights[e])))
        neg = weights < 0
        if neg.any():
            g, e = _locate(edge_offsets, int(np.argmax(neg)))
            raise ValueError("%s[%d]: weights[%d] = %r is negative; weights must be >= 0"
                             % (name, g, e, float(graphs[g]._weights[e])))

    node_feat, node_layout = _gather(graphs, node_names, "node", name, n_nodes, node_offsets)
    edge_feat, edge_layout = _gather(graphs, edge_names, "edge", name, n_edges, edge_offsets)
    node_spec = _spec(node_kernel, node_layout, "node")
    edge_spec = _spec(edge_kernel, edge_layout, "edge")
    return PackedGraphs(graphs, n_nodes, n_edges, node_offsets, edge_offsets, edges, weights,
                        node_feat, edge_feat, node_layout, edge_layout, node_spec, edge_spec)
