"""Smoke test of an installed graphgram (a wheel), run outside the source tree.

    python /path/to/tests/wheel_smoke.py [--no-toolchain]

It imports graphgram from site-packages (never from the source tree), checks the
version, and computes a block of the MUTAG Gram matrix with the marginalized graph
kernel, comparing it with golden values (tests/wheel_smoke_golden.json) to a relative
1e-9: the solver's accuracy contract. The golden values are a dense direct solve of
the product-graph system (tests/reference.py), not a past output of the Go solver,
so a solver change within its contract still passes and anything else fails.
``--no-toolchain`` also requires that neither go nor a C compiler is on PATH.
Uses only public API: graphgram.datasets, graphgram.microkernels,
graphgram.MarginalizedGraphKernel. Ends with 'N passed, N failed'; exit 1 on failure.

    python tests/wheel_smoke.py --regenerate   # from the source tree, with graphgram installed

rewrites the golden file with tests/reference.py (a minute of dense solves).
"""

import argparse
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "wheel_smoke_golden.json")
RTOL = 1e-9
N_GRAPHS = 10
Q = 0.05
H = 0.5

results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""))


def kernels():
    from graphgram.microkernels import KroneckerDelta, TensorProduct
    return TensorProduct(label=KroneckerDelta(H)), TensorProduct(label=KroneckerDelta(H))


def regenerate():
    import numpy as np
    sys.path.insert(0, HERE)
    from reference import mgk_dense

    import graphgram
    graphs, _ = graphgram.datasets.load_mutag()
    node, edge = kernels()
    G = graphs[:N_GRAPHS]
    K = np.array([[mgk_dense(a, b, node, edge, q=Q) for b in G] for a in G])
    doc = {
        "what": "MarginalizedGraphKernel(node_kernel=TensorProduct(label=KroneckerDelta(%g)), "
                "edge_kernel=TensorProduct(label=KroneckerDelta(%g)), q=%g)(load_mutag()[0][:%d]), "
                "by a dense direct solve (tests/reference.py mgk_dense)" % (H, H, Q, N_GRAPHS),
        "n_graphs": N_GRAPHS, "q": Q, "h": H,
        "n_nodes": [g.n_nodes for g in G],
        "K": [[float(x) for x in row] for row in K],
    }
    text = json.dumps(doc, indent=1)
    # one matrix row per line
    text = re.sub(r"\[\s+([^\[\]]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
    with open(GOLDEN, "w") as f:
        f.write(text + "\n")
    print("wrote %s" % GOLDEN)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-toolchain", action="store_true", help="require go and cc/gcc/clang absent from PATH")
    parser.add_argument("--golden", default=GOLDEN, help="golden values file (default: %(default)s)")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the golden file from a dense solve")
    args = parser.parse_args(argv)
    if args.regenerate:
        regenerate()
        return 0

    import importlib.metadata

    import numpy as np

    import graphgram

    src_tree = os.path.join(os.path.dirname(HERE), "python")
    where = os.path.dirname(os.path.abspath(graphgram.__file__))
    check("graphgram imported from an installation, not the source tree",
          not where.startswith(src_tree + os.sep) and "site-packages" in where, where)
    installed = importlib.metadata.version("graphgram")
    check("version", installed == graphgram.__version__,
          "graphgram.__version__ %s, installed distribution %s" % (graphgram.__version__, installed))
    if args.no_toolchain:
        found = {t: shutil.which(t) for t in ("go", "cc", "gcc", "clang", "zig")}
        check("no Go and no C compiler on PATH", not any(found.values()),
              ", ".join("%s=%s" % kv for kv in found.items() if kv[1]) or "PATH=%s" % os.environ.get("PATH", ""))

    with open(args.golden) as f:
        golden = json.load(f)
    want = np.array(golden["K"], dtype=np.float64)
    graphs, _ = graphgram.datasets.load_mutag()
    G = graphs[:golden["n_graphs"]]
    check("MUTAG graphs as in the golden file", [g.n_nodes for g in G] == golden["n_nodes"],
          "node counts %s" % [g.n_nodes for g in G])
    node, edge = kernels()
    kernel = graphgram.MarginalizedGraphKernel(node_kernel=node, edge_kernel=edge, q=golden["q"])
    K = np.asarray(kernel(G))
    if K.shape != want.shape:
        check("Gram block shape", False, "%s, golden %s" % (K.shape, want.shape))
    else:
        rel = np.abs(K - want) / np.abs(want)
        check("MUTAG Gram block (%dx%d) equals the golden values to rtol %g" % (K.shape + (RTOL,)),
              np.all(rel <= RTOL), "max relative difference %.2e" % rel.max())
    n_pass = sum(results)
    print("wheel smoke: %d passed, %d failed" % (n_pass, len(results) - n_pass))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
