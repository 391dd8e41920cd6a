"""Process-wide settings of graphgram (as scikit-learn's ``set_config``)."""

import contextlib
import threading

__all__ = ["get_config", "set_config", "config_context"]

_DEFAULTS = {"progress": True}
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
        bar for computations that take more than about two seconds.
    """
    return dict(_settings())


def set_config(progress=None):
    """Change settings for the current thread.

    Parameters
    ----------
    progress : bool, optional
        Show progress bars (text in a terminal, a widget in Jupyter) for long
        computations of kernels whose ``verbose`` parameter is None.
    """
    if progress is not None:
        _settings()["progress"] = bool(progress)


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
