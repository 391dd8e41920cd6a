#!/usr/bin/env python3
r"""Second-generation MGK solver against the landed code, in the same run.

Every measurement runs in a fresh worker process importing one of two builds
of graphgram: ``new`` (this tree's ``python/``) and ``old`` (a copy of the
commit before the solver work, built with ``setup.py build_ext --inplace``;
``--old DIR`` names its ``python/`` directory). Old and new alternate round by
round, and each row reports the fastest round of each, so that load from other
users of the machine slows both alike. The old build's values (Jacobi CG at
residual 1e-12) serve as the reference for the new build's errors.

    python3 benchmarks/bench_solver.py --old /tmp/solver_old/python \
        --sets MUTAG NCI1=400 ENZYMES=200 PROTEINS=200 PROTEIN3D GP=300 --rounds 2
    python3 benchmarks/bench_solver.py --old /tmp/solver_old/python --sets MUTAG --fit 300
                                                        # plus a full GP fit, new build only

Sets: TU data sets (q = 0.01, KroneckerDelta(0.5) on node labels and on edge
labels where the set has them, else Constant(1)), ``NAME=N`` an evenly spread
subset of N graphs; PROTEIN3D: three protein-like 3D clouds of 250 atoms
(_mgk_protein.py, element δ(0.5), SquareExponential(1 Å) on bond length); GP=N:
one kernel + gradient evaluation of ConstantKernel() * GraphKernel(
molecular_kernel()) + WhiteKernel() on N ESOL molecules (from SMILES, rdkit);
SET:K=N and SET:KG=N: molecular_kernel() on N molecules of SET (ESOL, QM7, or
DRUG: the ESOL molecules of 20 heavy atoms or more), K alone or K with its
gradient (the summary then prints the ratio K+gradient / K of each build):

    python3 benchmarks/bench_solver.py --old /tmp/old/python --rounds 3 \
        --sets ESOL:K=1000 ESOL:KG=1000 QM7:K=2000 QM7:KG=2000 DRUG:K=0 DRUG:KG=0 MUTAG
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from _common import require, tu_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
NEW = os.path.join(os.path.dirname(HERE), "python")
DATA = str(require())


# Molecule sets of the K / KG tasks: file, SMILES column, target column, and
# the fewest heavy atoms a molecule must have (DRUG: the drug-size part of ESOL).
MOLECULES = {"ESOL": ("ESOL/delaney-processed.csv", "measured log solubility in mols per litre", 0),
             "DRUG": ("ESOL/delaney-processed.csv", "measured log solubility in mols per litre", 20),
             "QM7": ("QM7/qm7.csv", "target", 0)}


def esol(n):
    return molecule_set("ESOL", n)


def molecule_set(name, n):
    """n molecules of a MOLECULES set (all when n is 0 or larger), evenly spread, and their targets."""
    import csv
    import numpy as np
    from graphgram import molecules
    path, target, min_atoms = MOLECULES[name]
    with open(os.path.join(DATA, path)) as f:
        rows = list(csv.DictReader(f))
    graphs = [(molecules.from_smiles(r["smiles"].strip()), float(r[target])) for r in rows]
    graphs = [g for g in graphs if g[0].n_nodes >= min_atoms]
    n = min(n or len(graphs), len(graphs))
    idx = np.linspace(0, len(graphs) - 1, n).astype(int)
    return [graphs[i][0] for i in idx], np.array([graphs[i][1] for i in idx])


def gp_kernel():
    from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
    import graphgram
    from graphgram.gaussian_process import GraphKernel
    return ConstantKernel() * GraphKernel(graphgram.molecular_kernel()) + WhiteKernel()


def worker(task, n, jobs, out):
    import numpy as np
    import graphgram
    from graphgram import datasets
    from graphgram.microkernels import KroneckerDelta, SquareExponential, TensorProduct
    res = {}
    mol, _, kind = task.partition(":")
    if kind in ("K", "KG"):
        # molecular_kernel() alone: K, or K and its gradient (eval_gradient).
        X, _ = molecule_set(mol, n)
        k = graphgram.molecular_kernel(n_jobs=jobs, verbose=False)
        t = time.perf_counter()
        if kind == "K":
            K = k(X)
        else:
            K, G = k(X, eval_gradient=True)
            np.save(out + ".G.npy", G)
        res["time"] = time.perf_counter() - t
        res["pairs"] = len(X) * (len(X) + 1) // 2
        np.save(out + ".K.npy", K)
    elif task == "GP":
        X, _ = esol(n)
        k = gp_kernel()
        t = time.perf_counter()
        K, G = k(X, eval_gradient=True)
        res["time"] = time.perf_counter() - t
        np.save(out + ".K.npy", K)
        np.save(out + ".G.npy", G)
    elif task == "FIT":
        from sklearn.gaussian_process import GaussianProcessRegressor
        from graphgram.gaussian_process import GraphKernel
        X, y = esol(n)
        calls, spent = [0], [0.0]
        orig = GraphKernel.__call__

        def counted(self, *a, **kw):
            t = time.perf_counter()
            r = orig(self, *a, **kw)
            if kw.get("eval_gradient"):
                calls[0] += 1
                spent[0] += time.perf_counter() - t
            return r
        GraphKernel.__call__ = counted
        gp = GaussianProcessRegressor(gp_kernel(), normalize_y=True)
        t = time.perf_counter()
        gp.fit(X, y)
        res.update(time=time.perf_counter() - t, evaluations=calls[0], eval_time=spent[0],
                   kernel=str(gp.kernel_), lml=float(gp.log_marginal_likelihood_value_))
    elif task == "PROTEIN3D":
        sys.path.insert(0, HERE)
        from _mgk_protein import protein_like
        gs = []
        for s in range(3):
            el, pos, _ = protein_like(n, seed=1000 * n + s)
            gs.append(graphgram.molecules.from_coordinates(el, pos, cutoff=4.5))
        node = TensorProduct(element=KroneckerDelta(0.5))
        edge = TensorProduct(length=SquareExponential(1.0))
        kern = graphgram.MarginalizedGraphKernel(node, edge, q=0.01, n_jobs=jobs)
        t = time.perf_counter()
        K = kern(gs[:1], gs[1:])
        res["time"] = time.perf_counter() - t
        np.save(out + ".K.npy", K)
    else:
        graphs, _ = datasets.load_tu(os.path.join(DATA, task))
        if n and n < len(graphs):
            graphs = [graphs[i] for i in np.linspace(0, len(graphs) - 1, n).astype(int)]
        kern = tu_kernel(graphs, n_jobs=jobs)
        t = time.perf_counter()
        K = kern(graphs)
        res["time"] = time.perf_counter() - t
        res["graphs"] = len(graphs)
        np.save(out + ".K.npy", K)
    with open(out + ".json", "w") as f:
        json.dump(res, f)


def run_worker(pkg, task, n, jobs, out):
    env = dict(os.environ, PYTHONPATH=pkg)
    subprocess.run([sys.executable, __file__, "--worker", task, str(n), str(jobs), out],
                   env=env, check=True)
    with open(out + ".json") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", help="python/ folder of the old build (a git archive of it, built with setup.py build_ext --inplace)")
    ap.add_argument("--sets", nargs="*", default=["MUTAG", "NCI1=400", "ENZYMES=200", "PROTEINS=200", "PROTEIN3D", "GP=300"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fit", type=int, default=0, help="also fit the GP on N ESOL molecules (new build only)")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        task, n, jobs, out = a.worker
        worker(task, int(n), int(jobs), out)
        return
    if not a.old:
        ap.error("--old is required: the python/ folder of the build to compare with")
    import numpy as np
    tmp = tempfile.mkdtemp(prefix="bench_solver_")
    rows = []
    for spec in a.sets:
        task, _, n = spec.partition("=")
        n = int(n or (250 if task == "PROTEIN3D" else 0))
        best = {}
        for r in range(a.rounds):
            for name, pkg in (("old", a.old), ("new", NEW)):
                res = run_worker(pkg, task, n, a.jobs, os.path.join(tmp, "%s_%s" % (task, name)))
                best[name] = min(best.get(name, float("inf")), res["time"])
        Ko = np.load(os.path.join(tmp, task + "_old.K.npy"))
        Kn = np.load(os.path.join(tmp, task + "_new.K.npy"))
        err = float(np.max(np.abs(Kn - Ko) / np.maximum(np.abs(Ko), 1e-300)))
        row = {"set": spec, "old_s": best["old"], "new_s": best["new"], "speedup": best["old"] / best["new"],
               "max_rel_err_K": err}
        if task == "GP" or task.endswith(":KG"):
            Go = np.load(os.path.join(tmp, task + "_old.G.npy"))
            Gn = np.load(os.path.join(tmp, task + "_new.G.npy"))
            row["max_abs_err_grad"] = float(np.max(np.abs(Gn - Go)))
            row["max_rel_err_grad"] = float(np.max(np.abs(Gn - Go)) / np.max(np.abs(Go)))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.fit:
        res = run_worker(NEW, "FIT", a.fit, a.jobs, os.path.join(tmp, "fit"))
        res["set"] = "GP fit ESOL=%d (new)" % a.fit
        rows.append(res)
        print(json.dumps(res), flush=True)
    print("\n%-16s %10s %10s %8s %12s" % ("set", "old s", "new s", "ratio", "max rel err"))
    for r in rows:
        if "old_s" in r:
            print("%-16s %10.3f %10.3f %7.2fx %12.2g" % (r["set"], r["old_s"], r["new_s"], r["speedup"], r["max_rel_err_K"]))
        else:
            print("%s: %.1f s, %d evaluations, %.2f s per evaluation" % (r["set"], r["time"], r["evaluations"], r["eval_time"] / max(r["evaluations"], 1)))
    # K + gradient against K alone, per build, where both were run on the same set.
    times = {r["set"]: r for r in rows if "old_s" in r}
    for spec, r in times.items():
        if ":KG=" in spec and spec.replace(":KG=", ":K=") in times:
            k = times[spec.replace(":KG=", ":K=")]
            print("%-16s K+gradient / K: old %.2fx, new %.2fx" % (spec, r["old_s"] / k["old_s"], r["new_s"] / k["new_s"]))


if __name__ == "__main__":
    main()
