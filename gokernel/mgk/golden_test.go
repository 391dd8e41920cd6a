package mgk

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/tudataset"
	"github.com/sbinet/npyio"
	"gonum.org/v1/gonum/mat"
)

// update regenerates the golden files from the dense direct solve:
//
//	go test ./gokernel/mgk -run Golden -update
var update = flag.Bool("update", false, "rewrite testdata/*.npy from the dense direct solve")

// goldenSetup returns the first 20 MUTAG graphs (testdata/MUTAG20, an unchanged
// excerpt of the TU files) and the options the golden files were made with.
func goldenSetup(t testing.TB) ([]*graph.Graph, Options) {
	ds, err := tudataset.Load(filepath.Join("testdata", "MUTAG20"), "MUTAG20")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Graphs) != 20 {
		t.Fatalf("MUTAG20 has %d graphs", len(ds.Graphs))
	}
	return ds.Graphs, Options{
		NodeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		Q:          0.05,
	}
}

func writeNPY(t testing.TB, path string, r, c int, data []float64) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := npyio.Write(f, mat.NewDense(r, c, data)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readNPY(t testing.TB, path string) *mat.Dense {
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (regenerate with go test ./gokernel/mgk -run Golden -update)", err)
	}
	defer f.Close()
	var m mat.Dense
	if err := npyio.Read(f, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func TestGoldenMUTAG20(t *testing.T) {
	gs, opt := goldenSetup(t)
	path := filepath.Join("testdata", "mutag20_q0.05.npy")
	if *update {
		want := make([]float64, len(gs)*len(gs))
		for i := range gs {
			for j := i; j < len(gs); j++ {
				k, _ := denseSolve(t, gs[i], gs[j], nil, nil, opt)
				want[i*len(gs)+j], want[j*len(gs)+i] = k, k
			}
		}
		writeNPY(t, path, len(gs), len(gs), want)
	}
	want := readNPY(t, path)
	if r, c := want.Dims(); r != len(gs) || c != len(gs) {
		t.Fatalf("%s is %d×%d", path, r, c)
	}
	got := make([]float64, len(gs)*len(gs))
	if bad, err := Gram(gs, nil, nil, nil, true, opt, got, nil); err != nil || len(bad) > 0 {
		t.Fatalf("err %v, unconverged %v", err, bad)
	}
	for i := range gs {
		for j := range gs {
			if g, w := got[i*len(gs)+j], want.At(i, j); !near(g, w, 1e-9) {
				t.Errorf("K[%d][%d] = %.15g, golden %.15g", i, j, g, w)
			}
		}
	}
}

// TestGoldenMUTAG20Nodal checks the nodal matrix of MUTAG graphs 0 and 1.
func TestGoldenMUTAG20Nodal(t *testing.T) {
	gs, opt := goldenSetup(t)
	g, h := gs[0], gs[1]
	path := filepath.Join("testdata", "mutag20_q0.05_nodal_0_1.npy")
	if *update {
		_, want := denseSolve(t, g, h, nil, nil, opt)
		writeNPY(t, path, g.N, h.N, want)
	}
	want := readNPY(t, path)
	if r, c := want.Dims(); r != g.N || c != h.N {
		t.Fatalf("%s is %d×%d", path, r, c)
	}
	got := make([]float64, g.N*h.N)
	if bad, err := Nodal([]*graph.Graph{g}, []*graph.Graph{h}, nil, nil, false, opt, got); err != nil || len(bad) > 0 {
		t.Fatalf("err %v, unconverged %v", err, bad)
	}
	for a := 0; a < g.N; a++ {
		for b := 0; b < h.N; b++ {
			if x, w := got[a*h.N+b], want.At(a, b); !near(x, w, 1e-9) {
				t.Errorf("nodal[%d][%d] = %.15g, golden %.15g", a, b, x, w)
			}
		}
	}
}

// TestLargerAgainstDense compares with the dense solve on MUTAG graphs and on
// larger random weighted graphs at the extremes of q, where CG needs the most
// iterations (small q) or the lmin = 1 value is a small remainder (large q).
func TestLargerAgainstDense(t *testing.T) {
	mutag, opt := goldenSetup(t)
	rng := rand.New(rand.NewPCG(21, 22))
	random := []*graph.Graph{randomGraph(t, rng, 20, 0.15), randomGraph(t, rng, 24, 0.3), randomGraph(t, rng, 16, 0.5)}
	delta0 := &microkernel.KroneckerDelta{H: 0, Col: 0, Width: 1}
	labeled := kernelSets()[1]
	for _, tc := range []struct {
		name   string
		gs     []*graph.Graph
		nk, ek microkernel.Kernel
	}{
		{"mutag", mutag[:5], opt.NodeKernel, opt.EdgeKernel},
		{"mutag-delta0", mutag[5:9], delta0, opt.EdgeKernel},
		{"random-labeled", random, labeled.nk, labeled.ek},
	} {
		for _, q := range []float64{0.001, 0.9} {
			for lmin := 0; lmin <= 1; lmin++ {
				t.Run(fmt.Sprintf("%s/q=%g/lmin=%d", tc.name, q, lmin), func(t *testing.T) {
					o := Options{NodeKernel: tc.nk, EdgeKernel: tc.ek, Q: q, Lmin: lmin}
					got := make([]float64, len(tc.gs)*len(tc.gs))
					iters := make([]int32, len(got))
					if bad, err := Gram(tc.gs, nil, nil, nil, true, o, got, iters); err != nil || len(bad) > 0 {
						t.Fatalf("err %v, unconverged %v", err, bad)
					}
					want := denseGram(t, tc.gs, tc.gs, nil, nil, o)
					worst := 0.0
					for k := range want {
						if !near(got[k], want[k], 1e-9) {
							t.Errorf("K[%d][%d] = %.15g, dense %.15g", k/len(tc.gs), k%len(tc.gs), got[k], want[k])
						}
						worst = max(worst, math.Abs(got[k]/want[k]-1))
					}
					t.Logf("worst relative error %.2g, iterations up to %d", worst, slices.Max(iters))
				})
			}
		}
	}
}
