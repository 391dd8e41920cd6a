"""graphgram's L-BFGS-B driver: its stopping rule on a settled value, and LBFGS on a graph GP."""

import csv
import io
import warnings

import numpy as np
import pytest
import scipy.optimize
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel

from graphgram import molecular_kernel, molecules
from graphgram.gaussian_process import LBFGS
from graphgram.gaussian_process._lbfgs import minimize

from conftest import dataset_dir


def rosenbrock(x):
    return scipy.optimize.rosen(x), scipy.optimize.rosen_der(x)


def test_tol_stops_once_the_value_has_settled():
    seen = []

    def f(x):
        seen.append(rosenbrock(x)[0])
        return rosenbrock(x)

    x0, bounds = np.array([-1.2, 1.0, -0.5, 0.8]), np.array([[-2.0, 2.0]] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a stop by tol is not a failure to converge
        x_full, f_full = minimize(f, x0, bounds)
        n_full = len(seen)
        seen.clear()
        x_tol, f_tol = minimize(f, x0, bounds, tol=1e-3, patience=3)
    assert len(seen) < n_full
    assert f_full <= f_tol < f_full + 0.05  # close to the optimum (0): the last steps were small
    # The rule (with the default gtol = 1), checked on the iterates scipy reports for the same start:
    its = scipy_iterates(rosenbrock, x0, bounds)
    k = next(i for i in range(3, len(its)) if its[i - 3][0] - its[i][0] < 1e-3 and its[i][1] < 1.0)
    assert f_tol == pytest.approx(its[k][0], rel=1e-12)


def scipy_iterates(f, x0, bounds):
    """(value, largest projected-gradient component) after each of scipy's own L-BFGS-B iterations."""
    its = []

    def callback(intermediate_result):
        x = intermediate_result.x
        g = f(x)[1]
        blocked = ((x <= bounds[:, 0]) & (g > 0)) | ((x >= bounds[:, 1]) & (g < 0))
        its.append((intermediate_result.fun, np.max(np.abs(np.where(blocked, 0.0, g)))))

    scipy.optimize.minimize(f, x0, method="L-BFGS-B", jac=True, bounds=bounds, callback=callback)
    return its


@pytest.mark.parametrize("gtol", [None, 1.0, 0.1, 0.001])
def test_tol_waits_for_a_flat_projected_gradient(gtol):
    # tol so large that every iteration has settled by value: the stop is the
    # first iterate after patience whose projected gradient is below gtol.
    x0, bounds = np.array([-1.2, 1.0, -0.5, 0.8]), np.array([[-2.0, 2.0]] * 4)
    its = scipy_iterates(rosenbrock, x0, bounds)
    k = next(i for i in range(2, len(its)) if gtol is None or its[i][1] < gtol)
    assert gtol is None or its[2][1] >= gtol  # the gradient condition decides here
    x, fun = minimize(rosenbrock, x0, bounds, tol=1e9, patience=2, gtol=gtol)
    assert fun == its[k][0]


def test_gtol_ignores_components_pushing_against_a_bound():
    # The optimum (1, 1) lies outside the box: the fit ends on the bound x1 = 0.5,
    # where the gradient still pushes outwards, and tol may stop it there.
    x0, bounds = np.array([-1.2, 0.2]), np.array([[-2.0, 2.0], [-2.0, 0.5]])
    its = scipy_iterates(rosenbrock, x0, bounds)
    assert its[-1][1] < 1e-3
    x, fun = minimize(rosenbrock, x0, bounds, tol=1e-6, patience=2, gtol=1e-3)
    assert x[1] == 0.5 and rosenbrock(x)[1][1] < -0.1
    assert fun == pytest.approx(its[-1][0], abs=1e-6)


def test_max_seconds_returns_the_best_point_when_the_time_is_spent(ticking_clock):
    # Each evaluation takes one second of a clock of the test's own.
    x0, bounds = np.array([-1.2, 1.0, -0.5, 0.8]), np.array([[-2.0, 2.0]] * 4)
    with pytest.warns(RuntimeWarning, match="time budget of 10 s"):
        x, fun = minimize(ticking_clock.tick(rosenbrock), x0, bounds, max_seconds=10)
    assert ticking_clock.started == [float(k) for k in range(10)]  # none started after the budget
    # The last iterate scipy accepts after at most those 10 evaluations, in a run of its own.
    count, its = [0], []

    def counted(x):
        count[0] += 1
        return rosenbrock(x)

    def callback(intermediate_result):
        its.append((count[0], intermediate_result.fun, intermediate_result.x.copy()))

    scipy.optimize.minimize(counted, x0, method="L-BFGS-B", jac=True, bounds=bounds, callback=callback)
    _, value, point = [it for it in its if it[0] <= 10][-1]
    assert fun == value and fun == rosenbrock(x)[0]
    np.testing.assert_array_equal(x, point)


def test_soft_bounds_minimize_through_the_logistic_map():
    # Rosenbrock's optimum (1, 1) lies outside the box in x1 only: with soft bounds
    # on x1's narrow interval x1 approaches its bound 0.5 from inside and x0 its
    # optimum on that edge; x0's wide interval stays L-BFGS-B's.
    x0, bounds = np.array([-1.2, 0.2]), np.array([[-2.0, 2.0], [-2.5, 0.5]])
    seen = []

    def f(x):
        seen.append(x.copy())
        return rosenbrock(x)

    x, fun = minimize(f, x0, bounds, soft_bounds=3.0)
    ref = scipy.optimize.minimize(rosenbrock, x0, method="L-BFGS-B", jac=True, bounds=bounds)
    assert all(-2.5 < t[1] < 0.5 for t in seen)          # never on x1's bounds, let alone beyond
    np.testing.assert_allclose(seen[0], x0, rtol=1e-14)  # started where asked (to rounding)
    # The bound is an asymptote: the minimization ends just inside it.
    assert 0.5 - 1e-4 < x[1] < 0.5 and abs(x[0] - ref.x[0]) < 1e-3
    assert fun == pytest.approx(ref.fun, abs=1e-5) and fun == rosenbrock(x)[0]
    # A start on a bound is moved inside by 1e-3 of the interval.
    first = len(seen)
    with pytest.warns(RuntimeWarning, match="ITERATIONS REACHED LIMIT"):
        minimize(f, np.array([0.0, 0.5]), bounds, soft_bounds=3.0, max_iter=1)
    assert seen[first][1] == pytest.approx(0.5 - 3e-3)


def test_logistic_map_gradient_matches_finite_differences():
    from graphgram.gaussian_process._lbfgs import _Logistic
    bounds = np.array([[-3.0, -0.05], [-9.2, 0.0], [-11.5, 11.5]])
    m = _Logistic(bounds, 3.0)
    assert m.mask.tolist() == [True, False, False]
    np.testing.assert_array_equal(m.bounds[1:], bounds[1:])
    z = np.array([0.7, -2.0, 3.0])
    theta = m.theta(z)
    np.testing.assert_allclose(m.z(theta), z, rtol=1e-12)
    w = np.array([1.5, -0.5, 2.0])      # f(theta) = w·theta
    h = 1e-6
    fd = [(w @ m.theta(z + h * e) - w @ m.theta(z - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(m.gradient(z, w.copy()), fd, rtol=1e-7)
    assert _Logistic(bounds, None).mask.sum() == 0
    for bad in (0, -1.0, "3", True):
        with pytest.raises(ValueError, match="soft_bounds must be a positive number"):
            minimize(rosenbrock, np.zeros(2), bounds[:2], soft_bounds=bad)


def test_no_tol_is_scipys_minimization():
    x0, bounds = np.array([-1.2, 1.0]), np.array([[-2.0, 2.0]] * 2)
    res = scipy.optimize.minimize(rosenbrock, x0, method="L-BFGS-B", jac=True, bounds=bounds)
    x, fun = minimize(rosenbrock, x0, bounds)
    np.testing.assert_array_equal(x, res.x)
    assert fun == res.fun


def test_lbfgs_on_a_graph_gp_needs_fewer_evaluations_for_the_same_fit():
    rows = list(csv.DictReader(open(dataset_dir("ESOL") / "delaney-processed.csv")))[:60]
    graphs = [molecules.from_smiles(r["smiles"]) for r in rows]
    y = np.array([float(r["measured log solubility in mols per litre"]) for r in rows])
    fits = {}
    for tol in (None, 0.05):
        opt = LBFGS(tol=tol, file=io.StringIO())
        kernel = ConstantKernel() * molecular_kernel(verbose=False) + WhiteKernel(0.1, (1e-4, 1.0))
        gp = GaussianProcessRegressor(kernel, normalize_y=True, optimizer=opt).fit(graphs, y)
        fits[tol] = (opt.n_evaluations_, gp.log_marginal_likelihood_value_)
    (n_full, lml_full), (n_tol, lml_tol) = fits[None], fits[0.05]
    assert n_tol < n_full
    # Stopped where 5 iterations gained less than 0.05 nats; the rest of the full fit gained little.
    assert lml_full - 0.5 < lml_tol <= lml_full + 1e-6
