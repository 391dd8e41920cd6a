"""graphgram kernels in GPyTorch and BoTorch: values and gradients against the
scikit-learn path, fits that move the hyperparameters, BoTorch loops, bad input."""

import csv
import io
import pickle
import subprocess
import sys

import numpy as np
import pytest

import torch  # the [test] extra installs torch, gpytorch and botorch: these tests never skip
from botorch.acquisition.logei import qLogNoisyExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf_discrete
from gpytorch.kernels import RBFKernel, ScaleKernel
from gpytorch.mlls import ExactMarginalLogLikelihood

import graphgram
from graphgram import (Graph, MarginalizedGraphKernel, NeighborhoodHashKernel, RandomWalkKernel, ShortestPathKernel,
                       WeisfeilerLehmanKernel, WLFramework, molecular_kernel, molecules)
from graphgram.gpytorch import FitProgress, GPyTorchGraphKernel
from graphgram.gpytorch._blocks import cover
from graphgram.kernels._base import GraphKernelBase
from graphgram.microkernels import KroneckerDelta, TensorProduct

from conftest import dataset_dir

SMILES = ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl", "CCOC", "c1ccncc1", "OCC(O)CO", "CC(C)CC=O",
          "C1CCCCC1", "Oc1ccccc1"]


@pytest.fixture(scope="module")
def pool():
    return [molecules.from_smiles(s) for s in SMILES]


def indices(*idx):
    return torch.tensor(idx, dtype=torch.float64)[:, None]


def esol(n):
    rows = list(csv.DictReader(open(dataset_dir("ESOL") / "delaney-processed.csv")))[:n]
    graphs = [molecules.from_smiles(r["smiles"]) for r in rows]
    y = np.array([float(r["measured log solubility in mols per litre"]) for r in rows])
    return graphs, y


# --- the block planner ------------------------------------------------------------------
def covered(blocks, u):
    got = np.zeros((u, u), dtype=bool)
    for R, C in blocks:
        got[np.ix_(R, C)] = True
        got[np.ix_(C, R)] = True
    return got


def test_cover_training_gram_is_one_symmetric_block():
    blocks = cover(np.ones((7, 7), dtype=bool))
    assert len(blocks) == 1 and blocks[0][0] is blocks[0][1]
    np.testing.assert_array_equal(blocks[0][0], np.arange(7))


def test_cover_botorch_pattern_is_one_rectangular_block():
    # Training graphs 0..4 known; each of candidates 5..14 against them and itself.
    need = np.zeros((15, 15), dtype=bool)
    need[5:, :5] = True
    need[np.arange(5, 15), np.arange(5, 15)] = True
    blocks = cover(need)
    assert len(blocks) == 1
    R, C = blocks[0]
    assert {tuple(R), tuple(C)} == {tuple(range(5, 15)), tuple(range(5))}


@pytest.mark.parametrize("seed", range(20))
def test_cover_covers_every_missing_pair(seed):
    rng = np.random.default_rng(seed)
    u = int(rng.integers(2, 30))
    missing = rng.random((u, u)) < rng.choice([0.05, 0.3, 0.9])
    blocks = cover(missing)
    want = missing | missing.T
    np.fill_diagonal(want, False)
    assert not (want & ~covered(blocks, u)).any()
    for R, C in blocks:
        assert np.all(np.diff(R) > 0) and np.all(np.diff(C) > 0)


# --- values and gradients against the scikit-learn path ---------------------------------
def test_values_equal_the_sklearn_kernel(pool):
    k = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    k.theta = torch.log(torch.tensor([0.05] + [0.3] * 10, dtype=torch.float64))
    sk = k.to_sklearn()
    assert sk.q == pytest.approx(0.05)
    x, y = indices(*range(12)), indices(3, 0, 7, 7)
    np.testing.assert_array_equal(k(x).to_dense().detach().numpy(), sk(pool))
    want = sk([pool[i] for i in range(12)], [pool[i] for i in (3, 0, 7, 7)])
    # A fresh kernel, so that nothing comes from a cache: the same bits either way.
    k2 = GPyTorchGraphKernel(sk, pool)
    np.testing.assert_array_equal(k2(x, y).to_dense().detach().numpy(), want)
    np.testing.assert_array_equal(k(x, y).to_dense().detach().numpy(), want)
    np.testing.assert_array_equal(k(x, diag=True).detach().numpy(), sk.diag(pool))


def test_hyperparameters_on_their_bounds_are_kept(pool):
    # A scikit-learn fit often ends with an h on its bound; GPyTorch's Interval keeps its
    # bounds in float32 unless told otherwise, which mapped such a theta to NaN.
    sk = molecular_kernel(verbose=False)
    b = sk.bounds
    theta = np.where(np.arange(len(b)) % 2 == 0, b[:, 1], b[:, 0])
    k = GPyTorchGraphKernel(sk.clone_with_theta(theta), pool)
    got = k.theta.detach().numpy()
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, theta, rtol=0, atol=1e-8 * np.ptp(b, axis=1).max())
    assert np.all((got >= b[:, 0]) & (got <= b[:, 1]))


@pytest.mark.parametrize("make", [
    lambda: ShortestPathKernel(TensorProduct(element=KroneckerDelta(0.3)), normalize=True),
    lambda: NeighborhoodHashKernel(node_label="element"),
    lambda: RandomWalkKernel(0.05, node_kernel=TensorProduct(element=KroneckerDelta(0.5))),
    lambda: WLFramework(MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.4)), q=0.2), 1, "element"),
], ids=["shortest_path", "neighborhood_hash", "random_walk", "wl_framework"])
def test_other_kernels_give_the_sklearn_values(pool, make):
    kernel = make()
    k = GPyTorchGraphKernel(kernel, pool, learn_hyperparameters=False)
    with torch.no_grad():
        K = k(indices(*range(12)), indices(4, 0, 9)).to_dense().numpy()
    np.testing.assert_array_equal(K, kernel(pool, [pool[4], pool[0], pool[9]]))


@pytest.mark.parametrize("make, from_features", [
    (lambda: WeisfeilerLehmanKernel(3, "element", normalize=True, verbose=False), True),
    (lambda: WeisfeilerLehmanKernel(2, "element", base="optimal_assignment", normalize=0.5, verbose=False), True),
    (lambda: graphgram.VertexHistogramKernel(node_label="element"), True),
    (lambda: NeighborhoodHashKernel(node_label="element"), False),  # no feature map (a min-max ratio)
    (lambda: graphgram.HashGraphKernel(attributes="neighbors", node_label="element", n_hashes=3), False),
], ids=["wl", "wl_oa", "vertex_histogram", "neighborhood_hash", "hash"])
def test_explicit_kernels_score_from_the_pools_features(pool, make, from_features):
    """Explicit-feature kernels with integer features compute their blocks from the
    pool's feature map, computed once (issue #51 item 2), with the core's bits; the
    others (float features) compute them as any kernel does."""
    kernel = make()
    library = graphgram.GraphLibrary.from_graphs(pool)
    for graphs in (pool, library):
        k = GPyTorchGraphKernel(kernel, graphs)
        with torch.no_grad():
            K = k(indices(*range(12)), indices(4, 0, 9, 4)).to_dense().numpy()
            S = k(indices(*range(7))).to_dense().numpy()
            d = k(indices(*range(12)), diag=True).numpy()
        assert (k._cache.features is not False) == from_features
        np.testing.assert_array_equal(K, kernel(pool, [pool[4], pool[0], pool[9], pool[4]]))
        np.testing.assert_array_equal(S, kernel(pool[:7]))
        np.testing.assert_array_equal(d, kernel.diag(pool))


def test_gradient_equals_the_sklearn_gradient(pool):
    k = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    x = indices(*range(10))
    W = torch.as_tensor(np.random.default_rng(0).standard_normal((10, 10)))
    K = k(x, x).to_dense()
    (W * K).sum().backward()
    Kref, G = k.to_sklearn()(pool[:10], eval_gradient=True)
    np.testing.assert_allclose(K.detach().numpy(), Kref, rtol=1e-12)
    # raw_theta's gradient is θ's (scikit-learn's, in log space) times the constraint's derivative.
    dtheta = torch.autograd.functional.jacobian(k.raw_theta_constraint.transform, k.raw_theta.detach()).diagonal()
    want = np.tensordot(W.numpy(), G, axes=([0, 1], [0, 1])) * dtheta.numpy()
    np.testing.assert_allclose(k.raw_theta.grad.numpy(), want, rtol=1e-9, atol=1e-12)


def test_gradcheck_rectangular_and_diag(pool):
    mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.4)), TensorProduct(order=KroneckerDelta(0.6)), q=0.1,
                                  normalize=True, verbose=False)
    k = GPyTorchGraphKernel(mgk, pool)
    x, y = indices(0, 3, 5, 8), indices(1, 3, 9)

    def f(raw):
        K = torch.func.functional_call(k, {"raw_theta": raw}, (x, y)).to_dense()
        d = torch.func.functional_call(k, {"raw_theta": raw}, (y, y), {"diag": True})
        return K, d

    raw = k.raw_theta.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(f, (raw,), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_marginal_likelihood_gradient_equals_finite_difference():
    graphs, y = esol(25)
    X = torch.arange(25, dtype=torch.float64)[:, None]
    Y = torch.as_tensor((y - y.mean()) / y.std())[:, None]
    gp = SingleTaskGP(X, Y, covar_module=ScaleKernel(GPyTorchGraphKernel(molecular_kernel(verbose=False), graphs)))
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    gk = gp.covar_module.base_kernel
    gp.train()

    def value():
        with torch.no_grad():
            return float(mll(gp(X), Y.squeeze(-1)))

    loss = mll(gp(X), Y.squeeze(-1))
    loss.backward()
    grad = gk.raw_theta.grad.numpy().copy()
    raw0 = gk.raw_theta.detach().clone()
    fd = np.empty_like(grad)
    h = 1e-4
    for i in range(len(fd)):
        up, down = raw0.clone(), raw0.clone()
        up[i] += h
        down[i] -= h
        gk.initialize(raw_theta=up)
        f_up = value()
        gk.initialize(raw_theta=down)
        fd[i] = (f_up - value()) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-6)


# --- the low-rank kernel -------------------------------------------------------------------
def test_low_rank_values_and_gradients_equal_the_nystrom_formula(pool):
    mgk = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.4)), TensorProduct(order=KroneckerDelta(0.6)),
                                  q=0.1, normalize=True, verbose=False)
    Z = [1, 4, 6, 10]
    k = GPyTorchGraphKernel(mgk, pool, inducing=Z, jitter=1e-8)
    x, y = indices(0, 3, 5, 8, 11), indices(2, 3, 9)
    with torch.no_grad():
        K, Kd, Kxx = k(x, y).to_dense(), k(x, diag=True), k(x).to_dense()
    sk = k.to_sklearn()
    Kzz = sk([pool[i] for i in Z])
    Kzz = Kzz + 1e-8 * np.mean(np.diag(Kzz)) * np.eye(4)
    Kxz, Kyz = sk([pool[i] for i in (0, 3, 5, 8, 11)], [pool[i] for i in Z]), sk([pool[i] for i in (2, 3, 9)],
                                                                                  [pool[i] for i in Z])
    np.testing.assert_allclose(K.numpy(), Kxz @ np.linalg.solve(Kzz, Kyz.T), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(Kxx.numpy(), Kxz @ np.linalg.solve(Kzz, Kxz.T), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(Kd.numpy(), np.diag(Kxx.numpy()), rtol=1e-12)

    def f(raw):
        return torch.func.functional_call(k, {"raw_theta": raw}, (x, y)).to_dense()

    raw = k.raw_theta.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(f, (raw,), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_low_rank_raises_jitter_as_the_scikit_learn_kernel(pool):
    # Z holds one graph twice, first. With the cosine normalization both copies' entries are
    # exactly 1 (kernels/_normalize.py), so the Cholesky's second pivot is 1 - 1·1 = 0 in any
    # rounding and any BLAS: singular on every machine. (Under normalize=0.5, the preset's,
    # the pivot is a - (a/√a)², zero or a rounding error by the machine's BLAS.)
    k = GPyTorchGraphKernel(molecular_kernel(normalize=True, verbose=False), pool, inducing=[3, 3, 5], jitter=0.0)
    Kzz = k.to_sklearn()([pool[i] for i in (3, 3, 5)])
    assert Kzz[0, 0] == Kzz[0, 1] == Kzz[1, 1] == 1.0
    with pytest.warns(RuntimeWarning, match="not numerically positive definite with jitter=0"):
        K = k(indices(0, 1, 2)).to_dense()
    assert torch.isfinite(K).all()


def test_low_rank_gp_with_chosen_inducing_graphs():
    graphs, y = esol(40)
    X = torch.arange(30, dtype=torch.float64)[:, None]
    k = GPyTorchGraphKernel(molecular_kernel(verbose=False), graphs, inducing=8)
    gp = SingleTaskGP(X, torch.as_tensor(y[:30])[:, None], covar_module=ScaleKernel(k))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    assert len(k.inducing_indices_) == 8 == len(set(k.inducing_indices_.tolist()))
    with torch.no_grad():
        post = gp.posterior(torch.arange(30, 40, dtype=torch.float64)[:, None])
    assert torch.isfinite(post.mean).all() and (post.variance > 0).all()
    with pytest.raises(ValueError, match="inducing=50 graphs to choose from a pool of 40"):
        GPyTorchGraphKernel(molecular_kernel(verbose=False), graphs, inducing=50)
    with pytest.raises(IndexError, match=r"inducing\[1, 0\] = 40 is out of range"):
        GPyTorchGraphKernel(molecular_kernel(verbose=False), graphs, inducing=[0, 40])
    with pytest.raises(TypeError, match="inducing=m"):
        GPyTorchGraphKernel(graphgram.LowRankGraphKernel(molecular_kernel()), graphs)


# --- fitting and BoTorch ------------------------------------------------------------------
def fitted_gp(graphs, y, kernel, n):
    X = torch.arange(n, dtype=torch.float64)[:, None]
    Y = torch.as_tensor(y[:n])[:, None]
    gp = SingleTaskGP(X, Y, covar_module=ScaleKernel(GPyTorchGraphKernel(kernel, graphs)))
    return gp, X, Y


def test_fit_moves_the_hyperparameters_and_improves_the_likelihood():
    graphs, y = esol(40)
    gp, X, Y = fitted_gp(graphs, y, molecular_kernel(verbose=False), 30)
    gk = gp.covar_module.base_kernel
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    gp.train()
    with torch.no_grad():
        before = float(mll(gp(X), gp.train_targets))
    theta0 = gk.theta.detach().clone()
    report = io.StringIO()
    progress = FitProgress(file=report)
    fit_gpytorch_mll(mll, optimizer_kwargs={"callback": progress})
    gp.train()
    with torch.no_grad():
        after = float(mll(gp(X), gp.train_targets))
    assert after > before + 1e-3
    moved = (gk.theta.detach() - theta0).abs()
    assert (moved > 1e-3).sum() >= 3, moved  # the graph kernel's own hyperparameters were found
    lines = report.getvalue().splitlines()
    assert len(lines) == len(progress.history_) >= 2 and lines[0].startswith("iteration 1: loss ")
    # BoTorch's loss: the negative of ExactMarginalLogLikelihood (already per training point).
    assert progress.history_[-1][1] == pytest.approx(-after, rel=1e-6)


def test_acquisition_over_candidate_indices_picks_the_best_candidate():
    graphs, y = esol(40)
    gp, X, Y = fitted_gp(graphs, y, molecular_kernel(verbose=False), 15)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    acq = qLogNoisyExpectedImprovement(gp, X_baseline=X, prune_baseline=False)
    choices = torch.arange(15, 40, dtype=torch.float64)[:, None]
    best, value = optimize_acqf_discrete(acq, q=1, choices=choices)
    with torch.no_grad():
        each = torch.cat([acq(c.view(1, 1, 1)) for c in choices])  # one candidate per call
    assert int(best.item()) == 15 + int(torch.argmax(each))
    assert float(value) == pytest.approx(float(each.max()), rel=1e-6, abs=1e-9)


def test_batched_posterior_equals_separate_posteriors():
    graphs, y = esol(30)
    gp, X, Y = fitted_gp(graphs, y, WeisfeilerLehmanKernel(3, "element", normalize=True), 12)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    Xb = torch.tensor([[[12.], [20.]], [[13.], [29.]], [[25.], [25.]]], dtype=torch.float64)  # batch × q × 1
    with torch.no_grad():
        post = gp.posterior(Xb)
        assert post.mean.shape == (3, 2, 1)
        for b in range(3):
            one = gp.posterior(Xb[b])
            np.testing.assert_allclose(post.mean[b].numpy(), one.mean.numpy(), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(post.covariance_matrix[b].numpy(), one.covariance_matrix.numpy(),
                                       rtol=1e-8, atol=1e-10)


def test_repeated_calls_at_one_theta_compute_nothing_new(pool, monkeypatch):
    k = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    calls = []
    original = GraphKernelBase._compute

    def counting(self, mode, X, Y=None, *args, **kwargs):
        calls.append((mode, len(X), None if Y is None else len(Y)))
        return original(self, mode, X, Y, *args, **kwargs)

    monkeypatch.setattr(GraphKernelBase, "_compute", counting)
    k.eval()
    with torch.no_grad():
        K1 = k(indices(*range(6))).to_dense()
        n = len(calls)
        K2 = k(indices(5, 2, 0), indices(1, 4)).to_dense()
        assert len(calls) == n  # every pair computed by the first call
        np.testing.assert_array_equal(K2.numpy(), K1.numpy()[np.ix_([5, 2, 0], [1, 4])])
        k(indices(*range(8))).to_dense()  # only the pairs of graphs 6 and 7 are new
        pairs = sum(a * b if b else a * (a + 1) // 2 for mode, a, b in calls[n:] if mode == "gram")
        assert 0 < pairs <= 2 * 6 + 3
        n = len(calls)
        k.theta = k.theta * 1.01
        k(indices(5, 2, 0), indices(1, 4)).to_dense()
        assert len(calls) > n  # a new θ computes again


def test_hybrid_product_with_an_rbf_on_descriptors(pool):
    gk = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool, active_dims=[0])
    rbf = RBFKernel(active_dims=[1, 2])
    X = torch.tensor([[0., 0.1, 1.0], [3., 0.5, -1.0], [7., 0.2, 0.3]], dtype=torch.float64)
    with torch.no_grad():
        K = (gk * rbf)(X).to_dense()
        want = gk(X).to_dense() * rbf(X).to_dense()
    np.testing.assert_allclose(K.numpy(), want.numpy(), rtol=1e-14)
    gp = SingleTaskGP(X, torch.tensor([[0.1], [0.5], [0.2]], dtype=torch.float64), covar_module=ScaleKernel(gk * rbf))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    assert gp.posterior(X).mean.shape == (3, 1)


def test_pickled_fitted_model_predicts_the_same():
    graphs, y = esol(20)
    gp, X, Y = fitted_gp(graphs, y, molecular_kernel(verbose=False), 14)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
    Xt = torch.arange(14, 20, dtype=torch.float64)[:, None]
    with torch.no_grad():
        mean = gp.posterior(Xt).mean
        gp2 = pickle.loads(pickle.dumps(gp))
        assert gp2.covar_module.base_kernel._cache.values is None  # the cache is not pickled
        np.testing.assert_array_equal(gp2.posterior(Xt).mean.numpy(), mean.numpy())


def test_dtype_and_values_follow_the_input(pool):
    k = GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element", normalize=True), pool)
    assert k.hyperparameter_names == ()
    K32 = k(indices(0, 1, 2).float()).to_dense()
    K64 = k(indices(0, 1, 2)).to_dense()
    assert K32.dtype == torch.float32 and K64.dtype == torch.float64
    ints = k(torch.tensor([[0], [1], [2]])).to_dense()
    np.testing.assert_array_equal(ints.numpy(), K64.numpy())


# --- bad input -------------------------------------------------------------------------------
def test_index_out_of_range_names_the_entry(pool):
    k = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    with pytest.raises(IndexError, match=r"x1\[2, 0\] = 12 is out of range.*12 graphs"):
        k(indices(0, 1, 12)).to_dense()
    with pytest.raises(IndexError, match=r"x2\[0, 0\] = -1"):
        k(indices(0), indices(-1)).to_dense()


def test_non_integer_index_names_the_entry(pool):
    k = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    with pytest.raises(ValueError, match=r"x1\[1, 0\] = 2.5 is not a graph index"):
        k(indices(0, 2.5)).to_dense()
    with pytest.raises(ValueError, match="not a graph index"):
        k(indices(0, float("nan"))).to_dense()
    with pytest.raises(ValueError, match="active_dims"):
        k(torch.zeros(3, 2, dtype=torch.float64)).to_dense()


def test_pool_lacking_attributes_names_the_graph_and_attribute():
    plain = [Graph(3, [(0, 1), (1, 2)]), Graph(2, [(0, 1)])]
    with pytest.raises(ValueError, match=r"graphs\[0\].*element"):
        GPyTorchGraphKernel(molecular_kernel(verbose=False), plain)


def test_learning_a_kernel_without_hyperparameters_is_refused(pool):
    with pytest.raises(ValueError, match="WeisfeilerLehmanKernel has no hyperparameters to learn"):
        GPyTorchGraphKernel(WeisfeilerLehmanKernel(2, "element"), pool, learn_hyperparameters=True)
    with pytest.raises(TypeError, match="graphgram graph kernel"):
        GPyTorchGraphKernel(RBFKernel(), pool)
    fixed = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool, learn_hyperparameters=False)
    assert not list(fixed.parameters())


def test_mismatched_devices_are_refused(pool):
    k = GPyTorchGraphKernel(molecular_kernel(verbose=False), pool)
    with pytest.raises(ValueError, match="x1 is on cpu and x2 on meta"):
        k.forward(indices(0, 1), indices(0, 1).to("meta"))


def test_import_graphgram_never_imports_torch():
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('torch', 'gpytorch', 'botorch'):\n"
            "            raise ImportError('blocked ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import graphgram\n"
            "g = graphgram.datasets.load_mutag()[0][:3]\n"
            "print(graphgram.WeisfeilerLehmanKernel(2)(g).shape)\n"
            "try:\n"
            "    import graphgram.gpytorch\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "(3, 3)" in out
    assert 'pip install "graphgram[torch]"' in out


def test_docstring_example_runs():
    import doctest

    import graphgram.gpytorch._kernel as module
    result = doctest.testmod(module)
    assert result.attempted > 5 and result.failed == 0


def test_large_pools_keep_the_measured_columns(pool, monkeypatch):
    """Pools above the dense cache's size keep the columns of the graphs paired with
    many others (issue #51 item 2): a BO round after one more measurement, θ kept,
    computes the new molecule's column only; values are the kernel's bits."""
    from graphgram.gpytorch import _kernel as module
    monkeypatch.setattr(module, "_DENSE_CACHE_MAX", 4)
    monkeypatch.setattr(module, "_COLUMN_MIN_PAIRS", 2)
    graphs = pool + [molecules.from_smiles(s) for s in ("CCCO", "CCCN", "CC(C)O", "c1ccoc1", "CCS", "CCOCC")]
    sk = molecular_kernel(verbose=False)
    k = GPyTorchGraphKernel(sk, graphs, learn_hyperparameters=False)
    computed = []
    fill = k._fill
    monkeypatch.setattr(k, "_fill", lambda kernel, request, missing, K, G=None: (
        computed.append(int(np.triu(missing | missing.T).sum())), fill(kernel, request, missing, K, G))[1])
    train, cand, new = [0, 1, 2, 3], list(range(4, 17)), 17

    def posterior_block(train):
        """K(measured and candidates, measured), as a posterior over candidates needs it."""
        with torch.no_grad():
            return k(indices(*(train + cand)), indices(*train)).to_dense().numpy()

    want1 = sk([graphs[i] for i in train + cand], [graphs[i] for i in train])
    want2 = sk([graphs[i] for i in train + [new] + cand], [graphs[i] for i in train + [new]])
    cross, cross_gram = [], type(sk)._cross_gram
    monkeypatch.setattr(type(sk), "_cross_gram", lambda self, X, Y, *a: (cross.append((len(X), len(Y))),
                                                                          cross_gram(self, X, Y, *a))[1])
    with torch.no_grad():  # a training Gram alone makes no columns (a fit pays for its pairs only)
        np.testing.assert_array_equal(k(indices(*train)).to_dense().numpy(), sk([graphs[i] for i in train]))
    assert not k._cache.columns and all(n < len(graphs) for n, _ in cross)
    cross.clear()
    np.testing.assert_array_equal(posterior_block(train), want1)
    # The measured graphs' whole columns, in one call; the candidates have none.
    assert cross == [(len(graphs), 4)] and sorted(k._cache.columns) == train
    cross.clear()
    computed.clear()
    np.testing.assert_array_equal(posterior_block(train + [new]), want2)
    # The new measurement's column only: its pairs with the pool's 18 graphs, one call.
    assert cross == [(len(graphs), 1)] and computed == []
    # The candidates' self-similarities (a posterior's variances) are kept too, as a
    # vector: computed once, by the kernel's diag.
    want = sk.diag([graphs[i] for i in cand])
    diag, diags = type(sk).diag, []
    monkeypatch.setattr(type(sk), "diag", lambda self, X: (diags.append(len(X)), diag(self, X))[1])
    for _ in range(2):
        with torch.no_grad():
            np.testing.assert_array_equal(k(indices(*cand), diag=True).numpy(), want)
    assert diags == [len(cand)]


@pytest.mark.parametrize("make", [
    lambda: WeisfeilerLehmanKernel(2, "element", verbose=False),
    lambda: WeisfeilerLehmanKernel(2, "element", normalize=True, verbose=False),
    lambda: molecular_kernel(verbose=False),
], ids=["wl", "wl_normalized", "molecular"])
def test_large_pool_in_botorch_patterns(pool, monkeypatch, make):
    """A large pool (issue #51 item 2) in the patterns of BoTorch's batched
    posteriors — each batch one candidate against the measured graphs,
    K(test, test), q = 2 batches, plain blocks — gives the sklearn kernel's
    values, bit for bit, whichever local path computes them: the pool's
    features (explicit kernels), or kept columns and self-similarities (pair
    kernels)."""
    from graphgram.gpytorch import _kernel as module
    monkeypatch.setattr(module, "_DENSE_CACHE_MAX", 4)
    wl = make()
    k = GPyTorchGraphKernel(wl, pool, learn_hyperparameters=False)
    train, cand = [0, 1, 2], list(range(3, 12))
    K = wl(pool)
    t = torch.tensor(train, dtype=torch.float64)
    c = torch.tensor(cand, dtype=torch.float64)
    b = len(cand)
    joint = torch.cat([c[:, None, None], t[None, :, None].expand(b, 3, 1)], dim=1)   # b × 4 × 1
    pairs = torch.tensor([[3, 4], [5, 6], [7, 8], [9, 10], [11, 3], [4, 6], [8, 10], [5, 9]], dtype=torch.float64)
    with torch.no_grad():
        cases = [
            (c[:, None, None], c[:, None, None]),                      # K(test, test), one a batch
            (c[:, None, None], t[None, :, None].expand(b, 3, 1)),     # K(test, train)
            (joint, joint),                                            # a candidate with the baseline
            (pairs[:, :, None], pairs[:, :, None]),                    # q = 2
            (t[:, None], t[:, None]),                                  # the training Gram
        ]
        for x1, x2 in cases:
            got = k(x1, x2).to_dense().numpy()
            i1, i2 = x1[..., 0].numpy().astype(int), x2[..., 0].numpy().astype(int)
            want = K[i1[..., :, None], i2[..., None, :]]
            np.testing.assert_array_equal(got, want)
