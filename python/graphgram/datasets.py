"""Loaders for graph data sets in the TU Dortmund benchmark format.

The TU format (https://chrsmrrs.github.io/datasets/) stores a data set ``NAME`` as
text files in one directory:

``NAME_A.txt``
    ``i, j`` per line, 1-based global node ids; each undirected edge appears in
    both directions.
``NAME_graph_indicator.txt``
    The graph (1-based) of each node, nodes ordered graph by graph.
``NAME_graph_labels.txt`` or ``NAME_graph_attributes.txt``
    Class label (integer) or regression target(s) of each graph.
``NAME_node_labels.txt``, ``NAME_edge_labels.txt``, ``NAME_node_attributes.txt``, ``NAME_edge_attributes.txt``
    Optional; edge files have one line per line of ``NAME_A.txt``.
"""

import warnings
from importlib import resources
from pathlib import Path

import numpy as np

from .graph import Graph

__all__ = ["load_tu", "load_mutag"]


def _numbers(data, dtype, what):
    """Parse whitespace/comma separated numbers; return (values, fields per line)."""
    text = data.replace(b",", b" ")
    first = next((ln for ln in text.splitlines() if ln.strip()), b"")
    width = len(first.split())
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            values = np.fromstring(text, dtype=dtype, sep=" ")
        except (DeprecationWarning, ValueError):
            values = None
    if values is None:
        try:
            values = np.array(text.split(), dtype=dtype)
        except ValueError:
            raise ValueError("%s: cannot parse its contents as %s numbers"
                             % (what, np.dtype(dtype).name)) from None
    if width and values.size % width:
        raise ValueError("%s: %d numbers do not fill lines of %d fields" % (what, values.size, width))
    return values, max(width, 1)


def _ints_or_floats(data, what):
    try:
        return _numbers(data, np.int64, what)
    except ValueError:
        return _numbers(data, np.float64, what)


def _rows(data, dtype, what, n_rows, vector=False):
    values, width = _numbers(data, dtype, what) if dtype is not None else _ints_or_floats(data, what)
    if values.size != n_rows * width:
        shape = "" if width == 1 else " of %d values" % width
        raise ValueError("%s has %d lines%s, expected %d lines"
                         % (what, values.size // width, shape, n_rows))
    if vector or width > 1:
        return values.reshape(n_rows, width)
    return values


def _readonly(a):
    a.flags.writeable = False
    return a


def _load(read, name):
    """Build the graphs from ``read(suffix) -> bytes or None``."""
    f = lambda suffix: "%s_%s.txt" % (name, suffix)  # noqa: E731

    raw = read("graph_indicator")
    if raw is None:
        raise FileNotFoundError("%s is missing" % f("graph_indicator"))
    indicator, _ = _numbers(raw, np.int64, f("graph_indicator"))
    n_total = indicator.size
    if n_total and (np.any(np.diff(indicator) < 0) or indicator[0] < 1):
        raise ValueError("%s: graph ids must start at 1 and never decrease (nodes ordered graph by graph)"
                         % f("graph_indicator"))

    raw = read("graph_labels")
    if raw is not None:
        targets, _ = _ints_or_floats(raw, f("graph_labels"))
        width = 1
    else:
        raw = read("graph_attributes")
        if raw is None:
            raise FileNotFoundError("neither %s nor %s exists" % (f("graph_labels"), f("graph_attributes")))
        targets, width = _numbers(raw, np.float64, f("graph_attributes"))
        if width > 1:
            targets = targets.reshape(-1, width)
    n_graphs = targets.shape[0]
    if n_total and indicator[-1] > n_graphs:
        raise ValueError("%s names graph %d but only %d graph targets are given"
                         % (f("graph_indicator"), indicator[-1], n_graphs))
    counts = np.bincount(indicator - 1, minlength=n_graphs) if n_total else np.zeros(n_graphs, np.int64)
    node_ptr = np.zeros(n_graphs + 1, dtype=np.int64)
    np.cumsum(counts, out=node_ptr[1:])

    node_attrs = {}
    raw = read("node_labels")
    if raw is not None:
        node_attrs["label"] = _rows(raw, None, f("node_labels"), n_total)
    raw = read("node_attributes")
    if raw is not None:
        node_attrs["attributes"] = _rows(raw, np.float64, f("node_attributes"), n_total, vector=True)

    raw = read("A")
    if raw is None:
        raise FileNotFoundError("%s is missing" % f("A"))
    pairs, _ = _numbers(raw, np.int64, f("A"))
    if pairs.size % 2:
        raise ValueError("%s: expected two node ids per line" % f("A"))
    pairs = pairs.reshape(-1, 2) - 1
    n_lines = pairs.shape[0]
    if n_lines and (pairs.min() < 0 or pairs.max() >= n_total):
        raise ValueError("%s refers to node ids outside 1..%d" % (f("A"), n_total))
    line_attrs = {}
    raw = read("edge_labels")
    if raw is not None:
        line_attrs["label"] = _rows(raw, None, f("edge_labels"), n_lines)
    raw = read("edge_attributes")
    if raw is not None:
        line_attrs["attributes"] = _rows(raw, np.float64, f("edge_attributes"), n_lines, vector=True)

    # One edge per unordered pair, in the order of (smaller id, larger id).
    lo = pairs.min(axis=1)
    hi = pairs.max(axis=1)
    gid = indicator - 1
    if n_lines and np.any(gid[lo] != gid[hi]):
        bad = int(np.argmax(gid[lo] != gid[hi]))
        raise ValueError("%s line %d joins nodes of different graphs (%d and %d)"
                         % (f("A"), bad + 1, gid[lo[bad]] + 1, gid[hi[bad]] + 1))
    key = lo * max(n_total, 1) + hi
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    for attr, vals in line_attrs.items():
        same = vals == vals[first][inverse]
        if same.ndim == 2:
            same = same.all(axis=1)
        if not same.all():
            bad = int(np.argmin(same))
            raise ValueError("%s: the two directions of edge (%d, %d) have different values (line %d)"
                             % (f("edge_labels" if attr == "label" else "edge_attributes"),
                                pairs[bad, 0] + 1, pairs[bad, 1] + 1, bad + 1))
    lo, hi = lo[first], hi[first]
    edge_graph = gid[lo]
    edge_ptr = np.zeros(n_graphs + 1, dtype=np.int64)
    np.cumsum(np.bincount(edge_graph, minlength=n_graphs), out=edge_ptr[1:])
    base = node_ptr[edge_graph]
    edges = _readonly(np.ascontiguousarray(np.stack([lo - base, hi - base], axis=1)))
    weights = _readonly(np.ones(edges.shape[0]))
    edge_attrs = {k: _readonly(np.ascontiguousarray(v[first], dtype=np.float64 if v.ndim == 2 else v.dtype))
                  for k, v in line_attrs.items()}
    node_attrs = {k: _readonly(np.ascontiguousarray(v, dtype=np.float64 if v.ndim == 2 else v.dtype))
                  for k, v in node_attrs.items()}

    graphs = []
    for g in range(n_graphs):
        a, b = node_ptr[g], node_ptr[g + 1]
        c, d = edge_ptr[g], edge_ptr[g + 1]
        graphs.append(Graph._trusted(
            b - a, edges[c:d], weights[c:d],
            {k: v[a:b] for k, v in node_attrs.items()},
            {k: v[c:d] for k, v in edge_attrs.items()}))
    return graphs, targets


def load_tu(path, name=None):
    """Load a data set in the TU Dortmund format.

    Parameters
    ----------
    path : str or path-like
        The data-set directory.
    name : str, optional
        The data-set name, the prefix of its files. ``None`` infers it from the
        single ``*_A.txt`` file in ``path``.

    Returns
    -------
    graphs : list of Graph
        One graph per graph id, in order, with unit edge weights. Node labels
        become the integer node attribute ``"label"``, edge labels the integer edge
        attribute ``"label"``, node (edge) attributes the float vector attribute
        ``"attributes"`` of shape (n, w) (w may be 1), where the files exist.
        Nodes keep the file order, isolated nodes included; edges are ordered by
        their (smaller, larger) node id.
    targets : ndarray
        Class labels as int64 exactly as in ``NAME_graph_labels.txt`` (not
        re-encoded, so MUTAG's are 1 and -1), or float64 regression targets from
        ``NAME_graph_attributes.txt`` (shape (N, k) when k > 1) when there are no labels.

    Raises
    ------
    FileNotFoundError
        When the directory or a required file is missing.
    ValueError
        When the files are inconsistent (an edge joins two graphs, line counts differ, ...).
    """
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError("load_tu: %s is not a directory" % path)
    if name is None:
        names = sorted(p.name[:-len("_A.txt")] for p in path.glob("*_A.txt"))
        if not names:
            raise FileNotFoundError("load_tu: no *_A.txt file in %s; is it a TU data set?" % path)
        if len(names) > 1:
            raise ValueError("load_tu: several data sets in %s (%s); pass name=" % (path, ", ".join(names)))
        name = names[0]

    def read(suffix):
        p = path / ("%s_%s.txt" % (name, suffix))
        return p.read_bytes() if p.is_file() else None

    return _load(read, name)


def load_mutag():
    """Load the MUTAG data set bundled with graphgram.

    188 nitro compounds labeled by mutagenic effect on *Salmonella typhimurium*
    (Debnath et al. 1991), as distributed in the TU Dortmund collection (see the
    ``README.txt`` shipped next to the data).

    Returns
    -------
    graphs : list of Graph
        Node attribute ``"label"`` (7 atom types, 0..6) and edge attribute
        ``"label"`` (4 bond types, 0..3).
    targets : ndarray of int64, shape (188,)
        1 (mutagenic) or -1.
    """
    root = resources.files(__name__.rpartition(".")[0]).joinpath("data").joinpath("MUTAG")

    def read(suffix):
        p = root.joinpath("MUTAG_%s.txt" % suffix)
        return p.read_bytes() if p.is_file() else None

    return _load(read, "MUTAG")
