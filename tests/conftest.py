"""Shared pytest fixtures: where the real data sets live, random test graphs, and a clock for
the Gaussian-process optimizers' time budgets."""

import os
from pathlib import Path

import numpy as np
import pytest

import graphgram

REPO = Path(__file__).resolve().parents[1]
# The TU and MoleculeNet data sets: $GRAPHGRAM_DATASETS, by default shared/datasets beside the repository.
DATASETS = Path(os.environ.get("GRAPHGRAM_DATASETS") or REPO.parent / "shared" / "datasets")
GOLDEN = REPO / "gokernel" / "mgk" / "testdata"


def dataset_dir(name=""):
    """The folder of one data set (or of all with no name); skips the test when it is absent."""
    d = DATASETS / name
    if not d.is_dir():
        pytest.skip("%s is not available (set GRAPHGRAM_DATASETS to the folder of the data sets)" % d)
    return d


@pytest.fixture(scope="session")
def datasets_dir():
    """The folder of TU and MoleculeNet data sets (skip if absent)."""
    return dataset_dir()


@pytest.fixture(scope="session")
def mutag():
    """The bundled MUTAG graphs and targets."""
    return graphgram.datasets.load_mutag()


def random_graph(rng, n, p_edge=0.4, self_loops=True, n_labels=3, vec=2):
    """A random labeled, weighted graph with node attributes label (int), charge
    (float), vec (float vector) and edge attributes label (int), length (float)."""
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p_edge]
    if self_loops:
        edges += [(i, i) for i in range(n) if rng.random() < 0.2]
    m = len(edges)
    return graphgram.Graph(
        n, np.array(edges, dtype=np.int64).reshape(-1, 2), rng.uniform(0.1, 2.0, m),
        node_attrs={"label": rng.integers(0, n_labels, n), "charge": rng.normal(size=n),
                    "vec": rng.normal(size=(n, vec))},
        edge_attrs={"label": rng.integers(0, 2, m), "length": rng.uniform(0.5, 2.0, m)},
    )


def to_grakel(g, edge_label=None, self_loops=True, attribute=None):
    """GraKeL's input for graph g: the edge dictionary (both orientations, every node a
    key, a self-loop once or, with ``self_loops=False``, dropped), the node labels
    ("label", as Python scalars) or, with ``attribute``, one float64 vector per node,
    and with ``edge_label`` the edge labels (both orientations)."""
    adj, edges = {i: {} for i in range(g.n_nodes)}, {}
    for k, (u, v) in enumerate(g.edges.tolist()):
        if u == v and not self_loops:
            continue
        adj[u][v] = adj[v][u] = 1.0
        if edge_label is not None:
            edges[u, v] = edges[v, u] = g.edge_attrs[edge_label][k].item()
    if attribute is None:
        nodes = {i: x.item() for i, x in enumerate(g.node_attrs["label"])}
    else:
        nodes = {i: np.asarray(x, dtype=np.float64) for i, x in enumerate(g.node_attrs[attribute])}
    return [adj, nodes, edges] if edge_label is not None else [adj, nodes]


def bits(a):
    """The float64 values as integers: equal arrays of bits, not merely equal numbers (-0.0, NaN)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return a.view(np.uint64)


def assert_bit_identical(actual, expected, what="values"):
    """Assert two float64 arrays hold the same bits; the message says how many entries
    differ and by how much (relative)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, "%s: shape %s, expected %s" % (what, actual.shape, expected.shape)
    assert actual.dtype == np.float64, "%s: dtype %s" % (what, actual.dtype)
    diff = bits(actual) != bits(expected)
    if diff.any():
        rel = np.abs(actual - expected)[diff] / np.maximum(np.abs(expected[diff]), 1e-300)
        raise AssertionError("%s: %d of %d entries differ in their bits, by up to %.3g relative"
                             % (what, diff.sum(), diff.size, np.nanmax(rel) if rel.size else 0.0))


def assert_pair_only(kernel, graphs, rng):
    """Assert that kernel's values of graphs (at least 21, with a "label" node
    attribute) are the same bits in any call: permuted, crosswise with n_jobs=1,
    swapped sides, the diagonal, and beside a graph with labels the others lack.
    Returns the Gram matrix of graphs."""
    full = kernel(graphs)
    order = rng.permutation(len(graphs))
    back = np.argsort(order)
    assert_bit_identical(kernel([graphs[i] for i in order])[np.ix_(back, back)], full, "permuted")
    jobs = kernel.n_jobs
    assert_bit_identical(kernel.set_params(n_jobs=1)(graphs[:5], graphs[20:]), full[:5, 20:], "cross")
    kernel.set_params(n_jobs=jobs)
    assert_bit_identical(kernel(graphs[20:], graphs[:5]), full[20:, :5], "swapped")
    assert_bit_identical(kernel.diag(graphs[3:9]), np.diag(full)[3:9], "diag")
    odd = graphgram.Graph(3, np.array([[0, 1], [1, 2]]), node_attrs={"label": np.array([99, 100, 0])})
    assert_bit_identical(kernel(graphs[:7] + [odd])[:7, :7], full[:7, :7], "extra labels")
    return full


def assert_label_errors(make, graphs):
    """Assert that the kernel make(**params) names the graph and the field of a
    missing or non-integer node label."""
    with pytest.raises(ValueError, match=r"X\[0\] has no node attribute 'kind'"):
        make(node_label="kind")(graphs)
    bad = graphgram.Graph(2, np.array([[0, 1]]), node_attrs={"label": np.array([0.5, 1.0])})
    with pytest.raises(TypeError, match=r"X\[1\].*non-integer"):
        make()([graphs[0], bad])
    # NaN labels never reach a kernel: the graph refuses them.
    with pytest.raises(ValueError, match="NaN"):
        graphgram.Graph(2, np.array([[0, 1]]), node_attrs={"label": np.array([np.nan, 1.0])})


@pytest.fixture
def rng():
    return np.random.default_rng(20261123)


@pytest.fixture
def ticking_clock(monkeypatch):
    """The Gaussian-process optimizers' clock (``_lbfgs._clock``) replaced by one of the
    test's own: ``ticking_clock.tick(f)`` is f advancing it by one second per call, and
    ``ticking_clock.started`` the clock's reading at the start of each call."""
    from types import SimpleNamespace
    from graphgram.gaussian_process import _lbfgs
    clock, started = [0.0], []
    monkeypatch.setattr(_lbfgs, "_clock", lambda: clock[0])

    def tick(f):
        def timed(*args):
            started.append(clock[0])
            clock[0] += 1.0
            return f(*args)
        return timed

    return SimpleNamespace(tick=tick, started=started)
