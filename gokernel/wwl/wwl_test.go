package wwl

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/cputime"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/schedule"
	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// randomGraph has n nodes with a label in column 0 (nl values) and an
// attribute in columns 1 and 2; the last node is isolated.
func randomGraph(rng *rand.Rand, n, nl int) *graph.Graph {
	var edges []int64
	var w []float64
	for u := 0; u < n-1; u++ {
		for v := u; v < n-1; v++ {
			if p := map[bool]float64{true: 0.1, false: 0.35}[u == v]; rng.Float64() < p {
				edges = append(edges, int64(u), int64(v))
				w = append(w, 1)
			}
		}
	}
	nf := make([]float64, 0, 3*n)
	for v := 0; v < n; v++ {
		nf = append(nf, float64(rng.IntN(nl)), rng.NormFloat64(), float64(rng.IntN(3)))
	}
	g, err := graph.New(n, edges, w, nf, 3, nil, 0)
	if err != nil {
		panic(err)
	}
	return g
}

func randomGraphs(seed uint64, count int) []*graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 1))
	gs := make([]*graph.Graph, count)
	for i := range gs {
		gs[i] = randomGraph(rng, 1+rng.IntN(9), 3)
	}
	return gs
}

func options() []Options {
	return []Options{
		{Iterations: 0, NodeLabelCol: 0},
		{Iterations: 3, NodeLabelCol: 0},
		{Iterations: 2, NodeLabelCol: -1},
		{Iterations: 0, Continuous: true, AttrCol: 1, AttrWidth: 2},
		{Iterations: 3, Continuous: true, AttrCol: 1, AttrWidth: 2},
	}
}

// TestSmall checks distances worked out by hand.
func TestSmall(t *testing.T) {
	one := func(n int, edges []int64, feat []float64) *graph.Graph {
		w := make([]float64, len(edges)/2)
		for i := range w {
			w[i] = 1
		}
		g, err := graph.New(n, edges, w, feat, 1, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	edge := one(2, []int64{0, 1}, []float64{0, 1})
	single := one(1, nil, []float64{0})
	out := make([]float64, 1)
	// Round 0: half the mass of the edge matches the single node's label.
	if err := Distances([]*graph.Graph{edge}, []*graph.Graph{single}, false, Options{NodeLabelCol: 0}, out); err != nil || out[0] != 0.5 {
		t.Errorf("discrete h=0: %v, %v; want 0.5", out[0], err)
	}
	// Round 1 too: both nodes of the edge differ from the single node then
	// (it has no neighbour), so 0.5·(1/2) + 0.5·(2/2) = 0.75.
	if err := Distances([]*graph.Graph{edge}, []*graph.Graph{single}, false, Options{Iterations: 1, NodeLabelCol: 0}, out); err != nil || out[0] != 0.75 {
		t.Errorf("discrete h=1: %v, %v; want 0.75", out[0], err)
	}
	// Continuous, h = 1: the edge's nodes are (0, ½) and (1, ½), the single
	// node (0, 0); distances ½ and √(1 + ¼), averaged.
	opt := Options{Iterations: 1, Continuous: true, AttrCol: 0, AttrWidth: 1}
	want := (0.5 + math.Sqrt(1.25)) / 2
	if err := Distances([]*graph.Graph{edge}, []*graph.Graph{single}, false, opt, out); err != nil || math.Abs(out[0]-want) > 1e-15 {
		t.Errorf("continuous h=1: %v, %v; want %v", out[0], err, want)
	}
}

// TestValueIndependentOfCall checks that a pair's distance is the same bits
// in a symmetric call, a cross call either way round, alone, and with any
// number of workers.
func TestValueIndependentOfCall(t *testing.T) {
	gs := randomGraphs(3, 14)
	n := len(gs)
	for _, opt := range options() {
		sym := make([]float64, n*n)
		opt.NJobs = 3
		if err := Distances(gs, nil, true, opt, sym); err != nil {
			t.Fatal(err)
		}
		diag := make([]float64, n)
		if err := Diag(gs, opt, diag); err != nil {
			t.Fatal(err)
		}
		rev := make([]*graph.Graph, n)
		for i := range gs {
			rev[i] = gs[n-1-i]
		}
		cross := make([]float64, n*n)
		opt.NJobs = 1
		if err := Distances(rev, gs[:n], false, opt, cross); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if diag[i] != sym[i*n+i] {
				t.Errorf("%+v: diag %v, Gram %v", opt, diag[i], sym[i*n+i])
			}
			if diag[i] != 0 {
				t.Errorf("%+v: D(G, G) = %v", opt, diag[i])
			}
			for j := 0; j < n; j++ {
				if a, b := sym[i*n+j], cross[(n-1-i)*n+j]; a != b {
					t.Errorf("%+v: D(%d, %d) = %v symmetric, %v cross", opt, i, j, a, b)
				}
				pair := make([]float64, 1)
				if err := Distances(gs[j:j+1], gs[i:i+1], false, opt, pair); err != nil {
					t.Fatal(err)
				}
				if pair[0] != sym[i*n+j] {
					t.Errorf("%+v: D(%d, %d) = %v in the call, %v alone", opt, i, j, sym[i*n+j], pair[0])
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	empty, err := graph.New(0, nil, nil, nil, 3, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	gs := randomGraphs(5, 2)
	out := make([]float64, 2)
	for _, tc := range []struct {
		X, Y []*graph.Graph
		opt  Options
	}{
		{gs, []*graph.Graph{empty}, Options{NodeLabelCol: 0}},
		{gs, gs[:1], Options{Iterations: -1}},
		{gs, gs[:1], Options{Continuous: true, AttrCol: 2, AttrWidth: 2}},
		{gs, gs[:1], Options{Continuous: true}},
	} {
		if err := Distances(tc.X, tc.Y, false, tc.opt, out); err == nil {
			t.Errorf("%+v: no error", tc.opt)
		}
	}
}

// TestControl checks the progress count (one unit per pair) and cancellation.
func TestControl(t *testing.T) {
	gs := randomGraphs(6, 9)
	out := make([]float64, len(gs)*len(gs))
	for _, opt := range options() {
		opt.Control = schedule.NewControl()
		if err := Distances(gs, nil, true, opt, out); err != nil {
			t.Fatal(err)
		}
		if done, total := opt.Control.Progress(); done != total || total != int64(schedule.NumPairs(len(gs), len(gs), true)) {
			t.Errorf("%+v: progress %d of %d", opt, done, total)
		}
		opt.Control = schedule.NewControl()
		opt.Control.Cancel()
		if err := Distances(gs, nil, true, opt, out); !errors.Is(err, schedule.ErrCancelled) {
			t.Errorf("%+v: cancelled call returned %v", opt, err)
		}
	}
}

func BenchmarkDistances(b *testing.B) {
	gs := randomGraphs(7, 60)
	out := make([]float64, len(gs)*len(gs))
	for _, opt := range options()[1:2] {
		for b.Loop() {
			if err := Distances(gs, nil, true, opt, out); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDatasets times the distances of the first graphs of MUTAG
// (discrete labels) and ENZYMES (the 18 continuous attributes), h = 3, on one
// goroutine, as benchmarks/bench_wwl.py's peer comparison does, reporting
// CPU time beside wall time; skipped without the data sets.
func BenchmarkDatasets(b *testing.B) {
	for _, tc := range []struct {
		name  string
		count int
		opt   Options
	}{
		{"MUTAG", 100, Options{Iterations: 3, NodeLabelCol: 0, NJobs: 1}},
		{"ENZYMES", 60, Options{Iterations: 3, Continuous: true, AttrCol: 1, AttrWidth: 18, NJobs: 1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ds, err := tudataset.Open(tc.name)
			if err != nil {
				b.Skip(err)
			}
			gs := ds.Graphs[:tc.count]
			out := make([]float64, len(gs)*len(gs))
			start, ops := cputime.Process(), 0
			for b.Loop() {
				if err := Distances(gs, nil, true, tc.opt, out); err != nil {
					b.Fatal(err)
				}
				ops++
			}
			// CPU time is the measure a loaded machine disturbs least.
			b.ReportMetric(float64(cputime.Process()-start)/float64(ops), "cpu-ns/op")
		})
	}
}
