package octile

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graph/graphtest"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile/octiletest"
	"github.com/graphgram/graphgram/gokernel/reorder"
)

// refMatVec is the plain CSR Kronecker product every path is checked against:
// y[i·n'+i'] += Σ over adjacency entries (i,j) of g and (i',j') of h of
// w·w'·κe(e, e')·x[j·n'+j'].
func refMatVec(g, h *graph.Graph, ke microkernel.Kernel, x, y []float64) {
	nh := h.N
	for i := 0; i < g.N; i++ {
		for ip := 0; ip < nh; ip++ {
			s := 0.0
			for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
				for kp := h.RowPtr[ip]; kp < h.RowPtr[ip+1]; kp++ {
					s += g.Val[k] * h.Val[kp] * ke.Eval(g.Edge(int(g.EdgeOf[k])), h.Edge(int(h.EdgeOf[kp]))) *
						x[int(g.Col[k])*nh+int(h.Col[kp])]
				}
			}
			y[i*nh+ip] += s
		}
	}
}

// testGraphs covers sizes around tile boundaries, self-loops, isolated nodes,
// one-node and edgeless graphs, dense and sparse tiles.
func testGraphs() map[string]*graph.Graph {
	r := func(n int, p, loops float64, iso int, seed uint64) *graph.Graph {
		return octiletest.Random(octiletest.RandomSpec{N: n, P: p, SelfLoops: loops, Isolated: iso, EdgeLabels: 3, Seed: seed})
	}
	return map[string]*graph.Graph{
		"n1":          r(1, 0, 0, 0, 1),
		"n1-loop":     r(1, 0, 1, 0, 2),
		"n2":          r(2, 1, 0, 0, 3),
		"n7-loops":    r(7, 0.4, 0.5, 1, 4),
		"n8":          r(8, 0.3, 0.2, 0, 5),
		"n9-iso":      r(9, 0.3, 0.2, 4, 6),
		"n17-dense":   r(17, 0.7, 0.6, 0, 7),
		"n30-sparse":  r(30, 0.08, 0.1, 3, 8),
		"n45":         r(45, 0.15, 0.05, 2, 9),
		"n5-edgeless": r(5, 0, 0, 0, 10),
		"nws-40":      octiletest.NewmanWattsStrogatz(40, 4, 0.2, 11),
		"ba-30":       octiletest.BarabasiAlbert(30, 4, 12),
	}
}

// testPairs pairs every graph with a few others, including itself.
func testPairs() [][2]string {
	names := []string{"n1", "n1-loop", "n2", "n7-loops", "n8", "n9-iso", "n17-dense", "n30-sparse", "n45", "n5-edgeless", "nws-40", "ba-30"}
	var ps [][2]string
	for i, a := range names {
		for _, d := range []int{0, 1, 5} {
			ps = append(ps, [2]string{a, names[(i+d)%len(names)]})
		}
	}
	return ps
}

func testKernels() map[string]microkernel.Kernel {
	kd := &microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1}
	se := &microkernel.SquareExponential{LengthScale: 0.5, Col: 1, Width: 1}
	return map[string]microkernel.Kernel{
		"constant":   &microkernel.Constant{C: 0.7},
		"kdelta":     kd,
		"kdelta-h0":  &microkernel.KroneckerDelta{H: 0, Col: 0, Width: 1},
		"bridge":     &microkernel.BrownianBridge{C: 3, Col: 0},
		"sqexp":      se,
		"kd*sqexp":   &microkernel.Product{Terms: []microkernel.Kernel{kd, se}},
		"const+kd":   &microkernel.Sum{Terms: []microkernel.Kernel{&microkernel.Constant{C: 0.2}, kd}},
		"normalized": &microkernel.Normalized{K: &microkernel.BrownianBridge{C: 2, Col: 0}},
	}
}

func testOptions() map[string]Options {
	m := map[string]Options{
		"auto":         {},
		"factorized":   {Path: Factorized},
		"explicit":     {Path: Explicit},
		"eval":         {Path: Eval},
		"tiled-ssonly": {Path: Tiled, MaxDense: 1},
		"auto-notable": {MaxTable: 1},
		"auto-denseheavy": {Costs: Costs{SS: 10, MV: 1, AX: 0.1, Tile: 1, Rev: 1, Spill: 1, Cache: 1e9, Pad: 0.1,
			ExplicitNZ: 100, ExplicitBuild: 100, Gather: 100, Axpy: 100}},
	}
	for _, pr := range []Prim{PrimAuto, SS, DS, DD, SD, DDRev} {
		m["tiled-"+pr.String()] = Options{Path: Tiled, Prim: pr}
	}
	return m
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 0.1 + rng.Float64()
	}
	return v
}

// relErr returns max_i |y_i − want_i| / max(|want_i|, tiny), the worst
// element-wise relative error; every term is non-negative, so rounding alone
// keeps it near machine precision.
func relErr(y, want []float64) float64 {
	e := 0.0
	for i := range y {
		d := math.Abs(y[i] - want[i])
		if d == 0 {
			continue
		}
		e = max(e, d/math.Max(math.Abs(want[i]), 1e-300))
	}
	return e
}

func mustPack(t testing.TB, g *graph.Graph) *Graph {
	t.Helper()
	p, err := Pack(g)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMatVec(t *testing.T) {
	gs := testGraphs()
	packed := make(map[string]*Graph)
	for name, g := range gs {
		packed[name] = mustPack(t, g)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, pr := range testPairs() {
		g, h := gs[pr[0]], gs[pr[1]]
		n := g.N * h.N
		x := randVec(rng, n)
		for kname, ke := range testKernels() {
			want := make([]float64, n)
			refMatVec(g, h, ke, x, want)
			for oname, opt := range testOptions() {
				name := fmt.Sprintf("%s×%s/%s/%s", pr[0], pr[1], kname, oname)
				p := NewPair(opt)
				err := p.Reset(packed[pr[0]], packed[pr[1]], ke)
				if errors.Is(err, ErrTooManyClasses) {
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				y := make([]float64, n)
				p.Mul(y, x)
				if e := relErr(y, want); e > 1e-12 {
					t.Errorf("%s (path %v): relative error %g", name, p.Path(), e)
				}
				// MatVec accumulates.
				for i := range y {
					y[i] = 1
				}
				p.MatVec(x, y)
				for i := range y {
					y[i]--
				}
				if e := relErr(y, want); e > 1e-11 {
					t.Errorf("%s (path %v): MatVec does not add to y: relative error %g", name, p.Path(), e)
				}
			}
		}
	}
}

// TestPairReuse runs one Pair over pairs of changing sizes and paths, as a
// worker goroutine would, so that stale scratch would show.
func TestPairReuse(t *testing.T) {
	gs := testGraphs()
	order := []string{"n45", "n2", "n17-dense", "n1-loop", "ba-30", "n9-iso", "nws-40", "n5-edgeless", "n30-sparse"}
	ke := testKernels()["kdelta"]
	rng := rand.New(rand.NewPCG(3, 4))
	for _, oname := range []string{"auto", "tiled-auto", "tiled-sd", "tiled-dd", "factorized", "explicit"} {
		p := NewPair(testOptions()[oname])
		for i, a := range order {
			b := order[(i+3)%len(order)]
			g, h := gs[a], gs[b]
			if err := p.Reset(mustPack(t, g), mustPack(t, h), ke); err != nil {
				t.Fatal(err)
			}
			x := randVec(rng, g.N*h.N)
			want := make([]float64, len(x))
			refMatVec(g, h, ke, x, want)
			for rep := 0; rep < 2; rep++ {
				y := make([]float64, len(x))
				p.Mul(y, x)
				if e := relErr(y, want); e > 1e-12 {
					t.Errorf("%s %s×%s rep %d: relative error %g", oname, a, b, rep, e)
				}
			}
		}
	}
}

func TestMatVecAllocs(t *testing.T) {
	gs := testGraphs()
	a, b := mustPack(t, gs["n45"]), mustPack(t, gs["ba-30"])
	ke := testKernels()["kdelta"]
	for oname, opt := range testOptions() {
		p := NewPair(opt)
		if err := p.Reset(a, b, ke); err != nil {
			continue
		}
		x := make([]float64, a.N*b.N)
		y := make([]float64, len(x))
		if n := testing.AllocsPerRun(3, func() { p.MatVec(x, y) }); n != 0 {
			t.Errorf("%s: MatVec allocates %v times", oname, n)
		}
	}
}

func TestPackRepeatedEdges(t *testing.T) {
	nf := []float64{0, 0, 0}
	// Edges 0 and 2 repeat {0,1} with equal features: merged.
	g, err := graph.New(3, []int64{0, 1, 1, 2, 1, 0}, []float64{1, 2, 3}, nf, 1, []float64{5, 6, 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := mustPack(t, g)
	if p.NNZ() != 4 {
		t.Errorf("merged graph has %d nonzeros, want 4", p.NNZ())
	}
	ke := &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}
	for _, opt := range []Options{{Path: Tiled}, {Path: Tiled, Prim: DD}, {Path: Factorized}} {
		pr := NewPair(opt)
		if err := pr.Reset(p, p, ke); err != nil {
			t.Fatal(err)
		}
		x := randVec(rand.New(rand.NewPCG(1, 1)), 9)
		want, y := make([]float64, 9), make([]float64, 9)
		refMatVec(g, g, ke, x, want)
		pr.Mul(y, x)
		if e := relErr(y, want); e > 1e-12 {
			t.Errorf("%v: merged repeated edges: relative error %g", opt.Path, e)
		}
	}
	// Different features cannot share a position.
	g, err = graph.New(3, []int64{0, 1, 1, 0}, []float64{1, 1}, nf, 1, []float64{5, 6}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(g); err == nil {
		t.Error("Pack accepted repeated edges with different features")
	}
}

func TestPackLayout(t *testing.T) {
	for name, g := range testGraphs() {
		p := mustPack(t, g)
		tiles, dens := reorder.TileStats(g)
		if p.NumTiles() != tiles {
			t.Errorf("%s: %d tiles, reorder.TileStats says %d", name, p.NumTiles(), tiles)
		}
		if tiles > 0 && math.Abs(float64(p.NNZ())/float64(64*tiles)-dens) > 1e-15 {
			t.Errorf("%s: density %v, reorder.TileStats says %v", name, float64(p.NNZ())/float64(64*tiles), dens)
		}
	}
}

// TestReorderInvariance checks that reordering the graphs changes W only by
// the matching permutation of product nodes, and a kernel-like quantity
// Σ_k qᵀ W^k p built from node labels not at all beyond rounding.
func TestReorderInvariance(t *testing.T) {
	gs := testGraphs()
	ke := testKernels()["kd*sqexp"]
	for _, pr := range [][2]string{{"n45", "nws-40"}, {"ba-30", "n17-dense"}, {"n30-sparse", "n9-iso"}} {
		g, h := gs[pr[0]], gs[pr[1]]
		a, b := mustPack(t, g), mustPack(t, h)
		ra, err := PackReordered(g)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := PackReordered(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := ra.Validate(); err != nil {
			t.Fatal(err)
		}
		series := func(a, b *Graph) float64 {
			p := NewPair(Options{})
			if err := p.Reset(a, b, ke); err != nil {
				t.Fatal(err)
			}
			n := a.N * b.N
			x, y := make([]float64, n), make([]float64, n)
			for i := 0; i < a.N; i++ {
				for ip := 0; ip < b.N; ip++ {
					x[i*b.N+ip] = 1 / (1 + a.G.Node(i)[0] + 2*b.G.Node(ip)[0])
				}
			}
			q := append([]float64(nil), x...)
			s := 0.0
			for k := 0; k < 5; k++ {
				for i := range x {
					s += q[i] * x[i]
				}
				p.Mul(y, x)
				for i := range y {
					x[i] = y[i] / 8
				}
			}
			return s
		}
		s0, s1 := series(a, b), series(ra, rb)
		if math.Abs(s0-s1) > 1e-12*math.Abs(s0) {
			t.Errorf("%s×%s: series %v natural, %v reordered (%v, %v)", pr[0], pr[1], s0, s1, ra.Order, rb.Order)
		}
	}
}

func TestDecompose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k      []float64
		la, lb int
		terms  int
	}{
		{"scalar", []float64{2}, 1, 1, 1},
		{"row", []float64{1, 2, 3}, 1, 3, 1},
		{"column", []float64{1, 2, 3}, 3, 1, 1},
		{"kdelta", []float64{1, .3, .3, .3, 1, .3}, 2, 3, 3},
		{"kdelta-h0", []float64{1, 0, 0, 0, 1, 0}, 2, 3, 2},
		{"general", []float64{3, 2, 1, 2, 3, 2}, 2, 3, 2},
	} {
		var f factState
		f.decompose(tc.k, tc.la, tc.lb)
		if f.nTerms != tc.terms {
			t.Errorf("%s: %d terms, want %d", tc.name, f.nTerms, tc.terms)
		}
		for i := 0; i < tc.la; i++ {
			for j := 0; j < tc.lb; j++ {
				s := 0.0
				for r := 0; r < f.nTerms; r++ {
					s += f.us[r*tc.la+i] * f.vs[r*tc.lb+j]
				}
				if math.Abs(s-tc.k[i*tc.lb+j]) > 1e-15 {
					t.Errorf("%s: entry (%d,%d) = %v, want %v", tc.name, i, j, s, tc.k[i*tc.lb+j])
				}
			}
		}
	}
}

// TestKernels checks the dense inner loops against plain loops; run with and
// without GOEXPERIMENT=simd to cover both builds.
func TestKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var m [64]float64
	var x, y, z, want [8]float64
	for trial := 0; trial < 20; trial++ {
		for i := range m {
			m[i] = rng.NormFloat64()
		}
		for i := range x {
			x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		alpha := rng.NormFloat64()
		for r := 0; r < 8; r++ {
			s := 0.0
			for c := 0; c < 8; c++ {
				s += m[8*r+c] * x[c]
			}
			want[r] = y[r] + alpha*s
			z[r] = s
		}
		got := y
		gemv8(&got, alpha, &m, &x)
		var zz [8]float64
		mv8(&zz, &m, &x)
		for r := 0; r < 8; r++ {
			if math.Abs(got[r]-want[r]) > 1e-13*(1+math.Abs(want[r])) {
				t.Fatalf("gemv8 row %d = %v, want %v (SIMD %v)", r, got[r], want[r], SIMD)
			}
			if math.Abs(zz[r]-z[r]) > 1e-13*(1+math.Abs(z[r])) {
				t.Fatalf("mv8 row %d = %v, want %v (SIMD %v)", r, zz[r], z[r], SIMD)
			}
		}
		for _, n := range []int{0, 1, 3, 4, 7, 13} {
			xs, ys := make([]float64, n), make([]float64, n+2)
			for i := range xs {
				xs[i] = rng.NormFloat64()
			}
			for i := range ys {
				ys[i] = rng.NormFloat64()
			}
			ws := append([]float64(nil), ys...)
			for i := range xs {
				ws[i] += alpha * xs[i]
			}
			axpy(alpha, xs, ys)
			for i := range ys {
				if math.Abs(ys[i]-ws[i]) > 1e-14*(1+math.Abs(ws[i])) {
					t.Fatalf("axpy n=%d element %d = %v, want %v", n, i, ys[i], ws[i])
				}
			}
		}
	}
}

func TestResetErrors(t *testing.T) {
	gs := testGraphs()
	a := mustPack(t, gs["n45"])
	p := NewPair(Options{Path: Factorized, MaxTable: 1})
	if err := p.Reset(a, a, testKernels()["kdelta"]); !errors.Is(err, ErrTooManyClasses) {
		t.Errorf("Factorized without a table: err = %v, want ErrTooManyClasses", err)
	}
	for _, pr := range []Prim{DS, DD, SD, DDRev} {
		p = NewPair(Options{Path: Tiled, Prim: pr, MaxDense: 1})
		if err := p.Reset(a, a, testKernels()["kdelta"]); !errors.Is(err, ErrTooManyClasses) {
			t.Errorf("forced %v without room for dense tiles: err = %v, want ErrTooManyClasses", pr, err)
		}
	}
	p = NewPair(Options{Path: Explicit, MaxExplicit: 10})
	if err := p.Reset(a, a, testKernels()["kdelta"]); !errors.Is(err, ErrTooLarge) {
		t.Errorf("forced Explicit past MaxExplicit: err = %v, want ErrTooLarge", err)
	}
	p = NewPair(Options{})
	if err := p.Reset(a, a, &microkernel.KroneckerDelta{H: 0.5, Col: 5, Width: 1}); err == nil {
		t.Error("Reset accepted a kernel reading past the edge features")
	}
}

func TestStrings(t *testing.T) {
	for p, want := range map[Path]string{Auto: "auto", Tiled: "tiled", Factorized: "factorized", Explicit: "explicit", Eval: "eval", 9: "Path(9)"} {
		if p.String() != want {
			t.Errorf("Path(%d).String() = %q, want %q", int(p), p.String(), want)
		}
	}
	for p, want := range map[Prim]string{PrimAuto: "auto", SS: "ss", DS: "ds", DD: "dd", SD: "sd", DDRev: "dd-rev"} {
		if p.String() != want {
			t.Errorf("Prim(%d).String() = %q, want %q", int(p), p.String(), want)
		}
	}
}

// TestConcurrentPairs shares packed graphs between goroutines, each with its
// own Pair, as the solver's workers will (run with -race to check).
func TestConcurrentPairs(t *testing.T) {
	gs := testGraphs()
	a, b := mustPack(t, gs["n45"]), mustPack(t, gs["nws-40"])
	ke := testKernels()["kdelta"]
	x := randVec(rand.New(rand.NewPCG(7, 7)), a.N*b.N)
	want := make([]float64, len(x))
	refMatVec(a.G, b.G, ke, x, want)
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			p := NewPair(Options{})
			for rep := 0; rep < 5; rep++ {
				if err := p.Reset(a, b, ke); err != nil {
					errs <- err
					return
				}
				y := make([]float64, len(x))
				p.Mul(y, x)
				if e := relErr(y, want); e > 1e-12 {
					errs <- fmt.Errorf("relative error %g", e)
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// FuzzPack packs graphs built from fuzz bytes, as given and reordered: packing
// must not fail or panic, must store every adjacency entry once with its
// weight (the tile statistics and the total weight agree with the graph), and
// a reordering must be a permutation.
func FuzzPack(f *testing.F) {
	f.Add([]byte{5, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4})
	f.Add([]byte{47, 1, 30, 2, 29, 7, 7, 8, 39, 9, 40, 10, 41})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		g := graphtest.FromBytes(b)
		n := g.N
		want := 0.0
		for _, x := range g.Dense() {
			want += x
		}
		for _, pack := range []func(*graph.Graph) (*Graph, error){Pack, PackReordered} {
			p, err := pack(g)
			if err != nil {
				t.Fatal(err)
			}
			if p.N != n || p.NNZ() != len(g.Col) {
				t.Fatalf("%d nodes, %d nonzeros; the graph has %d and %d", p.N, p.NNZ(), n, len(g.Col))
			}
			got := 0.0
			for _, x := range p.Weight {
				got += x
			}
			if math.Abs(got-want) > 1e-9*max(1, want) {
				t.Fatalf("packed weights sum to %v, the adjacency to %v", got, want)
			}
			if p.Perm != nil {
				seen := make([]bool, n)
				for _, v := range p.Perm {
					if v < 0 || v >= n || seen[v] {
						t.Fatalf("not a permutation: %v", p.Perm)
					}
					seen[v] = true
				}
			}
		}
	})
}
