"""One round of graph-GP Bayesian optimisation: graphgram's GPyTorch kernel against
GAUCHE's GraKeL-based kernel, the same Weisfeiler-Lehman model, in one run (#36).

A round with n measured molecules: fit the GP (graphgram: BoTorch's
fit_gpytorch_mll; GAUCHE's SIGP, which that function does not take: 100 Adam
steps, as GAUCHE's tutorials fit), then the
posterior mean and variance of every molecule not yet measured (what an
acquisition function reads). Both use the Weisfeiler-Lehman subtree kernel on
element labels, 5 iterations, not normalized (GraKeL's defaults, which GAUCHE's
WeisfeilerLehmanKernel uses), times a learnt output scale, and a Gaussian
likelihood; GAUCHE's model is its SIGP (ExactGP for graph inputs) as in its
graph-regression tutorial, with graphs built from graphgram's (``to_networkx``,
element labels) instead of graphein's, which changes nothing for this kernel.
First the two kernels' Gram matrices on the same molecules are compared.
SIGP's own posterior fails beside GPyTorch 1.15 (``exact_prediction() missing 1
required positional argument: 'test_train_covar'``): for GAUCHE the posterior is
computed here as SIGP would, from its kernel on all the graphs in one call.

GAUCHE 0.1.6 installs beside GPyTorch 1.15 and BoTorch 0.18 with pip 23, not
with pip 26, which rejects its ``rxn`` extra's git dependency; without deps:
``pip install --no-deps gauche`` (its graph kernels need only grakel).

    python benchmarks/bench_bo_gauche.py --dataset FreeSolv --n 10 30 60
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from gpytorch.distributions import MultivariateNormal
from gpytorch.kernels import ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ConstantMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from linear_operator import to_linear_operator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402
from bench_bo import SETS, load  # noqa: E402
from graphgram import WeisfeilerLehmanKernel, molecules  # noqa: E402
from graphgram.gpytorch import GPyTorchGraphKernel  # noqa: E402

try:
    from gauche import NonTensorialInputs, SIGP
    from gauche.kernels.graph_kernels import WeisfeilerLehmanKernel as GaucheWL
except ImportError as exc:
    raise SystemExit("GAUCHE is not installed (%s): pip install --no-deps gauche" % exc)


ADAM_STEPS = 100


class GaucheGraphGP(SIGP):
    """GAUCHE's graph GP, as its tutorial writes it."""

    def __init__(self, train_x, train_y, likelihood):
        super().__init__(train_x, train_y, likelihood)
        self.mean = ConstantMean()
        self.covariance = GaucheWL(node_label="element")

    def forward(self, x):
        mean = self.mean(torch.zeros(len(x), 1)).float()
        # As a linear operator: a dense tensor makes torch factor the prior covariance of
        # all candidates at once, which fails (WL Grams of molecules are singular).
        return MultivariateNormal(mean, to_linear_operator(self.covariance(x)))


def gauche_round(nx_graphs, y, train, rest):
    X = NonTensorialInputs([nx_graphs[i] for i in train])
    Y = torch.as_tensor(y[train]).float()
    likelihood = GaussianLikelihood()
    gp = GaucheGraphGP(X, Y, likelihood)
    t0 = time.perf_counter()
    # BoTorch's fit_gpytorch_mll does not take SIGP (it is no BoTorch model: "object has no
    # attribute 'transform_inputs'"); GAUCHE's tutorials fit with Adam.
    mll = ExactMarginalLogLikelihood(likelihood, gp)
    gp.train()
    optimizer = torch.optim.Adam(gp.parameters(), lr=0.1)
    for _ in range(ADAM_STEPS):
        optimizer.zero_grad()
        loss = -mll(gp(X), Y)
        loss.backward()
        optimizer.step()
    t1 = time.perf_counter()
    # SIGP's own posterior fails beside GPyTorch 1.15 (exact_prediction() takes a new
    # argument, test_train_covar): what it would compute, written out. Its kernel sees
    # the measured and the candidate graphs in one GraKeL call, as SIGP's does.
    with torch.no_grad():
        K = gp.covariance(NonTensorialInputs([nx_graphs[i] for i in list(train) + list(rest)])).double()
        n = len(train)
        Knn = K[:n, :n] + likelihood.noise.double() * torch.eye(n, dtype=torch.float64)
        L = torch.linalg.cholesky(Knn)
        A = torch.cholesky_solve(K[:n, n:], L)
        c = gp.mean.constant.double()
        mean = c + A.T @ (Y.double() - c)
        var = K.diagonal()[n:] - (K[:n, n:] * A).sum(0)
    return t1 - t0, time.perf_counter() - t1, mean.numpy(), var.numpy()


def graphgram_round(kernel, y, train, rest):
    X = torch.as_tensor(train, dtype=torch.float64)[:, None]
    gp = SingleTaskGP(X, torch.as_tensor(y[train])[:, None], covar_module=ScaleKernel(kernel),
                      outcome_transform=None)
    t0 = time.perf_counter()
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    t1 = time.perf_counter()
    with torch.no_grad():
        post = gp.posterior(torch.as_tensor(rest, dtype=torch.float64)[:, None])
        mean, var = post.mean.squeeze(-1), post.variance.squeeze(-1)
    return t1 - t0, time.perf_counter() - t1, mean.numpy(), var.numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=sorted(SETS), default="FreeSolv")
    ap.add_argument("--n", type=int, nargs="+", default=[10, 30, 60], help="measured molecules per round")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many rounds per size")
    args = ap.parse_args()
    smiles, y = load(args.dataset)
    graphs = [molecules.from_smiles(s) for s in smiles]
    nx_graphs = [g.to_networkx() for g in graphs]
    wl = WeisfeilerLehmanKernel(5, "element", normalize=False, verbose=False)
    print("%s: %d molecules" % (args.dataset, len(graphs)))
    print(machine())

    # The same kernel: GAUCHE's Gram (GraKeL, float32) against graphgram's on 40 molecules.
    ours = wl(graphs[:40])
    theirs = GaucheWL(node_label="element").kernel(NonTensorialInputs(nx_graphs[:40])).double().numpy()
    print("Gram matrices on 40 molecules: max relative difference %.2g (GAUCHE returns float32)"
          % (np.abs(ours - theirs).max() / np.abs(ours).max()))

    rng = np.random.default_rng(0)
    print("%6s  %-26s  %-26s  %s" % ("n", "GAUCHE s (fit + posterior)", "graphgram s (fit + posterior)", "ratio"))
    for n in args.n:
        order = rng.permutation(len(graphs))
        train, rest = order[:n], order[n:]
        best_g = best_o = (np.inf, 0, 0)
        for _ in range(args.repeat):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fg, pg, _, _ = gauche_round(nx_graphs, y, train, rest)
                # A fresh kernel each round: nothing cached from the previous one.
                fo, po, _, _ = graphgram_round(GPyTorchGraphKernel(wl, graphs), y, train, rest)
            best_g = min(best_g, (fg + pg, fg, pg))
            best_o = min(best_o, (fo + po, fo, po))
        print("%6d  %8.2f (%.2f + %.2f)%8s  %8.3f (%.3f + %.3f)%8s  %.0f×"
              % (n, best_g[0], best_g[1], best_g[2], "", best_o[0], best_o[1], best_o[2], "", best_g[0] / best_o[0]))
    print(machine())


if __name__ == "__main__":
    main()
