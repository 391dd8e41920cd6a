"""Graph kernels: Gram matrices of lists of graphs, computed by the Go core.

Each kernel is a scikit-learn transformer and a scikit-learn Gaussian-process
kernel; see :class:`~graphgram.kernels._base.GraphKernelBase` for the calling
convention they share.
"""

from .explicit import EdgeHistogramKernel, HashGraphKernel, VertexHistogramKernel, WeisfeilerLehmanKernel
from .frameworks import CoreFramework, WLFramework
from .graphhopper import GraphHopperKernel
from .graphlet import GraphletSamplingKernel
from .neighborhood_hash import NeighborhoodHashKernel
from .nspdk import NSPDKKernel
from .oddsth import OddSthKernel
from .pyramid_match import PyramidMatchKernel
from .marginalized import MarginalizedGraphKernel
from .mixture import MixtureKernel
from .presets import molecular_gp_kernel, molecular_kernel
from .propagation import PropagationAttrKernel, PropagationKernel
from .random_walk import RandomWalkKernel
from .shortest_path import ShortestPathKernel
from .wasserstein_wl import WassersteinWLKernel

__all__ = ["MarginalizedGraphKernel", "ShortestPathKernel", "RandomWalkKernel", "WeisfeilerLehmanKernel",
           "VertexHistogramKernel", "EdgeHistogramKernel", "HashGraphKernel", "NeighborhoodHashKernel", "NSPDKKernel",
           "GraphletSamplingKernel", "PropagationKernel", "PropagationAttrKernel", "WLFramework", "CoreFramework",
           "molecular_kernel", "molecular_gp_kernel", "WassersteinWLKernel", "GraphHopperKernel", "PyramidMatchKernel", "OddSthKernel",
           "MixtureKernel"]
