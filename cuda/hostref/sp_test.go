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

// TestEmulatedSP runs the shortest-path kernels of src/sp.cuh (vertex stage,
// walk stage and reduction, persistent blocks, chunks) on host threads against
// gokernel/spkernel.
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
						got := EmuSP(L[0], LY, &np, &lp, lengths, pairs, 3, 2000)
						for k := range want {
							if relErr(got[k], want[k]) > 1e-12 {
								t.Errorf("K[%d][%d] = %v, spkernel %v", k/len(ys), k%len(ys), got[k], want[k])
							}
						}
					})
				}
			}
		}
	}
}
