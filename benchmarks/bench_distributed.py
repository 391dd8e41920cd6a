#!/usr/bin/env python3
r"""Gram matrix of an NCI1 subset on a Dask LocalCluster of worker processes vs one single-process call.

Everything in one run on one machine::

    PYTHONPATH=python python3 benchmarks/bench_distributed.py              # 400 NCI1 graphs, 2 worker processes
    PYTHONPATH=python python3 benchmarks/bench_distributed.py --n 1000 --workers 2 --block-size 100

Rows
----
single call        ``kernel(X)`` in this process, Go using all cores (n_jobs=None)
single, n_jobs=1   the same call on one Go thread: the work a block task does per pair
blocks serially    the blocks of the distributed run, each ``kernel(X[b])`` or
                   ``kernel(X[b], X[c])`` called one after another in this process on one
                   Go thread: what redoing the per-call preparation (Python packing, the Go
                   core's per-graph preprocessing) for each block costs, against "single, n_jobs=1"
dask -> numpy      ``graphgram.distributed.gram(kernel, X)`` on LocalCluster(--workers
                   processes, 1 thread each), cluster start not included; result compared bit
                   for bit with the single call
dask -> zarr       the same to a Zarr array on disk; peak memory of this process (tracemalloc)
                   and the workers' resident high-water marks, against the matrix size

Kernel: MarginalizedGraphKernel with KroneckerDelta(0.5) on node ``label``, q=0.01
(as benchmarks/bench_mgk.py's NCI1 row), normalize=True. The subset is seeded.
The machine may be shared: its load average is printed at start and end.
"""

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from _common import DATASETS  # noqa: E402
import graphgram  # noqa: E402
from graphgram import MarginalizedGraphKernel, datasets  # noqa: E402
from graphgram import distributed as gg_distributed  # noqa: E402
from graphgram.microkernels import KroneckerDelta, TensorProduct  # noqa: E402


def _worker_peak_rss():
    """This process's resident high-water mark in bytes (run on the workers)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _timed(f):
    t0 = time.perf_counter()
    value = f()
    return value, time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=400, help="NCI1 graphs (seeded subset)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (1 thread each)")
    parser.add_argument("--block-size", type=int, default=None, help="graphs per block (default: chosen)")
    parser.add_argument("--datasets", default=str(DATASETS))
    args = parser.parse_args()

    import distributed

    graphs, _ = datasets.load_tu(os.path.join(args.datasets, "NCI1"))
    rng = np.random.default_rng(20261123)
    X = [graphs[i] for i in np.sort(rng.choice(len(graphs), size=min(args.n, len(graphs)), replace=False))]
    kernel = MarginalizedGraphKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.5)), q=0.01, normalize=True,
                                     verbose=False)
    n = len(X)
    matrix_mb = n * n * 8 / 1e6
    print("NCI1 subset: %d graphs, %.1f nodes on average, %d pairs (upper triangle), matrix %.2f MB"
          % (n, np.mean([g.n_nodes for g in X]), n * (n + 1) // 2, matrix_mb))
    print("cores: %d, load average at start: %s" % (os.cpu_count(), " ".join("%.1f" % v for v in os.getloadavg())))
    print("graphgram %s, Go core %s, dask %s" % (graphgram.__version__, graphgram._backend.go_version(),
                                                 distributed.__version__))
    rows = []

    expected, t_single = _timed(lambda: kernel(X))
    rows.append(("single call (n_jobs=all)", t_single, ""))
    serial_kernel = MarginalizedGraphKernel(**{**kernel.get_params(deep=False), "n_jobs": 1})
    _, t_single_1 = _timed(lambda: serial_kernel(X))
    rows.append(("single call (n_jobs=1)", t_single_1, ""))

    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, worker_dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        threads, memory = gg_distributed._cluster_resources(client)
        block = args.block_size or gg_distributed.choose_block_size(n, n, np.mean([g.n_nodes for g in X]), threads,
                                                                    memory)
        starts = list(range(0, n, block))

        def blocks_serially():
            for i, r in enumerate(starts):
                serial_kernel._compute("gram", X[r:r + block])
                for c in starts[i + 1:]:
                    serial_kernel._compute("gram", X[r:r + block], X[c:c + block])
        _, t_blocks = _timed(blocks_serially)
        rows.append(("blocks serially (n_jobs=1), %d blocks of %d" % (len(starts) * (len(starts) + 1) // 2, block),
                     t_blocks, "x%.3f of single n_jobs=1" % (t_blocks / t_single_1)))

        result, t_dask = _timed(lambda: gg_distributed.gram(kernel, X, client=client, block_size=block))
        same = np.array_equal(result.view(np.uint64), expected.view(np.uint64))
        rows.append(("dask -> numpy, %d workers" % args.workers, t_dask,
                     "x%.3f of single call; bit-identical: %s" % (t_dask / t_single, same)))

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "K.zarr")
            tracemalloc.start()
            _, t_zarr = _timed(lambda: gg_distributed.gram(kernel, X, client=client, block_size=block, out=path))
            client_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            import zarr
            stored = np.asarray(zarr.open_array(store=path, mode="r")[:])
            same_zarr = np.array_equal(stored.view(np.uint64), expected.view(np.uint64))
        worker_rss = client.run(_worker_peak_rss)
        rows.append(("dask -> zarr, %d workers" % args.workers, t_zarr,
                     "bit-identical: %s; client peak %.2f MB, worker peak RSS %s MB, matrix %.2f MB"
                     % (same_zarr, client_peak / 1e6, "/".join("%.0f" % (v / 1e6) for v in worker_rss.values()),
                        matrix_mb)))

    print()
    for name, seconds, note in rows:
        print("%-48s %8.2f s  %s" % (name, seconds, note))
    print("load average at end: %s" % " ".join("%.1f" % v for v in os.getloadavg()))


if __name__ == "__main__":
    main()
