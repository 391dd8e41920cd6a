"""Iterations per pair of the two-solve CG (K from a primal and an adjoint solve,
stopped when the product of their relative preconditioned residuals is at most
τ = 0.25 · 1e-9, as gokernel/mgk/dual.go does) under other preconditioners,
node orders and starts, on dense NumPy product systems of random pairs:

    python3 benchmarks/preconditioner_study.py --set MUTAG --pairs 40
    python3 benchmarks/preconditioner_study.py --set NCI1 --pairs 30
    python3 benchmarks/preconditioner_study.py --set DRUG --pairs 30

Columns (each the mean CG iterations per pair, and the worst relative error of K
against a direct solve):

* sgs: symmetric Gauss–Seidel in the product order (i, i') by G's node i, what
  the Go core runs;
* sgs-colour: the same with G's nodes numbered colour class by colour class
  (greedy colouring), the order under which the blocks of one class are
  independent, so that a sweep's products with H could be formed once per
  node of G and shared by its neighbours (factored sweeps);
* jacobi: the diagonal;
* block-cg: SGS with block CG on the two right-hand sides together (one Krylov
  space for both);
* deflated: SGS started from the Galerkin solution on span{1, κv};
* kronecker: the exact inverse of the unlabelled product operator
  D/v̄ − w̄ (A ⊗ A') (v̄, w̄ the pair's mean node and edge kernel values),
  applied through both graphs' eigendecompositions.

Kernels: TU sets with KroneckerDelta(0.5) on node labels and, where the set has
them, edge labels, q = 0.01; DRUG (the ESOL molecules with 20 heavy atoms or
more) with molecular_kernel().
"""

import argparse
import csv
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import scipy.linalg as sl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE.parent / "tests"))

from _common import machine, require  # noqa: E402
from graphgram import datasets, molecular_kernel  # noqa: E402
from graphgram.microkernels import KroneckerDelta, TensorProduct  # noqa: E402
from graphgram.molecules import from_smiles  # noqa: E402
from reference import _degrees, product_system  # noqa: E402

TAU = 0.25e-9


def load(name):
    """Graphs, node kernel, edge kernel and q of a set."""
    if name == "DRUG":
        with open(require() / "ESOL" / "delaney-processed.csv", newline="") as f:
            graphs = [g for g in (from_smiles(r["smiles"]) for r in csv.DictReader(f)) if g.n_nodes >= 20]
        k = molecular_kernel()
        return graphs, k.node_kernel, k.edge_kernel, k.q
    graphs, _ = datasets.load_tu(require() / name)
    graphs = [g for g in graphs if 0 < g.n_nodes <= 40]  # dense systems stay small
    delta = TensorProduct(label=KroneckerDelta(0.5))
    edge = delta if "label" in graphs[0].edge_attrs else None
    return graphs, delta, edge, 0.01


def cg_pair(A, B, precondition, X0=None, maxit=500):
    """Two CG solves side by side until the product of their relative
    preconditioned residuals is at most TAU; returns (iterations, K)."""
    X = np.zeros_like(B) if X0 is None else X0.copy()
    R = B - A @ X
    Z = precondition(R)
    P = Z.copy()
    rz = (R * Z).sum(0)
    r0 = np.sqrt((B * precondition(B)).sum(0))
    k = 0
    while (np.sqrt(np.abs(rz)) / r0).prod() > TAU and k < maxit:
        Q = A @ P
        alpha = rz / (P * Q).sum(0)
        X += P * alpha
        R -= Q * alpha
        Z = precondition(R)
        rz_new = (R * Z).sum(0)
        P = Z + P * (rz_new / rz)
        rz = rz_new
        k += 1
    return k, B[:, 1] @ X[:, 0] + X[:, 1] @ R[:, 0]


def block_cg(A, B, precondition, maxit=500):
    """Block CG (O'Leary) on both right-hand sides, same stopping rule."""
    X = np.zeros_like(B)
    R = B.copy()
    Z = precondition(R)
    P = Z.copy()
    RZ = R.T @ Z
    r0 = np.sqrt(np.diag(RZ))
    k = 0
    while (np.sqrt(np.abs(np.diag(RZ))) / r0).prod() > TAU and k < maxit:
        Q = A @ P
        alpha = np.linalg.solve(P.T @ Q, RZ)
        X += P @ alpha
        R -= Q @ alpha
        Z = precondition(R)
        RZ_new = R.T @ Z
        P = Z + P @ np.linalg.solve(RZ, RZ_new)
        RZ = RZ_new
        k += 1
    return k, B[:, 1] @ X[:, 0] + X[:, 1] @ R[:, 0]


def sgs(A, order):
    """The SGS preconditioner of A with its unknowns taken in ``order``."""
    Ap = A[np.ix_(order, order)]
    d = np.diag(Ap)
    lower = np.tril(Ap, -1) + np.diag(d)
    back = np.argsort(order)

    def apply(R):
        y = sl.solve_triangular(lower, R[order], lower=True)
        return sl.solve_triangular(lower.T, d[:, None] * y, lower=False)[back]
    return apply


def colour_order(g, n2):
    """Product unknowns (i, i') with G's nodes colour class by colour class."""
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from(tuple(e) for e in g.edges if e[0] != e[1])
    colour = nx.greedy_color(G, strategy="largest_first")
    nodes = sorted(range(g.n_nodes), key=lambda i: (colour[i], i))
    return np.array([i * n2 + ip for i in nodes for ip in range(n2)])


def kronecker(g1, g2, V, W, q):
    """The inverse of D/v̄ − w̄ (A ⊗ A') through both graphs' eigendecompositions."""
    A1, A2 = g1.adjacency(), g2.adjacency()
    s1, s2 = 1 / np.sqrt(_degrees(g1)), 1 / np.sqrt(_degrees(g2))
    l1, U1 = np.linalg.eigh(s1[:, None] * A1 * s1)
    l2, U2 = np.linalg.eigh(s2[:, None] * A2 * s2)
    pattern = np.kron(A1, A2)
    on = pattern != 0
    w = (W[on] / pattern[on]).mean() if on.any() else 0.0
    den = 1 / ((1 - q) ** 2 * V.mean()) - w * np.outer(l1, l2)
    scale = np.kron(s1, s2)
    n1, n2 = g1.n_nodes, g2.n_nodes

    def apply(R):
        out = np.empty_like(R)
        for c in range(R.shape[1]):
            Y = U1.T @ (scale * R[:, c]).reshape(n1, n2) @ U2
            out[:, c] = scale * (U1 @ (Y / den) @ U2.T).ravel()
        return out
    return apply


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="MUTAG", choices=["MUTAG", "NCI1", "ENZYMES", "PROTEINS", "DRUG"])
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    graphs, node, edge, q = load(a.set)
    rng = np.random.default_rng(a.seed)
    its, errs = {}, {}
    for _ in range(a.pairs):
        g1, g2 = (graphs[i] for i in rng.integers(0, len(graphs), 2))
        D, V, W = product_system(g1, g2, node, edge, q)
        A = np.diag(D / V) - W
        B = np.stack([D, np.ones(len(D))], 1)  # primal: D·1; adjoint: the start probabilities
        exact = B[:, 1] @ np.linalg.solve(A, B[:, 0])
        natural = np.arange(len(D))
        basis = np.stack([np.ones(len(D)), V], 1)
        runs = {
            "sgs": lambda: cg_pair(A, B, sgs(A, natural)),
            "sgs-colour": lambda: cg_pair(A, B, sgs(A, colour_order(g1, g2.n_nodes))),
            "jacobi": lambda: cg_pair(A, B, lambda R: R / np.diag(A)[:, None]),
            "block-cg": lambda: block_cg(A, B, sgs(A, natural)),
            "deflated": lambda: cg_pair(A, B, sgs(A, natural),
                                        X0=basis @ np.linalg.solve(basis.T @ A @ basis, basis.T @ B)),
            "kronecker": lambda: cg_pair(A, B, kronecker(g1, g2, V, W, q)),
        }
        for name, run in runs.items():
            k, K = run()
            its[name] = its.get(name, 0) + k
            errs[name] = max(errs.get(name, 0.0), abs(K - exact) / abs(exact))
    print("%s, %d random pairs, q = %g, τ = %g; %s" % (a.set, a.pairs, q, TAU, machine()))
    print("| preconditioner | iterations per pair | worst relative error of K |")
    print("|---|---|---|")
    for name in its:
        print("| %s | %.2f | %.1e |" % (name, its[name] / a.pairs, errs[name]))


if __name__ == "__main__":
    main()
