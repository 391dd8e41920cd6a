"""Every kernel and every Go package is where a reader looks for it (issue #53).

- each name of ``graphgram.kernels.__all__`` is named in docs/which_kernel.md and
  in graphgram's package docstring, and the module defining it in README's
  Layout (the row of ``python/graphgram/``);
- each package of the Go core (a folder of ``gokernel/`` with non-test ``.go``
  files) is named in the sub-package list of gokernel/doc.go and in README's
  Layout (the row of ``gokernel/``). A ``<parent>test`` package inside its
  parent (``graph/graphtest``: Go's ``httptest`` convention) is its parent's test
  helper and goes with it.

docs/adding_a_kernel.md lists these places with the rest of a new kernel's.
"""

import re
from pathlib import Path

import pytest

import graphgram
import graphgram.kernels

REPO = Path(__file__).resolve().parents[1]


def layout_row(first_cell):
    """The text of README's Layout row whose first cell is ``first_cell``."""
    readme = (REPO / "README.md").read_text()
    layout = readme[readme.index("\n## Layout"):]
    end = layout.find("\n## ", 1)
    layout = layout if end < 0 else layout[:end]
    for line in layout.splitlines():
        if line.startswith("| `%s` |" % first_cell):
            return line
    raise AssertionError("README's Layout has no row for %s" % first_cell)


def doc_go_packages():
    """The package names listed in gokernel/doc.go (``//   - name, name: ...``)."""
    names = set()
    for line in (REPO / "gokernel" / "doc.go").read_text().splitlines():
        m = re.match(r"//\s+- ([\w/, ]+):", line)
        if m:
            names.update(n.strip() for n in m.group(1).split(","))
    return names


def go_packages():
    """The Go packages under gokernel/, as paths relative to it, test helpers left out."""
    found = set()
    for path in (REPO / "gokernel").rglob("*.go"):
        if path.name.endswith("_test.go"):
            continue
        rel = path.parent.relative_to(REPO / "gokernel").as_posix()
        parent, _, name = rel.rpartition("/")
        if rel == "." or (parent and name == parent.rsplit("/", 1)[-1] + "test"):
            continue
        found.add(rel)
    return sorted(found)


def named(name, text):
    return re.search(r"(?<![\w.])%s(?!\w)" % re.escape(name), text) is not None


KERNEL_NAMES = list(graphgram.kernels.__all__)


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_in_which_kernel(name):
    assert named(name, (REPO / "docs" / "which_kernel.md").read_text()), (
        "docs/which_kernel.md does not name %s" % name)


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_in_package_docstring(name):
    assert named(name, graphgram.__doc__), "graphgram's package docstring does not name %s" % name


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_module_in_readme_layout(name):
    module = getattr(graphgram.kernels, name).__module__.rsplit(".", 1)[-1]
    assert "`%s`" % module in layout_row("python/graphgram/"), (
        "README's Layout does not list kernels/%s.py (%s)" % (module, name))


def test_go_packages_are_found():
    assert {"mgk", "wl", "graphhopper", "wwl", "cmd/graphgram"} <= set(go_packages())


@pytest.mark.parametrize("package", go_packages())
def test_go_package_in_doc_go(package):
    assert package in doc_go_packages(), "gokernel/doc.go does not list %s" % package


@pytest.mark.parametrize("package", go_packages())
def test_go_package_in_readme_layout(package):
    assert "`%s`" % package in layout_row("gokernel/"), "README's Layout does not list gokernel/%s" % package


def test_the_scans_see_a_missing_name():
    assert not named("WassersteinWLKernelX", "WassersteinWLKernel")
    assert named("WLFramework", ":class:`WLFramework`,")
    assert "nope" not in doc_go_packages()
