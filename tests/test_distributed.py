"""Gram matrices on a Dask LocalCluster of worker processes, bit for bit the single-process call."""

import os
import tracemalloc

import numpy as np
import pytest

from conftest import assert_bit_identical, random_graph

distributed = pytest.importorskip("distributed", reason="graphgram.distributed needs dask[distributed]")
zarr = pytest.importorskip("zarr", reason="the out-of-core output needs zarr")

from graphgram import (HashGraphKernel, MarginalizedGraphKernel, RandomWalkKernel, ShortestPathKernel,  # noqa: E402
                       WeisfeilerLehmanKernel)
from graphgram import distributed as gg_distributed  # noqa: E402
from graphgram.kernels._normalize import cosine_normalize  # noqa: E402
from graphgram.microkernels import KroneckerDelta, SquareExponential, TensorProduct  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       worker_dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def graphs(mutag):
    """Twenty MUTAG molecules: blocks of 6 give 4 row blocks, the last one short."""
    return mutag[0][:20]


def _label_kernels(normalize):
    label = TensorProduct(label=KroneckerDelta(0.5))
    return {
        "marginalized": MarginalizedGraphKernel(node_kernel=label, edge_kernel=label, q=0.05, normalize=normalize),
        # exact-match node and length kernels: the feature-map method (integer counts)
        "shortest_path": ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)), normalize=normalize),
        "random_walk": RandomWalkKernel(lamda=0.02, node_kernel=label, normalize=normalize),
        # explicit features: each block numbers its own labels, the values do not depend on it
        "weisfeiler_lehman": WeisfeilerLehmanKernel(n_iter=3, base="optimal_assignment", normalize=normalize),
        "hash": HashGraphKernel(attributes="label", n_hashes=3, bin_width=2.0, normalize=normalize),
    }


KERNELS = [(name, normalize) for normalize in (False, True) for name in ("marginalized", "shortest_path",
                                                                         "random_walk", "weisfeiler_lehman", "hash")]


@pytest.mark.parametrize("name,normalize", KERNELS, ids=["%s-%s" % (n, "norm" if z else "raw") for n, z in KERNELS])
def test_symmetric_blocks_equal_single_process(client, graphs, name, normalize):
    kernel = _label_kernels(normalize)[name]
    expected = kernel(graphs)
    actual = gg_distributed.gram(kernel, graphs, client=client, block_size=6)
    assert_bit_identical(actual, expected)
    assert not np.all(actual == 0)


@pytest.mark.parametrize("normalize", [False, True], ids=["raw", "norm"])
def test_cross_blocks_equal_single_process(client, graphs, normalize):
    kernel = _label_kernels(normalize)["marginalized"]
    X, Y = graphs[:7], graphs[7:]
    expected = kernel(X, Y)
    assert_bit_identical(gg_distributed.gram(kernel, X, Y, client=client, block_size=4), expected)


def _sp_pair_method_kernel(normalize):
    """Continuous node and length kernels: the shortest-path kernel's pair-by-pair (FCSP) method."""
    return ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.3)),
                              length_kernel=SquareExponential(1.0), normalize=normalize)


def _blocks_in_one_process(kernel, X, block_size):
    """K(X, X) assembled from single-process calls on the blocks: kernel(X[b]) and kernel(X[b], X[c]), b < c."""
    n = len(X)
    K = np.empty((n, n))
    starts = range(0, n, block_size)
    d = np.concatenate([np.diag(kernel._compute("gram", X[r:r + block_size])[0]) for r in starts])
    for r in starts:
        for c in starts:
            if c < r:
                continue
            rows, cols = X[r:r + block_size], X[c:c + block_size]
            K[r:r + len(rows), c:c + len(cols)] = kernel(rows) if c == r else kernel(rows, cols)
            if c != r and kernel.normalize:  # kernel(rows, cols) would take diagonals from kernel.diag
                K[r:r + len(rows), c:c + len(cols)] = cosine_normalize(kernel._compute("gram", rows, cols)[0],
                                                                       d[r:r + len(rows)], d[c:c + len(cols)])
            K[c:c + len(cols), r:r + len(rows)] = K[r:r + len(rows), c:c + len(cols)].T
    return K


@pytest.mark.parametrize("normalize", [False, True], ids=["raw", "norm"])
def test_shortest_path_pair_method_equals_its_blocks(client, graphs, normalize):
    """The pair methods: bit for bit the same blocks computed in one process, and kernel(X)."""
    kernel = _sp_pair_method_kernel(normalize)
    actual = gg_distributed.gram(kernel, graphs, client=client, block_size=6)
    assert_bit_identical(actual, _blocks_in_one_process(kernel, graphs, 6))
    assert_bit_identical(actual, kernel(graphs))


def test_shortest_path_pair_method_bit_identical_to_symmetric_call(client, graphs):
    """Each pair in one orientation, chosen by content (issue #32): the blocks are kernel(X), bit for bit."""
    kernel = _sp_pair_method_kernel(False)
    assert_bit_identical(gg_distributed.gram(kernel, graphs, client=client, block_size=6), kernel(graphs))


@pytest.fixture(scope="module")
def many(mutag):
    """130 + 40 MUTAG molecules: blocks of 25 give 6 row blocks of 130, the last short (issue #32)."""
    return mutag[0][:130], mutag[0][130:170]


MANY = [("marginalized", False), ("marginalized", True), ("random_walk", True), ("shortest_path_pairs", True),
        ("weisfeiler_lehman", True)]


@pytest.mark.parametrize("name,normalize", MANY, ids=["%s-%s" % (n, "norm" if z else "raw") for n, z in MANY])
def test_many_graphs_uneven_blocks_equal_single_process(client, many, name, normalize, tmp_path):
    """More graphs than a block row holds, uneven blocks: K(X), K(X, Y), Zarr and .npy outputs are bit for
    bit the single-process calls (each block is a call on other graphs, with its own label numbering)."""
    X, Y = many
    kernel = _sp_pair_method_kernel(normalize) if name == "shortest_path_pairs" else _label_kernels(normalize)[name]
    KX, KXY = kernel(X), kernel(X, Y)
    assert_bit_identical(gg_distributed.gram(kernel, X, client=client, block_size=25), KX)
    assert_bit_identical(gg_distributed.gram(kernel, X, Y, client=client, block_size=25), KXY)
    assert_bit_identical(KXY, kernel(X + Y)[:len(X), len(X):])
    if name == "marginalized":
        gg_distributed.gram(kernel, X, client=client, block_size=25, out=str(tmp_path / "K.zarr"))
        assert_bit_identical(np.asarray(zarr.open_array(store=str(tmp_path / "K.zarr"), mode="r")[:]), KX)
        gg_distributed.gram(kernel, X, Y, client=client, block_size=25, out=tmp_path / "K.npy")
        assert_bit_identical(np.load(tmp_path / "K.npy"), KXY)


def test_marginalized_diag_equals_gram_diagonal(graphs):
    """The normalized K(X, Y) takes diagonals from kernel.diag, the symmetric one from its own diagonal."""
    kernel = _label_kernels(False)["marginalized"]
    assert_bit_identical(kernel.diag(graphs), np.diag(kernel(graphs)).copy())


def test_default_block_size_and_dask_array(client, graphs):
    kernel = _label_kernels(True)["shortest_path"]
    result = gg_distributed.gram(kernel, graphs, client=client, out="dask")
    import dask.array as da
    assert isinstance(result, da.Array)
    assert_bit_identical(result.compute(), kernel(graphs))


def test_zarr_output_reads_back_equal(client, graphs, tmp_path):
    kernel = _label_kernels(True)["marginalized"]
    path = tmp_path / "K.zarr"
    stored = gg_distributed.gram(kernel, graphs, client=client, block_size=6, out=str(path))
    assert_bit_identical(np.asarray(zarr.open_array(store=str(path), mode="r")[:]), kernel(graphs))
    assert stored.shape == (20, 20)


def test_npy_memmap_output(client, graphs, tmp_path):
    kernel = _label_kernels(False)["random_walk"]
    X, Y = graphs[:9], graphs[9:]
    stored = gg_distributed.gram(kernel, X, Y, client=client, block_size=5, out=tmp_path / "K.npy")
    assert_bit_identical(np.load(tmp_path / "K.npy"), kernel(X, Y))
    assert isinstance(stored, np.memmap)
    target = np.lib.format.open_memmap(tmp_path / "given.npy", mode="w+", dtype=np.float64, shape=(9, 11))
    assert gg_distributed.gram(kernel, X, Y, client=client, block_size=5, out=target) is target
    assert_bit_identical(np.asarray(target), kernel(X, Y))


def test_zarr_run_never_holds_the_matrix_in_the_client(client, tmp_path):
    """Out of core: the calling process allocates far less than the 2000 x 2000 matrix (32 MB)."""
    rng = np.random.default_rng(13)
    X = [random_graph(rng, 4) for _ in range(2000)]
    kernel = ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))
    gg_distributed.gram(kernel, X[:10], client=client, block_size=5, out=str(tmp_path / "warm.zarr"))  # imports
    tracemalloc.start()
    try:
        gg_distributed.gram(kernel, X, client=client, block_size=200, out=str(tmp_path / "K.zarr"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    matrix_bytes = 2000 * 2000 * 8
    assert peak < matrix_bytes / 4, (peak, matrix_bytes)
    assert_bit_identical(np.asarray(zarr.open_array(store=str(tmp_path / "K.zarr"), mode="r")[:]), kernel(X))


def test_block_size_follows_parallelism_work_and_memory():
    choose = gg_distributed.choose_block_size
    # 2 threads want >= 8 symmetric tasks: 4 row blocks of 1000 graphs of 4000; big graphs need little work per pair.
    assert choose(4000, 4000, mean_nodes=1000.0, n_threads=2, thread_memory=None) == 1000
    # small graphs: a block must hold about 1e6 node pairs
    assert choose(4000, 4000, mean_nodes=20.0, n_threads=2, thread_memory=None) == 1000
    assert choose(400, 400, mean_nodes=20.0, n_threads=2, thread_memory=None) == 100
    # a block's float64 copies stay under a quarter of a thread's memory
    size = choose(100000, 100000, mean_nodes=20.0, n_threads=2, thread_memory=64e6)
    assert 4 * 8 * size * size <= 0.25 * 64e6 and size > 100
    assert choose(3, 3, mean_nodes=20.0, n_threads=64, thread_memory=None) == 3


def test_bad_arguments(client, graphs):
    kernel = _label_kernels(False)["shortest_path"]
    with pytest.raises(ValueError, match="block_size"):
        gg_distributed.gram(kernel, graphs, client=client, block_size=0)
    with pytest.raises(ValueError, match="out must be"):
        gg_distributed.gram(kernel, graphs, client=client, out="K.csv")
    with pytest.raises(TypeError, match="single Graph"):
        gg_distributed.gram(kernel, graphs[0], client=client)


class KillWorkerOnce:
    """Start probabilities p=1 that kill the Dask worker process computing them, once (a flag file).

    The worker dies inside a block task after it has finished ``after`` graphs'
    start probabilities, i.e. while blocks it computed are held in its memory.
    """

    def __init__(self, flag, after):
        self.flag = str(flag)
        self.after = after

    def __call__(self, graph):
        try:
            distributed.get_worker()
        except ValueError:
            in_worker = False
        else:
            in_worker = True
        if in_worker and not os.path.exists(self.flag):
            type(self).calls_in_process = getattr(type(self), "calls_in_process", 0) + 1
            if type(self).calls_in_process > self.after:
                open(self.flag, "w").close()
                os._exit(1)
        return np.ones(graph.n_nodes)


def test_killed_worker_result_still_exact(client, graphs, tmp_path):
    flag = tmp_path / "killed"
    label = TensorProduct(label=KroneckerDelta(0.5))
    kernel = MarginalizedGraphKernel(node_kernel=label, edge_kernel=label, q=0.05, normalize=True,
                                     p=KillWorkerOnce(flag, after=13))
    expected = kernel(graphs)  # in this process: never kills
    workers_before = set(client.scheduler_info()["workers"])
    result = gg_distributed.gram(kernel, graphs, client=client, block_size=4, out="dask").compute()
    assert flag.exists(), "no worker was killed: the test proved nothing"
    assert_bit_identical(result, expected)
    client.wait_for_workers(2, timeout=120)
    assert set(client.scheduler_info()["workers"]) != workers_before


def test_low_rank_kernel_computes_its_block_on_dask(client, graphs, monkeypatch):
    from graphgram.gaussian_process import LowRankGraphKernel

    calls = []
    real = gg_distributed.gram
    monkeypatch.setattr(gg_distributed, "gram", lambda *a, **kw: calls.append(len(a[1])) or real(*a, **kw))
    k = _label_kernels(0.5)["marginalized"]
    local = LowRankGraphKernel(k, inducing=6).fit(graphs)
    remote = LowRankGraphKernel(k, inducing=local.inducing_graphs_, dask=True)
    new = graphs[:7]
    assert_bit_identical(remote.fit(graphs).transform(new), local.transform(new))
    assert_bit_identical(remote(new, graphs), local(new, graphs))
    assert_bit_identical(remote.diag(new), local.diag(new))
    assert calls == [7, 7, 20, 7]                # each K(X, Z) block (X and Y of K(X, Y)) went through Dask


@pytest.mark.parametrize("name", ["marginalized", "weisfeiler_lehman"])
def test_library_blocks_equal_single_process(client, graphs, name, tmp_path):
    """A GraphLibrary loaded from its store (issue #51): its blocks travel to the
    workers as the folder and a range, and give the list's bits."""
    import pickle
    from graphgram import GraphLibrary
    GraphLibrary.from_graphs(graphs).save(tmp_path / "lib")
    lib = GraphLibrary.load(tmp_path / "lib")
    assert len(pickle.dumps(lib[6:12])) < 500
    kernel = _label_kernels(True)[name]
    assert_bit_identical(gg_distributed.gram(kernel, lib, client=client, block_size=6), kernel(graphs))
    assert_bit_identical(gg_distributed.gram(kernel, lib[:7], lib[7:], client=client, block_size=4),
                         kernel(graphs[:7], graphs[7:]))


@pytest.mark.parametrize("normalize", [False, 0.5])
def test_gpytorch_columns_on_dask(client, graphs, normalize, tmp_path, monkeypatch):
    """GPyTorchGraphKernel(dask=True) (issue #51): a large pool's whole columns, as a BO
    round computes them for its measured molecules, come from Dask blocks with the
    local kernel's bits, for a list pool and a loaded GraphLibrary."""
    pytest.importorskip("gpytorch")
    from graphgram import GraphLibrary
    from graphgram.gpytorch import GPyTorchGraphKernel
    from graphgram.gpytorch import _kernel as kernel_module

    monkeypatch.setattr(kernel_module, "_DENSE_CACHE_MAX", 8)      # 20 graphs: the kept-columns path
    GraphLibrary.from_graphs(graphs).save(tmp_path / "lib")
    k = _label_kernels(normalize)["marginalized"]
    calls = []
    real = gg_distributed.gram
    monkeypatch.setattr(gg_distributed, "gram", lambda *a, **kw: calls.append(len(a[2])) or real(*a, **kw))
    for pool in (graphs, GraphLibrary.load(tmp_path / "lib")):
        local, remote = GPyTorchGraphKernel(k, pool), GPyTorchGraphKernel(k, pool, dask=True)
        theta = local.theta.detach().numpy()
        positions = np.array([3, 11, 17])
        assert_bit_identical(remote._pool_columns(theta, positions), local._pool_columns(theta, positions))
    assert calls == [3, 3]
    with pytest.raises(TypeError, match="dask must be True or False"):
        GPyTorchGraphKernel(k, graphs, dask="yes")
