"""A report per iteration of BoTorch's fit, as ``graphgram.gaussian_process.LBFGS(verbose=True)`` gives scikit-learn's."""

import sys
import time

__all__ = ["FitProgress"]


class FitProgress:
    """A callback for ``botorch.fit.fit_gpytorch_mll`` that prints one line per L-BFGS-B iteration.

    BoTorch's fit says nothing while it runs; with graph kernels an iteration
    can take minutes. Pass an instance through ``optimizer_kwargs``::

        fit_gpytorch_mll(mll, optimizer_kwargs={"callback": FitProgress()})

    prints ``iteration 7: loss 41.23, 48.3 s`` (the loss is BoTorch's: the
    negative log marginal likelihood per training point). Ctrl-C stops the fit
    with ``KeyboardInterrupt`` within about a second: the graph kernel's calls
    poll for it. The graph kernel's own ``verbose=True`` adds a progress bar of
    each long call.

    Parameters
    ----------
    file : file-like, default=None
        Where to print (``sys.stderr`` when None).

    Attributes
    ----------
    history_ : list of (int, float, float)
        (iteration, loss, seconds since the first report) per iteration.
    """

    def __init__(self, file=None):
        self.file = file
        self.history_ = []
        self._start = None

    def __call__(self, parameters, result):
        now = time.perf_counter()
        if self._start is None:
            self._start = now
        seconds = result.runtime if result.runtime is not None else now - self._start
        self.history_.append((int(result.step), float(result.fval), float(seconds)))
        print("iteration %d: loss %.6g, %.1f s" % (result.step, result.fval, seconds),
              file=self.file if self.file is not None else sys.stderr, flush=True)
