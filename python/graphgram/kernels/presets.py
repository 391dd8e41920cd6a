"""Ready-made kernels for common kinds of graphs."""

from ..microkernels import KroneckerDelta, SquareExponential, TensorProduct
from .marginalized import MarginalizedGraphKernel

__all__ = ["molecular_kernel"]


def molecular_kernel(bonds="order", q=0.05, normalize=True, **kwargs):
    """A ready marginalized graph kernel for molecules.

    Atoms are compared by element with ``KroneckerDelta(0.2)`` (two different
    elements keep a fifth of the similarity of two equal ones); bonds either by
    order with ``KroneckerDelta(0.5)`` — for graphs from SMILES or RDKit — or by
    length with ``SquareExponential(0.5)`` (length scale 0.5, in the unit of the
    coordinates, Å for ASE) — for graphs from 3D coordinates. The stopping
    probability q = 0.05 weighs walks of about 20 steps, and the kernel is
    cosine-normalized, as suits Gaussian-process regression of molecular
    properties. All of these are starting values: scikit-learn's optimizer tunes
    q and the base-kernel hyperparameters within their bounds when the kernel is
    used in a Gaussian process.

    Parameters
    ----------
    bonds : {"order", "length"}, default="order"
        Which bond attribute the edge kernel compares.
    q : float, default=0.05
    normalize : bool, default=True
    **kwargs
        Passed on to :class:`~graphgram.MarginalizedGraphKernel` (``n_jobs``, ``q_bounds``, ...).

    Returns
    -------
    MarginalizedGraphKernel
    """
    if bonds == "order":
        edge = TensorProduct(order=KroneckerDelta(0.5))
    elif bonds == "length":
        edge = TensorProduct(length=SquareExponential(0.5))
    else:
        raise ValueError("bonds must be 'order' or 'length', got %r" % (bonds,))
    return MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.2)), edge, q=q,
                                   normalize=normalize, **kwargs)
