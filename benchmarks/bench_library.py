"""A library of drug-like molecules as one GraphLibrary store (issue #51 item 1).

Generates n drug-like molecules (two ESOL molecules joined by one bond, 12-45
heavy atoms: ``_druglike.druglike``; the SMILES are cached in the output
folder), parses them into a GraphLibrary with ``--jobs`` processes, saves it,
then in fresh processes times ``GraphLibrary.load`` (memory-mapped and read
into memory, best of three) and a WL Gram matrix of the whole library
against 100 of its molecules, with the peak resident memory of each process.

    python benchmarks/bench_library.py --n 100000 --jobs 2 --out /tmp/druglike100k

Prints one JSON object; run-by-run results go to benchmarks/log/library_issue51.md.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine  # noqa: E402

CHILD = r"""
import json, resource, sys, time
import numpy as np
from graphgram import GraphLibrary, WeisfeilerLehmanKernel
path, what = sys.argv[1], sys.argv[2]
t = time.perf_counter()
lib = GraphLibrary.load(path, mmap=(what != "load_read"))
nodes = int(lib.n_nodes.sum())
out = {"seconds": time.perf_counter() - t, "graphs": len(lib), "nodes": nodes}
if what == "wl":
    k = WeisfeilerLehmanKernel(3, "element", normalize=True, verbose=False)  # bench_bo.py's WL
    measured = lib[np.linspace(0, len(lib) - 1, 100).astype(int)]
    t = time.perf_counter()
    K = k(lib, measured)
    out.update(seconds=time.perf_counter() - t, shape=list(K.shape))
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def child(path, what):
    r = subprocess.run([sys.executable, "-c", CHILD, str(path), what], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="/tmp/graphgram-druglike")
    args = ap.parse_args()
    from graphgram import GraphLibrary
    from _druglike import druglike

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = out / ("smiles-%d.txt" % args.n)
    res = {"machine_before": machine(), "n": args.n, "jobs": args.jobs}
    if cache.exists():
        smiles = cache.read_text().split("\n")
    else:
        t = time.perf_counter()
        smiles, _ = druglike(args.n, seed=0, low=12, high=45)
        res["generate_seconds"] = time.perf_counter() - t
        cache.write_text("\n".join(smiles))
    t = time.perf_counter()
    lib = GraphLibrary.from_smiles(smiles, n_jobs=args.jobs, verbose=False)
    res["parse_seconds"] = time.perf_counter() - t
    store = out / "library"
    t = time.perf_counter()
    lib.save(store)
    res["save_seconds"] = time.perf_counter() - t
    res["store_mb"] = sum(f.stat().st_size for f in store.iterdir()) / 2**20
    res["heavy_atoms_mean"] = float(lib.n_nodes.mean())
    for what in ("load_mmap", "load_read"):
        runs = [child(store, what) for _ in range(3)]
        res[what + "_seconds"] = min(r["seconds"] for r in runs)
        res[what + "_peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
    wl = child(store, "wl")
    res["wl_library_vs_100_seconds"], res["wl_peak_rss_mb"] = wl["seconds"], wl["peak_rss_mb"]
    res["machine_after"] = machine()
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
