package octile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile/octiletest"
)

// Benchmarks. Effective GFLOP/s counts 2 flops per nonzero of the product
// matrix W (one multiply-add per entry of a plain sparse mat-vec), whatever the
// path does, so that paths compare on the same work.
//
//	go test -run XXX -bench . -benchtime 200ms ./gokernel/octile
//
// TU data are read from tudataset.Dir ($GRAPHGRAM_DATASETS, or shared/datasets
// above the working directory); benchmarks on them are skipped when the files
// are missing.

// benchPair is a pair of graphs of a data set's typical size.
type benchPair struct {
	name string
	g, h *graph.Graph
}

var (
	benchOnce  sync.Once
	benchPairs []benchPair
)

// typicalPair returns the two graphs whose node counts are closest to the mean.
func typicalPair(gs []*graph.Graph) (*graph.Graph, *graph.Graph) {
	mean := 0.0
	for _, g := range gs {
		mean += float64(g.N)
	}
	mean /= float64(len(gs))
	idx := make([]int, len(gs))
	for i := range idx {
		idx[i] = i
	}
	d := func(i int) float64 { return abs(float64(gs[i].N) - mean) }
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case d(a) < d(b):
			return -1
		case d(a) > d(b):
			return 1
		}
		return 0
	})
	return gs[idx[0]], gs[idx[1]]
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// largestPair returns the two graphs with the most edges.
func largestPair(gs []*graph.Graph) (*graph.Graph, *graph.Graph) {
	s := slices.Clone(gs)
	slices.SortStableFunc(s, func(a, b *graph.Graph) int { return b.NumEdges() - a.NumEdges() })
	return s[0], s[1]
}

func loadBenchPairs() {
	feat := func(g *graph.Graph, seed uint64) *graph.Graph { return octiletest.WithEdgeFeatures(g, 3, seed) }
	for _, name := range []string{"MUTAG", "NCI1", "PROTEINS"} {
		gs, err := octiletest.ReadShared(name)
		if err != nil {
			continue
		}
		g, h := typicalPair(gs)
		benchPairs = append(benchPairs, benchPair{name, feat(g, 1), feat(h, 2)})
		if name == "PROTEINS" {
			g, h := largestPair(gs)
			benchPairs = append(benchPairs, benchPair{"PROTEINS-large", feat(g, 1), feat(h, 2)})
		}
	}
	benchPairs = append(benchPairs,
		benchPair{"NWS96", octiletest.NewmanWattsStrogatz(96, 3, 0.1, 1), octiletest.NewmanWattsStrogatz(96, 3, 0.1, 2)},
		benchPair{"BA96", octiletest.BarabasiAlbert(96, 6, 1), octiletest.BarabasiAlbert(96, 6, 2)})
}

func benchKernels() []struct {
	name string
	k    microkernel.Kernel
} {
	return []struct {
		name string
		k    microkernel.Kernel
	}{
		{"kdelta", &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}},
		{"constant", &microkernel.Constant{C: 1}},
		{"sqexp", &microkernel.SquareExponential{LengthScale: 0.5, Col: 1, Width: 1}},
	}
}

func benchPaths() []struct {
	name string
	opt  Options
} {
	return []struct {
		name string
		opt  Options
	}{
		{"auto", Options{}},
		{"tiled", Options{Path: Tiled}},
		{"ss", Options{Path: Tiled, Prim: SS}},
		{"ds", Options{Path: Tiled, Prim: DS}},
		{"dd", Options{Path: Tiled, Prim: DD}},
		{"sd", Options{Path: Tiled, Prim: SD}},
		{"factorized", Options{Path: Factorized}},
		{"explicit", Options{Path: Explicit}},
		{"eval", Options{Path: Eval}},
	}
}

// BenchmarkMatVec times one y += W·x per path on reordered (reorder.Best)
// packings, and the tiled path on natural ones.
func BenchmarkMatVec(b *testing.B) {
	benchOnce.Do(loadBenchPairs)
	for _, bp := range benchPairs {
		ra, err1 := PackReordered(bp.g)
		rb, err2 := PackReordered(bp.h)
		na, err3 := Pack(bp.g)
		nb, err4 := Pack(bp.h)
		if err := firstErr(err1, err2, err3, err4); err != nil {
			b.Fatal(err)
		}
		for _, kk := range benchKernels() {
			paths := benchPaths()
			paths = append(paths, struct {
				name string
				opt  Options
			}{"tiled-natural", Options{Path: Tiled}})
			for _, pp := range paths {
				a, c := ra, rb
				if pp.name == "tiled-natural" {
					a, c = na, nb
				}
				if pp.name == "eval" && kk.name != "sqexp" {
					continue // Eval ignores the class structure; one kernel shows its cost
				}
				b.Run(fmt.Sprintf("%s/%s/%s", bp.name, kk.name, pp.name), func(b *testing.B) {
					p := NewPair(pp.opt)
					if err := p.Reset(a, c, kk.k); err != nil {
						b.Skip(err)
					}
					n := a.N * c.N
					rng := rand.New(rand.NewPCG(1, 1))
					x, y := randVec(rng, n), make([]float64, n)
					b.ResetTimer()
					for b.Loop() {
						p.MatVec(x, y)
					}
					reportFlops(b, p.ProductNNZ())
					b.ReportMetric(p.Cost(), "model-ns")
					if pp.name == "auto" {
						b.ReportMetric(float64(p.Path()), "path")
					}
				})
			}
		}
	}
}

// BenchmarkReset times the per-pair set-up of each path (class table, dense
// tiles, terms, or the explicit product), reusing one Pair as a worker would.
func BenchmarkReset(b *testing.B) {
	benchOnce.Do(loadBenchPairs)
	ke := &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}
	for _, bp := range benchPairs {
		a, err1 := PackReordered(bp.g)
		c, err2 := PackReordered(bp.h)
		if err := firstErr(err1, err2); err != nil {
			b.Fatal(err)
		}
		for _, pp := range benchPaths() {
			if pp.name == "eval" {
				continue
			}
			b.Run(bp.name+"/"+pp.name, func(b *testing.B) {
				p := NewPair(pp.opt)
				for b.Loop() {
					if err := p.Reset(a, c, ke); err != nil {
						b.Skip(err)
					}
				}
			})
		}
	}
}

// BenchmarkPack times packing, with and without choosing the best order.
func BenchmarkPack(b *testing.B) {
	benchOnce.Do(loadBenchPairs)
	for _, bp := range benchPairs {
		b.Run(bp.name+"/natural", func(b *testing.B) {
			for b.Loop() {
				if _, err := Pack(bp.g); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bp.name+"/best", func(b *testing.B) {
			for b.Loop() {
				if _, err := PackReordered(bp.g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTile times the three primitives on one pair of tiles holding nnz
// nonzeros each (random positions in distinct columns and rows as far as
// possible, one edge class), to place the switch points: sparse×sparse costs
// ∝ nnz², dense×sparse ∝ nnz, dense×dense ∝ distinct columns plus nnz.
func BenchmarkTile(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, nnz := range []int{1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64} {
		pos := make([]uint8, 64)
		for i := range pos {
			pos[i] = uint8(i)
		}
		rng.Shuffle(64, func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
		pa := slices.Clone(pos[:nnz])
		slices.Sort(pa)
		rng.Shuffle(64, func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
		pb := slices.Clone(pos[:nnz])
		slices.Sort(pb)
		w := randVec(rng, nnz)
		eff := make([]int32, nnz)
		wb := randVec(rng, nnz)
		var dense [64]float64
		for k, p := range pb {
			dense[p] = wb[k]
		}
		X, Y := randVec(rng, 64), make([]float64, 64)
		// One group per distinct column of tile a.
		var gr groups
		ord := make([]int32, nnz)
		for i := range ord {
			ord[i] = int32(i)
		}
		slices.SortStableFunc(ord, func(x, y int32) int { return int(pa[x]&7) - int(pa[y]&7) })
		gr.ord = ord
		gr.tilePtr = []int32{0, 0}
		for i, k := range ord {
			if i == 0 || pa[k]&7 != pa[ord[i-1]]&7 {
				gr.eff = append(gr.eff, 0)
				gr.col = append(gr.col, pa[k]&7)
				gr.start = append(gr.start, int32(i))
			}
		}
		gr.start = append(gr.start, int32(nnz))
		gr.tilePtr[1] = int32(len(gr.eff))
		flops := 2 * nnz * nnz
		b.Run(fmt.Sprintf("ss/nnz=%d", nnz), func(b *testing.B) {
			for b.Loop() {
				ssTile(pa, w, eff, pb, wb, nnz, X, Y, 0, 0, 8)
			}
			reportFlops(b, flops/2)
		})
		b.Run(fmt.Sprintf("ds/nnz=%d", nnz), func(b *testing.B) {
			for b.Loop() {
				dsTile(pa, w, eff, dense[:], 64, X, Y, 0, 0, 8)
			}
			reportFlops(b, flops/2)
		})
		b.Run(fmt.Sprintf("dd/nnz=%d", nnz), func(b *testing.B) {
			for b.Loop() {
				ddTile(&gr, 0, pa, w, dense[:], 64, X, Y, 0, 0, 8)
			}
			reportFlops(b, flops/2)
			b.ReportMetric(float64(len(gr.eff)), "groups")
		})
	}
}

// BenchmarkKernel times the dense inner loops alone (SIMD or not, depending on
// the build).
func BenchmarkKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	var m [64]float64
	var x, y [8]float64
	copy(m[:], randVec(rng, 64))
	copy(x[:], randVec(rng, 8))
	b.Run("gemv8", func(b *testing.B) {
		for b.Loop() {
			gemv8(&y, 0.5, &m, &x)
		}
		b.ReportMetric(128/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "GFLOP/s")
	})
	b.Run("gemv8Go", func(b *testing.B) {
		for b.Loop() {
			gemv8Go(&y, 0.5, &m, &x)
		}
		b.ReportMetric(128/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "GFLOP/s")
	})
	for _, n := range []int{30, 96, 600} {
		xs, ys := randVec(rng, n), make([]float64, n)
		b.Run(fmt.Sprintf("axpy/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				axpy(0.5, xs, ys)
			}
			b.ReportMetric(float64(2*n)/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "GFLOP/s")
		})
	}
}

func reportFlops(b *testing.B, productNNZ int) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(2*float64(productNNZ)/ns, "GFLOP/s")
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
