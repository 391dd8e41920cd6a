"""Samples made of several graphs (issue #52 item 4): Mixture and MixtureKernel against the
double sum written out, their gradients, a Gaussian process on solvent blends, reactions,
pickling, bad input, the GPyTorch kernel, and docs/mixtures.md run end to end."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

import graphgram
from graphgram import Graph, Mixture, MixtureKernel, molecular_kernel, molecules
from graphgram.microkernels import KroneckerDelta, TensorProduct

from docs_pages import run_code_blocks

SOLVENTS = ["O", "CCO", "CO", "CC(C)=O", "CC#N", "ClCCl", "c1ccccc1", "CCCCCC", "CCOCC", "CS(C)=O", "C1CCOC1",
            "CC(=O)OCC"]
NORMALIZE = [False, True, 0.5]


@pytest.fixture(scope="module")
def solvents():
    return [molecules.from_smiles(s) for s in SOLVENTS]


def base():
    return molecular_kernel(verbose=False)


def samples(g):
    """Mixtures of 1 to 3 graphs, one listing a graph twice, one with a 0 weight, and a
    pure graph; the same content twice under two objects (molecules.from_smiles("O") again)."""
    water_again = molecules.from_smiles("O")
    return [Mixture([g[0], g[1]], [0.7, 0.3]), Mixture([g[0], g[3]], [0.5, 0.5]), g[1],
            Mixture([g[4], g[5], g[6]], [0.2, 0.3, 0.5]), Mixture([g[2], g[2], g[7]], [1.0, 2.0, 0.5]),
            Mixture([water_again, g[8]], [0.9, 0.0]), Mixture([g[9]], [3.0])]


def as_terms(sample):
    """[(graph, weight)] of a sample written out, every listed graph, a Graph with weight 1."""
    if isinstance(sample, Graph):
        return [(sample, 1.0)]
    return list(zip(sample.graphs, sample.weights))


def double_sum(kernel, A, B, normalize, eval_gradient=False):
    """K(A_i, B_j) = Σ_a Σ_b w_a w_b k(a, b), with k from the base kernel's Gram matrix over
    every listed graph (duplicates included, no deduplication), normalized by the
    self-similarities written out the same way; with eval_gradient the double sum of
    the base kernel's gradient (A and B the same list)."""
    ta, tb = [as_terms(a) for a in A], [as_terms(b) for b in B]
    flat = [g for t in ta + tb for g, _ in t]
    if eval_gradient:
        G, dG = kernel(flat, eval_gradient=True)
    else:
        G = kernel(flat)
    offsets = np.cumsum([0] + [len(t) for t in ta + tb])

    def entry(i, j, M):
        return sum(wa * wb * M[offsets[i] + a, offsets[j] + b]
                   for a, (_, wa) in enumerate((ta + tb)[i]) for b, (_, wb) in enumerate((ta + tb)[j]))

    na = len(ta)
    K = np.array([[entry(i, na + j, G) for j in range(len(tb))] for i in range(na)])
    s = graphgram.kernels._normalize.normalize_exponent(normalize)
    if s:
        dA = np.array([entry(i, i, G) for i in range(na)])
        dB = np.array([entry(na + j, na + j, G) for j in range(len(tb))])
        K = K / np.outer(dA, dB) ** (s / 2)
    if not eval_gradient:
        return K
    assert not s
    return K, np.array([[entry(i, na + j, dG) for j in range(len(tb))] for i in range(na)])


# --- values against the double sum ----------------------------------------------------
@pytest.mark.parametrize("normalize", NORMALIZE)
def test_symmetric_matrix_equals_the_double_sum(solvents, normalize):
    X = samples(solvents)
    k = MixtureKernel(base(), normalize=normalize)
    K = k(X)
    np.testing.assert_allclose(K, double_sum(base(), X, X, normalize), rtol=1e-12)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(k.diag(X), np.diag(K), rtol=1e-12)


@pytest.mark.parametrize("normalize", NORMALIZE)
def test_cross_matrix_equals_the_double_sum(solvents, normalize):
    X = samples(solvents)
    Y = [Mixture([solvents[10], solvents[0]], [0.4, 0.6]), solvents[11], X[3]]
    k = MixtureKernel(base(), normalize=normalize)
    np.testing.assert_allclose(k(X, Y), double_sum(base(), X, Y, normalize), rtol=1e-12)
    np.testing.assert_allclose(k(X[:4], X[2:]), k(X)[:4, 2:], rtol=1e-12)


def test_graphs_alone_give_the_base_kernel_bit_for_bit(solvents):
    b = base()
    np.testing.assert_array_equal(MixtureKernel(b)(solvents), b(solvents))
    np.testing.assert_array_equal(MixtureKernel(b)(solvents[:5], solvents[3:]), b(solvents[:5], solvents[3:]))
    np.testing.assert_array_equal(MixtureKernel(b).diag(solvents), b.diag(solvents))


def test_each_distinct_graph_is_computed_once(solvents, monkeypatch):
    """One Gram matrix per call, over the distinct graphs: an object listed in many
    mixtures, or a copy with the same content, counted once."""
    calls = []
    original = type(base()).__call__

    def spy(self, X, Y=None, eval_gradient=False):
        calls.append((len(X), None if Y is None else len(Y)))
        return original(self, X, Y, eval_gradient)

    monkeypatch.setattr(type(base()), "__call__", spy)
    X = samples(solvents)                       # 10 distinct graphs, 14 listed
    MixtureKernel(base())(X)
    MixtureKernel(base())(X, eval_gradient=True)
    assert calls == [(10, None), (10, None)]
    calls.clear()
    MixtureKernel(base())(X[:2], X[3:4])        # without normalization: the cross block only
    assert calls == [(3, 3)]
    calls.clear()
    MixtureKernel(base(), normalize=True)(X[:2], X[3:4])   # self-similarities: one symmetric Gram
    assert calls == [(6, None)]


def test_reactions_sum_the_roles_and_skip_empty_ones(solvents):
    g = solvents
    R = [(Mixture([g[1], g[3]], [1, 1]), None, Mixture([g[11]], [1])),
         (g[2], Mixture([g[4]], [0.5]), Mixture([g[8], g[0]], [1, 2])),
         (Mixture([g[1]]), g[5], g[11])]
    for normalize in NORMALIZE:
        k = MixtureKernel(base(), normalize=normalize)
        # Role by role, written out: a role absent from a reaction adds nothing.
        want = np.zeros((3, 3))
        for role in range(3):
            for i in range(3):
                for j in range(3):
                    if R[i][role] is not None and R[j][role] is not None:
                        want[i, j] += double_sum(base(), [R[i][role]], [R[j][role]], False)[0, 0]
        s = graphgram.kernels._normalize.normalize_exponent(normalize)
        if s:
            want = want / np.outer(np.diag(want), np.diag(want)) ** (s / 2)
        np.testing.assert_allclose(k(R), want, rtol=1e-12)
        np.testing.assert_allclose(k(R[:1], R[1:]), want[:1, 1:], rtol=1e-12)
        np.testing.assert_allclose(k.diag(R), np.diag(want), rtol=1e-12)
        # scikit-learn's 2-D object array of the tuples (a GaussianProcessRegressor's X_train_)
        A = np.empty((3, 3), dtype=object)
        A[:] = [list(r) for r in R]
        np.testing.assert_array_equal(k(A), k(R))


# --- gradients --------------------------------------------------------------------------
def test_gradient_equals_the_double_sum_of_gradients(solvents):
    X = samples(solvents)
    K, dK = MixtureKernel(base())(X, eval_gradient=True)
    Kw, dKw = double_sum(base(), X, X, False, eval_gradient=True)
    assert dK.shape == (len(X), len(X), len(base().theta))
    np.testing.assert_allclose(K, Kw, rtol=1e-12)
    np.testing.assert_allclose(dK, dKw, rtol=1e-12, atol=1e-14 * np.abs(dKw).max())


@pytest.mark.parametrize("normalize", NORMALIZE)
def test_gradient_equals_finite_differences(solvents, normalize):
    X = samples(solvents)[:5]
    k = MixtureKernel(base(), normalize=normalize)
    K, dK = k(X, eval_gradient=True)
    np.testing.assert_allclose(K, k(X), rtol=1e-12)
    h = 1e-5
    for p in range(len(k.theta)):
        e = np.zeros(len(k.theta))
        e[p] = h
        fd = (k.clone_with_theta(k.theta + e)(X) - k.clone_with_theta(k.theta - e)(X)) / (2 * h)
        np.testing.assert_allclose(dK[:, :, p], fd, rtol=1e-5, atol=1e-8, err_msg=k.hyperparameters[p].name)


def test_hyperparameters_are_the_base_kernels(solvents):
    k = MixtureKernel(base(), normalize=True)
    assert [h.name for h in k.hyperparameters] == ["base_kernel__" + h.name for h in base().hyperparameters]
    np.testing.assert_array_equal(k.theta, base().theta)
    np.testing.assert_array_equal(k.bounds, base().bounds)
    b = k.base_kernel
    k2 = k.clone_with_theta(k.theta + 0.1)
    assert k.base_kernel is b and np.allclose(k2.theta, b.theta + 0.1)   # the original is not modified
    assert k2.get_params()["base_kernel__q"] == pytest.approx(np.exp(np.log(0.1) + 0.1))


# --- scikit-learn estimators --------------------------------------------------------------
def blends(g, rng, n):
    """n random binary blends of the solvents g with a synthetic property: mole-fraction
    weighted sums of the components' heavy-atom and oxygen counts (an ideal mixture)."""
    def prop(m):
        return m.n_nodes + 2.0 * np.sum(m.node_attrs["element"] == 8)
    X, y = [], []
    for _ in range(n):
        a, b = rng.choice(len(g), 2, replace=False)
        x = float(rng.uniform(0.1, 0.9))
        X.append(Mixture([g[a], g[b]], [x, 1 - x]))
        y.append(x * prop(g[a]) + (1 - x) * prop(g[b]))
    return X, np.array(y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # some h at their bounds
def test_gaussian_process_on_solvent_blends_end_to_end(solvents):
    rng = np.random.default_rng(0)
    X, y = blends(solvents, rng, 70)
    kernel = ConstantKernel(30.0) * MixtureKernel(molecular_kernel(q=0.5, h=0.9, verbose=False)) + WhiteKernel(0.05)
    gp = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0)
    gp.fit(X[:50], y[:50])
    assert gp.log_marginal_likelihood_value_ > gp.log_marginal_likelihood(gp.kernel.theta)
    mean, std = gp.predict(X[50:], return_std=True)
    r2 = 1 - np.sum((mean - y[50:]) ** 2) / np.sum((y[50:] - y[50:].mean()) ** 2)
    assert r2 > 0.9, r2
    assert np.all(std > 0)
    # pickled, the fitted model predicts the same
    again = pickle.loads(pickle.dumps(gp))
    np.testing.assert_array_equal(again.predict(X[50:]), mean)


def test_transformer_in_a_pipeline_with_svc(solvents):
    rng = np.random.default_rng(1)
    X, y = blends(solvents, rng, 40)
    labels = (y > np.median(y)).astype(int)
    pipe = make_pipeline(MixtureKernel(base(), normalize=True), SVC(kernel="precomputed", C=10.0))
    pipe.fit(X[:30], labels[:30])
    assert pipe.score(X[:30], labels[:30]) > 0.8
    k = MixtureKernel(base(), normalize=True).fit(X[:30])
    assert k.n_samples_fit_ == 30
    np.testing.assert_allclose(k.transform(X[30:]), k(X[30:], X[:30]), rtol=1e-12)
    np.testing.assert_allclose(clone(k).fit_transform(X[:30]), k(X[:30]), rtol=1e-12)


def test_samples_and_kernels_pickle(solvents):
    X = samples(solvents)
    X2 = pickle.loads(pickle.dumps(X))
    assert repr(X2[0]) == repr(X[0]) == "Mixture(2 graphs, weights=[0.7, 0.3])"
    assert not X2[0].weights.flags.writeable
    k = MixtureKernel(base(), normalize=0.5)
    k2 = pickle.loads(pickle.dumps(k))
    assert k2 == k
    np.testing.assert_array_equal(k2(X2), k(X))


# --- bad input ------------------------------------------------------------------------------
def test_bad_mixtures_name_the_field(solvents):
    g = solvents
    with pytest.raises(ValueError, match=r"Mixture: weights\[1\] = -0.2 is negative"):
        Mixture([g[0], g[1]], [0.5, -0.2])
    with pytest.raises(ValueError, match=r"Mixture: weights\[0\] = nan is not finite"):
        Mixture([g[0], g[1]], [np.nan, 0.2])
    with pytest.raises(ValueError, match=r"Mixture: weights\[1\] = inf is not finite"):
        Mixture([g[0], g[1]], [1.0, np.inf])
    with pytest.raises(ValueError, match="Mixture: 2 graphs but 3 weights"):
        Mixture([g[0], g[1]], [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="Mixture: graphs is empty"):
        Mixture([], [])
    with pytest.raises(ValueError, match="Mixture: every weight is 0"):
        Mixture([g[0]], [0.0])
    with pytest.raises(TypeError, match=r"Mixture: graphs\[1\] is not a graphgram.Graph \(got str\)"):
        Mixture([g[0], "CCO"])
    with pytest.raises(TypeError, match="not a single Graph"):
        Mixture(g[0])
    with pytest.raises(TypeError, match="weights must be numbers"):
        Mixture([g[0]], ["heavy"])


def test_bad_samples_name_the_sample(solvents):
    g = solvents
    k = MixtureKernel(base())
    good = Mixture([g[0], g[1]], [0.5, 0.5])
    with pytest.raises(TypeError, match=r"X\[1\] is not a graphgram.Mixture, a Graph or a tuple"):
        k([good, "CCO"])
    with pytest.raises(TypeError, match="not a single Mixture"):
        k(good)
    with pytest.raises(ValueError, match="X is empty"):
        k([])
    with pytest.raises(ValueError, match=r"X\[1\] has 2 roles but X\[0\] has 1"):
        k([good, (good, g[2])])
    with pytest.raises(ValueError, match=r"X\[0\] has no graph: every role is None"):
        k([(None, None)])
    with pytest.raises(ValueError, match="Y's samples have 2 roles but X's 1"):
        k([good], [(good, None)])
    with pytest.raises(ValueError, match="only supported for K\\(X, X\\)"):
        k([good], [good], eval_gradient=True)
    # weights changed behind the read-only flag are found at the boundary, named by sample
    bad = Mixture([g[0], g[1]], [0.5, 0.5])
    bad.weights.flags.writeable = True
    bad.weights[1] = -1.0
    with pytest.raises(ValueError, match=r"Y\[0\]\[1\]: weights\[1\] = -1.0 is negative"):
        k([good], [(good, bad)])
    # a graph lacking what the base kernel reads: named by sample and component
    plain = Graph(2, [(0, 1)], node_attrs={"label": [0, 1]})
    with pytest.raises(ValueError, match=r"X\[1\].graphs\[1\] has no node attribute 'element'"):
        k([good, Mixture([g[0], plain], [1, 1])])
    with pytest.raises(TypeError, match="base_kernel must be a graphgram graph kernel"):
        MixtureKernel("molecular")([good])
    with pytest.raises(ValueError, match="normalize must be True, False or an exponent"):
        MixtureKernel(base(), normalize=2.0)([good])


# --- GPyTorch ---------------------------------------------------------------------------------
def test_gpytorch_kernel_equals_the_sklearn_kernel_and_fits(solvents):
    torch = pytest.importorskip("torch")
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.kernels import ScaleKernel
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from graphgram.gpytorch import GPyTorchMixtureKernel, mixture_inputs

    rng = np.random.default_rng(2)
    X, y = blends(solvents, rng, 30)
    X = X + [solvents[3]]
    y = np.append(y, 4.0 + 2.0)
    pool, T = mixture_inputs(X)
    assert T.shape == (31, 4) and T.dtype == torch.float64
    for normalize in NORMALIZE:
        mk = MixtureKernel(molecular_kernel(q=0.5, h=0.9, verbose=False), normalize=normalize)
        k = GPyTorchMixtureKernel(mk, pool)
        with torch.no_grad():
            np.testing.assert_allclose(k(T).to_dense().numpy(), mk(X), rtol=1e-12)
            np.testing.assert_allclose(k(T[:5], T[20:]).to_dense().numpy(), mk(X[:5], X[20:]), rtol=1e-12)
            np.testing.assert_allclose(k(T, diag=True).numpy(), mk.diag(X), rtol=1e-12)
        # the gradient in θ through the contraction: scikit-learn's, contracted
        Kt = k(T[:12]).to_dense()
        Wt = torch.as_tensor(rng.standard_normal((12, 12)))
        (Wt * Kt).sum().backward()
        _, dK = mk(X[:12], eval_gradient=True)
        dtheta = torch.autograd.functional.jacobian(k.graph_module.raw_theta_constraint.transform,
                                                    k.graph_module.raw_theta.detach()).diagonal()
        want = np.tensordot(Wt.numpy(), dK, axes=([0, 1], [0, 1])) * dtheta.numpy()
        np.testing.assert_allclose(k.graph_module.raw_theta.grad.numpy(), want, rtol=1e-8, atol=1e-12)

    # a SingleTaskGP fits (a few iterations) and its kernel matrix is scikit-learn's at the fitted θ
    mk = MixtureKernel(molecular_kernel(q=0.5, h=0.9, verbose=False), normalize=True)
    covar = ScaleKernel(GPyTorchMixtureKernel(mk, pool))
    gp = SingleTaskGP(T[:25], torch.as_tensor(y[:25])[:, None], covar_module=covar)
    mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
    theta0 = gp.covar_module.base_kernel.theta.detach().clone()
    fit_gpytorch_mll(mll, optimizer_kwargs={"options": {"maxiter": 5}})
    mix = gp.covar_module.base_kernel
    assert (mix.theta.detach() - theta0).abs().max() > 1e-4
    with torch.no_grad():
        K = mix(T).to_dense().numpy()
        post = gp.posterior(T[25:])
    np.testing.assert_allclose(K, mix.to_sklearn()(X), rtol=1e-12)
    assert torch.isfinite(post.mean).all() and (post.variance > 0).all()
    # BoTorch's batched posteriors (b × 1 × d rows) equal the joint one's marginals
    gp.eval()
    with torch.no_grad():
        batched = gp.posterior(T[25:].unsqueeze(1))
    np.testing.assert_allclose(batched.mean.squeeze().numpy(), post.mean.squeeze().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(batched.variance.squeeze().numpy(), post.variance.squeeze().numpy(), rtol=1e-9,
                               atol=1e-12)


def test_gpytorch_reactions_and_bad_rows(solvents):
    torch = pytest.importorskip("torch")
    from graphgram.gpytorch import GPyTorchMixtureKernel, mixture_inputs
    g = solvents
    R = [(Mixture([g[1], g[3]]), None, g[11]), (g[2], Mixture([g[4]], [0.5]), Mixture([g[8], g[0]], [1, 2]))]
    pool, T = mixture_inputs(R, pool=g)
    assert pool is g and T.shape == (2, 3 * 2 * 2)
    mk = MixtureKernel(base(), normalize=0.5)
    k = GPyTorchMixtureKernel(mk, g, n_roles=3)
    with torch.no_grad():
        np.testing.assert_allclose(k(T).to_dense().numpy(), mk(R), rtol=1e-12)
    with pytest.raises(ValueError, match=r"samples\[0\]\[2\].graphs\[0\] is not in the pool"):
        mixture_inputs(R, pool=g[:5])
    with pytest.raises(ValueError, match="with n_roles=3 a row holds"):
        k(T[:, :-1]).to_dense()
    bad = T.clone()
    bad[0, 2] = -0.5       # role 0, slot 0's weight
    with pytest.raises(ValueError, match=r"x1\[0\] \(role 0, slot 0\) has weight -0.5"):
        k(bad).to_dense()
    none = T.clone()
    none[0, [2, 3, 6, 7, 10, 11]] = 0.0
    with pytest.raises(ValueError, match=r"x1\[0\] has no positive weight"):
        k(none).to_dense()
    out = T.clone()
    out[1, 0] = 12.0
    with pytest.raises(IndexError, match="out of range"):
        k(out).to_dense()
    with pytest.raises(TypeError, match="kernel must be a graphgram.MixtureKernel"):
        GPyTorchMixtureKernel(base(), g)
    # pickled, the kernel gives the same values
    k2 = pickle.loads(pickle.dumps(k))
    with torch.no_grad():
        np.testing.assert_array_equal(k2(T).to_dense().numpy(), k(T).to_dense().numpy())


# --- the recipe in docs/mixtures.md -----------------------------------------------------------
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # some h at their bounds
def test_docs_recipe_runs():
    pytest.importorskip("torch")
    run_code_blocks("mixtures.md")


def test_docstring_examples_run():
    pytest.importorskip("torch")
    import doctest
    import graphgram.gpytorch._mixture
    import graphgram.kernels.mixture
    import graphgram.mixture
    for module in (graphgram.mixture, graphgram.kernels.mixture, graphgram.gpytorch._mixture):
        result = doctest.testmod(module)
        assert result.attempted and not result.failed, module.__name__
