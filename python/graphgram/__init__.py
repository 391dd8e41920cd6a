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
"""

from . import datasets, microkernels
from .graph import Graph
from .marginalized import MarginalizedGraphKernel

__version__ = "0.1.0"

__all__ = ["Graph", "MarginalizedGraphKernel", "datasets", "microkernels", "__version__"]
