// Package gokernel is the Go core of graphgram: graph kernels computed on the CPU,
// usable from Go alone. Its sub-packages each do one job:
//
//   - graph: labeled, weighted, undirected graphs and their packed batch form;
//   - microkernel: base kernels on node and edge features, composable, with gradients;
//   - schedule: parallel loops over graph pairs, cancellation and progress
//     (Control), panics turned into errors, the X/Y operand conventions;
//   - mgk: the marginalized graph kernel (Kashima et al., GraphDot's convention);
//   - spkernel: the shortest-path kernel (Borgwardt and Kriegel; FCSP joins);
//   - rwkernel: the random-walk kernel (geometric and exponential, exact);
//   - wl: explicit feature maps (Weisfeiler–Lehman subtree and optimal
//     assignment, vertex and edge histograms, hash features): sparse counts;
//   - propagation: the propagation kernels' feature maps (label distributions
//     or attributes propagated along edges, hashed per round): sparse counts;
//   - nhash: the neighborhood hash kernel's per-round label counts and the
//     combination of their intersection Grams;
//   - nspdk: the neighborhood subgraph pairwise distance kernel's per-block
//     counts of neighbourhood-subgraph pairs and the blocks' cosine sum;
//   - graphlet: counts of 3-, 4- and 5-node induced subgraphs, exact or sampled;
//   - pyramid: the pyramid match kernel's weighted histograms of spectral node
//     embeddings on L grid levels;
//   - oddsth: the ODD-ST_h kernel's counts of tree visits of breadth-first DAGs;
//   - wwl: the Wasserstein Weisfeiler–Lehman distance: the earth mover's
//     distance between two graphs' sets of WL node embeddings;
//   - emd: the exact earth mover's distance between uniform point sets, for wwl;
//   - graphhopper: the GraphHopper kernel (node pairs weighted by their
//     positions on the graphs' shortest paths);
//   - sparsegram: Gram matrices Φ_X Φ_Yᵀ of those sparse maps over a semiring;
//   - octile, reorder: 8×8-tiled product mat-vecs and node reorderings for them;
//   - vec: fused vector loops of the conjugate-gradient solver (AVX2 or portable);
//   - tudataset: the TU benchmark data-set format;
//   - cputime: the process's CPU time, for benchmarks and timing tests;
//   - cmd/graphgram: a command that writes a Gram matrix as .npy;
//   - cmd/tilestats: tile statistics of the reorderings on TU data sets.
//
// The kernel packages share one contract: Gram writes K(X[i], Y[j]) to
// out[i*len(Y)+j], computing only the upper triangle and mirroring it when
// symmetric (Y is then X), and Diag writes K(x, x); spkernel and rwkernel take
// (X, Y, symmetric, opt, out), mgk adds per-node start probabilities and
// iteration counts. Errors name graphs X[i] and Y[j] (schedule.OperandName).
// The kernels that evaluate their matrix pair by pair (spkernel, rwkernel,
// graphhopper, wwl) share one pair loop, schedule.RunPairs, which writes and
// mirrors the entries, counts progress and names the pair of a failing entry.
// Every Options has a Control field through which a caller stops the
// computation and watches its progress.
//
// The explicit-feature kernels are one family under one name above the core:
// Python's kernels/explicit.py, pybind's explicit.go and the CUDA bridge's
// ExplicitGram. In the core each feature map lives in the package named after
// what it computes (wl: the Weisfeiler–Lehman maps, histograms and hash
// features; propagation, nhash, graphlet), and all of them return
// sparsegram.Features, whose Gram matrix sparsegram computes: a new
// explicit-feature kernel is a new map, not a new engine.
//
// Runnable examples of the calls a Go program makes (build graphs, choose
// base kernels, compute a Gram matrix) sit beside the code in the
// example_test.go files of graph, microkernel, mgk, spkernel, rwkernel and wl.
package gokernel
