"""Drug-size molecules for benchmarks: two ESOL molecules joined by one bond.

shared/datasets holds small molecules only (ESOL: 13 heavy atoms on average;
FreeSolv and QM7 fewer), while medicinal chemists fit models on drug-size ones
(Lipophilicity: 27 on average). ``druglike(n, seed)`` makes n distinct
molecules of 20 to 36 heavy atoms: each joins two random ESOL molecules by a
single bond between an atom of each that carries a hydrogen (sanitized by
RDKit; duplicates and failures skipped), deterministically for a seed. The
target is RDKit's Crippen logP (Wildman and Crippen 1999), a computed
lipophilicity, since these molecules have no measurements; ``target`` picks
another computed property instead (for studies across targets): "tpsa"
(topological polar surface area), "mr" (Crippen molar refractivity) or "qed"
(quantitative estimate of drug-likeness).
"""

import csv

import numpy as np

from _common import require


TARGETS = ("logp", "tpsa", "mr", "qed")


def druglike(n, seed=0, low=20, high=36, target="logp"):
    """Return (SMILES list, target array: Crippen logP by default) of n drug-size molecules."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem import QED, Crippen, rdMolDescriptors
    if target not in TARGETS:
        raise ValueError("target must be one of %s, got %r" % (TARGETS, target))
    prop = {"logp": Crippen.MolLogP, "tpsa": rdMolDescriptors.CalcTPSA, "mr": Crippen.MolMR, "qed": QED.qed}[target]
    RDLogger.DisableLog("rdApp.*")
    with open(require() / "ESOL" / "delaney-processed.csv", newline="") as f:
        parts = [Chem.MolFromSmiles(r["smiles"]) for r in csv.DictReader(f)]
    parts = [m for m in parts if m is not None and m.GetNumHeavyAtoms() >= 3]
    rng = np.random.default_rng(seed)
    smiles, seen = [], set()
    while len(smiles) < n:
        a, b = (parts[i] for i in rng.integers(0, len(parts), 2))
        if not low <= a.GetNumHeavyAtoms() + b.GetNumHeavyAtoms() <= high:
            continue
        ha = [x.GetIdx() for x in a.GetAtoms() if x.GetTotalNumHs() > 0]
        hb = [x.GetIdx() for x in b.GetAtoms() if x.GetTotalNumHs() > 0]
        if not ha or not hb:
            continue
        mol = Chem.RWMol(Chem.CombineMols(a, b))
        i, j = int(rng.choice(ha)), a.GetNumAtoms() + int(rng.choice(hb))
        mol.AddBond(i, j, Chem.BondType.SINGLE)
        for k in (i, j):
            atom = mol.GetAtomWithIdx(k)
            atom.SetNoImplicit(False)
            if atom.GetNumExplicitHs() > 0:
                atom.SetNumExplicitHs(atom.GetNumExplicitHs() - 1)
        try:
            Chem.SanitizeMol(mol)
            s = Chem.MolToSmiles(mol)
        except Exception:  # noqa: BLE001 - RDKit raises several kinds; the pair is skipped
            continue
        if s not in seen and Chem.MolFromSmiles(s) is not None:
            seen.add(s)
            smiles.append(s)
    return smiles, np.array([prop(Chem.MolFromSmiles(s)) for s in smiles])
