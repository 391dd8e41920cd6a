"""docs/attributes.md (issue #52 item 7) run end to end: graphs with several node and edge
attributes (a partial charge, descriptor and embedding vectors, bond lengths from a
conformer), the kernel on them against the product written out, its Gram matrix
symmetric and positive semi-definite, and a value that moves when a vector changes."""

import numpy as np
import pytest

pytest.importorskip("rdkit")
pytest.importorskip("networkx")

from docs_pages import run_code_blocks  # noqa: E402


@pytest.fixture(scope="module")
def page():
    """The namespace of the page's blocks, run in order in one namespace."""
    return run_code_blocks("attributes.md", shared=True)


def test_every_block_runs(page):
    for name in ("with_attributes", "node_kernel", "kernel", "gp", "graph_kernel", "explicit"):
        assert name in page, name


def test_graphs_carry_the_attributes(page):
    for g in page["graphs"]:
        assert g.node_attrs["partial_charge"].shape == (g.n_nodes,)
        assert g.node_attrs["descriptors"].shape == (g.n_nodes, 4)
        assert np.allclose(np.linalg.norm(g.node_attrs["embedding"], axis=1), 1.0)
        assert g.edge_attrs["length"].shape == (g.n_edges,) and np.all(g.edge_attrs["length"] > 0)
    assert page["methanol_ish"].edge_attrs["length"].tolist() == [1.43, 0.96]


def test_gram_is_symmetric_psd_and_finite(page):
    K = page["K"]
    assert np.all(np.isfinite(K))
    assert np.allclose(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    # off the diagonal, different molecules are less than identical
    assert np.all(K[~np.eye(len(K), dtype=bool)] < 1.0)


def test_value_follows_the_vector(page):
    """Changing one atom's embedding, or one bond's length, changes the kernel; changing an
    attribute that the kernel does not read does not."""
    kernel, with_attributes, graphs = page["kernel"], page["with_attributes"], page["graphs"]
    g = graphs[-1]
    before = kernel([g], graphs[:-1])
    emb = g.node_attrs["embedding"].copy()
    emb[0] = emb[1]
    moved = kernel([with_attributes(g, {"embedding": emb})], graphs[:-1])
    assert np.all(np.isfinite(moved)) and not np.allclose(moved, before)
    length = g.edge_attrs["length"] + 0.05
    assert not np.allclose(kernel([with_attributes(g, edge_attrs={"length": length})], graphs[:-1]), before)
    unread = with_attributes(g, {"descriptors": g.node_attrs["descriptors"] + 1.0})
    np.testing.assert_array_equal(kernel([unread], graphs[:-1]), before)


def test_kernel_on_one_atom_pair_graphs_is_the_product(page):
    """Two one-bond graphs: the node and edge kernels are products of the factors written out,
    and the unnormalized marginalized kernel of two single-edge graphs is its closed form."""
    from graphgram import Graph, MarginalizedGraphKernel

    node_kernel, edge_kernel = page["node_kernel"], page["edge_kernel"]

    def two_atoms(z, charge, emb, length):
        return Graph(2, [(0, 1)], None,
                     {"element": z, "partial_charge": charge, "embedding": emb},
                     {"order": [1.0], "length": [length]})

    e1 = np.array([[1.0, 0.0], [0.6, 0.8]])
    e2 = np.array([[0.8, 0.6], [0.0, 1.0]])
    g1 = two_atoms([6, 8], [-0.05, -0.40], e1, 1.43)
    g2 = two_atoms([6, 8], [0.02, -0.35], e2, 1.36)

    def kv(a, b):
        return (1.0 if a[0] == b[0] else 0.5) * np.exp(-(a[1] - b[1]) ** 2 / 0.02) \
            * np.exp(-np.sum((a[2] - b[2]) ** 2) / 2.0)

    atoms1 = [(6, -0.05, e1[0]), (8, -0.40, e1[1])]
    atoms2 = [(6, 0.02, e2[0]), (8, -0.35, e2[1])]
    V = np.array([[kv(a, b) for b in atoms2] for a in atoms1])
    for i in range(2):
        for j in range(2):
            x = dict(element=atoms1[i][0], partial_charge=atoms1[i][1], embedding=atoms1[i][2])
            y = dict(element=atoms2[j][0], partial_charge=atoms2[j][1], embedding=atoms2[j][2])
            assert np.isclose(node_kernel(x, y), V[i, j])
    ke = np.exp(-(1.43 - 1.36) ** 2 / 0.02)
    assert np.isclose(edge_kernel({"order": 1.0, "length": 1.43}, {"order": 1.0, "length": 1.36}), ke)

    # The product system (D V⁻¹ − W) x = D 1 of the class docstring, written out: each
    # node has degree 1, D = 1 / (1 − q)², W pairs (i, i') with (j, j') when i–j and i'–j'
    # are edges (here: i ≠ j and i' ≠ j').
    q = 0.2
    d = 1.0 / (1.0 - q) ** 2
    n = 4
    W = np.zeros((n, n))
    for i in range(2):
        for ii in range(2):
            W[2 * i + ii, 2 * (1 - i) + (1 - ii)] = ke
    A = np.diag(d / V.ravel()) - W
    x = np.linalg.solve(A, np.full(n, d))
    expected = x.sum()
    raw = MarginalizedGraphKernel(node_kernel, edge_kernel, q=q)
    assert np.isclose(raw([g1], [g2])[0, 0], expected, rtol=1e-8)


def test_negative_cosine_is_refused():
    """The page's warning: a cosine node kernel on vectors at an obtuse angle is refused."""
    from graphgram import Graph, MarginalizedGraphKernel
    from graphgram.microkernels import DotProduct, TensorProduct

    g = Graph(2, [(0, 1)], None, {"embedding": [[1.0, 0.0], [-1.0, 0.5]]})
    k = MarginalizedGraphKernel(TensorProduct(embedding=DotProduct(0.0, sigma_0_bounds="fixed").normalized), q=0.5)
    with pytest.raises(ValueError, match="non-negative"):
        k([g])
