"""graphgram.datasets: TU-format loading checked against the raw files."""

from pathlib import Path

import numpy as np
import pytest
from conftest import dataset_dir as data_dir

from graphgram import datasets
from graphgram.graph import Graph


def raw_ints(path):
    return np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=1)


@pytest.fixture(scope="module")
def mutag_raw():
    d = data_dir("MUTAG")
    return {
        "A": raw_ints(d / "MUTAG_A.txt").reshape(-1, 2),
        "indicator": raw_ints(d / "MUTAG_graph_indicator.txt"),
        "labels": raw_ints(d / "MUTAG_graph_labels.txt"),
        "node_labels": raw_ints(d / "MUTAG_node_labels.txt"),
        "edge_labels": raw_ints(d / "MUTAG_edge_labels.txt"),
    }


@pytest.fixture(scope="module")
def mutag_loaded():
    return datasets.load_tu(data_dir("MUTAG"))


def test_mutag_counts_against_raw_files(mutag_raw, mutag_loaded):
    graphs, y = mutag_loaded
    raw = mutag_raw
    assert len(graphs) == 188 and all(isinstance(g, Graph) for g in graphs)
    n_per_graph = np.bincount(raw["indicator"])[1:]
    assert [g.n_nodes for g in graphs] == n_per_graph.tolist()
    assert sum(g.n_nodes for g in graphs) == 3371
    # each undirected edge appears twice in MUTAG_A.txt
    e_per_graph = np.bincount(raw["indicator"][raw["A"][:, 0] - 1], minlength=189)[1:] // 2
    assert [g.n_edges for g in graphs] == e_per_graph.tolist()
    assert sum(g.n_edges for g in graphs) == 7442 // 2
    assert (graphs[0].n_nodes, graphs[0].n_edges) == (17, 19)


def test_mutag_targets(mutag_raw, mutag_loaded):
    _, y = mutag_loaded
    assert y.dtype == np.int64 and y.shape == (188,)
    np.testing.assert_array_equal(y, mutag_raw["labels"])
    assert (y == 1).sum() == 125 and (y == -1).sum() == 63


def test_mutag_node_and_edge_labels(mutag_raw, mutag_loaded):
    graphs, _ = mutag_loaded
    raw = mutag_raw
    node_labels = np.concatenate([g.node_attrs["label"] for g in graphs])
    np.testing.assert_array_equal(node_labels, raw["node_labels"])
    assert graphs[0].node_attrs["label"].dtype == np.int64
    assert set(node_labels.tolist()) == set(range(7))
    # every edge's label equals the label on its lines of MUTAG_A.txt (both directions)
    offsets = np.concatenate([[0], np.cumsum([g.n_nodes for g in graphs])])
    lookup = {}
    for (a, b), lab in zip(raw["A"].tolist(), raw["edge_labels"].tolist()):
        lookup[(a - 1, b - 1)] = lab
    for gi in (0, 57, 187):
        g = graphs[gi]
        for (u, v), lab in zip(g.edges.tolist(), g.edge_attrs["label"].tolist()):
            assert u <= v
            gu, gv = u + offsets[gi], v + offsets[gi]
            assert lookup[(gu, gv)] == lookup[(gv, gu)] == lab
    assert set(np.concatenate([g.edge_attrs["label"] for g in graphs]).tolist()) == {0, 1, 2, 3}
    assert all(np.all(g.weights == 1.0) for g in graphs)


def test_load_mutag_bundled_matches_shared_copy(mutag_loaded):
    graphs, y = datasets.load_mutag()
    ref, yref = mutag_loaded
    np.testing.assert_array_equal(y, yref)
    assert len(graphs) == 188
    for a, b in zip(graphs, ref):
        assert a.n_nodes == b.n_nodes
        np.testing.assert_array_equal(a.edges, b.edges)
        np.testing.assert_array_equal(a.node_attrs["label"], b.node_attrs["label"])
        np.testing.assert_array_equal(a.edge_attrs["label"], b.edge_attrs["label"])
    readme = Path(datasets.__file__).parent / "data" / "MUTAG" / "README.txt"
    assert readme.is_file()


def test_loaded_graphs_are_valid_and_read_only(mutag_loaded):
    graphs, _ = mutag_loaded
    for i, g in enumerate(graphs):
        g.validate(i)
    assert not graphs[3].edges.flags.writeable
    assert not graphs[3].node_attrs["label"].flags.writeable


def test_enzymes_attributes_width_18_and_isolated_nodes():
    d = data_dir("ENZYMES")
    graphs, y = datasets.load_tu(d)
    assert len(graphs) == 600
    assert sorted(set(y.tolist())) == [1, 2, 3, 4, 5, 6]
    g = graphs[0]
    att = g.node_attrs["attributes"]
    assert att.shape == (g.n_nodes, 18) and att.dtype == np.float64
    first = np.array([float(t) for t in (d / "ENZYMES_node_attributes.txt").read_text().splitlines()[0].split(",")])
    np.testing.assert_array_equal(att[0], first)
    assert att[0, 0] == 11.0 and att[0, 1] == 15.887014
    # isolated nodes: ids that never appear in ENZYMES_A.txt
    A = raw_ints(d / "ENZYMES_A.txt").reshape(-1, 2)
    ind = raw_ints(d / "ENZYMES_graph_indicator.txt")
    assert sum(h.n_nodes for h in graphs) == ind.size == 19580
    isolated = np.setdiff1d(np.arange(1, ind.size + 1), A.ravel())
    assert isolated.size > 0
    node = int(isolated[0])  # 1-based global id
    gi = int(ind[node - 1]) - 1
    local = node - 1 - int(np.searchsorted(ind, gi + 1))
    h = graphs[gi]
    assert 0 <= local < h.n_nodes
    assert h.degrees()[local] == 0.0
    assert local not in set(h.edges.ravel().tolist())


def test_proteins_attribute_vector_of_width_1():
    graphs, y = datasets.load_tu(data_dir("PROTEINS"))
    assert len(graphs) == 1113
    assert graphs[0].node_attrs["attributes"].shape == (graphs[0].n_nodes, 1)
    assert graphs[0].node_attrs["attributes"][0, 0] == 23.0
    assert set(y.tolist()) == {1, 2}


def test_nci1_loads():
    # Its speed is measured in benchmarks/bench_datasets.py, not asserted here.
    graphs, y = datasets.load_tu(data_dir("NCI1"), name="NCI1")
    assert len(graphs) == 4110 and y.shape == (4110,)
    assert sum(g.n_nodes for g in graphs) == 122747
    assert sum(g.n_edges for g in graphs) == 265506 // 2
    assert set(y.tolist()) == {0, 1}
    assert "label" in graphs[0].node_attrs and not graphs[0].edge_attrs


# --- small synthetic data sets in tmp_path --------------------------------------


def write_tu(folder, name, files):
    folder.mkdir(parents=True, exist_ok=True)
    for suffix, text in files.items():
        (folder / ("%s_%s.txt" % (name, suffix))).write_text(text)
    return folder


TOY = {
    # graph 1: nodes 1-3 (path 1-2-3), graph 2: nodes 4-5, node 5 isolated; graph 3: node 6 alone
    "A": "1, 2\n2, 1\n2, 3\n3, 2\n",
    "graph_indicator": "1\n1\n1\n2\n2\n3\n",
    "graph_labels": "0\n1\n0\n",
    "node_labels": "5\n6\n5\n7\n7\n1\n",
    "edge_labels": "1\n1\n2\n2\n",
}


def test_toy_dataset_with_isolated_nodes_and_edgeless_graphs(tmp_path):
    d = write_tu(tmp_path / "TOY", "TOY", TOY)
    graphs, y = datasets.load_tu(d)
    assert [g.n_nodes for g in graphs] == [3, 2, 1]
    assert [g.n_edges for g in graphs] == [2, 0, 0]
    assert graphs[0].edges.tolist() == [[0, 1], [1, 2]]
    assert graphs[0].edge_attrs["label"].tolist() == [1, 2]
    assert graphs[1].node_attrs["label"].tolist() == [7, 7]
    assert y.tolist() == [0, 1, 0]


def test_regression_targets_and_edge_attributes(tmp_path):
    files = dict(TOY)
    del files["graph_labels"]
    files["graph_attributes"] = "0.5\n-1.25\n3\n"
    files["edge_attributes"] = "1.0, 2.0\n1.0, 2.0\n3.0, 4.0\n3.0, 4.0\n"
    d = write_tu(tmp_path / "R", "R", files)
    graphs, y = datasets.load_tu(d)
    assert y.dtype == np.float64 and y.tolist() == [0.5, -1.25, 3.0]
    assert graphs[0].edge_attrs["attributes"].tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_load_tu_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        datasets.load_tu(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no \\*_A.txt file"):
        datasets.load_tu(empty)
    two = write_tu(tmp_path / "two", "ONE", TOY)
    write_tu(two, "TWO", TOY)
    with pytest.raises(ValueError, match="several data sets.*ONE, TWO.*pass name="):
        datasets.load_tu(two)
    assert len(datasets.load_tu(two, name="TWO")[0]) == 3
    bad = dict(TOY, A="1, 4\n4, 1\n", edge_labels="1\n1\n")
    with pytest.raises(ValueError, match="line 1 joins nodes of different graphs"):
        datasets.load_tu(write_tu(tmp_path / "bad", "BAD", bad))
    bad = dict(TOY, edge_labels="1\n2\n2\n2\n")
    with pytest.raises(ValueError, match="two directions of edge"):
        datasets.load_tu(write_tu(tmp_path / "bad2", "BAD2", bad))
    bad = dict(TOY, node_labels="1\n2\n")
    with pytest.raises(ValueError, match="BAD3_node_labels.txt has 2 lines, expected 6 lines"):
        datasets.load_tu(write_tu(tmp_path / "bad3", "BAD3", bad))
