#!/usr/bin/env python3
r"""Benchmark suite of graphgram's marginalized graph kernel (MGK) solver.

One command measures, in the same run on the same machine, the Gram matrix of
every benchmark set and prints a fixed-width table; the same rows go to a JSON
file and a CSV file beside it, with the machine's description, so that later
changes can be compared::

    PYTHONPATH=python python3 benchmarks/bench_mgk.py            # default, ~10 min at target speed
    PYTHONPATH=python python3 benchmarks/bench_mgk.py --quick    # smoke test, < 1 min
    python3 benchmarks/bench_mgk.py --only MUTAG PEER --jobs 2
    python3 benchmarks/bench_mgk.py --full-nci1                  # NCI1's 8.4 M pairs
    python3 benchmarks/bench_mgk.py --full                       # every set complete

Sets (``--only`` names)
-----------------------
MUTAG, ENZYMES, PROTEINS, NCI1
    TU data sets from $GRAPHGRAM_DATASETS, by default shared/datasets beside the
    repository (``--datasets``). Node kernel
    KroneckerDelta(0.5) on ``label``; edge kernel KroneckerDelta(0.5) on the edge
    ``label`` where the set has one (MUTAG), else Constant(1). Subsets are
    seeded random samples, listed in the JSON.
NWS, BA
    The synthetic sets of the GraphDot paper: 160 Newman–Watts–Strogatz graphs
    ``newman_watts_strogatz_graph(96, 3, 0.1, seed=s)`` and 160 Barabási–Albert
    graphs ``barabasi_albert_graph(96, 6, seed=s)``, s = 0..159, with seeded
    random labels (node and edge label uniform in {0, 1, 2}) and the same
    KroneckerDelta(0.5) kernels. (Unlabeled, i.e. Constant kernels, they are no
    test of the solver: x ∝ 1 solves the system exactly and Jacobi-preconditioned
    CG stops after one iteration.)
PROTEIN3D
    Protein-like 3D heavy-atom clouds (see _mgk_protein.py) of 250, 500 and 1000
    atoms, three per size; ``molecules.from_coordinates(elements, positions,
    cutoff=4.5)`` (edges within 4.5 Å, weights (1 − (r/rc)²)², edge attribute
    ``length``); node kernel KroneckerDelta(0.5) on ``element``, edge kernel
    SquareExponential(1.0 Å) on ``length``. The first graph of each size is
    compared with the other two (2 pairs per size), and the time per pair is
    fitted against nnz(A)·nnz(A') on a log-log scale: the slope is the
    empirical exponent of the cost in the product graph's size.
PEER
    graphkit-learn's ``Marginalized`` kernel on seeded subsets of MUTAG and NCI1
    graphs without isolated nodes, with 0/1 label deltas (KroneckerDelta(0)) in
    graphgram to match. Its ``n_iteration`` is the smallest N at which a SciPy
    replay of its fixed-point iteration is within ``--peer-tol`` (relative) of
    graphgram on every pair; gklearn is then run once with that N and the
    agreement it actually reaches is reported. Values are compared after the
    rescaling K_gklearn = K_graphgram · q² / (n n') (see _mgk_peer.py). Both
    run on ``--peer-jobs`` cores (default 1: gklearn single-process, graphgram
    n_jobs=1). The full-MUTAG peer row times graphgram on all 188 graphs and
    extrapolates gklearn from the subset by Σ nnz·nnz' over pairs (gklearn's
    work per iteration is exactly that sum of neighbour-pair products).

All kernels use q = 0.01 (``--q``), p = 1, the solver's default tolerance.

Columns
-------
graphs        graphs in the computed Gram matrix / graphs in the set
pairs         solved pairs: the upper triangle with the diagonal, n(n+1)/2, or
              the cross pairs of the PROTEIN3D rows
gg s          graphgram wall time of ``kernel._compute("gram", ...)``, which packs the graphs and computes the Gram
              matrix with iteration counts), which is
              what the public ``kernel(graphs)`` does; the iteration counts are
              collected in the same call, at no measurable cost
full s        time of the complete set's Gram matrix; '~' marks an estimate
              scaled from the subset by Σ_{i<=j} nnz_i·nnz_j (the cost model:
              one product mat-vec costs nnz·nnz')
peer s        graphkit-learn's wall time on the same graphs ('~': extrapolated)
ratio         peer s / gg s (full-set times where both exist)
pairs/s       pairs / gg s
CG mean, max  Jacobi-PCG iterations per pair (int32 matrix from ``_gram``)
nnz·nnz'      mean over pairs of nnz(W×) = nnz(A)·nnz(A'), with nnz(A) the
              directed nonzeros of the adjacency, 2·m − (self-loops)
GFLOP/s       effective rate of the product mat-vecs:
                  Σ_pairs 2 · nnz(A) · nnz(A') · iterations / (time of _gram)
              i.e. 2 flops (one multiply-add) per nonzero of W× per CG
              iteration, summed over the solved pairs and divided by the whole
              _gram wall time (setup, node kernel, edge-kernel cache and the
              vector operations of CG included, so it understates the
              mat-vec's own rate)
%peak         GFLOP/s / the NumPy peak below
agree         peer rows: max over pairs of |K_gk − K_gg·q²/(n n')| / |K_gg·q²/(n n')|

NumPy peak: best of ``--peak-repeats`` runs of ``a @ b`` for 4096×4096 float64
(OpenBLAS limited to ``--jobs`` threads), GFLOP/s = 2·n³ / t: the machine's
practical float64 peak measured in the same run.
"""

import argparse
import atexit
import csv
import datetime
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def _snapshot_package():
    """Import graphgram from a private copy of ../python/graphgram.

    ``setup.py build_ext --inplace`` rewrites the Go extension's shared object
    in place; a process that has it mapped then dies of SIGBUS. A run of this
    suite takes many minutes, so it copies the package (extension included) to
    a temporary folder at start and measures that build; ``--no-snapshot``
    imports the tree directly.
    """
    src = os.path.join(REPO, "python", "graphgram")
    if not os.path.isdir(src):
        return None
    if "--no-snapshot" in sys.argv:
        sys.path.insert(0, os.path.dirname(src))
        return None
    dst = tempfile.mkdtemp(prefix="bench_mgk_")
    shutil.copytree(src, os.path.join(dst, "graphgram"), ignore=shutil.ignore_patterns("__pycache__"))
    atexit.register(shutil.rmtree, dst, True)
    sys.path.insert(0, dst)
    return src


SNAPSHOT_OF = _snapshot_package()

import numpy as np  # noqa: E402

from _common import DATASETS  # noqa: E402
import graphgram  # noqa: E402
from graphgram import Graph, datasets, molecules  # noqa: E402
from graphgram.microkernels import KroneckerDelta, SquareExponential, TensorProduct  # noqa: E402

SETS = ["MUTAG", "ENZYMES", "PROTEINS", "NCI1", "NWS", "BA", "PROTEIN3D", "PEER"]
TU_SETS = ["MUTAG", "ENZYMES", "PROTEINS", "NCI1"]

# Graphs per set in the Gram matrix (None: all of them).
DEFAULT_SUBSET = {"MUTAG": None, "ENZYMES": 300, "PROTEINS": 300, "NCI1": 1000, "NWS": None, "BA": 80}
QUICK_SUBSET = {"MUTAG": 40, "ENZYMES": 24, "PROTEINS": 24, "NCI1": 40, "NWS": 16, "BA": 8}
PROTEIN_SIZES = (250, 500, 1000)
QUICK_PROTEIN_SIZES = (60, 120)
PROTEIN_CUTOFF = 4.5  # Å
PROTEIN_LENGTH_SCALE = 1.0  # Å
SEED = 20240601

TARGETS = {
    "mutag_s": 0.25,
    "nci1_full_s": 180.0,
    "peer_ratio": 100.0,
    "peak_fraction": 0.10,
    "scaling_slope": 1.0,
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# machine
# --------------------------------------------------------------------------

def _git(*args):
    try:
        return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # pragma: no cover - no git
        return ""


def machine_info(jobs):
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    blas = []
    try:
        from threadpoolctl import threadpool_info
        blas = [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
                for d in threadpool_info()]
    except Exception:
        pass
    so = None
    core_dir = os.path.join(os.path.dirname(graphgram.__file__), "_ggcore")
    if os.path.isdir(core_dir):
        for name in os.listdir(core_dir):
            if name.endswith(".so"):
                path = os.path.join(core_dir, name)
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()[:16]
                so = {"file": name, "sha256_16": digest,
                      "mtime": datetime.datetime.fromtimestamp(os.path.getmtime(path)).isoformat(timespec="seconds")}
    try:
        from graphgram import _backend
        go_core = _backend.go_version()
    except Exception:
        go_core = None
    modified = [ln for ln in _git("status", "--porcelain", "--", "gokernel", "python", "pybind", "go.mod").splitlines()]
    try:
        cores_avail = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores_avail = os.cpu_count()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu_model": cpu,
        "cpu_count": os.cpu_count(),
        "cores_available": cores_avail,
        "jobs": jobs,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
        # Paths relative to the repository: a temporary copy is "snapshot", a machine's own folders stay out of results.
        "graphgram_path": "snapshot" if SNAPSHOT_OF else os.path.relpath(os.path.dirname(graphgram.__file__), REPO),
        "graphgram_snapshot_of": SNAPSHOT_OF and os.path.relpath(SNAPSHOT_OF, REPO),
        "graphgram_commit": _git("rev-parse", "HEAD"),
        "graphgram_worktree_changes": modified,
        "go_core": go_core,
        "go_extension": so,
        "loadavg_start": list(os.getloadavg()),
    }


def numpy_peak(n, repeats, jobs):
    """Best GFLOP/s of an n×n float64 matrix product on `jobs` BLAS threads."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    try:
        from threadpoolctl import threadpool_limits
        ctx = threadpool_limits(limits=jobs)
    except Exception:  # pragma: no cover - no threadpoolctl
        ctx = None
    try:
        a @ b  # warm-up
        best = math.inf
        for _ in range(repeats):
            t = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - t)
    finally:
        if ctx is not None:
            ctx.restore_original_limits()
    return {"n": n, "repeats": repeats, "best_s": best, "gflops": 2.0 * n ** 3 / best / 1e9}


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------

def nnz_of(g):
    """Directed nonzeros of the adjacency: 2·m − self-loops."""
    e = np.asarray(g.edges)
    if len(e) == 0:
        return 0
    return int(2 * len(e) - np.count_nonzero(e[:, 0] == e[:, 1]))


def pair_work(nnz_x, nnz_y=None):
    """Σ over solved pairs of nnz·nnz' (upper triangle with diagonal if nnz_y is None)."""
    x = np.asarray(nnz_x, dtype=np.float64)
    if nnz_y is None:
        return float((x.sum() ** 2 + (x * x).sum()) / 2.0)
    return float(x.sum() * np.asarray(nnz_y, dtype=np.float64).sum())


def subset_indices(n_total, size, seed, candidates=None):
    pool = np.arange(n_total) if candidates is None else np.asarray(candidates)
    if size is None or size >= len(pool):
        return [int(i) for i in pool]
    rng = np.random.default_rng(seed)
    return sorted(int(i) for i in rng.choice(pool, size=size, replace=False))


def load_tu_set(root, name):
    graphs, _ = datasets.load_tu(os.path.join(root, name))
    return graphs


def _random_labels(g, seed, n_node_labels=3, n_edge_labels=3):
    rng = np.random.default_rng(seed)
    node = rng.integers(n_node_labels, size=g.number_of_nodes())
    for k, v in enumerate(g.nodes):
        g.nodes[v]["label"] = int(node[k])
    edge = rng.integers(n_edge_labels, size=g.number_of_edges())
    for k, (u, v) in enumerate(g.edges):
        g.edges[u, v]["label"] = int(edge[k])
    return Graph.from_networkx(g)


def synthetic_set(name, count=160):
    import networkx as nx
    out = []
    for s in range(count):
        if name == "NWS":
            g = nx.newman_watts_strogatz_graph(96, 3, 0.1, seed=s)
        else:
            g = nx.barabasi_albert_graph(96, 6, seed=s)
        out.append(_random_labels(g, seed=10_000 + s))
    return out


# --------------------------------------------------------------------------
# measurement
# --------------------------------------------------------------------------

def label_kernels(edge_labels, h=0.5):
    node = TensorProduct(label=KroneckerDelta(h))
    edge = TensorProduct(label=KroneckerDelta(h)) if edge_labels else None
    return node, edge


def measure(kernel, X, Y=None):
    """Time pack + _gram with iteration counts; return a dict of raw measurements."""
    symmetric = Y is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # Packing happens inside the call now (the boundary packs per call), so
        # the Gram time includes it; t0 == t1.
        t0 = t1 = time.perf_counter()
        K, extras = kernel._compute("gram", X, Y, iterations=True)
        t2 = time.perf_counter()
    I = extras["iterations"].astype(np.int64)
    nx_ = np.array([nnz_of(g) for g in X], dtype=np.float64)
    ny_ = nx_ if symmetric else np.array([nnz_of(g) for g in Y], dtype=np.float64)
    W = np.outer(nx_, ny_)
    if symmetric:
        sel = np.triu_indices(len(X))
        w, it = W[sel], I[sel]
    else:
        w, it = W.ravel(), I.ravel()
    flops = float(2.0 * np.sum(w * it))
    t_gram = t2 - t1
    return {
        "K": K,
        "pairs": int(len(w)),
        "time_pack_s": t1 - t0,
        "time_gram_s": t_gram,
        "time_s": t2 - t0,
        "cg_mean": float(it.mean()),
        "cg_max": int(it.max()),
        "cg_min": int(it.min()),
        "nnz_product_mean": float(w.mean()),
        "work": float(w.sum()),
        "flops": flops,
        "gflops": flops / t_gram / 1e9 if t_gram > 0 else float("nan"),
        "warnings": [str(c.message)[:300] for c in caught],
    }


def make_row(set_name, settings, n_graphs, n_total, m, peak, extra=None, full_work=None):
    row = {
        "set": set_name,
        "settings": settings,
        "graphs": n_graphs,
        "graphs_total": n_total,
        "pairs": m["pairs"],
        "time_s": m["time_s"],
        "time_pack_s": m["time_pack_s"],
        "time_gram_s": m["time_gram_s"],
        "pairs_per_s": m["pairs"] / m["time_s"],
        "cg_mean": m["cg_mean"],
        "cg_max": m["cg_max"],
        "nnz_product_mean": m["nnz_product_mean"],
        "gflops": m["gflops"],
        "peak_fraction": m["gflops"] / peak,
        "full_time_s": m["time_s"],
        "full_extrapolated": False,
        "peer_time_s": None,
        "peer_extrapolated": False,
        "ratio": None,
        "agreement": None,
        "warnings": m["warnings"],
    }
    if full_work is not None and n_graphs < n_total:
        row["full_time_s"] = m["time_s"] * full_work / m["work"]
        row["full_extrapolated"] = True
    if extra:
        row.update(extra)
    return row


def run_tu(name, args, peak, subset):
    graphs = load_tu_set(args.datasets, name)
    edge_labels = "label" in graphs[0].edge_attrs
    idx = subset_indices(len(graphs), subset, SEED)
    X = [graphs[i] for i in idx]
    node, edge = label_kernels(edge_labels)
    kernel = graphgram.MarginalizedGraphKernel(node, edge, q=args.q, n_jobs=args.jobs)
    settings = "δ(.5)/%s q=%g" % ("δ(.5)" if edge_labels else "1", args.q)
    log("[%s] %d of %d graphs, %d pairs ..." % (name, len(X), len(graphs), len(X) * (len(X) + 1) // 2))
    m = measure(kernel, X)
    full_work = pair_work([nnz_of(g) for g in graphs])
    row = make_row(name, settings, len(X), len(graphs), m, peak, full_work=full_work,
                   extra={"subset_seed": SEED if len(X) < len(graphs) else None,
                          "subset": idx if len(X) < len(graphs) else None,
                          "node_kernel": "KroneckerDelta(0.5) on label",
                          "edge_kernel": "KroneckerDelta(0.5) on label" if edge_labels else "Constant(1)"})
    log("[%s] %.2f s, %.0f pairs/s, CG %.1f/%d, %.2f GFLOP/s" % (name, row["time_s"], row["pairs_per_s"],
                                                               row["cg_mean"], row["cg_max"], row["gflops"]))
    return row


def run_synthetic(name, args, peak, subset):
    graphs = synthetic_set(name)
    idx = subset_indices(len(graphs), subset, SEED)
    X = [graphs[i] for i in idx]
    node, edge = label_kernels(True)
    kernel = graphgram.MarginalizedGraphKernel(node, edge, q=args.q, n_jobs=args.jobs)
    log("[%s] %d of %d graphs, %d pairs ..." % (name, len(X), len(graphs), len(X) * (len(X) + 1) // 2))
    m = measure(kernel, X)
    full_work = pair_work([nnz_of(g) for g in graphs])
    gen = ("newman_watts_strogatz_graph(96, 3, 0.1, seed=s)" if name == "NWS"
           else "barabasi_albert_graph(96, 6, seed=s)")
    row = make_row(name, "rand.lab δ(.5)/δ(.5) q=%g" % args.q, len(X), len(graphs), m, peak, full_work=full_work,
                   extra={"generator": "networkx." + gen + ", s = 0..159; node and edge labels uniform in "
                                       "{0,1,2} (numpy default_rng(10000 + s))",
                          "subset_seed": SEED if len(X) < len(graphs) else None,
                          "subset": idx if len(X) < len(graphs) else None,
                          "node_kernel": "KroneckerDelta(0.5) on label",
                          "edge_kernel": "KroneckerDelta(0.5) on label"})
    log("[%s] %.2f s, %.0f pairs/s, CG %.1f/%d, %.2f GFLOP/s" % (name, row["time_s"], row["pairs_per_s"],
                                                               row["cg_mean"], row["cg_max"], row["gflops"]))
    return row


def run_protein(args, peak, sizes, per_size):
    from _mgk_protein import VOLUME_PER_ATOM, protein_like

    node = TensorProduct(element=KroneckerDelta(0.5))
    edge = TensorProduct(length=SquareExponential(PROTEIN_LENGTH_SCALE))
    kernel = graphgram.MarginalizedGraphKernel(node, edge, q=args.q, n_jobs=args.jobs)
    rows = []
    for n in sizes:
        gs, dens, rgs = [], [], []
        for s in range(per_size):
            el, pos, d = protein_like(n, seed=1000 * n + s)
            gs.append(molecules.from_coordinates(el, pos, cutoff=PROTEIN_CUTOFF))
            dens.append(d)
            rgs.append(float(np.sqrt(np.mean(np.sum(pos * pos, axis=1)))))
        X, Y = gs[:1], gs[1:]
        log("[PROTEIN3D] %d atoms: 1 x %d pairs, nnz %s ..." % (n, len(Y), [nnz_of(g) for g in gs]))
        m = measure(kernel, X, Y)
        row = make_row("protein-%d" % n, "elem δ(.5)/SE(%gÅ) rc=%gÅ" % (PROTEIN_LENGTH_SCALE, PROTEIN_CUTOFF),
                       len(gs), len(gs), m, peak,
                       extra={"atoms": n, "nnz": [nnz_of(g) for g in gs],
                              "mean_degree": float(np.mean([nnz_of(g) / g.n_nodes for g in gs])),
                              "density_atoms_per_A3": float(np.mean(dens)),
                              "volume_per_atom_A3": float(1.0 / np.mean(dens)),
                              "target_volume_per_atom_A3": VOLUME_PER_ATOM,
                              "radius_of_gyration_A": float(np.mean(rgs)),
                              "rg_empirical_A": 2.2 * (n / 7.8) ** 0.38,
                              "time_per_pair_s": m["time_s"] / m["pairs"],
                              "node_kernel": "KroneckerDelta(0.5) on element",
                              "edge_kernel": "SquareExponential(%g) on length" % PROTEIN_LENGTH_SCALE,
                              "cutoff_A": PROTEIN_CUTOFF})
        log("[PROTEIN3D] %d atoms: %.2f s per pair, CG %.1f/%d, %.3f GFLOP/s" % (
            n, row["time_per_pair_s"], row["cg_mean"], row["cg_max"], row["gflops"]))
        rows.append(row)
    scaling = None
    if len(rows) >= 2:
        x = np.log([r["nnz_product_mean"] for r in rows])
        y = np.log([r["time_per_pair_s"] for r in rows])
        slope, intercept = np.polyfit(x, y, 1)
        scaling = {"sizes": [r["atoms"] for r in rows],
                   "nnz_product_mean": [r["nnz_product_mean"] for r in rows],
                   "time_per_pair_s": [r["time_per_pair_s"] for r in rows],
                   "slope": float(slope), "intercept": float(intercept),
                   "fit": "log(time per pair) = slope·log(nnz·nnz') + intercept"}
    return rows, scaling


def run_peer(name, args, peak, n_sub, full_row):
    """Peer rows for one TU set: the subset comparison, plus a full-set row for MUTAG."""
    from _mgk_peer import has_isolated, max_relative_difference, needed_iterations, run_gklearn

    graphs = load_tu_set(args.datasets, name)
    edge_label = "label" if "label" in graphs[0].edge_attrs else None
    cand = [i for i, g in enumerate(graphs) if not has_isolated(g)]
    idx = subset_indices(len(graphs), n_sub, SEED + 1, candidates=cand)
    sub = [graphs[i] for i in idx]
    node, edge = label_kernels(edge_label is not None, h=0.0)
    q = args.q
    kernel = graphgram.MarginalizedGraphKernel(node, edge, q=q, n_jobs=args.peer_jobs)
    m = measure(kernel, sub)
    n = np.array([g.n_nodes for g in sub], dtype=np.float64)
    K_ref = m["K"] * q * q / np.outer(n, n)
    t = time.perf_counter()
    N, reached = needed_iterations(sub, K_ref, q, "label", edge_label, args.peer_tol)
    t_replay = time.perf_counter() - t
    if args.peer_iterations:
        N = args.peer_iterations
    log("[PEER %s] %d graphs, gklearn n_iteration=%d (replay %.1f s) ..." % (name, len(sub), N, t_replay))
    K_gk, t_gk, mode = run_gklearn(sub, "label", edge_label, q, N, jobs=args.peer_jobs)
    agree = max_relative_difference(K_gk, K_ref)
    settings = "δ(0)/%s q=%g %dc" % ("δ(0)" if edge_label else "1", q, args.peer_jobs)
    common = {"peer": "gklearn.kernels.Marginalized (graphkit-learn)", "peer_mode": mode, "peer_jobs": args.peer_jobs,
              "peer_n_iteration": N, "peer_tol_target": args.peer_tol, "peer_tol_reached_in_replay": reached,
              "peer_subset": idx, "rescaling": "K_gklearn = K_graphgram * q^2 / (n n')",
              "node_kernel": "KroneckerDelta(0) on label",
              "edge_kernel": "KroneckerDelta(0) on label" if edge_label else "Constant(1)"}
    row = make_row(name + " peer", settings + " N=%d" % N, len(sub), len(graphs), m, peak,
                   extra=dict(common, peer_time_s=t_gk, ratio=t_gk / m["time_s"], agreement=agree,
                              full_time_s=None))
    log("[PEER %s] graphgram %.3f s, gklearn %.1f s, ratio %.0f, agreement %.2e"
        % (name, m["time_s"], t_gk, t_gk / m["time_s"], agree))
    rows = [row]
    if full_row:
        log("[PEER %s] graphgram on all %d graphs (peer settings, %d core) ..." % (name, len(graphs), args.peer_jobs))
        mf = measure(kernel, graphs)
        scale = pair_work([nnz_of(g) for g in graphs]) / m["work"]
        t_gk_full = t_gk * scale
        rowf = make_row(name + " peer", settings + " N=%d" % N, len(graphs), len(graphs), mf, peak,
                        extra=dict(common, peer_time_s=t_gk_full, peer_extrapolated=True,
                                   peer_extrapolation="gklearn subset time x sum(nnz nnz') full / subset = x%.1f"
                                                      % scale,
                                   ratio=t_gk_full / mf["time_s"], agreement=None))
        log("[PEER %s] full: graphgram %.2f s, gklearn ~%.0f s, ratio ~%.0f"
            % (name, mf["time_s"], t_gk_full, t_gk_full / mf["time_s"]))
        rows.append(rowf)
    return rows


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------

def _fmt_time(t, approx=False):
    if t is None or (isinstance(t, float) and not math.isfinite(t)):
        return "-"
    s = "%.3g" % t if t < 100 else "%.0f" % t
    return ("~" + s) if approx else s


def _fmt_num(x, fmt):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return fmt % x


COLUMNS = [
    ("data set", 14, "<"), ("settings", 28, "<"), ("graphs", 9, ">"), ("pairs", 9, ">"),
    ("gg s", 8, ">"), ("full s", 8, ">"), ("peer s", 8, ">"), ("ratio", 7, ">"), ("pairs/s", 9, ">"),
    ("CG mean", 7, ">"), ("max", 5, ">"), ("nnz·nnz'", 9, ">"), ("GFLOP/s", 8, ">"), ("%peak", 6, ">"),
    ("agree", 8, ">"),
]


def table_lines(rows):
    def line(cells):
        return "  ".join(c[:w].ljust(w) if a == "<" else c.rjust(w)
                         for c, (_, w, a) in zip(cells, COLUMNS)).rstrip()

    out = [line([c for c, _, _ in COLUMNS]), "  ".join("-" * w for _, w, _ in COLUMNS)]
    for r in rows:
        out.append(line([
            r["set"], r["settings"], "%d/%d" % (r["graphs"], r["graphs_total"]), "%d" % r["pairs"],
            _fmt_time(r["time_s"]), _fmt_time(r["full_time_s"], r["full_extrapolated"]),
            _fmt_time(r["peer_time_s"], r["peer_extrapolated"]),
            _fmt_num(r["ratio"], "%.0f") if r["ratio"] is None or r["ratio"] >= 10 else _fmt_num(r["ratio"], "%.2g"),
            _fmt_num(r["pairs_per_s"], "%.0f" if r["pairs_per_s"] >= 10 else "%.2g"),
            _fmt_num(r["cg_mean"], "%.1f"), "%d" % r["cg_max"], _fmt_num(r["nnz_product_mean"], "%.2e"),
            _fmt_num(r["gflops"], "%.3f"), _fmt_num(100 * r["peak_fraction"], "%.1f"),
            _fmt_num(r["agreement"], "%.1e"),
        ]))
    return out


def check_targets(rows, scaling, quick):
    res = []

    def add(name, value, target, ok, note=""):
        res.append({"target": name, "value": value, "limit": target, "met": ok, "note": note})

    by = {r["set"]: r for r in rows}
    if "MUTAG" in by:
        r = by["MUTAG"]
        full = r["graphs"] == r["graphs_total"]
        add("MUTAG full Gram <= 0.25 s", r["full_time_s"], TARGETS["mutag_s"], r["full_time_s"] <= TARGETS["mutag_s"],
            "" if full else "extrapolated from a subset")
    if "NCI1" in by:
        r = by["NCI1"]
        add("NCI1 full Gram <= 180 s", r["full_time_s"], TARGETS["nci1_full_s"],
            r["full_time_s"] <= TARGETS["nci1_full_s"],
            "extrapolated from %d graphs" % r["graphs"] if r["full_extrapolated"] else "measured")
    peers = [r for r in rows if r["set"] == "MUTAG peer"]
    if peers:
        r = peers[-1]
        add(">= 100x faster than gklearn on MUTAG (matched accuracy, %d core)" % r["peer_jobs"],
            r["ratio"], TARGETS["peer_ratio"], r["ratio"] >= TARGETS["peer_ratio"],
            "gklearn extrapolated to the full set" if r["peer_extrapolated"] else "same graphs")
    solver_rows = [r for r in rows if not r["set"].endswith("peer")]
    if solver_rows:
        fr = [r["peak_fraction"] for r in solver_rows]
        n_ok = sum(f >= TARGETS["peak_fraction"] for f in fr)
        add("mat-vec GFLOP/s >= 10% of NumPy peak (worst row, %)", 100 * min(fr), 100 * TARGETS["peak_fraction"],
            n_ok == len(fr),
            "met on %d of %d rows; range %.1f%%-%.1f%%" % (n_ok, len(fr), 100 * min(fr), 100 * max(fr)))
    if scaling:
        add("time per pair grows no faster than nnz*nnz' (log-log slope <= 1, +0.1 noise)", scaling["slope"],
            TARGETS["scaling_slope"], scaling["slope"] <= TARGETS["scaling_slope"] + 0.1,
            "protein-like %s atoms" % "/".join(map(str, scaling["sizes"])))
    if quick:
        for t in res:
            t["note"] = (t["note"] + "; " if t["note"] else "") + "--quick: not representative"
    return res


CSV_FIELDS = ["set", "settings", "graphs", "graphs_total", "pairs", "time_s", "time_pack_s", "time_gram_s",
              "full_time_s", "full_extrapolated", "peer_time_s", "peer_extrapolated", "ratio", "pairs_per_s",
              "cg_mean", "cg_max", "nnz_product_mean", "gflops", "peak_fraction", "agreement", "peer_n_iteration",
              "warnings"]


def _clean(o):
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items() if k != "K"}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, (np.floating, np.integer)):
        o = o.item()
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    return o


def write_json(path, result):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(_clean(result), f, indent=1, ensure_ascii=False)
        f.write("\n")


def write_outputs(path, result):
    write_json(path, result)
    clean = _clean
    csv_path = os.path.splitext(path)[0] + ".csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in result["rows"]:
            d = dict(r)
            d["warnings"] = len(r.get("warnings") or [])
            w.writerow({k: clean(d.get(k)) for k in CSV_FIELDS})
    return csv_path


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def parse_args(argv=None):
    try:
        default_jobs = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        default_jobs = os.cpu_count() or 1
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small subsets, < 1 min: a smoke test")
    p.add_argument("--full", action="store_true", help="every set complete (hours with a slow solver)")
    p.add_argument("--full-nci1", action="store_true", help="NCI1's full Gram matrix (4110 graphs, 8.4 M pairs)")
    p.add_argument("--only", nargs="+", metavar="NAME", type=str.upper, choices=SETS,
                   help="run only these sets: %s" % " ".join(SETS))
    p.add_argument("--jobs", type=int, default=default_jobs, help="threads for graphgram and BLAS (default: %(default)s)")
    p.add_argument("--subset", nargs="+", default=[], metavar="NAME=N",
                   help="graphs in a set's Gram matrix, e.g. NCI1=2000 (0 = all)")
    p.add_argument("--q", type=float, default=0.01, help="stopping probability (default: %(default)s)")
    p.add_argument("--datasets", default=str(DATASETS),
                   help="folder of the TU data sets (default: ../shared/datasets)")
    p.add_argument("--out", default=None,
                   help="JSON result file; a CSV is written beside it (default: benchmarks/results/mgk.json, "
                        "mgk_quick.json with --quick)")
    p.add_argument("--peer-jobs", type=int, default=1, help="cores for both libraries in the PEER rows (default: 1)")
    p.add_argument("--peer-mutag", type=int, default=None, help="MUTAG graphs given to gklearn (default 12; 4 quick)")
    p.add_argument("--peer-nci1", type=int, default=None, help="NCI1 graphs given to gklearn (default 6; 3 quick)")
    p.add_argument("--peer-tol", type=float, default=1e-7,
                   help="relative agreement the gklearn n_iteration is chosen for (default: %(default)s)")
    p.add_argument("--peer-iterations", type=int, default=0, help="force gklearn's n_iteration")
    p.add_argument("--protein-per-size", type=int, default=3, help="protein-like graphs per size (default: 3)")
    p.add_argument("--peak-n", type=int, default=None, help="NumPy matrix size (default 4096; 1024 quick)")
    p.add_argument("--peak-repeats", type=int, default=3)
    p.add_argument("--show", metavar="JSON", help="print the table of a saved result file and exit")
    p.add_argument("--no-snapshot", action="store_true",
                   help="import ../python/graphgram directly instead of a private copy taken at start "
                        "(a concurrent build_ext --inplace then kills the run with SIGBUS)")
    return p.parse_args(argv)


def print_report(result):
    """Print the table, notes and targets of a result (fresh, or loaded with --show)."""
    info, peak, rows = result["machine"], result["numpy_peak"], result["rows"]
    scaling, targets = result.get("protein_scaling"), result.get("targets") or []
    _f = lambda v: float(v) if isinstance(v, str) else v  # noqa: E731 - "inf"/"nan" stored as strings
    for r in rows:
        for k in ("ratio", "agreement", "gflops", "peak_fraction"):
            r[k] = _f(r.get(k))
    print()
    print("graphgram MGK benchmark  %s  (%s)" % (info["date"], result["mode"]))
    print("machine: %s, %d cores available, graphgram --jobs %d, numpy %s, commit %s%s" % (
        info["cpu_model"], info["cores_available"], info["jobs"], info["numpy"], info["graphgram_commit"][:10],
        " (+%d changed files)" % len(info["graphgram_worktree_changes"]) if info["graphgram_worktree_changes"] else ""))
    print("load average (1/5/15 min): start %s, end %s" % (" ".join("%.2f" % x for x in info["loadavg_start"]),
                                                           " ".join("%.2f" % x for x in info["loadavg_end"])))
    print("NumPy peak: %dx%d float64 a @ b, best of %d: %.1f GFLOP/s on %d threads" % (
        peak["n"], peak["n"], peak["repeats"], peak["gflops"], info["jobs"]))
    print()
    for ln in table_lines(rows):
        print(ln)
    print()
    print("'~' = extrapolated (full s: from the subset by sum of nnz*nnz' over pairs; peer s: gklearn's subset time "
          "scaled the same way).")
    print("GFLOP/s = sum over solved pairs of 2*nnz(A)*nnz(A')*CG iterations / time of _gram; "
          "%peak = GFLOP/s / NumPy peak.")
    if scaling:
        print("protein-like scaling: time per pair ~ (nnz*nnz')^%.2f over %s atoms (%s s per pair)" % (
            scaling["slope"], "/".join(map(str, scaling["sizes"])),
            " / ".join("%.3g" % t for t in scaling["time_per_pair_s"])))
    for r in rows:
        if r["set"].endswith("peer") and r["agreement"] is not None:
            print("%s: gklearn n_iteration=%d (%s) agrees with graphgram*q^2/(n n') to %.1e relative (max over %d pairs)"
                  % (r["set"], r["peer_n_iteration"], r["peer_mode"], r["agreement"], r["pairs"]))
    nwarn = sum(len(r["warnings"]) for r in rows)
    if nwarn:
        print("WARNING: %d solver warnings (see JSON)" % nwarn)
    print()
    print("targets:")
    for t in targets:
        v = t["value"]
        print("  [%s] %-75s %s%s" % ("met" if t["met"] else "MISSED", t["target"],
                                    ("%.3g" % v) if isinstance(v, float) else v,
                                    ("  (" + t["note"] + ")") if t["note"] else ""))
    print()
    print("total %.0f s" % result["total_time_s"])


def main(argv=None):
    args = parse_args(argv)
    if args.show:
        with open(args.show) as f:
            result = json.load(f)
        result["targets"] = check_targets(result["rows"], result.get("protein_scaling"), result["mode"] == "quick")
        print_report(result)
        return result
    if not os.path.isdir(args.datasets):
        sys.exit("data sets not found in %s (use --datasets)" % args.datasets)
    args.datasets = os.path.abspath(args.datasets)
    selected = args.only or SETS
    subsets = dict(QUICK_SUBSET if args.quick else DEFAULT_SUBSET)
    if args.full:
        subsets = {k: None for k in subsets}
    if args.full_nci1:
        subsets["NCI1"] = None
    for s in args.subset:
        k, _, v = s.partition("=")
        if k.upper() not in subsets or not v.isdigit():
            sys.exit("--subset expects NAME=N with NAME in %s" % ", ".join(subsets))
        subsets[k.upper()] = int(v) or None
    out = args.out or os.path.join(HERE, "results", "mgk_quick.json" if args.quick else "mgk.json")
    peak_n = args.peak_n or (1024 if args.quick else 4096)
    sizes = QUICK_PROTEIN_SIZES if args.quick else PROTEIN_SIZES
    per_size = 2 if args.quick else args.protein_per_size
    peer_mutag = args.peer_mutag or (4 if args.quick else 12)
    peer_nci1 = args.peer_nci1 or (3 if args.quick else 6)

    t_start = time.perf_counter()
    info = machine_info(args.jobs)
    log("graphgram %s (copy of %s, commit %s), %s, %d cores, load %s" % (
        info["graphgram_path"], info["graphgram_snapshot_of"], info["graphgram_commit"][:10], info["cpu_model"], info["cores_available"],
        " ".join("%.2f" % x for x in info["loadavg_start"])))
    peak = numpy_peak(peak_n, args.peak_repeats, args.jobs)
    log("NumPy %dx%d float64 matmul: %.1f GFLOP/s (%d threads)" % (peak_n, peak_n, peak["gflops"], args.jobs))
    g_peak = peak["gflops"]

    rows, scaling = [], None
    partial = os.path.splitext(out)[0] + ".partial.json"

    def checkpoint():
        # Rows so far, in case a long run is interrupted; removed at the end.
        write_json(partial, {"machine": info, "numpy_peak": peak, "rows": rows, "protein_scaling": scaling})

    for name in TU_SETS:
        if name in selected:
            rows.append(run_tu(name, args, g_peak, subsets[name]))
            checkpoint()
    for name in ("NWS", "BA"):
        if name in selected:
            rows.append(run_synthetic(name, args, g_peak, subsets[name]))
            checkpoint()
    if "PROTEIN3D" in selected:
        prow, scaling = run_protein(args, g_peak, sizes, per_size)
        rows += prow
        checkpoint()
    if "PEER" in selected:
        rows += run_peer("MUTAG", args, g_peak, peer_mutag, full_row=True)
        checkpoint()
        rows += run_peer("NCI1", args, g_peak, peer_nci1, full_row=False)

    info["loadavg_end"] = list(os.getloadavg())
    total = time.perf_counter() - t_start
    targets = check_targets(rows, scaling, args.quick)
    result = {
        "benchmark": "graphgram marginalized graph kernel",
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "mode": "quick" if args.quick else ("full" if args.full else "default"),
        "q": args.q,
        "machine": info,
        "numpy_peak": peak,
        "rows": rows,
        "protein_scaling": scaling,
        "targets": targets,
        "total_time_s": total,
    }
    csv_path = write_outputs(out, result)
    if os.path.exists(partial):
        os.remove(partial)

    print_report(result)
    print("results: %s, %s" % (os.path.relpath(out), os.path.relpath(csv_path)))
    return result


if __name__ == "__main__":
    main()
