"""Exact GP fits on drug-size molecules: what each way of fitting costs and gives (#38).

n training and n_test other molecules from _druglike.py (27 heavy atoms on
average; target: Crippen logP), the model of the documented recipe,
``GaussianProcessRegressor(ConstantKernel() * molecular_kernel() + WhiteKernel(),
normalize_y=True)``, fitted

- ``sklearn``: with scikit-learn's own optimizer (L-BFGS-B, its stopping rule);
- ``lbfgs``: with ``graphgram.gaussian_process.LBFGS(tol=0.05)`` (the same
  L-BFGS-B, ending once the likelihood rose by less than 0.05 nats over 5
  iterations and no component of its projected gradient exceeds 1);
- ``fisher``: with ``graphgram.gaussian_process.FisherScoring()`` (Newton steps
  with the likelihood's Fisher information);
- ``fisher-gp`` and ``sklearn-gp``: ``FisherScoring()`` and scikit-learn's
  optimizer from ``molecular_gp_kernel()``, the same model started at
  q = 0.5, every h 0.9, signal 30 and noise 0.05 instead of the recipe's
  q = 0.1, h = 0.5, signal and noise 1;
- ``subset``: tuned with LBFGS(tol=0.05) on a random ``--subset`` of the training
  molecules, then refitted on all of them without optimization (one Gram
  matrix), and (``subset: refine``) optimized on all of them with LBFGS(tol=0.05)
  starting from the subset's hyperparameters;
- ``restart``: with LBFGS(tol=0.05) from the hyperparameters that the same fit
  found on n other drug-size molecules (drawn after the test set): a fit that
  starts from a previous one's optimum (``--restart-target`` tunes those on
  another property: does a start tuned on one target help the next?);

and a Tanimoto GP on Morgan fingerprints (radius 2, 2048 bits) beside them.
``botorch`` and ``botorch-fisher`` fit the same model as BoTorch users do,
``SingleTaskGP(indices, y, covar_module=ScaleKernel(GPyTorchGraphKernel(
molecular_kernel(), pool)))``, by ``fit_gpytorch_mll`` with its default
optimizer (L-BFGS-B) and with ``optimizer=FisherScoring()`` (evaluations:
the distinct θ at which the graph kernel computed its gradient).
One JSON row per fit: seconds, evaluations, test RMSE, log marginal likelihood
and the fitted hyperparameters (in ``kernel_.theta``'s order, exponentiated).
``--gradient-accuracy 1e-3`` sets the graph kernel's ``gradient_accuracy`` in
every fit (the values keep their accuracy; only the optimizer's gradients
are looser); ``--soft-bounds 3`` LBFGS's ``soft_bounds`` in every fit but
"sklearn".

``--set ESOL`` (or ``FreeSolv``, ``QM7``) fits that MoleculeNet set's measured
target instead (the first n molecules of a seeded shuffle, the test set the
next n_test or the rest).

    GRAPHGRAM_DATASETS=../shared/datasets .venv/bin/python benchmarks/bench_gp_fit.py --n 500 --n-test 800
"""

import argparse
import io
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel  # noqa: E402

from _common import machine  # noqa: E402
from _druglike import TARGETS, druglike  # noqa: E402
from graphgram import molecular_gp_kernel, molecular_kernel, molecules  # noqa: E402
from graphgram.gaussian_process import LBFGS, FisherScoring  # noqa: E402


GRADIENT_ACCURACY = None  # --gradient-accuracy: the graph kernel's
SOFT_BOUNDS = None  # --soft-bounds: LBFGS's


def lbfgs():
    """graphgram's optimizer as every fit but "sklearn" runs it."""
    return LBFGS(tol=0.05, soft_bounds=SOFT_BOUNDS, file=io.StringIO())


def model(optimizer, kernel=None):
    kernel = molecular_kernel(verbose=False, gradient_accuracy=GRADIENT_ACCURACY) if kernel is None else kernel
    return GaussianProcessRegressor(ConstantKernel() * kernel + WhiteKernel(), normalize_y=True, optimizer=optimizer)


def gp_start_model(optimizer):
    """model()'s GP from molecular_gp_kernel()'s starting point."""
    return GaussianProcessRegressor(molecular_gp_kernel(verbose=False, gradient_accuracy=GRADIENT_ACCURACY),
                                    normalize_y=True, optimizer=optimizer)


def fit(name, gp, X, y, Xt, yt, **extra):
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hyperparameters at their bounds
        gp.fit(X, y)
    seconds = time.perf_counter() - t
    pred = gp.predict(Xt)
    opt = gp.optimizer if not isinstance(gp.optimizer, str) else None
    row = dict(fit=name, n_train=len(y), seconds=round(seconds, 1),
               evaluations=getattr(opt, "n_evaluations_", None), test_rmse=round(float(np.sqrt(np.mean((pred - yt) ** 2))), 4),
               lml=round(float(gp.log_marginal_likelihood_value_), 3),
               hyperparameters=[float("%.4g" % v) for v in np.exp(gp.kernel_.theta)],
               soft_bounds=getattr(opt, "soft_bounds", None), **extra)
    print(json.dumps(row), flush=True)
    return row, gp


def botorch_fit(name, pool, y, yt):
    """The recipe's model in BoTorch (training graphs first in the pool, then the test graphs)."""
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.kernels import ScaleKernel
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from graphgram.gpytorch import GPyTorchGraphKernel
    kernel = GPyTorchGraphKernel(molecular_kernel(verbose=False, gradient_accuracy=GRADIENT_ACCURACY), pool)
    seen, gradient = set(), kernel._local_gradient

    def counted(theta, request):
        seen.add(np.asarray(theta).tobytes())
        return gradient(theta, request)

    kernel._local_gradient = counted
    n = len(y)
    X = torch.arange(n, dtype=torch.float64)[:, None]
    gp = SingleTaskGP(X, torch.as_tensor(y)[:, None], covar_module=ScaleKernel(kernel))
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "botorch-fisher":
            fit_gpytorch_mll(mll, optimizer=FisherScoring(file=io.StringIO()))
        else:
            fit_gpytorch_mll(mll)
    seconds = time.perf_counter() - t
    mll.train()
    lml = float(mll(gp(*gp.train_inputs), gp.train_targets).detach()) * n
    gp.eval()
    with torch.no_grad():
        pred = gp.posterior(torch.arange(n, len(pool), dtype=torch.float64)[:, None]).mean.numpy().ravel()
    row = dict(fit=name, n_train=n, seconds=round(seconds, 1), evaluations=len(seen),
               test_rmse=round(float(np.sqrt(np.mean((pred - yt) ** 2))), 4), lml=round(lml, 3),
               hyperparameters=[float("%.4g" % v) for v in kernel.hyperparameter_values().values()])
    print(json.dumps(row), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--n-test", type=int, default=800)
    ap.add_argument("--subset", type=int, default=200)
    ap.add_argument("--fits", nargs="+", default=["sklearn", "lbfgs", "fisher", "tanimoto"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", default="druglike", choices=["druglike", "ESOL", "FreeSolv", "QM7"],
                    help="drug-size molecules (_druglike.py) or a MoleculeNet set")
    ap.add_argument("--target", default="logp", choices=TARGETS, help="the property fitted (default: Crippen logP)")
    ap.add_argument("--restart-target", default=None, choices=TARGETS,
                    help="the property restart's first fit tunes on (default: --target)")
    ap.add_argument("--soft-bounds", type=float, default=None, help="LBFGS's soft_bounds (3: the h's)")
    ap.add_argument("--gradient-accuracy", type=float, default=None,
                    help="the graph kernel's gradient_accuracy (default: its own, 1e-6)")
    args = ap.parse_args()
    global GRADIENT_ACCURACY, SOFT_BOUNDS
    GRADIENT_ACCURACY, SOFT_BOUNDS = args.gradient_accuracy, args.soft_bounds
    # druglike's molecules come in a fixed order for a seed: the training and
    # test sets are the same whether or not "restart" draws n more after them.
    extra = args.n if "restart" in args.fits else 0
    if args.set == "druglike":
        smiles, y = druglike(args.n + args.n_test + extra, args.seed, target=args.target)
    else:
        if "restart" in args.fits:
            ap.error("--set %s: restart draws more drug-size molecules" % args.set)
        from bench_molecules import load
        smiles, y, _ = load(args.set, 0, args.seed)
        args.n_test = min(args.n_test, len(y) - args.n)
    graphs = [molecules.from_smiles(s) for s in smiles]
    tr, te, other = slice(0, args.n), slice(args.n, args.n + args.n_test), slice(args.n + args.n_test, None)
    atoms = float(np.mean([g.n_nodes for g in graphs[:args.n + args.n_test]]))
    print(json.dumps({"set": args.set, "n": args.n, "n_test": args.n_test, "heavy_atoms": atoms, "target": args.target,
                      "soft_bounds": args.soft_bounds, "gradient_accuracy": args.gradient_accuracy,
                      "machine": machine()}), flush=True)
    X, Xt = graphs[tr], graphs[te]
    if "sklearn" in args.fits:
        # scikit-learn's optimizer, counted through the same callable interface it runs.
        counter = LBFGS(tol=None, file=io.StringIO())
        fit("sklearn", model(counter), X, y[tr], Xt, y[te])
    if "sklearn-gp" in args.fits:
        fit("sklearn-gp", gp_start_model(LBFGS(tol=None, file=io.StringIO())), X, y[tr], Xt, y[te])
    if "lbfgs" in args.fits:
        fit("lbfgs", model(lbfgs()), X, y[tr], Xt, y[te])
    if "fisher" in args.fits:
        fit("fisher", model(FisherScoring(file=io.StringIO())), X, y[tr], Xt, y[te])
    if "fisher-gp" in args.fits:
        fit("fisher-gp", gp_start_model(FisherScoring(file=io.StringIO())), X, y[tr], Xt, y[te])
    if "subset" in args.fits:
        sub = np.sort(np.random.default_rng(args.seed).choice(args.n, args.subset, replace=False))
        t = time.perf_counter()
        tuned, gp = fit("subset: tune", model(lbfgs()), [X[i] for i in sub], y[tr][sub], Xt, y[te],
                        subset=args.subset)
        row, _ = fit("subset: refit", GaussianProcessRegressor(gp.kernel_, normalize_y=True, optimizer=None), X, y[tr],
                     Xt, y[te])
        print(json.dumps({"fit": "subset: total", "seconds": round(time.perf_counter() - t, 1),
                          "test_rmse": row["test_rmse"]}), flush=True)
        refined, _ = fit("subset: refine", GaussianProcessRegressor(gp.kernel_, normalize_y=True, optimizer=lbfgs()),
                         X, y[tr], Xt, y[te])
        print(json.dumps({"fit": "subset + refine: total", "seconds": round(tuned["seconds"] + refined["seconds"], 1),
                          "test_rmse": refined["test_rmse"]}), flush=True)
    if "restart" in args.fits:
        # Hyperparameters tuned on n other molecules of the same kind (as from
        # a previous fit: a growing data set, the next round of a campaign)
        # as the starting point of this fit.
        target = args.restart_target or args.target
        y2 = y if target == args.target else druglike(len(smiles), args.seed, target=target)[1]
        _, gp = fit("restart: tune on others", model(lbfgs()), graphs[other],
                    y2[other], Xt, y2[te], target=target)
        fit("restart: from their optimum", GaussianProcessRegressor(
            gp.kernel_, normalize_y=True, optimizer=lbfgs()), X, y[tr], Xt, y[te])
    for name in ("botorch", "botorch-fisher"):
        if name in args.fits:
            botorch_fit(name, graphs[:args.n + args.n_test], y[tr], y[te])
    if "tanimoto" in args.fits:
        from bench_molecules import Tanimoto, fingerprints
        fps = fingerprints(smiles)
        fit("tanimoto", GaussianProcessRegressor(ConstantKernel() * Tanimoto() + WhiteKernel(), normalize_y=True),
            fps[tr], y[tr], fps[te], y[te])
    print(json.dumps({"machine": machine()}), flush=True)


if __name__ == "__main__":
    main()
