#!/usr/bin/env python3
r"""The WL and core frameworks (WL-shortest-path, Core-SP, Core-WL) against GraKeL.

    PYTHONPATH=python python3 benchmarks/bench_frameworks.py speed      # NCI1: graphgram vs GraKeL
    PYTHONPATH=python python3 benchmarks/bench_frameworks.py accuracy   # MUTAG: 10-fold SVC, both

speed
    The whole public call, normalized, on full NCI1 (4,110 graphs) for graphgram
    and on the first --subset graphs for both (GraKeL's input built beforehand,
    not timed; the matrices on the subset compared entry by entry): GraKeL's
    ``WeisfeilerLehman(n_iter=5, base_graph_kernel=ShortestPath)`` and
    ``CoreFramework(base_graph_kernel=ShortestPath / (WeisfeilerLehman,
    {"n_iter": 5}))`` against ``WLFramework(ShortestPathKernel(node_kernel=
    TensorProduct(label=KroneckerDelta(0.0))), n_iter=5)`` and ``CoreFramework``
    over it and over ``WeisfeilerLehmanKernel(n_iter=5)``. Best of --repeat runs.
accuracy
    10-fold stratified cross-validation of SVC(kernel="precomputed") (C by an
    inner 3-fold grid, bench_explicit.cv_accuracy) on MUTAG, graphgram's and
    GraKeL's normalized matrices of the same kernels.

Data sets are read from $GRAPHGRAM_DATASETS (--datasets). The CPU, cores and
load average are printed.
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from _common import DATASETS, best_of, machine, require  # noqa: E402
from bench_explicit import cv_accuracy, grakel_input  # noqa: E402

from graphgram import CoreFramework, ShortestPathKernel, WeisfeilerLehmanKernel, WLFramework  # noqa: E402
from graphgram.datasets import load_tu  # noqa: E402
from graphgram.microkernels import KroneckerDelta, TensorProduct  # noqa: E402


def kernels(h=5):
    """name -> (graphgram kernel, GraKeL kernel), both normalized."""
    import grakel.kernels as gk

    def sp():
        return ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)), verbose=False)
    return {
        "WL-SP h=%d" % h: (WLFramework(sp(), n_iter=h, normalize=True, verbose=False),
                           lambda: gk.WeisfeilerLehman(n_iter=h, base_graph_kernel=gk.ShortestPath, normalize=True)),
        "Core-SP": (CoreFramework(sp(), normalize=True, verbose=False),
                    lambda: gk.CoreFramework(base_graph_kernel=gk.ShortestPath, normalize=True)),
        "Core-WL h=%d" % h: (CoreFramework(WeisfeilerLehmanKernel(n_iter=h), normalize=True, verbose=False),
                             lambda: gk.CoreFramework(base_graph_kernel=(gk.WeisfeilerLehman, {"n_iter": h}),
                                                      normalize=True)),
    }


def speed(root, repeat, subset):
    graphs, _ = load_tu(root / "NCI1")
    part = graphs[:subset]
    gk_part = grakel_input(part)
    print("NCI1: %d graphs; GraKeL on the first %d" % (len(graphs), len(part)))
    for name, (ours, theirs) in kernels().items():
        _, t_full = best_of(lambda: ours(graphs), repeat)
        K, t_ours = best_of(lambda: ours(part), repeat)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            R, t_theirs = best_of(lambda: theirs().fit_transform(gk_part), 1)
        print("%-12s graphgram full NCI1 %7.2f s | subset: graphgram %6.3f s, GraKeL %7.2f s, ratio %5.0fx,"
              " max |diff| %.1e" % (name, t_full, t_ours, t_theirs, t_theirs / t_ours, np.abs(K - R).max()),
              flush=True)


def accuracy(root):
    graphs, y = load_tu(root / "MUTAG")
    gk_in = grakel_input(graphs)
    for name, (ours, theirs) in kernels().items():
        K = ours(graphs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            R = theirs().fit_transform(gk_in)
        (m, s), (mr, sr) = cv_accuracy(K, y), cv_accuracy(R, y)
        print("MUTAG %-12s graphgram %5.1f ± %4.1f %%   GraKeL %5.1f ± %4.1f %%" % (name, m, s, mr, sr), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["speed", "accuracy"])
    p.add_argument("--datasets", type=Path, default=DATASETS)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--subset", type=int, default=500)
    args = p.parse_args()
    require(args.datasets)
    print(machine())
    if args.what == "speed":
        speed(args.datasets, args.repeat, args.subset)
    else:
        accuracy(args.datasets)


if __name__ == "__main__":
    main()
