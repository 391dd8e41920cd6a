package pyramid

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graph/graphtest"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

// TestEmbedPath checks the path on three nodes: eigenvalues √2, 0, −√2 with
// eigenvectors (1, √2, 1)/2, (1, 0, −1)/√2 and (1, −√2, 1)/2.
func TestEmbedPath(t *testing.T) {
	g := graphtest.Labelled(3, []int64{0, 1, 1, 2}, []float64{0, 0, 0})
	r := math.Sqrt2 / 2
	for _, tc := range []struct {
		d    int
		want []float64
	}{
		// d = 2 keeps ±√2 (magnitude √2 beats 0), ordered √2, −√2.
		{2, []float64{0.5, 0.5, r, r, 0.5, 0.5}},
		{3, []float64{0.5, r, 0.5, r, 0, r, 0.5, r, 0.5}},
		{5, []float64{0.5, r, 0.5, r, 0, r, 0.5, r, 0.5}},
	} {
		u, k, err := Embed(g, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if k != min(3, tc.d) || len(u) != len(tc.want) {
			t.Fatalf("d=%d: %d axes, %d values", tc.d, k, len(u))
		}
		for i := range u {
			if math.Abs(u[i]-tc.want[i]) > 1e-12 {
				t.Fatalf("d=%d: coordinates %v, want %v", tc.d, u, tc.want)
			}
		}
	}
}

// reference is the kernel by its definition: per level, the histogram
// intersection of the two graphs' (label, axis, cell) counts, combined as
// I_{L−1} + Σ_{j<L−1} 2^{−(L−1−j)} (I_j − I_{j+1}).
func reference(t testing.TB, a, b *graph.Graph, L, d int, labelled bool) float64 {
	type key struct {
		label   float64
		q, cell int
	}
	hist := func(g *graph.Graph, j int) map[key]int {
		u, k, err := Embed(g, d)
		if err != nil {
			t.Fatal(err)
		}
		h := map[key]int{}
		for v := range g.N {
			var l float64
			if labelled {
				l = g.Node(v)[0]
			}
			for q := range k {
				c := int(math.Floor(u[v*k+q] * float64(int(1)<<j)))
				h[key{l, q, min(c, 1<<j-1)}]++
			}
		}
		return h
	}
	I := make([]float64, L)
	for j := range L {
		ha, hb := hist(a, j), hist(b, j)
		for k, x := range ha {
			I[j] += float64(min(x, hb[k]))
		}
	}
	K := I[L-1]
	for j := 0; j < L-1; j++ {
		K += math.Ldexp(I[j]-I[j+1], -(L - 1 - j))
	}
	return K
}

func TestFeaturesAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var gs []*graph.Graph
	for range 12 {
		gs = append(gs, graphtest.RandomLabelled(rng, 1+rng.IntN(14), 0.3, 0, 3))
	}
	gs = append(gs, graphtest.Labelled(0, nil, nil))
	for _, tc := range []struct {
		L, d     int
		labelled bool
	}{{1, 1, false}, {4, 6, true}, {4, 6, false}, {3, 20, true}, {6, 2, true}} {
		col := -1
		if tc.labelled {
			col = 0
		}
		f, err := Features(gs, Options{Levels: tc.L, Dim: tc.d, NodeLabelCol: col, NJobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(gs)*len(gs))
		if err := sparsegram.Gram(f, nil, true, sparsegram.Options{Semiring: sparsegram.SumMin}, out); err != nil {
			t.Fatal(err)
		}
		for i := range gs {
			for j := range gs {
				got := out[i*len(gs)+j] * Scale(tc.L)
				if want := reference(t, gs[i], gs[j], tc.L, tc.d, tc.labelled); math.Abs(got-want) > 1e-12*max(1, want) {
					t.Fatalf("L=%d d=%d labels=%v: K[%d][%d] = %v, want %v", tc.L, tc.d, tc.labelled, i, j, got, want)
				}
			}
		}
	}
}

func TestFeaturesErrors(t *testing.T) {
	g := graphtest.Labelled(2, []int64{0, 1}, []float64{0, 1})
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"levels 0", Options{Levels: 0, Dim: 6}},
		{"levels too many", Options{Levels: MaxLevels + 1, Dim: 6}},
		{"dim 0", Options{Levels: 4, Dim: 0}},
		{"dim too large", Options{Levels: 4, Dim: MaxDim + 1}},
		{"label column", Options{Levels: 4, Dim: 6, NodeLabelCol: 3}},
	} {
		if _, err := Features([]*graph.Graph{g}, tc.opt); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestCallIndependence checks that a graph's row depends on it alone: its
// intersections with another graph are the same bits whatever else is in the call.
func TestCallIndependence(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var gs []*graph.Graph
	for range 10 {
		gs = append(gs, graphtest.RandomLabelled(rng, 2+rng.IntN(12), 0.3, 0, 3))
	}
	pair := func(gs []*graph.Graph, a, b int) float64 {
		f, err := Features(gs, Options{Levels: 4, Dim: 6, NodeLabelCol: 0, NJobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(gs)*len(gs))
		if err := sparsegram.Gram(f, nil, true, sparsegram.Options{Semiring: sparsegram.SumMin}, out); err != nil {
			t.Fatal(err)
		}
		return out[a*len(gs)+b]
	}
	want := pair(gs, 2, 7)
	if got := pair([]*graph.Graph{gs[7], gs[2]}, 1, 0); got != want {
		t.Fatalf("alone: %v, in the call: %v", got, want)
	}
}
