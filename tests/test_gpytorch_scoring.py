"""FisherScoring on the GPyTorch path (fit_gpytorch_mll(mll, optimizer=FisherScoring())),
the graph kernel's forward-mode derivative, priors over θ and the BO preset."""

import pickle
import warnings

import numpy as np
import pytest

import torch  # the [test] extra installs torch, gpytorch and botorch: these tests never skip
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim.utils import sample_all_priors
from gpytorch.kernels import RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.mlls import ExactMarginalLogLikelihood, VariationalELBO
from gpytorch.priors import GammaPrior, NormalPrior
import torch.autograd.forward_ad as fwAD

from graphgram import molecular_gp_kernel, molecular_kernel, molecules
from graphgram.gaussian_process import FisherScoring
from graphgram.gpytorch import GPyTorchGraphKernel, molecular_bo_kernel
from graphgram.gpytorch._scoring import information

SMILES = ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl", "CCOC", "c1ccncc1", "OCC(O)CO", "CC(C)CC=O",
          "C1CCCCC1", "Oc1ccccc1", "CCCCO", "NCC(=O)O"]


@pytest.fixture(scope="module")
def pool():
    return [molecules.from_smiles(s) for s in SMILES]


def targets(pool):
    """A smooth function of the molecules (size and heteroatoms), deterministic."""
    return torch.tensor([[0.3 * g.n_nodes + np.sin(i)] for i, g in enumerate(pool)], dtype=torch.float64)


def graph_model(pool, n=10, prior=False, likelihood=None):
    kernel = GPyTorchGraphKernel(molecular_kernel(features="basic", verbose=False), pool,
                                 theta_prior=NormalPrior(torch.zeros(3, dtype=torch.float64), 0.5) if prior else None)
    X = torch.arange(n, dtype=torch.float64)[:, None]
    gp = SingleTaskGP(X, targets(pool)[:n], covar_module=ScaleKernel(kernel), likelihood=likelihood)
    return gp, ExactMarginalLogLikelihood(gp.likelihood, gp)


# --- the graph kernel's forward-mode derivative -------------------------------------------
def test_forward_mode_derivative_is_the_gradient_matrices_times_the_tangent(pool):
    kernel = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    t = torch.linspace(-1.0, 1.0, len(kernel.theta), dtype=torch.float64)
    X = torch.arange(len(pool), dtype=torch.float64)[:, None]
    with fwAD.dual_level():
        kernel._parameters["raw_theta"] = fwAD.make_dual(kernel.raw_theta.detach(), t)
        try:
            K = kernel(X[:9], X[4:]).to_dense()
            tangent = fwAD.unpack_dual(K).tangent
        finally:
            kernel._parameters["raw_theta"] = torch.nn.Parameter(fwAD.unpack_dual(kernel.raw_theta).primal)
    # The reference: scikit-learn's gradient of the kernel on the same graphs, times the
    # tangent of θ (θ = the Interval transform of raw θ, whose derivative is applied here).
    _, dK = kernel.to_sklearn()(pool, eval_gradient=True)
    lo, hi = kernel.raw_theta_constraint.lower_bound, kernel.raw_theta_constraint.upper_bound
    s = torch.sigmoid(kernel.raw_theta.detach())
    dtheta = ((hi - lo) * s * (1 - s) * t).numpy()
    expected = (dK @ dtheta)[:9, 4:]
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-12, atol=1e-14)


# --- the information against a dense reference ----------------------------------------------
def central(f, z, eps=1e-5):
    """Central differences of f (array-valued) at z, one entry per coordinate."""
    out = []
    for k in range(len(z)):
        e = np.zeros_like(z)
        e[k] = eps
        out.append((f(z + e) - f(z - e)) / (2 * eps))
    return np.array(out)


@pytest.mark.parametrize("prior", [False, True])
def test_information_matches_finite_differences_and_the_dense_fisher(pool, prior):
    gp, mll = graph_model(pool, prior=prior, likelihood=None if prior else GaussianLikelihood())
    mll.train()
    coords, evaluate = information(mll)
    z = coords.z() + 0.05 * np.cos(np.arange(len(coords.z())))   # away from the start, inside the bounds
    value, grad, fisher = evaluate(z)

    def objective(v):
        return np.array(evaluate(v)[0])

    np.testing.assert_allclose(grad, central(objective, z), rtol=1e-5, atol=1e-7)
    # The Fisher information of the likelihood from the marginal covariance and mean,
    # differentiated numerically, in NumPy.
    with torch.no_grad():
        def moments(v):
            coords.assign(v)
            out = mll.likelihood(gp(*gp.train_inputs))
            return np.concatenate([out.covariance_matrix.numpy().ravel(), out.mean.numpy().ravel()])

        n = gp.train_targets.shape[-1]
        S = moments(z)[:n * n].reshape(n, n)
        D = central(moments, z)
    dS, dm = D[:, :n * n].reshape(-1, n, n), D[:, n * n:]
    Si = np.linalg.inv(S)
    reference = np.array([[0.5 * np.trace(Si @ a @ Si @ b) + dm[i] @ Si @ dm[j] for j, b in enumerate(dS)]
                          for i, a in enumerate(dS)])
    if prior:
        # The priors' curvature: the negative Hessian of the log priors (positive here: normal
        # and log-normal-in-log-space priors are concave in these coordinates).
        def log_prior(v):
            coords.assign(v)
            return np.array(sum(float(p.log_prob(c(m)).sum().detach()) for _, m, p, c, _ in mll.named_priors()))

        H = central(lambda v: central(log_prior, v, 1e-4), z, 1e-4)
        w = np.linalg.eigvalsh(-(H + H.T) / 2)
        assert w.min() > -1e-3 * abs(w).max()
        reference = reference - (H + H.T) / 2
        tol = 1e-4
    else:
        tol = 1e-6
    np.testing.assert_allclose(fisher, reference, rtol=tol, atol=tol * np.abs(reference).max())


class _NoForwardMode(torch.autograd.Function):
    """The identity, with a backward and no jvp (as GPyTorch's own kernel functions)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g


class _OpaqueRBF(RBFKernel):
    def forward(self, x1, x2, diag=False, **params):
        return _NoForwardMode.apply(torch.exp(-0.5 * torch.cdist(x1, x2) ** 2 / self.lengthscale ** 2))


def test_information_falls_back_to_differences_without_forward_mode():
    X = torch.linspace(0, 1, 12, dtype=torch.float64)[:, None]
    Y = torch.sin(5 * X)
    fishers = []
    for kernel in (RBFKernel(), _OpaqueRBF()):
        gp = SingleTaskGP(X, Y, covar_module=ScaleKernel(kernel), likelihood=GaussianLikelihood())
        mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
        mll.train()
        coords, evaluate = information(mll)
        fishers.append(evaluate(coords.z() + 0.1)[2])
    np.testing.assert_allclose(fishers[1], fishers[0], rtol=1e-5, atol=1e-6 * np.abs(fishers[0]).max())


# --- fitting ---------------------------------------------------------------------------------
def test_fisher_scoring_reaches_the_optimum_lbfgs_reaches_on_a_smooth_problem():
    X = torch.linspace(0, 1, 40, dtype=torch.float64)[:, None]
    Y = torch.sin(6 * X) + 0.1 * torch.cos(37 * X)
    values = {}
    for name in ("lbfgs", "fisher"):
        gp = SingleTaskGP(X, Y, covar_module=ScaleKernel(RBFKernel()))
        mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
        if name == "fisher":
            fs = FisherScoring(verbose=False)
            fit_gpytorch_mll(mll, optimizer=fs)
            assert 1 <= fs.n_evaluations_ < 100
        else:
            fit_gpytorch_mll(mll)
        assert not mll.training                      # fit_gpytorch_mll's contract: a fitted model in eval mode
        mll.train()
        values[name] = float(mll(gp(*gp.train_inputs), gp.train_targets)) * 40
        values[name + " lengthscale"] = float(gp.covar_module.base_kernel.lengthscale)
    # FisherScoring stops within tol = 0.5 nats of the optimum.
    assert values["fisher"] >= values["lbfgs"] - 0.5
    assert values["fisher lengthscale"] == pytest.approx(values["lbfgs lengthscale"], rel=0.2)


def test_fisher_scoring_fits_a_graph_kernel_and_keeps_parameters_leaves(pool):
    gp, mll = graph_model(pool)
    mll.train()
    before = float(mll(gp(*gp.train_inputs), gp.train_targets))
    theta0 = gp.covar_module.base_kernel.theta.detach().clone()
    fs = FisherScoring(verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # no warning: BoTorch would refit
        fit_gpytorch_mll(mll, optimizer=fs)
    mll.train()
    after = float(mll(gp(*gp.train_inputs), gp.train_targets))
    assert after > before
    assert not torch.equal(gp.covar_module.base_kernel.theta.detach(), theta0)
    assert all(p.is_leaf for p in mll.parameters())
    assert [h[0] for h in fs.history_][-1] == pytest.approx(after * 10, abs=1e-9)
    gp.eval()
    assert gp.posterior(torch.tensor([[12.0], [13.0]], dtype=torch.float64)).mean.shape == (2, 1)


def test_fisher_scoring_refuses_what_it_cannot_fit(pool):
    gp, mll = graph_model(pool)
    with pytest.raises(TypeError, match="without closure"):
        FisherScoring(verbose=False)(mll, closure=lambda: None)
    with pytest.raises(TypeError, match="ExactMarginalLogLikelihood"):
        FisherScoring(verbose=False)(VariationalELBO(gp.likelihood, gp, num_data=10))
    with pytest.raises(TypeError, match="obj_func, initial_theta, bounds"):
        FisherScoring(verbose=False)(lambda theta: 0.0)


# --- priors over θ ---------------------------------------------------------------------------
def test_theta_prior_adds_its_log_density_to_the_mll(pool):
    values = []
    for prior in (False, True):
        gp, mll = graph_model(pool, prior=prior)
        mll.train()
        values.append(float(mll(gp(*gp.train_inputs), gp.train_targets)))
        theta = gp.covar_module.base_kernel.theta.detach()
    log_prior = float(NormalPrior(torch.zeros(3, dtype=torch.float64), 0.5).log_prob(theta).sum())
    assert values[1] - values[0] == pytest.approx(log_prior / 10, rel=1e-12)


def test_theta_prior_samples_pickles_and_refuses_bad_priors(pool):
    kernel = GPyTorchGraphKernel(molecular_kernel(features="basic", verbose=False), pool,
                                 theta_prior=NormalPrior(torch.zeros(3, dtype=torch.float64), 2.0))
    torch.manual_seed(0)
    sample_all_priors(kernel)                         # BoTorch's restarts draw θ from the prior
    theta = kernel.theta.detach().numpy()
    bounds = np.asarray(kernel.graph_kernel.bounds)
    assert np.all(theta >= bounds[:, 0]) and np.all(theta <= bounds[:, 1])
    copy = pickle.loads(pickle.dumps(kernel))
    np.testing.assert_array_equal(copy.theta.detach().numpy(), theta)
    assert isinstance(copy.theta_prior, NormalPrior)
    with pytest.raises(TypeError, match="gpytorch.priors.Prior"):
        GPyTorchGraphKernel(molecular_kernel(verbose=False), pool, theta_prior=0.5)
    with pytest.raises(ValueError, match="learn_hyperparameters is False"):
        GPyTorchGraphKernel(molecular_kernel(verbose=False), pool, learn_hyperparameters=False,
                            theta_prior=GammaPrior(2.0, 2.0))


# --- the BO preset ---------------------------------------------------------------------------
def test_molecular_bo_kernel_is_centred_on_molecular_gp_kernel(pool):
    covar = molecular_bo_kernel(pool, verbose=False)
    preset = molecular_gp_kernel(verbose=False)
    base = covar.base_kernel
    np.testing.assert_allclose(base.theta.detach().numpy(), preset.k1.k2.theta, rtol=1e-9)
    np.testing.assert_allclose(base.theta_prior.loc.numpy(), preset.k1.k2.theta)
    assert float(covar.outputscale) == pytest.approx(preset.k1.k1.constant_value)
    assert float(covar.outputscale_prior.loc) == pytest.approx(np.log(preset.k1.k1.constant_value))
    # However wild a line search's step, the output scale stays where its prior is defined.
    covar.initialize(raw_outputscale=torch.tensor(-1e3, dtype=torch.float64))
    assert float(covar.outputscale) >= 0.99e-4          # the bound, rounded to float32 by GPyTorch
    assert torch.isfinite(covar.outputscale_prior.log_prob(covar.outputscale))
    for bad in (0, -1.0, float("nan"), True, "1"):
        with pytest.raises(ValueError, match="theta_spread"):
            molecular_bo_kernel(pool, theta_spread=bad)


def test_molecular_bo_kernel_keeps_few_data_near_the_preset(pool):
    """Ten molecules cannot carry eleven graph hyperparameters: with the priors the fit
    stays nearer the preset's θ than maximum likelihood does."""
    X = torch.arange(10, dtype=torch.float64)[:, None]
    moved = {}
    for name in ("ml", "map"):
        if name == "map":
            covar = molecular_bo_kernel(pool, verbose=False)
        else:
            covar = ScaleKernel(GPyTorchGraphKernel(molecular_gp_kernel(verbose=False).k1.k2, pool))
        gp = SingleTaskGP(X, targets(pool)[:10], covar_module=covar)
        theta0 = covar.base_kernel.theta.detach().numpy().copy()
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp), optimizer=FisherScoring(verbose=False))
        moved[name] = np.abs(covar.base_kernel.theta.detach().numpy() - theta0).max()
    assert moved["map"] < 0.5 * moved["ml"]


def test_the_documented_bo_round_runs(pool):
    """docs/gaussian_processes.md's BO recipe: the preset, fit_gpytorch_mll, qLogNEI over the rest."""
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement
    from botorch.optim import optimize_acqf_discrete
    measured = [0, 2, 4, 6, 8, 10]
    X = torch.tensor(measured, dtype=torch.float64)[:, None]
    gp = SingleTaskGP(X, targets(pool)[measured], covar_module=molecular_bo_kernel(pool, verbose=False))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    acq = qLogNoisyExpectedImprovement(gp, X_baseline=X)
    choices = torch.tensor([i for i in range(len(pool)) if i not in measured], dtype=torch.float64)[:, None]
    pick, value = optimize_acqf_discrete(acq, q=1, choices=choices)
    assert int(pick) in set(range(len(pool))) - set(measured)
    assert torch.isfinite(value).all()
