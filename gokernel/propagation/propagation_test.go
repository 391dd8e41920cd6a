package propagation

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// randomGraph has n nodes with labels in {0, 2, 4} (column 0; −1 marks an
// unlabelled node with probability pUnlabeled) and two continuous columns;
// weighted edges, some self-loops, and the last node isolated.
func randomGraph(rng *rand.Rand, n int, pUnlabeled float64) *graph.Graph {
	var edges []int64
	var w []float64
	for u := 0; u < n-1; u++ {
		for v := u; v < n-1; v++ {
			if p := 0.3; u == v && rng.Float64() < p/3 || u != v && rng.Float64() < p {
				edges = append(edges, int64(u), int64(v))
				w = append(w, float64(1+rng.IntN(3)))
			}
		}
	}
	nf := make([]float64, 0, 3*n)
	for range n {
		label := float64(2 * rng.IntN(3))
		if rng.Float64() < pUnlabeled {
			label = -1
		}
		nf = append(nf, label, rng.NormFloat64(), 3*rng.NormFloat64())
	}
	g, err := graph.New(n, edges, w, nf, 3, nil, 0)
	if err != nil {
		panic(err)
	}
	return g
}

func randomGraphs(seed uint64, count int, pUnlabeled float64) []*graph.Graph {
	rng := rand.New(rand.NewPCG(seed, 3))
	gs := make([]*graph.Graph, count)
	for i := range gs {
		gs[i] = randomGraph(rng, 1+rng.IntN(10), pUnlabeled)
	}
	return gs
}

// labelOptions returns Options over the labels {−1, 0, 2, 4} with random
// Cauchy coefficients and offsets.
func labelOptions(rounds int, w float64, sqrt bool, partial bool) Options {
	rng := rand.New(rand.NewPCG(11, 5))
	opt := Options{Rounds: rounds, BinWidth: w, LabelCol: 0, Labels: []float64{-1, 0, 2, 4}, Sqrt: sqrt, Unlabeled: -1}
	for range rounds * len(opt.Labels) {
		opt.Coef = append(opt.Coef, rng.NormFloat64()/rng.NormFloat64())
	}
	for range rounds {
		opt.Offsets = append(opt.Offsets, w*rng.Float64())
	}
	if partial {
		opt.Unlabeled, opt.Clamp = 0, true
	}
	return opt
}

// referenceLabels is the definition on dense matrices: one map of
// "round/bin" → count per graph.
func referenceLabels(gs []*graph.Graph, opt Options) []map[[2]int64]int {
	out := make([]map[[2]int64]int, len(gs))
	nl := len(opt.Labels)
	for g, gr := range gs {
		out[g] = map[[2]int64]int{}
		n := gr.N
		// Distributions over all labels of the table, as n×nl dense rows.
		own := map[int]bool{}
		lab := make([]int, n)
		for v := range n {
			lab[v] = slices.Index(opt.Labels, gr.Node(v)[0])
			if lab[v] != opt.Unlabeled {
				own[lab[v]] = true
			}
		}
		p0 := make([][]float64, n)
		for v := range n {
			p0[v] = make([]float64, nl)
			if lab[v] != opt.Unlabeled {
				p0[v][lab[v]] = 1
				continue
			}
			for k := range own {
				p0[v][k] = 1 / float64(len(own))
			}
		}
		a := make([][]float64, n) // dense weighted adjacency, self-loops once
		for v := range n {
			a[v] = make([]float64, n)
		}
		for e := range gr.EdgeU {
			u, v := gr.EdgeU[e], gr.EdgeV[e]
			a[u][v], a[v][u] = gr.Weight[e], gr.Weight[e]
		}
		p := p0
		for t := range opt.Rounds {
			for v := range n {
				s := 0.0
				for k := range nl {
					x := p[v][k]
					if opt.Sqrt {
						x = math.Sqrt(x)
					}
					s += x * opt.Coef[t*nl+k]
				}
				out[g][[2]int64{int64(t), int64(math.Floor((s + opt.Offsets[t]) / opt.BinWidth))}]++
			}
			next := make([][]float64, n)
			for v := range n {
				next[v] = make([]float64, nl)
				d := 0.0
				for u := range n {
					d += a[v][u]
				}
				for u := range n {
					for k := range nl {
						if d > 0 {
							next[v][k] += a[v][u] / d * p[u][k]
						}
					}
				}
				if opt.Clamp && lab[v] != opt.Unlabeled {
					next[v] = p0[v]
				}
			}
			p = next
		}
	}
	return out
}

// dot is the kernel between two reference histograms.
func dot[K comparable](a, b map[K]int) float64 {
	s := 0.0
	for k, x := range a {
		s += float64(x * b[k])
	}
	return s
}

// gram is the symmetric Gram matrix of f.
func gram(t *testing.T, f *sparsegram.Features) []float64 {
	t.Helper()
	out := make([]float64, f.Rows()*f.Rows())
	if err := sparsegram.Gram(f, nil, true, sparsegram.Options{}, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkGram compares a Gram matrix with the dot products of the reference
// histograms, exactly.
func checkGram[K comparable](t *testing.T, got []float64, ref []map[K]int) {
	t.Helper()
	n := len(ref)
	for i := range n {
		for j := range n {
			if want := dot(ref[i], ref[j]); got[i*n+j] != want {
				t.Fatalf("K[%d][%d] = %v, want %v", i, j, got[i*n+j], want)
			}
		}
	}
}

func TestLabelsMatchDefinition(t *testing.T) {
	for _, tc := range []struct {
		name    string
		w       float64
		sqrt    bool
		partial bool
	}{
		{"TV", 0.01, false, false},
		{"TV wide bins", 1, false, false},
		{"Hellinger", 0.05, true, false},
		{"partially labelled", 0.01, false, true},
		{"partially labelled Hellinger", 0.1, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pUnl := 0.0
			if tc.partial {
				pUnl = 0.4
			}
			gs := randomGraphs(1, 30, pUnl)
			opt := labelOptions(4, tc.w, tc.sqrt, tc.partial)
			f, err := Labels(gs, opt)
			if err != nil {
				t.Fatal(err)
			}
			checkGram(t, gram(t, f), referenceLabels(gs, opt))
		})
	}
}

// TestCallIndependence: a graph pair's value is the same whatever else is in
// the call and in what order, and for any number of goroutines.
func TestCallIndependence(t *testing.T) {
	gs := randomGraphs(2, 40, 0.2)
	opt := labelOptions(5, 0.01, false, true)
	f, err := Labels(gs, opt)
	if err != nil {
		t.Fatal(err)
	}
	all := gram(t, f)
	sub := []int{17, 3, 29, 3}
	opt.NJobs = 1
	f2, err := Labels([]*graph.Graph{gs[17], gs[3], gs[29], gs[3]}, opt)
	if err != nil {
		t.Fatal(err)
	}
	part := gram(t, f2)
	for i, a := range sub {
		for j, b := range sub {
			if part[i*len(sub)+j] != all[a*len(gs)+b] {
				t.Fatalf("K(%d, %d) = %v in the sub-call, %v in the whole call", a, b, part[i*len(sub)+j], all[a*len(gs)+b])
			}
		}
	}
}

func TestAttributesMatchDefinition(t *testing.T) {
	gs := randomGraphs(3, 30, 0)
	rng := rand.New(rand.NewPCG(4, 4))
	opt := AttrOptions{Rounds: 3, BinWidth: 0.5, AttrCol: 1, AttrWidth: 2}
	for range 3 * 2 {
		opt.Coef = append(opt.Coef, rng.NormFloat64()/rng.NormFloat64())
		opt.Offsets = append(opt.Offsets, opt.BinWidth*rng.Float64())
	}
	f, err := Attributes(gs, opt)
	if err != nil {
		t.Fatal(err)
	}
	// The reference: propagate the two columns with the label reference's
	// machinery, one column at a time (coefficient 1, then hash by hand).
	ref := make([]map[[4]int64]int, len(gs))
	for g, gr := range gs {
		ref[g] = map[[4]int64]int{}
		n := gr.N
		x := make([][]float64, n)
		for v := range n {
			x[v] = slices.Clone(gr.Node(v)[1:3])
		}
		for r := range opt.Rounds {
			for v := range n {
				k := [4]int64{int64(r)}
				for d := range 2 {
					k[1+d] = int64(math.Floor((x[v][d]*opt.Coef[r*2+d] + opt.Offsets[r*2+d]) / opt.BinWidth))
				}
				ref[g][k]++
			}
			next := make([][]float64, n)
			for v := range n {
				next[v] = make([]float64, 2)
				d := 0.0
				for q := gr.RowPtr[v]; q < gr.RowPtr[v+1]; q++ {
					d += gr.Val[q]
				}
				for q := gr.RowPtr[v]; q < gr.RowPtr[v+1]; q++ {
					for c := range 2 {
						next[v][c] += gr.Val[q] / d * x[gr.Col[q]][c]
					}
				}
			}
			x = next
		}
	}
	checkGram(t, gram(t, f), ref)
}

func TestErrors(t *testing.T) {
	gs := randomGraphs(5, 3, 0)
	good := labelOptions(2, 0.1, false, false)
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"no rounds", func(o *Options) { o.Rounds = 0 }, "rounds"},
		{"zero width", func(o *Options) { o.BinWidth = 0 }, "bin width"},
		{"NaN width", func(o *Options) { o.BinWidth = math.NaN() }, "bin width"},
		{"short coefficients", func(o *Options) { o.Coef = o.Coef[1:] }, "coefficients"},
		{"short offsets", func(o *Options) { o.Offsets = o.Offsets[1:] }, "offsets"},
		{"label column", func(o *Options) { o.LabelCol = 3 }, "graph 0: node label column 3"},
		{"unknown label", func(o *Options) { o.Labels = []float64{-1, 0, 2, 5} }, "not in the label table"},
		{"unsorted labels", func(o *Options) { o.Labels = []float64{0, -1, 2, 4} }, "increasing"},
		{"unlabeled index", func(o *Options) { o.Unlabeled = 4 }, "unlabeled index"},
		{"bin overflow", func(o *Options) { o.Coef[2] = 1e300 }, "not representable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			o.Coef, o.Offsets = slices.Clone(good.Coef), slices.Clone(good.Offsets)
			tc.edit(&o)
			if _, err := Labels(gs, o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	attr := AttrOptions{Rounds: 1, BinWidth: 1, AttrCol: 2, AttrWidth: 2, Coef: []float64{1, 1}, Offsets: []float64{0, 0}}
	if _, err := Attributes(gs, attr); err == nil || !strings.Contains(err.Error(), "attribute columns [2, 4)") {
		t.Fatalf("error %v, want the attribute columns named", err)
	}
}

// BenchmarkLabels times the feature map of whole TU data sets at t_max = 5
// (the Gram product is sparsegram's benchmark).
func BenchmarkLabels(b *testing.B) {
	for _, name := range []string{"MUTAG", "NCI1"} {
		gs := tudatasettest.Load(b, name).Graphs
		var labels []float64
		for _, g := range gs {
			for v := range g.N {
				labels = append(labels, g.Node(v)[0])
			}
		}
		slices.Sort(labels)
		labels = slices.Compact(labels)
		opt := Options{Rounds: 5, BinWidth: 0.01, LabelCol: 0, Labels: labels, Unlabeled: -1}
		rng := rand.New(rand.NewPCG(1, 1))
		for range 5 * len(labels) {
			opt.Coef = append(opt.Coef, rng.NormFloat64()/rng.NormFloat64())
		}
		opt.Offsets = []float64{0, 0.001, 0.002, 0.003, 0.004}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Labels(gs, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
