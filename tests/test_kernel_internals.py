"""The internal API of graph kernels (graphgram.kernels._base.GraphKernelInternals): every
kernel implements it with its signatures, and the modules that call a graph kernel from
outside kernels/ call no other private member of one."""

import ast
import inspect
from pathlib import Path

import pytest

import graphgram
import graphgram.kernels
from graphgram.kernels._base import GraphKernelBase, GraphKernelInternals

PACKAGE = Path(graphgram.__file__).parent
# The modules outside kernels/ that call a graph kernel, and the names a graph kernel
# goes by in them: a parameter or local ``kernel`` (``task_kernel`` for Dask's copy),
# or the attribute ``self.kernel`` of the estimators that wrap one (``self.graph_kernel`` in
# the GPyTorch kernel, whose ``kernel`` would read as a GPyTorch kernel's).
CALLERS = ["distributed.py", "gaussian_process/_graph_kernel.py", "gaussian_process/_inducing.py",
           "gaussian_process/_low_rank.py", "gpytorch/_kernel.py"]
NAMES = {"kernel", "task_kernel"}

KERNELS = [getattr(graphgram.kernels, n) for n in graphgram.kernels.__all__
           if isinstance(getattr(graphgram.kernels, n), type) and issubclass(getattr(graphgram.kernels, n),
                                                                             GraphKernelBase)]


def members():
    methods = [n for n, v in vars(GraphKernelInternals).items() if not n.startswith("__") and callable(v)]
    return methods, list(GraphKernelInternals.__annotations__)


def is_graph_kernel(node):
    if isinstance(node, ast.Name):
        return node.id in NAMES
    return (isinstance(node, ast.Attribute) and node.attr in ("kernel", "graph_kernel")
            and isinstance(node.value, ast.Name)
            and node.value.id == "self")


def private_calls(path):
    """The private attributes read on a graph kernel in the module at path: {name: [line, ...]}."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and is_graph_kernel(node.value)):
            found.setdefault(node.attr, []).append(node.lineno)
    return found


def test_the_kernels_are_found():
    assert len(KERNELS) >= 7


@pytest.mark.parametrize("cls", KERNELS, ids=lambda c: c.__name__)
def test_every_kernel_implements_the_internal_api_with_its_signatures(cls):
    assert isinstance(cls(), GraphKernelInternals)
    methods, _ = members()
    for name in methods:
        expected = list(inspect.signature(getattr(GraphKernelInternals, name)).parameters)
        assert list(inspect.signature(getattr(cls, name)).parameters) == expected, name


def test_the_callers_use_only_the_internal_api():
    methods, attributes = members()
    declared = set(methods) | set(attributes)
    used = {}
    for relative in CALLERS:
        for name, lines in private_calls(PACKAGE / relative).items():
            used.setdefault(name, []).extend("%s:%d" % (relative, line) for line in lines)
    undeclared = {name: where for name, where in used.items() if name not in declared}
    assert not undeclared, "private members of a graph kernel outside GraphKernelInternals: %s" % undeclared
    # The scan sees the calls it is meant to (a renamed variable would hide them).
    assert {"_compute", "_raw_diag", "_column_source", "_block_gradient", "_cross_gram"} <= set(used)


def test_the_scan_sees_an_undeclared_call(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def f(kernel, self):\n    kernel._pack(1)\n    self.kernel._compute('gram', 2)\n"
                    "    other._secret()\n")
    assert private_calls(path) == {"_pack": [2], "_compute": [3]}
