"""Bayesian optimisation over a fixed molecule library with BoTorch (#36).

Each model starts from the same 10 random molecules per seed, then runs rounds
of: fit a SingleTaskGP (fit_gpytorch_mll), choose the next molecule with
qLogNoisyExpectedImprovement by optimize_acqf_discrete over the molecules not
yet measured, measure it (look up its value). Reported: the best value found
after each round (mean over seeds), the rounds needed to reach the library's
top 1 %, and the time per round (fit and acquisition).

Models: graphgram's molecular preset (the marginalized kernel, 11 hyperparameters
learnt through its gradients), graphgram's Weisfeiler-Lehman kernel (no
hyperparameters besides the output scale), a Tanimoto kernel on Morgan
fingerprints (radius 2, 2048 bits; the usual chemistry baseline, written here in
GPyTorch), and random search.

    python benchmarks/bench_bo.py --dataset FreeSolv --rounds 50 --seeds 0 1 2
    python benchmarks/bench_bo.py --dataset druglike --pool 2000 --target qed --rounds 60 --seeds 0 1 2 3 4

The graph kernels keep their hyperparameters from one round to the next (the
previous fit is the next one's start), as a BO loop would.
"""

import argparse
import csv
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf_discrete
from gpytorch.kernels import Kernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, require  # noqa: E402
from graphgram import WeisfeilerLehmanKernel, molecular_kernel, molecules  # noqa: E402
from graphgram.gpytorch import GPyTorchGraphKernel  # noqa: E402
# After graphgram: bench_molecules puts this checkout's python/ first on the path.
from bench_molecules import fingerprints  # noqa: E402

# name: (file, SMILES column, value column, sign: +1 maximizes the value, -1 minimizes it)
SETS = {
    "ESOL": ("ESOL/delaney-processed.csv", "smiles", "measured log solubility in mols per litre", 1.0),
    "FreeSolv": ("FreeSolv/SAMPL.csv", "smiles", "expt", -1.0),
}


class TanimotoKernel(Kernel):
    """k(x, y) = <x, y> / (|x|² + |y|² − <x, y>) on count or bit vectors."""

    has_lengthscale = False

    def forward(self, x1, x2, diag=False, **params):
        if diag:
            return torch.ones(x1.shape[:-1], dtype=x1.dtype, device=x1.device)
        dot = x1 @ x2.transpose(-1, -2)
        n1 = (x1 * x1).sum(-1, keepdim=True)
        n2 = (x2 * x2).sum(-1, keepdim=True).transpose(-1, -2)
        return dot / (n1 + n2 - dot).clamp_min(1e-12)


def load(name, pool=2000, target="logp"):
    """(SMILES, values to maximize) of a data set; "druglike": ``pool`` generated drug-size
    molecules (_druglike.py, seed 0) with an RDKit-computed ``target``."""
    if name == "druglike":
        from _druglike import druglike
        smiles, y = druglike(pool, seed=0, target=target)
        return smiles, np.asarray(y, dtype=np.float64)
    path, scol, ycol, sign = SETS[name]
    with open(require() / path, newline="") as f:
        rows = list(csv.DictReader(f))
    smiles = [r[scol].strip() for r in rows]
    return smiles, sign * np.array([float(r[ycol]) for r in rows])


class Model:
    """One surrogate: its inputs (a tensor row per molecule) and a covariance module."""

    def __init__(self, name, inputs, covar):
        self.name, self.inputs, self.covar = name, inputs, covar

    def choose(self, train, candidates):
        X, Y = self.inputs[train], self.y[train]
        gp = SingleTaskGP(X, Y, covar_module=ScaleKernel(self.covar()))
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        t1 = time.perf_counter()
        acq = qLogNoisyExpectedImprovement(gp, X_baseline=X)
        best, _ = optimize_acqf_discrete(acq, q=1, choices=self.inputs[candidates])
        t2 = time.perf_counter()
        # The chosen row back to its molecule (rows are unique per molecule for the graph
        # models; fingerprints may repeat, then any molecule with that fingerprint).
        hit = int(np.flatnonzero((self.inputs[candidates] == best).all(-1).numpy())[0])
        return candidates[hit], t1 - t0, t2 - t1


def run(model, y, seed, start, rounds):
    rng = np.random.default_rng(seed)
    train = list(rng.choice(len(y), start, replace=False))
    best, fit_s, acq_s = [float(y[train].max())], [], []
    model.y = torch.as_tensor(y)[:, None]
    for _ in range(rounds):
        candidates = np.setdiff1d(np.arange(len(y)), train)
        if model.name == "random":
            pick, f, a = int(rng.choice(candidates)), 0.0, 0.0
        else:
            pick, f, a = model.choose(train, candidates)
        train.append(int(pick))
        best.append(float(y[train].max()))
        fit_s.append(f)
        acq_s.append(a)
    return {"best": best, "fit_s": fit_s, "acq_s": acq_s, "chosen": [int(i) for i in train]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=sorted(SETS) + ["druglike"], default="FreeSolv")
    ap.add_argument("--pool", type=int, default=2000, help="--dataset druglike: molecules in the library")
    ap.add_argument("--target", default="logp", help="--dataset druglike: the RDKit property maximized "
                    "(logp, tpsa, mr, qed)")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--start", type=int, default=10)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--models", nargs="+", default=["molecular", "wl", "tanimoto", "random"])
    ap.add_argument("--out", default=None, help="write the per-seed results as JSON here")
    args = ap.parse_args()

    smiles, y = load(args.dataset, args.pool, args.target)
    graphs = [molecules.from_smiles(s) for s in smiles]
    index = torch.arange(len(graphs), dtype=torch.float64)[:, None]
    top = np.quantile(y, 0.99)
    print("%s: %d molecules, best %.3g, top 1 %% from %.3g; %d random starts, %d rounds, seeds %s"
          % (args.dataset, len(y), y.max(), top, args.start, args.rounds, args.seeds))
    print(machine())
    # Each graph kernel is built once per seed and reused across rounds: the previous
    # round's hyperparameters start the next fit.
    makers = {
        "molecular": lambda: GPyTorchGraphKernel(molecular_kernel(verbose=False), graphs),
        "wl": lambda: GPyTorchGraphKernel(WeisfeilerLehmanKernel(3, "element", normalize=True, verbose=False),
                                          graphs),
        "tanimoto": TanimotoKernel,
        "random": None,
    }
    inputs = {"molecular": index, "wl": index, "tanimoto": torch.as_tensor(fingerprints(smiles)) if "tanimoto" in args.models
              else None, "random": index}
    results = {}
    for name in args.models:
        results[name] = []
        for seed in args.seeds:
            make = makers[name]
            if name in ("molecular", "wl"):
                kernel = make()
                covar = lambda k=kernel: k  # noqa: E731 - the same module each round
            else:
                covar = make
            t = time.perf_counter()
            r = run(Model(name, inputs[name], covar), y, seed, args.start, args.rounds)
            r["wall_s"] = time.perf_counter() - t
            results[name].append(r)
            print("  %-9s seed %d: best %.3g after %d rounds, %.1f s" % (name, seed, r["best"][-1], args.rounds,
                                                                       r["wall_s"]), flush=True)

    print("\nbest value found (mean over %d seeds) after round:" % len(args.seeds))
    marks = [r for r in (0, 5, 10, 20, 30, 40, 50, 75, 100) if r <= args.rounds]
    print("%-10s" % "model" + "".join("%8d" % r for r in marks) + "   rounds to top 1 %   s/round (fit + acq)")
    for name, rs in results.items():
        best = np.mean([r["best"] for r in rs], axis=0)
        reach = [next((i for i, b in enumerate(r["best"]) if b >= top), None) for r in rs]
        reach_s = " ".join("-" if v is None else str(v) for v in reach)
        per_round = np.mean([np.add(r["fit_s"], r["acq_s"]).mean() for r in rs])
        fit = np.mean([np.mean(r["fit_s"]) for r in rs])
        print("%-10s" % name + "".join("%8.3g" % best[r] for r in marks)
              + "   %-18s  %.2f (%.2f + %.2f)" % (reach_s, per_round, fit, per_round - fit))
    print(machine())
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "rounds": args.rounds, "seeds": args.seeds,
                                              "machine": machine(), "results": results}, indent=1))


if __name__ == "__main__":
    main()
