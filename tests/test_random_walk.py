"""The random-walk kernel: GraKeL's numbers (fast method unlabeled, baseline method
labeled), a dense reference on random graphs, closed forms, and input errors."""

import re
import warnings

import numpy as np
import pytest
from scipy.linalg import expm

from graphgram import Graph
from graphgram.datasets import load_tu
from graphgram.microkernels import Constant, KroneckerDelta, SquareExponential, TensorProduct
from graphgram.kernels import RandomWalkKernel

from conftest import random_graph

LABEL = TensorProduct(label=KroneckerDelta(0.0))


def to_grakel(g):
    """GraKeL input: the adjacency matrix (isolated nodes included) and node labels."""
    return [g.adjacency(), {i: int(x) for i, x in enumerate(g.node_attrs["label"])}]


def rel_err(a, b):
    return np.max(np.abs(a - b) / np.abs(b))


def spectral_radius(g):
    return np.abs(np.linalg.eigvalsh(g.adjacency())).max() if g.n_nodes else 0.0


@pytest.mark.parametrize("name,count", [("MUTAG", 60), ("ENZYMES", 25), ("PROTEINS", 25), ("NCI1", 40)])
def test_grakel_fast_unlabeled(datasets_dir, name, count):
    """GraKeL's fast geometric method (conjugate gradients, 20 iterations at most) on
    unlabeled graphs, where it converges: λ well inside the admissible range."""
    grakel = pytest.importorskip("grakel")
    graphs, _ = load_tu(datasets_dir / name)
    graphs = [g for g in graphs if g.n_nodes <= 60][:count]
    lam = 0.2 / max(spectral_radius(g) for g in graphs) ** 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # GraKeL warns when it changes λ; it must not
        ref = grakel.RandomWalk(lamda=lam, method_type="fast", kernel_type="geometric").fit_transform(
            [[g.adjacency()] for g in graphs])
    K = RandomWalkKernel(lamda=lam)(graphs)
    assert K.dtype == np.float64
    assert rel_err(K, ref) < 1e-9


@pytest.fixture(scope="module")
def small_mutag(datasets_dir):
    graphs, _ = load_tu(datasets_dir / "MUTAG")
    return [g for g in graphs if g.n_nodes <= 14][:6]


@pytest.mark.parametrize("kind,lam,p", [("geometric", 0.01, None), ("geometric", 0.1, None),
                                        ("exponential", 0.3, None), ("geometric", 0.2, 3),
                                        ("exponential", 0.5, 4)])
def test_grakel_baseline(small_mutag, kind, lam, p):
    """The standard definition, which GraKeL's O(n^6) baseline method computes."""
    grakel = pytest.importorskip("grakel")
    G = [to_grakel(g) for g in small_mutag]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        labeled = grakel.RandomWalkLabeled(lamda=lam, method_type="baseline", kernel_type=kind, p=p).fit_transform(G)
        unlabeled = grakel.RandomWalk(lamda=lam, method_type="baseline", kernel_type=kind, p=p).fit_transform(
            [[a] for a, _ in G])
    assert rel_err(RandomWalkKernel(lamda=lam, kind=kind, p=p, node_kernel=LABEL)(small_mutag), labeled) < 1e-12
    assert rel_err(RandomWalkKernel(lamda=lam, kind=kind, p=p)(small_mutag), unlabeled) < 1e-12


def test_grakel_fast_labeled_differs(small_mutag):
    """GraKeL 0.1.11's fast labeled method pairs labels crosswise (docs/random_walk.md);
    graphgram follows the standard definition and so differs from it."""
    grakel = pytest.importorskip("grakel")
    G = [to_grakel(g) for g in small_mutag]
    fast = grakel.RandomWalkLabeled(lamda=0.1, method_type="fast").fit_transform(G)
    base = grakel.RandomWalkLabeled(lamda=0.1, method_type="baseline").fit_transform(G)
    ours = RandomWalkKernel(lamda=0.1, node_kernel=LABEL)(small_mutag)
    assert rel_err(ours, base) < 1e-12
    assert rel_err(fast, base) > 1e-6


def dense_reference(g, h, lam, kind, p, node_kernel):
    """1ᵀ f(λW×) 1 with W× built explicitly."""
    n, m = g.n_nodes, h.n_nodes
    if n == 0 or m == 0:
        return 0.0
    kap = np.ones((n, m))
    if node_kernel is not None:
        for i in range(n):
            for k in range(m):
                kap[i, k] = node_kernel({a: v[i] for a, v in g.node_attrs.items()},
                                        {a: v[k] for a, v in h.node_attrs.items()})
    d = kap.ravel()
    W = np.kron(g.adjacency(), h.adjacency()) * np.outer(d, d)
    one = np.ones(n * m)
    if p is not None:
        mu = [lam ** k / (np.prod(range(1, k + 1)) if kind == "exponential" else 1) for k in range(p + 1)]
        v, s = one, mu[0] * one.sum()
        for k in range(1, p + 1):
            v = W @ v
            s += mu[k] * v.sum()
        return s
    if kind == "exponential":
        return expm(lam * W).sum()
    return np.linalg.solve(np.eye(n * m) - lam * W, one).sum()


@pytest.mark.parametrize("node_kernel", [None, LABEL, TensorProduct(label=KroneckerDelta(0.3)),
                                         TensorProduct(charge=SquareExponential(0.8)), Constant(0.7)],
                         ids=["none", "label", "label-h", "charge", "const"])
@pytest.mark.parametrize("kind,p", [("geometric", None), ("exponential", None), ("geometric", 3),
                                    ("exponential", 2)])
def test_matches_definition(rng, node_kernel, kind, p):
    """Random weighted graphs with self-loops, isolated nodes and several components."""
    graphs = [random_graph(rng, int(rng.integers(1, 7))) for _ in range(5)]
    graphs.append(Graph(4, [(0, 1), (2, 2)], [1.5, 0.5], node_attrs={
        "label": [0, 1, 0, 2], "charge": np.zeros(4), "vec": np.ones((4, 2))}))
    lam = 0.5 / max(spectral_radius(g) for g in graphs) ** 2 if kind == "geometric" and p is None else 0.4
    kernel = RandomWalkKernel(lamda=lam, kind=kind, p=p, node_kernel=node_kernel)
    K = kernel(graphs)
    ref = np.array([[dense_reference(g, h, lam, kind, p, node_kernel) for h in graphs] for g in graphs])
    np.testing.assert_allclose(K, ref, rtol=1e-12)
    np.testing.assert_allclose(kernel(graphs[:2], graphs[2:]), ref[:2, 2:], rtol=1e-12)
    np.testing.assert_array_equal(kernel.diag(graphs), np.diag(K))


def test_closed_forms():
    # K_n: eigenvalue n-1 with eigenvector 1/sqrt(n), the others orthogonal to 1.
    complete = [Graph(n, [(i, j) for i in range(n) for j in range(i + 1, n)]) for n in (2, 3, 5)]
    ns = np.array([2.0, 3.0, 5.0])
    x = 0.05 * np.outer(ns - 1, ns - 1)
    np.testing.assert_allclose(RandomWalkKernel(lamda=0.05)(complete), np.outer(ns, ns) / (1 - x), rtol=1e-13)
    np.testing.assert_allclose(RandomWalkKernel(lamda=0.05, kind="exponential")(complete),
                               np.outer(ns, ns) * np.exp(x), rtol=1e-13)
    # No edges: only the zero-length term n·n'.
    empty = [Graph(3), Graph(4)]
    np.testing.assert_array_equal(RandomWalkKernel(lamda=0.3)(empty), [[9, 12], [12, 16]])


def test_normalize(rng):
    graphs = [random_graph(rng, int(rng.integers(2, 7))) for _ in range(6)]
    raw = RandomWalkKernel(lamda=0.01, node_kernel=LABEL)(graphs)
    K = RandomWalkKernel(lamda=0.01, node_kernel=LABEL, normalize=True)(graphs)
    d = np.sqrt(np.diag(raw))
    np.testing.assert_allclose(K, raw / np.outer(d, d), rtol=1e-14)


def test_lambda_limit(small_mutag):
    rho = max(spectral_radius(g) for g in small_mutag)
    for node_kernel in (None, LABEL):
        with pytest.raises(ValueError, match="largest admissible lamda is just below") as exc:
            RandomWalkKernel(lamda=1.01 / rho ** 2, node_kernel=node_kernel)(small_mutag)
        limit = float(re.search(r"just below ([0-9.e+-]+[0-9])", str(exc.value)).group(1))
        np.testing.assert_allclose(limit, 1 / rho ** 2, rtol=1e-9)
        RandomWalkKernel(lamda=limit * (1 - 1e-6), node_kernel=node_kernel)(small_mutag)
    # Finite sums and the exponential series converge for every λ.
    RandomWalkKernel(lamda=5.0, p=3)(small_mutag)
    RandomWalkKernel(lamda=5.0, kind="exponential")(small_mutag[:3])


def test_errors(rng):
    g = random_graph(rng, 4)
    for bad in (0, -0.1, float("nan"), float("inf"), "0.1", True):
        with pytest.raises(ValueError, match="lamda must be a positive finite number"):
            RandomWalkKernel(lamda=bad)([g])
    with pytest.raises(ValueError, match="kind must be"):
        RandomWalkKernel(kind="harmonic")([g])
    for p in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="p must be a positive integer"):
            RandomWalkKernel(p=p)([g])
    with pytest.raises(ValueError, match="has no node attribute 'label'"):
        RandomWalkKernel(node_kernel=LABEL)([Graph(2, [(0, 1)])])
    with pytest.raises(TypeError, match="node_kernel must be a graphgram microkernel"):
        RandomWalkKernel(node_kernel=len)([g])
    with pytest.raises(ValueError, match="n_jobs"):
        RandomWalkKernel(n_jobs=0)([g])
