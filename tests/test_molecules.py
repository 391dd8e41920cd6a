"""Molecular graphs from SMILES, RDKit and 3D coordinates, and the molecular kernel preset."""

import sys

import numpy as np
import pytest

from graphgram import Graph
from graphgram import molecular_gp_kernel, molecular_kernel
from graphgram.molecules import from_coordinates, from_rdkit, from_smiles, smooth_cutoff

Chem = pytest.importorskip("rdkit.Chem")


def test_benzene_from_smiles():
    g = from_smiles("c1ccccc1")
    assert g.n_nodes == 6 and g.n_edges == 6
    np.testing.assert_array_equal(g.node_attrs["element"], 6)
    assert g.node_attrs["aromatic"].all() and g.node_attrs["in_ring"].all()
    np.testing.assert_array_equal(g.node_attrs["hcount"], 1)
    np.testing.assert_array_equal(g.edge_attrs["order"], 1.5)
    assert g.edge_attrs["conjugated"].all()
    assert int(g.node_attrs["hybridization"][0]) == int(Chem.HybridizationType.SP2)


def test_acetic_acid_and_hydrogens():
    g = from_smiles("CC(=O)O ")                      # trailing space as in ESOL
    assert g.n_nodes == 4
    assert sorted(g.edge_attrs["order"].tolist()) == [1.0, 1.0, 2.0]
    np.testing.assert_array_equal(g.node_attrs["element"], [6, 6, 8, 8])
    h = from_smiles("CC(=O)O", hydrogens="explicit")
    assert h.n_nodes == 8 and (h.node_attrs["element"] == 1).sum() == 4
    np.testing.assert_array_equal(from_smiles("[NH4+]").node_attrs["charge"], [1])


def test_from_rdkit_matches_from_smiles():
    a = from_rdkit(Chem.MolFromSmiles("c1ccncc1O"))
    b = from_smiles("c1ccncc1O")
    np.testing.assert_array_equal(a.edges, b.edges)
    for k in a.node_attrs:
        np.testing.assert_array_equal(a.node_attrs[k], b.node_attrs[k])


def test_bad_smiles_and_types():
    with pytest.raises(ValueError, match="C1CC"):
        from_smiles("C1CC")
    with pytest.raises(TypeError):
        from_smiles(42)
    with pytest.raises(ValueError, match="hydrogens"):
        from_smiles("C", hydrogens="some")


def test_missing_rdkit_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "rdkit", None)
    with pytest.raises(ImportError, match="pip install rdkit"):
        from_smiles("CCO")


def test_from_coordinates_edges_weights_lengths():
    # Water-like: O at the origin, two H at 0.96; the H–H distance is 1.52.
    pos = np.array([[0, 0, 0], [0.96, 0, 0], [-0.24, 0.93, 0]])
    g = from_coordinates(["O", "H", "H"], pos, cutoff=1.2)
    assert g.n_edges == 2
    np.testing.assert_array_equal(g.node_attrs["element"], [8, 1, 1])
    np.testing.assert_allclose(g.edge_attrs["length"], np.linalg.norm(pos[1:], axis=1))
    np.testing.assert_allclose(g.weights, (1 - (g.edge_attrs["length"] / 1.2) ** 2) ** 2)
    assert from_coordinates([8, 1, 1], pos, cutoff=2.0).n_edges == 3
    with pytest.raises(ValueError, match="shape"):
        from_coordinates(["O", "H"], pos)
    with pytest.raises(ValueError, match="Xx"):
        from_coordinates(["O", "H", "Xx"], pos)


def test_smooth_cutoff_is_smooth_and_zero_at_cutoff():
    r = np.linspace(0, 2, 2001)
    w = smooth_cutoff(r, 1.0)
    assert w[0] == 1.0 and np.all(w[r >= 1.0] == 0.0)
    assert np.all(np.diff(w) <= 0)
    assert np.max(np.abs(np.diff(w))) < 2e-3                  # no jump anywhere, including the cutoff


def test_molecular_kernel_preset():
    mols = [from_smiles(s) for s in ("CCO", "CCN", "c1ccccc1", "CC(=O)O")]
    k = molecular_kernel(normalize=True)
    K = k(mols)
    np.testing.assert_allclose(np.diag(K), 1.0)
    assert K[0, 1] > K[0, 2]                                   # ethanol is closer to ethylamine than to benzene
    d = molecular_kernel(normalize=False).diag(mols)
    np.testing.assert_allclose(molecular_kernel()(mols), molecular_kernel(normalize=False)(mols) / np.outer(d, d) ** 0.25)
    # Every h of the preset is bounded away from 0 and 1; the preset reads the rich attributes.
    k = molecular_kernel()
    hs = [h for h in k.hyperparameters if h.name.endswith("__h")]
    assert len(hs) == 10 and all(np.allclose(h.bounds.ravel(), [0.05, 0.95]) for h in hs)
    assert k.node_kernel.attributes() == {"element", "aromatic", "charge", "hybridization", "hcount", "in_ring"}
    basic = molecular_kernel(features="basic")
    assert basic.node_kernel.attributes() == {"element"} and basic.edge_kernel.attributes() == {"order"}
    with pytest.raises(ValueError, match="features"):
        molecular_kernel(features="all")
    rng = np.random.default_rng(0)
    clouds = [from_coordinates(["C", "C", "O", "N"], rng.normal(scale=1.0, size=(4, 3)), cutoff=3.0)
              for _ in range(3)]
    K3 = molecular_kernel(bonds="length")(clouds)
    assert K3.shape == (3, 3) and np.all(np.isfinite(K3))
    with pytest.raises(ValueError, match="bonds"):
        molecular_kernel(bonds="angle")



def test_molecular_gp_kernel_is_the_preset_at_the_gp_start():
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
    from graphgram.gaussian_process import FisherScoring

    mols = [from_smiles(s) for s in ("CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCl", "c1ccncc1", "OCCO", "CC#N")]
    k = molecular_gp_kernel()
    assert isinstance(k.k1.k1, ConstantKernel) and k.k1.k1.constant_value == 30.0
    assert isinstance(k.k2, WhiteKernel) and k.k2.noise_level == 0.05
    graph = k.k1.k2
    assert graph.q == 0.5 and repr(graph) == repr(molecular_kernel(q=0.5, h=0.9))
    hs = [h for h in k.hyperparameters if h.name.endswith("__h")]
    assert len(hs) == 10 and np.allclose(np.exp(k.theta[2:12]), 0.9)
    np.testing.assert_allclose(k(mols), 30.0 * molecular_kernel(q=0.5, h=0.9)(mols) + 0.05 * np.eye(len(mols)),
                               rtol=1e-14)
    # Every setting passes through; the kernel is molecular_kernel's.
    basic = molecular_gp_kernel(q=0.2, h=0.6, signal=2.0, noise=0.5, features="basic", n_jobs=1)
    assert basic.k1.k1.constant_value == 2.0 and basic.k2.noise_level == 0.5
    assert repr(basic.k1.k2) == repr(molecular_kernel(q=0.2, h=0.6, features="basic", n_jobs=1))
    # A Gaussian process fits from it: the likelihood rises from the start, within the bounds.
    y = np.array([-0.2, -1.0, -1.6, 1.1, -0.7, 0.8, 1.1, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)        # the noise at its bound on eight molecules
        gp = GaussianProcessRegressor(k, normalize_y=True, optimizer=FisherScoring(verbose=False)).fit(mols, y)
    start = GaussianProcessRegressor(k, normalize_y=True, optimizer=None).fit(mols, y)
    assert gp.log_marginal_likelihood_value_ > start.log_marginal_likelihood_value_
    bounds = gp.kernel_.bounds
    assert np.all(gp.kernel_.theta >= bounds[:, 0] - 1e-12) and np.all(gp.kernel_.theta <= bounds[:, 1] + 1e-12)

def test_rich_atom_and_bond_features():
    from graphgram.molecules import NEIGHBOR_ELEMENTS, RING_SIZES

    # Chloro-cyclopropyl-benzene: one 6-ring, one 3-ring, a chlorine neighbour.
    g = from_smiles("Clc1ccc(cc1)C2CC2")
    nb, rs = g.node_attrs["neighbors"], g.node_attrs["ring_sizes"]
    assert nb.shape == (g.n_nodes, len(NEIGHBOR_ELEMENTS)) and rs.shape == (g.n_nodes, len(RING_SIZES))
    c, cl = NEIGHBOR_ELEMENTS.index(6), NEIGHBOR_ELEMENTS.index(17)
    assert nb[0].tolist() == [1 if i == c else 0 for i in range(len(NEIGHBOR_ELEMENTS))]   # Cl: one C
    assert nb[1, cl] == 1 and nb[1, c] == 2                                                 # ipso carbon
    np.testing.assert_array_equal(nb.sum(1), g.node_attrs["degree"])
    assert rs[0].sum() == 0 and rs[1, RING_SIZES.index(6)] == 1
    assert rs[-1, RING_SIZES.index(3)] == 1 and rs[-1].sum() == 1
    # Equal environments hash equally: the two ortho (and two meta) ring carbons;
    # within one bond ortho and meta carbons look alike, within two bonds they do not.
    env = g.node_attrs["environment"]
    assert env[2] == env[6] and env[3] == env[5] and env[2] == env[3] and env[1] != env[2]
    assert env.dtype == np.int64 and env.max() < 2 ** 31
    env2 = from_smiles("Clc1ccc(cc1)C2CC2", radius=2).node_attrs["environment"]
    assert env2[2] == env2[6] and env2[3] == env2[5] and env2[2] != env2[3]
    # Chirality and bond stereo.
    np.testing.assert_array_equal(from_smiles("C[C@H](N)O").node_attrs["chirality"][1],
                                  int(Chem.ChiralType.CHI_TETRAHEDRAL_CCW))
    st = from_smiles("C/C=C/C").edge_attrs["stereo"]
    assert int(Chem.BondStereo.STEREOE) in st.tolist()
    # Explicit hydrogens appear in the neighbour multisets.
    h = from_smiles("C", hydrogens="explicit")
    assert h.node_attrs["neighbors"][0, NEIGHBOR_ELEMENTS.index(1)] == 4
    # "basic" gives the attributes of before only.
    b = from_smiles("CCO", features="basic")
    assert set(b.node_attrs) == {"element", "aromatic", "charge", "hybridization", "hcount", "in_ring"}
    assert set(b.edge_attrs) == {"order", "aromatic", "conjugated", "in_ring"}
    with pytest.raises(ValueError, match="features"):
        from_smiles("C", features="some")
    with pytest.raises(ValueError, match="radius"):
        from_smiles("C", radius=-1)


def test_size_exponent_normalization():
    from graphgram import MarginalizedGraphKernel
    from graphgram.microkernels import KroneckerDelta, TensorProduct

    X = [from_smiles(s) for s in ("CCO", "c1ccccc1O", "CC(=O)N", "CCCCCC")]
    raw = MarginalizedGraphKernel(TensorProduct(element=KroneckerDelta(0.3)), TensorProduct(order=KroneckerDelta(0.5)),
                                  q=0.1)
    K0 = raw(X)
    d = np.diag(K0)
    for s in (True, 0.5, 0.0):
        k = raw.clone_with_theta(raw.theta).set_params(normalize=s)
        e = float(s)
        K = k(X)
        np.testing.assert_allclose(K, K0 / np.outer(d, d) ** (e / 2), rtol=1e-12)
        np.testing.assert_allclose(k.diag(X), np.diag(K), rtol=1e-12)
        # K(X, X_fit) solves the pairs in the other orientation: equal within the
        # solver's accuracy contract (1e-9 relative), not bit for bit.
        np.testing.assert_allclose(k.fit(X[:2]).transform(X), K[:, :2], rtol=2e-9)
        assert np.linalg.eigvalsh(K).min() > -1e-10
        Kg, G = k(X, eval_gradient=True)
        np.testing.assert_allclose(Kg, K, rtol=1e-12)
        th = k.theta
        for i in range(len(th)):
            dt = np.zeros_like(th)
            dt[i] = 1e-5
            fd = (k.clone_with_theta(th + dt)(X) - k.clone_with_theta(th - dt)(X)) / 2e-5
            np.testing.assert_allclose(G[:, :, i], fd, rtol=1e-4, atol=1e-7 * np.abs(K).max())
    with pytest.raises(ValueError, match="exponent"):
        raw.set_params(normalize=1.5)(X)
