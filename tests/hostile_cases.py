"""Malformed inputs, each a callable; test_dependability.py runs them all in a
subprocess (so that a crash of the interpreter fails the test) and checks the
exception and its message against EXPECTED; every row of kernel_table.py adds three
malformed lists (_malformed_lists)."""

import networkx as nx
import numpy as np

from graphgram import (EdgeHistogramKernel, Graph, LowRankGraphKernel, MarginalizedGraphKernel, RandomWalkKernel,
                       ShortestPathKernel, WeisfeilerLehmanKernel, _backend, _packing)
from graphgram.microkernels import BrownianBridge, Constant, KroneckerDelta, SquareExponential, TensorProduct

NODE = TensorProduct(label=KroneckerDelta(0.5))
EDGE = TensorProduct(b=KroneckerDelta(0.5))


def mgk(**kw):
    return MarginalizedGraphKernel(NODE, EDGE, verbose=False, **kw)


def ok_graph(label="C"):
    return Graph(3, [(0, 1), (1, 2)], node_attrs={"label": [label, "O", "C"]}, edge_attrs={"b": [1, 2]})


def tampered(field):
    """A valid graph whose read-only arrays were made writable and corrupted afterwards."""
    g = ok_graph()
    if field == "weights":
        a = g.weights
        a.flags.writeable = True
        a[1] = np.nan
    elif field == "edges":
        a = g.edges
        a.flags.writeable = True
        a[0, 1] = 99
    return g


def raw_compute(**override):
    """Call the Go entry point with a wrong length somewhere: Go must refuse, not crash."""
    px, _, nl, el = _packing.pack([ok_graph()], None, {"label": ""}, {"b": ""})
    d = px._descriptor()
    out = np.zeros(1)
    ctl = np.zeros(3, np.int64)
    params = '{"node_kernel": {"kind": "constant", "c": 1}, "edge_kernel": {"kind": "constant", "c": 1}, "q": 0.1}'
    args = dict(kernel="marginalized", mode="gram", params=params, dx=d.ctypes.data, dxn=d.size, dy=0, dyn=0,
                out=out.ctypes.data, outn=out.size, it=0, itn=0, g=0, gn=0, c=ctl.ctypes.data, cn=3)
    if "desc_word" in override:
        w, v = override.pop("desc_word")
        d[w] = v
    args.update(override)
    a = args
    _backend._call(_backend._pybind.Compute, a["kernel"], a["mode"], a["params"], a["dx"], a["dxn"], a["dy"],
                   a["dyn"], a["out"], a["outn"], a["it"], a["itn"], a["g"], a["gn"], a["c"], a["cn"])


CASES = [
    ("not a list", lambda: mgk()(ok_graph())),
    ("list of ints", lambda: mgk()([ok_graph(), 3])),
    ("empty list", lambda: mgk()([])),
    ("attribute missing in one graph",
     lambda: mgk()([ok_graph(), Graph(2, [(0, 1)], node_attrs={"x": [1, 2]}, edge_attrs={"b": [1]})])),
    ("edge attribute missing in one graph",
     lambda: mgk()([ok_graph(), Graph(2, [(0, 1)], node_attrs={"label": ["C", "C"]})])),
    ("mixed types across graphs", lambda: mgk()([ok_graph(), Graph(1, node_attrs={"label": [3]})])),
    ("mixed types within a graph", lambda: Graph(2, node_attrs={"label": ["C", 3]})),
    ("missing on some networkx nodes", lambda: Graph.from_networkx(_partial_nx())),
    ("NaN label", lambda: Graph(2, node_attrs={"label": [1.0, np.nan]})),
    ("inf edge attribute", lambda: Graph(2, [(0, 1)], edge_attrs={"b": [np.inf]})),
    ("NaN weight", lambda: Graph(2, [(0, 1)], [np.nan])),
    ("negative weight", lambda: Graph(2, [(0, 1)], [-1.0])),
    ("NaN coordinates", lambda: _coordinates_nan()),
    ("NaN start probability", lambda: mgk(p=lambda g: np.full(g.n_nodes, np.nan))([ok_graph()])),
    ("negative start probability", lambda: mgk(p=lambda g: -np.ones(g.n_nodes))([ok_graph()])),
    ("asymmetric adjacency", lambda: Graph.from_adjacency(np.array([[0, 1], [0, 0]]))),
    ("node index out of range", lambda: Graph(2, [(0, 2)])),
    ("negative node index", lambda: Graph(2, [(-1, 1)])),
    ("huge declared size", lambda: Graph(2**40)),
    ("result too large for memory", lambda: mgk()([Graph(1, node_attrs={"label": [1]},)] * 3_000_000)),
    ("tampered weights", lambda: mgk()([ok_graph(), tampered("weights")])),
    ("tampered edges", lambda: mgk()([ok_graph(), tampered("edges")])),
    ("non-contiguous arrays", lambda: _noncontiguous()),
    ("wrong-dtype edges", lambda: Graph(2, np.array([[0.0, 1.0]]))),
    ("invalid q", lambda: mgk(q=1.5)([ok_graph()])),
    ("invalid q type", lambda: mgk(q="0.1")([ok_graph()])),
    ("invalid h at call", lambda: MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(-1.0)), EDGE)([ok_graph()])),
    ("invalid length scale", lambda: ShortestPathKernel(length_kernel=SquareExponential(0.0))([ok_graph()])),
    ("invalid n_jobs", lambda: mgk(n_jobs=0)([ok_graph()])),
    ("invalid lamda", lambda: RandomWalkKernel(lamda=-1.0)([ok_graph()])),
    ("Y attributes differ from X", lambda: mgk()([ok_graph()], [Graph(2, [(0, 1)], node_attrs={"label": [[1, 2], [3, 4]]},
                                                                  edge_attrs={"b": [1]})])),
    ("Y attribute types differ from X", lambda: mgk()([ok_graph()], [Graph(1, node_attrs={"label": [1]})])),
    ("zero-node graph", lambda: _check_finite(mgk()([Graph(0), ok_graph()]))),
    ("edgeless graph, every edge kernel", lambda: _edgeless_every_kernel()),
    ("edgeless networkx graph with named edge kernel", lambda: _check_finite(mgk()([_ion(), ok_graph()]))),
    ("WL: negative n_iter", lambda: WeisfeilerLehmanKernel(n_iter=-1)([ok_graph()])),
    ("WL: absurd n_iter", lambda: WeisfeilerLehmanKernel(n_iter=10**6)([ok_graph()])),
    ("WL: float n_iter", lambda: WeisfeilerLehmanKernel(n_iter=2.5)([ok_graph()])),
    ("WL: unknown base", lambda: WeisfeilerLehmanKernel(base="assignment")([ok_graph()])),
    ("WL: missing node label",
     lambda: WeisfeilerLehmanKernel()([ok_graph(), Graph(2, [(0, 1)], node_attrs={"x": [1, 2]})])),
    ("WL: continuous node label",
     lambda: WeisfeilerLehmanKernel(node_label="charge")([Graph(1, node_attrs={"charge": [2.0]}), Graph(
         2, [(0, 1)], node_attrs={"charge": [0.0, -0.25]})])),
    ("WL: vector node label", lambda: WeisfeilerLehmanKernel()([Graph(2, [(0, 1)], node_attrs={"label": [[1, 2], [3, 4]]})])),
    ("WL: label types differ between X and Y",
     lambda: WeisfeilerLehmanKernel()([ok_graph()], [Graph(2, [(0, 1)], node_attrs={"label": [6, 8]})])),
    ("WL: continuous edge label",
     lambda: WeisfeilerLehmanKernel(edge_label="w")([Graph(2, [(0, 1)], node_attrs={"label": [1, 1]},
                                                          edge_attrs={"w": [0.5]})])),
    ("WL: label name not a string", lambda: WeisfeilerLehmanKernel(node_label=3)([ok_graph()])),
    ("edge histogram: missing edge label", lambda: EdgeHistogramKernel()([ok_graph()])),
    ("low-rank: m larger than n", lambda: LowRankGraphKernel(mgk(), inducing=3)([ok_graph(), ok_graph("N")])),
    ("low-rank: m below 1", lambda: LowRankGraphKernel(mgk(), inducing=0)([ok_graph()])),
    ("low-rank: inducing graphs lack an attribute",
     lambda: LowRankGraphKernel(mgk(), inducing=[ok_graph(), Graph(2, [(0, 1)], node_attrs={"x": [1, 2]},
                                                                   edge_attrs={"b": [1]})])([ok_graph()])),
    ("low-rank: inducing attribute types differ",
     lambda: LowRankGraphKernel(mgk(), inducing=[Graph(1, node_attrs={"label": [1]})])([ok_graph()], eval_gradient=True)),
    ("low-rank: singular K_ZZ", lambda: LowRankGraphKernel(mgk(), inducing=[Graph(0), Graph(0)])([ok_graph()])),
    ("low-rank: gradient with Y",
     lambda: LowRankGraphKernel(mgk(), inducing=1)([ok_graph()], [ok_graph()], eval_gradient=True)),
    ("Go: output length wrong", lambda: raw_compute(outn=5)),
    ("Go: descriptor version wrong", lambda: raw_compute(desc_word=(0, 12345))),
    ("Go: descriptor too short", lambda: raw_compute(dxn=10)),
    ("Go: array length wrong", lambda: raw_compute(desc_word=(9, 7))),
    ("Go: null buffer", lambda: raw_compute(out=0)),
    ("Go: unknown parameter", lambda: raw_compute(params='{"q": 0.1, "qq": 1}')),
    ("Go: base kernel reads a missing column",
     lambda: raw_compute(params='{"node_kernel": {"kind": "kronecker_delta", "h": 0.5, "col": 7}, '
                                '"edge_kernel": {"kind": "constant", "c": 1}, "q": 0.1}')),
]


def _malformed_lists():
    """Three malformed lists for the example of every row of kernel_table.py: a single
    graph, a list holding an int, an empty list."""
    from kernel_table import KERNELS

    cases, expected = [], {}
    for name, row in KERNELS.items():
        make = row.example
        cases += [("%s: not a list" % name, lambda make=make: make()(ok_graph())),
                  ("%s: list of ints" % name, lambda make=make: make()([ok_graph(), 3])),
                  ("%s: empty list" % name, lambda make=make: make()([]))]
        expected.update({"%s: not a list" % name: ("TypeError", r"not a single Graph"),
                         "%s: list of ints" % name: ("TypeError", r"X\[1\] is not a graphgram\.(Graph|Mixture)"),
                         "%s: empty list" % name: ("ValueError", r"X is empty")})
    return cases, expected


# case -> (outcome, regex the message must match); "ok" means no exception.
EXPECTED = {
    "not a list": ("TypeError", r"not a single Graph"),
    "list of ints": ("TypeError", r"X\[1\] is not a graphgram.Graph"),
    "empty list": ("ValueError", r"X is empty"),
    "attribute missing in one graph": ("ValueError", r"X\[1\] has no node attribute 'label' \(needed by the node kernel\); it has: x"),
    "edge attribute missing in one graph": ("ValueError", r"X\[1\] has no edge attribute 'b'"),
    "mixed types across graphs": ("TypeError", r"X\[1\]: node attribute 'label' holds numbers but in X\[0\] it holds strings"),
    "mixed types within a graph": ("TypeError", r"'label' mixes strings"),
    "missing on some networkx nodes": ("ValueError", r"node attribute 'label' is present on 1 of 2 nodes"),
    "NaN label": ("ValueError", r"node attribute 'label' contains NaN"),
    "inf edge attribute": ("ValueError", r"edge attribute 'b' contains NaN or infinity"),
    "NaN weight": ("ValueError", r"weights\[0\] = nan is not finite"),
    "negative weight": ("ValueError", r"weights\[0\] = -1.0 is negative"),
    "NaN coordinates": ("ValueError", r"positions contain NaN"),
    "NaN start probability": ("ValueError", r"X\[0\]: start probabilities p must be finite"),
    "negative start probability": ("ValueError", r"X\[0\]: start probabilities p must be finite and non-negative"),
    "asymmetric adjacency": ("ValueError", r"A is not symmetric"),
    "node index out of range": ("ValueError", r"edge 0 \(0, 2\) refers to a node outside 0..1"),
    "negative node index": ("ValueError", r"edge 0 \(-1, 1\) refers to a node outside"),
    "huge declared size": ("ValueError", r"n_nodes must be in 0..2147483647"),
    "result too large for memory": ("MemoryError", r"needs .*GiB"),
    "tampered weights": ("ValueError", r"X\[1\]: weights\[1\] = nan is not finite"),
    "tampered edges": ("ValueError", r"X\[1\]: edge 0 \(0, 99\) refers to a node outside"),
    "non-contiguous arrays": ("ok", ""),
    "wrong-dtype edges": ("TypeError", r"edges must be integer node indices"),
    "invalid q": ("ValueError", r"q must be a number in \(0, 1\)"),
    "invalid q type": ("ValueError", r"q must be a number"),
    "invalid h at call": ("ValueError", r"h = -1.0 is out of range"),
    "invalid length scale": ("ValueError", r"length_scale = 0.0 is out of range"),
    "invalid n_jobs": ("ValueError", r"n_jobs must be"),
    "invalid lamda": ("ValueError", r"lamda must be a positive finite number"),
    "Y attributes differ from X": ("ValueError", r"Y\[0\]: node attribute 'label' has width 2 but X\[0\] has width 1"),
    "Y attribute types differ from X": ("TypeError", r"Y\[0\]: node attribute 'label' holds numbers"),
    "zero-node graph": ("ok", ""),
    "edgeless graph, every edge kernel": ("ok", ""),
    "edgeless networkx graph with named edge kernel": ("ok", ""),
    "WL: negative n_iter": ("ValueError", r"n_iter must be in \[0, 100\], got -1"),
    "WL: absurd n_iter": ("ValueError", r"n_iter must be in \[0, 100\], got 1000000"),
    "WL: float n_iter": ("TypeError", r"n_iter must be an integer, got 2.5"),
    "WL: unknown base": ("ValueError", r"base must be 'subtree' or 'optimal_assignment', got 'assignment'"),
    "WL: missing node label": ("ValueError", r"X\[1\] has no node attribute 'label' \(the node label of "
                                             r"WeisfeilerLehmanKernel\); it has: x"),
    "WL: continuous node label": ("TypeError", r"X\[1\]: node attribute 'charge' \(the node label of "
                                               r"WeisfeilerLehmanKernel\) holds non-integer numbers \(e.g. -0.25\)"),
    "WL: vector node label": ("TypeError", r"X\[0\]: node attribute 'label' .* holds vectors of length 2"),
    "WL: label types differ between X and Y": ("TypeError", r"Y\[0\]: node attribute 'label' holds numbers but in "
                                                            r"X\[0\] it holds strings"),
    "WL: continuous edge label": ("TypeError", r"X\[0\]: edge attribute 'w' \(the edge label of "
                                               r"WeisfeilerLehmanKernel\) holds non-integer numbers"),
    "WL: label name not a string": ("TypeError", r"node_label must be the name of an attribute or None, got 3"),
    "edge histogram: missing edge label": ("ValueError", r"X\[0\] has no edge attribute 'label' \(the edge label "
                                                         r"of EdgeHistogramKernel\); it has: b"),
    "low-rank: m larger than n": ("ValueError", r"inducing=3 graphs to choose from 2: m must be at most the number"),
    "low-rank: m below 1": ("ValueError", r"inducing must be a positive number of graphs"),
    "low-rank: inducing graphs lack an attribute":
        ("ValueError", r"inducing\[1\] has no node attribute 'label' \(needed by the node kernel\)"),
    "low-rank: inducing attribute types differ": ("TypeError", r"Y\[0\]: node attribute 'label' holds numbers.*"
                                                              r"\(Y: the inducing graphs\)"),
    "low-rank: singular K_ZZ": ("LinAlgError", r"K\(Z, Z\) of the inducing graphs has a mean diagonal of 0"),
    "low-rank: gradient with Y": ("ValueError", r"Gradient can only be evaluated when Y is None"),
    "Go: output length wrong": ("ValueError", r"out has 5 entries, 1 are needed"),
    "Go: descriptor version wrong": ("RuntimeError", r"unknown version"),
    "Go: descriptor too short": ("RuntimeError", r"unknown version"),
    "Go: array length wrong": ("ValueError", r"X: weights has 7 entries for 2 edges"),
    "Go: null buffer": ("ValueError", r"out: null buffer"),
    "Go: unknown parameter": ("ValueError", r"unknown field \"qq\""),
    "Go: base kernel reads a missing column": ("ValueError", r"node kernel reads feature column 7 but the graphs have 1"),
}


def _partial_nx():
    g = nx.Graph()
    g.add_node(0, label="C")
    g.add_node(1)
    return g


def _ion():
    g = nx.Graph()
    g.add_node("Na", label="Na")
    return Graph.from_networkx(g)


def _coordinates_nan():
    from graphgram.molecules import from_coordinates

    return from_coordinates(["C", "O"], [[0, 0, 0], [np.nan, 0, 0]])


def _noncontiguous():
    edges = np.array([[0, 9, 1], [1, 9, 2]])[:, ::2]  # a strided view
    labels = np.array(["C", "x", "O", "x", "C"])[::2]
    g = Graph(3, edges, np.array([1.0, 5.0, 2.0])[::2], node_attrs={"label": labels}, edge_attrs={"b": [1, 2]})
    _check_finite(mgk()([g, ok_graph()]))


def _edgeless_every_kernel():
    lonely = Graph(2, node_attrs={"label": ["C", "N"]})
    for edge in (TensorProduct(b=KroneckerDelta(0.5)), TensorProduct(b=SquareExponential(1.0)),
                 TensorProduct(b=BrownianBridge(2.0)), Constant(1.0), TensorProduct(b=KroneckerDelta(0.5)).normalized):
        _check_finite(MarginalizedGraphKernel(NODE, edge, verbose=False)([lonely, lonely]))
    _check_finite(ShortestPathKernel(node_kernel=NODE, weight="b")([lonely, ok_graph()]))


def _check_finite(K):
    if not np.all(np.isfinite(K)):
        raise AssertionError("non-finite kernel values %r" % (K,))


_CASES, _EXPECTED = _malformed_lists()
CASES += _CASES
EXPECTED.update(_EXPECTED)
