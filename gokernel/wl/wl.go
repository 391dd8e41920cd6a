// Package wl computes the explicit feature maps of the Weisfeiler–Lehman
// family (Shervashidze et al. 2011; Kriege et al. 2016) and of the vertex and
// edge label histograms: sparse count vectors, one per graph, whose products
// over a semiring (package sparsegram) are the kernels; graphgram's
// explicit-feature kernels (Python's WeisfeilerLehmanKernel and the histogram
// and hash kernels) are these maps.
//
// Labels are numbered over all the graphs of one call, so that the feature
// vectors of X and Y share one dictionary by construction; no dictionary
// outlives the call.
package wl

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// MaxIterations bounds Options.Iterations: each iteration adds one label per
// node to the features, and colour refinement stabilises after at most as
// many iterations as the largest graph has nodes (in practice a handful).
const MaxIterations = 100

// Options configures Features.
type Options struct {
	// Iterations is h ≥ 0: the labels of refinement rounds 0..h are counted
	// (h = 0 is the vertex label histogram).
	Iterations int
	// NodeLabelCol is the node feature column holding the discrete label; -1
	// starts from the node degrees (number of incident edges, a self-loop
	// counted once).
	NodeLabelCol int
	// start, when not nil, holds the round-0 label of every node of the call,
	// graph after graph, instead of NodeLabelCol: HashFeatures' hashed labels.
	start []float64
	// hash, when not nil, replaces hashSig for the signatures (tests force
	// collisions with it).
	hash func([]int32) uint64
	// EdgeLabelCol, when ≥ 0, is the edge feature column holding the edge
	// label: a node's new label then refines by the multiset of (edge label,
	// neighbour label) pairs instead of the multiset of neighbour labels.
	EdgeLabelCol int
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation between graphs; nil for none.
	Control *schedule.Control
}

// Features returns the Weisfeiler–Lehman feature matrix of graphs: row g
// counts, for every round i in 0..h, the nodes of graph g that carry each
// label of round i. Round 0 labels are the distinct values of the label
// column (or the degrees); the round-i label of node v is the pair (its round
// i−1 label, the sorted multiset of its neighbours' round i−1 labels — with
// edge labels, of the (edge label, neighbour label) pairs), numbered by first
// appearance. Every round numbers its labels after the previous round's, so
// the dot product of two rows is the WL subtree kernel and their histogram
// intersection the WL optimal-assignment kernel. A self-loop makes a node its
// own neighbour once.
func Features(graphs []*graph.Graph, opt Options) (*sparsegram.Features, error) {
	rounds, n, err := refine(graphs, opt, false)
	if err != nil {
		return nil, err
	}
	start := make([]int, len(graphs)+1) // graph g's nodes are [start[g], start[g+1]) of the call
	for g, gr := range graphs {
		start[g+1] = start[g] + gr.N
	}
	return histogram(graphs, start, rounds, n, opt)
}

// Labels returns the Weisfeiler–Lehman labels of the nodes of graphs:
// rounds[i][u] is the label of node u in round i, the nodes of the call
// numbered graph after graph, and every label of all rounds is below n. Two
// nodes of the call carry equal labels in round i exactly when their round-i
// signatures are equal, whatever else the call holds. The numbers depend on
// the call, but not their order: each round's labels are numbered in the
// order of their signatures' content (round 0 by value, round i by the
// round-(i − 1) label, then the sorted neighbour entries, compared
// lexicographically), so two labels compare the same way in every call that
// holds both. The WL framework (Shervashidze et al. 2011) evaluates a base
// kernel on the graphs relabeled by each round; a base kernel whose
// arithmetic follows the order of label values (the marginalized kernel's
// content order) then computes each pair the same way in every call.
func Labels(graphs []*graph.Graph, opt Options) (rounds [][]int32, n int, err error) {
	return refine(graphs, opt, true)
}

func checkColumns(graphs []*graph.Graph, opt Options) error {
	return graph.CheckLabelColumns(graphs, opt.NodeLabelCol, opt.EdgeLabelCol)
}
