"""graphgram.microkernels (values, algebra, hyperparameters, JSON) and the dense reference."""

import json
import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

from graphgram.graph import Graph
from graphgram.microkernels import (
    Additive,
    BrownianBridge,
    Constant,
    KroneckerDelta,
    MicroKernel,
    Normalized,
    Product,
    SquareExponential,
    Sum,
    TensorProduct,
)
from reference import mgk_dense, product_system

# --- values ---------------------------------------------------------------------------


def test_elementary_values():
    assert Constant(2.5)(1, 7) == 2.5
    assert Constant()({}, {}) == 1.0
    kd = KroneckerDelta(0.3)
    assert kd(1, 1) == 1.0 and kd(1, 2) == 0.3
    assert kd([1, 2], [1, 2]) == 1.0 and kd([1, 2], [1, 3]) == 0.3
    assert kd("C", "C") == 1.0 and kd("C", "N") == 0.3
    assert kd(True, 1) == 1.0
    se = SquareExponential(2.0)
    assert se(1.0, 1.0) == 1.0
    assert se(0.0, 3.0) == pytest.approx(math.exp(-9 / 8))
    assert se([0.0, 0.0], [1.0, 2.0]) == pytest.approx(math.exp(-5 / 8))
    bb = BrownianBridge(3.0)
    assert bb(1.0, 2.5) == 1.5 and bb(0.0, 10.0) == 0.0


def test_bindings_read_named_attributes():
    k = TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))
    x = {"label": 1, "charge": 0.0, "other": 9}
    y = {"label": 2, "charge": 1.0}
    assert k(x, y) == pytest.approx(0.5 * math.exp(-0.5))
    assert k(x, x) == 1.0
    a = Additive(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))
    assert a(x, y) == pytest.approx(0.5 + math.exp(-0.5))
    v = TensorProduct(vec=SquareExponential(1.0) * KroneckerDelta(0.2))
    assert v({"vec": np.array([0.0, 1.0])}, {"vec": np.array([0.0, 0.0])}) == pytest.approx(0.2 * math.exp(-0.5))
    with pytest.raises(KeyError, match="attribute 'charge' is missing from y"):
        k({"label": 1, "charge": 0.0}, {"label": 1})


def test_algebra_with_numbers():
    t = TensorProduct(label=KroneckerDelta(0.5))
    x, y = {"label": 0}, {"label": 1}
    s = t + 1
    assert isinstance(s, Sum) and isinstance(s.k2, Constant) and s(x, y) == 1.5
    assert (1 + t)(x, y) == 1.5 and isinstance((1 + t).k1, Constant)
    p = 2 * t
    assert isinstance(p, Product) and p(x, y) == 1.0
    assert (t * t)(x, y) == 0.25
    assert (t * 3 + t)(x, y) == 2.0
    with pytest.raises(TypeError, match="unsupported operand"):
        t + "a"
    assert repr(2 * (t + 1)) == ("Constant(c=2.0) * (TensorProduct(label=KroneckerDelta(h=0.5)) "
                                 "+ Constant(c=1.0))")
    assert repr(KroneckerDelta(0.5, h_bounds="fixed")) == "KroneckerDelta(h=0.5, h_bounds='fixed')"


def test_normalized():
    k = TensorProduct(x=SquareExponential(1.0)) + TensorProduct(x=KroneckerDelta(0.0))
    n = k.normalized
    assert isinstance(n, Normalized) and n.kernel is k
    a, b = {"x": 0.0}, {"x": 1.0}
    kab, kaa, kbb = k(a, b), k(a, a), k(b, b)
    assert kaa == 2.0
    assert n(a, b) == pytest.approx(kab / math.sqrt(kaa * kbb))
    assert n(a, a) == pytest.approx(1.0)
    # zero self-similarity gives 0, as in the Go core
    z = TensorProduct(x=BrownianBridge(1.0)) * 0.0
    assert z.normalized({"x": 0.0}, {"x": 0.0}) == 0.0


def test_strings_compare_like_graph_labels():
    k = TensorProduct(sym=KroneckerDelta(0.1))
    g = Graph(2, node_attrs={"sym": ["Cl", "Br"]})
    label = g.node_attrs["sym"][0]
    assert k({"sym": label}, {"sym": "Cl"}) == 1.0
    assert k({"sym": label}, {"sym": "Br"}) == 0.1
    with pytest.raises(TypeError, match="SquareExponential .* compares numbers, but its attribute holds strings"):
        SquareExponential(1.0)("Cl", "Br")


# --- hyperparameters -----------------------------------------------------------------


def spec_leaves(spec):
    """(kind, hyperparameter value) of the leaves of a JSON expression, depth-first."""
    kind = spec["kind"]
    if kind in ("sum", "product"):
        return [leaf for t in spec["terms"] for leaf in spec_leaves(t)]
    if kind == "normalized":
        return spec_leaves(spec["kernel"])
    value = {"constant": "c", "kronecker_delta": "h", "square_exponential": "length_scale",
             "brownian_bridge": "c"}[kind]
    return [(kind, spec[value])]


def composite():
    return (TensorProduct(label=KroneckerDelta(0.1), charge=SquareExponential(0.2)).normalized
            + 0.3 * Additive(vec=SquareExponential(0.4, length_scale_bounds="fixed"),
                             x=BrownianBridge(0.5) + Constant(0.6, c_bounds=(1e-2, 10.0))))


LAYOUT = {"label": (0, 1), "charge": (1, 1), "vec": (2, 3), "x": (5, 1)}


def test_hyperparameter_names_and_order_match_spec_leaves():
    k = composite()
    names = [h.name for h in k.hyperparameters]
    assert names == [
        "k1__kernel__label__h",
        "k1__kernel__charge__length_scale",
        "k2__k1__c",
        "k2__k2__vec__length_scale",
        "k2__k2__x__k1__c",
        "k2__k2__x__k2__c",
    ]
    spec = k.to_spec(LAYOUT)
    json.dumps(spec)
    leaves = spec_leaves(spec)
    assert [v for _, v in leaves] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert [kind for kind, _ in leaves] == ["kronecker_delta", "square_exponential", "constant",
                                           "square_exponential", "brownian_bridge", "constant"]
    np.testing.assert_array_equal(k.hyperparameter_values(), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert [h.fixed for h in k.hyperparameters] == [False, False, False, True, False, False]
    # every hyperparameter name is a get_params key
    params = k.get_params()
    for h, v in zip(k.hyperparameters, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]):
        assert params[h.name] == v


def test_to_spec_contents():
    k = TensorProduct(label=KroneckerDelta(0.5), vec=SquareExponential(2.0)).normalized + 1
    assert k.to_spec({"label": (0, 1), "vec": (1, 3)}) == {
        "kind": "sum", "terms": [
            {"kind": "normalized", "kernel": {"kind": "product", "terms": [
                {"kind": "kronecker_delta", "h": 0.5, "col": 0, "width": 1},
                {"kind": "square_exponential", "length_scale": 2.0, "col": 1, "width": 3}]}},
            {"kind": "constant", "c": 1.0}]}
    assert TensorProduct(t=BrownianBridge(2)).to_spec({"t": (4, 1)}) == {
        "kind": "product", "terms": [{"kind": "brownian_bridge", "c": 2.0, "col": 4}]}
    assert Constant(1.0).to_spec({}) == {"kind": "constant", "c": 1.0}
    assert k.attributes() == {"label", "vec"}
    assert Constant(2).attributes() == set()


def test_to_spec_gradient_columns_follow_names():
    """Each elementary kernel's expression carries the column of its own
    hyperparameter, looked up by name, also through Convolution and tables."""
    k = (TensorProduct(label=KroneckerDelta(0.5), vec=SquareExponential(2.0)) * Constant(3.0)
         + Normalized(TensorProduct(label=KroneckerDelta(0.25))))
    names = [h.name for h in k.hyperparameters]
    index = {"edge__" + n: 100 - i for i, n in enumerate(names)}  # reversed: order must not matter
    spec = k.to_spec({"label": (0, 1), "vec": (1, 3)}, index, "edge__")
    leaves = []

    def walk(node):
        if isinstance(node, dict):
            if "index" in node:
                leaves.append((node["kind"], node.get("h", node.get("length_scale", node.get("c"))), node["index"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    by_value = {v: i for _, v, i in leaves}
    assert len(leaves) == 4
    assert by_value == {0.5: 100 - names.index("k1__k1__label__h"), 2.0: 100 - names.index("k1__k1__vec__length_scale"),
                        3.0: 100 - names.index("k1__k2__c"), 0.25: 100 - names.index("k2__kernel__label__h")}
    assert "_hyperparameter" not in json.dumps(spec)


def test_theta_bounds_and_clone_with_theta():
    k = composite()
    np.testing.assert_allclose(k.theta, np.log([0.1, 0.2, 0.3, 0.5, 0.6]))
    assert k.n_dims == 5
    b = k.bounds
    assert b.shape == (5, 2)
    np.testing.assert_allclose(b[0], np.log([1e-3, 1.0]))
    np.testing.assert_allclose(b[1], np.log([1e-5, 1e5]))
    np.testing.assert_allclose(b[4], np.log([1e-2, 10.0]))
    theta = np.log([0.9, 1.5, 2.0, 3.0, 4.0])
    k2 = k.clone_with_theta(theta)
    np.testing.assert_allclose(k2.theta, theta)
    np.testing.assert_allclose(k2.hyperparameter_values(), [0.9, 1.5, 2.0, 0.4, 3.0, 4.0])
    np.testing.assert_allclose(k.hyperparameter_values(), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])  # unchanged
    k.theta = theta
    np.testing.assert_allclose(k.theta, theta)
    with pytest.raises(ValueError, match="theta has 2 values but the kernel has 5"):
        k.clone_with_theta([0.0, 1.0])
    assert Constant(1.0, c_bounds="fixed").bounds.shape == (0, 2)
    assert Constant(1.0, c_bounds="fixed").theta.shape == (0,)


def test_get_set_params_nested():
    k = TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0)) + 1.0
    p = k.get_params()
    assert p["k1__label__h"] == 0.5 and p["k1__label__h_bounds"] == (1e-3, 1.0)
    assert p["k2__c"] == 1.0 and p["k1__label"] is k.k1.label
    k.set_params(k1__label__h=0.25, k1__charge__length_scale=3.0, k2__c_bounds="fixed")
    assert k.k1.label.h == 0.25 and k.k1.charge.length_scale == 3.0
    assert [h.name for h in k.hyperparameters if not h.fixed] == ["k1__label__h", "k1__charge__length_scale"]
    k.set_params(k1__label=KroneckerDelta(0.9))
    assert k({"label": 0, "charge": 0.0}, {"label": 1, "charge": 0.0}) == pytest.approx(1.9)
    with pytest.raises(ValueError, match="invalid parameter 'nope'"):
        k.set_params(k1__nope=1)
    with pytest.raises(TypeError, match="needs a microkernel"):
        k.set_params(k1__label=0.5)


class _Estimator(BaseEstimator):
    """Stands in for a graph kernel estimator with a node_kernel parameter."""

    def __init__(self, node_kernel=None, q=0.01):
        self.node_kernel = node_kernel
        self.q = q


def test_sklearn_clone_and_estimator_nesting():
    k = TensorProduct(label=KroneckerDelta(0.5, h_bounds="fixed"), charge=SquareExponential(1.0)).normalized
    c = clone(k)
    assert c is not k and repr(c) == repr(k)
    assert c.kernel.label is not k.kernel.label
    est = _Estimator(node_kernel=TensorProduct(label=KroneckerDelta(0.5)))
    assert est.get_params()["node_kernel__label__h"] == 0.5
    est2 = clone(est)
    est2.set_params(node_kernel__label__h=0.125)
    assert est2.node_kernel.label.h == 0.125 and est.node_kernel.label.h == 0.5


def test_gradient_matches_finite_differences():
    k = composite()
    x = {"label": 1, "charge": 0.3, "vec": np.array([0.1, 0.2, 0.3]), "x": 0.1}
    y = {"label": 2, "charge": -0.4, "vec": np.array([0.0, 0.5, 0.3]), "x": 0.3}
    v, g = k.gradient(x, y)
    assert v == k(x, y)
    vals = k.hyperparameter_values()
    for i in range(len(vals)):
        eps = 1e-6
        hi, lo = vals.copy(), vals.copy()
        hi[i] += eps
        lo[i] -= eps
        num = (_with_values(k, hi)(x, y) - _with_values(k, lo)(x, y)) / (2 * eps)
        assert g[i] == pytest.approx(num, rel=1e-5, abs=1e-8), k.hyperparameters[i].name
    # the normalized part gives zero gradient on identical arguments
    _, g_same = TensorProduct(label=KroneckerDelta(0.1)).normalized.gradient({"label": 1}, {"label": 1})
    assert g_same.tolist() == [0.0]
    assert KroneckerDelta(0.1).gradient(1, 2) == (0.1, np.array([1.0]))


def _with_values(k, values):
    c = k.clone()
    for (_, leaf), v in zip(c._leaves(), values):
        leaf._set_hp(float(v))
    return c


# --- errors --------------------------------------------------------------------------


def test_unbound_kernel_errors():
    with pytest.raises(ValueError, match=r"not bound to an attribute.*TensorProduct\(label=KroneckerDelta\(h=0.5\)\)"):
        KroneckerDelta(0.5).to_spec({"label": (0, 1)})
    with pytest.raises(ValueError, match=r"SquareExponential\(length_scale=1.0\) reads an attribute value but is "
                                         r"not bound to an attribute \(at k2\)"):
        (TensorProduct(label=KroneckerDelta(0.5)) + SquareExponential(1.0)).to_spec({"label": (0, 1)})
    with pytest.raises(ValueError, match="not bound"):
        KroneckerDelta(0.5)({"label": 1}, {"label": 1})
    with pytest.raises(TypeError, match="call it with two dicts"):
        TensorProduct(label=KroneckerDelta(0.5))(1, 2)


def test_construction_and_spec_errors():
    with pytest.raises(ValueError, match="must not itself contain TensorProduct"):
        TensorProduct(a=TensorProduct(b=KroneckerDelta(0.5)))
    with pytest.raises(ValueError, match="must not contain '__'"):
        TensorProduct(a__b=KroneckerDelta(0.5))
    with pytest.raises(TypeError, match=r"TensorProduct\(a=...\) needs a microkernel, got float"):
        TensorProduct(a=0.5)
    with pytest.raises(ValueError, match="needs at least one"):
        Additive()
    with pytest.raises(ValueError, match=r"label__h = -0.5 is out of range \(must be >= 0\)"):
        TensorProduct(label=KroneckerDelta(-0.5)).to_spec({"label": (0, 1)})
    with pytest.raises(ValueError, match=r"length_scale = 0.0 is out of range \(must be > 0\)"):
        SquareExponential(0.0)(1.0, 2.0)
    with pytest.raises(ValueError, match=r"BrownianBridge \(at t\) compares scalars, but its attribute has width 3"):
        TensorProduct(t=BrownianBridge(1.0)).to_spec({"t": (0, 3)})
    with pytest.raises(ValueError, match="attribute 'charge' is not in the packed layout"):
        TensorProduct(charge=BrownianBridge(1.0)).to_spec({"label": (0, 1)})
    with pytest.raises(ValueError, match="cannot compare values of lengths 2 and 3"):
        SquareExponential(1.0)([0, 0], [0, 0, 0])
    assert isinstance(TensorProduct(**{"self": Constant()}), MicroKernel)


# --- the dense reference ---------------------------------------------------------------


def star():
    return Graph(3, [(0, 1), (0, 2)])


def triangle():
    return Graph(3, [(0, 1), (1, 2), (0, 2)])


@pytest.mark.parametrize("q, expected", [(0.01, 452.2613065), (0.05, 92.30769231), (0.1, 47.36842105), (0.5, 12.0)])
def test_reference_graphdot_numbers(q, expected):
    gs = [star(), triangle()]
    K = np.array([[mgk_dense(a, b, q=q) for b in gs] for a in gs])
    np.testing.assert_allclose(K, np.full((2, 2), expected), rtol=1e-9)


def test_reference_closed_form_unlabeled():
    rng = np.random.default_rng(5)
    g1 = Graph(4, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    g2 = Graph(5, [(0, 1), (1, 2), (2, 3), (3, 4), (1, 1)])
    for q in (0.02, 0.3):
        expected = 4 * 5 / (q * (2 - q))
        assert mgk_dense(g1, g2, Constant(1.0), Constant(1.0), q) == pytest.approx(expected, rel=1e-10)
    # nodal sums to the graph value; lmin=1 removes the node-kernel term n*n'
    R = mgk_dense(g1, g2, q=0.1, nodal=True)
    assert R.shape == (4, 5) and R.sum() == pytest.approx(mgk_dense(g1, g2, q=0.1))
    assert mgk_dense(g1, g2, q=0.1, lmin=1) == pytest.approx(mgk_dense(g1, g2, q=0.1) - 20)
    p1, p2 = rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 5)
    Rp = mgk_dense(g1, g2, q=0.1, p1=p1, p2=p2, nodal=True)
    np.testing.assert_allclose(Rp, R * np.outer(p1, p2))


def test_reference_labeled_properties_and_zero_node_kernel_path():
    g1 = Graph(3, [(0, 1), (1, 2), (2, 2)], [1.0, 0.5, 2.0],
               node_attrs={"label": [0, 1, 0]}, edge_attrs={"label": [1, 1, 2]})
    g2 = Graph(4, [(0, 1), (1, 2), (2, 3)], node_attrs={"label": [1, 0, 0, 1]},
               edge_attrs={"label": [1, 2, 1]})
    nk = TensorProduct(label=KroneckerDelta(0.3))
    ek = TensorProduct(label=KroneckerDelta(0.4))
    k12 = mgk_dense(g1, g2, nk, ek, 0.05)
    assert k12 == pytest.approx(mgk_dense(g2, g1, nk, ek, 0.05), rel=1e-12)  # symmetric
    assert k12 > 0
    # with h = 0 some V entries vanish; the reference switches to (D - V W) x = V D 1,
    # which must agree with the V^-1 form as h -> 0
    nk0 = TensorProduct(label=KroneckerDelta(0.0))
    nk_small = TensorProduct(label=KroneckerDelta(1e-9))
    assert mgk_dense(g1, g2, nk0, ek, 0.05) == pytest.approx(mgk_dense(g1, g2, nk_small, ek, 0.05), rel=1e-6)
    # product system structure: W symmetric, self-loop degree counted once
    D, V, W = product_system(g1, g2, nk, ek, 0.05)
    np.testing.assert_allclose(W, W.T)
    assert D[2 * 4 + 0] == pytest.approx((0.5 + 2.0) * 1.0 / 0.95**2)


def test_string_attribute_with_numeric_kernel_rejected_in_graph_kernels():
    from graphgram import MarginalizedGraphKernel

    g = Graph(2, [(0, 1)], node_attrs={"sym": ["Cl", "Br"]})
    k = MarginalizedGraphKernel(TensorProduct(sym=SquareExponential(1.0)))
    with pytest.raises(TypeError, match="SquareExponential \\(at sym\\) compares numbers, but its attribute holds strings"):
        k([g])


# --- set, vector and table kernels ------------------------------------------------------

from graphgram.microkernels import RBF, Convolution, DotProduct, LabelFunction, LabelTable  # noqa: E402


def _fd_check(k, x, y, rel=1e-5):
    """The gradient from Go against central finite differences over every hyperparameter."""
    v, g = k.gradient(x, y)
    names = [h.name for h in k.hyperparameters]
    assert len(g) == len(names)
    for i, name in enumerate(names):
        p = k.get_params()[name]
        step = 1e-6 * max(1.0, abs(p))
        up, down = k.clone(), k.clone()
        up.set_params(**{name: p + step})
        down.set_params(**{name: p - step})
        fd = (up(x, y) - down(x, y)) / (2 * step)
        assert g[i] == pytest.approx(fd, rel=rel, abs=1e-8), name
    return v, g


def test_dot_product_and_rbf_on_vectors():
    x, y = {"v": [1.0, 2.0, 0.5]}, {"v": [0.5, -1.0, 2.0]}
    k = TensorProduct(v=DotProduct(0.5))
    assert k(x, y) == pytest.approx(0.25 + 0.5 - 2 + 1)
    assert TensorProduct(v=DotProduct(0.0).normalized)(x, x) == pytest.approx(1.0)
    assert RBF is SquareExponential
    assert TensorProduct(v=RBF(2.0))(x, y) == pytest.approx(math.exp(-(0.25 + 9 + 2.25) / 8))
    _fd_check(TensorProduct(v=DotProduct(0.7)), x, y)
    _fd_check(TensorProduct(v=DotProduct(0.7).normalized * RBF(1.5)), x, y)


def test_convolution_mean_over_pairs():
    # {C, C, N} against {N, O} over the vocabulary (C, N, O).
    x, y = {"nb": [2, 1, 0]}, {"nb": [0, 1, 1]}
    k = TensorProduct(nb=Convolution(KroneckerDelta(0.5)))
    assert k(x, y) == pytest.approx((2 * 0.5 + 2 * 0.5 + 1 * 1 + 1 * 0.5) / 6)
    assert k({"nb": [0, 0, 0]}, {"nb": [0, 0, 0]}) == 1.0
    assert k(x, {"nb": [0, 0, 0]}) == 0.0
    # Element values compared by a square exponential (ring sizes 5 and 6).
    rs = TensorProduct(r=Convolution(SquareExponential(1.0), values=[5, 6]))
    assert rs({"r": [1, 0]}, {"r": [0, 1]}) == pytest.approx(math.exp(-0.5))
    assert [h.name for h in k.hyperparameters] == ["nb__kernel__h"]
    assert k.get_params()["nb__kernel__h"] == 0.5
    for kern in (k, TensorProduct(nb=Convolution(KroneckerDelta(0.3)).normalized),
                 TensorProduct(nb=Convolution(SquareExponential(0.8) * Constant(0.5), values=[1, 2, 4]))):
        _fd_check(kern, x, y)
    # Positive semi-definite on random multisets.
    rng = np.random.default_rng(0)
    sets = [{"nb": rng.integers(0, 3, size=3).tolist()} for _ in range(12)]
    K = np.array([[k(a, b) for b in sets] for a in sets])
    assert np.linalg.eigvalsh(K).min() > -1e-10
    with pytest.raises(ValueError, match="values but its attribute has width"):
        TensorProduct(nb=Convolution(KroneckerDelta(0.5), values=[1, 2]))(x, y)


def test_label_table_and_function():
    t = LabelTable({("C", "N"): 0.5, ("C", "O"): 0.3, ("N", "O"): 0.4})
    k = TensorProduct(e=t)
    assert k({"e": "C"}, {"e": "N"}) == pytest.approx(0.5)
    assert k({"e": "O"}, {"e": "O"}) == pytest.approx(1.0)
    assert k({"e": "S"}, {"e": "S"}) == 1.0 and k({"e": "S"}, {"e": "C"}) == 0.0
    assert k.hyperparameters == [] and k.n_dims == 0
    num = TensorProduct(z=LabelTable([[1.0, 0.2], [0.2, 1.0]], labels=[6, 7]) * SquareExponential(1.0))
    assert num({"z": 6}, {"z": 7}) == pytest.approx(0.2 * math.exp(-0.5))
    _fd_check(num, {"z": 6}, {"z": 7})
    with pytest.raises(ValueError, match="positive semi-definite"):
        LabelTable({("a", "b"): 2.0})
    with pytest.raises(ValueError, match="symmetric"):
        LabelTable([[1, 0.2], [0.3, 1]], labels=["a", "b"])
    f = TensorProduct(z=LabelFunction(lambda a, b: math.exp(-abs(a - b))))
    assert f({"z": 1}, {"z": 3}) == pytest.approx(math.exp(-2))
    with pytest.raises(ValueError, match="positive semi-definite"):
        TensorProduct(z=LabelFunction(lambda a, b: 2.0 if a != b else 1.0))({"z": 1}, {"z": 3})
    # Inside a convolution the function is tabulated over the element values.
    c = TensorProduct(r=Convolution(LabelFunction(lambda a, b: 1.0 if a == b else 0.25), values=[5, 6]))
    assert c({"r": [1, 1]}, {"r": [0, 1]}) == pytest.approx((0.25 + 1) / 2)


def test_set_and_table_kernels_in_graph_kernels():
    from graphgram import MarginalizedGraphKernel

    def g(labels, nbs):
        return Graph(len(labels), [(i, i + 1) for i in range(len(labels) - 1)], None,
                     {"e": np.array(labels), "nb": np.array(nbs, dtype=float)}, None)

    X = [g(["C", "N", "O"], [[1, 0], [1, 1], [0, 1]]), g(["C", "C"], [[1, 0], [1, 0]]), g(["O"], [[0, 0]])]
    node = TensorProduct(e=LabelTable({("C", "N"): 0.5, ("C", "O"): 0.3, ("N", "O"): 0.4}),
                         nb=Convolution(KroneckerDelta(0.4)).normalized)
    mgk = MarginalizedGraphKernel(node, None, q=0.1, normalize=True)
    K, G = mgk(X, eval_gradient=True)
    assert K.shape == (3, 3) and np.allclose(np.diag(K), 1.0)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    assert G.shape == (3, 3, mgk.n_dims)
    # The gradient in log space against finite differences of the Gram matrix.
    th = mgk.theta
    for i in range(len(th)):
        d = np.zeros_like(th)
        d[i] = 1e-5
        fd = (mgk.clone_with_theta(th + d)(X) - mgk.clone_with_theta(th - d)(X)) / 2e-5
        np.testing.assert_allclose(G[:, :, i], fd, atol=1e-6)
    f = MarginalizedGraphKernel(TensorProduct(e=LabelFunction(lambda a, b: 1.0 if a == b else 0.3)), None, q=0.1)
    ref = MarginalizedGraphKernel(TensorProduct(e=KroneckerDelta(0.3)), None, q=0.1)
    np.testing.assert_allclose(f(X), ref(X), rtol=1e-10)
    # On edges too: vectors by a normalized dot product, numeric labels by a function.
    E = [Graph(3, [(0, 1), (1, 2)], None, None, {"v": np.array([[1.0, 0.0], [0.5, 0.5]]), "o": np.array([1, 2])}),
         Graph(2, [(0, 1)], None, None, {"v": np.array([[0.0, 1.0]]), "o": np.array([2])})]
    ek = MarginalizedGraphKernel(None, TensorProduct(v=DotProduct(0.5).normalized,
                                                     o=LabelFunction(lambda a, b: 1.0 if a == b else 0.5)), q=0.2)
    K, G = ek(E, eval_gradient=True)
    assert np.all(np.isfinite(K)) and G.shape == (2, 2, ek.n_dims)
    th = ek.theta
    for i in range(len(th)):
        d = np.zeros_like(th)
        d[i] = 1e-5
        fd = (ek.clone_with_theta(th + d)(E) - ek.clone_with_theta(th - d)(E)) / 2e-5
        np.testing.assert_allclose(G[:, :, i], fd, rtol=1e-5, atol=1e-9)
