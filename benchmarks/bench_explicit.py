#!/usr/bin/env python3
r"""Explicit-feature kernels (Weisfeiler–Lehman subtree and optimal assignment,
hash graph kernel, neighborhood hash, graphlets) against GraKeL, in one run.

    PYTHONPATH=python python3 benchmarks/bench_explicit.py speed       # NCI1: graphgram vs GraKeL
    PYTHONPATH=python python3 benchmarks/bench_explicit.py nh-graphlets  # NCI1: NH, graphlets vs GraKeL
    PYTHONPATH=python python3 benchmarks/bench_explicit.py nspdk       # NCI1 speed, MUTAG accuracy: NSPDK vs GraKeL
    PYTHONPATH=python python3 benchmarks/bench_explicit.py pyramid     # NCI1 speed, MUTAG/NCI1 accuracy: pyramid match
    PYTHONPATH=python python3 benchmarks/bench_explicit.py oddsth      # NCI1 speed, MUTAG/NCI1 accuracy: ODD-STh
    PYTHONPATH=python python3 benchmarks/bench_explicit.py linear      # features + LinearSVC, 100,000 graphs
    PYTHONPATH=python python3 benchmarks/bench_explicit.py accuracy    # 10-fold CV accuracies

speed
    The whole public call on full NCI1 (4,110 graphs): ``WeisfeilerLehmanKernel(
    n_iter=5, normalize=True)(graphs)`` against GraKeL's ``WeisfeilerLehman(n_iter=5,
    base_graph_kernel=VertexHistogram, normalize=True).fit_transform`` on the same
    graphs (GraKeL's input built beforehand, not timed), and the optimal
    assignment on full NCI1, against GraKeL's ``WeisfeilerLehmanOptimalAssignment``
    on a subset it finishes (--oa-subset graphs, both timed on it). Best of
    --repeat runs; the matrices are compared entry by entry (the optimal
    assignment on graphs without isolated nodes, which GraKeL drops).
nh-graphlets
    ``NeighborhoodHashKernel(R=3)`` (simple and count-sensitive) on full NCI1
    against GraKeL's ``NeighborhoodHash(R=3)`` on --nh-subset graphs (both timed
    there; GraKeL given graphgram's initial bit strings, the matrices compared);
    ``GraphletSamplingKernel(k=5)`` exact and with 1,000 samples per graph on full
    NCI1, against GraKeL's ``GraphletSampling(k=5, sampling={"n_samples": 1000})``
    on --gl-subset graphs (its samples mix sizes 3..5: timings only).
nspdk
    ``NSPDKKernel(r=3, d=4)`` on full NCI1 (no edge labels) against GraKeL's
    ``NeighborhoodSubgraphPairwiseDistance(r=3, d=4)`` on --nspdk-subset graphs
    (both timed there; GraKeL's values differ by definition at r=3, d=4, see the
    class's docstring, so the matrices are compared at r=d=2 with GraKeL's
    encoding sorted); then 10-fold SVC accuracy on MUTAG with bond labels, both
    normalized, beside GraKeL's.
pyramid
    ``PyramidMatchKernel(L=4, d=6, normalize=True)`` on full NCI1 against GraKeL's
    ``PyramidMatch(L=4, d=6, normalize=True)`` on --pyramid-subset graphs (0: all;
    both timed there); the matrices compared with GraKeL's level sum corrected
    (``tests/test_pyramid_match.py``), on all graphs and on those whose embedding
    is unique; then 10-fold SVC accuracy on MUTAG (both) and NCI1 (graphgram; GraKeL
    with --pyramid-subset 0).
oddsth
    ``OddSthKernel(h=--oddsth-h, normalize=True)`` on full NCI1 against GraKeL's
    ``OddSth(h, normalize=True)`` on --oddsth-subset graphs (0: all; both timed
    there); GraKeL's feature counts (its children sorted, ``tests/test_oddsth.py``)
    compared with ours; then 10-fold SVC accuracy on MUTAG and NCI1 (GraKeL's
    on MUTAG, with its call-dependent weights).
linear
    ``features(X)`` of --copies copies of NCI1 (each copy's node labels shifted, so
    that its features are new columns) and ``LinearSVC`` on them: time and peak
    resident memory of each step; no Gram matrix is formed.
accuracy
    10-fold stratified cross-validation of SVC(kernel="precomputed") with C chosen
    by an inner 3-fold grid over 10^-3..10^3, on the normalized kernels, 10
    repetitions are not run (one seeded split); the mean and standard deviation
    over folds.

Data sets are read from $GRAPHGRAM_DATASETS, by default shared/datasets beside
the repository (--datasets). The CPU, cores and load average are printed.
"""

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from _common import DATASETS, best_of, machine, require  # noqa: E402

from graphgram import (Graph, GraphletSamplingKernel, HashGraphKernel, NeighborhoodHashKernel,  # noqa: E402
                       NSPDKKernel, OddSthKernel, PyramidMatchKernel, WeisfeilerLehmanKernel)
from graphgram.datasets import load_tu  # noqa: E402


def grakel_input(graphs):
    out = []
    for g in graphs:
        adj = {i: {} for i in range(g.n_nodes)}
        for u, v in g.edges.tolist():
            adj[u][v] = adj[v][u] = 1.0
        out.append([adj, {i: x.item() for i, x in enumerate(g.node_attrs["label"])}])
    return out


def speed(root, repeat, oa_subset):
    from grakel.kernels import VertexHistogram, WeisfeilerLehman, WeisfeilerLehmanOptimalAssignment

    graphs, _ = load_tu(root / "NCI1")
    gk = grakel_input(graphs)
    print("NCI1: %d graphs" % len(graphs))
    K, t_gg = best_of(lambda: WeisfeilerLehmanKernel(n_iter=5, normalize=True)(graphs), repeat)
    R, t_gk = best_of(lambda: WeisfeilerLehman(n_iter=5, base_graph_kernel=VertexHistogram,
                                               normalize=True).fit_transform(gk), max(1, repeat // 2))
    print("WL subtree h=5, normalized, full NCI1: graphgram %.3f s, GraKeL %.3f s, ratio %.1f, max |dK| %.2g"
          % (t_gg, t_gk, t_gk / t_gg, np.abs(K - R).max()), flush=True)
    _, t_oa = best_of(lambda: WeisfeilerLehmanKernel(n_iter=5, base="optimal_assignment", normalize=True)(graphs),
                      repeat)
    print("WL optimal assignment h=5, normalized, full NCI1: graphgram %.3f s" % t_oa, flush=True)
    sub = [g for g in graphs if g.n_nodes == np.unique(g.edges).size][:oa_subset]
    gsub = grakel_input(sub)
    K, t_gg = best_of(lambda: WeisfeilerLehmanKernel(n_iter=5, base="optimal_assignment")(sub), repeat)
    R, t_gk = best_of(lambda: WeisfeilerLehmanOptimalAssignment(n_iter=5).fit_transform(gsub), 1)
    print("WL optimal assignment h=5, %d NCI1 graphs without isolated nodes: graphgram %.4f s, GraKeL %.3f s, "
          "ratio %.0f, max |dK| %.2g" % (len(sub), t_gg, t_gk, t_gk / t_gg, np.abs(K - R).max()), flush=True)


def nh_graphlets(root, repeat, nh_subset, gl_subset):
    from grakel.kernels import GraphletSampling, NeighborhoodHash
    from grakel.kernels import neighborhood_hash as nh_module

    graphs, _ = load_tu(root / "NCI1")
    print("NCI1: %d graphs" % len(graphs))
    for nh_type in ("simple", "count_sensitive"):
        kernel = NeighborhoodHashKernel(R=3, nh_type=nh_type)
        _, t_full = best_of(lambda: kernel(graphs), repeat)
        sub = graphs[:nh_subset]
        K, t_gg = best_of(lambda: kernel(sub), repeat)
        nh_module.zip = lambda labels, draws: iter(list(zip(labels, kernel.label_bits(list(labels)))))
        gsub = grakel_input(sub)
        R, t_gk = best_of(lambda: NeighborhoodHash(R=3, nh_type=nh_type).fit_transform(gsub), 1)
        del nh_module.zip
        print("NH %s R=3: graphgram full NCI1 %.3f s; %d graphs: graphgram %.4f s, GraKeL %.2f s, ratio %.0f, "
              "max |dK| %.2g" % (nh_type, t_full, len(sub), t_gg, t_gk, t_gk / t_gg, np.abs(K - R).max()),
              flush=True)
    _, t_exact = best_of(lambda: GraphletSamplingKernel(k=5)(graphs), 1)
    print("graphlets k=5 exact (all C(n, 5) subsets), full NCI1: graphgram %.2f s" % t_exact, flush=True)
    kernel = GraphletSamplingKernel(k=5, sampling=1000)
    _, t_full = best_of(lambda: kernel(graphs), repeat)
    sub = graphs[:gl_subset]
    _, t_gg = best_of(lambda: kernel(sub), repeat)
    gsub = grakel_input(sub)
    _, t_gk = best_of(lambda: GraphletSampling(k=5, sampling={"n_samples": 1000}, random_state=0)
                      .fit_transform(gsub), 1)
    print("graphlets k=5, 1000 samples/graph: graphgram full NCI1 %.3f s; %d graphs: graphgram %.4f s, "
          "GraKeL %.2f s, ratio %.0f" % (t_full, len(sub), t_gg, t_gk, t_gk / t_gg), flush=True)


def nspdk(root, repeat, subset):
    from grakel.kernels import NeighborhoodSubgraphPairwiseDistance as GNSPDK
    from grakel.kernels import neighborhood_subgraph_pairwise_distance as module

    def with_bonds(graphs, bonds):
        gk = grakel_input(graphs)
        for x, g in zip(gk, graphs):
            labels = g.edge_attrs["label"].tolist() if bonds else [0] * g.n_edges
            x.append({e: b for (u, v), b in zip(g.edges.tolist(), labels) for e in ((u, v), (v, u))})
        return gk

    graphs, _ = load_tu(root / "NCI1")
    print("NCI1: %d graphs" % len(graphs))
    kernel = NSPDKKernel(r=3, d=4)
    _, t_full = best_of(lambda: kernel(graphs), repeat)
    sub = graphs[:subset]
    _, t_gg = best_of(lambda: kernel(sub), repeat)
    gsub = with_bonds(sub, False)
    _, t_gk = best_of(lambda: GNSPDK(r=3, d=4).fit_transform(gsub), 1)
    print("NSPDK r=3 d=4: graphgram full NCI1 %.3f s; %d graphs: graphgram %.4f s, GraKeL %.2f s, ratio %.0f"
          % (t_full, len(sub), t_gg, t_gk, t_gk / t_gg), flush=True)
    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_nspdk import sorted_hash_graph  # GraKeL's encoding, sorted: one definition, the test's
    stock = module.hash_graph
    module.hash_graph = sorted_hash_graph
    try:
        R = GNSPDK(r=2, d=2).fit_transform(gsub)
    finally:
        module.hash_graph = stock
    K = NSPDKKernel(r=2, d=2)(sub)
    print("r=2 d=2, %d graphs, GraKeL's encoding sorted: max |dK| %.2g, entries differing in bits %d"
          % (len(sub), np.abs(K - R).max(), int((K != R).sum())), flush=True)
    graphs, y = load_tu(root / "MUTAG")
    K = NSPDKKernel(r=3, d=4, edge_label="label", normalize=True)(graphs)
    print("MUTAG NSPDK r=3 d=4 (bonds, normalized): graphgram %5.1f ± %4.1f %%" % cv_accuracy(K, y), flush=True)
    K = GNSPDK(r=3, d=4, normalize=True).fit_transform(with_bonds(graphs, True))
    print("MUTAG NSPDK r=3 d=4 (bonds, normalized): GraKeL    %5.1f ± %4.1f %%" % cv_accuracy(K, y), flush=True)


def pyramid(root, repeat, subset):
    from grakel.kernels import PyramidMatch
    from grakel.kernels import pyramid_match as module

    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_pyramid_match import corrected_pairwise, well_defined  # one definition, the test's

    graphs, y = load_tu(root / "NCI1")
    print("NCI1: %d graphs" % len(graphs))
    kernel = PyramidMatchKernel(L=4, d=6, normalize=True)
    K_full, t_full = best_of(lambda: kernel(graphs), repeat)
    sub = graphs[:subset] if subset else graphs
    K, t_gg = best_of(lambda: kernel(sub), repeat)
    gsub = grakel_input(sub)
    R_stock, t_gk = best_of(lambda: PyramidMatch(L=4, d=6, normalize=True).fit_transform(gsub), 1)
    print("pyramid match L=4 d=6, normalized: graphgram full NCI1 %.3f s; %d graphs: graphgram %.3f s, "
          "GraKeL %.2f s, ratio %.0f" % (t_full, len(sub), t_gg, t_gk, t_gk / t_gg), flush=True)
    stock = module.PyramidMatch.pairwise_operation
    module.PyramidMatch.pairwise_operation = corrected_pairwise
    try:
        few = sub[:500]
        R = PyramidMatch(L=4, d=6).fit_transform(grakel_input(few))
        ok = np.array([well_defined(g, 4, 6) for g in few])
    finally:
        module.PyramidMatch.pairwise_operation = stock
    K = PyramidMatchKernel(L=4, d=6)(few)
    good = np.ix_(ok, ok)
    print("%d graphs, GraKeL's level sum corrected: entries differing %.1f %% (max |dK| %.3g); "
          "on the %d with a unique embedding: max |dK| %.2g" % (len(few), 100 * np.mean(np.abs(K - R) > 1e-9),
                                                               np.abs(K - R).max(), ok.sum(),
                                                               np.abs(K[good] - R[good]).max()), flush=True)
    print("NCI1      pyramid match L=4 d=6: graphgram %5.1f ± %4.1f %%" % cv_accuracy(K_full, y), flush=True)
    if not subset:
        print("NCI1      pyramid match L=4 d=6: GraKeL    %5.1f ± %4.1f %%" % cv_accuracy(R_stock, y), flush=True)
    graphs, y = load_tu(root / "MUTAG")
    K = PyramidMatchKernel(L=4, d=6, normalize=True)(graphs)
    print("MUTAG     pyramid match L=4 d=6: graphgram %5.1f ± %4.1f %%" % cv_accuracy(K, y), flush=True)
    K = PyramidMatch(L=4, d=6, normalize=True).fit_transform(grakel_input(graphs))
    print("MUTAG     pyramid match L=4 d=6: GraKeL    %5.1f ± %4.1f %%" % cv_accuracy(K, y), flush=True)


def oddsth(root, repeat, subset, h):
    from grakel.kernels import OddSth
    from grakel.kernels import odd_sth as module

    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_oddsth import sorted_hash_trees  # GraKeL's children sorted: one definition, the test's

    graphs, y = load_tu(root / "NCI1")
    print("NCI1: %d graphs" % len(graphs))
    kernel = OddSthKernel(h=h, normalize=True)
    K_full, t_full = best_of(lambda: kernel(graphs), repeat)
    sub = graphs[:subset] if subset else graphs
    _, t_gg = best_of(lambda: kernel(sub), repeat)
    gsub = grakel_input(sub)
    _, t_gk = best_of(lambda: OddSth(h=h, normalize=True).fit_transform(gsub), 1)
    print("ODD-STh h=%s, normalized: graphgram full NCI1 %.3f s; %d graphs: graphgram %.4f s, GraKeL %.2f s, "
          "ratio %.0f" % (h, t_full, len(sub), t_gg, t_gk, t_gk / t_gg), flush=True)
    stock = module.hash_trees
    module.hash_trees = sorted_hash_trees
    try:
        few = sub[:300]
        g = OddSth(h=h)
        g.fit(grakel_input(few))
        phi = np.array([v[1] for v in g.X[0].values()], dtype=np.float64).T
    finally:
        module.hash_trees = stock
    K = OddSthKernel(h=h)(few)
    print("%d graphs, GraKeL's children sorted, its counts' Gram: entries differing in bits %d"
          % (len(few), int((K != phi @ phi.T).sum())), flush=True)
    print("NCI1      ODD-STh h=%s: graphgram %5.1f ± %4.1f %%" % ((h,) + cv_accuracy(K_full, y)), flush=True)
    graphs, y = load_tu(root / "MUTAG")
    K = OddSthKernel(h=h, normalize=True)(graphs)
    print("MUTAG     ODD-STh h=%s: graphgram %5.1f ± %4.1f %%" % ((h,) + cv_accuracy(K, y)), flush=True)
    K = OddSth(h=h, normalize=True).fit_transform(grakel_input(graphs))
    print("MUTAG     ODD-STh h=%s: GraKeL    %5.1f ± %4.1f %%" % ((h,) + cv_accuracy(K, y)), flush=True)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def linear(root, copies):
    from sklearn.svm import LinearSVC

    graphs, y = load_tu(root / "NCI1")
    shift = int(max(g.node_attrs["label"].max() for g in graphs)) + 1
    many = [Graph(g.n_nodes, g.edges, node_attrs={"label": g.node_attrs["label"] + c * shift})
            for c in range(copies) for g in graphs]
    labels = np.tile(y, copies)
    print("%d graphs (%d copies of NCI1, labels relabelled per copy); peak RSS before: %.0f MB"
          % (len(many), copies, peak_rss_mb()), flush=True)
    t = time.perf_counter()
    F = WeisfeilerLehmanKernel(n_iter=3).features(many)
    t_f = time.perf_counter() - t
    print("features: %.2f s, %d x %d, %d nonzeros (%.0f MB as CSR); peak RSS %.0f MB"
          % (t_f, F.shape[0], F.shape[1], F.nnz, (F.data.nbytes + F.indices.nbytes + F.indptr.nbytes) / 2**20,
             peak_rss_mb()), flush=True)
    t = time.perf_counter()
    model = LinearSVC(C=0.01, max_iter=5000).fit(F, labels)
    print("LinearSVC fit: %.2f s, training accuracy %.3f; peak RSS %.0f MB"
          % (time.perf_counter() - t, model.score(F, labels), peak_rss_mb()), flush=True)


def cv_accuracy(K, y, seed=0):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    scores = []
    for train, test in StratifiedKFold(10, shuffle=True, random_state=seed).split(K, y):
        grid = GridSearchCV(SVC(kernel="precomputed"), {"C": 10.0 ** np.arange(-3, 4)},
                            cv=StratifiedKFold(3, shuffle=True, random_state=seed))
        grid.fit(K[np.ix_(train, train)], y[train])
        scores.append(grid.score(K[np.ix_(test, train)], y[test]))
    return 100 * np.mean(scores), 100 * np.std(scores)


def accuracy(root, sets, peer_sets=("MUTAG",)):
    kernels = {
        "WL subtree h=5": lambda: WeisfeilerLehmanKernel(n_iter=5, normalize=True),
        "WL-OA h=5": lambda: WeisfeilerLehmanKernel(n_iter=5, base="optimal_assignment", normalize=True),
        "NH simple R=3": lambda: NeighborhoodHashKernel(R=3),
        "NH count-sensitive R=3": lambda: NeighborhoodHashKernel(R=3, nh_type="count_sensitive"),
        "graphlets k=5, 1000 samples": lambda: GraphletSamplingKernel(k=5, sampling=1000, normalize=True),
    }
    peers = {
        "GraKeL NH simple R=3": lambda gk: _grakel("NeighborhoodHash", R=3, random_state=0).fit_transform(gk),
        "GraKeL NH count-sensitive R=3": lambda gk: _grakel("NeighborhoodHash", R=3, nh_type="count_sensitive",
                                                           random_state=0).fit_transform(gk),
        "GraKeL graphlets k=5, 1000 samples": lambda gk: _grakel("GraphletSampling", k=5, normalize=True,
                                                                sampling={"n_samples": 1000},
                                                                random_state=0).fit_transform(gk),
    }
    for name in sets:
        graphs, y = load_tu(root / name)
        rows = dict(kernels)
        if "attributes" in graphs[0].node_attrs:
            rows["hash graph kernel (attributes + label)"] = lambda: HashGraphKernel(
                node_label="label", n_iter=3, n_hashes=20, normalize=True)
            rows["hash graph kernel (attributes only)"] = lambda: HashGraphKernel(n_iter=3, n_hashes=20,
                                                                                    normalize=True)
        for kname, make in rows.items():
            t = time.perf_counter()
            K = make()(graphs)
            t_k = time.perf_counter() - t
            mean, std = cv_accuracy(K, y)
            print("%-9s %-40s %5.1f ± %4.1f %%   (Gram %.2f s)" % (name, kname, mean, std, t_k), flush=True)
        if name in peer_sets:
            gk = grakel_input(graphs)
            for kname, run in peers.items():
                t = time.perf_counter()
                K = run(gk)
                t_k = time.perf_counter() - t
                mean, std = cv_accuracy(K, y)
                print("%-9s %-40s %5.1f ± %4.1f %%   (Gram %.2f s)" % (name, kname, mean, std, t_k), flush=True)


def _grakel(name, **params):
    import grakel.kernels

    return getattr(grakel.kernels, name)(**params)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["speed", "nh-graphlets", "nspdk", "pyramid", "oddsth", "linear", "accuracy"])
    ap.add_argument("--datasets", default=str(DATASETS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--oa-subset", type=int, default=400)
    ap.add_argument("--copies", type=int, default=25)
    ap.add_argument("--nh-subset", type=int, default=1000)
    ap.add_argument("--gl-subset", type=int, default=200)
    ap.add_argument("--nspdk-subset", type=int, default=300)
    ap.add_argument("--pyramid-subset", type=int, default=0)
    ap.add_argument("--oddsth-subset", type=int, default=1000)
    ap.add_argument("--oddsth-h", type=int, default=None)
    ap.add_argument("--sets", nargs="*", default=["MUTAG", "NCI1", "PROTEINS", "ENZYMES"])
    a = ap.parse_args()
    root = require(a.datasets)
    print(machine(), flush=True)
    if a.what == "speed":
        speed(root, a.repeat, a.oa_subset)
    elif a.what == "nh-graphlets":
        nh_graphlets(root, a.repeat, a.nh_subset, a.gl_subset)
    elif a.what == "nspdk":
        nspdk(root, a.repeat, a.nspdk_subset)
    elif a.what == "pyramid":
        pyramid(root, a.repeat, a.pyramid_subset)
    elif a.what == "oddsth":
        oddsth(root, a.repeat, a.oddsth_subset, a.oddsth_h)
    elif a.what == "linear":
        linear(root, a.copies)
    else:
        accuracy(root, a.sets)
    print(machine(), flush=True)


if __name__ == "__main__":
    main()
