"""What the benchmarks share: where they read the TU and MoleculeNet data sets
($GRAPHGRAM_DATASETS, by default shared/datasets beside the repository: the
`--datasets` options' default) and the description of the machine they ran on."""

import os
import platform
import time
from pathlib import Path

DATASETS = Path(os.environ.get("GRAPHGRAM_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets")


def require(path=DATASETS):
    """Exit with a message naming the variable when ``path`` does not exist."""
    if not Path(path).exists():
        raise SystemExit("%s not found: set GRAPHGRAM_DATASETS (or --datasets) to the folder of the data sets" % path)
    return Path(path)


def cpu_model():
    """The CPU's model name and its widest x86 SIMD extension."""
    try:
        with open("/proc/cpuinfo") as f:
            first = f.read().split("\n\n")[0]  # the first processor's entry
    except OSError:
        return platform.processor() or "unknown CPU"
    info = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in first.splitlines() if ":" in line)}
    flags = set(info.get("flags", "").split())
    simd = next((f for f in ("avx512f", "avx2") if f in flags), "no AVX2")
    return "%s (%s)" % (info.get("model name", "unknown CPU"), simd)


def machine():
    """One line: CPU, cores and the load average now (state it beside every timing)."""
    return "CPU: %s, %d cores; load average %s" % (cpu_model(), os.cpu_count(),
                                                   " ".join("%.2f" % v for v in os.getloadavg()))


def best_of(fn, repeat):
    """Return (the last result of fn(), the shortest wall time of ``repeat`` calls)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def tu_kernel(graphs, n_jobs=None):
    """The TU sets' benchmark kernel: MarginalizedGraphKernel, q = 0.01,
    KroneckerDelta(0.5) on the node labels and, when the graphs have them, on
    the edge labels (graphgram imported here, from whichever build is on the
    path)."""
    import graphgram
    from graphgram.microkernels import KroneckerDelta, TensorProduct
    edge = TensorProduct(label=KroneckerDelta(0.5)) if "label" in graphs[0].edge_attrs else None
    return graphgram.MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), edge, q=0.01, n_jobs=n_jobs)
