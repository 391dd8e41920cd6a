package tudataset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// writeSet writes the files of a data set named T into a new folder.
func writeSet(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for suffix, text := range files {
		if err := os.WriteFile(filepath.Join(dir, "T_"+suffix+".txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// small is a data set of two graphs: graph 1 has nodes 1–3 with edges 1–2
// and 2–3 (node order 1, 2, 3) and graph 2 has nodes 4–6 with edge 4–6 and
// node 5 isolated. Each undirected edge is listed in both directions.
func small() map[string]string {
	return map[string]string{
		"A":               "1, 2\n2, 1\n2, 3\n3, 2\n4, 6\n6, 4\n",
		"graph_indicator": "1\n1\n1\n2\n2\n2\n",
		"graph_labels":    "1\n-1\n",
		"node_labels":     "0\n1\n0\n2\n2\n1\n",
		"node_attributes": "0.5, 1.0\n1.5, 2.0\n2.5, 3.0\n3.5, 4.0\n4.5, 5.0\n5.5, 6.0\n",
		"edge_labels":     "7\n7\n8\n8\n9\n9\n",
	}
}

func TestLoadSmall(t *testing.T) {
	ds, err := Load(writeSet(t, small()), "T")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Graphs) != 2 || !slices.Equal(ds.Targets, []float64{1, -1}) {
		t.Fatalf("%d graphs, targets %v", len(ds.Graphs), ds.Targets)
	}
	if !ds.NodeLabels || ds.NodeAttrs != 2 || !ds.EdgeLabels || ds.EdgeAttrs != 0 || ds.NodeLabelCol() != 0 || ds.EdgeLabelCol() != 0 {
		t.Errorf("flags %+v", ds)
	}
	for k, tc := range []struct {
		n     int
		edges []int32
		nf    []float64
		ef    []float64
		deg   []float64
	}{
		{3, []int32{0, 1, 1, 2}, []float64{0, 0.5, 1, 1, 1.5, 2, 0, 2.5, 3}, []float64{7, 8}, []float64{1, 2, 1}},
		{3, []int32{0, 2}, []float64{2, 3.5, 4, 2, 4.5, 5, 1, 5.5, 6}, []float64{9}, []float64{1, 0, 1}},
	} {
		g := ds.Graphs[k]
		var edges []int32
		for e := range g.EdgeU {
			edges = append(edges, g.EdgeU[e], g.EdgeV[e])
		}
		if g.N != tc.n || !slices.Equal(edges, tc.edges) || !slices.Equal(g.NodeFeat, tc.nf) ||
			!slices.Equal(g.EdgeFeat, tc.ef) || !slices.Equal(g.Degrees(), tc.deg) || g.NodeCols != 3 || g.EdgeCols != 1 {
			t.Errorf("graph %d: n %d edges %v nf %v ef %v degrees %v", k, g.N, edges, g.NodeFeat, g.EdgeFeat, g.Degrees())
		}
		for _, w := range g.Weight {
			if w != 1 {
				t.Errorf("graph %d: weight %v", k, w)
			}
		}
	}
}

func TestLabelsOnly(t *testing.T) {
	ds, err := Load(writeSet(t, small()), "T")
	if err != nil {
		t.Fatal(err)
	}
	gs, err := ds.LabelsOnly()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range [][]float64{{0, 1, 0}, {2, 2, 1}} {
		g, full := gs[k], ds.Graphs[k]
		if g.NodeCols != 1 || !slices.Equal(g.NodeFeat, want) || g.EdgeCols != 1 || !slices.Equal(g.EdgeFeat, full.EdgeFeat) ||
			!slices.Equal(g.EdgeU, full.EdgeU) || !slices.Equal(g.EdgeV, full.EdgeV) || !slices.Equal(g.Weight, full.Weight) {
			t.Errorf("graph %d: node features %v (%d cols), edge features %v", k, g.NodeFeat, g.NodeCols, g.EdgeFeat)
		}
	}
	// A set without labels keeps no feature columns.
	files := small()
	delete(files, "node_labels")
	delete(files, "edge_labels")
	if ds, err = Load(writeSet(t, files), "T"); err != nil {
		t.Fatal(err)
	}
	if gs, err = ds.LabelsOnly(); err != nil || gs[0].NodeCols != 0 || gs[0].EdgeCols != 0 {
		t.Errorf("unlabeled: %v, %d node and %d edge columns", err, gs[0].NodeCols, gs[0].EdgeCols)
	}
}

func TestLoadMinimal(t *testing.T) {
	// Only the required files, an edge listed once, a self-loop, trailing blank line.
	ds, err := Load(writeSet(t, map[string]string{
		"A":               "1, 2\n2, 2\n",
		"graph_indicator": "1\n1\n\n",
	}), "T")
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graphs[0]
	if ds.Targets != nil || ds.NodeLabels || ds.EdgeLabels || g.NodeCols != 0 || g.EdgeCols != 0 || g.NumEdges() != 2 {
		t.Errorf("%+v %+v", ds, g)
	}
	if ds.NodeLabelCol() != -1 || ds.EdgeLabelCol() != -1 {
		t.Error("label columns reported without labels")
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		change   map[string]string // "" removes the file
		contains string
	}{
		{"no A", map[string]string{"A": ""}, "T_A.txt is missing"},
		{"no indicator", map[string]string{"graph_indicator": ""}, "T_graph_indicator.txt is missing"},
		{"bad number", map[string]string{"node_labels": "0\n1\nx\n2\n2\n1\n"}, `T_node_labels.txt:3: field 1: "x" is not a number`},
		{"short labels", map[string]string{"node_labels": "0\n1\n"}, "2 lines, want one per node (6)"},
		{"ragged attributes", map[string]string{"node_attributes": "1,2\n1,2\n1\n1,2\n1,2\n1,2\n"}, "T_node_attributes.txt:3: 1 values, want 2"},
		{"cross-graph edge", map[string]string{"A": "1, 4\n4, 1\n", "edge_labels": ""}, "joins graph 1 to graph 2"},
		{"node out of range", map[string]string{"A": "1, 7\n", "edge_labels": ""}, "out of range 1..6"},
		{"fractional id", map[string]string{"A": "1.5, 2\n", "edge_labels": ""}, "1.5 is not an integer"},
		{"edge labels count", map[string]string{"edge_labels": "7\n"}, "want one per line of T_A.txt"},
		{"inconsistent edge label", map[string]string{"edge_labels": "7\n8\n8\n8\n9\n9\n"}, "has features [8] but line 1 gave [7]"},
		{"graph gap", map[string]string{"graph_indicator": "1\n1\n1\n3\n3\n3\n"}, "graph id 2 has no nodes"},
		{"graph labels count", map[string]string{"graph_labels": "1\n"}, "1 lines, want one per graph (2)"},
		{"empty line", map[string]string{"node_labels": "0\n\n0\n2\n2\n1\n"}, "T_node_labels.txt:2: empty line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := small()
			for k, v := range tc.change {
				if v == "" {
					delete(files, k)
				} else {
					files[k] = v
				}
			}
			_, err := Load(writeSet(t, files), "T")
			if err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %v, want one containing %q", err, tc.contains)
			}
		})
	}
}

// TestMUTAG checks the shared MUTAG copy when it is present: 188 graphs,
// 3371 nodes, 7442 lines in MUTAG_A.txt giving 3721 undirected edges.
func TestMUTAG(t *testing.T) {
	dir, err := SetDir("MUTAG")
	if err != nil {
		t.Skip(err)
	}
	ds, err := Load(dir, "MUTAG")
	if err != nil {
		t.Fatal(err)
	}
	nodes, edges := 0, 0
	for _, g := range ds.Graphs {
		nodes += g.N
		edges += g.NumEdges()
	}
	if len(ds.Graphs) != 188 || nodes != 3371 || edges != 3721 || len(ds.Targets) != 188 {
		t.Errorf("%d graphs, %d nodes, %d edges, %d targets", len(ds.Graphs), nodes, edges, len(ds.Targets))
	}
	// MUTAG graph 1 has 17 nodes and 19 bonds.
	if g := ds.Graphs[0]; g.N != 17 || g.NumEdges() != 19 {
		t.Errorf("graph 1: %d nodes, %d edges", g.N, g.NumEdges())
	}
}

// TestDir: $GRAPHGRAM_DATASETS wins; without it the folder is found by walking
// up from the working directory; a missing folder is an error naming the
// variable.
func TestDir(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "shared", "datasets")
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "gokernel", "pkg")
	for _, d := range []string{filepath.Join(data, "MUTAG"), deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	t.Setenv(DirEnv, "")
	if got, err := Dir(); err != nil || got != data {
		t.Errorf("walking up: Dir() = %q, %v; want %q", got, err, data)
	}
	if got, err := SetDir("MUTAG"); err != nil || got != filepath.Join(data, "MUTAG") {
		t.Errorf("SetDir(MUTAG) = %q, %v", got, err)
	}
	if _, err := SetDir("NCI1"); err == nil || !strings.Contains(err.Error(), DirEnv) {
		t.Errorf("SetDir(NCI1) error %v, want one naming $%s", err, DirEnv)
	}
	other := t.TempDir()
	t.Setenv(DirEnv, other)
	if got, err := Dir(); err != nil || got != other {
		t.Errorf("with $%s: Dir() = %q, %v; want %q", DirEnv, got, err, other)
	}
	t.Setenv(DirEnv, filepath.Join(other, "missing"))
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), DirEnv) {
		t.Errorf("missing $%s folder: error %v", DirEnv, err)
	}
}

// TestFindUp walks file systems the test defines whole, so that no folder of
// the machine (a shared/ in the system's temporary folder, say) can change
// what it finds; each case lists every path the walk may look at.
func TestFindUp(t *testing.T) {
	const start = "/a/b/c"
	for _, tc := range []struct {
		name  string
		files fstest.MapFS // paths without the leading slash
		want  string       // "" for the error
		looks []string     // every path stat is asked about, in order
	}{
		{
			name:  "in the working directory",
			files: fstest.MapFS{"a/b/go.mod": {}, "a/b/c/shared/datasets": {Mode: fs.ModeDir}},
			want:  "/a/b/c/shared/datasets",
			looks: []string{"/a/b/c/shared/datasets"},
		},
		{
			name:  "beside the module root",
			files: fstest.MapFS{"a/b/go.mod": {}, "a/shared/datasets": {Mode: fs.ModeDir}},
			want:  "/a/shared/datasets",
			looks: []string{"/a/b/c/shared/datasets", "/a/b/c/go.mod", "/a/b/shared/datasets", "/a/b/go.mod", "/a/shared/datasets"},
		},
		{
			name:  "above the module root's parent: not found",
			files: fstest.MapFS{"a/b/go.mod": {}, "shared/datasets": {Mode: fs.ModeDir}},
			looks: []string{"/a/b/c/shared/datasets", "/a/b/c/go.mod", "/a/b/shared/datasets", "/a/b/go.mod", "/a/shared/datasets"},
		},
		{
			name:  "the working directory is the module root",
			files: fstest.MapFS{"a/b/c/go.mod": {}, "a/shared/datasets": {Mode: fs.ModeDir}},
			looks: []string{"/a/b/c/shared/datasets", "/a/b/c/go.mod", "/a/b/shared/datasets"},
		},
		{
			name:  "a file named datasets is not the folder",
			files: fstest.MapFS{"a/b/go.mod": {}, "a/b/shared/datasets": {}},
			looks: []string{"/a/b/c/shared/datasets", "/a/b/c/go.mod", "/a/b/shared/datasets", "/a/b/go.mod", "/a/shared/datasets"},
		},
		{
			name:  "outside a module, up to the root",
			files: fstest.MapFS{"shared/datasets": {Mode: fs.ModeDir}},
			want:  "/shared/datasets",
			looks: []string{"/a/b/c/shared/datasets", "/a/b/c/go.mod", "/a/b/shared/datasets", "/a/b/go.mod", "/a/shared/datasets", "/a/go.mod", "/shared/datasets"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var looks []string
			stat := func(p string) (fs.FileInfo, error) {
				p = filepath.ToSlash(p)
				looks = append(looks, p)
				return tc.files.Stat(strings.TrimPrefix(p, "/"))
			}
			got, err := findUp(filepath.FromSlash(start), stat)
			if !slices.Equal(looks, tc.looks) {
				t.Errorf("looked at %q,\nwant %q", looks, tc.looks)
			}
			if tc.want != "" {
				if err != nil || filepath.ToSlash(got) != tc.want {
					t.Errorf("findUp = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), DirEnv) {
				t.Errorf("findUp = %q, %v; want an error naming $%s", got, err, DirEnv)
			}
		})
	}
}
