// Package tudataset reads graph data sets in the TU Dortmund benchmark format
// (https://chrsmrrs.github.io/datasets/): comma-separated text files named
// NAME_A.txt, NAME_graph_indicator.txt and so on in one folder.
package tudataset

import (
	"fmt"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// Dataset is a loaded TU data set.
type Dataset struct {
	// Name is the data set's file prefix.
	Name string
	// Graphs holds one graph per graph id, in id order. Node feature rows are
	// [label, attributes...] (the label column only when NodeLabels), edge
	// feature rows [label, attributes...] likewise; weights are 1; each
	// undirected edge appears once; nodes keep their order in the files and
	// isolated nodes are kept.
	Graphs []*graph.Graph
	// Targets holds the graph labels (NAME_graph_labels.txt), or else the first
	// column of NAME_graph_attributes.txt; nil when neither file exists.
	Targets []float64
	// NodeLabels and EdgeLabels tell whether feature column 0 holds a label.
	NodeLabels, EdgeLabels bool
	// NodeAttrs and EdgeAttrs count the attribute columns after the label.
	NodeAttrs, EdgeAttrs int
}

// NodeLabelCol returns the node feature column of the label, or -1 if none.
func (d *Dataset) NodeLabelCol() int {
	if d.NodeLabels {
		return 0
	}
	return -1
}

// EdgeLabelCol returns the edge feature column of the label, or -1 if none.
func (d *Dataset) EdgeLabelCol() int {
	if d.EdgeLabels {
		return 0
	}
	return -1
}

// Load reads data set name from dir: dir/name_A.txt and
// dir/name_graph_indicator.txt are required; node and edge labels and
// attributes and graph labels are read when present.
func Load(dir, name string) (*Dataset, error) {
	f := files{dir: dir, name: name}
	nodes, err := readIndicator(f)
	if err != nil {
		return nil, err
	}
	nNodes := len(nodes.gid)
	// Node features: label then attributes.
	nf, err := readFeatures(f, "node_labels", "node_attributes")
	if err != nil {
		return nil, err
	}
	if err := nf.check(nNodes, "node"); err != nil {
		return nil, err
	}
	edges, ef, err := readEdges(f, nodes)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Name: name,
		NodeLabels: nf.hasLabels, NodeAttrs: nf.nattrs,
		EdgeLabels: ef.hasLabels, EdgeAttrs: ef.nattrs}
	if ds.Graphs, err = assemble(name, nodes, nf, edges, ef.cols()); err != nil {
		return nil, err
	}
	if ds.Targets, err = readTargets(f, len(nodes.sizes)); err != nil {
		return nil, err
	}
	return ds, nil
}

// LabelsOnly returns the data set's graphs with their attribute columns dropped:
// node and edge features are the label alone (one column) where the set has
// labels, none otherwise. The structure-and-label benchmarks (octile, mgk) read
// the sets this way, whatever attributes a set carries.
func (d *Dataset) LabelsOnly() ([]*graph.Graph, error) {
	keep := func(feat []float64, cols int, labeled bool) ([]float64, int) {
		if !labeled || cols == 0 {
			return nil, 0
		}
		out := make([]float64, len(feat)/cols)
		for i := range out {
			out[i] = feat[i*cols]
		}
		return out, 1
	}
	gs := make([]*graph.Graph, len(d.Graphs))
	for i, g := range d.Graphs {
		nf, nc := keep(g.NodeFeat, g.NodeCols, d.NodeLabels)
		ef, ec := keep(g.EdgeFeat, g.EdgeCols, d.EdgeLabels)
		h, err := g.WithFeatures(nf, nc, ef, ec)
		if err != nil {
			return nil, fmt.Errorf("%s graph %d: %w", d.Name, i+1, err)
		}
		gs[i] = h
	}
	return gs, nil
}
