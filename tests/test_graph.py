"""graphgram.graph.Graph: construction, validation, conversions."""

import pickle

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from graphgram.graph import Graph


def triangle_with_tail():
    # 0-1-2 triangle, 2-3 tail, self-loop on 3, node 4 isolated
    return Graph(
        5, [(0, 1), (1, 2), (0, 2), (2, 3), (3, 3)], [1.0, 2.0, 0.5, 1.0, 3.0],
        node_attrs={"label": [1, 2, 1, 3, 0], "x": np.arange(10.0).reshape(5, 2)},
        edge_attrs={"order": [1, 1, 2, 1, 1]},
    )


# --- construction -------------------------------------------------------------


def test_basic_fields_and_dtypes():
    g = triangle_with_tail()
    assert g.n_nodes == 5 and g.n_edges == 5 and len(g) == 5
    assert g.edges.dtype == np.int64 and g.edges.shape == (5, 2)
    assert g.weights.dtype == np.float64
    np.testing.assert_array_equal(g.weights, [1.0, 2.0, 0.5, 1.0, 3.0])
    assert g.node_attrs["label"].dtype == np.int64
    assert g.node_attrs["x"].shape == (5, 2) and g.node_attrs["x"].dtype == np.float64
    assert g.edge_attrs["order"].tolist() == [1, 1, 2, 1, 1]


def test_defaults_no_edges_unit_weights():
    g = Graph(3)
    assert g.n_edges == 0 and g.edges.shape == (0, 2) and g.weights.shape == (0,)
    h = Graph(2, [(0, 1)])
    np.testing.assert_array_equal(h.weights, [1.0])


def test_arrays_are_copied_and_read_only():
    edges = np.array([[0, 1]])
    lab = np.array([4, 5])
    g = Graph(2, edges, node_attrs={"label": lab})
    edges[0, 1] = 0
    lab[0] = 9
    assert g.edges.tolist() == [[0, 1]] and g.node_attrs["label"].tolist() == [4, 5]
    with pytest.raises(ValueError):
        g.weights[0] = 2.0
    with pytest.raises(TypeError):
        g.node_attrs["new"] = np.zeros(2)


def test_bool_float_attrs_kept():
    g = Graph(3, node_attrs={"aromatic": [True, False, True], "charge": [0.1, -0.2, 0]})
    assert g.node_attrs["aromatic"].dtype == np.bool_
    assert g.node_attrs["charge"].dtype == np.float64
    assert g.node_attrs["charge"].tolist() == [0.1, -0.2, 0.0]


def test_string_labels_kept_by_value():
    g1 = Graph(3, node_attrs={"sym": ["C", "zz_new_label_1", "C"]})
    g2 = Graph(2, node_attrs={"sym": np.array(["zz_new_label_1", "C"])})
    a = g1.node_attrs["sym"]
    b = g2.node_attrs["sym"]
    assert a.dtype.kind == "U" and b.dtype.kind == "U"
    assert a.tolist() == ["C", "zz_new_label_1", "C"]
    assert b.tolist() == ["zz_new_label_1", "C"]
    assert g1.to_networkx().nodes[1]["sym"] == "zz_new_label_1"


def test_mixed_strings_and_numbers_rejected():
    with pytest.raises(TypeError, match="'sym' mixes strings"):
        Graph(2, node_attrs={"sym": ["C", 1]})


def test_repr():
    g = triangle_with_tail()
    assert repr(g) == ("Graph(n_nodes=5, n_edges=5, weighted, node_attrs={label: int64, x: float64[2]}, "
                       "edge_attrs={order: int64})")
    assert repr(Graph(2, [(0, 1)])) == "Graph(n_nodes=2, n_edges=1)"


def test_pickle_round_trip():
    g = triangle_with_tail()
    h = pickle.loads(pickle.dumps(g))
    assert h.n_nodes == 5
    np.testing.assert_array_equal(h.edges, g.edges)
    np.testing.assert_array_equal(h.node_attrs["x"], g.node_attrs["x"])
    assert not h.edges.flags.writeable


# --- validation ---------------------------------------------------------------


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(n_nodes=-1), ValueError, "n_nodes must be in 0"),
    (dict(n_nodes=2.0), TypeError, "n_nodes must be an integer"),
    (dict(n_nodes=2, edges=[(0, 2)]), ValueError, r"edge 0 \(0, 2\) refers to a node outside 0..1"),
    (dict(n_nodes=2, edges=[(0, -1)]), ValueError, "outside"),
    (dict(n_nodes=2, edges=[(0, 1, 1)]), ValueError, r"edges must have shape \(m, 2\)"),
    (dict(n_nodes=2, edges=[(0.0, 1.0)]), TypeError, "edges must be integer"),
    (dict(n_nodes=2, edges=[(0, 1)], weights=[-1.0]), ValueError, r"weights\[0\] = -1.0 is negative"),
    (dict(n_nodes=2, edges=[(0, 1)], weights=[np.nan]), ValueError, r"weights\[0\] = nan is not finite"),
    (dict(n_nodes=2, edges=[(0, 1)], weights=[np.inf]), ValueError, "not finite"),
    (dict(n_nodes=2, edges=[(0, 1)], weights=[1.0, 2.0]), ValueError, r"weights has shape \(2,\)"),
    (dict(n_nodes=3, edges=[(0, 1), (1, 0)]), ValueError, "edges 0 and 1 both join nodes 0 and 1"),
    (dict(n_nodes=2, node_attrs={"a": [1, 2, 3]}), ValueError, "node attribute 'a' has 3 values but the graph has 2 nodes"),
    (dict(n_nodes=2, edges=[(0, 1)], edge_attrs={"b": [1, 2]}), ValueError, "edge attribute 'b' has 2 values but the graph has 1 edges"),
    (dict(n_nodes=2, node_attrs={"a": [1.0, np.nan]}), ValueError, r"node attribute 'a' contains NaN or infinity \(node 1\)"),
    (dict(n_nodes=2, node_attrs={"v": [[1.0, 2.0], [np.inf, 0.0]]}), ValueError, "'v' contains NaN or infinity"),
    (dict(n_nodes=2, node_attrs={"v": [[1.0, 2.0], [3.0]]}), ValueError, "'v' has vectors of different lengths"),
    (dict(n_nodes=2, node_attrs={"v": np.zeros((2, 2, 2))}), ValueError, r"'v' has shape \(2, 2, 2\)"),
    (dict(n_nodes=2, node_attrs={"a": 3}), ValueError, "must give one value per node"),
    (dict(n_nodes=2, node_attrs={"a": [1 + 2j, 0]}), TypeError, "dtype complex128"),
    (dict(n_nodes=2, node_attrs={"a": [None, 1]}), TypeError, "value of type NoneType"),
    (dict(n_nodes=2, node_attrs={"a": [2**60, 1]}), ValueError, "2\\*\\*53"),
    (dict(n_nodes=2, node_attrs=[1, 2]), TypeError, "node_attrs must be a dict"),
])
def test_constructor_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Graph(**kwargs)


def test_validate_names_index_after_mutation():
    g = Graph(3, [(0, 1), (1, 2)], [1.0, 2.0], node_attrs={"c": [0.0, 1.0, 2.0]})
    assert g.validate(4) is g
    g.weights.flags.writeable = True
    g.weights[1] = -3.0
    with pytest.raises(ValueError, match=r"^X\[4\]: weights\[1\] = -3.0 is negative"):
        g.validate(4)
    with pytest.raises(ValueError, match=r"^Y\[0\]: weights"):
        g.validate(0, name="Y")
    with pytest.raises(ValueError, match=r"^Graph: weights"):
        g.validate()
    g.weights[1] = 1.0
    c = g.node_attrs["c"]
    c.flags.writeable = True
    c[2] = np.nan
    with pytest.raises(ValueError, match=r"X\[7\]: node attribute 'c' contains NaN or infinity \(node 2\)"):
        g.validate(7)


# --- derived data ---------------------------------------------------------------


def test_degrees_and_adjacency_count_self_loop_once():
    g = triangle_with_tail()
    np.testing.assert_allclose(g.degrees(), [1.5, 3.0, 3.5, 4.0, 0.0])
    A = g.adjacency()
    assert A[3, 3] == 3.0 and A[0, 1] == A[1, 0] == 1.0
    np.testing.assert_allclose(A.sum(axis=1), g.degrees())
    np.testing.assert_allclose(g.adjacency(sparse=True).toarray(), A)


# --- from_adjacency ---------------------------------------------------------------


def test_from_adjacency_dense_order_and_weights():
    A = np.array([[0, 2, 0, 1], [2, 5, 3, 0], [0, 3, 0, 0], [1, 0, 0, 0]], dtype=float)
    g = Graph.from_adjacency(A)
    assert g.edges.tolist() == [[0, 1], [0, 3], [1, 1], [1, 2]]
    assert g.weights.tolist() == [2.0, 1.0, 5.0, 3.0]
    np.testing.assert_array_equal(g.adjacency(), A)


def test_from_adjacency_sparse_same_as_dense():
    A = np.array([[0, 2, 0, 1], [2, 5, 3, 0], [0, 3, 0, 0], [1, 0, 0, 0]], dtype=float)
    g = Graph.from_adjacency(sp.csr_matrix(A))
    assert g.edges.tolist() == [[0, 1], [0, 3], [1, 1], [1, 2]]
    assert g.weights.tolist() == [2.0, 1.0, 5.0, 3.0]
    assert Graph.from_adjacency(sp.coo_array(A)).edges.tolist() == g.edges.tolist()


def test_from_adjacency_edge_attrs_matrix_and_aligned():
    A = np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])
    bond = np.array([[0, 2, 1], [2, 0, 0], [1, 0, 0]])
    vec = np.zeros((3, 3, 2))
    vec[0, 1] = vec[1, 0] = [1, 2]
    vec[0, 2] = vec[2, 0] = [3, 4]
    g = Graph.from_adjacency(A, node_attrs={"label": ["C", "O", "N"]},
                             edge_attrs={"bond": bond, "vec": vec, "sbond": sp.csr_matrix(bond),
                                         "aligned": [7, 8]})
    assert g.edges.tolist() == [[0, 1], [0, 2]]
    assert g.edge_attrs["bond"].tolist() == [2, 1]
    assert g.edge_attrs["sbond"].tolist() == [2, 1]
    assert g.edge_attrs["vec"].tolist() == [[1, 2], [3, 4]]
    assert g.edge_attrs["aligned"].tolist() == [7, 8]


def test_from_adjacency_errors():
    with pytest.raises(ValueError, match=r"A is not symmetric: A\[0, 1\] = 1.0 but A\[1, 0\] = 0.0"):
        Graph.from_adjacency([[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="A is not symmetric"):
        Graph.from_adjacency(sp.csr_matrix(np.array([[0, 1], [0, 0]])))
    with pytest.raises(ValueError, match="square"):
        Graph.from_adjacency(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="negative"):
        Graph.from_adjacency([[0, -1], [-1, 0]])
    with pytest.raises(ValueError, match="edge attribute 'bond' is not symmetric"):
        Graph.from_adjacency([[0, 1], [1, 0]], edge_attrs={"bond": [[0, 1], [2, 0]]})
    with pytest.raises(ValueError, match="edge attribute 'x' has 3 values but the graph has 1 edges"):
        Graph.from_adjacency([[0, 1], [1, 0]], edge_attrs={"x": [1, 2, 3]})


# --- networkx -----------------------------------------------------------------------


def test_from_networkx_keeps_attributes_and_order():
    h = nx.Graph()
    h.add_node("c", label="C", charge=0.5, pos=(0.0, 1.0))
    h.add_node("a", label="O", charge=-1.0, pos=(1.0, 1.0))
    h.add_node("b", label="C", charge=0.0, pos=(2.0, 0.0))
    h.add_edge("c", "a", order=2, w=0.5)
    h.add_edge("a", "b", order=1, w=2.0)
    h.add_edge("b", "b", order=1, w=1.0)
    g = Graph.from_networkx(h, weight="w")
    assert g.n_nodes == 3 and g.n_edges == 3
    assert g.edges.tolist() == [[0, 1], [1, 2], [2, 2]]
    assert g.weights.tolist() == [0.5, 2.0, 1.0]
    lab = g.node_attrs["label"]
    assert lab[0] == lab[2] != lab[1]
    assert g.node_attrs["charge"].tolist() == [0.5, -1.0, 0.0]
    assert g.node_attrs["pos"].shape == (3, 2)
    assert g.edge_attrs["order"].tolist() == [2, 1, 1]
    assert g.edge_attrs["w"].tolist() == [0.5, 2.0, 1.0]  # weight kept as an attribute too
    assert Graph.from_networkx(h).weights.tolist() == [1.0, 1.0, 1.0]


def test_from_networkx_partial_attribute_is_an_error_unless_selected():
    h = nx.path_graph(3)
    h.nodes[0]["label"] = 1
    h.nodes[1]["label"] = 2
    h.nodes[0]["x"] = 1.0
    h.nodes[1]["x"] = 1.0
    h.nodes[2]["x"] = 1.0
    with pytest.raises(ValueError, match=r"node attribute 'label' is present on 2 of 3 nodes \(missing e.g. on node 2\)"):
        Graph.from_networkx(h)
    g = Graph.from_networkx(h, node_attrs=["x"])
    assert list(g.node_attrs) == ["x"]
    with pytest.raises(ValueError, match="node 2 has no attribute 'label'"):
        Graph.from_networkx(h, node_attrs=["label"])
    with pytest.raises(ValueError, match=r"edge \(0, 1\) has no weight attribute 'w'"):
        Graph.from_networkx(h, weight="w", node_attrs=[])


def test_from_networkx_rejects_directed_and_multigraphs():
    with pytest.raises(ValueError, match="directed.*to_undirected"):
        Graph.from_networkx(nx.DiGraph([(0, 1)]))
    with pytest.raises(ValueError, match="multigraph"):
        Graph.from_networkx(nx.MultiGraph([(0, 1)]))
    with pytest.raises(TypeError, match="expected a networkx.Graph"):
        Graph.from_networkx([(0, 1)])


def test_networkx_round_trip():
    g = triangle_with_tail()
    h = g.to_networkx()
    assert h.number_of_nodes() == 5 and h.number_of_edges() == 5
    assert h.nodes[3]["label"] == 3 and isinstance(h.nodes[3]["label"], int)
    assert h.edges[3, 3]["weight"] == 3.0
    assert h.edges[0, 2]["order"] == 2
    g2 = Graph.from_networkx(h, weight="weight", edge_attrs=["order"])
    # networkx may enumerate edges in another order: compare edge by edge
    def table(gr):
        return {tuple(sorted(e)): (w, o) for e, w, o in
                zip(gr.edges.tolist(), gr.weights.tolist(), gr.edge_attrs["order"].tolist())}
    assert table(g2) == table(g)
    np.testing.assert_array_equal(g2.adjacency(), g.adjacency())
    np.testing.assert_array_equal(g2.node_attrs["x"], g.node_attrs["x"])
    np.testing.assert_array_equal(g2.node_attrs["label"], g.node_attrs["label"])
    assert nx.number_of_isolates(h) == 1


def test_to_networkx_weight_name_clash():
    g = Graph(2, [(0, 1)], [2.0], edge_attrs={"weight": [5.0]})
    with pytest.raises(ValueError, match="differs from the edge weights"):
        g.to_networkx()
    assert g.to_networkx(weight="w").edges[0, 1] == {"weight": 5.0, "w": 2.0}


@pytest.mark.parametrize("field", ["weights", "edges", "node attribute", "edge attribute", "n_nodes"])
def test_validate_all_names_the_first_bad_graph(field):
    """The vectorized check of a list finds what validate() finds, and reports it as validate() does."""
    graphs = [Graph(3, [(0, 1), (1, 2)], [1.0, 2.0], node_attrs={"x": [0.5, 1.0, 2.0]},
                    edge_attrs={"b": [1, 2]}) for _ in range(6)]
    Graph.validate_all(graphs)
    g = graphs[4]
    if field == "n_nodes":
        g._n_nodes = 2
        match = r"X\[4\]: edge 1 \(1, 2\) refers to a node outside 0..1"
    else:
        arr = {"weights": g._weights, "edges": g._edges, "node attribute": g._node_attrs["x"],
               "edge attribute": g._edge_attrs["b"]}[field]
        arr.flags.writeable = True
        if field == "edges":
            arr[1, 1] = 7
            match = r"X\[4\]: edge 1 \(1, 7\) refers to a node outside"
        elif field == "edge attribute":
            arr[0] = 2**60
            match = r"X\[4\]: edge attribute 'b' has an integer of magnitude 2\*\*53"
        else:
            arr[1] = np.nan
            match = r"X\[4\]: (weights\[1\] = nan is not finite|node attribute 'x' contains NaN)"
    with pytest.raises(ValueError, match=match):
        Graph.validate_all(graphs)
