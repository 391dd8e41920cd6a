// Package gokernel is the Go core of graphgram: graph kernels computed on the CPU,
// usable from Go alone. Its sub-packages each do one job:
//
//   - graph: labeled, weighted, undirected graphs and their packed batch form;
//   - microkernel: base kernels on node and edge features, composable;
//   - schedule: parallel loops over graph pairs, with panics turned into errors;
//   - mgk: the marginalized graph kernel (Kashima et al., GraphDot's convention);
//   - tudataset: the TU benchmark data-set format;
//   - cmd/graphgram: a command that writes a Gram matrix as .npy.
package gokernel
