"""Graph kernels against fingerprint GPs on GAUCHE's regression protocol (issue #52 item 6).

GAUCHE's protocol: random 80/20 train/test splits (seed = split number), an exact
GP per model, test RMSE, NLPD and a calibration error, compared split by split.
Models, all exact GPs with a Gaussian likelihood on the standardized targets:

* ``mgk``: `molecular_gp_kernel()` (the marginalized graph kernel) fitted by
  `FisherScoring()`, scikit-learn's regressor;
* ``wl``: the Weisfeiler–Lehman subtree kernel (element labels, 5 rounds,
  normalized: GAUCHE's graph kernel is GraKeL's WL) × a learnt signal;
* ``tanimoto:fragprints``: the Tanimoto kernel ⟨x, y⟩ / (‖x‖² + ‖y‖² − ⟨x, y⟩)
  on fragprints (ECFP counts, radius 3, 2048 columns, and RDKit's 85 fragment
  counts: GAUCHE's best fingerprint on these sets) × a learnt signal;
* ``tanimoto:morgan``: the same on Morgan counts (radius 2, 2048 columns);
* ``mgk+fragprints``: BoTorch SingleTaskGP with c₁ k_mgk + c₂ k_Tanimoto,
  the graph kernel at the ``mgk`` fit's hyperparameters, c₁, c₂, the noise
  and the mean learnt by `fit_gpytorch_mll`.

Printed per split and model, then per model the means and the paired
differences to the best fingerprint model (mean, standard error, and a paired
t-test's p-value).

    python benchmarks/bench_gauche_protocol.py --dataset FreeSolv --splits 20
    python benchmarks/bench_gauche_protocol.py --dataset ESOL --splits 20
"""

import argparse
import csv
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.stats
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.kernels import Kernel as GKernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Kernel, WhiteKernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATASETS, machine, require  # noqa: E402

from graphgram import WeisfeilerLehmanKernel, molecular_gp_kernel, molecules  # noqa: E402
from graphgram.gaussian_process import (FisherScoring, calibration_error,  # noqa: E402
                                        negative_log_predictive_density)
from graphgram.gpytorch import GPyTorchGraphKernel  # noqa: E402

SETS = {"FreeSolv": ("FreeSolv/SAMPL.csv", "smiles", "expt"),
        "ESOL": ("ESOL/delaney-processed.csv", "smiles", "measured log solubility in mols per litre")}


def load(name):
    path, s, y = SETS[name]
    rows = list(csv.DictReader(open(Path(DATASETS) / path)))
    return [r[s] for r in rows], np.array([float(r[y]) for r in rows])


def fragprints(smiles):
    from rdkit import Chem
    from rdkit.Chem import Descriptors, rdFingerprintGenerator
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=3, fpSize=2048)
    frags = [f for name, f in Descriptors.descList if name.startswith("fr_")]
    out = []
    for s in smiles:
        m = Chem.MolFromSmiles(s)
        out.append(np.r_[gen.GetCountFingerprintAsNumPy(m).astype(np.float64), [f(m) for f in frags]])
    return np.array(out)


def morgan_counts(smiles):
    from rdkit import Chem
    from rdkit.Chem import rdFingerprintGenerator
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    return np.array([gen.GetCountFingerprintAsNumPy(Chem.MolFromSmiles(s)).astype(np.float64) for s in smiles])


def tanimoto(X, Y):
    inter = X @ Y.T
    return inter / ((X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - inter)


class Tanimoto(Kernel):
    """GAUCHE's Tanimoto kernel on real vectors, a scikit-learn kernel without hyperparameters."""

    def __init__(self):
        pass

    def __call__(self, X, Y=None, eval_gradient=False):
        X = np.asarray(X, dtype=np.float64)
        K = tanimoto(X, X if Y is None else np.asarray(Y, dtype=np.float64))
        return (K, np.empty((len(X), len(X), 0))) if eval_gradient else K

    def diag(self, X):
        return np.ones(len(X))

    def is_stationary(self):
        return False


class TanimotoTorch(GKernel):
    """The same on the rows of a fixed matrix, indexed by column 0 of the input (no hyperparameters)."""

    def __init__(self, F, **kwargs):
        super().__init__(**kwargs)
        self.F = torch.as_tensor(F)

    def forward(self, x1, x2, diag=False, **params):
        A, B = self.F[x1[..., 0].long()], self.F[x2[..., 0].long()]
        if diag:
            return torch.ones(A.shape[:-1], dtype=A.dtype)
        inter = A @ B.transpose(-1, -2)
        return inter / ((A * A).sum(-1)[..., :, None] + (B * B).sum(-1)[..., None, :] - inter)


def sk_model(kernel):
    return GaussianProcessRegressor(ConstantKernel(1.0) * kernel + WhiteKernel(0.1), normalize_y=True,
                                    optimizer=FisherScoring(verbose=False), n_restarts_optimizer=0)


def scores(y, mean, std, seconds):
    return dict(rmse=float(np.sqrt(np.mean((mean - y) ** 2))), nlpd=float(negative_log_predictive_density(y, mean, std)),
                cal=float(calibration_error(y, mean, std)), seconds=seconds)


def run_split(graphs, fp, mc, y, split):
    n = len(y)
    rng = np.random.default_rng(split)
    order = rng.permutation(n)
    tr, te = order[: int(0.8 * n)], order[int(0.8 * n):]
    G = lambda idx: [graphs[i] for i in idx]  # noqa: E731
    out = {}
    t = time.perf_counter()
    mgk = GaussianProcessRegressor(molecular_gp_kernel(verbose=False), normalize_y=True,
                                   optimizer=FisherScoring(verbose=False)).fit(G(tr), y[tr])
    out["mgk"] = scores(y[te], *mgk.predict(G(te), return_std=True), time.perf_counter() - t)
    for name, kernel, X in (("wl", WeisfeilerLehmanKernel(n_iter=5, node_label="element", normalize=True,
                                                         verbose=False), graphs),
                            ("tanimoto:fragprints", Tanimoto(), fp), ("tanimoto:morgan", Tanimoto(), mc)):
        t = time.perf_counter()
        Xtr = [X[i] for i in tr] if isinstance(X, list) else X[tr]
        Xte = [X[i] for i in te] if isinstance(X, list) else X[te]
        gp = sk_model(kernel).fit(Xtr, y[tr])
        out[name] = scores(y[te], *gp.predict(Xte, return_std=True), time.perf_counter() - t)
    # The sum: the graph kernel at the mgk fit's hyperparameters, the two weights learnt.
    t = time.perf_counter()
    graph = mgk.kernel_.k1.k2
    pool_t = torch.arange(n, dtype=torch.float64)[:, None]
    mu, sd = y[tr].mean(), y[tr].std()
    covar = (ScaleKernel(GPyTorchGraphKernel(graph, graphs, learn_hyperparameters=False))
             + ScaleKernel(TanimotoTorch(fp)))
    gp = SingleTaskGP(pool_t[tr], torch.as_tensor((y[tr] - mu) / sd)[:, None], covar_module=covar,
                      outcome_transform=None)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    gp.eval()
    with torch.no_grad():
        post = gp.posterior(pool_t[te], observation_noise=True)
        mean = post.mean[:, 0].numpy() * sd + mu
        std = post.variance[:, 0].sqrt().numpy() * sd
    out["mgk+fragprints"] = scores(y[te], mean, std, time.perf_counter() - t)
    out["mgk+fragprints"]["weights"] = [float(covar.kernels[0].outputscale), float(covar.kernels[1].outputscale)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=sorted(SETS), default="FreeSolv")
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--first", type=int, default=0, help="the first split's number")
    ap.add_argument("--json", help="append one JSON line per split to this file")
    ap.add_argument("--n", type=int, default=0, help="the first n molecules only (0: all; for a quick check)")
    args = ap.parse_args()
    require()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)
    smiles, y = load(args.dataset)
    if args.n:
        smiles, y = smiles[:args.n], y[:args.n]
    graphs = [molecules.from_smiles(s) for s in smiles]
    fp, mc = fragprints(smiles), morgan_counts(smiles)
    print("# %s, %d molecules, 80/20 splits %d..%d; %s" % (args.dataset, len(y), args.first,
                                                           args.first + args.splits - 1, machine()), flush=True)
    results = []
    for split in range(args.first, args.first + args.splits):
        r = run_split(graphs, fp, mc, y, split)
        results.append(r)
        for k, v in r.items():
            print("split %2d  %-20s RMSE %.4f  NLPD %.4f  cal %.4f  %.1f s%s" % (
                split, k, v["rmse"], v["nlpd"], v["cal"], v["seconds"],
                "  weights %.3g %.3g" % tuple(v["weights"]) if "weights" in v else ""), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps({"dataset": args.dataset, "split": split, "results": r}) + "\n")
    summarize(results)


def summarize(results):
    names = list(results[0])
    fps = ["tanimoto:fragprints", "tanimoto:morgan"]
    best = min(fps, key=lambda k: np.mean([r[k]["rmse"] for r in results]))
    print("# %d splits; paired differences to the best fingerprint GP (%s): mean ± standard error, "
          "paired t-test p" % (len(results), best))
    for k in names:
        line = "%-20s" % k
        for m in ("rmse", "nlpd", "cal"):
            v = np.array([r[k][m] for r in results])
            d = v - np.array([r[best][m] for r in results])
            p = scipy.stats.ttest_rel(v, [r[best][m] for r in results]).pvalue if k != best and len(v) > 1 else 1.0
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
            line += "  %s %.4f (Δ %+.4f ± %.4f, p %.2g)" % (m.upper(), v.mean(), d.mean(), se, p)
        print(line + "  %.1f s" % np.mean([r[k]["seconds"] for r in results]), flush=True)


if __name__ == "__main__":
    main()
