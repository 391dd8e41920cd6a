"""Libraries of many graphs: one packed store, built once, loaded in seconds.

A virtual library of 10⁵–10⁶ molecules is parsed once (:meth:`GraphLibrary.from_smiles`,
in parallel, with progress) into one set of NumPy arrays — the graphs'
structure concatenated with offsets, each attribute one array over all nodes
(edges), string labels as codes into one sorted vocabulary — and saved as a
folder of ``.npy`` files (:meth:`GraphLibrary.save`) that
:meth:`GraphLibrary.load` memory-maps in milliseconds. Every kernel, and
:class:`graphgram.gpytorch.GPyTorchGraphKernel`, takes a library wherever it
takes a list of graphs; a call packs the library's arrays directly (the
kernel's attribute columns are gathered into the call's feature matrix; the
structure is passed as views), without building a Python object per graph.

A slice of a library is a view; an index array selects a compact copy of the
chosen graphs. :meth:`GraphLibrary.shards` cuts it into contiguous views for
Dask workers; a library loaded from a folder pickles as the folder's path and
its range, so a worker maps the same files instead of receiving the arrays.
"""

import json
import os
from collections.abc import Sequence

import numpy as np

from .graph import Graph, _readonly, as_graph_list

__all__ = ["GraphLibrary"]

_FORMAT = "graphgram.GraphLibrary"
_VERSION = 1
_MANIFEST = "library.json"


class GraphLibrary(Sequence):
    """Many graphs packed into one set of arrays; see the module's docstring.

    Build one with :meth:`from_graphs` or :meth:`from_smiles`, or open a saved
    one with :meth:`load`. It is a read-only sequence of :class:`Graph`:
    ``len(lib)``, ``lib[i]`` (a Graph whose arrays are views), ``lib[a:b]``
    (a library that is a view), ``lib[index_array]`` (a library holding a
    copy of those graphs).

    Attributes
    ----------
    ids : ndarray of str, shape (n_graphs,), or None
        What names each graph: the SMILES for :meth:`from_smiles`, or the ids given.
    n_nodes, n_edges : ndarray of int64, shape (n_graphs,)
    node_attributes, edge_attributes : dict of str to str
        Attribute name → its kind: ``"int"``, ``"float"``, ``"bool"``,
        ``"str"``, or ``"float[w]"`` for vectors of length w.
    path : str or None
        The folder it was loaded from.

    Examples
    --------
    >>> from graphgram import Graph, GraphLibrary
    >>> lib = GraphLibrary.from_graphs([Graph(2, [(0, 1)], node_attrs={"label": ["C", "O"]}),
    ...                                 Graph(1, node_attrs={"label": ["N"]})])
    >>> len(lib), lib.n_nodes.tolist(), lib[1].node_attrs["label"].tolist()
    (2, [2, 1], ['N'])
    """

    __slots__ = ("_node_ptr", "_edge_ptr", "_edges", "_weights", "_node", "_edge", "_ids", "_path", "_range")

    def __init__(self, *args, **kwargs):
        raise TypeError("build a GraphLibrary with GraphLibrary.from_graphs, from_smiles or load")

    @classmethod
    def _make(cls, node_ptr, edge_ptr, edges, weights, node, edge, ids, path=None, rng=None):
        """A library over these arrays (no copies, no checks). node and edge map
        attribute names to (values, vocabulary or None, the values' dtype as
        graphs hold them: bool, int64 or float64; numbers are stored in the
        smallest integer type that holds them exactly, see _narrow); node_ptr
        and edge_ptr hold absolute offsets into the node and edge arrays."""
        self = object.__new__(cls)
        self._node_ptr, self._edge_ptr = node_ptr, edge_ptr
        self._edges, self._weights = edges, weights
        self._node, self._edge = node, edge
        self._ids = ids
        self._path, self._range = path, rng
        return self

    # --- building ------------------------------------------------------------
    @classmethod
    def from_graphs(cls, graphs, ids=None):
        """Pack a list of graphs into a library.

        Every graph must have the same attributes, each of one type and width
        in all of them (graphs without nodes or edges may lack those attributes).

        Parameters
        ----------
        graphs : sequence of Graph
        ids : sequence of str, optional
            A name for each graph.

        Returns
        -------
        GraphLibrary
        """
        graphs = as_graph_list(graphs, "graphs")
        n = len(graphs)
        n_nodes = np.fromiter((g.n_nodes for g in graphs), dtype=np.int64, count=n)
        n_edges = np.fromiter((g.n_edges for g in graphs), dtype=np.int64, count=n)
        node_ptr = np.concatenate([[0], np.cumsum(n_nodes)]).astype(np.int64)
        edge_ptr = np.concatenate([[0], np.cumsum(n_edges)]).astype(np.int64)
        edges = np.concatenate([g._edges for g in graphs]) if edge_ptr[-1] else np.zeros((0, 2), np.int64)
        weights = np.concatenate([g._weights for g in graphs]) if edge_ptr[-1] else np.zeros(0)
        node = _pack_attributes(graphs, "node", n_nodes)
        edge = _pack_attributes(graphs, "edge", n_edges)
        return cls._make(_readonly(node_ptr), _readonly(edge_ptr), _readonly(np.ascontiguousarray(edges)),
                         _readonly(np.ascontiguousarray(weights)), node, edge, _as_ids(ids, n))

    @classmethod
    def from_smiles(cls, smiles, ids=None, n_jobs=1, errors="raise", verbose=None, **options):
        """Parse SMILES strings (with RDKit) into a library of molecular graphs.

        Parameters
        ----------
        smiles : sequence of str
        ids : sequence of str, optional
            A name for each molecule; by default the SMILES strings themselves.
        n_jobs : int, default=1
            Worker processes; -1 uses every core.
        errors : {"raise", "skip"}, default="raise"
            What a string RDKit cannot parse does: raise ValueError (quoting it
            and its position), or leave the molecule out (``ids`` says which remain).
        verbose : bool, optional
            Progress bar; None follows ``graphgram.get_config()["progress"]``.
        **options
            Passed to :func:`graphgram.molecules.from_smiles` (``hydrogens``,
            ``features``, ``radius``).

        Returns
        -------
        GraphLibrary
        """
        from ._config import get_config
        if errors not in ("raise", "skip"):
            raise ValueError("errors must be 'raise' or 'skip', got %r" % (errors,))
        smiles = list(smiles)
        if not smiles:
            raise ValueError("smiles is empty: at least one molecule is needed")
        for i, s in enumerate(smiles):
            if not isinstance(s, str):
                raise TypeError("smiles[%d] is not a string (got %s)" % (i, type(s).__name__))
        ids = list(smiles) if ids is None else list(_as_ids(ids, len(smiles)))
        n_jobs = _n_jobs(n_jobs)
        chunk = max(1, min(2000, -(-len(smiles) // (4 * n_jobs))))
        tasks = [(smiles[a:a + chunk], a, errors, options) for a in range(0, len(smiles), chunk)]
        show = get_config()["progress"] if verbose is None else bool(verbose)
        bar = None
        if show:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(smiles), desc="parsing SMILES", unit="mol", leave=False, dynamic_ncols=True)
        parts = []
        try:
            if n_jobs == 1:
                for t in tasks:
                    parts.append(_parse_chunk(t))
                    if bar is not None:
                        bar.update(len(t[0]))
            else:
                from concurrent.futures import ProcessPoolExecutor
                with ProcessPoolExecutor(n_jobs) as pool:
                    for t, part in zip(tasks, pool.map(_parse_chunk, tasks)):
                        parts.append(part)
                        if bar is not None:
                            bar.update(len(t[0]))
        finally:
            if bar is not None:
                bar.close()
        kept = np.concatenate([p[1] for p in parts])
        if kept.size == 0:
            raise ValueError("RDKit could parse none of the %d SMILES strings" % len(smiles))
        lib = _concatenate([p[0] for p in parts if p[0] is not None])
        lib._ids = _readonly(np.array([ids[i] for i in kept], dtype=np.str_))
        return lib

    # --- storage -------------------------------------------------------------
    def save(self, path):
        """Write the library to folder ``path`` (created; files in it replaced).

        One ``.npy`` file per array and ``library.json`` describing them,
        written last: a folder without it is not a library.
        """
        os.makedirs(path, exist_ok=True)
        manifest = os.path.join(path, _MANIFEST)
        if os.path.exists(manifest):
            os.remove(manifest)
        lib = self._compact()
        arrays = {"node_ptr": lib._node_ptr, "edge_ptr": lib._edge_ptr, "edges": lib._edges, "weights": lib._weights}
        attrs = {}
        for kind, table in (("node", lib._node), ("edge", lib._edge)):
            attrs[kind] = []
            for k, (name, (values, vocab, dtype)) in enumerate(table.items()):
                arrays["%s_%d" % (kind, k)] = values
                if vocab is not None:
                    arrays["%s_%d_vocab" % (kind, k)] = vocab
                attrs[kind].append({"name": name, "file": "%s_%d" % (kind, k), "vocab": vocab is not None,
                                    "dtype": np.dtype(dtype).name})
        if lib._ids is not None:
            arrays["ids"] = lib._ids
        for name, a in arrays.items():
            np.save(os.path.join(path, name + ".npy"), np.ascontiguousarray(a), allow_pickle=False)
        with open(manifest, "w") as f:
            json.dump({"format": _FORMAT, "version": _VERSION, "n_graphs": len(lib), "attributes": attrs,
                       "ids": lib._ids is not None}, f, indent=1)

    @classmethod
    def load(cls, path, mmap=True):
        """Open a library saved by :meth:`save`.

        Parameters
        ----------
        path : str or os.PathLike
            The folder.
        mmap : bool, default=True
            Map the files read-only (nothing is read until used) instead of
            reading them into memory.

        Raises
        ------
        ValueError
            If the folder holds no library, another version, or arrays that do
            not make valid graphs (the message names the file and the graph).
        """
        path = os.fspath(path)
        try:
            with open(os.path.join(path, _MANIFEST)) as f:
                m = json.load(f)
        except FileNotFoundError:
            raise ValueError("%s holds no graphgram library (no %s)" % (path, _MANIFEST)) from None
        if m.get("format") != _FORMAT or m.get("version") != _VERSION:
            raise ValueError("%s: %s is not a version-%d graphgram library (format %r, version %r)"
                             % (path, _MANIFEST, _VERSION, m.get("format"), m.get("version")))

        def read(name):
            try:
                a = np.load(os.path.join(path, name + ".npy"), mmap_mode="r" if mmap else None, allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise ValueError("%s: cannot read %s.npy: %s" % (path, name, exc)) from None
            if not mmap:
                a = _readonly(a)
            return a

        tables = []
        for kind in ("node", "edge"):
            table = {}
            for a in m["attributes"][kind]:
                dtype = a.get("dtype")
                if dtype not in ("bool", "int64", "float64", "int32"):
                    raise ValueError("%s: %s names the unknown dtype %r for attribute %r"
                                     % (path, _MANIFEST, dtype, a.get("name")))
                table[a["name"]] = (read(a["file"]), read(a["file"] + "_vocab") if a["vocab"] else None,
                                    np.dtype(dtype))
            tables.append(table)
        lib = cls._make(read("node_ptr"), read("edge_ptr"), read("edges"), read("weights"), tables[0], tables[1],
                        read("ids") if m.get("ids") else None, path=os.path.abspath(path),
                        rng=(0, int(m["n_graphs"])))
        _validate(lib, path, int(m["n_graphs"]))
        return lib

    # --- sequence ------------------------------------------------------------
    def __len__(self):
        return len(self._node_ptr) - 1

    def __getitem__(self, index):
        n = len(self)
        if isinstance(index, slice):
            a, b, step = index.indices(n)
            if step != 1:
                return self[np.arange(a, b, step)]
            b = max(a, b)
            rng = None if self._range is None else (self._range[0] + a, self._range[0] + b)
            return GraphLibrary._make(self._node_ptr[a:b + 1], self._edge_ptr[a:b + 1], self._edges, self._weights,
                                      self._node, self._edge, None if self._ids is None else self._ids[a:b],
                                      self._path, rng)
        if isinstance(index, (int, np.integer)):
            i = int(index)
            if not -n <= i < n:
                raise IndexError("graph index %d out of range for a library of %d graphs" % (i, n))
            return self._graph(i % n)
        sel = np.asarray(index)
        if sel.dtype == bool:
            if sel.shape != (n,):
                raise IndexError("a boolean index must have one entry per graph (%d), got shape %s"
                                 % (n, sel.shape))
            sel = np.flatnonzero(sel)
        if sel.dtype.kind not in "iu" or sel.ndim != 1:
            raise TypeError("a library is indexed by an int, a slice or a 1-D array of ints or bools, got %r"
                            % (index,))
        if sel.size and (sel.min() < -n or sel.max() >= n):
            raise IndexError("graph index out of range for a library of %d graphs" % n)
        return self._select(sel % n if sel.size else sel.astype(np.int64))

    def __iter__(self):
        for i in range(len(self)):
            yield self._graph(i)

    def __repr__(self):
        return "GraphLibrary(n_graphs=%d, n_nodes=%d, node_attrs={%s}, edge_attrs={%s}%s)" % (
            len(self), self.n_nodes.sum(), ", ".join("%s: %s" % kv for kv in self.node_attributes.items()),
            ", ".join("%s: %s" % kv for kv in self.edge_attributes.items()),
            "" if self._path is None else ", path=%r" % self._path)

    def __reduce__(self):
        if self._path is not None and self._range is not None:
            return (_open_range, (self._path, self._range))
        lib = self._compact()
        return (_restore, (np.asarray(lib._node_ptr), np.asarray(lib._edge_ptr), np.asarray(lib._edges),
                           np.asarray(lib._weights), _plain(lib._node), _plain(lib._edge),
                           None if lib._ids is None else np.asarray(lib._ids)))

    # --- properties ----------------------------------------------------------
    @property
    def ids(self):
        return self._ids

    @property
    def path(self):
        return self._path

    @property
    def n_nodes(self):
        return np.diff(self._node_ptr)

    @property
    def n_edges(self):
        return np.diff(self._edge_ptr)

    @property
    def node_attributes(self):
        return {name: _kind_name(*entry) for name, entry in self._node.items()}

    @property
    def edge_attributes(self):
        return {name: _kind_name(*entry) for name, entry in self._edge.items()}

    def shards(self, n_shards):
        """Cut the library into ``n_shards`` contiguous views of nearly equal size
        (by graphs), in order; fewer when it has fewer graphs."""
        if not isinstance(n_shards, (int, np.integer)) or n_shards < 1:
            raise ValueError("n_shards must be a positive integer, got %r" % (n_shards,))
        cuts = np.linspace(0, len(self), min(int(n_shards), len(self)) + 1).round().astype(int)
        return [self[a:b] for a, b in zip(cuts[:-1], cuts[1:])]

    # --- what the packing reads (graphgram._packing) --------------------------
    def _structure(self):
        """node_ptr and edge_ptr from 0, edges and weights: the boundary's arrays, views where they can be."""
        n0, e0, e1 = int(self._node_ptr[0]), int(self._edge_ptr[0]), int(self._edge_ptr[-1])
        return (np.asarray(self._node_ptr, dtype=np.int64) - n0, np.asarray(self._edge_ptr, dtype=np.int64) - e0,
                np.asarray(self._edges[e0:e1], dtype=np.int64), np.asarray(self._weights[e0:e1], dtype=np.float64))

    def _attribute(self, kind, name):
        """(values, vocabulary or None) of attribute ``name`` over this library's
        nodes (edges) in order, views (numbers as stored: the packing converts
        them to float64 exactly); None when the library lacks it."""
        entry = (self._node if kind == "node" else self._edge).get(name)
        if entry is None:
            return None
        ptr = self._node_ptr if kind == "node" else self._edge_ptr
        return entry[0][int(ptr[0]):int(ptr[-1])], entry[1]

    def _node_counts(self):
        return self.n_nodes

    def _edge_counts(self):
        return self.n_edges

    # --- internals -------------------------------------------------------------
    def _graph(self, i):
        n0, n1 = int(self._node_ptr[i]), int(self._node_ptr[i + 1])
        e0, e1 = int(self._edge_ptr[i]), int(self._edge_ptr[i + 1])

        def attrs(table, a, b):
            out = {}
            for name, (values, vocab, dtype) in table.items():
                v = values[a:b]
                if vocab is not None:
                    out[name] = _readonly(vocab[v])
                else:
                    out[name] = _view(v) if v.dtype == dtype else _readonly(v.astype(dtype))
            return out

        return Graph._trusted(n1 - n0, _view(self._edges[e0:e1]), _view(self._weights[e0:e1]),
                              attrs(self._node, n0, n1), attrs(self._edge, e0, e1))

    def _select(self, sel):
        """A compact library of the graphs sel (positions), copied."""
        nodes = _ranges(self._node_ptr, sel)
        edges = _ranges(self._edge_ptr, sel)
        n_nodes, n_edges = np.diff(self._node_ptr)[sel], np.diff(self._edge_ptr)[sel]
        node_ptr = np.concatenate([[0], np.cumsum(n_nodes)]).astype(np.int64)
        edge_ptr = np.concatenate([[0], np.cumsum(n_edges)]).astype(np.int64)

        def table(t, rows):
            return {name: (_readonly(np.array(v[rows])), voc, dt) for name, (v, voc, dt) in t.items()}

        return GraphLibrary._make(_readonly(node_ptr), _readonly(edge_ptr), _readonly(np.array(self._edges[edges])),
                                  _readonly(np.array(self._weights[edges])), table(self._node, nodes),
                                  table(self._edge, edges), None if self._ids is None else self._ids[sel])

    def _compact(self):
        """This library with its arrays from offset 0 (itself when they are)."""
        if int(self._node_ptr[0]) == 0 and int(self._edge_ptr[0]) == 0 and \
                len(self._weights) == int(self._edge_ptr[-1]) and \
                all(len(v) == int(self._node_ptr[-1]) for v, _, _ in self._node.values()):
            return self
        return self._select(np.arange(len(self)))


# --- helpers -------------------------------------------------------------------


def _view(a):
    v = a.view(np.ndarray) if isinstance(a, np.memmap) else a[...]
    v.flags.writeable = False
    return v


def _plain(table):
    return {name: (np.asarray(v), None if voc is None else np.asarray(voc), dt) for name, (v, voc, dt) in table.items()}


def _restore(node_ptr, edge_ptr, edges, weights, node, edge, ids):
    """Unpickle: the arrays made read-only and checked as a loaded store's."""
    def ro(table):
        return {name: (_readonly(v), None if voc is None else _readonly(voc), dt) for name, (v, voc, dt) in table.items()}

    lib = GraphLibrary._make(_readonly(node_ptr), _readonly(edge_ptr), _readonly(edges), _readonly(weights),
                             ro(node), ro(edge), None if ids is None else _readonly(ids))
    _validate(lib, "a pickled GraphLibrary", len(node_ptr) - 1)
    return lib


def _open_range(path, rng):
    lib = GraphLibrary.load(path)
    return lib[rng[0]:rng[1]]


def _ranges(ptr, sel):
    """The rows of the graphs sel, given their offsets ptr, concatenated."""
    starts, stops = np.asarray(ptr[:-1])[sel], np.asarray(ptr[1:])[sel]
    counts = stops - starts
    if counts.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return np.arange(counts.sum(), dtype=np.int64) + offsets


def _kind_name(values, vocab, dtype):
    if vocab is not None:
        return "str"
    if values.ndim == 2:
        return "float[%d]" % values.shape[1]
    return {"b": "bool", "i": "int", "f": "float"}[dtype.kind]


def _narrow(values):
    """values in the smallest signed integer type that holds them exactly (int8 to
    int32), or as they are: floats qualify when whole and without -0.0 (whose sign
    a kernel may see)."""
    if values.dtype.kind not in "if" or not values.size:
        return values
    if values.dtype.kind == "f":
        if not np.all(values == np.round(values)) or np.any(np.signbit(values) & (values == 0)):
            return values
    lo, hi = values.min(), values.max()
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            return values.astype(t)
    return values


def _as_ids(ids, n):
    if ids is None:
        return None
    if isinstance(ids, str):
        raise TypeError("ids must be a sequence of strings, one per graph, not one string")
    out = np.array([str(x) for x in ids], dtype=np.str_)
    if out.shape != (n,):
        raise ValueError("ids has %d entries for %d graphs" % (out.size, n))
    return _readonly(out)


def _n_jobs(n_jobs):
    if not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0 or n_jobs < -1:
        raise ValueError("n_jobs must be a positive integer or -1, got %r" % (n_jobs,))
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


def _pack_attributes(graphs, kind, counts):
    """name -> (values over all graphs, vocabulary or None); every graph with
    nodes (edges) must have the same attributes, of one type and width."""
    table = {}
    first = next((i for i, c in enumerate(counts) if c), None)
    if first is None:
        return table
    ref = graphs[first]._node_attrs if kind == "node" else graphs[first]._edge_attrs
    for name, a0 in ref.items():
        parts = []
        for i, g in enumerate(graphs):
            if not counts[i]:
                continue
            a = (g._node_attrs if kind == "node" else g._edge_attrs).get(name)
            if a is None:
                raise ValueError("graphs[%d] has no %s attribute %r but graphs[%d] has: a library's graphs "
                                 "have the same attributes" % (i, kind, name, first))
            if a.dtype.kind != a0.dtype.kind or a.shape[1:] != a0.shape[1:]:
                raise ValueError("graphs[%d]: %s attribute %r holds %s values of shape %s but graphs[%d] %s of "
                                 "shape %s; an attribute has one type and width in a library"
                                 % (i, kind, name, a.dtype, a.shape[1:], first, a0.dtype, a0.shape[1:]))
            parts.append(a)
        values = np.concatenate(parts)
        vocab, dtype = None, values.dtype
        if values.dtype.kind == "U":
            vocab, values = np.unique(values, return_inverse=True)
            values = values.astype(np.int32).reshape(-1)
            vocab, dtype = _readonly(vocab), np.dtype(np.int32)
        else:
            values = _narrow(values)
        table[name] = (_readonly(np.ascontiguousarray(values)), vocab, dtype)
    # Checked once, after the attributes the first graph has (it also catches extras
    # when that graph has none).
    for i, g in enumerate(graphs):
        extra = set(g._node_attrs if kind == "node" else g._edge_attrs) - set(ref)
        if counts[i] and extra:
            raise ValueError("graphs[%d] has %s attribute %r that graphs[%d] lacks: a library's graphs have "
                             "the same attributes" % (i, kind, sorted(extra)[0], first))
    return table


def _concatenate(libs):
    """One compact library of several (the same attributes in each)."""
    if len(libs) == 1:
        return libs[0]._compact()
    libs = [lib._compact() for lib in libs]
    node_ptr = np.concatenate([[0], np.cumsum(np.concatenate([lib.n_nodes for lib in libs]))]).astype(np.int64)
    edge_ptr = np.concatenate([[0], np.cumsum(np.concatenate([lib.n_edges for lib in libs]))]).astype(np.int64)
    tables = []
    for kind in ("_node", "_edge"):
        names = list(getattr(libs[0], kind))
        table = {}
        for name in names:
            entries = [getattr(lib, kind)[name] for lib in libs]
            if entries[0][1] is None:
                table[name] = (_readonly(_narrow(np.concatenate([v for v, _, _ in entries]))), None, entries[0][2])
            else:
                vocab = np.unique(np.concatenate([voc for _, voc, _ in entries]))
                table[name] = (_readonly(np.concatenate([np.searchsorted(vocab, voc)[v].astype(np.int32)
                                                         for v, voc, _ in entries])), _readonly(vocab), entries[0][2])
        tables.append(table)
    return GraphLibrary._make(_readonly(node_ptr), _readonly(edge_ptr),
                              _readonly(np.concatenate([lib._edges for lib in libs])),
                              _readonly(np.concatenate([lib._weights for lib in libs])), tables[0], tables[1], None)


def _parse_chunk(task):
    """Worker: (library or None, positions kept) of SMILES smiles[start:...]."""
    from .molecules import from_smiles
    smiles, start, errors, options = task
    graphs, kept = [], []
    for k, s in enumerate(smiles):
        try:
            graphs.append(from_smiles(s, **options))
        except ValueError as exc:
            if errors == "raise":
                raise ValueError("smiles[%d]: %s" % (start + k, exc)) from None
            continue
        kept.append(start + k)
    lib = GraphLibrary.from_graphs(graphs) if graphs else None
    return lib, np.array(kept, dtype=np.int64)


def _validate(lib, path, n_graphs):
    """Check a loaded library's arrays, vectorized; ValueError naming the file and graph."""
    def bad(what):
        raise ValueError("%s is not a valid graphgram library: %s" % (path, what))

    node_ptr, edge_ptr = np.asarray(lib._node_ptr), np.asarray(lib._edge_ptr)
    for name, p in (("node_ptr", node_ptr), ("edge_ptr", edge_ptr)):
        if p.dtype != np.int64 or p.shape != (n_graphs + 1,) or (p.size and p[0] != 0) or np.any(np.diff(p) < 0):
            bad("%s.npy must hold %d non-decreasing int64 offsets from 0" % (name, n_graphs + 1))
    m = int(edge_ptr[-1])
    edges, weights = np.asarray(lib._edges), np.asarray(lib._weights)
    if edges.dtype != np.int64 or edges.shape != (m, 2) or weights.dtype != np.float64 or weights.shape != (m,):
        bad("edges.npy and weights.npy must hold %d int64 node pairs and float64 weights" % m)
    if m:
        limit = np.repeat(np.diff(node_ptr), np.diff(edge_ptr))
        wrong = (edges.min(axis=1) < 0) | (edges.max(axis=1) >= limit)
        if wrong.any():
            bad("graph %d has an edge out of its node range" % (np.searchsorted(edge_ptr, wrong.argmax(), "right") - 1))
        wrong = ~np.isfinite(weights) | (weights < 0)
        if wrong.any():
            bad("graph %d has a negative or non-finite weight" % (np.searchsorted(edge_ptr, wrong.argmax(), "right") - 1))
        # Each undirected edge once per graph: (graph's first node + smaller, + larger) distinct.
        base = np.repeat(node_ptr[:-1], np.diff(edge_ptr))
        key = (base + edges.min(axis=1)) * (int(node_ptr[-1]) + 1) + (base + edges.max(axis=1))
        key.sort()
        if np.any(key[1:] == key[:-1]):
            bad("an edge is listed twice in a graph")
    for kind, table, count in (("node", lib._node, int(node_ptr[-1])), ("edge", lib._edge, m)):
        for name, (values, vocab, dtype) in table.items():
            if values.shape[:1] != (count,) or values.ndim > 2 or values.dtype.kind not in "biuf":
                bad("%s attribute %r must hold %d values" % (kind, name, count))
            if vocab is not None and (values.dtype.kind not in "iu" or vocab.dtype.kind != "U" or
                                      (values.size and (values.min() < 0 or values.max() >= vocab.size))):
                bad("%s attribute %r: string codes out of its vocabulary" % (kind, name))
            if vocab is None and dtype.kind != values.dtype.kind and not (dtype.kind in "if" and values.dtype.kind == "i"):
                bad("%s attribute %r holds %s values for %s ones" % (kind, name, values.dtype, dtype))
            if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
                bad("%s attribute %r contains NaN or infinity" % (kind, name))
    if lib._ids is not None and lib._ids.shape != (n_graphs,):
        bad("ids.npy must hold %d names" % n_graphs)
