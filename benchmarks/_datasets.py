"""Where the benchmarks read the TU and MoleculeNet data sets: $GRAPHGRAM_DATASETS,
by default shared/datasets beside the repository (the `--datasets` options'
default)."""

import os
from pathlib import Path

DATASETS = Path(os.environ.get("GRAPHGRAM_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets")


def require(path=DATASETS):
    """Exit with a message naming the variable when ``path`` does not exist."""
    if not Path(path).exists():
        raise SystemExit("%s not found: set GRAPHGRAM_DATASETS (or --datasets) to the folder of the data sets" % path)
    return Path(path)
