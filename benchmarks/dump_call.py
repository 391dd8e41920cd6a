#!/usr/bin/env python3
"""Dump one marginalized-kernel call on molecules for the Go replay benchmark.

Packs N molecules of a MoleculeNet CSV (from $GRAPHGRAM_DATASETS) exactly as
``molecular_kernel()`` packs them and writes the arrays (.npy) and the JSON
parameters to DIR, so that the Go core can be profiled on a real workload
without Python:

    python3 benchmarks/dump_call.py --set ESOL --n 300 /tmp/esol300
    GRAPHGRAM_REPLAY=/tmp/esol300 GOEXPERIMENT=simd GOMAXPROCS=1 \\
        go test ./pybind -run '^$' -bench Replay -cpuprofile cpu.out

``--min-atoms 20`` keeps only molecules with at least 20 heavy atoms;
``--set druglike`` takes the drug-size molecules of _druglike.py (seed ``--seed``).
``--set MUTAG`` (or another TU set) dumps the first N graphs of that set with
the TU benchmarks' kernel instead: q = 0.01, KroneckerDelta(0.5) on node and
edge labels (``--n 0``: all).
"""

import argparse
import csv
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, os.environ.get("GRAPHGRAM_PYTHON", str(HERE.parent / "python")))

from _common import require, tu_kernel  # noqa: E402
from graphgram import _backend, _packing, datasets, molecular_kernel  # noqa: E402
from graphgram.molecules import from_smiles  # noqa: E402

SETS = {"ESOL": ("ESOL/delaney-processed.csv", "smiles"), "QM7": ("QM7/qm7.csv", "smiles"),
        "FreeSolv": ("FreeSolv/SAMPL.csv", "smiles")}
TU = ("MUTAG", "ENZYMES", "PROTEINS", "NCI1")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder to write")
    ap.add_argument("--set", default="ESOL", choices=sorted(SETS) + list(TU) + ["druglike"])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--min-atoms", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.set in TU:
        graphs, _ = datasets.load_tu(require() / a.set)
        graphs = graphs[:a.n or len(graphs)]
        k = tu_kernel(graphs)
    elif a.set == "druglike":
        from _druglike import druglike
        graphs = [from_smiles(s) for s in druglike(a.n, a.seed)[0]]
        k = molecular_kernel()
    else:
        path, column = SETS[a.set]
        with open(require() / path, newline="") as f:
            rows = list(csv.DictReader(f))
        graphs = []
        for i in np.random.default_rng(a.seed).permutation(len(rows)):
            g = from_smiles(rows[i][column])
            if g.n_nodes >= a.min_atoms:
                graphs.append(g)
            if len(graphs) == a.n:
                break
        k = molecular_kernel()
    node_attrs, edge_attrs = k._attributes()
    px, _, nl, el = _packing.pack(graphs, None, node_attrs, edge_attrs, start=k._start, discrete=k._discrete())
    params = dict(k._params(nl, el), **_backend.device_params("cpu", "float64"))
    os.makedirs(a.out, exist_ok=True)
    for name in ("node_ptr", "edge_ptr", "edges", "weights", "node_feat", "edge_feat", "start"):
        arr = getattr(px, name)
        if arr is not None:
            np.save(os.path.join(a.out, name + ".npy"), np.ascontiguousarray(arr))
    with open(os.path.join(a.out, "params.json"), "w") as f:
        json.dump(params, f)
    print("%d %s graphs, %.1f nodes on average -> %s"
          % (len(graphs), a.set, np.mean([g.n_nodes for g in graphs]), a.out))


if __name__ == "__main__":
    main()
