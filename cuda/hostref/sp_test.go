//go:build cgo

package hostref

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/spkernel"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// SPPrograms returns the device programs for an SP kernel's node and length
// kernels: nil node kernel → constant 1, nil length kernel → exact match.
func spPrograms(t *testing.T, nk, lk microkernel.Kernel) (layout.Program, layout.Program) {
	if nk == nil {
		nk = &microkernel.Constant{C: 1}
	}
	if lk == nil {
		lk = &microkernel.KroneckerDelta{H: 0, Col: 0, Width: 1}
	}
	np, err := layout.Compile(nk)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := layout.Compile(lk)
	if err != nil {
		t.Fatal(err)
	}
	return np, lp
}

// spBound is the relative error the SP kernels must stay within against
// spkernel, by precision: float64 to 1e-12; float32 to 1e-5, above the
// (7 + SP_FLUSH)·2⁻²⁴ ≈ 2.3e-6 bound of sp.cuh's accumulation (README).
var spBound = map[int]float64{64: 1e-12, 32: 1e-5}

// TestEmulatedSP runs the shortest-path kernels of src/sp.cuh (vertex stage,
// walk stage and reduction, persistent blocks, chunks) on host threads against
// gokernel/spkernel, in both precisions.
func TestEmulatedSP(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	X := append(testgraphs.EdgeCases(21), testgraphs.Random(rng, 30, 45, false))
	Y := append(testgraphs.EdgeCases(22)[2:], testgraphs.Random(rng, 25, 30, true))
	nodeKernels := []string{"", `{"kind":"kronecker_delta","h":0,"col":0}`, `{"kind":"product","terms":[{"kind":"kronecker_delta","h":0.3,"col":1},{"kind":"square_exponential","length_scale":1.2,"col":2}]}`}
	lengthKernels := []string{"", `{"kind":"square_exponential","length_scale":0.7,"col":0}`}
	for ni, nks := range nodeKernels {
		for li, lks := range lengthKernels {
			for _, wc := range []int{spkernel.HopCounts, spkernel.GraphWeight} {
				for _, sym := range []bool{true, false} {
					t.Run(fmt.Sprintf("node%d/len%d/w%d/sym=%v", ni, li, wc, sym), func(t *testing.T) {
						var nk, lk microkernel.Kernel
						if nks != "" {
							nk = parse(t, nks)
						}
						if lks != "" {
							lk = parse(t, lks)
						}
						opt := spkernel.Options{NodeKernel: nk, LengthKernel: lk, WeightCol: wc, NJobs: 1}
						ys := Y
						if sym {
							ys = X
						}
						want := make([]float64, len(X)*len(ys))
						if err := spkernel.Gram(X, ys, sym, opt, want); err != nil {
							t.Fatal(err)
						}
						lists := [][]*graph.Graph{X}
						if !sym {
							lists = append(lists, ys)
						}
						L, lengths, err := layout.SP(lists, wc, testgraphs.Cols, 1)
						if err != nil {
							t.Fatal(err)
						}
						var LY *layout.SPGraphs
						if !sym {
							LY = L[1]
						}
						var pairs []int32
						for i := range X {
							for j := range ys {
								pairs = append(pairs, int32(i), int32(j))
							}
						}
						np, lp := spPrograms(t, nk, lk)
						for _, prec := range []int{64, 32} {
							// 4000 words: the largest pair (45×45 nodes) fits, and the
							// 81 pairs take several chunks.
							got, err := (Emulator{}).SP(L[0], LY, &np, &lp, lengths, pairs, 3, 4000, prec)
							if err != nil {
								t.Fatal(err)
							}
							checkSP(t, got, want, prec, len(ys))
						}
					})
				}
			}
		}
	}
}

// TestEmulatedSPFloat32Large: one pair with tens of millions of SP-edge pairs
// (so that each thread sums about a million terms) stays within the float32
// bound: the per-thread sums are flushed into double.
func TestEmulatedSPFloat32Large(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	X := []*graph.Graph{testgraphs.Random(rng, 110, 200, false), testgraphs.Random(rng, 100, 180, false)}
	nk := parse(t, `{"kind":"square_exponential","length_scale":1.5,"col":2}`)
	lk := parse(t, `{"kind":"square_exponential","length_scale":2,"col":0}`)
	opt := spkernel.Options{NodeKernel: nk, LengthKernel: lk, WeightCol: spkernel.HopCounts, NJobs: 1}
	want := make([]float64, 4)
	if err := spkernel.Gram(X, nil, true, opt, want); err != nil {
		t.Fatal(err)
	}
	L, lengths, err := layout.SP([][]*graph.Graph{X}, spkernel.HopCounts, testgraphs.Cols, 1)
	if err != nil {
		t.Fatal(err)
	}
	np, lp := spPrograms(t, nk, lk)
	pairs := []int32{0, 0, 0, 1, 1, 1}
	got, err := (Emulator{}).SP(L[0], nil, &np, &lp, lengths, pairs, 1, 1<<16, 32)
	if err != nil {
		t.Fatal(err)
	}
	for k, ij := range [][2]int{{0, 0}, {0, 1}, {1, 1}} {
		w := want[ij[0]*2+ij[1]]
		e := accuracy.Err(got[k], w, 0)
		t.Logf("pair %v: %d×%d SP-edge pairs, float32 relative error %.2g", ij, L[0].NumSP(ij[0]), L[0].NumSP(ij[1]), e)
		if !(e <= spBound[32]) {
			t.Errorf("pair %v: float32 %v, spkernel %v (relative error %.2g)", ij, got[k], w, e)
		}
	}
}

// checkSP compares an emulated shortest-path Gram matrix got (cols columns)
// with spkernel's want within spBound[prec] and logs the worst error.
func checkSP(t *testing.T, got, want []float64, prec, cols int) {
	t.Helper()
	worst := 0.0
	for k := range want {
		e := accuracy.Err(got[k], want[k], 0)
		worst = max(worst, e)
		if !(e <= spBound[prec]) {
			t.Errorf("float%d: K[%d][%d] = %v, spkernel %v", prec, k/cols, k%cols, got[k], want[k])
		}
	}
	t.Logf("float%d: worst relative error %.2g", prec, worst)
}
