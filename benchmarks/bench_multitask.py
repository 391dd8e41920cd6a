"""Few measurements and many cheap values: a multi-task GP with a graph kernel against
single-task GPs on the measured property (issue #52 item 1).

Per seed, from one data set's pairs of a measured and a cheap (computed or
predicted) property: n_test molecules are held out (their measured values are
the test set); of the rest, n_meas molecules have a measured value and n_cheap
a cheap one (the n_meas among them). Models, all with `molecular_kernel()`:

* ``single``: scikit-learn's exact GP on the measured values alone,
  `molecular_gp_kernel()` + `FisherScoring()` (the documented single-task fit);
* ``single, θ cheap``: the same graph hyperparameters as the multi-task model's
  start (below), fixed, in a BoTorch SingleTaskGP on the measured values
  (signal, noise and mean learnt): what the cheap data give through the
  hyperparameters alone;
* ``multi-task``: BoTorch's MultiTaskGP on both (graph kernel × its task
  kernel), the graph hyperparameters started from an exact GP on the cheap
  values (`FisherScoring()`, stage A) and learnt with everything else by
  `fit_gpytorch_mll` (stage B; ``--maxiter`` caps its L-BFGS-B iterations);
* ``multi-task, θ cheap``: the same with the graph hyperparameters fixed at
  stage A's (the task kernel, noise and means learnt).

Reported per model: the test RMSE and NLPD of the measured values (with the
observation noise of the measured task), the fit's seconds, and, over the
seeds, the paired mean difference to ``single``.

    python benchmarks/bench_multitask.py --dataset FreeSolv --seeds 0 1 2 3 4
    python benchmarks/bench_multitask.py --dataset ESOL --seeds 0 1 2 3 4
"""

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import MultiTaskGP, SingleTaskGP
from gpytorch.kernels import ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood
from sklearn.gaussian_process import GaussianProcessRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATASETS, machine, require  # noqa: E402

from graphgram import molecular_gp_kernel, molecules  # noqa: E402
from graphgram.gaussian_process import FisherScoring, negative_log_predictive_density  # noqa: E402
from graphgram.gpytorch import GPyTorchGraphKernel  # noqa: E402

SETS = {
    "FreeSolv": ("FreeSolv/SAMPL.csv", "smiles", "expt", "calc"),
    "ESOL": ("ESOL/delaney-processed.csv", "smiles", "measured log solubility in mols per litre",
             "ESOL predicted log solubility in mols per litre"),
}


def load(name):
    path, smi, meas, cheap = SETS[name]
    rows = list(csv.DictReader(open(Path(DATASETS) / path)))
    graphs = [molecules.from_smiles(r[smi]) for r in rows]
    return graphs, np.array([float(r[meas]) for r in rows]), np.array([float(r[cheap]) for r in rows])


def gp_moments(gp, X):
    with torch.no_grad():
        post = gp.posterior(X, observation_noise=True)
        return post.mean[..., 0].numpy().ravel(), post.variance[..., 0].sqrt().numpy().ravel()


def run(graphs, meas, cheap, seed, n_meas, n_cheap, n_test, maxiter):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(graphs))
    test, rest = order[:n_test], order[n_test:]
    m_idx, c_idx = rest[:n_meas], rest[:n_cheap]
    pool_idx = np.concatenate([np.unique(np.concatenate([m_idx, c_idx])), test])
    where = {int(g): k for k, g in enumerate(pool_idx)}
    pool = [graphs[i] for i in pool_idx]
    tX = torch.tensor([[where[int(i)]] for i in test], dtype=torch.float64)
    y_test = meas[test]
    out = {}

    t0 = time.perf_counter()
    single = GaussianProcessRegressor(molecular_gp_kernel(verbose=False), normalize_y=True, optimizer=FisherScoring())
    single.fit([graphs[i] for i in m_idx], meas[m_idx])
    mean, std = single.predict([graphs[i] for i in test], return_std=True)
    out["single"] = (mean, std, time.perf_counter() - t0)

    t0 = time.perf_counter()
    stage_a = GaussianProcessRegressor(molecular_gp_kernel(verbose=False), normalize_y=True, optimizer=FisherScoring())
    stage_a.fit([graphs[i] for i in c_idx], cheap[c_idx])
    graph = stage_a.kernel_.k1.k2
    t_a = time.perf_counter() - t0

    t0 = time.perf_counter()
    X1 = torch.tensor([[where[int(i)]] for i in m_idx], dtype=torch.float64)
    st = SingleTaskGP(X1, torch.as_tensor(meas[m_idx])[:, None],
                      covar_module=ScaleKernel(GPyTorchGraphKernel(graph, pool, learn_hyperparameters=False)))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(st.likelihood, st))
    st.eval()
    mean, std = gp_moments(st, tX)
    out["single, θ cheap"] = (mean, std, t_a + time.perf_counter() - t0)

    X = torch.tensor([[where[int(i)], 0] for i in m_idx] + [[where[int(i)], 1] for i in c_idx], dtype=torch.float64)
    Y = torch.as_tensor(np.r_[meas[m_idx], cheap[c_idx]])[:, None]
    for name, learn in (("multi-task, θ cheap", False), ("multi-task", True)):
        t0 = time.perf_counter()
        mt = MultiTaskGP(X, Y, task_feature=1, output_tasks=[0],
                         covar_module=GPyTorchGraphKernel(graph, pool, learn_hyperparameters=learn))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(mt.likelihood, mt),
                         optimizer_kwargs={"options": {"maxiter": maxiter}})
        mt.eval()
        mean, std = gp_moments(mt, tX)
        out[name] = (mean, std, t_a + time.perf_counter() - t0, t_a)
    return {k: dict(rmse=float(np.sqrt(np.mean((v[0] - y_test) ** 2))),
                    nlpd=float(negative_log_predictive_density(y_test, v[0], v[1])), seconds=v[2],
                    **({"stage_a": v[3]} if len(v) > 3 else {})) for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=sorted(SETS), default="FreeSolv")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--n-meas", type=int, default=60)
    ap.add_argument("--n-cheap", type=int, default=500)
    ap.add_argument("--n-test", type=int, default=100)
    ap.add_argument("--maxiter", type=int, default=50, help="L-BFGS-B iterations of fit_gpytorch_mll at most")
    args = ap.parse_args()
    require()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)
    graphs, meas, cheap = load(args.dataset)
    print("# %s: %d measured + %d cheap (%s), %d held out; %s" % (args.dataset, args.n_meas, args.n_cheap,
                                                                   SETS[args.dataset][3], args.n_test, machine()))
    results = []
    for seed in args.seeds:
        r = run(graphs, meas, cheap, seed, args.n_meas, args.n_cheap, args.n_test, args.maxiter)
        results.append(r)
        for k, v in r.items():
            extra = " (stage A %.1f s)" % v["stage_a"] if "stage_a" in v else ""
            print("seed %d  %-16s RMSE %.4f  NLPD %.4f  fit %.1f s%s" % (seed, k, v["rmse"], v["nlpd"], v["seconds"],
                                                                         extra), flush=True)
    print("# mean over %d seeds; paired difference to 'single' (mean ± standard error)" % len(results))
    for k in results[0]:
        rm = np.array([r[k]["rmse"] for r in results])
        nl = np.array([r[k]["nlpd"] for r in results])
        d_rm = rm - np.array([r["single"]["rmse"] for r in results])
        d_nl = nl - np.array([r["single"]["nlpd"] for r in results])
        se = (lambda d: d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan"))
        print("%-16s RMSE %.4f  NLPD %.4f  ΔRMSE %+.4f ± %.4f  ΔNLPD %+.4f ± %.4f  fit %.1f s"
              % (k, rm.mean(), nl.mean(), d_rm.mean(), se(d_rm), d_nl.mean(), se(d_nl),
                 np.mean([r[k]["seconds"] for r in results])))


if __name__ == "__main__":
    main()
