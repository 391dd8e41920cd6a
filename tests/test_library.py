"""GraphLibrary (issue #51 item 1): one packed store of many graphs, saved as
.npy files and memory-mapped back; graphs, slices, selections, pickles and
shards equal to what went in, and bad stores refused with the file named.
That kernels compute the same bits from a library as from a list is tested
for every kernel in test_call_independence.py."""

import csv
import json
import os
import pickle

import numpy as np
import pytest

import graphgram
from graphgram import Graph, GraphLibrary, WeisfeilerLehmanKernel, molecular_kernel, molecules

from conftest import dataset_dir


def graphs_equal(a, b):
    assert a.n_nodes == b.n_nodes
    np.testing.assert_array_equal(a.edges, b.edges)
    np.testing.assert_array_equal(a.weights, b.weights)
    for mine, theirs in ((a.node_attrs, b.node_attrs), (a.edge_attrs, b.edge_attrs)):
        assert sorted(mine) == sorted(theirs)
        for k in mine:
            assert mine[k].dtype == theirs[k].dtype or mine[k].size == 0, k  # [] has no type
            np.testing.assert_array_equal(mine[k], theirs[k])


@pytest.fixture(scope="module")
def mixed():
    """Graphs with string, int, bool, float and vector attributes, an empty graph and one without edges."""
    rng = np.random.default_rng(51)
    gs = []
    for i in range(40):
        n = int(rng.integers(0, 9)) if i else 0
        edges = [(a, b) for a in range(n) for b in range(a, n) if rng.random() < 0.3]
        m = len(edges)
        gs.append(Graph(n, np.array(edges, dtype=np.int64).reshape(-1, 2), rng.uniform(0.1, 2, m),
                        node_attrs={"s": ["L%d" % v for v in rng.integers(0, 5, n)], "i": rng.integers(-3, 3, n),
                                    "x": rng.normal(size=(n, 3)), "b": rng.random(n) < 0.5},
                        edge_attrs={"order": rng.integers(1, 4, m).astype(float)}))
    return gs


def test_from_graphs_round_trips(mixed, tmp_path):
    lib = GraphLibrary.from_graphs(mixed, ids=["g%d" % i for i in range(len(mixed))])
    assert len(lib) == len(mixed) and lib.node_attributes == {"s": "str", "i": "int", "x": "float[3]", "b": "bool"}
    np.testing.assert_array_equal(lib.n_nodes, [g.n_nodes for g in mixed])
    lib.save(tmp_path / "lib")
    for loaded in (GraphLibrary.load(tmp_path / "lib"), GraphLibrary.load(tmp_path / "lib", mmap=False)):
        assert loaded.ids.tolist() == ["g%d" % i for i in range(len(mixed))]
        for g, h in zip(mixed, loaded):
            graphs_equal(h, g)
            assert not h.edges.flags.writeable
    assert isinstance(GraphLibrary.load(tmp_path / "lib")._edges, np.memmap)
    # Whole numbers are stored narrow (int8 here) and read back as the graphs hold them;
    # a -0.0 keeps its sign (the float is kept).
    assert lib._node["i"][0].dtype == np.int8 and lib._edge["order"][0].dtype == np.int8
    signed = GraphLibrary.from_graphs([Graph(2, node_attrs={"f": [-0.0, 1.0]})])
    assert np.signbit(signed[0].node_attrs["f"][0]) and signed[0].node_attrs["f"].dtype == np.float64


def test_slices_selections_and_shards(mixed, tmp_path):
    lib = GraphLibrary.from_graphs(mixed, ids=[str(i) for i in range(len(mixed))])
    lib.save(tmp_path / "lib")
    for lib in (lib, GraphLibrary.load(tmp_path / "lib")):
        view = lib[5:17]
        assert len(view) == 12 and view._edges is lib._edges  # a view: the same arrays
        for k, g in enumerate(view):
            graphs_equal(g, mixed[5 + k])
        sel = np.array([30, 2, 2, 0, 39])
        for index in (sel, sel.tolist(), np.isin(np.arange(len(mixed)), sel)):
            picked = lib[index]
            want = sorted(set(sel)) if isinstance(index, np.ndarray) and index.dtype == bool else sel
            assert picked.ids.tolist() == [str(i) for i in want]
            for g, i in zip(picked, want):
                graphs_equal(g, mixed[i])
        graphs_equal(lib[-1], mixed[-1])
        graphs_equal(lib[5:17][::3][1], mixed[8])
        shards = lib.shards(3)
        assert [len(s) for s in shards] == [13, 14, 13]
        assert np.concatenate([s.ids for s in shards]).tolist() == lib.ids.tolist()
    with pytest.raises(IndexError, match="out of range for a library of 40"):
        lib[40]
    with pytest.raises(TypeError, match="indexed by an int"):
        lib["a"]
    with pytest.raises(TypeError, match="GraphLibrary.from_graphs"):
        GraphLibrary()


def test_pickles(mixed, tmp_path):
    lib = GraphLibrary.from_graphs(mixed)
    lib.save(tmp_path / "lib")
    loaded = GraphLibrary.load(tmp_path / "lib")
    # A loaded library's view pickles as its folder and range (a Dask worker maps the files).
    blob = pickle.dumps(loaded[10:30])
    assert len(blob) < 400
    for g, h in zip(pickle.loads(blob), mixed[10:30]):
        graphs_equal(g, h)
    # One built in memory, or a selection, pickles its arrays.
    for lib_ in (lib[3:9], loaded[[4, 1]]):
        back = pickle.loads(pickle.dumps(lib_))
        assert back.path is None or back.path == loaded.path
        for g, h in zip(back, lib_):
            graphs_equal(g, h)


def test_kernels_take_a_library(mixed):
    lib = GraphLibrary.from_graphs(mixed[1:])
    k = WeisfeilerLehmanKernel(n_iter=2, node_label="s")
    np.testing.assert_array_equal(k(lib), k(mixed[1:]))
    with pytest.raises(ValueError, match=r"X \(a GraphLibrary of 39 graphs\) has no node attribute 'label'"):
        WeisfeilerLehmanKernel(node_label="label")(lib)
    with pytest.raises(ValueError, match="X is empty"):
        k(lib[3:3])


def test_from_graphs_refuses_mismatched_attributes():
    a = Graph(2, [(0, 1)], node_attrs={"s": ["C", "O"]})
    with pytest.raises(ValueError, match=r"graphs\[1\] has no node attribute 's'"):
        GraphLibrary.from_graphs([a, Graph(1, node_attrs={"t": [1]})])
    with pytest.raises(ValueError, match=r"graphs\[1\]: node attribute 's' holds"):
        GraphLibrary.from_graphs([a, Graph(1, node_attrs={"s": [1]})])
    with pytest.raises(ValueError, match=r"graphs\[1\] has node attribute 'u' that graphs\[0\] lacks"):
        GraphLibrary.from_graphs([a, Graph(1, node_attrs={"s": ["N"], "u": [1]})])
    with pytest.raises(ValueError, match=r"graphs\[1\] has node attribute 'u' that graphs\[0\] lacks"):
        GraphLibrary.from_graphs([Graph(1), Graph(1, node_attrs={"u": [1]})])  # the first has none at all
    with pytest.raises(ValueError, match="ids has 1 entries for 2 graphs"):
        GraphLibrary.from_graphs([a, a], ids=["x"])


@pytest.mark.parametrize("damage, message", [
    (lambda d: os.remove(d / "library.json"), "holds no graphgram library"),
    (lambda d: (d / "library.json").write_text(json.dumps({"format": "graphgram.GraphLibrary", "version": 99})),
     "not a version-1 graphgram library"),
    (lambda d: np.save(d / "edges.npy", np.load(d / "edges.npy") + 50), "graph 0 has an edge out of its node range"),
    (lambda d: np.save(d / "weights.npy", -np.load(d / "weights.npy")), "negative or non-finite weight"),
    (lambda d: np.save(d / "edges.npy", np.load(d / "edges.npy")[[0, 0, 2, 3, 4, 5]]), "an edge is listed twice"),
    (lambda d: np.save(d / "node_2.npy", np.full_like(np.load(d / "node_2.npy"), np.nan)),
     "node attribute 'x' contains NaN"),
    (lambda d: np.save(d / "node_0.npy", np.load(d / "node_0.npy") + 100), "string codes out of its vocabulary"),
    (lambda d: np.save(d / "node_ptr.npy", np.load(d / "node_ptr.npy")[::-1].copy()), "node_ptr.npy must hold"),
    (lambda d: (d / "ids.npy").write_bytes(b"junk"), "cannot read ids.npy"),
])
def test_load_refuses_a_damaged_store(tmp_path, damage, message):
    gs = [Graph(3, [(0, 1), (1, 2), (0, 2)], [1.0, 2.0, 0.5],
                node_attrs={"s": ["C", "O", "N"], "i": [1, 2, 3], "x": [0.1, 0.2, 0.3]})] * 2
    GraphLibrary.from_graphs(gs, ids=["a", "b"]).save(tmp_path / "lib")
    damage(tmp_path / "lib")
    with pytest.raises(ValueError, match=message):
        GraphLibrary.load(tmp_path / "lib")


def test_from_smiles(tmp_path):
    pytest.importorskip("rdkit")
    rows = list(csv.DictReader(open(dataset_dir("ESOL") / "delaney-processed.csv")))[:120]
    smiles = [r["smiles"] for r in rows]
    for jobs in (1, 2):
        lib = GraphLibrary.from_smiles(smiles, n_jobs=jobs, verbose=False)
        assert lib.ids.tolist() == smiles
        for g, s in zip(lib[::7], smiles[::7]):
            graphs_equal(g, molecules.from_smiles(s))
    k = molecular_kernel(verbose=False)
    want = k([molecules.from_smiles(s) for s in smiles[:25]])
    np.testing.assert_array_equal(k(lib[:25]), want)
    bad = smiles[:3] + ["C1CC", "not a smiles"] + smiles[3:6]
    with pytest.raises(ValueError, match=r"smiles\[3\]: RDKit could not parse the SMILES string 'C1CC'"):
        GraphLibrary.from_smiles(bad, verbose=False)
    kept = GraphLibrary.from_smiles(bad, ids=list("abcdefgh"), errors="skip", n_jobs=2, verbose=False)
    assert kept.ids.tolist() == list("abcfgh")
    with pytest.raises(TypeError, match=r"smiles\[1\] is not a string"):
        GraphLibrary.from_smiles(["C", 1])
    with pytest.raises(ValueError, match="errors must be"):
        GraphLibrary.from_smiles(["C"], errors="ignore")


def test_gpytorch_kernel_takes_a_library():
    torch = pytest.importorskip("torch")
    from graphgram.gpytorch import GPyTorchGraphKernel
    smiles = ["CCO", "CCN", "CCC", "c1ccccc1", "CC(=O)O", "CCCl", "CCOC", "c1ccncc1"]
    gs = [molecules.from_smiles(s) for s in smiles]
    lib = GraphLibrary.from_smiles(smiles, verbose=False)
    x = torch.arange(8, dtype=torch.float64)[:, None]
    with torch.no_grad():
        a = GPyTorchGraphKernel(molecular_kernel(verbose=False), lib)(x, x[[2, 5]]).to_dense().numpy()
        b = GPyTorchGraphKernel(molecular_kernel(verbose=False), gs)(x, x[[2, 5]]).to_dense().numpy()
    np.testing.assert_array_equal(a, b)


def test_exported():
    assert graphgram.GraphLibrary is GraphLibrary and "GraphLibrary" in graphgram.__all__
