package tudataset

import (
	"fmt"
	"path/filepath"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// files names and reads the files of data set name in folder dir.
type files struct {
	dir, name string
}

// path returns the file of the given suffix: dir/name_suffix.txt.
func (f files) path(suffix string) string {
	return filepath.Join(f.dir, f.name+"_"+suffix+".txt")
}

// must reads a required file: its absence is an error.
func (f files) must(suffix string) (table, error) {
	t, missing, err := readTable(f.path(suffix))
	if missing {
		return t, fmt.Errorf("tudataset: %s is missing", f.path(suffix))
	}
	return t, err
}

// optional reads a file that may be absent, and reports whether it exists.
func (f files) optional(suffix string) (table, bool, error) {
	t, missing, err := readTable(f.path(suffix))
	return t, !missing, err
}

// nodeIndex places the data set's nodes in their graphs.
type nodeIndex struct {
	// gid and local are each node's graph (from 0) and its index among its
	// graph's nodes, in file order.
	gid, local []int
	// sizes counts each graph's nodes.
	sizes []int
}

// readIndicator reads NAME_graph_indicator.txt: one graph id per node, ids
// 1..N without gaps; a node's local index is its rank among its graph's
// nodes in file order.
func readIndicator(f files) (nodeIndex, error) {
	ind, err := f.must("graph_indicator")
	if err != nil {
		return nodeIndex{}, err
	}
	nNodes := len(ind.rows)
	if _, err := ind.check(nNodes, 1, "node"); err != nil {
		return nodeIndex{}, err
	}
	ni := nodeIndex{gid: make([]int, nNodes), local: make([]int, nNodes)}
	for v, r := range ind.rows {
		g, err := integral(r[0], ind.path, v+1)
		if err != nil {
			return nodeIndex{}, err
		}
		if g < 1 || g > nNodes {
			return nodeIndex{}, fmt.Errorf("%s:%d: graph id %d out of range 1..%d", ind.path, v+1, g, nNodes)
		}
		for len(ni.sizes) < g {
			ni.sizes = append(ni.sizes, 0)
		}
		ni.gid[v], ni.local[v] = g-1, ni.sizes[g-1]
		ni.sizes[g-1]++
	}
	for g, n := range ni.sizes {
		if n == 0 {
			return nodeIndex{}, fmt.Errorf("%s: graph id %d has no nodes; ids must run from 1 without gaps", ind.path, g+1)
		}
	}
	return ni, nil
}

// features are the optional label and attribute files of the nodes (one row
// per node) or of the edges (one row per line of NAME_A.txt).
type features struct {
	labels, attrs       table
	hasLabels, hasAttrs bool
	// nattrs counts the attribute columns (set by check).
	nattrs int
}

// readFeatures reads the label file and the attribute file of the given
// suffixes, each when present.
func readFeatures(f files, labelSuffix, attrSuffix string) (features, error) {
	var ft features
	var err error
	if ft.labels, ft.hasLabels, err = f.optional(labelSuffix); err != nil {
		return ft, err
	}
	if ft.attrs, ft.hasAttrs, err = f.optional(attrSuffix); err != nil {
		return ft, err
	}
	return ft, nil
}

// check verifies that the labels have n rows of one value and the
// attributes n rows of one width, and sets nattrs; what names a row's
// owner in errors.
func (ft *features) check(n int, what string) error {
	if ft.hasLabels {
		if _, err := ft.labels.check(n, 1, what); err != nil {
			return err
		}
	}
	if ft.hasAttrs {
		var err error
		if ft.nattrs, err = ft.attrs.check(n, 0, what); err != nil {
			return err
		}
	}
	return nil
}

// cols returns the width of a feature row: the label, then the attributes.
func (ft *features) cols() int {
	if ft.hasLabels {
		return ft.nattrs + 1
	}
	return ft.nattrs
}

// appendRow appends row i's label and attributes to dst.
func (ft *features) appendRow(dst []float64, i int) []float64 {
	if ft.hasLabels {
		dst = append(dst, ft.labels.rows[i]...)
	}
	if ft.hasAttrs {
		dst = append(dst, ft.attrs.rows[i]...)
	}
	return dst
}

// graphEdges are one graph's edges: node pairs (local indices) and feature
// rows.
type graphEdges struct {
	ends []int64
	feat []float64
}

// readEdges reads NAME_A.txt, with its edge labels and attributes when
// present, into each graph's edges: each undirected edge once, at its first
// appearance; the reverse line must carry the same label and attributes.
func readEdges(f files, nodes nodeIndex) ([]graphEdges, features, error) {
	A, err := f.must("A")
	if err != nil {
		return nil, features{}, err
	}
	ef, err := readFeatures(f, "edge_labels", "edge_attributes")
	if err != nil {
		return nil, ef, err
	}
	if _, err := A.check(len(A.rows), 2, "edge"); err != nil {
		return nil, ef, err
	}
	if err := ef.check(len(A.rows), "line of "+f.name+"_A.txt"); err != nil {
		return nil, ef, err
	}
	edgeCols := ef.cols()
	edgeRow := func(line int) []float64 { return ef.appendRow(make([]float64, 0, edgeCols), line) }
	nNodes, gid, local := len(nodes.gid), nodes.gid, nodes.local
	per := make([]graphEdges, len(nodes.sizes))
	seen := make(map[[2]int]int, len(A.rows)/2) // undirected global pair → first line
	for line, r := range A.rows {
		u, err := integral(r[0], A.path, line+1)
		if err != nil {
			return nil, ef, err
		}
		v, err := integral(r[1], A.path, line+1)
		if err != nil {
			return nil, ef, err
		}
		if u < 1 || v < 1 || u > nNodes || v > nNodes {
			return nil, ef, fmt.Errorf("%s:%d: node id out of range 1..%d in edge %d, %d", A.path, line+1, nNodes, u, v)
		}
		u, v = u-1, v-1
		if gid[u] != gid[v] {
			return nil, ef, fmt.Errorf("%s:%d: edge %d, %d joins graph %d to graph %d", A.path, line+1, u+1, v+1, gid[u]+1, gid[v]+1)
		}
		key := [2]int{min(u, v), max(u, v)}
		if first, dup := seen[key]; dup {
			a, b := edgeRow(first), edgeRow(line)
			for k := range a {
				if a[k] != b[k] {
					return nil, ef, fmt.Errorf("%s:%d: edge %d, %d has features %v but line %d gave %v", A.path, line+1, u+1, v+1, b, first+1, a)
				}
			}
			continue
		}
		seen[key] = line
		g := &per[gid[u]]
		g.ends = append(g.ends, int64(local[u]), int64(local[v]))
		g.feat = ef.appendRow(g.feat, line)
	}
	return per, ef, nil
}

// assemble builds each graph of data set name from its nodes' feature rows
// (nf) and its edges, every edge of weight 1.
func assemble(name string, nodes nodeIndex, nf features, edges []graphEdges, edgeCols int) ([]*graph.Graph, error) {
	nGraphs := len(nodes.sizes)
	nodeFeat := make([][]float64, nGraphs)
	for v, g := range nodes.gid {
		nodeFeat[g] = nf.appendRow(nodeFeat[g], v)
	}
	gs := make([]*graph.Graph, nGraphs)
	for g := 0; g < nGraphs; g++ {
		m := len(edges[g].ends) / 2
		w := make([]float64, m)
		for k := range w {
			w[k] = 1
		}
		gr, err := graph.New(nodes.sizes[g], edges[g].ends, w, nodeFeat[g], nf.cols(), edges[g].feat, edgeCols)
		if err != nil {
			return nil, fmt.Errorf("tudataset: %s graph %d: %w", name, g+1, err)
		}
		gs[g] = gr
	}
	return gs, nil
}

// readTargets reads NAME_graph_labels.txt, or else the first column of
// NAME_graph_attributes.txt, one row per graph; nil when neither exists.
func readTargets(f files, nGraphs int) ([]float64, error) {
	gl, hasGL, err := f.optional("graph_labels")
	if err != nil {
		return nil, err
	}
	if !hasGL {
		if gl, hasGL, err = f.optional("graph_attributes"); err != nil {
			return nil, err
		}
	}
	if !hasGL {
		return nil, nil
	}
	if len(gl.rows) != nGraphs {
		return nil, fmt.Errorf("%s: %d lines, want one per graph (%d)", gl.path, len(gl.rows), nGraphs)
	}
	targets := make([]float64, nGraphs)
	for g, r := range gl.rows {
		targets[g] = r[0]
	}
	return targets, nil
}
