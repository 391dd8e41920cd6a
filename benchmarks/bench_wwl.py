#!/usr/bin/env python3
r"""The Wasserstein Weisfeiler-Lehman kernel: time and 10-fold SVC accuracy.

GraKeL has no WWL kernel. The time peer is the authors' approach, POT's exact
``ot.emd2`` (network simplex, C++) called per pair on node embeddings computed
in NumPy (tests/test_wwl.py's reference), timed on a subset; the accuracy peer
is graphgram's WL subtree kernel under the same protocol::

    .venv/bin/python benchmarks/bench_wwl.py                       # MUTAG discrete, ENZYMES continuous
    .venv/bin/python benchmarks/bench_wwl.py --sets MUTAG --peer-subset 60

Rows
----
MUTAG discrete     node labels, h in --iters, D computed once per h
ENZYMES continuous the 18 node attributes (as given), h in --iters

Measurements
------------
gram s        wall and CPU time of ``distances(X)`` for the whole set and each h, all cores
pot s, gg1 s  the same distances on the first --peer-subset graphs: POT per pair
              (embeddings and costs in NumPy) and graphgram with n_jobs=1; max |ΔD|
min eig       the smallest eigenvalue of exp(-γD) / its largest (the kernel is
              indefinite when negative)
accuracy      nested 10-fold CV (StratifiedKFold, shuffle, seed 0): in each outer
              fold h, γ and C are chosen by inner 5-fold CV on the training part;
              γ·median(D) in {0.1, 0.3, 1, 3, 10}, C in {0.1, 1, 10, 100}; a plain
              SVC(kernel="precomputed") on the (possibly indefinite) kernel, no
              Krein SVM and no eigenvalue clipping (the paper uses a Krein SVM)
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import DATASETS, machine, require  # noqa: E402
import graphgram  # noqa: E402
from graphgram.datasets import load_tu  # noqa: E402

GAMMA_REL = (0.1, 0.3, 1.0, 3.0, 10.0)
CS = (0.1, 1.0, 10.0, 100.0)


def nested_cv(kernels, y, folds=10, inner=5, seed=0):
    """kernels: {name: K}. Returns the outer accuracies (model chosen per fold by inner CV)."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC
    outer = StratifiedKFold(folds, shuffle=True, random_state=seed)
    acc = []
    for tr, te in outer.split(np.zeros(len(y)), y):
        best, best_score = None, -1.0
        for name, K in kernels.items():
            for C in CS:
                scores = []
                for itr, ite in StratifiedKFold(inner, shuffle=True, random_state=seed).split(tr, y[tr]):
                    a, b = tr[itr], tr[ite]
                    clf = SVC(kernel="precomputed", C=C).fit(K[np.ix_(a, a)], y[a])
                    scores.append(clf.score(K[np.ix_(b, a)], y[b]))
                if np.mean(scores) > best_score:
                    best, best_score = (name, C), np.mean(scores)
        name, C = best
        K = kernels[name]
        clf = SVC(kernel="precomputed", C=C).fit(K[np.ix_(tr, tr)], y[tr])
        acc.append(clf.score(K[np.ix_(te, tr)], y[te]))
    return np.array(acc)


def cpu_seconds():
    """User plus system CPU time of this process (all threads): what a loaded machine disturbs least."""
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pot_distances(graphs, k):
    import ot
    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_wwl import wl_sequences, propagated
    n = len(graphs)
    D = np.zeros((n, n))
    if k.continuous:
        E = [propagated(g, k.n_iter, k.attributes) for g in graphs]
        cost = lambda a, b: ot.dist(E[a], E[b], metric="euclidean")  # noqa: E731
    else:
        ids = {}
        E = [np.array([[ids.setdefault(x, len(ids)) for x in s] for s in wl_sequences(g, k.n_iter, k.node_label)])
             for g in graphs]
        cost = lambda a, b: (E[a][:, None, :] != E[b][None, :, :]).mean(axis=2)  # noqa: E731
    for i in range(n):
        for j in range(i + 1, n):
            M = cost(i, j)
            D[i, j] = D[j, i] = ot.emd2(np.full(M.shape[0], 1 / M.shape[0]), np.full(M.shape[1], 1 / M.shape[1]), M)
    return D


def peer(sub, opts, a):
    """Time the distances of the graphs sub: POT per pair against graphgram on one core."""
    k = graphgram.WassersteinWLKernel(n_iter=a.peer_iter, verbose=False, n_jobs=1, **opts)
    t = time.perf_counter()
    d1 = k.distances(sub)
    gg1 = time.perf_counter() - t
    try:
        t = time.perf_counter()
        dp = pot_distances(sub, k)
        pot = time.perf_counter() - t
    except ImportError:
        print("peer: POT not installed (pip install POT)")
        return
    print("peer, first %d graphs, h=%d: pot %.2f s, graphgram n_jobs=1 %.2f s, ratio %.2f, max |dD| %.2g"
          % (len(sub), a.peer_iter, pot, gg1, pot / gg1, np.abs(dp - d1).max()))


def run(name, graphs, y, continuous, a):
    print("\n== %s (%d graphs), %s; %s" % (name, len(graphs), "continuous" if continuous else "discrete", machine()))
    opts = dict(continuous=True, attributes="attributes") if continuous else dict(node_label="label")
    if a.peer_subset:
        peer(graphs[:a.peer_subset], opts, a)
    Ds = {}
    for h in a.iters:
        k = graphgram.WassersteinWLKernel(n_iter=h, verbose=False, **opts)
        t, c = time.perf_counter(), cpu_seconds()
        Ds[h] = k.distances(graphs)
        print("h=%d: distances of all %d pairs in %.2f s, CPU %.2f s (%s)" % (
            h, len(graphs) * (len(graphs) + 1) // 2, time.perf_counter() - t, cpu_seconds() - c, machine()))
    kernels = {}
    for h, D in Ds.items():
        med = np.median(D[np.triu_indices(len(D), 1)])
        for g in GAMMA_REL:
            K = np.exp(-(g / med) * D)
            kernels[(h, g)] = K
        w = np.linalg.eigvalsh(np.exp(-D / med))
        print("h=%d: median D %.4g; exp(-D/median): min eig / max eig %.3g" % (h, med, w[0] / w[-1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = nested_cv(kernels, y, a.folds)
    print("WWL accuracy (nested %d-fold): %.1f ± %.1f %%" % (a.folds, 100 * acc.mean(), 100 * acc.std()))
    if not continuous:
        wl = {h: graphgram.WeisfeilerLehmanKernel(n_iter=h, normalize=True, verbose=False)(graphs) for h in a.iters}
        acc = nested_cv(wl, y, a.folds)
        print("WL subtree (normalized) accuracy, same protocol: %.1f ± %.1f %%" % (100 * acc.mean(), 100 * acc.std()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=DATASETS, type=Path)
    ap.add_argument("--sets", nargs="*", default=["MUTAG", "ENZYMES"])
    ap.add_argument("--iters", nargs="*", type=int, default=[1, 2, 3, 4])
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--peer-subset", type=int, default=100, help="0: no peer timing")
    ap.add_argument("--peer-iter", type=int, default=3)
    a = ap.parse_args()
    root = require(a.datasets)
    for name in a.sets:
        graphs, y = load_tu(root / name)
        run(name, graphs, np.asarray(y), name != "MUTAG", a)


if __name__ == "__main__":
    main()
