"""Low-rank Gaussian processes on QM7: accuracy and time against m, beside the exact GP.

On QM7 (7,165 molecules, atomization energies in kcal/mol, SMILES from
$GRAPHGRAM_DATASETS/QM7/qm7.csv; ``--set druglike``: drug-size molecules of
27 heavy atoms on average made by _druglike.py, with their Crippen logP or
another ``--target``), one seeded random 80/20 split, targets standardized by
the GP (``normalize_y``):

- ``lowrank``: ``LowRankGaussianProcessRegressor(LowRankGraphKernel(molecular_kernel(),
  inducing=m))`` — the GP of ``ConstantKernel() * LowRankGraphKernel(...) +
  WhiteKernel()`` in O(n·m²) per evaluation — for each m of ``--m``,
  hyperparameters (the graph kernel's q and h's, the signal and noise levels)
  optimized by L-BFGS-B on all training molecules; each evaluation computes
  n·m + m²/2 graph pairs with gradients; ``--sklearn-gpr``: the same model with
  scikit-learn's ``GaussianProcessRegressor`` (n×n×p gradients, O(n³) per
  evaluation), for comparison;
- ``exact``: the same with the exact ``molecular_kernel()``, trained on a random
  subset of the training part of each size of ``--exact-n`` (the same test set):
  each evaluation computes n²/2 pairs;
- ``refit`` (with ``--refit``): each exact GP's tuned kernel refitted without
  optimization on all training molecules (one n²/2 Gram matrix, no gradient):
  "tune on a subset, refit on all";
- ``tanimoto``: an exact GP with the Tanimoto kernel on RDKit Morgan fingerprints
  (radius 2, 2048 bits) on all training molecules, as in bench_molecules.py.

Rows (JSON, one per line, also written to ``--out``) hold the fit time, the
number of evaluations and the mean time per evaluation, the test MAE and RMSE,
the final log marginal likelihood and the fitted kernel. A progress line per
evaluation goes to stderr (``LBFGS(verbose=True)``).

``--choice``: instead of fits, the time of choosing the ``--m`` inducing
molecules (``--method``) from the training molecules, for each m.

``--evaluation``: instead of fits, one evaluation of the log marginal likelihood
with its gradient on the training molecules (``--n``, first ``--m``) by
LowRankGaussianProcessRegressor and, unless ``--no-sklearn``, by scikit-learn's
GaussianProcessRegressor on the same model: the time of the graph pairs and of
the linear algebra, and their agreement.

The full run (the targets of issue #21: all 7,165 molecules within 30 min per
low-rank fit on 2 cores) takes hours; a smoke run takes a minute or two:

    nice .venv/bin/python benchmarks/bench_lowrank.py --n 1000 --m 100 --exact-n 400 --maxiter 3
    nice .venv/bin/python benchmarks/bench_lowrank.py --evaluation --n 2500 --m 200 --fitc
    nice .venv/bin/python benchmarks/bench_lowrank.py --m 100 200 500 1000 2000 --exact-n 1000 2000 3000 --refit

Every fit uses ``LBFGS(max_iter=--maxiter, tol=--tol, max_seconds=--max-seconds,
soft_bounds=--soft-bounds)``, or with ``--optimizer fisher``
``FisherScoring(tol=--tol, max_seconds=--max-seconds)``: ``--tol`` defaults to
each optimizer's own (LBFGS 0.05, FisherScoring 0.5; docs/gaussian_processes.md),
``--tol none`` is scikit-learn's stopping rule (LBFGS only); ``--max-seconds`` a time budget for each optimization;
``--start gp`` starts every fit where ``molecular_gp_kernel()`` does (q = 0.5,
every h 0.9, signal 30, noise 0.05) instead of the preset's q = 0.1, h = 0.5
with signal 1 and noise 0.1; ``--start-exact N`` starts each low-rank fit (not
with ``--sklearn-gpr``) from the exact GP tuned on the first N training molecules.

``$GRAPHGRAM_PYTHON`` names another build's ``python/`` folder to measure
instead of this checkout's (old against new).
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
sys.path.insert(0, os.environ.get("GRAPHGRAM_PYTHON", str(HERE.parent / "python")))
sys.path.insert(0, str(HERE))

from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel  # noqa: E402

from _common import machine  # noqa: E402
from _druglike import TARGETS, druglike  # noqa: E402
# graphgram before bench_molecules, which puts this checkout's python/ first.
from graphgram import molecular_gp_kernel, molecular_kernel  # noqa: E402
from graphgram.gaussian_process import (LBFGS, FisherScoring, LowRankGaussianProcessRegressor,  # noqa: E402
                                        LowRankGraphKernel)
from graphgram.molecules import from_smiles  # noqa: E402
from bench_molecules import Tanimoto, fingerprints, load, rmse  # noqa: E402


# Standardized targets: one set of signal and noise bounds suits the data.
SIGNAL, SIGNAL_BOUNDS, NOISE, NOISE_BOUNDS = 1.0, (1e-3, 1e3), 0.1, (1e-6, 10.0)


TOL = "default"  # the optimizer's stopping rule (--tol): "default" its own, None scikit-learn's
MAX_SECONDS = None  # LBFGS's time budget (--max-seconds)
SOFT_BOUNDS = None  # LBFGS's soft_bounds (--soft-bounds)
OPTIMIZER = "lbfgs"  # --optimizer


def optimizer(maxiter, verbose):
    """The optimizer of every fit: LBFGS, or FisherScoring with --optimizer fisher."""
    tol = {} if TOL == "default" else dict(tol=TOL)
    if OPTIMIZER == "fisher":
        return FisherScoring(max_seconds=MAX_SECONDS, verbose=verbose, **tol)
    return LBFGS(max_iter=maxiter, max_seconds=MAX_SECONDS, soft_bounds=SOFT_BOUNDS, verbose=verbose, **tol)


def gp_model(kernel, maxiter, verbose, signal=SIGNAL, noise=NOISE):
    k = ConstantKernel(signal, SIGNAL_BOUNDS) * kernel + WhiteKernel(noise, NOISE_BOUNDS)
    return GaussianProcessRegressor(k, optimizer=optimizer(maxiter, verbose), normalize_y=True, random_state=0)


def low_rank_model(kernel, maxiter, verbose, signal=SIGNAL, noise=NOISE):
    """The same model as gp_model(kernel) for a LowRankGraphKernel, in O(n·m²) per evaluation."""
    opt = optimizer(maxiter, verbose)
    return LowRankGaussianProcessRegressor(kernel, signal=signal, signal_bounds=SIGNAL_BOUNDS, noise=noise,
                                           noise_bounds=NOISE_BOUNDS, normalize_y=True, optimizer=opt)


def one_evaluation(kernel, Xtr, ytr, sklearn_too, **levels):
    """One log marginal likelihood with gradient at the initial hyperparameters (the signal
    and noise ``levels`` of low_rank_model): seconds in the graph pairs
    (LowRankGraphKernel._terms) and in the rest (the linear algebra)."""
    spent = []
    terms = LowRankGraphKernel._terms

    def timed(self, *args, **kwargs):
        t = time.perf_counter()
        try:
            return terms(self, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - t)

    # Fitted without optimization (untimed: chooses the inducing graphs, one evaluation without gradient).
    ours = low_rank_model(kernel, 0, False, **levels).set_params(optimizer=None).fit(Xtr, ytr)
    theta = np.concatenate([np.log([ours.signal, ours.noise]), ours.kernel_.theta])
    rows = []
    LowRankGraphKernel._terms = timed
    try:
        t = time.perf_counter()
        lml, grad = ours.log_marginal_likelihood(theta, eval_gradient=True)
        total = time.perf_counter() - t
        rows.append(dict(model="LowRankGaussianProcessRegressor", n_train=len(ytr), m=len(ours.kernel_.inducing_graphs_),
                         fitc=ours.kernel_.fitc, seconds=round(total, 2), pairs_s=round(spent[-1], 2),
                         algebra_s=round(total - spent[-1], 2), lml=float(lml)))
        if sklearn_too:
            fixed = clone(kernel).set_params(inducing=ours.kernel_.inducing_graphs_)
            sk = gp_model(fixed, 0, False, **levels).set_params(optimizer=None)
            LowRankGraphKernel._terms = terms
            sk.fit(Xtr, ytr)
            LowRankGraphKernel._terms = timed
            t = time.perf_counter()
            ref, ref_grad = sk.log_marginal_likelihood(np.concatenate([theta[:1], theta[2:], theta[1:2]]),
                                                       eval_gradient=True)
            total = time.perf_counter() - t
            ref_grad = np.concatenate([ref_grad[:1], ref_grad[-1:], ref_grad[1:-1]])
            rows.append(dict(model="GaussianProcessRegressor", n_train=len(ytr), m=rows[0]["m"], fitc=rows[0]["fitc"],
                             seconds=round(total, 2), pairs_s=round(spent[-1], 2),
                             algebra_s=round(total - spent[-1], 2), lml=float(ref),
                             lml_rel_diff=abs(ref - lml) / abs(ref),
                             grad_rel_diff=float(np.abs(ref_grad - grad).max() / np.abs(ref_grad).max())))
    finally:
        LowRankGraphKernel._terms = terms
    return rows


def fit_and_score(name, gp, Xtr, ytr, Xte, yte, **extra):
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # L-BFGS-B stopped at maxiter
        gp.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    pred = gp.predict(Xte)
    opt = gp.optimizer
    row = dict(model=name, n_train=len(ytr), n_test=len(yte), fit_s=round(fit_s, 2),
               predict_s=round(time.perf_counter() - t, 2), evaluations=opt.n_evaluations_,
               s_per_evaluation=round(float(np.mean([h[1] for h in opt.history_])), 3),
               test_mae=float(np.mean(np.abs(pred - yte))), test_rmse=rmse(pred, yte),
               lml=float(gp.log_marginal_likelihood_value_), kernel=repr(gp.kernel_), **extra)
    if hasattr(gp, "signal_"):                  # LowRankGaussianProcessRegressor: c and σ² beside the kernel
        row.update(signal=gp.signal_, noise=gp.noise_)
    print(json.dumps(row), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="QM7", choices=["QM7", "druglike"])
    ap.add_argument("--target", default="logp", choices=TARGETS,
                    help="with --set druglike: the property fitted (default: Crippen logP)")
    ap.add_argument("--n", type=int, default=0, help="molecules used (0 = all 7,165 of QM7; druglike needs n)")
    ap.add_argument("--tol", default=None,
                    help="the optimizer's tol (default: its own), or 'none' (LBFGS: scikit-learn's rule)")
    ap.add_argument("--m", type=int, nargs="*", default=[100, 200, 500, 1000, 2000], help="inducing graphs")
    ap.add_argument("--method", default="kmeans++", choices=["kmeans++", "pivoted_cholesky", "random"])
    ap.add_argument("--fitc", action="store_true", help="the FITC diagonal correction")
    ap.add_argument("--exact-n", type=int, nargs="*", default=[1000], help="training sizes of the exact GP")
    ap.add_argument("--maxiter", type=int, default=15, help="L-BFGS-B iterations of each fit")
    ap.add_argument("--refit", action="store_true", help="refit each exact GP's tuned kernel on all training molecules")
    ap.add_argument("--no-tanimoto", action="store_true")
    ap.add_argument("--sklearn-gpr", action="store_true",
                    help="fit the low-rank models with scikit-learn's GaussianProcessRegressor (n×n, for comparison)")
    ap.add_argument("--evaluation", action="store_true",
                    help="only time one evaluation (likelihood and gradient) of the low-rank GP, ours and sklearn's")
    ap.add_argument("--choice", action="store_true", help="time the choice of the inducing molecules only")
    ap.add_argument("--no-sklearn", action="store_true", help="with --evaluation: not sklearn's")
    ap.add_argument("--jobs", type=int, default=None, help="n_jobs of the graph kernel")
    ap.add_argument("--quiet", action="store_true", help="no line per evaluation")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=None, help="LBFGS's time budget of each fit")
    ap.add_argument("--soft-bounds", type=float, default=None, help="LBFGS's soft_bounds (3: the h's)")
    ap.add_argument("--optimizer", default="lbfgs", choices=["lbfgs", "fisher"],
                    help="LBFGS, or FisherScoring (with --tol and --max-seconds; --maxiter and --soft-bounds are LBFGS's)")
    ap.add_argument("--start", default="preset", choices=["preset", "gp"],
                    help="the starting point: molecular_kernel()'s, or molecular_gp_kernel()'s")
    ap.add_argument("--start-exact", type=int, default=0,
                    help="start each low-rank fit from the exact GP tuned on this many training molecules")
    ap.add_argument("--gradient-accuracy", type=float, default=None,
                    help="the graph kernel's gradient_accuracy (default: its own, 1e-6)")
    ap.add_argument("--out", default=str(HERE / "results" / "lowrank.json"))
    args = ap.parse_args()
    if args.start_exact and (args.sklearn_gpr or args.start == "gp"):
        ap.error("--start-exact starts LowRankGaussianProcessRegressor from an exact fit, without --sklearn-gpr "
                 "or --start gp")
    global TOL, MAX_SECONDS, SOFT_BOUNDS, OPTIMIZER
    if args.tol is None:
        TOL = "default"
    elif args.tol.lower() == "none":
        if args.optimizer == "fisher":
            ap.error("--tol none is scikit-learn's rule, for LBFGS only")
        TOL = None
    else:
        TOL = float(args.tol)
    MAX_SECONDS = args.max_seconds
    SOFT_BOUNDS = args.soft_bounds
    OPTIMIZER = args.optimizer

    if args.set == "druglike":
        if not args.n:
            ap.error("--set druglike needs --n")
        smiles, y = druglike(args.n, args.seed, target=args.target)
        total = args.n
    else:
        smiles, y, total = load("QM7", args.n, args.seed)
    graphs = [from_smiles(s) for s in smiles]
    perm = np.random.default_rng(1000).permutation(len(y))
    cut = int(round(0.8 * len(y)))
    tr, te = np.sort(perm[:cut]), np.sort(perm[cut:])
    Xtr, Xte = [graphs[i] for i in tr], [graphs[i] for i in te]
    head = {"set": args.set, "target": args.target if args.set == "druglike" else None, "n": len(y), "of": total,
            "machine": machine(), "seed": args.seed, "tol": TOL,
            "max_seconds": MAX_SECONDS, "soft_bounds": SOFT_BOUNDS, "gradient_accuracy": args.gradient_accuracy,
            "optimizer": OPTIMIZER, "start": args.start}
    print(json.dumps(head), flush=True)
    rows = [head]

    # The graph kernel and the signal and noise variances every fit starts from.
    start_gp = molecular_gp_kernel(verbose=False, n_jobs=args.jobs, gradient_accuracy=args.gradient_accuracy)
    levels = dict(signal=start_gp.k1.k1.constant_value, noise=start_gp.k2.noise_level) if args.start == "gp" else {}

    def kernel():
        if args.start == "gp":
            return clone(start_gp.k1.k2)
        return molecular_kernel(verbose=False, n_jobs=args.jobs, gradient_accuracy=args.gradient_accuracy)

    verbose = not args.quiet
    if args.evaluation:
        lr = LowRankGraphKernel(kernel(), inducing=args.m[0], method=args.method, fitc=args.fitc,
                                random_state=args.seed)
        for r in one_evaluation(lr, Xtr, y[tr], not args.no_sklearn, **levels):
            print(json.dumps(dict(r, machine=machine())), flush=True)
        return
    if args.choice:
        for m in args.m:
            lr = LowRankGraphKernel(kernel(), inducing=m, method=args.method, random_state=args.seed)
            t = time.perf_counter()
            lr.fit(Xtr)
            row = dict(model="choice", n_train=len(tr), m=m, method=args.method, choice_s=round(time.perf_counter() - t, 2),
                       first=[int(i) for i in lr.inducing_indices_[:5]], machine=machine())
            print(json.dumps(dict(row, graphgram=os.path.dirname(sys.modules["graphgram"].__file__))), flush=True)
        return
    start, extra = kernel(), dict(levels)
    if args.start_exact:
        # Tune the exact GP on the first --start-exact training molecules, once,
        # and start every low-rank fit from its hyperparameters.
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # hyperparameters at their bounds
            gp = gp_model(kernel(), args.maxiter, False).fit(Xtr[:args.start_exact], y[tr][:args.start_exact])
        start = gp.kernel_.k1.k2
        extra = dict(signal=gp.kernel_.k1.k1.constant_value, noise=gp.kernel_.k2.noise_level)
        rows.append(dict(model="start_exact", n_train=args.start_exact, fit_s=round(time.perf_counter() - t, 2),
                         evaluations=gp.optimizer.n_evaluations_))
        print(json.dumps(rows[-1]), flush=True)
    for m in args.m:
        if m > len(tr):
            continue
        lr = LowRankGraphKernel(clone(start), inducing=m, method=args.method, fitc=args.fitc, random_state=args.seed)
        if args.sklearn_gpr:
            model = gp_model(lr, args.maxiter, verbose, **levels)
        else:
            model = low_rank_model(lr, args.maxiter, verbose, **extra)
        rows.append(fit_and_score("lowrank", model, Xtr, y[tr], Xte, y[te], m=m, method=args.method, fitc=args.fitc,
                                  regressor=type(model).__name__, start_exact=args.start_exact))
    rng = np.random.default_rng(args.seed)
    for n in args.exact_n:
        if n > len(tr):
            continue
        sub = np.sort(rng.choice(len(tr), size=n, replace=False))
        gp = gp_model(kernel(), args.maxiter, verbose, **levels)
        rows.append(fit_and_score("exact", gp, [Xtr[i] for i in sub], y[tr][sub], Xte, y[te]))
        if args.refit:
            t = time.perf_counter()
            final = GaussianProcessRegressor(gp.kernel_, optimizer=None, normalize_y=True).fit(Xtr, y[tr])
            fit_s = time.perf_counter() - t
            pred = final.predict(Xte)
            rows.append(dict(model="refit", tuned_on=n, n_train=len(tr), n_test=len(te), fit_s=round(fit_s, 2),
                             test_mae=float(np.mean(np.abs(pred - y[te]))), test_rmse=rmse(pred, y[te]),
                             lml=float(final.log_marginal_likelihood_value_)))
            print(json.dumps(rows[-1]), flush=True)
    if not args.no_tanimoto:
        fps = fingerprints(smiles)
        rows.append(fit_and_score("tanimoto", gp_model(Tanimoto(), args.maxiter, verbose), fps[tr], y[tr], fps[te],
                                  y[te]))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
