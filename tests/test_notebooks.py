"""The notebooks run from top to bottom without errors (executed headless by nbclient)."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, datasets_dir, monkeypatch):
    # Notebooks whose full run takes long (lowrank_gaussian_process: all of QM7)
    # run on subsets with this set; the kernel inherits the environment.
    monkeypatch.setenv("GRAPHGRAM_NOTEBOOK_QUICK", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_there_are_three_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"mutag_classification", "esol_gaussian_process", "kernel_pictures"}
