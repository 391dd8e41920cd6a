#!/usr/bin/env python3
r"""Propagation kernels (PropagationKernel, PropagationAttrKernel) against GraKeL's
Propagation and PropagationAttr, in one run.

    PYTHONPATH=python python3 benchmarks/bench_propagation.py speed      # NCI1: graphgram vs GraKeL
    PYTHONPATH=python python3 benchmarks/bench_propagation.py accuracy   # 10-fold SVC, MUTAG and ENZYMES

speed
    The whole public call ``PropagationKernel(t_max=5, w=0.01)(graphs)`` against
    GraKeL's ``Propagation(t_max=5, w=0.01, M="TV", random_state=0).fit_transform``
    on the same graphs (GraKeL's input built beforehand, not timed): on the first
    --subset NCI1 graphs (0 for all 4,110), then graphgram alone on full NCI1.
    GraKeL's draws differ from ours, so the matrices are not compared here
    (tests/test_propagation.py compares them with the draws made equal).
accuracy
    bench_explicit.py's 10-fold stratified SVC (C by an inner 3-fold grid) on the
    normalized kernels: graphgram's and GraKeL's, each with its own random hash
    functions (random_state 0), on MUTAG and ENZYMES (labels; and the 18
    attributes with PropagationAttr, w=4).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from _common import DATASETS, best_of, machine, require  # noqa: E402
from bench_explicit import cv_accuracy, grakel_input  # noqa: E402

from graphgram import PropagationAttrKernel, PropagationKernel  # noqa: E402
from graphgram.datasets import load_tu  # noqa: E402


def speed(root, repeat, subset):
    from grakel.kernels import Propagation

    graphs, _ = load_tu(root / "NCI1")
    sub = graphs[:subset] if subset else graphs
    gk = grakel_input(sub)
    _, t_gg = best_of(lambda: PropagationKernel(t_max=5, w=0.01)(sub), repeat)
    _, t_gk = best_of(lambda: Propagation(t_max=5, w=0.01, M="TV", random_state=0).fit_transform(gk), 1)
    print("propagation t_max=5 w=0.01 TV, %d NCI1 graphs: graphgram %.3f s, GraKeL %.2f s, ratio %.0f"
          % (len(sub), t_gg, t_gk, t_gk / t_gg), flush=True)
    _, t_full = best_of(lambda: PropagationKernel(t_max=5, w=0.01)(graphs), repeat)
    F, t_f = best_of(lambda: PropagationKernel(t_max=5, w=0.01).features(graphs), repeat)
    print("propagation t_max=5, full NCI1 (%d graphs): graphgram Gram %.3f s, features alone %.3f s (%d columns)"
          % (len(graphs), t_full, t_f, F.shape[1]), flush=True)


def grakel_attr_input(graphs):
    out = []
    for g, (adj, _) in zip(graphs, grakel_input(graphs)):
        out.append([adj, {i: np.asarray(x, dtype=float) for i, x in enumerate(g.node_attrs["attributes"])}])
    return out


def accuracy(root, sets):
    from grakel.kernels import Propagation, PropagationAttr

    for name in sets:
        graphs, y = load_tu(root / name)
        rows = {
            "graphgram PropagationKernel(t_max=5, w=0.01)":
                lambda: PropagationKernel(t_max=5, w=0.01, normalize=True)(graphs),
            "GraKeL Propagation(t_max=5, w=0.01)":
                lambda: Propagation(t_max=5, w=0.01, normalize=True, random_state=0).fit_transform(
                    grakel_input(graphs)),
        }
        if "attributes" in graphs[0].node_attrs:
            rows["graphgram PropagationAttrKernel(t_max=5, w=4)"] = \
                lambda: PropagationAttrKernel(t_max=5, w=4.0, normalize=True)(graphs)
            rows["GraKeL PropagationAttr(t_max=5, w=4)"] = \
                lambda: PropagationAttr(t_max=5, w=4.0, normalize=True, random_state=0).fit_transform(
                    grakel_attr_input(graphs))
        for kname, make in rows.items():
            t = time.perf_counter()
            K = make()
            t_k = time.perf_counter() - t
            mean, std = cv_accuracy(K, y)
            print("%-8s %-46s %5.1f ± %4.1f %%   (Gram %.2f s)" % (name, kname, mean, std, t_k), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["speed", "accuracy"])
    ap.add_argument("--datasets", default=str(DATASETS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--subset", type=int, default=1000, help="NCI1 graphs GraKeL is timed on (0: all)")
    ap.add_argument("--sets", nargs="*", default=["MUTAG", "ENZYMES"])
    a = ap.parse_args()
    root = require(a.datasets)
    print(machine(), flush=True)
    if a.what == "speed":
        speed(root, a.repeat, a.subset)
    else:
        accuracy(root, a.sets)
    print(machine(), flush=True)


if __name__ == "__main__":
    main()
