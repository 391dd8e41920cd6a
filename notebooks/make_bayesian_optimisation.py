"""Writes bayesian_optimisation.ipynb beside this script (without outputs); execute it with
nbclient, e.g. GRAPHGRAM_NOTEBOOK_QUICK=1 for the quick run the test suite does."""
from pathlib import Path

import nbformat as nbf

nb = nbf.v4.new_notebook()
md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell
cells = []
cells.append(md("""# Bayesian optimisation over a molecule library with BoTorch and graphgram

A chemist has a library of candidate molecules and an expensive measurement. Bayesian optimisation measures a few
molecules, fits a Gaussian process to the results, and lets an acquisition function choose the next molecule to
measure. Here the library is FreeSolv (642 molecules with measured hydration free energies, Mobley and Guthrie
2014), the goal the most hydrophilic molecule (the most negative ΔG_hyd), and the surrogate a stock BoTorch
`SingleTaskGP` whose covariance is graphgram's marginalized graph kernel, `molecular_kernel()`, on the molecules'
graphs.

`graphgram.gpytorch.GPyTorchGraphKernel` makes any graphgram kernel a GPyTorch kernel. Its inputs are tensors of
indices into the library it holds, so that BoTorch's `fit_gpytorch_mll`, `qLogNoisyExpectedImprovement` and
`optimize_acqf_discrete` work unchanged; the graph kernel's 11 hyperparameters (the stopping probability q and every
base kernel's h) are learnt with the GP's output scale and noise, through the kernel's analytic gradients.

It needs the extra: `pip install "graphgram[torch]"`. `GRAPHGRAM_NOTEBOOK_QUICK=1` (set by the test suite) runs
a few rounds on part of the library; the outputs stored here come from the full run stated at the end."""))
cells.append(code("""import csv, os, time, warnings
from pathlib import Path
import numpy as np
import matplotlib
import matplotlib.pyplot as plt
import torch
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf_discrete
from gpytorch.kernels import ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood

from graphgram import molecular_kernel, molecules
from graphgram.gpytorch import GPyTorchGraphKernel

QUICK = os.environ.get("GRAPHGRAM_NOTEBOOK_QUICK") == "1"
# $GRAPHGRAM_DATASETS, by default shared/datasets beside the repository
DATA = Path(os.environ.get("GRAPHGRAM_DATASETS") or "../../shared/datasets")
if not DATA.exists():
    raise FileNotFoundError("%s not found: set GRAPHGRAM_DATASETS to the folder of the data sets" % DATA)
with open(DATA / "FreeSolv" / "SAMPL.csv", newline="") as f:
    rows = list(csv.DictReader(f))
if QUICK:
    rows = rows[:120]
smiles = [r["smiles"] for r in rows]
y = -np.array([float(r["expt"]) for r in rows])  # maximize −ΔG_hyd (kcal/mol)
library = [molecules.from_smiles(s) for s in smiles]
START, ROUNDS, SEEDS = (5, 3, [0]) if QUICK else (10, 50, [1, 2, 3])
top = np.quantile(y, 0.99)
print(f"{len(library)} molecules; best −ΔG_hyd {y.max():.2f}, top 1 % from {top:.2f} kcal/mol")"""))
cells.append(md("""## One round by hand

The inputs are indices into `library`, as a float64 column. `fit_gpytorch_mll` maximizes the marginal likelihood
over the output scale, the noise and the graph kernel's hyperparameters (`theta`, the logs of q and of each h, under
their bounds)."""))
cells.append(code("""rng = np.random.default_rng(0)
measured = list(rng.choice(len(library), START, replace=False))
graph_kernel = GPyTorchGraphKernel(molecular_kernel(verbose=False), library)
X = torch.tensor(measured, dtype=torch.float64)[:, None]
Y = torch.as_tensor(y[measured])[:, None]
gp = SingleTaskGP(X, Y, covar_module=ScaleKernel(graph_kernel))
print("before:", {k: round(v, 3) for k, v in graph_kernel.hyperparameter_values().items()})
t0 = time.perf_counter()
fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
print(f"fitted in {time.perf_counter() - t0:.1f} s")
print("after: ", {k: round(v, 3) for k, v in graph_kernel.hyperparameter_values().items()})

candidates = np.setdiff1d(np.arange(len(library)), measured)
acq = qLogNoisyExpectedImprovement(gp, X_baseline=X)
choice, _ = optimize_acqf_discrete(acq, q=1, choices=torch.as_tensor(candidates, dtype=torch.float64)[:, None])
print("next molecule to measure:", smiles[int(choice.item())])"""))
cells.append(md("""## The loop, against random search

Each round fits the GP (starting from the previous round's hyperparameters: the same kernel object is reused) and
measures the molecule of highest acquisition among those not measured yet."""))
cells.append(code("""def optimise(seed, model=True):
    rng = np.random.default_rng(seed)
    measured = list(rng.choice(len(library), START, replace=False))
    kernel = GPyTorchGraphKernel(molecular_kernel(verbose=False), library)
    best, seconds = [y[measured].max()], []
    for _ in range(ROUNDS):
        candidates = np.setdiff1d(np.arange(len(library)), measured)
        t0 = time.perf_counter()
        if model:
            X = torch.tensor(measured, dtype=torch.float64)[:, None]
            gp = SingleTaskGP(X, torch.as_tensor(y[measured])[:, None], covar_module=ScaleKernel(kernel))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # BoTorch's notes on input scaling: the inputs are indices
                fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
            acq = qLogNoisyExpectedImprovement(gp, X_baseline=X)
            choice, _ = optimize_acqf_discrete(acq, q=1, choices=torch.as_tensor(candidates, dtype=torch.float64)[:, None])
            pick = int(choice.item())
        else:
            pick = int(rng.choice(candidates))
        seconds.append(time.perf_counter() - t0)
        measured.append(pick)
        best.append(y[measured].max())
    return np.array(best), np.array(seconds)

runs = {name: [optimise(s, model) for s in SEEDS] for name, model in (("graphgram", True), ("random", False))}
for name, rs in runs.items():
    reach = [next((i for i, b in enumerate(b) if b >= top), None) for b, _ in rs]
    print(f"{name:10s} best after {ROUNDS} rounds: {np.mean([b[-1] for b, _ in rs]):.2f}; "
          f"rounds to the top 1 %: {reach}; {np.mean([s.mean() for _, s in rs]):.1f} s per round")"""))
cells.append(code("""matplotlib.rcParams["figure.dpi"] = 90
fig, ax = plt.subplots(figsize=(6, 3.5))
for name, rs in runs.items():
    ax.plot(np.mean([b for b, _ in rs], axis=0), label=name)
ax.axhline(y.max(), color="gray", ls=":", label="best in the library")
ax.axhline(top, color="gray", ls="--", lw=0.8, label="top 1 %")
ax.set_xlabel("round"); ax.set_ylabel("best −ΔG_hyd found (kcal/mol)")
ax.set_title(f"mean over {len(SEEDS)} seeds, {START} random starts"); ax.legend()
plt.tight_layout(); plt.show()"""))
cells.append(md("""## Graphs and other inputs together

To combine the graph with other measured or computed inputs (a descriptor, a temperature, a concentration), give the
inputs more columns and the graph kernel `active_dims=[0]`, the column of indices; GPyTorch's kernel algebra does the
rest. Here the graph kernel times an RBF kernel on two standardized RDKit descriptors (molecular weight, TPSA):"""))
cells.append(code("""from gpytorch.kernels import RBFKernel
from rdkit import Chem
from rdkit.Chem import Descriptors

desc = np.array([[Descriptors.MolWt(m), Descriptors.TPSA(m)] for m in map(Chem.MolFromSmiles, smiles)])
desc = (desc - desc.mean(0)) / desc.std(0)
inputs = torch.as_tensor(np.column_stack([np.arange(len(library)), desc]))  # index, MolWt, TPSA
covar = ScaleKernel(GPyTorchGraphKernel(molecular_kernel(verbose=False), library, active_dims=[0])
                    * RBFKernel(active_dims=[1, 2]))
hybrid = SingleTaskGP(inputs[measured], torch.as_tensor(y[measured])[:, None], covar_module=covar)
fit_gpytorch_mll(ExactMarginalLogLikelihood(hybrid.likelihood, hybrid))
print("RBF length scale on the descriptors:", hybrid.covar_module.base_kernel.kernels[1].lengthscale.detach().numpy())"""))
cells.append(md("""## What the benchmark says

`benchmarks/bench_bo.py` runs this loop for graphgram's molecular preset, graphgram's Weisfeiler-Lehman kernel, a
Tanimoto kernel on Morgan fingerprints and random search, and `benchmarks/bench_bo_gauche.py` times a round against
GAUCHE's GraKeL-based graph GP; benchmarks/README.md has the numbers and the machine."""))
cells.append(code("""import platform, graphgram
print("graphgram", graphgram.__version__, "| torch", torch.__version__, "|", platform.processor() or platform.machine(),
      "| quick run" if QUICK else f"| full run: {len(library)} molecules, {ROUNDS} rounds, seeds {SEEDS}")"""))
nb["cells"] = cells
nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, Path(__file__).with_name("bayesian_optimisation.ipynb"))
