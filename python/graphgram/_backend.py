"""The one boundary between Python and the Go core (``graphgram._ggcore``).

Everything that crosses to Go goes through :func:`compute`: graphs are packed
here, at call time, into contiguous arrays (string labels interned into codes
shared by every graph of the call), described by a descriptor of addresses *and*
lengths that lives only for the call (docs/abi.md), and handed to the single Go
entry point ``Compute`` together with the kernel's parameters as JSON and the
result buffers with their lengths. Nothing here is stored on a user-visible
object, so graphs, kernels and fitted estimators stay plain picklable data.

The Go call runs in a worker thread (gopy releases the GIL) while the calling
thread polls a shared control block: it draws a progress bar for long
computations and, on Ctrl-C, sets the block's cancel flag so that the Go
workers stop between pairs and inside solves; the call then raises
``KeyboardInterrupt`` and the next one works normally. Go errors arrive as text
starting with the Python exception they become.
"""

import json
import os
import threading
import time

import numpy as np

from ._config import get_config
from .graph import Graph, as_graph_list  # as_graph_list re-exported for old imports

try:
    from ._ggcore import pybind as _pybind
except ImportError as exc:  # pragma: no cover - only without a built extension
    raise ImportError(
        "graphgram's compiled Go core (graphgram._ggcore) is missing or does not load; "
        "reinstall graphgram (a wheel, or `pip install .` from its source tree with a Go toolchain). "
        "Cause: %s" % exc
    ) from exc

__all__ = ["Packed", "pack", "compute", "go_version", "vector_kernels"]

# Word 0 of every descriptor; Go refuses descriptors of another version.
_ABI_VERSION = 0x67670002
_DESC_WORDS = 18

# Python exceptions that Go's error prefixes name.
_EXCEPTIONS = {"ValueError": ValueError, "MemoryError": MemoryError, "RuntimeError": RuntimeError,
               "KeyboardInterrupt": KeyboardInterrupt}

# Progress bars appear only for calls still running after _PROGRESS_DELAY
# seconds: a call that ends sooner draws nothing (no bar flashes by for the
# many short calls of a GP fit or a cross-validation). The calling thread looks
# at the control block every _POLL seconds, on the clock _clock (a name of its
# own so that tests can drive it).
_PROGRESS_DELAY = 2.0
_POLL = 0.05
_clock = time.monotonic


def cuda_library():
    """Path of the CUDA library to use: $GRAPHGRAM_CUDA_LIB when set (another build
    of libggcuda.so), else the one shipped inside the package (wheels and
    GRAPHGRAM_CUDA=1 builds), or "" for none."""
    override = os.environ.get("GRAPHGRAM_CUDA_LIB", "")
    if override:
        return override
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libggcuda.so")
    return path if os.path.exists(path) else ""


def device_params(device, precision):
    """The Go core's device parameters for a kernel's ``device`` ("auto", "cpu", "cuda", "cuda:N")
    and ``precision`` ("float64", "float32").

    Raises ValueError for anything else.
    """
    kind, sep, index = str(device).partition(":") if isinstance(device, str) else ("", "", "")
    if kind not in ("auto", "cpu", "cuda") or (sep and (kind != "cuda" or not index.isdigit())):
        raise ValueError("device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got %r" % (device,))
    if not isinstance(precision, str) or precision not in ("float64", "float32"):
        raise ValueError("precision must be 'float64' or 'float32', got %r" % (precision,))
    return {"device": kind, "device_index": int(index) if sep else 0, "cuda_library": cuda_library(),
            "precision": precision, "validate_gpu": get_config()["validate_gpu"]}


def devices():
    """Report the GPUs graphgram can use, or why it cannot use any.

    Returns
    -------
    dict
        ``built`` (whether this build has the CUDA backend), ``library`` (the
        CUDA library used: $GRAPHGRAM_CUDA_LIB, the one shipped in the package,
        or "" for the loader's search path), ``usable`` (whether
        ``device="auto"`` computes on a GPU), ``reason`` (why not, with the CUDA
        error where there is one; "" when usable) and ``devices``: a list of
        dicts with ``index``, ``name``, ``compute_capability``,
        ``memory_bytes``, ``multiprocessors`` and ``validation``: None until
        the process first computes on the device, then a dict with
        ``state`` ("passed" or "failed"), ``detail`` (what disagreed with the
        CPU, and by how much, or the device's error) and ``seconds`` (see
        ``validate_gpu`` in :func:`graphgram.set_config`).

    Examples
    --------
    >>> import graphgram
    >>> info = graphgram.devices()
    >>> sorted(info)
    ['built', 'devices', 'library', 'reason', 'usable']
    """
    return json.loads(_call(_pybind.Devices, cuda_library()))


def go_version():
    """Return the version string of the compiled Go core."""
    return _pybind.Version()


def vector_kernels():
    """Return True when the Go core runs its AVX2 kernels (built with Go's simd experiment, CPU with AVX2+FMA)."""
    return bool(_pybind.VectorKernels())


def self_test_panic():
    """Make the Go core panic inside its guard; the panic must arrive as RuntimeError."""
    _call(_pybind.SelfTestPanic)


# --------------------------------------------------------------------------
# Packing
# --------------------------------------------------------------------------


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


def _columns(graphs_by_name, attr, kind, why, discrete=False):
    """Validate one attribute over the graphs of a call; return (width, value kind).

    graphs_by_name: list of (list name, graphs). A graph with no nodes (edges)
    of that kind needs no such attribute. With ``discrete``, the attribute must
    be a label: one string, integer or boolean per node (edge), or floats that
    are all whole numbers.
    """
    width = value_kind = None
    first = None
    for name, graphs in graphs_by_name:
        for i, g in enumerate(graphs):
            count = g.n_nodes if kind == "node" else g.n_edges
            attrs = g._node_attrs if kind == "node" else g._edge_attrs
            a = attrs.get(attr)
            if count == 0:
                continue  # no values: neither needed nor telling the attribute's type
            if a is None:
                raise ValueError("%s[%d] has no %s attribute %r (%s); it has: %s"
                                 % (name, i, kind, attr, why, ", ".join(attrs) or "no %s attributes" % kind))
            w = 1 if a.ndim == 1 else a.shape[1]
            vk = _kind_of(a)
            if discrete:
                _check_discrete(a, "%s[%d]" % (name, i), kind, attr, why)
            if width is None:
                width, value_kind, first = w, vk, "%s[%d]" % (name, i)
            elif w != width:
                raise ValueError("%s[%d]: %s attribute %r has width %d but %s has width %d; an attribute must "
                                 "have the same width in every graph" % (name, i, kind, attr, w, first, width))
            elif vk != value_kind:
                raise TypeError("%s[%d]: %s attribute %r holds %s but in %s it holds %s; an attribute must have "
                                "one type in every graph" % (name, i, kind, attr,
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
        bad = a[a != np.round(a)]
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
        parts = [a for _, graphs in graphs_by_name for g in graphs
                 for a in [(g._node_attrs if kind == "node" else g._edge_attrs).get(attr)]
                 if a is not None and a.size]
        if value_kind == "str":
            parts = [a for a in parts if a.dtype.kind == "U"]
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
        counts = [g.n_nodes if kind == "node" else g.n_edges for g in graphs]
        feat = np.zeros((int(sum(counts)), col))
        # Rows follow the graphs in order; a graph with nodes (edges) has the
        # attribute (_columns checked), one without adds no rows.
        attrs = [g._node_attrs if kind == "node" else g._edge_attrs for g, count in zip(graphs, counts) if count]
        for attr, c, width, value_kind in plan:
            if not attrs:
                break
            a = np.concatenate([d[attr].reshape(-1, width) for d in attrs])
            if value_kind == "str":
                a = np.searchsorted(vocab[attr], a)
            feat[:, c:c + width] = a
        out[name] = feat
    return out, layout


def _structure(name, graphs):
    """node_ptr, edge_ptr, edges and weights of one list of graphs (validated by as_graph_list)."""
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


def evaluate_base_kernel(kernel, x, y, index, name):
    """Evaluate a base kernel on two nodes or edges given as dicts attribute -> value.

    The values are packed into two feature rows as a graph's would be (strings
    coded from the two values' vocabulary) and evaluated by the Go core, so that
    base-kernel formulas exist once. Returns (value, gradient), the gradient in
    the columns ``index`` (hyperparameter name -> column) gives.
    """
    layout, xs, ys, col = {}, [], [], 0
    for attr in kernel._attr_order():
        strings = False
        for side, d in (("x", x), ("y", y)):
            if attr not in d:
                raise KeyError("attribute %r is missing from %s (needed by %s); it has: %s"
                               % (attr, side, name, ", ".join(map(str, d)) or "no attributes"))
        a, b = x[attr], y[attr]
        if isinstance(a, (str, np.str_)) or isinstance(b, (str, np.str_)):
            if not (isinstance(a, (str, np.str_)) and isinstance(b, (str, np.str_))):
                raise TypeError("%s: attribute %r compares a string with %r" % (name, attr, b if isinstance(a, str) else a))
            strings = True
            vocab = sorted({str(a), str(b)})
            a, b = [float(vocab.index(str(a)))], [float(vocab.index(str(b)))]
        else:
            vocab = None
        try:
            a = np.asarray(a, dtype=np.float64).ravel()
            b = np.asarray(b, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise TypeError("%s: attribute %r holds %r and %r, not numbers or strings" % (name, attr, x[attr], y[attr])) from None
        if a.size != b.size:
            raise ValueError("%s: cannot compare values of lengths %d and %d (attribute %r)"
                             % (name, a.size, b.size, attr))
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            raise ValueError("%s: attribute %r contains NaN or infinity" % (name, attr))
        if strings:
            layout[attr] = (col, a.size, "str", vocab)
        else:
            layout[attr] = (col, a.size, "num", sorted({float(a[0]), float(b[0])}) if a.size == 1 else None)
        col += a.size
        xs.append(a)
        ys.append(b)
    spec = json.dumps(kernel.to_spec(layout, index))
    xr = np.ascontiguousarray(np.concatenate(xs) if xs else np.zeros(0))
    yr = np.ascontiguousarray(np.concatenate(ys) if ys else np.zeros(0))
    out = np.zeros(1 + len(index))
    _call(_pybind.BaseKernel, spec, xr.ctypes.data, xr.size, yr.ctypes.data, yr.size, out.ctypes.data, out.size)
    return float(out[0]), out[1:]


# --------------------------------------------------------------------------
# Calls
# --------------------------------------------------------------------------


def _available_memory():
    """Bytes of memory available to a new allocation, or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(shape, n_params=0, iterations=False):
    """Raise MemoryError, naming the size, when the results of a call cannot fit in memory.

    Parameters
    ----------
    shape : tuple of int
        Shape of the float64 result.
    n_params : int
        With a gradient, its number of hyperparameters.
    iterations : bool
        Whether int32 iteration counts are returned too.
    """
    entries = float(np.prod(shape, dtype=np.float64))
    need = entries * (8 * (1 + n_params) + (4 if iterations else 0))
    avail = _available_memory()
    if avail is not None and need > avail:
        raise MemoryError("the result (shape %s%s) needs %s but only %s of memory is available; compute it "
                          "in blocks of rows (kernel(X[i:j], Y))"
                          % (shape, " with %d gradient columns" % n_params if n_params else "", _size(need),
                             _size(avail)))


def allocate(shape, dtype=np.float64, what="the result"):
    """Return a zeroed array, or raise MemoryError naming its size when it cannot be allocated.

    Whether the results of a call fit in the available memory is checked once,
    before packing, by :func:`check_memory`; this only names what failed.

    Parameters
    ----------
    shape : tuple of int
    dtype : dtype
    what : str
        What the array holds, for the message.
    """
    shape = tuple(int(s) for s in shape)
    need = int(np.prod(shape, dtype=np.float64) * np.dtype(dtype).itemsize)
    try:
        return np.zeros(shape, dtype=dtype)
    except MemoryError:
        raise MemoryError("%s needs %s (shape %s, %s), which could not be allocated"
                          % (what, _size(need), shape, np.dtype(dtype).name)) from None


def _size(n):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if unit == "bytes" else ("%.1f %s" % (n, unit))
        n /= 1024.0


def _raise_go_error(exc):
    """Turn the text of a Go error into the Python exception it names."""
    msg = str(exc)
    cls, sep, rest = msg.partition(": ")
    if sep and cls in _EXCEPTIONS:
        if _EXCEPTIONS[cls] is KeyboardInterrupt:
            raise KeyboardInterrupt(rest) from None
        raise _EXCEPTIONS[cls](rest) from None
    raise RuntimeError(msg) from None


def _call(function, *args):
    try:
        return function(*args)
    except RuntimeError as exc:
        _raise_go_error(exc)


def _progress_bar(total, desc):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, desc=desc, unit="pair", leave=False, dynamic_ncols=True)


def _run(function, args, ctl, verbose, desc):
    """Run ``function(*args)`` (a Go call) in a worker thread; poll ``ctl`` for progress.

    A KeyboardInterrupt in the calling thread sets the cancel flag, waits for the
    Go workers to stop, and is raised again.
    """
    result = {}
    # An Event, not Thread.is_alive(): after a join() interrupted by Ctrl-C,
    # CPython (3.11) may report a running thread as stopped, and the arrays Go is
    # reading must outlive the call.
    finished = threading.Event()

    def target():
        try:
            result["value"] = function(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=target, name="graphgram-go-call", daemon=True)
    show = get_config()["progress"] if verbose is None else bool(verbose)
    bar = None
    t0 = _clock()
    worker.start()
    try:
        while not finished.wait(_POLL):
            running = _clock() - t0
            if show and bar is None and running >= _PROGRESS_DELAY and ctl[2] > 0:
                bar = _progress_bar(int(ctl[2]), desc)
            if bar is not None:
                if bar.total != int(ctl[2]):
                    bar.total = int(ctl[2])
                bar.update(int(ctl[1]) - bar.n)
    except KeyboardInterrupt:
        ctl[0] = 1
        while not finished.is_set():
            try:
                finished.wait()
            except KeyboardInterrupt:  # a second Ctrl-C while the workers stop
                pass
        raise
    finally:
        if bar is not None:
            bar.update(int(ctl[1]) - bar.n)
            bar.close()
    if "error" in result:
        exc = result["error"]
        if isinstance(exc, RuntimeError):
            _raise_go_error(exc)
        raise exc
    return result["value"]


def compute(kernel, mode, params, px, py=None, shape=None, n_params=0, iterations=False, verbose=None):
    """Run one Go kernel computation and return its results.

    Parameters
    ----------
    kernel : {"marginalized", "shortest_path", "random_walk", "explicit"}
    mode : {"gram", "diag", "nodal", "gram_grad", "diag_grad", "features"}
        "gram_grad" is K(X, X) or K(X, Y) and its gradient, "diag_grad" the
        diagonal K(x, x) and its gradient (marginalized kernel).
        "features" (explicit-feature kernels) returns the feature map of X in
        CSR form packed into one int64 array of ``shape`` words, a bound Python
        computes (docs/abi.md): nnz, number of columns, then indptr, indices
        and counts.
    params : dict
        The kernel's parameters, sent as JSON (docs/abi.md).
    px, py : Packed
        X and Y; ``py=None`` means the symmetric K(X, X).
    shape : tuple of int
        Shape of the result.
    n_params : int
        Number of hyperparameters (``gram_grad`` and ``diag_grad``): the gradient has shape ``shape + (n_params,)``.
    iterations : bool
        Also return the solver's iteration count per entry (marginalized kernel).
    verbose : bool or None
        Progress bar for long calls; None follows ``graphgram.get_config()["progress"]``.

    Returns
    -------
    out : ndarray
    extras : dict
        ``"warning"`` (str, "" if none), ``"iterations"`` and ``"gradient"`` when asked.
    """
    if mode == "features":
        out = allocate(shape, np.int64, "the feature matrix")
    else:
        out = allocate(shape, what="the %s matrix" % ("nodal similarity" if mode == "nodal" else "kernel"))
    iters = allocate(shape, np.int32, "the iteration counts") if iterations else None
    grad = allocate(tuple(shape) + (n_params,), what="the gradient") if mode in ("gram_grad", "diag_grad") else None
    ctl = np.zeros(3, dtype=np.int64)
    dx = px._descriptor()
    dy = None if py is None else py._descriptor()

    def buf(a):
        return (0, 0) if a is None else (a.ctypes.data, int(a.size))

    args = (kernel, mode, json.dumps(params),
            *buf(dx), *buf(dy), *buf(out), *buf(iters), *buf(grad), *buf(ctl))
    desc = "graphgram %s %s" % (kernel.replace("_", " "), mode.replace("_", "+"))
    # px, py, out, ... stay referenced by this frame until the call returns.
    warning = _run(_pybind.Compute, args, ctl, verbose, desc)
    extras = {"warning": warning}
    if iters is not None:
        extras["iterations"] = iters
    if grad is not None:
        extras["gradient"] = grad
    return out, extras
