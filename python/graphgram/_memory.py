"""Whether a call's results fit in memory, checked before any work is done."""

import os

import numpy as np

__all__ = ["check_memory", "allocate"]


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
