"""graphgram: graph kernels for scikit-learn, computed by a Go core.

Kernels
-------
MarginalizedGraphKernel
    Random-walk based similarity of labeled, weighted graphs (GraphDot's convention).

Graphs and data
---------------
Graph
    An undirected graph with named node and edge attributes.
datasets
    ``load_tu`` for the TU benchmark format and ``load_mutag`` for the bundled MUTAG set.
microkernels
    Base kernels on node and edge attributes (``KroneckerDelta``, ``SquareExponential``, ...).
molecules
    Graphs from SMILES, RDKit molecules and 3D coordinates; ``molecular_kernel`` preset.

scikit-learn
------------
Every kernel is a transformer (``fit``/``transform``) usable in a ``Pipeline``;
``gaussian_process.GraphKernel`` makes a kernel a Gaussian-process kernel.
"""

from . import datasets, gaussian_process, microkernels, molecules
from .graph import Graph
from .marginalized import MarginalizedGraphKernel
from .molecules import molecular_kernel
from .random_walk import RandomWalkKernel
from .shortest_path import ShortestPathKernel
from ._version import __version__

__all__ = ["Graph", "MarginalizedGraphKernel", "ShortestPathKernel", "RandomWalkKernel", "molecular_kernel", "datasets", "gaussian_process",
           "microkernels", "molecules", "__version__"]
