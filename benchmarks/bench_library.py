"""A library of drug-like molecules as one GraphLibrary store (issue #51 item 1).

Generates n drug-like molecules (two ESOL molecules joined by one bond, 12-45
heavy atoms: ``_druglike.druglike``; the SMILES are cached in the output
folder), parses them into a GraphLibrary with ``--jobs`` processes, saves it,
then in fresh processes times ``GraphLibrary.load`` (memory-mapped and read
into memory, best of three), a WL Gram matrix of the whole library against
100 of its molecules, and one BO round with the WL kernel as the documented
BoTorch recipe runs it (100 measured, Crippen logP: fit, qLogNEI over the
rest with optimize_acqf_discrete, the next round with one more measurement,
then ``thompson_sampling`` of 96 and ``kriging_believer`` of 96; with
``--mgk`` the same with the molecular preset at a fixed θ, whose next round
computes the new measurement's column only; with ``--tanimoto`` the same
loop with bench_bo.py's Tanimoto GP on Morgan fingerprints, computed once
beside the store), with the peak resident memory of each process.
``--pools 1000 10000 0`` runs the rounds on the library's first 10³, 10⁴
molecules and on all of them; ``--rounds-only`` skips the load and Gram
timings; ``--moleculenet`` takes every distinct molecule of ESOL, FreeSolv
and QM7 (about 9,000) as the library instead of generated ones.

    python benchmarks/bench_library.py --n 100000 --jobs 2 --out /tmp/druglike100k
    python benchmarks/bench_library.py --n 100000 --reuse --rounds-only --mgk --tanimoto --pools 1000 10000 0 --out /tmp/druglike100k

Prints one JSON object; run-by-run results go to benchmarks/log/library_issue51.md.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine  # noqa: E402

CHILD = r"""
import json, resource, sys, time
import numpy as np
from graphgram import GraphLibrary, WeisfeilerLehmanKernel
path, what, pool = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = time.perf_counter()
lib = GraphLibrary.load(path, mmap=(what != "load_read"))
if pool:
    lib = lib[:pool]  # the first molecules: a smaller library (a view)
nodes = int(lib.n_nodes.sum())
out = {"seconds": time.perf_counter() - t, "graphs": len(lib), "nodes": nodes}
if what == "wl":
    k = WeisfeilerLehmanKernel(3, "element", normalize=True, verbose=False)  # bench_bo.py's WL
    measured = lib[np.linspace(0, len(lib) - 1, 100).astype(int)]
    t = time.perf_counter()
    K = k(lib, measured)
    out.update(seconds=time.perf_counter() - t, shape=list(K.shape))
if what in ("bo_wl", "bo_mgk", "bo_tanimoto"):
    # One BO round as the documented BoTorch recipe runs it, WL kernel, 100 measured
    # molecules (Crippen logP), then Thompson sampling of 96 from the rest.
    import torch
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.optim import optimize_acqf_discrete
    from gpytorch.kernels import ScaleKernel
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from rdkit import Chem, RDLogger
    from rdkit.Chem import Crippen
    from graphgram.gpytorch import GPyTorchGraphKernel, kriging_believer, thompson_sampling
    RDLogger.DisableLog("rdApp.*")
    measured = np.linspace(0, len(lib) - 1, 100).astype(int)
    y = np.array([Crippen.MolLogP(Chem.MolFromSmiles(s)) for s in lib.ids[measured]])
    rest = np.setdiff1d(np.arange(len(lib)), measured)
    if what == "bo_tanimoto":
        # bench_bo.py's Tanimoto GP on Morgan bits (radius 2, 2,048), float64 inputs as a
        # user gives them; the fingerprints (computed once, kept beside the store) are the
        # parse step's counterpart, not timed here.
        from bench_bo import TanimotoKernel
        bits = np.load(sys.argv[4], mmap_mode="r")[:len(lib)]
        t = time.perf_counter()
        inputs = torch.tensor(np.asarray(bits, dtype=np.float64))
        out["inputs_seconds"] = time.perf_counter() - t
        kernel = TanimotoKernel()
        X = inputs[measured]
        choices = inputs[rest]
    t = time.perf_counter()
    if what == "bo_wl":
        kernel = GPyTorchGraphKernel(WeisfeilerLehmanKernel(3, "element", normalize=True, verbose=False), lib)
    elif what == "bo_mgk":  # the molecular preset at its default θ, kept fixed (the round the issue times)
        from graphgram import molecular_kernel
        kernel = GPyTorchGraphKernel(molecular_kernel(verbose=False), lib, learn_hyperparameters=False)
    if what != "bo_tanimoto":
        X = torch.tensor(measured, dtype=torch.float64)[:, None]
        choices = torch.tensor(rest, dtype=torch.float64)[:, None]
    gp = SingleTaskGP(X, torch.tensor(y)[:, None], covar_module=ScaleKernel(kernel))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    out["fit_seconds"] = time.perf_counter() - t
    print(json.dumps(out), file=sys.stderr, flush=True)  # progress: each step as it ends
    t = time.perf_counter()
    pick, _ = optimize_acqf_discrete(qLogNoisyExpectedImprovement(gp, X_baseline=X), q=1, choices=choices)
    out["acquisition_seconds"] = time.perf_counter() - t
    print(json.dumps(out), file=sys.stderr, flush=True)
    # The next round: one more measurement, hyperparameters kept.
    X2 = torch.cat([X, pick])
    first = int(rest[int((choices == pick).all(-1).nonzero()[0, 0])])  # its library position
    y2 = np.append(y, Crippen.MolLogP(Chem.MolFromSmiles(lib.ids[first])))
    gp2 = SingleTaskGP(X2, torch.tensor(y2)[:, None], covar_module=gp.covar_module)
    gp2.load_state_dict(gp.state_dict(), strict=False)
    t = time.perf_counter()
    keep = rest != first
    optimize_acqf_discrete(qLogNoisyExpectedImprovement(gp2.eval(), X_baseline=X2), q=1, choices=choices[keep])
    out["next_round_seconds"] = time.perf_counter() - t
    print(json.dumps(out), file=sys.stderr, flush=True)
    from botorch.acquisition.analytic import LogExpectedImprovement
    t = time.perf_counter()
    optimize_acqf_discrete(LogExpectedImprovement(gp2, best_f=gp2.train_targets.max()), q=1, choices=choices[keep])
    out["next_round_analytic_logei_seconds"] = time.perf_counter() - t
    print(json.dumps(out), file=sys.stderr, flush=True)
    if what == "bo_wl":  # the molecular preset's Nyström features would be K(library, Z): minutes
        t = time.perf_counter()
        chosen, _ = thompson_sampling(gp2, rest[keep], q=96, random_state=0)
        out["thompson_96_seconds"] = time.perf_counter() - t
    if what != "bo_tanimoto":  # a plate of 96 by the Kriging believer (log EI)
        t = time.perf_counter()
        chosen, _ = kriging_believer(gp2, rest[keep], q=96)
        out["kriging_believer_96_seconds"] = time.perf_counter() - t
    out["seconds"] = out["fit_seconds"] + out["acquisition_seconds"]
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def child(path, what, pool=0, *extra):
    r = subprocess.run([sys.executable, "-c", CHILD, str(path), what, str(pool), *map(str, extra)],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
                           str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH")]))))
    if r.returncode:
        raise RuntimeError("%s on %s failed:\n%s" % (what, pool or "all", r.stderr[-3000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def moleculenet_smiles():
    """The distinct molecules (RDKit canonical SMILES) of ESOL, FreeSolv and QM7, in that order."""
    import csv
    from rdkit import Chem, RDLogger
    from _common import require
    RDLogger.DisableLog("rdApp.*")
    seen, out = set(), []
    for path in ("ESOL/delaney-processed.csv", "FreeSolv/SAMPL.csv", "QM7/qm7.csv"):
        with open(require() / path, newline="") as f:
            for row in csv.DictReader(f):
                mol = Chem.MolFromSmiles(row["smiles"])
                s = Chem.MolToSmiles(mol) if mol is not None else None
                if s and s not in seen:
                    seen.add(s)
                    out.append(s)
    return out


def morgan_bits(smiles, path):
    """bench_molecules.py's Morgan fingerprints of the library, kept as uint8, computed once."""
    if not path.exists():
        from bench_molecules import fingerprints
        np.save(path, fingerprints(smiles).astype(np.uint8))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="/tmp/graphgram-druglike")
    ap.add_argument("--mgk", action="store_true", help="also the round with the molecular preset (minutes)")
    ap.add_argument("--reuse", action="store_true", help="time the library already saved in --out")
    ap.add_argument("--pools", type=int, nargs="*", default=[0],
                    help="library sizes of the BO rounds (the first molecules; 0: all)")
    ap.add_argument("--tanimoto", action="store_true", help="also the round with a Tanimoto fingerprint GP")
    ap.add_argument("--rounds-only", action="store_true", help="only the BO rounds (no load and WL Gram timings)")
    ap.add_argument("--moleculenet", action="store_true",
                    help="the library is every distinct molecule of ESOL, FreeSolv and QM7 instead (--n ignored)")
    args = ap.parse_args()
    from graphgram import GraphLibrary
    from _druglike import druglike

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.moleculenet:
        smiles = moleculenet_smiles()
        args.n = len(smiles)
    cache = out / ("smiles-%d.txt" % args.n)
    res = {"machine_before": machine(), "n": args.n, "jobs": args.jobs, "moleculenet": args.moleculenet}
    if args.moleculenet:
        cache.write_text("\n".join(smiles))
    elif cache.exists():
        smiles = cache.read_text().split("\n")
    else:
        t = time.perf_counter()
        smiles, _ = druglike(args.n, seed=0, low=12, high=45)
        res["generate_seconds"] = time.perf_counter() - t
        cache.write_text("\n".join(smiles))
    store = out / "library"
    if not args.reuse:
        t = time.perf_counter()
        lib = GraphLibrary.from_smiles(smiles, n_jobs=args.jobs, verbose=False)
        res["parse_seconds"] = time.perf_counter() - t
        t = time.perf_counter()
        lib.save(store)
        res["save_seconds"] = time.perf_counter() - t
    else:
        lib = GraphLibrary.load(store)
    res["store_mb"] = sum(f.stat().st_size for f in store.iterdir()) / 2**20
    res["heavy_atoms_mean"] = float(lib.n_nodes.mean())
    if not args.rounds_only:
        for what in ("load_mmap", "load_read"):
            runs = [child(store, what) for _ in range(3)]
            res[what + "_seconds"] = min(r["seconds"] for r in runs)
            res[what + "_peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
        wl = child(store, "wl")
        res["wl_library_vs_100_seconds"], res["wl_peak_rss_mb"] = wl["seconds"], wl["peak_rss_mb"]
    keys = ("fit_seconds", "acquisition_seconds", "next_round_seconds", "next_round_analytic_logei_seconds",
            "thompson_96_seconds", "kriging_believer_96_seconds", "inputs_seconds", "peak_rss_mb")
    models = ["bo_wl"] + ["bo_mgk"] * args.mgk + ["bo_tanimoto"] * args.tanimoto
    bits = morgan_bits(smiles, out / ("morgan-%d.npy" % args.n)) if args.tanimoto else None
    for pool in args.pools:
        for what in models:
            bo = child(store, what, pool, *([bits] if what == "bo_tanimoto" else []))
            row = res["%s_%d" % (what, pool or len(lib))] = {k: bo[k] for k in keys if bo.get(k) is not None}
            print(json.dumps({what: pool, **row}), file=sys.stderr, flush=True)
    res["machine_after"] = machine()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
