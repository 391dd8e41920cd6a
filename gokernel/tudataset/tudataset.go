// Package tudataset reads graph data sets in the TU Dortmund benchmark format
// (https://chrsmrrs.github.io/datasets/): comma-separated text files named
// NAME_A.txt, NAME_graph_indicator.txt and so on in one folder.
package tudataset

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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

// table is a parsed file: rows of float64 values, each with its line number.
type table struct {
	path string
	rows [][]float64
}

// readTable parses a comma-separated file of numbers. missing reports whether
// the file does not exist (not an error for optional files).
func readTable(path string) (t table, missing bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, true, nil
	}
	if err != nil {
		return t, false, err
	}
	defer f.Close()
	t.path = path
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			// A blank line would shift every later row onto the wrong node,
			// except trailing ones, which are tolerated below.
			t.rows = append(t.rows, nil)
			continue
		}
		fields := strings.Split(s, ",")
		row := make([]float64, len(fields))
		for k, field := range fields {
			field = strings.TrimSpace(field)
			x, err := strconv.ParseFloat(field, 64)
			if err != nil {
				return t, false, fmt.Errorf("%s:%d: field %d: %q is not a number", path, line, k+1, field)
			}
			row[k] = x
		}
		t.rows = append(t.rows, row)
	}
	if err := sc.Err(); err != nil {
		return t, false, fmt.Errorf("%s: %w", path, err)
	}
	for len(t.rows) > 0 && t.rows[len(t.rows)-1] == nil {
		t.rows = t.rows[:len(t.rows)-1]
	}
	for i, r := range t.rows {
		if r == nil {
			return t, false, fmt.Errorf("%s:%d: empty line", path, i+1)
		}
	}
	return t, false, nil
}

// check verifies that t has want rows of width columns (width 0: any constant
// width) and returns the width.
func (t *table) check(want, width int, what string) (int, error) {
	if len(t.rows) != want {
		return 0, fmt.Errorf("%s: %d lines, want one per %s (%d)", t.path, len(t.rows), what, want)
	}
	if width == 0 && len(t.rows) > 0 {
		width = len(t.rows[0])
	}
	for i, r := range t.rows {
		if len(r) != width {
			return 0, fmt.Errorf("%s:%d: %d values, want %d", t.path, i+1, len(r), width)
		}
	}
	return width, nil
}

// integral returns x as an int if it is a whole number.
func integral(x float64, path string, line int) (int, error) {
	i := int(x)
	if float64(i) != x {
		return 0, fmt.Errorf("%s:%d: %v is not an integer", path, line, x)
	}
	return i, nil
}

// Load reads data set name from dir: dir/name_A.txt and
// dir/name_graph_indicator.txt are required; node and edge labels and
// attributes and graph labels are read when present.
func Load(dir, name string) (*Dataset, error) {
	file := func(suffix string) string { return filepath.Join(dir, name+"_"+suffix+".txt") }
	must := func(suffix string) (table, error) {
		t, missing, err := readTable(file(suffix))
		if missing {
			return t, fmt.Errorf("tudataset: %s is missing", file(suffix))
		}
		return t, err
	}
	opt := func(suffix string) (table, bool, error) {
		t, missing, err := readTable(file(suffix))
		return t, !missing, err
	}

	ind, err := must("graph_indicator")
	if err != nil {
		return nil, err
	}
	nNodes := len(ind.rows)
	if _, err := ind.check(nNodes, 1, "node"); err != nil {
		return nil, err
	}
	// Graph ids are 1..N; a node's local index is its rank among its graph's
	// nodes in file order.
	gid := make([]int, nNodes)
	local := make([]int, nNodes)
	var sizes []int
	for v, r := range ind.rows {
		g, err := integral(r[0], ind.path, v+1)
		if err != nil {
			return nil, err
		}
		if g < 1 || g > nNodes {
			return nil, fmt.Errorf("%s:%d: graph id %d out of range 1..%d", ind.path, v+1, g, nNodes)
		}
		for len(sizes) < g {
			sizes = append(sizes, 0)
		}
		gid[v], local[v] = g-1, sizes[g-1]
		sizes[g-1]++
	}
	for g, n := range sizes {
		if n == 0 {
			return nil, fmt.Errorf("%s: graph id %d has no nodes; ids must run from 1 without gaps", ind.path, g+1)
		}
	}
	nGraphs := len(sizes)
	ds := &Dataset{Name: name}

	// Node features: label then attributes.
	nl, hasNL, err := opt("node_labels")
	if err != nil {
		return nil, err
	}
	na, hasNA, err := opt("node_attributes")
	if err != nil {
		return nil, err
	}
	if hasNL {
		if _, err := nl.check(nNodes, 1, "node"); err != nil {
			return nil, err
		}
		ds.NodeLabels = true
	}
	if hasNA {
		if ds.NodeAttrs, err = na.check(nNodes, 0, "node"); err != nil {
			return nil, err
		}
	}
	nodeCols := ds.NodeAttrs
	if ds.NodeLabels {
		nodeCols++
	}

	// Edges: each undirected edge once, at its first appearance; the reverse
	// line must carry the same label and attributes.
	A, err := must("A")
	if err != nil {
		return nil, err
	}
	el, hasEL, err := opt("edge_labels")
	if err != nil {
		return nil, err
	}
	ea, hasEA, err := opt("edge_attributes")
	if err != nil {
		return nil, err
	}
	if _, err := A.check(len(A.rows), 2, "edge"); err != nil {
		return nil, err
	}
	if hasEL {
		if _, err := el.check(len(A.rows), 1, "line of "+name+"_A.txt"); err != nil {
			return nil, err
		}
		ds.EdgeLabels = true
	}
	if hasEA {
		if ds.EdgeAttrs, err = ea.check(len(A.rows), 0, "line of "+name+"_A.txt"); err != nil {
			return nil, err
		}
	}
	edgeCols := ds.EdgeAttrs
	if ds.EdgeLabels {
		edgeCols++
	}
	edgeRow := func(line int) []float64 {
		row := make([]float64, 0, edgeCols)
		if hasEL {
			row = append(row, el.rows[line]...)
		}
		if hasEA {
			row = append(row, ea.rows[line]...)
		}
		return row
	}

	type gEdges struct {
		ends []int64
		feat []float64
	}
	per := make([]gEdges, nGraphs)
	seen := make(map[[2]int]int, len(A.rows)/2) // undirected global pair → first line
	for line, r := range A.rows {
		u, err := integral(r[0], A.path, line+1)
		if err != nil {
			return nil, err
		}
		v, err := integral(r[1], A.path, line+1)
		if err != nil {
			return nil, err
		}
		if u < 1 || v < 1 || u > nNodes || v > nNodes {
			return nil, fmt.Errorf("%s:%d: node id out of range 1..%d in edge %d, %d", A.path, line+1, nNodes, u, v)
		}
		u, v = u-1, v-1
		if gid[u] != gid[v] {
			return nil, fmt.Errorf("%s:%d: edge %d, %d joins graph %d to graph %d", A.path, line+1, u+1, v+1, gid[u]+1, gid[v]+1)
		}
		key := [2]int{min(u, v), max(u, v)}
		if first, dup := seen[key]; dup {
			a, b := edgeRow(first), edgeRow(line)
			for k := range a {
				if a[k] != b[k] {
					return nil, fmt.Errorf("%s:%d: edge %d, %d has features %v but line %d gave %v", A.path, line+1, u+1, v+1, b, first+1, a)
				}
			}
			continue
		}
		seen[key] = line
		g := &per[gid[u]]
		g.ends = append(g.ends, int64(local[u]), int64(local[v]))
		g.feat = append(g.feat, edgeRow(line)...)
	}

	// Assemble graphs.
	nodeFeat := make([][]float64, nGraphs)
	for v := 0; v < nNodes; v++ {
		g := gid[v]
		if hasNL {
			nodeFeat[g] = append(nodeFeat[g], nl.rows[v]...)
		}
		if hasNA {
			nodeFeat[g] = append(nodeFeat[g], na.rows[v]...)
		}
	}
	ds.Graphs = make([]*graph.Graph, nGraphs)
	for g := 0; g < nGraphs; g++ {
		m := len(per[g].ends) / 2
		w := make([]float64, m)
		for k := range w {
			w[k] = 1
		}
		gr, err := graph.New(sizes[g], per[g].ends, w, nodeFeat[g], nodeCols, per[g].feat, edgeCols)
		if err != nil {
			return nil, fmt.Errorf("tudataset: %s graph %d: %w", name, g+1, err)
		}
		ds.Graphs[g] = gr
	}

	// Targets.
	gl, hasGL, err := opt("graph_labels")
	if err != nil {
		return nil, err
	}
	if !hasGL {
		if gl, hasGL, err = opt("graph_attributes"); err != nil {
			return nil, err
		}
	}
	if hasGL {
		if len(gl.rows) != nGraphs {
			return nil, fmt.Errorf("%s: %d lines, want one per graph (%d)", gl.path, len(gl.rows), nGraphs)
		}
		ds.Targets = make([]float64, nGraphs)
		for g, r := range gl.rows {
			ds.Targets[g] = r[0]
		}
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
