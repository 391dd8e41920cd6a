"""The one test-side table of graphgram's kernels (issue #53): one row per name in
``graphgram.kernels.__all__``, which the estimator checks, call independence,
properties, pickling and bad-input tests read.

A row (:class:`Row`) names, for each of those tests, the kernel it constructs,
or :class:`Excluded` with the reason it is left out. Every column is required,
so a new kernel joins every test or says why not, and
``test_the_table_covers_every_exported_kernel`` (test_estimator_checks.py)
fails while a name of ``graphgram.kernels.__all__`` has no row. The columns
and the graphs each test gives its kernels:

``example``
    A constructor close to the defaults, for the estimator checks (on
    ``conftest.random_graph`` graphs: node attributes label, charge, vec; edge
    attributes label, length) and the malformed lists of hostile_cases.py,
    which test_dependability.py runs in a subprocess.
``estimator_checks``
    ``True``: ``example`` is checked as a scikit-learn estimator (its
    parameters, clone, repr, none changed by a computation on
    ``conftest.random_graph`` graphs) in test_estimator_checks.py.
``call_independence``
    ``{id: constructor}``, one or more settings each checked entry by entry
    against one call on test_call_independence.py's pool (node attributes
    label, strings, and x; edge attribute b).
``properties``
    A normalized kernel for the Hypothesis properties of test_properties.py
    (symmetric, PSD, unit diagonal, node-permutation invariance, the block of
    the union, pickling, n_jobs) on random graphs with node attributes label
    and x and edge attribute b.
``pickling``
    A kernel pickled with joblib and cloudpickle into a fresh process
    (test_dependability.py), on MUTAG with string labels (node and edge
    attribute label).

Estimators that wrap a graph kernel rather than being one (the Gaussian-process
wrappers) have their rows in :data:`WRAPPERS`, for the estimator checks.
docs/adding_a_kernel.md lists where else a new kernel goes.
"""

import dataclasses
from typing import Callable, Dict, Union

import pytest

import graphgram
from graphgram.gaussian_process import GraphKernel, LowRankGaussianProcessRegressor, LowRankGraphKernel
from graphgram.kernels import (CoreFramework, EdgeHistogramKernel, GraphHopperKernel, GraphletSamplingKernel,
                               HashGraphKernel, MarginalizedGraphKernel, MixtureKernel, NeighborhoodHashKernel,
                               NSPDKKernel, OddSthKernel, PropagationAttrKernel, PropagationKernel, PyramidMatchKernel,
                               RandomWalkKernel, ShortestPathKernel, VertexHistogramKernel, WassersteinWLKernel,
                               WeisfeilerLehmanKernel, WLFramework, molecular_gp_kernel, molecular_kernel)
from graphgram.microkernels import KroneckerDelta, SquareExponential, TensorProduct


@dataclasses.dataclass(frozen=True)
class Excluded:
    """A test that leaves a kernel out, and why (shown as the reason of a skipped case)."""

    reason: str


Constructor = Callable[[], object]


@dataclasses.dataclass(frozen=True)
class Row:
    """What each table-driven test constructs for one exported kernel; no column has a default."""

    example: Constructor
    estimator_checks: Union[bool, Excluded]
    call_independence: Union[Dict[str, Constructor], Excluded]
    properties: Union[Constructor, Excluded]
    pickling: Union[Constructor, Excluded]


def _label():
    return TensorProduct(label=KroneckerDelta(0.5))


def _mgk_pool():
    """The marginalized kernel of the call-independence pool (its labels, its bond types)."""
    return MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(b=KroneckerDelta(0.5)),
                                   q=0.05)


_NOT_YET = Excluded("not among the property tests' kernels before the table (#53); checking it there is a new "
                    "assertion of its own")
_MOLECULES_ONLY = Excluded("reads a molecule's attributes (element, ...), which these graphs lack; its kernel "
                           "class, MarginalizedGraphKernel, has its own row")
_VECTORS = Excluded("needs continuous node attributes, which the string-labelled MUTAG graphs lack")

KERNELS = {
    "MarginalizedGraphKernel": Row(
        example=lambda: MarginalizedGraphKernel(),
        estimator_checks=True,
        call_independence={
            "marginalized": _mgk_pool,
            "marginalized, continuous, normalized": lambda: MarginalizedGraphKernel(
                TensorProduct(label=KroneckerDelta(0.4), x=SquareExponential(1.0)),
                TensorProduct(b=KroneckerDelta(0.5)), q=0.1, normalize=True)},
        properties=lambda: MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.4), x=SquareExponential(1.0)),
                                                   TensorProduct(b=KroneckerDelta(0.5)), q=0.2, normalize=True,
                                                   verbose=False),
        pickling=lambda: MarginalizedGraphKernel(_label(), _label(), q=0.05, normalize=True)),
    "ShortestPathKernel": Row(
        example=lambda: ShortestPathKernel(),
        estimator_checks=True,
        call_independence={
            "shortest path": lambda: ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)),
                                                        normalize=True),
            "shortest path, continuous": lambda: ShortestPathKernel(
                node_kernel=TensorProduct(x=SquareExponential(1.0)))},
        properties=lambda: ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)), normalize=True,
                                              verbose=False),
        pickling=lambda: ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))),
    "RandomWalkKernel": Row(
        example=lambda: RandomWalkKernel(),
        estimator_checks=True,
        call_independence={
            "random walk": lambda: RandomWalkKernel(lamda=0.02, node_kernel=TensorProduct(label=KroneckerDelta(0.0))),
            "random walk, continuous, normalized": lambda: RandomWalkKernel(
                lamda=0.02, node_kernel=TensorProduct(x=SquareExponential(1.0)), normalize=0.5)},
        properties=lambda: RandomWalkKernel(lamda=0.02, node_kernel=TensorProduct(label=KroneckerDelta(0.0)),
                                            normalize=True, verbose=False),
        pickling=lambda: RandomWalkKernel(lamda=0.01, node_kernel=TensorProduct(label=KroneckerDelta(0.0)))),
    "WeisfeilerLehmanKernel": Row(
        example=lambda: WeisfeilerLehmanKernel(),
        estimator_checks=True,
        call_independence={
            "WL subtree": lambda: WeisfeilerLehmanKernel(n_iter=3, node_label="label", normalize=True),
            "WL optimal assignment": lambda: WeisfeilerLehmanKernel(n_iter=2, node_label="label", edge_label="b",
                                                                    base="optimal_assignment")},
        properties=_NOT_YET,
        pickling=lambda: WeisfeilerLehmanKernel()),
    "VertexHistogramKernel": Row(
        example=lambda: VertexHistogramKernel(),
        estimator_checks=True,
        call_independence={"vertex histogram": lambda: VertexHistogramKernel(node_label="label")},
        properties=_NOT_YET,
        pickling=lambda: VertexHistogramKernel()),
    "EdgeHistogramKernel": Row(
        example=lambda: EdgeHistogramKernel(),
        estimator_checks=True,
        call_independence={"edge histogram": lambda: EdgeHistogramKernel(edge_label="b", normalize=True)},
        properties=_NOT_YET,
        pickling=lambda: EdgeHistogramKernel()),
    "HashGraphKernel": Row(
        example=lambda: HashGraphKernel(attributes="vec"),
        estimator_checks=True,
        call_independence={"hash": lambda: HashGraphKernel(attributes="x", node_label="label", n_hashes=5)},
        properties=_NOT_YET,
        pickling=_VECTORS),
    "NeighborhoodHashKernel": Row(
        example=lambda: NeighborhoodHashKernel(),
        estimator_checks=True,
        call_independence={"neighborhood hash": lambda: NeighborhoodHashKernel(R=3, normalize=True)},
        properties=_NOT_YET,
        pickling=lambda: NeighborhoodHashKernel()),
    "NSPDKKernel": Row(
        example=lambda: NSPDKKernel(edge_label="label"),
        estimator_checks=True,
        call_independence={"NSPDK": lambda: NSPDKKernel(r=2, d=3, edge_label="b", normalize=True)},
        properties=_NOT_YET,
        pickling=lambda: NSPDKKernel(edge_label="label")),
    "GraphletSamplingKernel": Row(
        example=lambda: GraphletSamplingKernel(k=3, sampling={"n_samples": 50}),
        estimator_checks=True,
        call_independence={"graphlet sampling": lambda: GraphletSamplingKernel(k=3, sampling={"n_samples": 50})},
        properties=_NOT_YET,
        pickling=lambda: GraphletSamplingKernel(k=3, sampling={"n_samples": 50})),
    "PropagationKernel": Row(
        example=lambda: PropagationKernel(),
        estimator_checks=True,
        call_independence={"propagation, partially labelled": lambda: PropagationKernel(unlabeled="L0", metric="H",
                                                                                        normalize=True)},
        properties=_NOT_YET,
        pickling=lambda: PropagationKernel()),
    "PropagationAttrKernel": Row(
        example=lambda: PropagationAttrKernel(attributes="vec"),
        estimator_checks=True,
        call_independence={"propagation, attributes": lambda: PropagationAttrKernel(attributes="x", w=0.3)},
        properties=_NOT_YET,
        pickling=_VECTORS),
    "WLFramework": Row(
        example=lambda: WLFramework(ShortestPathKernel(), n_iter=2),
        estimator_checks=True,
        # The rounds' labels are numbered per call; the marginalized kernel's arithmetic follows
        # their order (content order), which wl.Labels keeps the same in every call.
        call_independence={"WL framework, marginalized": lambda: WLFramework(_mgk_pool(), n_iter=2)},
        properties=_NOT_YET,
        pickling=lambda: WLFramework(ShortestPathKernel(), n_iter=2)),
    "CoreFramework": Row(
        example=lambda: CoreFramework(WeisfeilerLehmanKernel(n_iter=2)),
        estimator_checks=True,
        call_independence={"core framework, marginalized": lambda: CoreFramework(_mgk_pool(), normalize=True)},
        properties=_NOT_YET,
        pickling=lambda: CoreFramework(WeisfeilerLehmanKernel(n_iter=2))),
    "molecular_kernel": Row(
        example=lambda: molecular_kernel(),
        estimator_checks=Excluded("a function: it returns a MarginalizedGraphKernel, whose row is checked"),
        call_independence=Excluded("reads a molecule's attributes: test_molecular_preset_with_gradients checks it "
                                   "on ESOL molecules, gradients included"),
        properties=_MOLECULES_ONLY,
        pickling=_MOLECULES_ONLY),
    "molecular_gp_kernel": Row(
        example=lambda: molecular_gp_kernel(),
        estimator_checks=Excluded("a function: it returns scikit-learn's kernel algebra over "
                                  "molecular_kernel, whose class's row is checked"),
        call_independence=Excluded("ConstantKernel × molecular_kernel + WhiteKernel: the white noise is added to "
                                   "K(X) only, so K(X) is not a block of one call by design; its graph kernel is "
                                   "molecular_kernel's row"),
        properties=_MOLECULES_ONLY,
        pickling=_MOLECULES_ONLY),
    "WassersteinWLKernel": Row(
        example=lambda: WassersteinWLKernel(),
        estimator_checks=True,
        call_independence={
            "Wasserstein WL": lambda: WassersteinWLKernel(n_iter=2),
            "Wasserstein WL, continuous": lambda: WassersteinWLKernel(n_iter=2, continuous=True, attributes="x",
                                                                      gamma=0.5)},
        properties=_NOT_YET,
        pickling=lambda: WassersteinWLKernel()),
    "GraphHopperKernel": Row(
        example=lambda: GraphHopperKernel(),
        estimator_checks=True,
        call_independence={"GraphHopper": lambda: GraphHopperKernel(
            node_kernel=TensorProduct(x=SquareExponential(1.0)))},
        properties=_NOT_YET,
        pickling=lambda: GraphHopperKernel()),
    "PyramidMatchKernel": Row(
        example=lambda: PyramidMatchKernel(),
        estimator_checks=True,
        call_independence={"pyramid match": lambda: PyramidMatchKernel(L=4, d=6, normalize=True)},
        properties=_NOT_YET,
        pickling=lambda: PyramidMatchKernel()),
    "OddSthKernel": Row(
        example=lambda: OddSthKernel(h=3),
        estimator_checks=True,
        call_independence={"ODD-STh": lambda: OddSthKernel(h=3)},
        properties=_NOT_YET,
        pickling=lambda: OddSthKernel(h=3)),
    "MixtureKernel": Row(
        example=lambda: MixtureKernel(MarginalizedGraphKernel(), normalize=True),
        estimator_checks=True,
        call_independence=Excluded("has no n_jobs of its own, and on graphs alone its values are its base "
                                   "kernel's bit for bit (test_mixtures.py), whose rows are checked here"),
        properties=_NOT_YET,
        pickling=lambda: MixtureKernel(MarginalizedGraphKernel(_label(), _label(), q=0.05), normalize=True)),
}

# Estimators that wrap a graph kernel (graphgram.gaussian_process), for the estimator checks.
WRAPPERS = {
    "GraphKernel": lambda: GraphKernel(graphgram.MarginalizedGraphKernel()),
    "LowRankGraphKernel": lambda: LowRankGraphKernel(graphgram.MarginalizedGraphKernel(), inducing=4),
    "LowRankGaussianProcessRegressor": lambda: LowRankGaussianProcessRegressor(
        LowRankGraphKernel(graphgram.MarginalizedGraphKernel(), inducing=4), optimizer=None),
}

COLUMNS = [f.name for f in dataclasses.fields(Row)]


def constructors(column):
    """{id: constructor} of the rows that take part in ``column``: the kernel's name, or for
    ``call_independence`` each setting's id."""
    out = {}
    for name, row in KERNELS.items():
        value = getattr(row, column)
        if value is True:
            out[name] = row.example
        elif isinstance(value, dict):
            out.update(value)
        elif not isinstance(value, Excluded):
            out[name] = value
    return out


def excluded(column):
    """{kernel name: reason} of the rows that leave ``column`` out."""
    return {name: getattr(row, column).reason for name, row in KERNELS.items()
            if isinstance(getattr(row, column), Excluded)}


def params(column):
    """pytest parameters for ``column``: the ids of :func:`constructors`, sorted, then one
    skipped parameter per excluded kernel with its reason, so that a report (``pytest -rs``)
    lists what a test leaves out and why."""
    return [pytest.param(i, id=i) for i in sorted(constructors(column))] + [
        pytest.param(name, id=name, marks=pytest.mark.skip(reason="%s: %s" % (name, reason)))
        for name, reason in excluded(column).items()]
