#!/usr/bin/env python3
r"""graphgram's shortest-path and random-walk kernels against GraKeL, in one process.

For each data set, both libraries compute the same symmetric Gram matrix of the
same graphs; the script prints their wall times, the ratio, the peak memory of
each call and the largest difference between the two matrices::

    PYTHONPATH=python python3 benchmarks/bench_sp_rw.py                 # SP on all four sets, RW on MUTAG
    PYTHONPATH=python python3 benchmarks/bench_sp_rw.py --only MUTAG NCI1
    PYTHONPATH=python python3 benchmarks/bench_sp_rw.py --rw-sets MUTAG ENZYMES

Rows
----
sp-labeled      ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)))
                vs grakel ShortestPath(with_labels=True): the TU node labels, hop
                counts, exact match of lengths. The values are integer counts and
                must agree exactly.
rw-unlabeled    RandomWalkKernel(lamda=0.01) vs grakel RandomWalk(lamda=0.01,
                method_type="fast", kernel_type="geometric") (conjugate gradients
                capped at 20 iterations; converged on these sets).
rw-labeled      RandomWalkKernel(lamda=0.01, node_kernel=TensorProduct(label=
                KroneckerDelta(0.0))) vs grakel RandomWalkLabeled(lamda=0.01,
                method_type="fast"). GraKeL's fast labeled method pairs labels
                crosswise and so differs from the standard definition graphgram
                computes (see docs/random_walk.md): expect a relative difference
                of about 1e-4, not rounding.

Measurements
------------
gg s, grakel s  wall time of the whole public call on a list of graphs
                (graphgram: packing plus the Go core; GraKeL: fit_transform on
                adjacency matrices and label dicts, its fastest input format);
                the best of --repeat runs for calls under 5 s, else one run
ratio           grakel s / gg s
gg MB, grakel MB  peak memory of one more call, not timed, above the memory
                before it: the larger of tracemalloc's peak (all Python and
                NumPy allocations, including memory the process reuses) and the
                rise of the resident high-water mark (Linux VmHWM, reset through
                /proc/self/clear_refs; it also sees the Go core's heap). The
                result matrix is included.
gg-K, gk-K MB   the same peaks minus the size of the result matrix (N²·8 bytes,
                135 MB for NCI1), which both libraries must allocate: the
                working memory beyond the answer
max |dK|, rel   largest absolute and relative entrywise difference

The machine's core count is printed; graphgram uses all cores (--jobs), GraKeL
one. Data sets are read from $GRAPHGRAM_DATASETS, by default shared/datasets
beside the repository (--datasets).
"""

import argparse
import gc
import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from _common import DATASETS  # noqa: E402
from graphgram.datasets import load_tu  # noqa: E402
from graphgram.microkernels import KroneckerDelta, TensorProduct  # noqa: E402
from graphgram import RandomWalkKernel  # noqa: E402
from graphgram import ShortestPathKernel  # noqa: E402

SETS = ["MUTAG", "ENZYMES", "PROTEINS", "NCI1"]
LABEL = TensorProduct(label=KroneckerDelta(0.0))


def _status_kb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return None


def _reset_peak():
    """Reset VmHWM to the current RSS; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_mb(fn):
    """Peak memory of one call of fn, in MB above the state before it: the larger of
    tracemalloc's peak (every Python and NumPy allocation, even into memory the
    process had freed before, which the resident size does not show) and the rise
    of the resident high-water mark (which also sees the Go core's heap)."""
    gc.collect()
    tracemalloc.start()
    can = _reset_peak()
    base = _status_kb("VmRSS")
    out = fn()
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    rss = (_status_kb("VmHWM") - base) / 1024 if can and base is not None else 0.0
    del out
    gc.collect()
    return max(traced, rss)


def measure(fn, repeat):
    """Return (result, best seconds, peak MB); memory comes from a separate first call
    (tracing slows Python down), the time from --repeat calls without tracing."""
    mem = peak_mb(fn)
    best = float("inf")
    out = None
    for k in range(repeat):
        del out
        gc.collect()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
        if best >= 5:
            break
    return out, best, mem


def grakel_input(graphs):
    return [[g.adjacency(), {i: int(x) for i, x in enumerate(g.node_attrs["label"])}] for g in graphs]


def row(kind, name, n, gg, gk, repeat):
    K, t_gg, m_gg = measure(gg, repeat)
    R, t_gk, m_gk = measure(gk, repeat)
    diff = np.abs(K - R)
    rel = np.max(diff / np.maximum(np.abs(R), np.finfo(float).tiny))
    k_mb = K.nbytes / 2**20
    print("%-13s %-9s %6d %9.4f %9.3f %8.1f %8.1f %9.1f %7.2f %9.1f %9.1f %11.3g %9.2g"
          % (kind, name, n, t_gg, t_gk, t_gk / t_gg, m_gg, m_gk, m_gk / m_gg if m_gg > 0 else float("nan"),
             m_gg - k_mb, m_gk - k_mb, diff.max(), rel), flush=True)
    del K, R
    gc.collect()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=str(DATASETS))
    ap.add_argument("--only", nargs="+", choices=SETS, default=SETS, help="data sets for the shortest-path rows")
    ap.add_argument("--rw-sets", nargs="*", choices=SETS, default=["MUTAG"],
                    help="data sets for the random-walk rows (GraKeL's are slow beyond MUTAG)")
    ap.add_argument("--jobs", type=int, default=None, help="graphgram threads (default: all cores)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import grakel

    print("graphgram vs GraKeL %s, %d cores, graphgram n_jobs=%s" % (grakel.__version__, os.cpu_count(), args.jobs))
    print("%-13s %-9s %6s %9s %9s %8s %8s %9s %7s %9s %9s %11s %9s"
          % ("kernel", "data set", "graphs", "gg s", "grakel s", "ratio", "gg MB", "grakel MB", "mem x",
             "gg-K MB", "gk-K MB", "max |dK|", "rel"))
    for name in SETS:
        if name not in args.only and name not in args.rw_sets:
            continue
        graphs, _ = load_tu(Path(args.datasets) / name)
        G = grakel_input(graphs)
        if name in args.only:
            sp = ShortestPathKernel(node_kernel=LABEL, n_jobs=args.jobs)
            row("sp-labeled", name, len(graphs), lambda: sp(graphs),
                lambda: grakel.ShortestPath(with_labels=True).fit_transform(G), args.repeat)
        if name in args.rw_sets:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # GraKeL must not change λ behind our back
                rw = RandomWalkKernel(lamda=0.01, n_jobs=args.jobs)
                row("rw-unlabeled", name, len(graphs), lambda: rw(graphs),
                    lambda: grakel.RandomWalk(lamda=0.01, method_type="fast",
                                              kernel_type="geometric").fit_transform([[a] for a, _ in G]),
                    args.repeat)
                rwl = RandomWalkKernel(lamda=0.01, node_kernel=LABEL, n_jobs=args.jobs)
                row("rw-labeled", name, len(graphs), lambda: rwl(graphs),
                    lambda: grakel.RandomWalkLabeled(lamda=0.01, method_type="fast").fit_transform(G),
                    args.repeat)


if __name__ == "__main__":
    main()
