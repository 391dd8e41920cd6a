"""The legacy wrapper: a graphgram kernel as a scikit-learn Gaussian-process kernel."""

import numpy as np
from sklearn.base import clone
from sklearn.gaussian_process.kernels import Hyperparameter, Kernel

from ..graph import as_graph_list

__all__ = ["GraphKernel"]


class GraphKernel(Kernel):
    """A graphgram kernel usable in ``GaussianProcessRegressor`` and ``GaussianProcessClassifier``.

    graphgram's kernels are scikit-learn Gaussian-process kernels themselves
    (``ConstantKernel() * MarginalizedGraphKernel(...) + WhiteKernel()`` works);
    this wrapper is kept for code written before they were.

    It wraps a graphgram kernel (such as :class:`~graphgram.MarginalizedGraphKernel`)
    and exposes its hyperparameters to scikit-learn's optimizer in log space, with
    names prefixed ``kernel__`` (``kernel__q``,
    ``kernel__node_kernel__label__h``, ...). Gradients are analytic when the
    wrapped kernel computes them (the marginalized kernel does, by one adjoint
    solve per pair). It composes with scikit-learn's kernel algebra::

        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
        gp = GaussianProcessRegressor(ConstantKernel() * GraphKernel(mgk) + WhiteKernel())
        gp.fit(graphs, y)        # a plain list of graphgram.Graph

    Parameters
    ----------
    kernel : graphgram kernel
        The graph kernel; it is cloned when hyperparameters change, never modified.
    """

    def __init__(self, kernel):
        self.kernel = kernel

    @property
    def requires_vector_input(self):
        """False: the inputs are graphs, not feature vectors."""
        return False

    def is_stationary(self):
        """False: graph kernels are not functions of a difference of inputs."""
        return False

    @property
    def hyperparameters(self):
        """list of Hyperparameter of the wrapped kernel, named ``kernel__<name>``."""
        return [Hyperparameter("kernel__" + h.name, h.value_type, h.bounds, h.n_elements, h.fixed)
                for h in self.kernel.hyperparameters]

    @property
    def theta(self):
        """ndarray: log of the wrapped kernel's non-fixed hyperparameters."""
        return np.asarray(self.kernel.theta, dtype=np.float64)

    @theta.setter
    def theta(self, theta):
        k = clone(self.kernel)
        k.theta = theta
        self.kernel = k

    @property
    def bounds(self):
        """ndarray of shape (n_dims, 2): log of the bounds of the non-fixed hyperparameters."""
        return np.asarray(self.kernel.bounds, dtype=np.float64).reshape(-1, 2)

    def get_params(self, deep=True):
        params = Kernel.get_params(self, deep=False)  # the parameters of __init__, subclasses' too
        if deep and hasattr(self.kernel, "get_params"):
            params.update(("kernel__" + k, v) for k, v in self.kernel.get_params(deep=True).items())
        return params

    def __call__(self, X, Y=None, eval_gradient=False):
        """Return K(X, Y), and with ``eval_gradient`` its gradient in log space.

        Parameters
        ----------
        X : sequence of Graph (a list or scikit-learn's 1-D object array)
        Y : sequence of Graph, optional
        eval_gradient : bool, default=False
            Only when Y is None.

        Returns
        -------
        K : ndarray of shape (len(X), len(Y))
        K_gradient : ndarray of shape (len(X), len(X), n_dims), with ``eval_gradient``
        """
        X = as_graph_list(X, "X")
        if eval_gradient:
            if Y is not None:
                raise ValueError("Gradient can only be evaluated when Y is None.")
            return self.kernel(X, eval_gradient=True)
        return self.kernel(X, None if Y is None else as_graph_list(Y, "Y"))

    def diag(self, X):
        """Return K(x, x) for each graph of X."""
        return self.kernel.diag(as_graph_list(X, "X"))

    def __eq__(self, other):
        return type(self) is type(other) and repr(self.kernel.get_params()) == repr(other.kernel.get_params())

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return "GraphKernel(%r)" % (self.kernel,)
