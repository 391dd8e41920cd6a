"""Bayesian optimisation over a fixed molecule pool with BoTorch (#36, #52 item 8).

Each model starts from the same random molecules per seed (10 by default),
then runs rounds of: fit a SingleTaskGP (fit_gpytorch_mll), choose the next
molecule with qLogNoisyExpectedImprovement by optimize_acqf_discrete over the
molecules not yet measured, measure it (look up its value). Reported per
property: the best value found after each round (mean over seeds), how many of
the pool's ``--top`` best molecules were measured by the end, how many of the
rounds' picks were in the pool's top 5 %, the rounds needed to reach the top
1 %, the time per round, and paired differences over the seeds against the
best fingerprint GP.

Pools: ``--dataset druglike`` generates ``--pool`` drug-size molecules
(_druglike.py, seed ``--pool-seed``: 0 is the pool the molecular GP preset was
tuned on, any other a held-out one) with RDKit-computed properties (logp,
tpsa, mr, qed); ESOL and FreeSolv draw ``--pool`` molecules at random (seed
``--pool-seed``), with their measured and their computed values (ESOL
``measured``/``predicted`` solubility, maximized; FreeSolv ``expt``/``calc``
hydration free energy, minimized).

Models (``--models``):

* ``molecular``: the documented recipe as a new user writes it —
  ``ScaleKernel(GPyTorchGraphKernel(molecular_kernel(), pool))``, every graph
  hyperparameter learnt by maximum likelihood from the first round;
* ``molecular-bo``: ``graphgram.gpytorch.molecular_bo_kernel(pool)``, the
  preset for few measurements (priors on its hyperparameters; see its
  docstring); ``molecular-bo:S``: with ``theta_spread=S``;
* ``molecular-fixed``: ``molecular_kernel(q=0.5, h=0.9)`` with its
  hyperparameters fixed (output scale, noise and mean learnt);
* ``molecular-bo+fragprints``: the sum of ``molecular_bo_kernel(pool)`` and a
  scaled Tanimoto kernel on fragprints, both on pool indices, every weight
  learnt;
* ``wl``: graphgram's Weisfeiler-Lehman kernel (3 iterations on elements,
  normalized; no hyperparameters besides the output scale);
* ``tanimoto``: the Tanimoto kernel on Morgan bits (radius 2, 2,048);
* ``tanimoto-counts``: on Morgan counts (radius 2, 2,048);
* ``fragprints``: on fragprints (ECFP counts radius 3 + RDKit fragment counts,
  GAUCHE's best representation);
* ``random``: random search.

    python benchmarks/bench_bo.py --dataset FreeSolv --pool 0 --target expt --rounds 50 --seeds 0 1 2
    python benchmarks/bench_bo.py --dataset druglike --pool 400 --pool-seed 1 --target logp qed --rounds 20 \
        --seeds 0 1 2 3 4 5 6 7 8 9 --out druglike.json
    python benchmarks/bench_bo.py --summarize druglike.json esol.json

Every model is fitted by ``fit_gpytorch_mll`` (L-BFGS-B; ``--fisher``: the
graph models by ``FisherScoring()``). The graph kernels keep their
hyperparameters from one round to the next (the previous fit is the next
one's start), as a BO loop would.
"""

import argparse
import csv
import gzip
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.stats
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
from graphgram.gaussian_process import FisherScoring  # noqa: E402
from graphgram.gpytorch import GPyTorchGraphKernel  # noqa: E402
# After graphgram: bench_molecules puts this checkout's python/ first on the path.
from bench_molecules import fingerprints  # noqa: E402
from bench_gauche_protocol import TanimotoTorch, fragprints, morgan_counts  # noqa: E402

# name: (file, SMILES column, {target: (value column, sign: +1 maximizes the value, -1 minimizes it)})
SETS = {
    "ESOL": ("ESOL/delaney-processed.csv", "smiles",
             {"measured": ("measured log solubility in mols per litre", 1.0),
              "predicted": ("ESOL predicted log solubility in mols per litre", 1.0)}),
    "FreeSolv": ("FreeSolv/SAMPL.csv", "smiles", {"expt": ("expt", -1.0), "calc": ("calc", -1.0)}),
}
DEFAULT_TARGET = {"ESOL": "measured", "FreeSolv": "expt", "druglike": "logp"}
GRAPH_MODELS = ("molecular", "molecular-bo", "molecular-fixed", "wl", "molecular-bo+fragprints")


def is_graph_model(name):
    """A graph kernel's model (``molecular-bo:S`` is ``molecular-bo`` with theta_spread S)."""
    return name.split(":")[0] in GRAPH_MODELS
FINGERPRINT_MODELS = ("tanimoto", "tanimoto-counts", "fragprints")


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


def load(name, pool, pool_seed, targets):
    """(SMILES, {target: values to maximize}) of the pool."""
    if name == "druglike":
        from _druglike import druglike
        smiles, ys = None, {}
        for t in targets:
            smiles, y = druglike(pool, seed=pool_seed, target=t)
            ys[t] = np.asarray(y, dtype=np.float64)
        return smiles, ys
    path, scol, columns = SETS[name]
    with open(require() / path, newline="") as f:
        rows = list(csv.DictReader(f))
    if 0 < pool < len(rows):
        keep = np.sort(np.random.default_rng(pool_seed).choice(len(rows), pool, replace=False))
        rows = [rows[i] for i in keep]
    smiles = [r[scol].strip() for r in rows]
    return smiles, {t: columns[t][1] * np.array([float(r[columns[t][0]]) for r in rows]) for t in targets}


class Model:
    """One surrogate: its inputs (a tensor row per molecule) and a covariance module."""

    def __init__(self, name, inputs, covar, fisher=False):
        self.name, self.inputs, self.covar, self.fisher = name, inputs, covar, fisher
        self.hyper = []

    def choose(self, train, candidates):
        X, Y = self.inputs[train], self.y[train]
        covar = self.covar()
        gp = SingleTaskGP(X, Y, covar_module=covar if self.name.startswith("molecular-bo") else ScaleKernel(covar))
        # (the preset and the sum are whole covariances; the rest are scaled here)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
            if self.fisher:
                fit_gpytorch_mll(mll, optimizer=FisherScoring(verbose=False))
            else:
                fit_gpytorch_mll(mll)
        t1 = time.perf_counter()
        acq = qLogNoisyExpectedImprovement(gp, X_baseline=X)
        best, _ = optimize_acqf_discrete(acq, q=1, choices=self.inputs[candidates])
        t2 = time.perf_counter()
        self.hyper.append(hyperparameters(gp))
        # The chosen row back to its molecule (rows are unique per molecule for the graph
        # models; fingerprints may repeat, then any molecule with that fingerprint).
        hit = int(np.flatnonzero((self.inputs[candidates] == best).all(-1).numpy())[0])
        return candidates[hit], t1 - t0, t2 - t1


def hyperparameters(gp):
    """The fitted model's hyperparameters: output scale, noise and the graph kernel's."""
    out = {"noise": float(gp.likelihood.noise.detach().squeeze())}
    scales = [float(m.outputscale.detach()) for m in gp.covar_module.modules() if isinstance(m, ScaleKernel)]
    for k, v in enumerate(scales):
        out["outputscale" if k == 0 else "outputscale[%d]" % k] = v    # the graph kernel's first
    for m in gp.covar_module.modules():
        if isinstance(m, GPyTorchGraphKernel):
            out.update(m.hyperparameter_values())
    return {k: float(v) for k, v in out.items()}


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
    return {"best": best, "fit_s": fit_s, "acq_s": acq_s, "chosen": [int(i) for i in train],
            "hyperparameters": model.hyper}


def scores(r, y, start, top):
    """A run's search scores: the pool's ``top`` best measured by the end, the rounds'
    picks in the top 5 %, the first round whose best is in the top 1 % (None: never)."""
    order = np.argsort(-y, kind="stable")
    chosen = np.asarray(r["chosen"])
    q99, q95 = np.quantile(y, 0.99), np.quantile(y, 0.95)
    return {"top_found": int(np.isin(order[:top], chosen).sum()),
            "top5_hits": int((y[chosen[start:]] >= q95).sum()),
            "to_top1": next((i for i, b in enumerate(r["best"]) if b >= q99), None)}


def make_models(names, graphs, smiles, index):
    """name -> (inputs, covar factory called each round); graph kernels are one module per seed."""
    makers, inputs = {}, {}
    for name in names:
        if name == "molecular":
            makers[name] = lambda: GPyTorchGraphKernel(molecular_kernel(verbose=False), graphs)
        elif name.split(":")[0] == "molecular-bo":
            from graphgram.gpytorch import molecular_bo_kernel
            spread = {"theta_spread": float(name.split(":")[1])} if ":" in name else {}
            makers[name] = lambda spread=spread: molecular_bo_kernel(graphs, verbose=False, **spread)
        elif name == "molecular-bo+fragprints":
            from graphgram.gpytorch import molecular_bo_kernel
            F = fragprints(smiles)
            makers[name] = lambda F=F: molecular_bo_kernel(graphs, verbose=False) + ScaleKernel(TanimotoTorch(F))
        elif name == "molecular-fixed":
            makers[name] = lambda: GPyTorchGraphKernel(molecular_kernel(q=0.5, h=0.9, verbose=False), graphs,
                                                       learn_hyperparameters=False)
        elif name == "wl":
            makers[name] = lambda: GPyTorchGraphKernel(
                WeisfeilerLehmanKernel(3, "element", normalize=True, verbose=False), graphs)
        elif name in FINGERPRINT_MODELS:
            makers[name] = TanimotoKernel
            fp = {"tanimoto": fingerprints, "tanimoto-counts": morgan_counts, "fragprints": fragprints}[name]
            inputs[name] = torch.as_tensor(fp(smiles), dtype=torch.float64)
        elif name == "random":
            makers[name] = None
        else:
            raise SystemExit("unknown model %r" % name)
        inputs.setdefault(name, index)
    return makers, inputs


def report(target, y, results, args):
    top1 = np.quantile(y, 0.99)
    print("\n%s: best %.3g, top 1 %% from %.3g; mean over %d seeds" % (target, y.max(), top1, len(args.seeds)))
    marks = [r for r in (0, 5, 10, 20, 30, 40, 50, 75, 100) if r <= args.rounds]
    print("%-16s" % "model" + "".join("%7s" % ("r%d" % r) for r in marks)
          + "  top-%d found  top-5%% hits  to top 1 %%   s/round (fit + acq)" % args.top)
    for name, rs in results.items():
        best = np.mean([r["best"] for r in rs], axis=0)
        sc = [r["scores"] for r in rs]
        reach = [s["to_top1"] for s in sc]
        reached = [v for v in reach if v is not None]
        per_round = np.mean([np.add(r["fit_s"], r["acq_s"]).mean() for r in rs])
        fit = np.mean([np.mean(r["fit_s"]) for r in rs])
        print("%-16s" % name + "".join("%7.3g" % best[r] for r in marks)
              + "  %11.2f  %11.2f  %d/%d, %.1f   %.2f (%.2f + %.2f)"
              % (np.mean([s["top_found"] for s in sc]), np.mean([s["top5_hits"] for s in sc]), len(reached),
                 len(reach), np.mean(reached) if reached else float("nan"), per_round, fit, per_round - fit))
    fps = [m for m in results if m in FINGERPRINT_MODELS]
    if not fps:
        return
    ref = max(fps, key=lambda m: np.mean([r["scores"]["top_found"] for r in results[m]]))
    a = np.array([r["scores"]["top_found"] for r in results[ref]], dtype=float)
    for name in results:
        if is_graph_model(name):
            b = np.array([r["scores"]["top_found"] for r in results[name]], dtype=float)
            d = b - a
            p = scipy.stats.wilcoxon(d).pvalue if np.any(d) else 1.0
            print("  %s − %s, top-%d found: %+.2f ± %.2f (se), better/equal/worse on %d/%d/%d seeds, Wilcoxon p %.2g"
                  % (name, ref, args.top, d.mean(), d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else 0.0,
                     (d > 0).sum(), (d == 0).sum(), (d < 0).sum(), p))


def first_fits(results):
    """How the graph models' first fits (10 measurements) set the graph hyperparameters:
    per model, the mean count of h at a bound of (0.05, 0.95) and the median q."""
    for name, rs in results.items():
        first = [r["hyperparameters"][0] for r in rs if r.get("hyperparameters")]
        hs = [[v for k, v in h.items() if k.endswith("__h")] for h in first]
        if not any(hs):
            continue
        at = np.mean([sum(v <= 0.0501 or v >= 0.9499 for v in h) for h in hs])
        print("  %s, first fit: %.1f of %d h at a bound, q median %.3g (range %.3g-%.3g), noise median %.3g"
              % (name, at, len(hs[0]), np.median([h["q"] for h in first]), min(h["q"] for h in first),
                 max(h["q"] for h in first), np.median([h["noise"] for h in first])))


def summarize(paths, top):
    """Print the report of saved runs (--out files), targets and models merged across files."""
    runs = {}
    for path in paths:
        saved = json.loads(gzip.open(path, "rt").read() if str(path).endswith(".gz") else Path(path).read_text())
        key = (saved["dataset"], saved["pool"], saved["pool_seed"])
        for target, results in saved["results"].items():
            entry = runs.setdefault(key + (target,), {"saved": saved, "results": {}})
            entry["results"].update(results)
    for (dataset, pool, pool_seed, target), entry in runs.items():
        saved = entry["saved"]
        _, ys = load(dataset, pool, pool_seed, [target])
        args = argparse.Namespace(seeds=saved["seeds"], rounds=saved["rounds"], top=top)
        print("\n== %s (pool of %d, seed %d)" % (dataset, pool, pool_seed), end="")
        report(target, ys[target], entry["results"], args)
        first_fits(entry["results"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=sorted(SETS) + ["druglike"], default="FreeSolv")
    ap.add_argument("--pool", type=int, default=2000,
                    help="molecules in the pool (druglike: generated; ESOL, FreeSolv: drawn; 0: the whole set)")
    ap.add_argument("--pool-seed", type=int, default=0, help="seed of the pool (druglike: 0 is the tuning pool)")
    ap.add_argument("--target", nargs="+", default=None,
                    help="properties to maximize (druglike: logp tpsa mr qed; ESOL: measured predicted; "
                    "FreeSolv: expt calc, minimized)")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--start", type=int, default=10)
    ap.add_argument("--top", type=int, default=20, help="score: how many of the pool's best were measured")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--models", nargs="+", default=["molecular", "wl", "tanimoto", "random"])
    ap.add_argument("--fisher", action="store_true",
                    help="fit the graph models with FisherScoring instead of BoTorch's default (L-BFGS-B)")
    ap.add_argument("--out", default=None, help="write the per-seed results as JSON here")
    ap.add_argument("--summarize", nargs="+", metavar="JSON", default=None,
                    help="print the report of saved runs (--out files, gzipped or not) instead of running")
    args = ap.parse_args()
    if args.summarize:
        return summarize(args.summarize, args.top)

    targets = args.target or [DEFAULT_TARGET[args.dataset]]
    smiles, ys = load(args.dataset, args.pool, args.pool_seed, targets)
    graphs = [molecules.from_smiles(s) for s in smiles]
    index = torch.arange(len(graphs), dtype=torch.float64)[:, None]
    print("%s (pool seed %d): %d molecules; %d random starts, %d rounds, seeds %s"
          % (args.dataset, args.pool_seed, len(smiles), args.start, args.rounds, args.seeds))
    print(machine(), flush=True)
    makers, inputs = make_models(args.models, graphs, smiles, index)
    everything = {}
    for target in targets:
        y = ys[target]
        results = everything[target] = {}
        for name in args.models:
            results[name] = []
            for seed in args.seeds:
                make = makers[name]
                if is_graph_model(name):
                    kernel = make()
                    covar = lambda k=kernel: k  # noqa: E731 - the same module each round
                else:
                    covar = make
                t = time.perf_counter()
                r = run(Model(name, inputs[name], covar, fisher=args.fisher and is_graph_model(name)), y, seed,
                        args.start, args.rounds)
                r["wall_s"] = time.perf_counter() - t
                r["scores"] = scores(r, y, args.start, args.top)
                results[name].append(r)
                print("  %s %-16s seed %d: best %.3g, top-%d found %d, top-5 %% hits %d, %.1f s"
                      % (target, name, seed, r["best"][-1], args.top, r["scores"]["top_found"],
                         r["scores"]["top5_hits"], r["wall_s"]), flush=True)
        report(target, y, results, args)
        first_fits(results)
    print(machine())
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "pool": len(smiles), "pool_seed": args.pool_seed,
                                              "fisher": args.fisher, "rounds": args.rounds, "start": args.start,
                                              "seeds": args.seeds, "machine": machine(), "results": everything},
                                             indent=1))


if __name__ == "__main__":
    main()
