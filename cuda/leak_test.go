//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// requireEmulated is requireGPU for tests that need the host-emulated
// library's hooks (emuhooks.go).
func requireEmulated(t *testing.T) {
	t.Helper()
	requireGPU(t)
	if ds, err := Devices(); err != nil || len(ds) == 0 || ds[0].Name != "graphgram host emulation" {
		t.Skip("needs the host-emulated library")
	}
}

// TestGPUErrorPathsEmulated makes every call of the C API fail part-way, at
// each of its fallible runtime calls in turn (the emulated runtime's fault
// injection), for at least 1,000 failing calls, and requires that no stream,
// event or device allocation is left alive after any of them, and at most
// one pinned host buffer (the device's cached staging buffer). The calls
// the bridge recovers from (an injected out-of-memory splits the work, a
// failed pinning stages in ordinary memory) count as well.
func TestGPUErrorPathsEmulated(t *testing.T) {
	requireEmulated(t)
	defer emuFailAfter(0)
	rng := rand.New(rand.NewPCG(61, 62))
	var X []*graph.Graph
	for i := 0; i < 2; i++ { // small: the emulation runs ~1,500 calls
		n := 3 + rng.IntN(3)
		X = append(X, testgraphs.Random(rng, n, n+rng.IntN(n), i%2 == 0))
	}
	ks := testgraphs.KernelSets[len(testgraphs.KernelSets)-1]
	opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1}
	sopt := spkernel.Options{WeightCol: spkernel.HopCounts, NodeKernel: testgraphs.Parse(`{"kind":"square_exponential","length_scale":1.2,"col":2}`),
		LengthKernel: testgraphs.Parse(`{"kind":"square_exponential","length_scale":0.7,"col":0}`)}
	spLimit := spStreamLimit(t, X, sopt.WeightCol, Float64, 1)
	f := &sparsegram.Features{NumCols: 4, Ptr: []int{0, 2, 3, 5}, Col: []int32{0, 3, 1, 0, 2}, Val: []uint32{3, 1, 2, 5, 7}}
	n := len(X)
	calls := []struct {
		name string
		run  func() error
	}{
		{"gram/table", func() error {
			_, err := MarginalizedGram(X, nil, nil, nil, true, opt, 0, Float64, make([]float64, n*n))
			return err
		}},
		{"gram/evaluated", func() error {
			co := callOptions{flags: 1} // GGC_FLAG_NO_TABLE
			_, err := gram(co, X, X[:1], nil, nil, false, opt, 0, Float32, make([]float64, n), nil, nil, nil)
			return err
		}},
		{"grad", func() error {
			np := mgk.NumParams(opt)
			_, err := MarginalizedGramGrad(X, nil, nil, nil, true, opt, 0, Float64, make([]float64, n*n), make([]float64, n*n*np), nil)
			return err
		}},
		{"nodal", func() error {
			tn := 0
			for _, g := range X {
				tn += g.N
			}
			_, err := MarginalizedNodal(X, nil, nil, nil, true, opt, 0, Float64, make([]float64, tn*tn))
			return err
		}},
		{"sp", func() error {
			co := callOptions{memLimit: spLimit} // several chunks: the streamed pipeline
			return shortestPath(co, X, nil, true, sopt, 0, Float64, SPHybrid{CPUWork: -1}, make([]float64, n*n), nil)
		}},
		{"explicit", func() error {
			return ExplicitGram(f, nil, true, sparsegram.SumProduct, 0, make([]float64, 9), nil)
		}},
	}
	check := func(what string) {
		t.Helper()
		c, err := emuCounts()
		if err != nil {
			t.Fatal(err)
		}
		if c.Streams != 0 || c.Events != 0 || c.DevAllocs != 0 || c.DevBytes != 0 || c.Pinned > 1 {
			t.Fatalf("%s: left alive: %d streams, %d events, %d device allocations (%d B), %d pinned buffers (want 0, 0, 0, 0, at most 1)",
				what, c.Streams, c.Events, c.DevAllocs, c.DevBytes, c.Pinned)
		}
	}
	failed, byErr := 0, 0
	for round := 0; failed < 1000; round++ {
		for _, c := range calls {
			for k := int64(1); ; k++ {
				if _, err := emuFailAfter(k); err != nil {
					t.Fatal(err)
				}
				err := c.run()
				left, _ := emuFailAfter(0)
				if left > 0 { // the call made fewer than k fallible runtime calls
					if err != nil {
						t.Fatalf("%s without an injected failure: %v", c.name, err)
					}
					if round == 0 {
						t.Logf("%s: %d fallible runtime calls", c.name, k-1)
					}
					break
				}
				failed++
				if err != nil {
					byErr++
				}
				check(fmt.Sprintf("%s failing at runtime call %d", c.name, k))
				if round > 0 && failed >= 1000 {
					break
				}
			}
			check(c.name + " (no failure)")
		}
	}
	t.Logf("%d calls failed part-way (%d of them returned the error, the others recovered)", failed, byErr)
	if err := emuReleaseHostBuffers(); err != nil {
		t.Fatal(err)
	}
	if c, _ := emuCounts(); c.Pinned != 0 {
		t.Errorf("%d pinned buffers left after releasing the cached ones", c.Pinned)
	}
}

// TestGPUPinnedReuseEmulated: repeated shortest-path calls reuse their
// device's pinned staging buffer (one cudaMallocHost, grown only when a call
// needs more), also when called from several goroutines at once.
func TestGPUPinnedReuseEmulated(t *testing.T) {
	requireEmulated(t)
	emuReleaseHostBuffers() // checked below
	rng := rand.New(rand.NewPCG(63, 64))
	var X []*graph.Graph
	for i := 0; i < 4; i++ {
		X = append(X, testgraphs.Random(rng, 5+i, 8+2*i, false))
	}
	opt := spkernel.Options{WeightCol: spkernel.HopCounts}
	want := make([]float64, len(X)*len(X))
	if err := spkernel.Gram(X, nil, true, opt, want); err != nil {
		t.Fatal(err)
	}
	run := func() error {
		got := make([]float64, len(want))
		if err := ShortestPathGram(X, nil, true, opt, 0, Float64, SPHybrid{CPUWork: -1}, got, nil); err != nil {
			return err
		}
		for k := range want {
			if !(accuracy.Err(got[k], want[k], 0) <= spTol[Float64]) {
				return fmt.Errorf("K[%d] = %v, spkernel %v", k, got[k], want[k])
			}
		}
		return nil
	}
	c0, _ := emuCounts()
	const calls = 20
	for i := 0; i < calls; i++ {
		if err := run(); err != nil {
			t.Fatal(err)
		}
	}
	c1, _ := emuCounts()
	if d := c1.PinnedCalls - c0.PinnedCalls; d != 1 || c1.Pinned != 1 {
		t.Errorf("%d calls pinned host memory %d times and hold %d pinned buffers, want once and 1", calls, d, c1.Pinned)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() { errs <- run() }()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if c, _ := emuCounts(); c.Pinned != 1 || c.Streams != 0 || c.Events != 0 || c.DevAllocs != 0 {
		t.Errorf("after concurrent calls: %+v", c)
	}
	if err := emuReleaseHostBuffers(); err != nil {
		t.Fatal(err)
	}
	if c, _ := emuCounts(); c.Pinned != 0 {
		t.Errorf("%d pinned buffers after release", c.Pinned)
	}
}
