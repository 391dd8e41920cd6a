"""scikit-learn's estimator checks that apply to graph inputs, over every estimator
graphgram exports: parameters stored verbatim by ``__init__`` and nothing else set
there, default-constructible parameters, ``get_params``/``set_params``/``clone``
round trips, a repr, and (written here, since scikit-learn's own version feeds
arrays) no parameter changed by a computation on graphs."""

import copy

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils import estimator_checks

import graphgram
from graphgram.gaussian_process import GraphKernel, LowRankGaussianProcessRegressor, LowRankGraphKernel

from conftest import random_graph

ESTIMATORS = {
    "MarginalizedGraphKernel": lambda: graphgram.MarginalizedGraphKernel(),
    "ShortestPathKernel": lambda: graphgram.ShortestPathKernel(),
    "RandomWalkKernel": lambda: graphgram.RandomWalkKernel(),
    "WassersteinWLKernel": lambda: graphgram.WassersteinWLKernel(),
    "GraphHopperKernel": lambda: graphgram.GraphHopperKernel(),
    "WeisfeilerLehmanKernel": lambda: graphgram.WeisfeilerLehmanKernel(),
    "VertexHistogramKernel": lambda: graphgram.VertexHistogramKernel(),
    "EdgeHistogramKernel": lambda: graphgram.EdgeHistogramKernel(),
    "HashGraphKernel": lambda: graphgram.HashGraphKernel(attributes="vec"),
    "NeighborhoodHashKernel": lambda: graphgram.NeighborhoodHashKernel(),
    "NSPDKKernel": lambda: graphgram.NSPDKKernel(edge_label="label"),
    "PyramidMatchKernel": lambda: graphgram.PyramidMatchKernel(),
    "OddSthKernel": lambda: graphgram.OddSthKernel(h=3),
    "GraphletSamplingKernel": lambda: graphgram.GraphletSamplingKernel(k=3, sampling={"n_samples": 50}),
    "PropagationKernel": lambda: graphgram.PropagationKernel(),
    "PropagationAttrKernel": lambda: graphgram.PropagationAttrKernel(attributes="vec"),
    "WLFramework": lambda: graphgram.WLFramework(graphgram.ShortestPathKernel(), n_iter=2),
    "CoreFramework": lambda: graphgram.CoreFramework(graphgram.WeisfeilerLehmanKernel(n_iter=2)),
    "MixtureKernel": lambda: graphgram.MixtureKernel(graphgram.MarginalizedGraphKernel(), normalize=True),
    "GraphKernel": lambda: GraphKernel(graphgram.MarginalizedGraphKernel()),
    "LowRankGraphKernel": lambda: LowRankGraphKernel(graphgram.MarginalizedGraphKernel(), inducing=4),
    "LowRankGaussianProcessRegressor": lambda: LowRankGaussianProcessRegressor(
        LowRankGraphKernel(graphgram.MarginalizedGraphKernel(), inducing=4), optimizer=None),
}

# The checks of scikit-learn that need no numeric X; those missing from an older
# scikit-learn are skipped by name.
CHECKS = ["check_no_attributes_set_in_init", "check_parameters_default_constructible",
          "check_get_params_invariance", "check_set_params", "check_estimator_cloneable",
          "check_estimator_repr", "check_do_not_raise_errors_in_init_or_set_params"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sklearn_check(name, check):
    fn = getattr(estimator_checks, check, None)
    if fn is None:
        pytest.skip("scikit-learn has no %s" % check)
    fn(name, ESTIMATORS[name]())


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_computing_leaves_parameters_alone(name):
    """scikit-learn's check_estimators_overwrite_params on graphs: a call (or fit and
    predict) changes no parameter, nested estimators included."""
    rng = np.random.default_rng(0)
    graphs = [random_graph(rng, int(rng.integers(3, 8))) for _ in range(8)]
    est = ESTIMATORS[name]()
    before = {k: joblib.hash(copy.deepcopy(v)) for k, v in est.get_params(deep=True).items()}
    if isinstance(est, LowRankGaussianProcessRegressor):
        est.fit(graphs, rng.normal(size=len(graphs))).predict(graphs[:3])
    else:
        K = est(graphs[:5], graphs[3:])
        assert np.all(np.isfinite(K))
    after = {k: joblib.hash(v) for k, v in est.get_params(deep=True).items()}
    changed = sorted(k for k in before if before[k] != after[k])
    assert not changed, "%s changed parameters %s" % (name, changed)
    # and the computed estimator still clones to an equal-parameter one
    assert repr(clone(est).get_params(deep=False)) == repr(est.get_params(deep=False))
