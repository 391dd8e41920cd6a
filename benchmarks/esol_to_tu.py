#!/usr/bin/env python3
"""Write the ESOL molecules in TU-dataset format for Go-side experiments.

Heavy atoms become nodes labelled by atomic number, bonds become edges
labelled 1 (single), 2 (double), 3 (triple) or 4 (aromatic); graph label is
the row number. Used by the Kronecker-product prototype's measurement
(benchmarks/log/kronecker_prototype.md; the prototype has since left the
core, the log says how to bring it back)::

    python3 benchmarks/esol_to_tu.py OUT     # writes OUT/ESOL_*.txt
"""
import csv
import os
import sys

from rdkit import Chem

from _common import require

BOND = {Chem.BondType.SINGLE: 1, Chem.BondType.DOUBLE: 2,
        Chem.BondType.TRIPLE: 3, Chem.BondType.AROMATIC: 4}


def main(out):
    src = require() / "ESOL" / "delaney-processed.csv"  # $GRAPHGRAM_DATASETS, else shared/ beside the repository
    os.makedirs(out, exist_ok=True)
    A, el, ind, nl, gl = [], [], [], [], []
    base = 0
    with open(src) as f:
        for row in csv.DictReader(f):
            m = Chem.MolFromSmiles(row["smiles"].strip())
            if m is None or m.GetNumBonds() == 0:
                continue
            g = len(gl) + 1
            gl.append(g)
            for a in m.GetAtoms():
                ind.append(g)
                nl.append(a.GetAtomicNum())
            for b in m.GetBonds():
                u, v = b.GetBeginAtomIdx() + base + 1, b.GetEndAtomIdx() + base + 1
                t = BOND.get(b.GetBondType(), 5)
                A += [(u, v), (v, u)]
                el += [t, t]
            base += m.GetNumAtoms()
    w = lambda name, rows: open(os.path.join(out, f"ESOL_{name}.txt"), "w").write(
        "".join(", ".join(map(str, r)) + "\n" if isinstance(r, tuple) else f"{r}\n" for r in rows))
    w("A", A)
    w("edge_labels", el)
    w("graph_indicator", ind)
    w("node_labels", nl)
    w("graph_labels", gl)
    print(f"{len(gl)} molecules, {len(ind)} atoms, {len(A) // 2} bonds -> {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 benchmarks/esol_to_tu.py OUT")
    main(sys.argv[1])
