"""Access to the compiled Go core (the gopy extension ``graphgram._ggcore``)."""

import re

try:
    from ._ggcore import pybind as _pybind
except ImportError as exc:  # pragma: no cover - only without a built extension
    raise ImportError(
        "graphgram's compiled Go core (graphgram._ggcore) is missing or does not load; "
        "reinstall graphgram with `pip install .` from its source tree (this needs a Go toolchain). "
        "Cause: %s" % exc
    ) from exc

_GRAPH_ERROR = re.compile(r"^graph (\d+): (.*)$", re.S)


def call(function, *args, names=("X", "Y")):
    """Call ``pybind.<function>(*args)``, turning Go errors into Python exceptions.

    Errors about the input (the Go core prefixes them with ``graph N:`` when they
    concern one graph) become ``ValueError`` naming the graph as ``X[N]``; a Go
    panic, which the core reports as an internal error, stays ``RuntimeError``.
    """
    try:
        return getattr(_pybind, function)(*args)
    except RuntimeError as exc:
        msg = str(exc)
        if "internal error" in msg:
            raise RuntimeError(msg) from None
        m = _GRAPH_ERROR.match(msg)
        if m:
            raise ValueError("%s[%s]: %s" % (names[0], m.group(1), m.group(2))) from None
        raise ValueError(msg) from None


def go_version():
    """Return the version string of the compiled Go core."""
    return _pybind.Version()


def vector_kernels():
    """Return True when the Go core runs its AVX2 kernels (built with Go's simd experiment, CPU with AVX2+FMA)."""
    return bool(_pybind.VectorKernels())
