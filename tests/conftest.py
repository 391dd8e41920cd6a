"""Shared pytest fixtures: where the real data sets live, and random test graphs."""

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


@pytest.fixture
def rng():
    return np.random.default_rng(20261123)
