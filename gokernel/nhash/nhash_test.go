package nhash

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
)

func randomGraph(rng *rand.Rand, n, labels int) *graph.Graph {
	var edges []int64
	var w []float64
	for u := range n {
		for v := u; v < n; v++ {
			if rng.Float64() < 0.3 || (u == v && rng.Float64() < 0.1) {
				edges = append(edges, int64(u), int64(v))
				w = append(w, 1)
			}
		}
	}
	nf := make([]float64, n)
	for v := range nf {
		nf[v] = float64(rng.IntN(labels) * 3)
	}
	g, err := graph.New(n, edges, w, nf, 1, nil, 0)
	if err != nil {
		panic(err)
	}
	return g
}

// refRot is the rotation written out bit by bit.
func refRot(x uint64, d, b int) uint64 {
	x &= 1<<b - 1
	for range d % b {
		top := x >> (b - 1) & 1
		x = (x<<1)&(1<<b-1) | top
	}
	return x
}

// referenceKernel computes the kernel from the definition: labels by maps,
// intersections by counting.
func referenceKernel(a, b *graph.Graph, opt Options, bitsOf map[float64]uint64) float64 {
	run := func(gr *graph.Graph) [][]uint64 {
		lab := make([]uint64, gr.N)
		for v := range lab {
			lab[v] = bitsOf[gr.Node(v)[0]] & (1<<opt.Bits - 1)
		}
		var rounds [][]uint64
		for range opt.Rounds {
			next := make([]uint64, gr.N)
			for v := range next {
				x := refRot(lab[v], 1, opt.Bits)
				occ := map[uint64]int{}
				for _, u := range gr.Col[gr.RowPtr[v]:gr.RowPtr[v+1]] {
					occ[lab[u]]++
				}
				for l, o := range occ {
					if opt.CountSensitive {
						x ^= refRot(l^uint64(o), o, opt.Bits)
					} else if o%2 == 1 {
						x ^= l
					}
				}
				next[v] = x
			}
			lab = next
			rounds = append(rounds, lab)
		}
		return rounds
	}
	ra, rb := run(a), run(b)
	k := 0.0
	for r := range opt.Rounds {
		ca := map[uint64]int{}
		for _, l := range ra[r] {
			ca[l]++
		}
		c := 0
		for l, n := range map[uint64]int(countOf(rb[r])) {
			c += min(n, ca[l])
		}
		if c > 0 {
			k += float64(c) / float64(a.N+b.N-c)
		}
	}
	return k / float64(opt.Rounds)
}

func countOf(ls []uint64) map[uint64]int {
	m := map[uint64]int{}
	for _, l := range ls {
		m[l]++
	}
	return m
}

func kernel(t *testing.T, gs []*graph.Graph, opt Options) []float64 {
	parts, err := Features(gs, opt)
	if err != nil {
		t.Fatal(err)
	}
	n := len(gs)
	sizes := make([]float64, n)
	for g, gr := range gs {
		sizes[g] = float64(gr.N)
	}
	out, inter := make([]float64, n*n), make([]float64, n*n)
	for _, f := range parts {
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := sparsegram.Gram(f, nil, true, sparsegram.Options{Semiring: sparsegram.SumMin}, inter); err != nil {
			t.Fatal(err)
		}
		Accumulate(out, inter, sizes, sizes)
	}
	Average(out, opt.Rounds)
	return out
}

func TestDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var gs []*graph.Graph
	for i := range 15 {
		gs = append(gs, randomGraph(rng, i%9, 4))
	}
	gs = append(gs, gs[3]) // a repeated graph: K = 1 with its twin
	for _, tc := range []struct{ bits, rounds int }{{8, 3}, {3, 2}, {64, 4}, {1, 2}} {
		for _, cs := range []bool{false, true} {
			bitsOf := map[float64]uint64{}
			var values []float64
			var bs []uint64
			for l := range 4 {
				values = append(values, float64(3*l))
				bs = append(bs, rng.Uint64())
				bitsOf[float64(3*l)] = bs[l]
			}
			opt := Options{Rounds: tc.rounds, Bits: tc.bits, CountSensitive: cs, LabelValues: values, LabelBits: bs, NJobs: 2}
			K := kernel(t, gs, opt)
			n := len(gs)
			for i := range n {
				for j := range n {
					want := referenceKernel(gs[i], gs[j], opt, bitsOf)
					if d := K[i*n+j] - want; d > 1e-15 || d < -1e-15 {
						t.Errorf("bits=%d R=%d cs=%v K[%d,%d] = %v, want %v", tc.bits, tc.rounds, cs, i, j, K[i*n+j], want)
					}
				}
				if gs[i].N > 0 && K[i*n+i] != 1 {
					t.Errorf("K[%d,%d] = %v, want 1", i, i, K[i*n+i])
				}
			}
			if K[3*n+n-1] != 1 {
				t.Errorf("twins: %v, want 1", K[3*n+n-1])
			}
		}
	}
}

func TestRot(t *testing.T) {
	for b := 1; b <= 64; b++ {
		h := hasher{bits: uint(b), mask: ^uint64(0) >> (64 - b)}
		for _, x := range []uint64{0, 1, 0xdeadbeefcafe, ^uint64(0)} {
			for _, d := range []int{0, 1, 2, 7, 63, 64, 65} {
				if got, want := h.rot(x, d), refRot(x, d, b); got != want {
					t.Fatalf("rot(%x, %d) on %d bits = %x, want %x", x, d, b, got, want)
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gs := []*graph.Graph{randomGraph(rng, 5, 2)}
	good := Options{Rounds: 2, Bits: 8, LabelValues: []float64{0, 3}, LabelBits: []uint64{1, 2}}
	for _, mod := range []func(*Options){
		func(o *Options) { o.Rounds = 0 },
		func(o *Options) { o.Bits = 65 },
		func(o *Options) { o.LabelBits = o.LabelBits[:1] },
		func(o *Options) { o.LabelValues = []float64{3, 0} },
		func(o *Options) { o.LabelValues = []float64{0, 6} },
		func(o *Options) { o.NodeLabelCol = 1 },
	} {
		opt := good
		opt.LabelValues, opt.LabelBits = slices.Clone(good.LabelValues), slices.Clone(good.LabelBits)
		mod(&opt)
		if _, err := Features(gs, opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	if _, err := Features(gs, good); err != nil {
		t.Error(err)
	}
}
