#!/usr/bin/env python3
r"""Loading TU data sets: graphgram.datasets.load_tu against GraKeL's reader, in one run.

For each TU set, the best of --repeat wall times of

* ``graphgram.datasets.load_tu(folder)``: graphs with labels and attributes, and targets;
* ``grakel.datasets.base.read_data(name)``: GraKeL's reader of the same files
  (adjacency dicts, node and edge labels, classes), the peer's equivalent call;

and their ratio (GraKeL / graphgram). The CPU, the core count and the load
average (start and end) are printed: compare ratios, not seconds, across
machines::

    PYTHONPATH=python python3 benchmarks/bench_datasets.py
    PYTHONPATH=python python3 benchmarks/bench_datasets.py --sets NCI1 --repeat 5

Data sets are read from $GRAPHGRAM_DATASETS, by default shared/datasets beside
the repository (--datasets). This replaces the test suite's former assertion
that NCI1 loads in under 2 s: the duration of work is a benchmark's business.
"""

import argparse
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from _datasets import DATASETS, require  # noqa: E402

from graphgram import datasets  # noqa: E402


def cpu_model():
    """The CPU's model name and its widest x86 SIMD extension."""
    try:
        with open("/proc/cpuinfo") as f:
            first = f.read().split("\n\n")[0]  # the first processor's entry
    except OSError:
        return platform.processor() or "unknown CPU"
    info = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in first.splitlines() if ":" in line)}
    flags = set(info.get("flags", "").split())
    simd = next((f for f in ("avx512f", "avx2") if f in flags), "no AVX2")
    return "%s (%s)" % (info.get("model name", "unknown CPU"), simd)


def best_time(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def grakel_reader(root, name):
    from grakel.datasets.base import read_data

    def load():
        cwd = os.getcwd()
        os.chdir(root)  # read_data opens NAME/NAME_*.txt relative to the working directory
        try:
            return read_data(name, with_classes=True, produce_labels_nodes=False)
        finally:
            os.chdir(cwd)
    return load


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=str(DATASETS))
    ap.add_argument("--sets", nargs="*", default=["MUTAG", "ENZYMES", "PROTEINS", "NCI1"])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    root = require(a.datasets)
    print("CPU: %s, %d cores; load average at start: %s" % (
        cpu_model(), os.cpu_count(), " ".join("%.2f" % v for v in os.getloadavg())))
    print("%-10s %8s %8s %10s %10s %7s" % ("set", "graphs", "nodes", "gg s", "grakel s", "ratio"))
    for name in a.sets:
        graphs, _ = datasets.load_tu(root / name)  # also warms the file cache for both readers
        gg = best_time(lambda: datasets.load_tu(root / name), a.repeat)
        gk = best_time(grakel_reader(root, name), a.repeat)
        print("%-10s %8d %8d %10.3f %10.3f %7.1f" % (name, len(graphs), sum(g.n_nodes for g in graphs), gg, gk, gk / gg))
    print("load average at end: %s" % " ".join("%.2f" % v for v in os.getloadavg()))


if __name__ == "__main__":
    main()
