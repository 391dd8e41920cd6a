"""Ready-made kernels for common kinds of graphs."""

from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel

from ..microkernels import KroneckerDelta, SquareExponential, TensorProduct
from .marginalized import MarginalizedGraphKernel

__all__ = ["molecular_gp_kernel", "molecular_kernel"]

#: Atom attributes compared by the preset (all made by :func:`graphgram.molecules.from_rdkit`).
ATOM_FEATURES = ("element", "aromatic", "charge", "hybridization", "hcount", "in_ring")
#: Bond attributes compared by the preset with ``bonds="order"``.
BOND_FEATURES = ("order", "aromatic", "conjugated", "in_ring")


def molecular_kernel(bonds="order", q=0.1, h=0.5, normalize=0.5, features="rich", h_bounds=(0.05, 0.95),
                     **kwargs):
    """A ready marginalized graph kernel for molecules, with defaults chosen by cross-validation.

    With ``bonds="order"`` (graphs from :func:`~graphgram.molecules.from_smiles` or
    :func:`~graphgram.molecules.from_rdkit`) atoms are compared by element,
    aromaticity, formal charge, hybridization, hydrogen count and ring
    membership, and bonds by order, aromaticity, conjugation and ring membership,
    each with ``KroneckerDelta(h)`` (a product over the attributes: two atoms that
    differ in k attributes keep h^k of the similarity of two equal ones). With
    ``bonds="length"`` (graphs from 3D coordinates, which carry elements and
    lengths only) atoms are compared by element and bonds by length with
    ``SquareExponential(0.5)`` (in the unit of the coordinates, Å for ASE).

    The defaults — h = 0.5, q = 0.1, size exponent 0.5 — had the lowest
    cross-validated error of KernelRidge among the candidates tried on ESOL,
    FreeSolv and QM7 (``benchmarks/bench_molecules.py``; results and sizes in
    ``benchmarks/log/molecular_regression.md``), and beat a Tanimoto kernel on Morgan fingerprints
    on all three. They are starting values: in a Gaussian process scikit-learn's
    optimizer tunes q and every h within its bounds, [0.05, 0.95] by default,
    which keeps an attribute from being ignored (h → 1) or made a hard filter
    (h → 0).

    Parameters
    ----------
    bonds : {"order", "length"}, default="order"
        Which bond attribute the edge kernel compares.
    q : float, default=0.1
        Stopping probability of the random walks.
    h : float, default=0.5
        Similarity of two different values of an attribute.
    normalize : bool or float, default=0.5
        Size normalization (see :class:`~graphgram.MarginalizedGraphKernel`):
        ``True`` is the cosine, which ignores size (for intensive properties), a
        number s in [0, 1] divides by (K(x, x) K(y, y))^(s/2), ``False`` keeps
        the raw kernel, which grows with size (extensive properties).
    features : {"rich", "basic"}, default="rich"
        ``"basic"``: element and bond order only (the preset of graphgram ≤ 0.x,
        with h on both).
    h_bounds : pair of float or "fixed", default=(0.05, 0.95)
        Bounds of every h for hyperparameter optimization.
    **kwargs
        Passed on to :class:`~graphgram.MarginalizedGraphKernel` (``n_jobs``, ``q_bounds``, ...).

    Returns
    -------
    MarginalizedGraphKernel
    """
    if features not in ("rich", "basic"):
        raise ValueError("features must be 'rich' or 'basic', got %r" % (features,))

    def delta():
        return KroneckerDelta(h, h_bounds=h_bounds)

    atoms = ATOM_FEATURES if features == "rich" and bonds == "order" else ("element",)
    node = TensorProduct(**{a: delta() for a in atoms})
    if bonds == "order":
        edge = TensorProduct(**{b: delta() for b in (BOND_FEATURES if features == "rich" else ("order",))})
    elif bonds == "length":
        edge = TensorProduct(length=SquareExponential(0.5))
    else:
        raise ValueError("bonds must be 'order' or 'length', got %r" % (bonds,))
    return MarginalizedGraphKernel(node, edge, q=q, normalize=normalize, **kwargs)


def molecular_gp_kernel(q=0.5, h=0.9, signal=30.0, noise=0.05, **kwargs):
    """The covariance of a Gaussian process on molecules, started where its fits end up.

    Returns ``ConstantKernel(signal) * molecular_kernel(q=q, h=h, **kwargs) +
    WhiteKernel(noise)``, for scikit-learn's ``GaussianProcessRegressor`` with
    ``normalize_y=True`` (signal and noise are in units of the targets'
    variance). The kernel is :func:`molecular_kernel`; only the starting point
    of the hyperparameters differs. :func:`molecular_kernel`'s q = 0.1 and
    h = 0.5 were chosen for kernel ridge regression, and scikit-learn's
    ``ConstantKernel()`` and ``WhiteKernel()`` start at 1; exact Gaussian
    processes fitted on ESOL, FreeSolv and drug-size molecules (four
    properties) ended at q = 0.2–0.7, most h at 0.65–0.95, a signal variance
    of 5–420 and a noise variance of 0.016–0.3 (QM7's small molecules at
    q = 0.014), hundreds of nats of likelihood above that start. This
    start is round values near the optima of six exact fits of drug-size
    molecules (logP, MR, QED). From it
    :class:`~graphgram.gaussian_process.FisherScoring` needed 69
    evaluations against 97 on six exact fits of 500 molecules that did not
    set it (ESOL, FreeSolv, QM7, drug-size TPSA and QED; fewer on five, not
    on QM7), and 13–17 against 27–38 on low-rank fits of 2,000 drug-size
    molecules (logP), with test errors within 0.2 % or lower
    (docs/gaussian_processes.md, "Fitting in minutes").
    The same start for
    :class:`~graphgram.gaussian_process.LowRankGaussianProcessRegressor`:
    ``LowRankGraphKernel(molecular_kernel(q=0.5, h=0.9), ...)`` with
    ``signal=30.0, noise=0.05``.

    Parameters
    ----------
    q : float, default=0.5
        Stopping probability of the random walks (the start of its fit).
    h : float, default=0.9
        Similarity of two different values of an attribute (the start of every h).
    signal : float, default=30.0
        The starting signal variance (``ConstantKernel``; bounds 1e-5 to 1e5).
    noise : float, default=0.05
        The starting noise variance (``WhiteKernel``; bounds 1e-5 to 1e5).
    **kwargs
        Passed on to :func:`molecular_kernel` (``bonds``, ``features``, ``n_jobs``, ...).

    Returns
    -------
    sklearn.gaussian_process.kernels.Sum

    Examples
    --------
    >>> from sklearn.gaussian_process import GaussianProcessRegressor
    >>> from graphgram import molecular_gp_kernel
    >>> from graphgram.gaussian_process import FisherScoring
    >>> gp = GaussianProcessRegressor(molecular_gp_kernel(), normalize_y=True,
    ...                               optimizer=FisherScoring(verbose=False))
    """
    return ConstantKernel(signal) * molecular_kernel(q=q, h=h, **kwargs) + WhiteKernel(noise)
