"""Process-wide settings of graphgram (as scikit-learn's ``set_config``)."""

import contextlib
import threading

__all__ = ["get_config", "set_config", "config_context"]

_DEFAULTS = {"progress": True, "validate_gpu": True}
_local = threading.local()


def _settings():
    if not hasattr(_local, "config"):
        _local.config = dict(_DEFAULTS)
    return _local.config


def get_config():
    """Return the current settings as a dict.

    Returns
    -------
    dict
        ``"progress"``: whether kernels whose ``verbose`` is None show a progress
        bar for computations that take more than about two seconds;
        ``"validate_gpu"``: whether a GPU is checked against the CPU before its
        first use in the process (see :func:`set_config`).
    """
    return dict(_settings())


def set_config(progress=None, validate_gpu=None):
    """Change settings for the current thread.

    Parameters
    ----------
    progress : bool, optional
        Show progress bars (text in a terminal, a widget in Jupyter) for long
        computations of kernels whose ``verbose`` parameter is None.
    validate_gpu : bool, optional
        Before a process first computes on a GPU, graphgram computes a small
        fixed set of Gram matrices (marginalized kernel with table and
        evaluated base kernels, shortest-path kernel; float64 and float32) on
        the device and on the CPU and compares them within the accuracy
        contract. On a disagreement or a device error, ``device="auto"``
        computes on the CPU for the rest of the process (one
        ``RuntimeWarning`` says what disagreed) and ``device="cuda"`` raises
        it; :func:`graphgram.devices` shows the outcome. True (the default)
        runs this check; False uses the GPU without it.
    """
    if progress is not None:
        _settings()["progress"] = bool(progress)
    if validate_gpu is not None:
        _settings()["validate_gpu"] = bool(validate_gpu)


@contextlib.contextmanager
def config_context(**changes):
    """Change settings inside a ``with`` block, restoring them afterwards.

    Examples
    --------
    >>> import graphgram
    >>> with graphgram.config_context(progress=False):
    ...     pass
    """
    old = get_config()
    set_config(**changes)
    try:
        yield
    finally:
        set_config(**old)
