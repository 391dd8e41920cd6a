"""graphgram._packing.pack: layout, descriptor contents, validation messages."""

import ctypes
import json
import time
from pathlib import Path

import numpy as np
import pytest

from graphgram import datasets
from graphgram._packing import pack
from graphgram.graph import Graph
from graphgram.microkernels import Constant, KroneckerDelta, SquareExponential, TensorProduct

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def read_back(address, count, dtype):
    """Copy ``count`` items of ``dtype`` from a raw address, as the Go core reads them."""
    if count == 0:
        return np.zeros(0, dtype=dtype)
    ctype = ctypes.c_int64 if dtype == np.int64 else ctypes.c_double
    buf = (ctype * count).from_address(int(address))
    return np.frombuffer(buf, dtype=dtype).copy()


def two_graphs():
    g0 = Graph(3, [(0, 1), (1, 2), (2, 2)], [1.0, 2.0, 0.5],
               node_attrs={"label": [1, 2, 1], "charge": [0.1, 0.2, 0.3], "vec": np.arange(6.0).reshape(3, 2)},
               edge_attrs={"label": [1, 2, 1], "length": [1.5, 1.0, 2.0]})
    g1 = Graph(2, [(0, 1)], [3.0],
               node_attrs={"label": [7, 8], "charge": [-1.0, 1.0], "vec": [[9.0, 8.0], [7.0, 6.0]]},
               edge_attrs={"label": [3], "length": [0.25]})
    return [g0, g1]


NODE = TensorProduct(vec=SquareExponential(1.0), label=KroneckerDelta(0.5))
EDGE = TensorProduct(label=KroneckerDelta(0.5))


def test_layout_and_arrays():
    p = pack(two_graphs(), node_kernel=NODE, edge_kernel=EDGE, edge_extra=("length",))
    assert p.node_layout == {"vec": (0, 2), "label": (2, 1)}
    assert p.edge_layout == {"label": (0, 1), "length": (1, 1)}
    assert p.n_nodes.tolist() == [3, 2] and p.n_edges.tolist() == [3, 1]
    assert p.node_offsets.tolist() == [0, 3, 5] and p.edge_offsets.tolist() == [0, 3, 4]
    assert p.node_offsets.dtype == np.int64
    np.testing.assert_array_equal(p.node_feat, [[0, 1, 1], [2, 3, 2], [4, 5, 1], [9, 8, 7], [7, 6, 8]])
    np.testing.assert_array_equal(p.edge_feat, [[1, 1.5], [2, 1.0], [1, 2.0], [3, 0.25]])
    assert len(p) == 2 and p.n_graphs == 2
    assert json.loads(p.node_spec) == NODE.to_spec(p.node_layout)
    assert json.loads(p.edge_spec)["terms"][0] == {"kind": "kronecker_delta", "h": 0.5, "col": 0, "width": 1}


def test_descriptor_contents_read_back():
    p = pack(two_graphs(), node_kernel=NODE, edge_kernel=EDGE, edge_extra=("length",))
    d = p.desc
    assert d.dtype == np.int64 and d.shape == (9,)
    assert d[0] == 2
    np.testing.assert_array_equal(read_back(d[1], 3, np.int64), [0, 3, 5])
    np.testing.assert_array_equal(read_back(d[2], 3, np.int64), [0, 3, 4])
    np.testing.assert_array_equal(read_back(d[3], 8, np.int64), [0, 1, 1, 2, 2, 2, 0, 1])
    np.testing.assert_array_equal(read_back(d[4], 4, np.float64), [1.0, 2.0, 0.5, 3.0])
    assert d[6] == 3 and d[8] == 2
    np.testing.assert_array_equal(read_back(d[5], 5 * 3, np.float64),
                                  [0, 1, 1, 2, 3, 2, 4, 5, 1, 9, 8, 7, 7, 6, 8])
    np.testing.assert_array_equal(read_back(d[7], 4 * 2, np.float64), [1, 1.5, 2, 1.0, 1, 2.0, 3, 0.25])
    for a in (p.node_offsets, p.edge_offsets, p.edges, p.weights, p.node_feat, p.edge_feat):
        assert a.flags.c_contiguous


def test_no_features_gives_zero_columns_and_null_address():
    p = pack(two_graphs())
    assert p.node_layout == {} and p.edge_layout == {}
    assert p.desc[5] == 0 and p.desc[6] == 0 and p.desc[7] == 0 and p.desc[8] == 0
    assert p.node_spec is None and p.edge_spec is None
    p = pack(two_graphs(), node_kernel=Constant(2.0))
    assert p.node_layout == {} and json.loads(p.node_spec) == {"kind": "constant", "c": 2.0}


def test_edgeless_and_empty_graphs():
    gs = [Graph(0), Graph(2, node_attrs={}), Graph(1, [(0, 0)])]
    p = pack(gs, edge_extra=())
    assert p.node_offsets.tolist() == [0, 0, 2, 3] and p.edge_offsets.tolist() == [0, 0, 0, 1]
    assert p.edges.tolist() == [[0, 0]]
    gs = [Graph(0, node_attrs={"label": []}), Graph(2, node_attrs={"label": [1, 2]})]
    p = pack(gs, node_kernel=TensorProduct(label=KroneckerDelta(0.5)))
    assert p.node_feat.tolist() == [[1.0], [2.0]]


def test_strings_and_booleans_pack_as_numbers():
    gs = [Graph(2, node_attrs={"sym": ["C", "N"], "aro": [True, False]}),
          Graph(1, node_attrs={"sym": ["N"], "aro": [True]})]
    p = pack(gs, node_kernel=TensorProduct(sym=KroneckerDelta(0.5), aro=KroneckerDelta(0.5)))
    f = p.node_feat
    assert f[1, 0] == f[2, 0] != f[0, 0]
    assert f[:, 1].tolist() == [1.0, 0.0, 1.0]


def test_error_not_a_graph_and_empty():
    gs = two_graphs() + [Graph(1), 5]
    with pytest.raises(TypeError, match=r"^X\[3\] is not a graphgram.Graph \(got int\)$"):
        pack(gs)
    with pytest.raises(TypeError, match=r"^Y\[0\] is not a graphgram.Graph \(got str\)$"):
        pack(["abc"], name="Y")
    with pytest.raises(ValueError, match="X is empty"):
        pack([])
    with pytest.raises(TypeError, match="not a single Graph"):
        pack(Graph(1))
    with pytest.raises(TypeError, match="the node kernel must be a graphgram microkernel"):
        pack(two_graphs(), node_kernel=lambda a, b: 1.0)


def test_error_missing_attribute_names_graph_and_alternatives():
    gs = two_graphs() * 3
    gs[5] = Graph(2, [(0, 1)], node_attrs={"label": [1, 2]})
    k = TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))
    with pytest.raises(ValueError, match=r"^X\[5\] has no node attribute 'charge' \(needed by the node kernel\); "
                                         r"it has: label$"):
        pack(gs, node_kernel=k)
    with pytest.raises(ValueError, match=r"X\[5\] has no edge attribute 'label' \(needed by the edge kernel\); "
                                         r"it has: no edge attributes"):
        pack(gs, edge_kernel=EDGE)
    with pytest.raises(ValueError, match=r"X\[0\] has no edge attribute 'weight' \(requested by edge_extra\)"):
        pack(gs, edge_extra=("weight",))


def test_error_inconsistent_widths():
    gs = two_graphs() + [Graph(1, node_attrs={"vec": [[1.0, 2.0, 3.0]], "label": [0]})]
    with pytest.raises(ValueError, match=r"X\[2\]: node attribute 'vec' has width 3 but X\[0\] has width 2"):
        pack(gs, node_kernel=NODE)


def test_error_unbound_kernel_at_pack_time():
    with pytest.raises(ValueError, match=r"node kernel: KroneckerDelta\(h=0.5\) reads an attribute value but is "
                                         r"not bound to an attribute"):
        pack(two_graphs(), node_kernel=KroneckerDelta(0.5))


def _mutated(field, value, index=1):
    gs = two_graphs() + two_graphs()
    g = gs[index + 1]
    arr = {"weights": g.weights, "charge": g.node_attrs["charge"], "length": g.edge_attrs["length"],
           "vec": g.node_attrs["vec"], "edges": g.edges}[field]
    arr.flags.writeable = True
    arr.flat[0] = value
    return gs


@pytest.mark.parametrize("field, value, match", [
    ("weights", -2.0, r"^X\[2\]: weights\[0\] = -2.0 is negative"),
    ("weights", np.nan, r"^X\[2\]: weights\[0\] = nan is not finite"),
    ("weights", np.inf, r"^X\[2\]: weights\[0\] = inf is not finite"),
    ("edges", 7, r"^X\[2\]: edge 0 \(7, 1\) refers to a node outside 0..2"),
    ("charge", np.nan, r"^X\[2\]: node attribute 'charge' contains NaN or infinity \(node 0\)"),
    ("vec", np.inf, r"^X\[2\]: node attribute 'vec' contains NaN or infinity \(node 0\)"),
    ("length", np.nan, r"^X\[2\]: edge attribute 'length' contains NaN or infinity \(edge 0\)"),
])
def test_revalidates_mutated_arrays(field, value, match):
    gs = _mutated(field, value)
    with pytest.raises(ValueError, match=match):
        pack(gs, node_kernel=TensorProduct(charge=SquareExponential(1.0), vec=SquareExponential(1.0)),
             edge_extra=["length"])


def test_pack_nci1_fast():
    d = DATASETS / "NCI1"
    if not d.is_dir():
        pytest.skip("NCI1 not available")
    graphs, _ = datasets.load_tu(d)
    t0 = time.perf_counter()
    p = pack(graphs, node_kernel=TensorProduct(label=KroneckerDelta(0.5)), edge_kernel=Constant(1.0))
    elapsed = time.perf_counter() - t0
    assert p.node_offsets[-1] == 122747 and p.edge_offsets[-1] == 265506 // 2
    np.testing.assert_array_equal(p.node_feat[:, 0], np.concatenate([g.node_attrs["label"] for g in graphs]))
    assert elapsed < 0.5, "packing NCI1 took %.2f s" % elapsed
