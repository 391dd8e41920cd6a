"""The one boundary between Python and the Go core (``graphgram._ggcore``).

Everything that crosses to Go goes through :func:`compute`: graphs packed at
call time by :mod:`graphgram._packing` (contiguous arrays described by a
descriptor of addresses *and* lengths that lives only for the call,
docs/abi.md) are handed to the single Go entry point ``Compute`` together with
the kernel's parameters as JSON (the device parameters from
:func:`device_params`) and the result buffers, allocated after
:mod:`graphgram._memory` has checked they fit. Nothing here is stored on a
user-visible object, so graphs, kernels and fitted estimators stay plain
picklable data.

The Go call runs in a worker thread (gopy releases the GIL) while the calling
thread polls a shared control block: it draws a progress bar for long
computations and, on Ctrl-C, sets the block's cancel flag so that the Go
workers stop between pairs and inside solves; the call then raises
``KeyboardInterrupt`` and the next one works normally. Go errors arrive as text
starting with the Python exception they become.
"""

import functools
import json
import os
import threading
import time

import numpy as np

from ._config import get_config
from ._memory import allocate
from .graph import as_graph_list  # noqa: F401 - re-exported for old imports

try:
    from ._ggcore import pybind as _pybind
except ImportError as exc:  # pragma: no cover - only without a built extension
    raise ImportError(
        "graphgram's compiled Go core (graphgram._ggcore) is missing or does not load; "
        "reinstall graphgram (a wheel, or `pip install .` from its source tree with a Go toolchain). "
        "Cause: %s" % exc
    ) from exc

__all__ = ["compute", "device_params", "devices", "go_version", "kernel_info", "vector_kernels"]

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

    The Go core owns the rules (``DeviceParams``); each value goes as its repr,
    so that a message shows it as the user wrote it. Raises ValueError for
    anything else.
    """
    def shown(value):
        return repr(str(value)) if isinstance(value, str) else repr(value)

    params = json.loads(_call(_pybind.DeviceParams, shown(device), shown(precision)))
    params.update(cuda_library=cuda_library(), validate_gpu=get_config()["validate_gpu"])
    return params


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
        ``validate_gpu`` in :func:`graphgram.set_config`); ``auto``, a dict
        saying per kernel kind and precision (``"marginalized float64"``,
        ``"shortest_path float32"``, ``"explicit float64"``, ...) what
        ``device="auto"`` does on this device with all cores and why (from
        the rates measured on earlier GPUs until the process has timed its
        sample on this one); and ``last_auto``, the latest ``device="auto"``
        decision of the process on this device with its predicted times
        ("" before any); ``kept_bytes``, the memory kept for the device's
        next calls (see :func:`release_gpu_memory`).

    Examples
    --------
    >>> import graphgram
    >>> info = graphgram.devices()
    >>> sorted(info)
    ['built', 'devices', 'library', 'reason', 'usable']
    """
    return json.loads(_call(_pybind.Devices, cuda_library()))


def release_gpu_memory():
    """Free the memory graphgram keeps for its next GPU calls.

    A call's device memory, up to an eighth of the device's, and one pinned
    host staging buffer a device are kept for the process's next calls (a GP
    fit makes hundreds of calls of one size); ``devices()`` reports them as
    ``kept_bytes``. Call this before handing the GPU to other work (PyTorch,
    another process); the next graphgram call allocates again.

    Returns
    -------
    int
        The bytes freed, 0 without a usable GPU.
    """
    return int(_call(_pybind.ReleaseGPUMemory, cuda_library()))


def go_version():
    """Return the version string of the compiled Go core."""
    return _pybind.Version()


def vector_kernels():
    """Return True when the Go core runs its AVX2 kernels (built with Go's simd experiment, CPU with AVX2+FMA)."""
    return bool(_pybind.VectorKernels())


def kernel_info(kind, **options):
    """Return what the Go core's rules say of the explicit-feature kind ``kind``
    ("wl", "hash", "nh", "graphlets", ...; ``KernelInfo``, docs/abi.md), given some
    or all of its own options as Compute takes them (``hash=``..., e.g.
    ``kernel_info("hash", hashes=20)``).

    A dict: ``features`` and ``options`` (the kind's name and the key of its own
    parameters), ``semirings``, ``bounds`` ({parameter: [low, high]}, both
    included), ``feature_scale`` (the factor of its feature rows),
    ``feature_map`` (whether ``features`` is the kernel's feature map) and
    ``no_feature_map`` (why not), ``blocks``, and for "graphlets" with ``k`` the
    ``classes`` of its columns ({"edges": [[i, j], ...], "connected": bool}).
    The kernels read every bound and scale here instead of restating the core's.
    Each call returns a new dict (the answers are cached as text).
    """
    return json.loads(_kernel_info_text(kind, json.dumps(options, sort_keys=True) if options else ""))


@functools.lru_cache(maxsize=512)
def _kernel_info_text(kind, options):
    return _call(_pybind.KernelInfo, kind, options)


def wl_max_iterations():
    """Return the Go core's bound on the Weisfeiler–Lehman kernels' ``n_iter``
    (deprecated: ``kernel_info("wl")["bounds"]["n_iter"][1]``)."""
    return kernel_info("wl")["bounds"]["n_iter"][1]


def propagation_max_rounds():
    """Return the Go core's bound on the propagation kernels' ``t_max``
    (deprecated: ``kernel_info("propagation")["bounds"]["t_max"][1]``)."""
    return kernel_info("propagation")["bounds"]["t_max"][1]


def hash_feature_scale(n_hashes):
    """Return the factor of the hash graph kernel's feature rows (1/√T)
    (deprecated: ``kernel_info("hash", hashes=T)["feature_scale"]``)."""
    return kernel_info("hash", hashes=int(n_hashes))["feature_scale"]


def pyramid_feature_scale(levels):
    """Return the factor of the pyramid match kernel's feature rows (√2^−(L−1))
    (deprecated: ``kernel_info("pyramid", L=L)["feature_scale"]``)."""
    return kernel_info("pyramid", L=int(levels))["feature_scale"]


def graphlet_classes(k):
    """Return the graphlets of ``k`` nodes in the graphlet kernel's column order
    (deprecated: ``kernel_info("graphlets", k=k)["classes"]``)."""
    return kernel_info("graphlets", k=int(k))["classes"]


def self_test_panic():
    """Make the Go core panic inside its guard; the panic must arrive as RuntimeError."""
    _call(_pybind.SelfTestPanic)


# --------------------------------------------------------------------------
# Base kernels
# --------------------------------------------------------------------------


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


# The modes whose result is int64: what the buffer holds (for memory messages).
_INT_MODES = {"features": "the feature matrix", "wl_labels": "the Weisfeiler-Lehman labels",
              "core_numbers": "the core numbers"}


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
        and counts; ``extras["row_factors"]`` holds the factor of each row.
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
    if mode in _INT_MODES:
        out = allocate(shape, np.int64, _INT_MODES[mode])
    else:
        out = allocate(shape, what="the %s matrix" % ("nodal similarity" if mode == "nodal" else "kernel"))
    iters = allocate(shape, np.int32, "the iteration counts") if iterations else None
    grad = allocate(tuple(shape) + (n_params,), what="the gradient") if mode in ("gram_grad", "diag_grad") else None
    if mode == "features":
        # The grad buffer of mode "features": each feature row's factor (docs/abi.md).
        grad = allocate((px.n_graphs,), what="the feature rows' factors")
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
    if mode == "features":
        extras["row_factors"] = grad
    elif grad is not None:
        extras["gradient"] = grad
    return out, extras
