package spkernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// randomGraph builds a graph with n nodes, edge probability pe, node features
// (label in 0..2, a float) and edge features (a length from a small set, so that
// equal lengths recur, and a continuous one). Self-loops and parallel edges occur.
func randomGraph(r *rand.Rand, n int, pe float64) *graph.Graph {
	var edges []int64
	var w, ef []float64
	for u := 0; u < n; u++ {
		for v := u; v < n; v++ {
			if r.Float64() >= pe || (u == v && r.IntN(4) != 0) {
				continue
			}
			for rep := 0; rep < 1+btoi(r.IntN(10) == 0); rep++ {
				edges = append(edges, int64(u), int64(v))
				w = append(w, 1)
				ef = append(ef, []float64{0.5, 1, 1.5, 2, 0}[r.IntN(5)], 0.1+r.Float64())
			}
		}
	}
	nf := make([]float64, 0, 2*n)
	for i := 0; i < n; i++ {
		nf = append(nf, float64(r.IntN(3)), r.NormFloat64())
	}
	g, err := graph.New(n, edges, w, nf, 2, ef, 2)
	if err != nil {
		panic(err)
	}
	return g
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func randomGraphs(seed uint64, count, maxN int) []*graph.Graph {
	r := rand.New(rand.NewPCG(seed, 7))
	gs := make([]*graph.Graph, count)
	for i := range gs {
		gs[i] = randomGraph(r, r.IntN(maxN+1), 0.1+0.4*r.Float64())
	}
	return gs
}

// reference is the definition, term by term: ordered pairs of distinct connected
// nodes in both graphs, distances from a textbook relaxation.
func reference(g, h *graph.Graph, opt Options) float64 {
	dg, dh := relaxAPSP(g, opt.WeightCol), relaxAPSP(h, opt.WeightCol)
	kn := opt.NodeKernel
	if kn == nil {
		kn = &microkernel.Constant{C: 1}
	}
	kl := opt.LengthKernel
	if kl == nil {
		kl = &microkernel.KroneckerDelta{H: 0, Width: 1}
	}
	s := 0.0
	for u := 0; u < g.N; u++ {
		for v := 0; v < g.N; v++ {
			d := dg[u*g.N+v]
			if u == v || math.IsInf(d, 1) {
				continue
			}
			for x := 0; x < h.N; x++ {
				for y := 0; y < h.N; y++ {
					d2 := dh[x*h.N+y]
					if x == y || math.IsInf(d2, 1) {
						continue
					}
					s += kn.Eval(g.Node(u), h.Node(x)) * kl.Eval([]float64{d}, []float64{d2}) * kn.Eval(g.Node(v), h.Node(y))
				}
			}
		}
	}
	return s
}

// relaxAPSP is Bellman–Ford style relaxation to a fixed point: slow, obviously right.
func relaxAPSP(g *graph.Graph, weightCol int) []float64 {
	n := g.N
	d := make([]float64, n*n)
	for i := range d {
		d[i] = math.Inf(1)
	}
	for i := 0; i < n; i++ {
		d[i*n+i] = 0
	}
	length := func(e int) float64 {
		switch weightCol {
		case HopCounts:
			return 1
		case GraphWeight:
			return g.Weight[e]
		}
		return g.EdgeFeat[e*g.EdgeCols+weightCol]
	}
	for changed := true; changed; {
		changed = false
		for s := 0; s < n; s++ {
			for e := range g.EdgeU {
				u, v, l := int(g.EdgeU[e]), int(g.EdgeV[e]), length(e)
				if d[s*n+u]+l < d[s*n+v] {
					d[s*n+v], changed = d[s*n+u]+l, true
				}
				if d[s*n+v]+l < d[s*n+u] {
					d[s*n+u], changed = d[s*n+v]+l, true
				}
			}
		}
	}
	return d
}

func TestAllPairsAgree(t *testing.T) {
	gs := randomGraphs(1, 40, 25)
	for gi, g := range gs {
		for _, wc := range []int{HopCounts, GraphWeight, 0, 1} {
			want := relaxAPSP(g, wc)
			algs := []Algorithm{Auto, Dijkstra, FloydWarshall}
			if wc == HopCounts {
				algs = append(algs, BFS)
			}
			for _, alg := range algs {
				got, err := AllPairs(g, wc, alg)
				if err != nil {
					t.Fatal(err)
				}
				for k := range want {
					if got[k] != want[k] && math.Abs(got[k]-want[k]) > 1e-12*want[k] {
						t.Fatalf("graph %d weight %d %v: d[%d]=%v want %v", gi, wc, alg, k, got[k], want[k])
					}
				}
			}
		}
	}
}

func TestChooseAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		n, m     int
		weighted bool
		want     Algorithm
	}{
		{30, 32, false, BFS},
		{30, 32, true, FloydWarshall},
		{200, 19900, true, FloydWarshall},
		{256, 327, true, FloydWarshall},
		{600, 700, true, Dijkstra},
		{3000, 400000, true, Dijkstra},
	} {
		if got := chooseAlgorithm(tc.n, tc.m, tc.weighted); got != tc.want {
			t.Errorf("chooseAlgorithm(%d,%d,%v) = %v, want %v", tc.n, tc.m, tc.weighted, got, tc.want)
		}
	}
}

var (
	nodeKernels = map[string]microkernel.Kernel{
		"none":      nil,
		"label":     microkernel.MustParse(`{"kind":"kronecker_delta","h":0,"col":0}`),
		"label-h":   microkernel.MustParse(`{"kind":"kronecker_delta","h":0.3,"col":0}`),
		"float":     microkernel.MustParse(`{"kind":"square_exponential","length_scale":0.8,"col":1}`),
		"both":      microkernel.MustParse(`{"kind":"product","terms":[{"kind":"kronecker_delta","h":0,"col":0},{"kind":"square_exponential","length_scale":1.5,"col":1}]}`),
		"2label":    microkernel.MustParse(`{"kind":"product","terms":[{"kind":"constant","c":2},{"kind":"kronecker_delta","h":0,"col":0,"width":2}]}`),
		"normlabel": microkernel.MustParse(`{"kind":"normalized","kernel":{"kind":"product","terms":[{"kind":"constant","c":3},{"kind":"kronecker_delta","h":0,"col":0}]}}`),
	}
	lengthKernels = map[string]microkernel.Kernel{
		"exact":    nil,
		"exact2":   microkernel.MustParse(`{"kind":"product","terms":[{"kind":"constant","c":2},{"kind":"kronecker_delta","h":0,"col":0}]}`),
		"delta-h":  microkernel.MustParse(`{"kind":"kronecker_delta","h":0.5,"col":0}`),
		"gauss":    microkernel.MustParse(`{"kind":"square_exponential","length_scale":1,"col":0}`),
		"brownian": microkernel.MustParse(`{"kind":"brownian_bridge","c":2,"col":0}`),
	}
)

func near(a, b, tol float64) bool {
	return a == b || math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// TestGramMatchesDefinition checks every method, both split modes, symmetric and
// rectangular Gram matrices and Diag against the term-by-term definition.
func TestGramMatchesDefinition(t *testing.T) {
	X := randomGraphs(2, 7, 9)
	Y := randomGraphs(3, 4, 9)
	empty, _ := graph.New(0, nil, nil, nil, 2, nil, 2)
	X = append(X, empty)
	for nname, nk := range nodeKernels {
		for lname, lk := range lengthKernels {
			for _, wc := range []int{HopCounts, 0, 1} {
				opt := Options{NodeKernel: nk, LengthKernel: lk, WeightCol: wc, NJobs: 2}
				ref := make([]float64, len(X)*len(Y))
				for i := range X {
					for j := range Y {
						ref[i*len(Y)+j] = reference(X[i], Y[j], opt)
					}
				}
				refSym := make([]float64, len(X)*len(X))
				for i := range X {
					for j := range X {
						refSym[i*len(X)+j] = reference(X[i], X[j], opt)
					}
				}
				for _, m := range []Method{MethodAuto, MethodFeatureMap, MethodLabelJoin, MethodLengthJoin, MethodFCSP} {
					for _, sw := range []int64{0, 1, -1} {
						o := opt
						o.Method, o.SplitWork = m, sw
						name := fmt.Sprintf("%s/%s/w%d/%v/split%d", nname, lname, wc, m, sw)
						out := make([]float64, len(ref))
						err := Gram(X, Y, false, o, out)
						if err != nil {
							if m != MethodAuto && m != MethodFCSP && strings.Contains(err.Error(), "method needs") {
								continue
							}
							t.Fatalf("%s: %v", name, err)
						}
						for k := range ref {
							if !near(out[k], ref[k], 1e-12) {
								t.Fatalf("%s: K[%d,%d]=%v want %v", name, k/len(Y), k%len(Y), out[k], ref[k])
							}
						}
						sym := make([]float64, len(refSym))
						if err := Gram(X, nil, true, o, sym); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						diag := make([]float64, len(X))
						if err := Diag(X, o, diag); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for i := range X {
							for j := range X {
								if !near(sym[i*len(X)+j], refSym[i*len(X)+j], 1e-12) {
									t.Fatalf("%s: symmetric K[%d,%d]=%v want %v", name, i, j, sym[i*len(X)+j], refSym[i*len(X)+j])
								}
							}
							if diag[i] != sym[i*len(X)+i] {
								t.Fatalf("%s: Diag[%d]=%v but Gram has %v", name, i, diag[i], sym[i*len(X)+i])
							}
						}
					}
				}
			}
		}
	}
}

// TestFeatureMapExact checks that exact-match kernels give integer-exact values,
// identical to the reference (which sums integers in a different order).
func TestFeatureMapExact(t *testing.T) {
	X := randomGraphs(4, 12, 30)
	for _, nk := range []microkernel.Kernel{nil, nodeKernels["label"]} {
		opt := Options{NodeKernel: nk, WeightCol: HopCounts}
		out := make([]float64, len(X)*len(X))
		if err := Gram(X, nil, true, opt, out); err != nil {
			t.Fatal(err)
		}
		for i := range X {
			for j := range X {
				if want := reference(X[i], X[j], opt); out[i*len(X)+j] != want {
					t.Fatalf("K[%d,%d]=%v want exactly %v", i, j, out[i*len(X)+j], want)
				}
			}
		}
	}
}

// TestPathGraphClosedForm: on the path with n nodes there are n-d node pairs at
// distance d, so unlabeled K(P_n, P_n) = 4 Σ_d (n-d)².
func TestPathGraphClosedForm(t *testing.T) {
	for _, n := range []int{1, 2, 5, 40} {
		var edges []int64
		var w []float64
		for i := 0; i+1 < n; i++ {
			edges = append(edges, int64(i), int64(i+1))
			w = append(w, 1)
		}
		g, _ := graph.New(n, edges, w, nil, 0, nil, 0)
		want := 0.0
		for d := 1; d < n; d++ {
			want += 4 * float64((n-d)*(n-d))
		}
		out := []float64{0}
		if err := Diag([]*graph.Graph{g}, Options{WeightCol: HopCounts}, out); err != nil {
			t.Fatal(err)
		}
		if out[0] != want {
			t.Errorf("P_%d: %v want %v", n, out[0], want)
		}
	}
}

func TestErrors(t *testing.T) {
	neg, _ := graph.New(2, []int64{0, 1}, []float64{1}, []float64{0, 0}, 1, []float64{-1}, 1)
	ok, _ := graph.New(2, []int64{0, 1}, []float64{1}, []float64{0, 0}, 1, []float64{1}, 1)
	for _, tc := range []struct {
		name string
		gs   []*graph.Graph
		opt  Options
		out  int
		want string
	}{
		{"negative length", []*graph.Graph{ok, neg}, Options{WeightCol: 0}, 4, "X[1]: edge 0 (0–1) has length -1"},
		{"missing column", []*graph.Graph{ok}, Options{WeightCol: 3}, 1, "weight column 3 does not exist"},
		{"bad weight col", []*graph.Graph{ok}, Options{WeightCol: -7}, 1, "weight column -7"},
		{"node column", []*graph.Graph{ok}, Options{WeightCol: HopCounts, NodeKernel: nodeKernels["float"]}, 1, "reads feature column 1"},
		{"length column", []*graph.Graph{ok}, Options{WeightCol: HopCounts, LengthKernel: microkernel.MustParse(`{"kind":"kronecker_delta","h":0,"col":1}`)}, 1, "length kernel reads column 1"},
		{"forced method", []*graph.Graph{ok}, Options{WeightCol: HopCounts, LengthKernel: lengthKernels["gauss"], Method: MethodFeatureMap}, 1, "feature-map method needs"},
		{"bfs weighted", []*graph.Graph{ok}, Options{WeightCol: 0, APSP: BFS}, 1, "BFS counts hops"},
		{"output size", []*graph.Graph{ok}, Options{WeightCol: HopCounts}, 3, "output has 3 entries"},
	} {
		err := Gram(tc.gs, nil, true, tc.opt, make([]float64, tc.out))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestNJobsDeterministic: the value of a pair does not depend on the worker count,
// split or not.
func TestNJobsDeterministic(t *testing.T) {
	X := randomGraphs(5, 10, 20)
	opt := Options{NodeKernel: nodeKernels["float"], LengthKernel: lengthKernels["gauss"], WeightCol: 1, SplitWork: 100}
	var first []float64
	for _, nj := range []int{1, 2, 3} {
		opt.NJobs = nj
		out := make([]float64, len(X)*len(X))
		if err := Gram(X, nil, true, opt, out); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = out
			continue
		}
		for k := range out {
			if out[k] != first[k] {
				t.Fatalf("NJobs=%d: K[%d]=%v, NJobs=1 gave %v", nj, k, out[k], first[k])
			}
		}
	}
}

// TestHopPairs checks the three hop-count paths (one-word bitsets up to 64 nodes,
// multi-word bitsets up to bitsetMaxN, queue BFS above) against relaxation.
func TestHopPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	var st apspState
	for _, n := range []int{1, 2, 63, 64, 65, 130, 256, 257, 300} {
		g := randomGraph(r, n, 2.5/float64(n))
		want := relaxAPSP(g, HopCounts)
		eu, ev, lid, maxLid := st.hopPairs(g, nil, nil, nil)
		got := make(map[[2]int32]int32)
		for k := range eu {
			if eu[k] >= ev[k] {
				t.Fatalf("n=%d: pair (%d,%d) not in order", n, eu[k], ev[k])
			}
			got[[2]int32{eu[k], ev[k]}] = lid[k] + 1
			if lid[k] > maxLid {
				t.Fatalf("n=%d: length id %d above maxLid %d", n, lid[k], maxLid)
			}
		}
		count := 0
		for u := 0; u < n; u++ {
			for v := u + 1; v < n; v++ {
				d := want[u*n+v]
				if math.IsInf(d, 1) {
					continue
				}
				count++
				if got[[2]int32{int32(u), int32(v)}] != int32(d) {
					t.Fatalf("n=%d: d(%d,%d) = %d, want %v", n, u, v, got[[2]int32{int32(u), int32(v)}], d)
				}
			}
		}
		if count != len(eu) {
			t.Fatalf("n=%d: %d pairs, want %d", n, len(eu), count)
		}
	}
}
