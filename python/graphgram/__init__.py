"""graphgram: graph kernels for scikit-learn, computed by a Go core.

The package mirrors the domain:

Graphs and their loaders
    :class:`Graph` (``graphgram.graph``): an undirected graph with named node and
    edge attributes; ``graphgram.datasets`` (TU benchmark format, the bundled
    MUTAG set) and ``graphgram.molecules`` (SMILES, RDKit, 3D coordinates).
Base kernels
    ``graphgram.microkernels``: kernels on node and edge attributes
    (``KroneckerDelta``, ``SquareExponential``, ...), where their
    hyperparameters are declared.
Graph kernels
    ``graphgram.kernels``: :class:`MarginalizedGraphKernel`,
    :class:`ShortestPathKernel`, :class:`RandomWalkKernel`, the explicit-feature
    :class:`WeisfeilerLehmanKernel`, :class:`VertexHistogramKernel` and
    :class:`EdgeHistogramKernel`, :class:`HashGraphKernel` (continuous attributes),
    :class:`NeighborhoodHashKernel`, :class:`NSPDKKernel`, :class:`GraphletSamplingKernel`,
    :class:`PyramidMatchKernel`, :class:`OddSthKernel`,
    :class:`PropagationKernel` and :class:`PropagationAttrKernel`,
    :class:`WassersteinWLKernel`, :class:`GraphHopperKernel`, the frameworks
    :class:`WLFramework` and :class:`CoreFramework` over a base kernel,
    and presets such as :func:`molecular_kernel` (and :func:`molecular_gp_kernel`, its
    Gaussian-process covariance). Each is a scikit-learn transformer (``fit`` /
    ``transform``, usable in a ``Pipeline``) and a Gaussian-process kernel
    (``ConstantKernel() * kernel + WhiteKernel()``).
Samples made of several graphs
    :class:`Mixture` (``graphgram.mixture``): weighted graphs such as a solvent
    blend, and reactions as one mixture per role; :class:`MixtureKernel` sums a
    graph kernel over their graphs (docs/mixtures.md).
The boundary to the Go core
    ``graphgram._backend`` (private): calls, device parameters, progress, Ctrl-C,
    errors; ``_packing`` lays out a call's graphs, ``_memory`` checks results fit.

Settings: :func:`set_config`, :func:`get_config`, :func:`config_context`.
GPUs: :func:`devices` says which graphgram can use, or why none; :func:`release_gpu_memory`
frees what it keeps for its next GPU calls.
"""

from . import datasets, gaussian_process, microkernels, molecules
from .gaussian_process import LowRankGaussianProcessRegressor, LowRankGraphKernel
from ._backend import devices, release_gpu_memory
from ._config import config_context, get_config, set_config
from .graph import Graph
from .library import GraphLibrary
from .mixture import Mixture
from ._version import __version__
from . import kernels
from .kernels import *  # noqa: F401,F403 - every kernel, as graphgram.kernels.__all__ lists them

__all__ = (["Graph", "GraphLibrary", "Mixture", "LowRankGraphKernel", "LowRankGaussianProcessRegressor",
            "datasets", "gaussian_process", "microkernels", "molecules", "get_config", "set_config",
            "config_context", "devices", "release_gpu_memory", "__version__"]
           + list(kernels.__all__))
