"""The mixture kernel in GPyTorch: samples as rows of pool indices and weights.

A row holds, for each role, m pool indices then their m weights (padding: index
0, weight 0); :func:`mixture_inputs` makes the rows and the pool from
:class:`~graphgram.Mixture` samples. The kernel asks a
:class:`~graphgram.gpytorch.GPyTorchGraphKernel` over the pool for the Gram
matrix G of the graphs a call uses, with its autograd through the graph
kernel's analytic gradients, and contracts it with the rows' weights as
:class:`~graphgram.MixtureKernel` does: K = Σ_r W^r_1 G (W^r_2)ᵀ.
"""

import numbers

import gpytorch
import numpy as np
import torch
from sklearn.base import clone

from ..kernels.mixture import MixtureKernel
from ..kernels._normalize import check_normalize, normalize_exponent
from ..mixture import as_sample_list, layout
from ._kernel import GPyTorchGraphKernel

__all__ = ["GPyTorchMixtureKernel", "mixture_inputs"]


def mixture_inputs(samples, pool=None):
    """The pool of graphs and the input rows of :class:`GPyTorchMixtureKernel` for samples.

    Parameters
    ----------
    samples : sequence of samples
        As :class:`~graphgram.MixtureKernel` takes them: :class:`~graphgram.Mixture`,
        :class:`~graphgram.Graph` or tuples of them (``None`` for an empty role),
        the same number of roles in each.
    pool : sequence of Graph or GraphLibrary, optional
        Index into these graphs (found by object or by content); by default the
        distinct graphs of the samples, in order of first appearance. Give the
        training and candidate samples in one call, or the same pool to both.

    Returns
    -------
    pool : list of Graph (or the given pool)
    X : torch.Tensor of float64, shape (len(samples), n_roles * 2 * m)
        Row i, for each role r: in columns r·2m to r·2m + m − 1 the pool indices
        of the role's graphs, in the next m their weights; m is the most graphs
        of a role in one sample, shorter roles padded with index 0 and weight 0
        (an empty role is all padding). A graph listed twice in a mixture is one
        slot with the sum of its weights.
    """
    samples = as_sample_list(samples, "samples")
    graphs, (weights,) = layout(samples, pool=pool)
    m = max(int(np.diff(W.indptr).max(initial=0)) for W in weights)
    n, R = len(samples), len(weights)
    X = np.zeros((n, R, 2, m))
    for r, W in enumerate(weights):
        counts = np.diff(W.indptr)
        slot = np.arange(W.nnz) - np.repeat(W.indptr[:-1], counts)
        row = np.repeat(np.arange(n), counts)
        X[row, r, 0, slot] = W.indices
        X[row, r, 1, slot] = W.data
    return (graphs if pool is None else pool), torch.as_tensor(X.reshape(n, R * 2 * m))


class GPyTorchMixtureKernel(gpytorch.kernels.Kernel):
    r"""A :class:`~graphgram.MixtureKernel` as a GPyTorch kernel, with the graph kernel's
    hyperparameters learnt.

    K(A, B) = Σ_a Σ_b w_a w_b k(a, b) (summed over roles for reactions,
    normalized if the mixture kernel asks) for samples given as rows: for
    each role, m indices into the pool of graphs then their m weights
    (:func:`mixture_inputs` makes them). Each call computes the Gram matrix
    of the graph kernel over the distinct pool graphs its rows use, once,
    through a :class:`~graphgram.gpytorch.GPyTorchGraphKernel` over the pool
    (its cache at one θ, its analytic gradients), and contracts it with the
    rows' weights in torch, so that autograd carries the gradient through
    the contraction and the normalization (to θ, and to the weights too).
    Stock ``SingleTaskGP``, ``ScaleKernel``, ``fit_gpytorch_mll`` and BoTorch's
    batched posteriors over candidate rows work unchanged; the values equal
    :class:`~graphgram.MixtureKernel`'s to rounding.

    Parameters
    ----------
    kernel : MixtureKernel
        Its ``base_kernel`` and ``normalize``; copied.
    graphs : sequence of Graph or GraphLibrary
        The pool the rows index.
    n_roles : int, default=1
        The roles of a sample (3 for reactions given as (reactants, reagents,
        products)): the rows have n_roles · 2m columns.
    learn_hyperparameters : bool or None, default=None
        As :class:`~graphgram.gpytorch.GPyTorchGraphKernel`'s.
    **kwargs
        GPyTorch's kernel arguments (``active_dims``, ``batch_shape``).

    Attributes
    ----------
    graph_module : GPyTorchGraphKernel
        The graph kernel over the pool, whose ``raw_theta`` is learnt.
    hyperparameter_names : tuple of str

    Examples
    --------
    >>> import torch
    >>> from botorch.models import SingleTaskGP
    >>> from gpytorch.kernels import ScaleKernel
    >>> from graphgram import Mixture, MixtureKernel, molecular_kernel, molecules
    >>> from graphgram.gpytorch import GPyTorchMixtureKernel, mixture_inputs
    >>> water, ethanol, acetone = (molecules.from_smiles(s) for s in ("O", "CCO", "CC(C)=O"))
    >>> blends = [Mixture([water, ethanol], [x, 1 - x]) for x in (0.2, 0.5, 0.8)] + [acetone]
    >>> pool, X = mixture_inputs(blends)
    >>> X.shape
    torch.Size([4, 4])
    >>> covar = ScaleKernel(GPyTorchMixtureKernel(MixtureKernel(molecular_kernel(verbose=False)), pool))
    >>> gp = SingleTaskGP(X, torch.tensor([[0.1], [0.4], [0.7], [1.0]], dtype=torch.float64), covar_module=covar)
    """

    has_lengthscale = False

    def __init__(self, kernel, graphs, n_roles=1, learn_hyperparameters=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(kernel, MixtureKernel):
            raise TypeError("kernel must be a graphgram.MixtureKernel (for single graphs use GPyTorchGraphKernel), "
                            "got %s" % type(kernel).__name__)
        if not isinstance(n_roles, numbers.Integral) or isinstance(n_roles, bool) or n_roles < 1:
            raise ValueError("n_roles must be a positive integer, got %r" % (n_roles,))
        kernel = clone(kernel)
        check_normalize(kernel.normalize)
        self.mixture_kernel = kernel
        self.n_roles = int(n_roles)
        self.graph_module = GPyTorchGraphKernel(kernel.base_kernel, graphs, learn_hyperparameters=learn_hyperparameters)

    # --- hyperparameters: the graph kernel's ----------------------------------
    @property
    def graphs(self):
        """The pool of graphs the rows index."""
        return self.graph_module.graphs

    @property
    def hyperparameter_names(self):
        return self.graph_module.hyperparameter_names

    @property
    def theta(self):
        """Tensor: the log of the graph kernel's non-fixed hyperparameters."""
        return self.graph_module.theta

    @theta.setter
    def theta(self, value):
        self.graph_module.theta = value

    def hyperparameter_values(self):
        """Return the hyperparameters' current values (not logs) by scikit-learn name."""
        return self.graph_module.hyperparameter_values()

    def to_sklearn(self):
        """Return the :class:`~graphgram.MixtureKernel` at the current hyperparameters."""
        return MixtureKernel(self.graph_module.to_sklearn(), normalize=self.mixture_kernel.normalize)

    # --- inputs -----------------------------------------------------------------
    def _slots(self, x, name):
        """(pool indices, weights) of the rows x (..., n, R·2m): int64 array and tensor of shape (..., n, R, m)."""
        R, width = self.n_roles, x.shape[-1]
        if width == 0 or width % (2 * R):
            raise ValueError("%s has %d columns: with n_roles=%d a row holds, per role, m pool indices then their m "
                             "weights (2m columns per role; mixture_inputs makes the rows)" % (name, width, R))
        m = width // (2 * R)
        v = x.reshape(x.shape[:-1] + (R, 2, m))
        idx = self.graph_module._indices(v[..., 0, :].unsqueeze(-1), name + " (indices)")
        w = v[..., 1, :]
        if not w.is_floating_point():
            w = w.to(torch.float64)
        wn = w.detach().cpu().numpy()
        bad = ~np.isfinite(wn) | (wn < 0)
        if bad.any():
            at = tuple(int(a) for a in np.argwhere(bad)[0])
            raise ValueError("%s%s (role %d, slot %d) has weight %r: weights are finite and non-negative"
                             % (name, list(at[:-2]), at[-2], at[-1], float(wn[at])))
        empty = ~(wn > 0).any(axis=(-1, -2))
        if empty.any():
            at = [int(a) for a in np.argwhere(empty)[0]]
            raise ValueError("%s%s has no positive weight: a sample holds at least one graph" % (name, at))
        return idx, w

    # --- the kernel -------------------------------------------------------------
    def forward(self, x1, x2, diag=False, last_dim_is_batch=False, **params):
        if last_dim_is_batch:
            raise NotImplementedError("GPyTorchMixtureKernel's columns are one sample: last_dim_is_batch does not "
                                      "apply")
        if x1.device != x2.device:
            raise ValueError("x1 is on %s and x2 on %s: give both on one device" % (x1.device, x2.device))
        dtype = x1.dtype if x1.is_floating_point() else torch.float64
        i1, w1 = self._slots(x1, "x1")
        i2, w2 = self._slots(x2, "x2")
        wn1, wn2 = w1.detach().cpu().numpy(), w2.detach().cpu().numpy()
        positions = np.unique(np.concatenate([i1[wn1 > 0], i2[wn2 > 0]]))
        p = torch.as_tensor(positions, dtype=torch.float64)[:, None]
        G = self.graph_module.forward(p, p)                                      # (u, u), differentiable in θ
        G = G.to_dense() if hasattr(G, "to_dense") and not torch.is_tensor(G) else G
        W1, W2 = (self._weights(i, w, positions) for i, w in ((i1, w1), (i2, w2)))   # (..., R, n, u)
        A = W1 @ G
        s = normalize_exponent(self.mixture_kernel.normalize)
        if diag:
            K = (A * W2).sum(-1).sum(-2)
        else:
            K = (A @ W2.transpose(-1, -2)).sum(-3)
        if s:
            d1 = (A * W1).sum(-1).sum(-2)
            d2 = d1 if x1 is x2 else ((W2 @ G) * W2).sum(-1).sum(-2)
            c1, c2 = _scale(d1, s), _scale(d2, s)
            K = K * c1 * c2 if diag else K * c1[..., :, None] * c2[..., None, :]
        return K.to(dtype=dtype, device=x1.device)

    @staticmethod
    def _weights(indices, w, positions):
        """The dense weights (..., R, n, u) of rows over the used positions (zero-weight
        padding contributes nothing wherever it points)."""
        local = np.clip(np.searchsorted(positions, indices), 0, len(positions) - 1)
        shape = w.shape[:-1] + (len(positions),)
        W = torch.zeros(shape, dtype=torch.float64).scatter_add(-1, torch.as_tensor(local), w.to(torch.float64))
        return W.transpose(-2, -3)

    def __repr__(self):
        return "GPyTorchMixtureKernel(%r, %d graphs, n_roles=%d)" % (self.mixture_kernel, len(self.graphs),
                                                                     self.n_roles)


def _scale(d, s):
    """(d)^(−s/2) where d > 0, else 0: the normalization's factor, differentiable."""
    safe = torch.where(d > 0, d, torch.ones_like(d))
    return torch.where(d > 0, safe ** (-s / 2), torch.zeros_like(d))
