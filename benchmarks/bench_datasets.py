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
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from _common import DATASETS, best_of, machine, require  # noqa: E402

from graphgram import datasets  # noqa: E402


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
    print(machine())
    print("%-10s %8s %8s %10s %10s %7s" % ("set", "graphs", "nodes", "gg s", "grakel s", "ratio"))
    for name in a.sets:
        graphs, _ = datasets.load_tu(root / name)  # also warms the file cache for both readers
        gg = best_of(lambda: datasets.load_tu(root / name), a.repeat)[1]
        gk = best_of(grakel_reader(root, name), a.repeat)[1]
        print("%-10s %8d %8d %10.3f %10.3f %7.1f" % (name, len(graphs), sum(g.n_nodes for g in graphs), gg, gk, gk / gg))
    print("load average at end: %s" % " ".join("%.2f" % v for v in os.getloadavg()))


if __name__ == "__main__":
    main()
