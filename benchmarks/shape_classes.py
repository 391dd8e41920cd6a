"""How much of a Gram matrix SIMD lanes over pairs "of one shape" could cover.

Issue #21 lists, among the candidates for faster molecular Grams, running
several pairs of equal shape in the SIMD lanes of one solve. The lanes of one
solve share every index of the sweeps: the pairs (G, H1), ..., (G, Hk) of
one batch need H1, ..., Hk with the same edges after renumbering their nodes,
i.e. isomorphic as unlabeled graphs (labels, weights and start probabilities
may differ: they only change the numbers). For each data set this prints the
isomorphism classes of its unlabeled graphs and the share of a Gram matrix's
pairs that batches of 4 (AVX2, float64) or 8 (AVX-512) such pairs could hold:
for every G, class c fills floor(|c|/k) full batches, so the share is
sum_c k*floor(|c|/k) / n. It is an upper bound: the colour-refinement
quotient the solver runs on depends on the labels and splits classes further.

    python3 benchmarks/shape_classes.py [--sets MUTAG NCI1 ESOL DRUG QM7]
"""

import argparse
import os
import sys
import warnings
from collections import defaultdict

import networkx as nx

from _common import require

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))


def load(name, data):
    from graphgram import datasets
    if name in ("MUTAG", "NCI1", "ENZYMES", "PROTEINS"):
        graphs, _ = datasets.load_tu(os.path.join(data, name))
        return graphs
    from rdkit import RDLogger
    RDLogger.DisableLog("rdApp.*")  # QM7's lone hydrogens
    from bench_solver import molecule_set
    graphs, _ = molecule_set(name, 0)
    return graphs


def classes(graphs):
    """The isomorphism classes of the unlabeled graphs, as a list of sizes."""
    buckets = defaultdict(list)
    for g in graphs:
        h = nx.Graph()
        h.add_nodes_from(range(g.n_nodes))
        h.add_edges_from(map(tuple, g.edges.tolist()))
        key = (h.number_of_nodes(), h.number_of_edges(), nx.weisfeiler_lehman_graph_hash(h, iterations=3))
        for members in buckets[key]:
            if nx.is_isomorphic(members[0], h):
                members.append(h)
                break
        else:
            buckets[key].append([h])
    return [len(m) for b in buckets.values() for m in b]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="*", default=["MUTAG", "NCI1", "ESOL", "DRUG", "QM7"])
    args = p.parse_args()
    data = str(require())
    # networkx 3.5 changed its hashes of unlabeled graphs: the buckets only
    # group candidates, the classes come from is_isomorphic.
    warnings.filterwarnings("ignore", message="The hashes produced", category=UserWarning)
    print("%-6s %6s %8s %12s %12s %12s" % ("set", "graphs", "classes", "largest", "in 4-lanes", "in 8-lanes"))
    for name in args.sets:
        sizes = classes(load(name, data))
        n = sum(sizes)
        share = {k: sum(k * (s // k) for s in sizes) / n for k in (4, 8)}
        print("%-6s %6d %8d %12d %11.1f%% %11.1f%%" % (name, n, len(sizes), max(sizes), 100 * share[4], 100 * share[8]))


if __name__ == "__main__":
    main()
