"""The :class:`Graph` container: an undirected, weighted graph with named attributes.

String labels
-------------
Attribute values that are strings (atom symbols, residue names, ...) are stored
as strings (a NumPy unicode array), so a graph means the same in every process
and pickles by value. The kernels turn them into integer codes per call, from
one vocabulary of all the strings of that call's graphs.
"""

import numbers
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

__all__ = ["Graph", "as_graph_list", "node_counts", "edge_counts", "take"]

_MAX_EXACT_INT = 2**53
# Node and edge counts are int32 in the Go core.
_MAX_COUNT = 2**31 - 1


# --------------------------------------------------------------------------
# Attribute normalization and checks
# --------------------------------------------------------------------------


def _where(index, name):
    return "Graph" if index is None else "%s[%d]" % (name, index)


def _readonly(a):
    a.flags.writeable = False
    return a


def _string_array(values, where, kind, attr):
    flat = list(values)
    for v in flat:
        if not isinstance(v, str):
            raise TypeError(
                "%s: %s attribute %r mixes strings with values of type %s; "
                "use strings for all of its values or for none"
                % (where, kind, attr, type(v).__name__))
    return np.array(flat, dtype=np.str_) if flat else np.zeros(0, dtype="U1")


def _as_attribute(values, length, where, kind, attr, count_word):
    """Return ``values`` as a fresh, read-only, validated attribute array."""
    if not isinstance(attr, str) or not attr:
        raise TypeError("%s: %s attribute names must be non-empty strings, got %r" % (where, kind, attr))
    if isinstance(values, (str, bytes)) or np.isscalar(values):
        raise ValueError(
            "%s: %s attribute %r must give one value per %s, got the single value %r"
            % (where, kind, attr, count_word, values))
    is_array = isinstance(values, np.ndarray)
    try:
        arr = np.asarray(values)
    except ValueError as exc:
        raise ValueError(
            "%s: %s attribute %r has vectors of different lengths (ragged); "
            "vector attributes need a fixed length (%s)" % (where, kind, attr, exc)) from None
    if arr.dtype.kind in "US" or (arr.dtype.kind == "O" and arr.ndim == 1
                                  and any(isinstance(v, str) for v in arr)):
        if arr.ndim != 1:
            raise ValueError("%s: %s attribute %r: string values must be scalars, one per %s"
                             % (where, kind, attr, count_word))
        if arr.dtype.kind == "S":
            raise TypeError("%s: %s attribute %r has bytes values; use str" % (where, kind, attr))
        if arr.dtype.kind == "U" and not is_array:
            # numpy turns [1, "a"] into strings; refuse that silent conversion.
            arr = _string_array(values, where, kind, attr)
        else:
            arr = _string_array(arr.tolist(), where, kind, attr)
    elif arr.dtype.kind == "O":
        items = list(arr) if arr.ndim == 1 else arr.ravel().tolist()
        bad = next((v for v in items if not isinstance(v, (numbers.Real, np.ndarray, list, tuple))), None)
        if bad is not None or any(v is None for v in items):
            raise TypeError(
                "%s: %s attribute %r has a value of type %s; values must be numbers, booleans, "
                "strings or fixed-length vectors of numbers" % (where, kind, attr, type(bad).__name__))
        try:
            if arr.ndim == 1 and any(isinstance(v, (np.ndarray, list, tuple)) for v in items):
                arr = np.array([np.asarray(v, dtype=np.float64) for v in items])
            else:
                arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("%s: %s attribute %r has vectors of different lengths (ragged) or "
                             "non-numeric vector entries" % (where, kind, attr)) from None
    elif arr.dtype.kind not in "biuf":
        raise TypeError(
            "%s: %s attribute %r has dtype %s; values must be numbers, booleans, strings or "
            "fixed-length vectors of numbers" % (where, kind, attr, arr.dtype))
    if arr.ndim == 0:
        raise ValueError("%s: %s attribute %r must give one value per %s"
                         % (where, kind, attr, count_word))
    if arr.ndim > 2:
        raise ValueError(
            "%s: %s attribute %r has shape %s; use one scalar (shape (%d,)) or one "
            "fixed-length vector (shape (%d, w)) per %s"
            % (where, kind, attr, arr.shape, length, length, count_word))
    if arr.shape[0] != length:
        raise ValueError("%s: %s attribute %r has %d values but the graph has %d %ss"
                         % (where, kind, attr, arr.shape[0], length, count_word))
    if arr.ndim == 2:
        if arr.shape[1] == 0:
            raise ValueError("%s: %s attribute %r has vectors of length 0" % (where, kind, attr))
        arr = np.array(arr, dtype=np.float64, order="C")
    elif arr.dtype.kind == "U":
        arr = np.array(arr, dtype=np.str_)
    elif arr.dtype.kind == "b":
        arr = np.array(arr, dtype=np.bool_)
    elif arr.dtype.kind in "iu":
        arr = np.array(arr, dtype=np.int64) if arr.dtype != np.uint64 else _uint_to_int(arr, where, kind, attr)
    else:
        arr = np.array(arr, dtype=np.float64)
    _check_attribute(arr, where, kind, attr, count_word)
    return _readonly(arr)


def _uint_to_int(arr, where, kind, attr):
    if arr.size and arr.max() >= _MAX_EXACT_INT:
        raise ValueError("%s: %s attribute %r has integers of magnitude 2**53 or more, "
                         "which float64 cannot hold exactly" % (where, kind, attr))
    return np.array(arr, dtype=np.int64)


def _check_attribute(arr, where, kind, attr, count_word):
    """Value checks on an already normalized attribute array."""
    if arr.dtype.kind == "f":
        ok = np.isfinite(arr)
        if not ok.all():
            pos = np.argwhere(~ok)[0]
            raise ValueError("%s: %s attribute %r contains NaN or infinity (%s %d)"
                             % (where, kind, attr, count_word, pos[0]))
    elif arr.dtype.kind in "iu" and arr.size:
        big = np.abs(arr) >= _MAX_EXACT_INT
        if big.any():
            pos = np.argwhere(big)[0]
            raise ValueError("%s: %s attribute %r has an integer of magnitude 2**53 or more (%s %d), "
                             "which float64 cannot hold exactly" % (where, kind, attr, count_word, pos[0]))


def _all_valid(graphs):
    """True when every check of :meth:`Graph.validate` passes on every graph
    (False, or an exception, leaves the verdict to ``validate``)."""
    n = [g._n_nodes for g in graphs]
    if not all(type(k) is int and 0 <= k <= _MAX_COUNT for k in n):
        return False
    edges = [g._edges for g in graphs]
    weights = [g._weights for g in graphs]
    if not all(type(e) is np.ndarray and e.dtype == np.int64 and e.ndim == 2 and e.shape[1] == 2 for e in edges):
        return False
    m = [e.shape[0] for e in edges]
    if not all(type(w) is np.ndarray and w.dtype == np.float64 and w.shape == (k,) for w, k in zip(weights, m)):
        return False
    if sum(m):
        e = np.concatenate(edges)
        w = np.concatenate(weights)
        limit = np.repeat(np.asarray(n, dtype=np.int64), m)
        if (e.min() < 0 or np.any(e[:, 0] >= limit) or np.any(e[:, 1] >= limit)
                or not np.all(np.isfinite(w)) or np.any(w < 0)):
            return False
    for kind, lengths in (("node", n), ("edge", m)):
        # Attribute arrays grouped by name: shapes and dtypes per graph, values per group.
        groups = {}
        for g, length in zip(graphs, lengths):
            for attr, arr in (g._node_attrs if kind == "node" else g._edge_attrs).items():
                if (type(arr) is not np.ndarray or arr.ndim not in (1, 2) or arr.shape[0] != length
                        or arr.dtype.kind not in "biufU" or (arr.ndim == 2 and arr.dtype.kind == "U")):
                    return False
                groups.setdefault((attr, arr.dtype.kind), []).append(arr.ravel())
        for (_, dkind), parts in groups.items():
            if dkind == "f" and not np.all(np.isfinite(np.concatenate(parts))):
                return False
            if dkind in "iu" and any(p.size for p in parts) and np.abs(np.concatenate(parts)).max() >= _MAX_EXACT_INT:
                return False
    return True


def _as_n_nodes(n_nodes):
    if isinstance(n_nodes, (bool, np.bool_)) or not isinstance(n_nodes, numbers.Integral):
        raise TypeError("n_nodes must be an integer, got %r" % (n_nodes,))
    n = int(n_nodes)
    if n < 0 or n > _MAX_COUNT:
        raise ValueError("n_nodes must be in 0..%d, got %d" % (_MAX_COUNT, n))
    return n


def _as_edges(edges, where):
    if edges is None:
        return np.zeros((0, 2), dtype=np.int64)
    arr = np.asarray(edges)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError("%s: edges must be integer node indices, got dtype %s" % (where, arr.dtype))
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError("%s: edges must have shape (m, 2), got %s" % (where, arr.shape))
    if arr.shape[0] > _MAX_COUNT:
        raise ValueError("%s: %d edges; at most %d are supported" % (where, arr.shape[0], _MAX_COUNT))
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError("%s: edges refer to node indices beyond the int64 range" % where)
    return np.array(arr, dtype=np.int64, order="C")


def _as_weights(weights, m, where):
    if weights is None:
        return np.ones(m)
    arr = np.asarray(weights)
    if arr.dtype.kind not in "biuf":
        raise TypeError("%s: weights must be numbers, got dtype %s" % (where, arr.dtype))
    arr = np.array(arr, dtype=np.float64)
    if arr.shape != (m,):
        raise ValueError("%s: weights has shape %s but there are %d edges (expected shape (%d,))"
                         % (where, arr.shape, m, m))
    return arr


def _check_edges_weights(n, edges, weights, where):
    m = edges.shape[0]
    if m:
        bad = (edges < 0) | (edges >= n)
        if bad.any():
            e = int(np.argwhere(bad)[0][0])
            raise ValueError("%s: edge %d (%d, %d) refers to a node outside 0..%d"
                             % (where, e, edges[e, 0], edges[e, 1], n - 1))
    if weights.shape != (m,):
        raise ValueError("%s: weights has shape %s but there are %d edges" % (where, weights.shape, m))
    fin = np.isfinite(weights)
    if not fin.all():
        e = int(np.argmin(fin))
        raise ValueError("%s: weights[%d] = %r is not finite" % (where, e, float(weights[e])))
    neg = weights < 0
    if neg.any():
        e = int(np.argmax(neg))
        raise ValueError("%s: weights[%d] = %r is negative; weights must be >= 0"
                         % (where, e, float(weights[e])))


def _check_duplicates(n, edges, where):
    if edges.shape[0] < 2:
        return
    lo = edges.min(axis=1)
    hi = edges.max(axis=1)
    key = lo * max(n, 1) + hi
    order = np.argsort(key, kind="stable")
    dup = np.nonzero(key[order][1:] == key[order][:-1])[0]
    if dup.size:
        e1, e2 = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        raise ValueError(
            "%s: edges %d and %d both join nodes %d and %d; list each undirected edge once "
            "((i, j) and (j, i) are the same edge)" % (where, e1, e2, lo[e1], hi[e1]))


def _scalar_out(v):
    """A numpy scalar or vector as a plain Python value for networkx."""
    if isinstance(v, np.ndarray):
        return v.copy()
    return v.item()


# --------------------------------------------------------------------------
# Graph
# --------------------------------------------------------------------------


class Graph:
    """An undirected graph with non-negative edge weights and named attributes.

    Self-loops are allowed; each undirected edge is stored once. The arrays are
    copied on construction and made read-only.

    Parameters
    ----------
    n_nodes : int
        Number of nodes, numbered ``0 .. n_nodes-1``. Nodes without edges are allowed.
    edges : array-like of int, shape (m, 2), default=None
        Each undirected edge once; ``(i, i)`` is a self-loop. ``None`` means no edges.
    weights : array-like of float, shape (m,), default=None
        Non-negative, finite edge weights; ``None`` means all 1.
    node_attrs : dict, default=None
        Attribute name → one value per node: shape ``(n_nodes,)`` of integers,
        floats, booleans or strings, or shape ``(n_nodes, w)`` for fixed-length
        vectors (stored as float64). Strings are kept as strings.
    edge_attrs : dict, default=None
        Attribute name → one value per edge, aligned with ``edges``; same rules.

    Attributes
    ----------
    n_nodes : int
    n_edges : int
    edges : ndarray of int64, shape (m, 2)
    weights : ndarray of float64, shape (m,)
    node_attrs : mapping of str to ndarray
    edge_attrs : mapping of str to ndarray

    Raises
    ------
    TypeError, ValueError
        With a message naming the offending field: NaN or infinite values,
        negative weights, edges out of range or listed twice, lengths that do not
        match, ragged vectors.

    Examples
    --------
    >>> g = Graph(3, [(0, 1), (1, 2)], node_attrs={"label": ["C", "O", "C"]})
    >>> g
    Graph(n_nodes=3, n_edges=2, node_attrs={label: int64})
    """

    __slots__ = ("_n_nodes", "_edges", "_weights", "_node_attrs", "_edge_attrs")

    def __init__(self, n_nodes, edges=None, weights=None, node_attrs=None, edge_attrs=None):
        where = "Graph"
        n = _as_n_nodes(n_nodes)
        e = _as_edges(edges, where)
        m = e.shape[0]
        w = _as_weights(weights, m, where)
        _check_edges_weights(n, e, w, where)
        _check_duplicates(n, e, where)
        na = self._attrs(node_attrs, n, where, "node")
        ea = self._attrs(edge_attrs, m, where, "edge")
        self._n_nodes = n
        self._edges = _readonly(e)
        self._weights = _readonly(w)
        self._node_attrs = na
        self._edge_attrs = ea

    @staticmethod
    def _attrs(attrs, length, where, kind):
        if attrs is None:
            return {}
        if not isinstance(attrs, Mapping):
            raise TypeError("%s: %s_attrs must be a dict of name -> values, got %s"
                            % (where, kind, type(attrs).__name__))
        return {name: _as_attribute(v, length, where, kind, name, kind) for name, v in attrs.items()}

    @classmethod
    def _trusted(cls, n_nodes, edges, weights, node_attrs, edge_attrs):
        """Build a graph from arrays already in canonical form (no copies, no checks)."""
        self = cls.__new__(cls)
        self._n_nodes = int(n_nodes)
        self._edges = edges
        self._weights = weights
        self._node_attrs = node_attrs
        self._edge_attrs = edge_attrs
        return self

    # --- read-only access -----------------------------------------------------
    @property
    def n_nodes(self):
        """int: the number of nodes."""
        return self._n_nodes

    @property
    def n_edges(self):
        """int: the number of undirected edges (self-loops included)."""
        return self._edges.shape[0]

    @property
    def edges(self):
        """ndarray of int64, shape (m, 2): each undirected edge once."""
        return self._edges

    @property
    def weights(self):
        """ndarray of float64, shape (m,): edge weights, aligned with ``edges``."""
        return self._weights

    @property
    def node_attrs(self):
        """mapping: read-only view of attribute name → array of shape (n,) or (n, w)."""
        return MappingProxyType(self._node_attrs)

    @property
    def edge_attrs(self):
        """mapping: read-only view of attribute name → array of shape (m,) or (m, w)."""
        return MappingProxyType(self._edge_attrs)

    def __len__(self):
        return self._n_nodes

    def __repr__(self):
        def desc(attrs):
            items = []
            for k, v in attrs.items():
                items.append("%s: %s" % (k, v.dtype.name if v.ndim == 1 else "float64[%d]" % v.shape[1]))
            return "{" + ", ".join(items) + "}"

        parts = ["n_nodes=%d" % self._n_nodes, "n_edges=%d" % self.n_edges]
        if self.n_edges and not np.all(self._weights == 1.0):
            parts.append("weighted")
        if self._node_attrs:
            parts.append("node_attrs=" + desc(self._node_attrs))
        if self._edge_attrs:
            parts.append("edge_attrs=" + desc(self._edge_attrs))
        return "Graph(%s)" % ", ".join(parts)

    def __getstate__(self):
        return (self._n_nodes, self._edges, self._weights, self._node_attrs, self._edge_attrs)

    def __setstate__(self, state):
        n, e, w, na, ea = state
        self._n_nodes = n
        self._edges = _readonly(np.array(e))
        self._weights = _readonly(np.array(w))
        self._node_attrs = {k: _readonly(np.array(v)) for k, v in na.items()}
        self._edge_attrs = {k: _readonly(np.array(v)) for k, v in ea.items()}

    # --- checks -----------------------------------------------------------------
    def validate(self, index=None, name="X"):
        """Check the stored arrays again and raise a clear error if they are invalid.

        The arrays are read-only, but NumPy lets a determined caller change that;
        packers call this (or an equivalent vectorized check) before handing data
        to the Go core.

        Parameters
        ----------
        index : int, optional
            Position of this graph in a list; error messages then start with
            ``"{name}[{index}]: "`` instead of ``"Graph: "``.
        name : str, default="X"
            Name of that list in error messages.

        Returns
        -------
        self
        """
        where = _where(index, name)
        n = self._n_nodes
        e = self._edges
        if not isinstance(n, int) or not 0 <= n <= _MAX_COUNT:
            raise ValueError("%s: n_nodes = %r is not an integer in 0..%d" % (where, n, _MAX_COUNT))
        if not isinstance(e, np.ndarray) or e.ndim != 2 or e.shape[1] != 2 or e.dtype != np.int64:
            raise ValueError("%s: edges must be an int64 array of shape (m, 2), got %s %s"
                             % (where, e.dtype, e.shape))
        w = self._weights
        if not isinstance(w, np.ndarray) or w.dtype != np.float64:
            raise ValueError("%s: weights must be a float64 array" % where)
        _check_edges_weights(n, e, w, where)
        for kind, attrs, length in (("node", self._node_attrs, n), ("edge", self._edge_attrs, e.shape[0])):
            for attr, arr in attrs.items():
                if not isinstance(arr, np.ndarray) or arr.ndim not in (1, 2) or arr.shape[0] != length:
                    raise ValueError("%s: %s attribute %r has shape %s but the graph has %d %ss"
                                     % (where, kind, attr, np.shape(arr), length, kind))
                if arr.dtype.kind not in "biufU" or (arr.ndim == 2 and arr.dtype.kind == "U"):
                    raise ValueError("%s: %s attribute %r has dtype %s, which cannot be packed"
                                     % (where, kind, attr, arr.dtype))
                _check_attribute(arr, where, kind, attr, kind)
        return self

    @staticmethod
    def validate_all(graphs, name="X"):
        """:meth:`validate` every graph of a list, with vectorized checks.

        The arrays of all graphs are checked together (one NumPy pass per kind
        of array instead of several per graph); when anything is wrong, the
        graphs are validated one by one so that the error is :meth:`validate`'s,
        naming the first bad graph.

        Parameters
        ----------
        graphs : list of Graph
        name : str, default="X"
            Name of the list in error messages.
        """
        try:
            ok = _all_valid(graphs)
        except (TypeError, ValueError, AttributeError):
            ok = False
        if not ok:
            for i, g in enumerate(graphs):
                g.validate(i, name)

    # --- derived data -------------------------------------------------------------
    def degrees(self):
        """Return the weighted degree of every node, a self-loop counted once.

        Returns
        -------
        ndarray of float64, shape (n_nodes,)
        """
        d = np.zeros(self._n_nodes)
        u, v = self._edges[:, 0], self._edges[:, 1]
        np.add.at(d, u, self._weights)
        off = u != v
        np.add.at(d, v[off], self._weights[off])
        return d

    def adjacency(self, sparse=False):
        """Return the symmetric weighted adjacency matrix (a self-loop on the diagonal once).

        Parameters
        ----------
        sparse : bool, default=False
            Return a ``scipy.sparse.csr_array`` instead of a dense array.

        Returns
        -------
        ndarray or scipy.sparse.csr_array, shape (n_nodes, n_nodes)
        """
        u, v = self._edges[:, 0], self._edges[:, 1]
        off = u != v
        rows = np.concatenate([u, v[off]])
        cols = np.concatenate([v, u[off]])
        vals = np.concatenate([self._weights, self._weights[off]])
        if sparse:
            import scipy.sparse as sp

            return sp.csr_array((vals, (rows, cols)), shape=(self._n_nodes,) * 2)
        A = np.zeros((self._n_nodes, self._n_nodes))
        A[rows, cols] = vals
        return A

    # --- constructors -------------------------------------------------------------
    @classmethod
    def from_adjacency(cls, A, node_attrs=None, edge_attrs=None):
        """Build a graph from a symmetric weighted adjacency matrix.

        Every non-zero entry of the upper triangle (diagonal included) becomes an
        edge whose weight is that entry; edges are ordered row-major over the upper
        triangle, i.e. by ``(i, j)`` with ``i <= j``.

        Parameters
        ----------
        A : array-like or scipy.sparse matrix, shape (n, n)
            Symmetric (up to a relative difference of 1e-10), non-negative and finite.
            A diagonal entry is a self-loop.
        node_attrs : dict, optional
            As in :class:`Graph`.
        edge_attrs : dict, optional
            Attribute name → either a matrix of shape ``(n, n)`` or ``(n, n, w)``
            (dense or scipy.sparse; read at the edges, and required to be symmetric
            there), or an array with one value per edge in the order described above.
            An array whose first two dimensions are ``(n, n)`` is taken as a matrix.

        Returns
        -------
        Graph
        """
        import scipy.sparse as sp

        where = "Graph.from_adjacency"
        if sp.issparse(A):
            if A.ndim != 2 or A.shape[0] != A.shape[1]:
                raise ValueError("%s: A must be a square matrix, got shape %s" % (where, A.shape))
            if A.dtype.kind not in "biuf":
                raise TypeError("%s: A must hold numbers, got dtype %s" % (where, A.dtype))
            n = A.shape[0]
            csr = sp.csr_array(A, dtype=np.float64)
            diff = abs(csr - csr.T)
            scale = abs(csr).max() if csr.nnz else 0.0
            if diff.nnz and diff.max() > 1e-10 * scale:
                raise ValueError("%s: A is not symmetric (max |A - A.T| = %g); an undirected graph "
                                 "needs a symmetric adjacency matrix" % (where, diff.max()))
            up = sp.triu(csr, format="coo")
            keep = up.data != 0
            rows, cols, vals = up.row[keep], up.col[keep], up.data[keep]
            order = np.lexsort((cols, rows))
            rows, cols, vals = rows[order], cols[order], vals[order]
        else:
            arr = np.asarray(A)
            if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
                raise ValueError("%s: A must be a square matrix, got shape %s" % (where, arr.shape))
            if arr.dtype.kind not in "biuf":
                raise TypeError("%s: A must hold numbers, got dtype %s" % (where, arr.dtype))
            arr = arr.astype(np.float64)
            n = arr.shape[0]
            with np.errstate(invalid="ignore"):
                diff = np.abs(arr - arr.T)
                scale = np.abs(arr).max() if arr.size else 0.0
                asym = diff > 1e-10 * scale
            if asym.any():
                i, j = np.argwhere(asym)[0]
                raise ValueError("%s: A is not symmetric: A[%d, %d] = %r but A[%d, %d] = %r; an "
                                 "undirected graph needs a symmetric adjacency matrix"
                                 % (where, i, j, float(arr[i, j]), j, i, float(arr[j, i])))
            rows, cols = np.nonzero(np.triu(arr) != 0)
            vals = arr[rows, cols]
        edges = np.stack([rows, cols], axis=1).astype(np.int64)
        m = edges.shape[0]
        eattrs = {}
        for name, v in (edge_attrs or {}).items():
            eattrs[name] = cls._edge_values_from_matrix(v, n, m, rows, cols, name, where)
        return cls(n, edges, vals, node_attrs=node_attrs, edge_attrs=eattrs)

    @staticmethod
    def _edge_values_from_matrix(v, n, m, rows, cols, name, where):
        import scipy.sparse as sp

        if sp.issparse(v):
            if v.shape != (n, n):
                raise ValueError("%s: edge attribute %r is a sparse matrix of shape %s, expected (%d, %d)"
                                 % (where, name, v.shape, n, n))
            csr = sp.csr_array(v)
            a = np.asarray(csr[rows, cols]).ravel()
            b = np.asarray(csr[cols, rows]).ravel()
        else:
            arr = np.asarray(v)
            if not (arr.ndim >= 2 and arr.shape[:2] == (n, n)):
                return v  # one value per edge, checked by the constructor
            if arr.ndim > 3:
                raise ValueError("%s: edge attribute %r has shape %s; use (n, n), (n, n, w) or one "
                                 "value per edge" % (where, name, arr.shape))
            a = arr[rows, cols]
            b = arr[cols, rows]
        same = a == b
        if same.ndim == 2:
            same = same.all(axis=1)
        if not np.all(same):
            e = int(np.argmin(same))
            raise ValueError("%s: edge attribute %r is not symmetric: it differs at (%d, %d) and (%d, %d)"
                             % (where, name, rows[e], cols[e], cols[e], rows[e]))
        return a

    @classmethod
    def from_networkx(cls, g, weight=None, node_attrs=None, edge_attrs=None):
        """Build a graph from an undirected ``networkx.Graph``.

        Node ``i`` of the result is ``list(g.nodes)[i]``; edges follow ``g.edges``.

        Parameters
        ----------
        g : networkx.Graph
            Undirected, not a multigraph (convert with ``g.to_undirected()`` or
            ``networkx.Graph(g)`` first).
        weight : str, optional
            Name of the edge attribute giving edge weights; every edge must have it.
            ``None`` gives every edge weight 1. The attribute is also kept as an
            ordinary edge attribute (so that kernels can read it).
        node_attrs, edge_attrs : list of str, optional
            Attributes to keep. ``None`` keeps every attribute present on all
            nodes (edges); an attribute present on only some of them is an error
            naming it, since silently dropping data hides mistakes; pass an explicit
            list to keep a subset.

        Returns
        -------
        Graph
        """
        where = "Graph.from_networkx"
        if not hasattr(g, "is_directed") or not hasattr(g, "nodes"):
            raise TypeError("%s: expected a networkx.Graph, got %s" % (where, type(g).__name__))
        if g.is_directed():
            raise ValueError("%s: g is directed; graphgram graphs are undirected. Convert it first, "
                             "e.g. with g.to_undirected()" % where)
        if g.is_multigraph():
            raise ValueError("%s: g is a multigraph; graphgram graphs have at most one edge per node "
                             "pair. Convert it first, e.g. with networkx.Graph(g)" % where)
        nodes = list(g.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        edge_list = list(g.edges(data=True))
        edges = np.array([(index[u], index[v]) for u, v, _ in edge_list], dtype=np.int64).reshape(-1, 2)
        ndata = [g.nodes[v] for v in nodes]
        edata = [d for _, _, d in edge_list]

        def collect(datas, chosen, kind, examples):
            if chosen is None:
                names = {}
                for d in datas:
                    for k in d:
                        names[k] = names.get(k, 0) + 1
                for k, c in names.items():
                    if c != len(datas):
                        ex = next(examples[i] for i, d in enumerate(datas) if k not in d)
                        raise ValueError(
                            "%s: %s attribute %r is present on %d of %d %ss (missing e.g. on %s %r); "
                            "give it to every %s, or choose the attributes to keep with %s_attrs=[...]"
                            % (where, kind, k, c, len(datas), kind, kind, ex, kind, kind))
                chosen = list(names)
            elif isinstance(chosen, str):
                chosen = [chosen]
            out = {}
            for k in chosen:
                vals = []
                for i, d in enumerate(datas):
                    if k not in d:
                        raise ValueError("%s: %s %r has no attribute %r" % (where, kind, examples[i], k))
                    vals.append(d[k])
                out[k] = vals if vals else np.zeros(0)
            return out

        node_examples = nodes
        edge_examples = [(u, v) for u, v, _ in edge_list]
        na = collect(ndata, node_attrs, "node", node_examples)
        ea = collect(edata, edge_attrs, "edge", edge_examples)
        if weight is None:
            w = None
        else:
            w = []
            for (u, v), d in zip(edge_examples, edata):
                if weight not in d:
                    raise ValueError("%s: edge %r has no weight attribute %r" % (where, (u, v), weight))
                w.append(d[weight])
        return cls(len(nodes), edges, w, node_attrs=na, edge_attrs=ea)

    def to_networkx(self, weight="weight"):
        """Return the graph as a ``networkx.Graph`` with nodes ``0 .. n_nodes-1``.

        Parameters
        ----------
        weight : str or None, default="weight"
            Edge attribute under which weights are stored; ``None`` omits them. If
            an edge attribute of that name exists it must equal the weights.

        Returns
        -------
        networkx.Graph
            Scalar attributes become Python numbers (string labels stay strings), vectors NumPy arrays.
        """
        import networkx as nx

        if weight is not None and weight in self._edge_attrs:
            a = self._edge_attrs[weight]
            if a.ndim != 1 or not np.array_equal(a.astype(np.float64), self._weights):
                raise ValueError("to_networkx: the edge attribute %r differs from the edge weights; "
                                 "pass another name as weight=" % weight)
        g = nx.Graph()
        node_items = list(self._node_attrs.items())
        for i in range(self._n_nodes):
            g.add_node(i, **{k: _scalar_out(v[i]) for k, v in node_items})
        edge_items = list(self._edge_attrs.items())
        for e in range(self.n_edges):
            d = {k: _scalar_out(v[e]) for k, v in edge_items}
            if weight is not None:
                d[weight] = float(self._weights[e])
            g.add_edge(int(self._edges[e, 0]), int(self._edges[e, 1]), **d)
        return g


def node_counts(graphs):
    """The number of nodes of each graph, an int64 array (a GraphLibrary answers from its offsets)."""
    counts = getattr(graphs, "_node_counts", None)
    if counts is not None:
        return counts()
    return np.fromiter((g._n_nodes for g in graphs), dtype=np.int64, count=len(graphs))


def edge_counts(graphs):
    """The number of edges of each graph, an int64 array (a GraphLibrary answers from its offsets)."""
    counts = getattr(graphs, "_edge_counts", None)
    if counts is not None:
        return counts()
    return np.fromiter((g._edges.shape[0] for g in graphs), dtype=np.int64, count=len(graphs))


def take(graphs, positions):
    """The graphs at ``positions``: a list, or a GraphLibrary of them (a compact copy) from a library."""
    if hasattr(graphs, "_node_counts"):
        return graphs[np.asarray(positions, dtype=np.int64)]
    return [graphs[int(p)] for p in positions]


def as_graph_list(X, name="X"):
    """Return ``X`` as a list of valid graphs, or raise a clear error.

    Parameters
    ----------
    X : sequence of Graph, or GraphLibrary
        The graphs; a single ``Graph`` is rejected so that ``kernel(g)`` is not
        mistaken for ``kernel([g])``. A :class:`~graphgram.library.GraphLibrary`
        (checked when built or loaded, read-only) is returned as it is.
    name : str
        How error messages call the argument.
    """
    from .library import GraphLibrary  # here: the library module builds on this one
    if isinstance(X, GraphLibrary):
        if len(X) == 0:
            raise ValueError("%s is empty: at least one graph is needed" % name)
        return X
    if isinstance(X, Graph):
        raise TypeError("%s must be a list of graphs, not a single Graph; use [g]" % name)
    if isinstance(X, (str, bytes, dict)) or not hasattr(X, "__len__") or not hasattr(X, "__iter__"):
        raise TypeError("%s must be a list of graphgram.Graph, got %s" % (name, type(X).__name__))
    graphs = list(X)
    if not graphs:
        raise ValueError("%s is empty: at least one graph is needed" % name)
    for i, g in enumerate(graphs):
        if not isinstance(g, Graph):
            raise TypeError("%s[%d] is not a graphgram.Graph (got %s)" % (name, i, type(g).__name__))
    # The arrays are read-only, but a determined caller can change that: check
    # them again before Go reads them.
    Graph.validate_all(graphs, name)
    return graphs
