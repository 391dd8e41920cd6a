"""A kernel value depends only on its two graphs and the kernel's settings (issue #32).

On the CPU, K(G, G') is the same bits whatever else is in the call: other graphs,
their order, duplicates, the side (X or Y) each graph is on, n_jobs. Hypothesis
draws call compositions over a fixed pool of 120 graphs with many distinct
labels (so that anything numbered by first appearance in a call is numbered
differently from call to call), and every entry is compared with
``np.array_equal`` against the same entry of one symmetric call on the whole pool.
"""

import csv

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphgram import Graph
from graphgram.kernels import molecular_kernel

import kernel_table
from conftest import assert_bit_identical, dataset_dir

N_POOL = 120
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)


def _pool():
    rng = np.random.default_rng(32)
    graphs = []
    for _ in range(N_POOL):
        n = int(rng.integers(3, 21))
        edges = [(int(rng.integers(0, i)), i) for i in range(1, n)]     # a tree ...
        for a, b in rng.integers(0, n, (2, 2)).tolist():                  # ... and rings
            if a < b and (a, b) not in edges:
                edges.append((a, b))
        m = len(edges)
        graphs.append(Graph(n, np.array(edges, dtype=np.int64), rng.uniform(0.5, 1.5, m),
                            node_attrs={"label": ["L%d" % v for v in rng.integers(0, 30, n)],
                                        "x": rng.normal(size=n)},
                            edge_attrs={"b": rng.integers(1, 7, m)}))
    return graphs


POOL = _pool()
# The settings of kernel_table.py's call_independence column, by id (the kernels it
# leaves out are listed as skipped cases, with the reason).
KERNELS = kernel_table.constructors("call_independence")
PARAMS = kernel_table.params("call_independence")
_REFERENCE = {}


def reference(name):
    """The kernel and its symmetric Gram matrix on the whole pool (computed once)."""
    if name not in _REFERENCE:
        k = KERNELS[name]()
        _REFERENCE[name] = k, k(POOL)
    return _REFERENCE[name]


indices = st.lists(st.integers(0, N_POOL - 1), min_size=1, max_size=24)
# A call: X, then Y (None: the symmetric call K(X, X)), and n_jobs.
calls = st.tuples(indices, st.none() | indices, st.sampled_from([1, 2]))


@pytest.mark.parametrize("name", PARAMS)
@SETTINGS
@given(call=calls)
def test_entry_depends_only_on_its_two_graphs(name, call):
    k, K = reference(name)
    x, y, jobs = call
    k = k.set_params(n_jobs=jobs)
    X = [POOL[i] for i in x]
    if y is None:
        assert_bit_identical(k(X), K[np.ix_(x, x)], "K(X)")
        assert_bit_identical(k.diag(X), np.diag(K)[x], "diag(X)")
    else:
        assert_bit_identical(k(X, [POOL[j] for j in y]), K[np.ix_(x, y)], "K(X, Y)")


def test_swapped_sides_and_halves_of_the_pool():
    """The two halves of the pool against each other, both ways round, for every kernel."""
    a, b = list(range(0, 60)), list(range(60, N_POOL))
    for name in sorted(KERNELS):
        k, K = reference(name)
        A, B = [POOL[i] for i in a], [POOL[i] for i in b]
        assert_bit_identical(k(B, A), K[np.ix_(b, a)], name + ": K(B, A)")
        assert_bit_identical(k(A, B), K[np.ix_(a, b)], name + ": K(A, B)")


_MOLECULES = {}


def molecules():
    """The molecular preset (normalize=0.5) and 100 ESOL molecules, with the reference
    K and gradient of one symmetric call."""
    if not _MOLECULES:
        pytest.importorskip("rdkit")
        from graphgram.molecules import from_smiles
        rows = list(csv.DictReader(open(dataset_dir("ESOL") / "delaney-processed.csv")))[:100]
        mols = [from_smiles(r["smiles"].strip()) for r in rows]
        k = molecular_kernel()
        K, G = k(mols, eval_gradient=True)
        _MOLECULES.update(k=k, mols=mols, K=K, G=G)
    return _MOLECULES


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(x=st.lists(st.integers(0, 99), min_size=1, max_size=16), y=st.lists(st.integers(0, 99), min_size=1, max_size=8))
def test_molecular_preset_with_gradients(x, y):
    m = molecules()
    k, mols, K, G = m["k"], m["mols"], m["K"], m["G"]
    X, Y = [mols[i] for i in x], [mols[j] for j in y]
    Kx, Gx = k(X, eval_gradient=True)
    assert_bit_identical(Kx, K[np.ix_(x, x)], "K(X)")
    assert_bit_identical(Gx, G[np.ix_(x, x)], "∂K(X)")
    assert_bit_identical(k(X, Y), K[np.ix_(x, y)], "K(X, Y)")
    assert_bit_identical(k.diag(Y), np.diag(K)[y], "diag(Y)")


def test_low_rank_within_rounding():
    """The documented exception: LowRankGraphKernel's BLAS products round differently for
    other shapes; its entries agree with one call on all graphs to 2e-15 relative."""
    from graphgram.gaussian_process import LowRankGraphKernel
    k, _ = reference("marginalized")
    lr = LowRankGraphKernel(k, inducing=POOL[100:120])
    K = lr(POOL[:100])
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.choice(100, size=int(rng.integers(1, 40)))
        y = rng.choice(100, size=int(rng.integers(1, 40)))
        np.testing.assert_allclose(lr([POOL[i] for i in x]), K[np.ix_(x, x)], rtol=2e-15, atol=0)
        np.testing.assert_allclose(lr([POOL[i] for i in x], [POOL[j] for j in y]), K[np.ix_(x, y)], rtol=2e-15,
                                   atol=0)


@pytest.mark.parametrize("name", PARAMS)
def test_library_gives_the_lists_bits(name):
    """A GraphLibrary of the pool (issue #51) computes every entry with the same
    bits as the list: a slice (a view), an index array (a copy), and a library
    against a list."""
    from graphgram.library import GraphLibrary
    k, K = reference(name)
    lib = GraphLibrary.from_graphs(POOL)
    y = np.array([7, 3, 100, 3, 55])
    assert_bit_identical(k(lib[10:30]), K[10:30, 10:30], "K(library slice)")
    assert_bit_identical(k(lib[10:30], lib[y]), K[np.ix_(np.arange(10, 30), y)], "K(slice, index array)")
    assert_bit_identical(k([POOL[i] for i in y], lib[40:52]), K[np.ix_(y, np.arange(40, 52))], "K(list, library)")
    assert_bit_identical(k.diag(lib[y]), np.diag(K)[y], "diag(library)")
