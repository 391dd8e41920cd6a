"""scikit-learn's estimator checks that apply to graph inputs, over every estimator
graphgram exports (the rows of kernel_table.py, which this module checks cover
``graphgram.kernels.__all__``): parameters stored verbatim by ``__init__`` and nothing else set
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
import graphgram.kernels
from graphgram.gaussian_process import LowRankGaussianProcessRegressor

import kernel_table
from conftest import random_graph

# Every exported kernel (kernel_table.py, which says why the presets are left out) and
# the Gaussian-process wrappers of one.
ESTIMATORS = {**kernel_table.constructors("estimator_checks"), **kernel_table.WRAPPERS}
PARAMS = kernel_table.params("estimator_checks") + [pytest.param(n, id=n) for n in sorted(kernel_table.WRAPPERS)]


def test_the_table_covers_every_exported_kernel():
    """One row per name of graphgram.kernels.__all__, no other, each with every column: a
    kernel missing from the table fails here, and each test reads its column."""
    assert sorted(kernel_table.KERNELS) == sorted(graphgram.kernels.__all__)
    assert set(kernel_table.WRAPPERS) == {"GraphKernel", "LowRankGraphKernel", "LowRankGaussianProcessRegressor"}
    for name, row in kernel_table.KERNELS.items():
        for column in kernel_table.COLUMNS:
            value = getattr(row, column)
            if isinstance(value, kernel_table.Excluded):
                assert value.reason.strip(), "%s: %s excluded without a reason" % (name, column)
            else:
                assert value is True or callable(value) or (isinstance(value, dict) and value), (name, column)


def test_the_package_exports_every_kernel():
    """graphgram re-exports graphgram.kernels.__all__, nothing left behind."""
    missing = [n for n in graphgram.kernels.__all__ if n not in graphgram.__all__ or not hasattr(graphgram, n)]
    assert not missing, missing


# The checks of scikit-learn that need no numeric X; those missing from an older
# scikit-learn are skipped by name.
CHECKS = ["check_no_attributes_set_in_init", "check_parameters_default_constructible",
          "check_get_params_invariance", "check_set_params", "check_estimator_cloneable",
          "check_estimator_repr", "check_do_not_raise_errors_in_init_or_set_params"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("name", PARAMS)
def test_sklearn_check(name, check):
    fn = getattr(estimator_checks, check, None)
    if fn is None:
        pytest.skip("scikit-learn has no %s" % check)
    fn(name, ESTIMATORS[name]())


@pytest.mark.parametrize("name", PARAMS)
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
