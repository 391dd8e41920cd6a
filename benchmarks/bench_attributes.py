"""What atom feature vectors add on ESOL: an exact GP with and without them (#52 item 7).

docs/attributes.md's recipe, measured. On a seeded subset of ESOL (``--n``
molecules, default 600; the first n of bench_molecules.py's seeded shuffle) and
``--splits`` random 80/20 splits of it (split s drawn with seed ``--seed`` + s),
two exact Gaussian processes are fitted on the same training molecules:

- ``preset``: ``GaussianProcessRegressor(molecular_gp_kernel(), normalize_y=True,
  optimizer=FisherScoring())``, i.e. ``ConstantKernel(30) *
  molecular_kernel(q=0.5, h=0.9) + WhiteKernel(0.05)``;
- ``features``: the same model with one more factor in the node kernel,
  ``atom_features=SquareExponential(3.0, length_scale_bounds=(0.1, 1000.0))``
  on a vector of five atom descriptors per atom: the Gasteiger partial charge
  and RDKit's per-atom contributions to Crippen logP and molar refractivity, to
  the TPSA and to Labute's approximate surface area, each standardized by the
  mean and standard deviation over the training molecules' atoms. With its
  length scale at the upper bound the factor is ≈ 1 and the model is the
  preset's, so the likelihood decides whether the vector is used.

Per split and model: the fit's seconds and evaluations, the log marginal
likelihood, the test RMSE and the test NLPD (the mean negative log predictive
density of the measurements, noise included); then the paired differences
(features − preset) over the splits: their mean and standard deviation. The
machine line (with the load average) is printed at the start and the end:
fit times depend on the load, the quality numbers do not.

    GRAPHGRAM_DATASETS=../shared/datasets .venv/bin/python benchmarks/bench_attributes.py --n 600 --splits 3
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402

from _common import machine  # noqa: E402
from graphgram import Graph, molecular_gp_kernel, molecules  # noqa: E402
from graphgram.gaussian_process import FisherScoring, negative_log_predictive_density  # noqa: E402
from graphgram.microkernels import SquareExponential, TensorProduct  # noqa: E402

#: The columns of the atom feature vector, in order.
FEATURES = ("gasteiger", "crippen_logp", "crippen_mr", "tpsa", "labute_asa")


def atom_descriptors(mol):
    """The raw (unscaled) atom feature vectors of an RDKit molecule.

    Parameters
    ----------
    mol : rdkit.Chem.Mol
        Hydrogens implicit, as :func:`graphgram.molecules.from_rdkit` reads it.

    Returns
    -------
    ndarray of shape (n_atoms, 5)
        One row per atom, columns as :data:`FEATURES`; a Gasteiger charge that
        RDKit cannot assign (NaN) is 0.
    """
    from rdkit.Chem import AllChem, rdMolDescriptors
    AllChem.ComputeGasteigerCharges(mol)
    charge = np.array([a.GetDoubleProp("_GasteigerCharge") for a in mol.GetAtoms()])
    crippen = np.array(rdMolDescriptors._CalcCrippenContribs(mol)).reshape(-1, 2)
    tpsa = np.array(rdMolDescriptors._CalcTPSAContribs(mol))
    asa = np.array(rdMolDescriptors._CalcLabuteASAContribs(mol)[0])
    out = np.column_stack([charge, crippen, tpsa, asa])
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


def with_features(g, raw, mean, std):
    """Graph g with the node attribute ``atom_features``: (raw − mean) / std per column."""
    node_attrs = dict(g.node_attrs)
    node_attrs["atom_features"] = (raw - mean) / std
    return Graph(g.n_nodes, g.edges, g.weights, node_attrs, dict(g.edge_attrs))


def features_kernel():
    """molecular_gp_kernel() with the atom feature vector as one more node-kernel factor."""
    kernel = molecular_gp_kernel(verbose=False)
    graph_kernel = kernel.k1.k2  # ConstantKernel * MarginalizedGraphKernel + WhiteKernel
    node = TensorProduct(**graph_kernel.node_kernel.get_params(deep=False),
                         atom_features=SquareExponential(3.0, length_scale_bounds=(0.1, 1000.0)))
    graph_kernel.set_params(node_kernel=node)
    return kernel


def fit(name, kernel, X, y, Xt, yt):
    """Fit one exact GP; return its row (seconds, evaluations, likelihood, RMSE, NLPD)."""
    optimizer = FisherScoring(verbose=False)
    gp = GaussianProcessRegressor(kernel, normalize_y=True, optimizer=optimizer)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hyperparameters at their bounds
        gp.fit(X, y)
    seconds = time.perf_counter() - t
    mean, std = gp.predict(Xt, return_std=True)
    return dict(model=name, seconds=round(seconds, 1), evaluations=optimizer.n_evaluations_,
                lml=round(float(gp.log_marginal_likelihood_value_), 3),
                rmse=round(float(np.sqrt(np.mean((mean - yt) ** 2))), 4),
                nlpd=round(negative_log_predictive_density(yt, mean, std), 4),
                hyperparameters={h.name: float("%.4g" % v) for h, v in
                                 zip([h for h in gp.kernel_.hyperparameters if not h.fixed],
                                     np.exp(gp.kernel_.theta))})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=600, help="molecules in the subset (default 600)")
    ap.add_argument("--splits", type=int, default=3, help="random 80/20 splits (default 3)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the subset and of the first split")
    args = ap.parse_args()

    from rdkit import Chem
    from bench_molecules import load
    print(json.dumps({"machine": machine()}), flush=True)
    smiles, y, total = load("ESOL", args.n, args.seed)
    mols = [Chem.MolFromSmiles(s) for s in smiles]
    graphs = [molecules.from_rdkit(m) for m in mols]
    raw = [atom_descriptors(m) for m in mols]
    print(json.dumps({"set": "ESOL", "molecules": len(y), "of": total, "splits": args.splits,
                      "heavy_atoms": round(float(np.mean([g.n_nodes for g in graphs])), 2),
                      "features": FEATURES}), flush=True)
    rows = []
    for s in range(args.splits):
        perm = np.random.default_rng(args.seed + s).permutation(len(y))
        n_train = int(round(0.8 * len(y)))
        tr, te = perm[:n_train], perm[n_train:]
        # Standardize by the training molecules' atoms only: the test set stays unseen.
        train_atoms = np.vstack([raw[i] for i in tr])
        mean, std = train_atoms.mean(axis=0), train_atoms.std(axis=0)
        std[std == 0] = 1.0
        featured = [with_features(g, r, mean, std) for g, r in zip(graphs, raw)]
        for name, kernel, gs in (("preset", molecular_gp_kernel(verbose=False), graphs),
                                 ("features", features_kernel(), featured)):
            row = dict(split=s, n_train=len(tr), n_test=len(te),
                       **fit(name, kernel, [gs[i] for i in tr], y[tr], [gs[i] for i in te], y[te]),
                       load=round(os.getloadavg()[0], 2))
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for key in ("rmse", "nlpd", "lml", "seconds"):
        a = np.array([r[key] for r in rows if r["model"] == "preset"])
        b = np.array([r[key] for r in rows if r["model"] == "features"])
        d = b - a
        summary[key] = dict(preset=round(float(a.mean()), 4), features=round(float(b.mean()), 4),
                            mean_difference=round(float(d.mean()), 4),
                            sd_difference=round(float(d.std(ddof=1)), 4) if len(d) > 1 else None,
                            features_better_on=int(np.sum(d > 0 if key == "lml" else d < 0)))
    print(json.dumps({"paired (features - preset)": summary}), flush=True)
    print(json.dumps({"machine": machine()}), flush=True)


if __name__ == "__main__":
    main()
