"""Molecular property regression: graphgram's marginalized kernel against fingerprints.

For each MoleculeNet set (ESOL, FreeSolv, QM7 from $GRAPHGRAM_DATASETS, by default
shared/datasets beside the repository), on a
seeded random subset and random 80/20 train/test splits, in one run:

- ``mean``: predicting the training mean;
- ``tanimoto``: the Tanimoto kernel on RDKit Morgan fingerprints (radius 2, 2048 bits);
- ``mgk:<name>``: graphgram marginalized-kernel candidates, the preset
  ``molecular_kernel()`` among them.

Each kernel is scored by KernelRidge with alpha chosen by 5-fold cross-validation
on the training part, and by scikit-learn's GaussianProcessRegressor with
``ConstantKernel() * kernel + WhiteKernel()`` and its own optimizer (graph
kernels compose directly with scikit-learn's kernels). With ``--select`` the
candidates' 5-fold CV RMSE of KernelRidge on the training part of each set is
also printed: that is how the preset's defaults were chosen (the test parts are
never used for choosing).

    nice .venv/bin/python benchmarks/bench_molecules.py --n ESOL=200 FreeSolv=200 QM7=200 --select round1 --no-gp
"""

import argparse
import csv
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import ConstantKernel, Kernel, WhiteKernel  # noqa: E402
from sklearn.kernel_ridge import KernelRidge  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from _common import require  # noqa: E402
import graphgram  # noqa: E402
from graphgram import MarginalizedGraphKernel, molecular_kernel  # noqa: E402
from graphgram.microkernels import Convolution, KroneckerDelta, TensorProduct  # noqa: E402
from graphgram.molecules import from_smiles  # noqa: E402

DATA = require()
SETS = {
    "ESOL": ("ESOL/delaney-processed.csv", "smiles", "measured log solubility in mols per litre"),
    "FreeSolv": ("FreeSolv/SAMPL.csv", "smiles", "expt"),
    "QM7": ("QM7/qm7.csv", "smiles", "target"),
}


def load(name, n, seed):
    path, scol, ycol = SETS[name]
    with open(DATA / path, newline="") as f:
        rows = list(csv.DictReader(f))
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(rows))
    smiles, y = [], []
    for i in idx:
        if n and len(smiles) >= n:
            break
        s = rows[i][scol].strip()
        try:
            from_smiles(s)
        except ValueError:
            continue
        smiles.append(s)
        y.append(float(rows[i][ycol]))
    return smiles, np.array(y), len(rows)


# --- Tanimoto baseline ---------------------------------------------------------------


def fingerprints(smiles):
    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    out = np.zeros((len(smiles), 2048))
    for i, s in enumerate(smiles):
        fp = gen.GetFingerprint(Chem.MolFromSmiles(s))
        DataStructs.ConvertToNumpyArray(fp, out[i])
    return out


class Tanimoto(Kernel):
    """Tanimoto (Jaccard) kernel on bit vectors, a scikit-learn kernel without hyperparameters."""

    def __init__(self):
        pass

    def __call__(self, X, Y=None, eval_gradient=False):
        X = np.asarray(X, dtype=np.float64)
        Yv = X if Y is None else np.asarray(Y, dtype=np.float64)
        inter = X @ Yv.T
        K = inter / (X.sum(1)[:, None] + Yv.sum(1)[None, :] - inter)
        if eval_gradient:
            return K, np.empty((X.shape[0], X.shape[0], 0))
        return K

    def diag(self, X):
        return np.ones(len(X))

    def is_stationary(self):
        return False


# --- candidates ----------------------------------------------------------------------


def candidates():
    """Marginalized-kernel candidates (name -> factory); "preset" is molecular_kernel().

    Round 1 (``--select round1``): how rich the node and edge kernels are, h and q.
    Round 2 (``--select round2``): q, h and the size normalization of the best of round 1.
    """
    def rich(h=0.5, q=0.05, sets=True, normalize=True):
        node = dict(element=KroneckerDelta(h), aromatic=KroneckerDelta(h), charge=KroneckerDelta(h),
                    hybridization=KroneckerDelta(h), hcount=KroneckerDelta(h), in_ring=KroneckerDelta(h))
        if sets:
            node["neighbors"] = Convolution(KroneckerDelta(h)).normalized
            node["ring_sizes"] = Convolution(KroneckerDelta(h)).normalized
        edge = TensorProduct(order=KroneckerDelta(h), aromatic=KroneckerDelta(h), conjugated=KroneckerDelta(h),
                             in_ring=KroneckerDelta(h))
        return MarginalizedGraphKernel(TensorProduct(**node), edge, q=q, normalize=normalize)

    return {
        "round1": {
            "old-preset": lambda: MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.2)),
                                                          TensorProduct(order=KroneckerDelta(0.5)), q=0.05,
                                                          normalize=True),
            "rich-h0.5-q0.05": lambda: rich(0.5, 0.05, sets=False),
            "rich+sets-h0.5-q0.05": lambda: rich(0.5, 0.05),
            "rich+sets-h0.8-q0.05": lambda: rich(0.8, 0.05),
            "rich+sets-h0.8-q0.2": lambda: rich(0.8, 0.2),
            "rich+sets-h0.3-q0.05": lambda: rich(0.3, 0.05),
            "rich+sets-h0.5-q0.2": lambda: rich(0.5, 0.2),
        },
        "round2": {
            "rich-h0.5-q0.05": lambda: rich(0.5, 0.05, sets=False),
            "rich-h0.5-q0.2": lambda: rich(0.5, 0.2, sets=False),
            "rich-h0.7-q0.1": lambda: rich(0.7, 0.1, sets=False),
            "rich-h0.5-q0.1-s0.5": lambda: rich(0.5, 0.1, sets=False, normalize=0.5),
            "rich-h0.5-q0.1-raw": lambda: rich(0.5, 0.1, sets=False, normalize=False),
        },
    }


# --- scoring -------------------------------------------------------------------------

ALPHAS = [1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0, 10.0]


def krr_cv_alpha(K, y, folds=5, seed=0):
    """alpha with the lowest 5-fold CV RMSE of KernelRidge on a precomputed Gram matrix, and that RMSE."""
    best = (np.inf, None)
    kf = KFold(folds, shuffle=True, random_state=seed)
    for a in ALPHAS:
        err = []
        for tr, va in kf.split(y):
            m = KernelRidge(alpha=a, kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr] - y[tr].mean())
            err.append((m.predict(K[np.ix_(va, tr)]) + y[tr].mean() - y[va]) ** 2)
        rmse = float(np.sqrt(np.mean(np.concatenate(err))))
        best = min(best, (rmse, a))
    return best[1], best[0]


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def lbfgs(maxiter):
    """scikit-learn's GP optimizer (L-BFGS-B) with at most ``maxiter`` iterations."""
    from scipy.optimize import minimize

    def optimizer(obj_func, initial_theta, bounds):
        res = minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds,
                       options={"maxiter": maxiter})
        return res.x, res.fun
    return optimizer


def evaluate(name, kernel, Xall, y, tr, te, gp=True, gp_maxiter=15):
    """KRR (CV alpha) and GP test RMSE of one kernel on one split; times in seconds."""
    out = {"kernel": name}
    t = time.perf_counter()
    K = kernel(Xall)
    out["gram_s"] = time.perf_counter() - t
    t = time.perf_counter()
    alpha, cv = krr_cv_alpha(K[np.ix_(tr, tr)], y[tr])
    m = KernelRidge(alpha=alpha, kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr] - y[tr].mean())
    out.update(krr_alpha=alpha, krr_cv_rmse=cv,
               krr_rmse=rmse(m.predict(K[np.ix_(te, tr)]) + y[tr].mean(), y[te]),
               krr_s=out["gram_s"] + time.perf_counter() - t)
    if gp:
        Xtr = [Xall[i] for i in tr] if isinstance(Xall, list) else Xall[tr]
        Xte = [Xall[i] for i in te] if isinstance(Xall, list) else Xall[te]
        # Targets standardized by the GP (normalize_y), so one set of signal and noise
        # bounds suits every data set.
        k0 = ConstantKernel(1.0, (1e-3, 1e3)) * kernel + WhiteKernel(0.1, (1e-5, 10.0))
        t = time.perf_counter()
        gpr = GaussianProcessRegressor(k0, optimizer=lbfgs(gp_maxiter), normalize_y=True, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gpr.fit(Xtr, y[tr])
        out["gp_s"] = time.perf_counter() - t
        out["gp_rmse"] = rmse(gpr.predict(Xte), y[te])
        # The same GP without optimizing: the starting point (for graphgram, the preset's defaults).
        g0 = GaussianProcessRegressor(k0, optimizer=None, normalize_y=True).fit(Xtr, y[tr])
        out["gp_lml_start"] = float(g0.log_marginal_likelihood_value_)
        out["gp_lml"] = float(gpr.log_marginal_likelihood_value_)
        out["gp_start_rmse"] = rmse(g0.predict(Xte), y[te])
        out["gp_kernel"] = repr(gpr.kernel_)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", nargs="*", default=["ESOL=300", "FreeSolv=300", "QM7=300"],
                    help="molecules per set, NAME=N (0 = all)")
    ap.add_argument("--splits", type=int, default=1, help="random 80/20 splits per set")
    ap.add_argument("--select", nargs="*", default=[], help="also score the candidates of these rounds "
                    "(round1, round2; KRR CV on the training parts)")
    ap.add_argument("--no-gp", action="store_true")
    ap.add_argument("--gp-maxiter", type=int, default=15, help="L-BFGS-B iterations of the GP optimizer")
    ap.add_argument("--jobs", type=int, default=None, help="n_jobs of the graph kernels")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(HERE / "results" / "molecules.json"))
    args = ap.parse_args()
    sizes = dict((s.split("=")[0], int(s.split("=")[1])) for s in args.n)
    rows = []
    for ds, n in sizes.items():
        smiles, y, total = load(ds, n, args.seed)
        graphs = [from_smiles(s) for s in smiles]
        fps = fingerprints(smiles)
        print("== %s: %d of %d molecules, %.1f heavy atoms on average" % (
            ds, len(smiles), total, np.mean([g.n_nodes for g in graphs])), flush=True)
        for split in range(args.splits):
            perm = np.random.default_rng(1000 + split).permutation(len(y))
            cut = int(round(0.8 * len(y)))
            tr, te = np.sort(perm[:cut]), np.sort(perm[cut:])
            base = {"set": ds, "n": len(y), "n_train": len(tr), "n_test": len(te), "split": split}
            r = dict(base, kernel="mean", krr_rmse=rmse(np.full(len(te), y[tr].mean()), y[te]))
            r["gp_rmse"] = r["krr_rmse"]
            rows.append(r)
            print(json.dumps(r), flush=True)
            rows.append(dict(base, **evaluate("tanimoto", Tanimoto(), fps, y, tr, te, gp=not args.no_gp,
                                              gp_maxiter=args.gp_maxiter)))
            print(json.dumps(rows[-1]), flush=True)
            names = {}
            for rnd in args.select:
                names.update(candidates()[rnd])
            names["preset"] = molecular_kernel
            for name, make in names.items():
                k = make()
                if args.jobs:
                    k.set_params(n_jobs=args.jobs)
                k.set_params(verbose=False)
                gp = not args.no_gp and name == "preset"
                rows.append(dict(base, **evaluate("mgk:" + name, k, graphs, y, tr, te, gp=gp,
                                                  gp_maxiter=args.gp_maxiter)))
                print(json.dumps(rows[-1]), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"argv": sys.argv, "sizes": sizes, "graphgram": graphgram.__version__, "rows": rows}, f, indent=1)
    print()
    print("%-9s %-26s %5s %9s %9s %8s %9s %8s %10s %17s" % ("set", "kernel", "n", "KRR rmse", "KRR cv", "KRR s",
                                                              "GP rmse", "GP s", "GP0 rmse", "LML start -> opt"))
    for r in rows:
        print("%-9s %-26s %5d %9.3f %9s %8s %9s %8s %10s %17s" % (
            r["set"], r["kernel"], r["n"], r["krr_rmse"],
            "%.3f" % r["krr_cv_rmse"] if "krr_cv_rmse" in r else "",
            "%.1f" % r["krr_s"] if "krr_s" in r else "",
            "%.3f" % r["gp_rmse"] if "gp_rmse" in r else "", "%.1f" % r["gp_s"] if "gp_s" in r else "",
            "%.3f" % r["gp_start_rmse"] if "gp_start_rmse" in r else "",
            "%.1f -> %.1f" % (r["gp_lml_start"], r["gp_lml"]) if "gp_lml" in r else ""))


if __name__ == "__main__":
    main()
