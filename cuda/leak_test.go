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
// injection), for at least 1,000 failing calls, and requires that no stream
// or event is left alive after any of them, no device allocation but those
// kept for the next calls (CachedMemory), and at most one pinned host buffer
// (the device's cached staging buffer). The calls
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
		kept := keptDeviceBytes(t)
		if c.Streams != 0 || c.Events != 0 || c.DevBytes != kept || (c.DevAllocs == 0) != (kept == 0) || c.Pinned > 1 {
			t.Fatalf("%s: left alive: %d streams, %d events, %d device allocations (%d B; %d B kept for the next calls), %d pinned buffers (want 0, 0, the kept ones, at most 1)",
				what, c.Streams, c.Events, c.DevAllocs, c.DevBytes, kept, c.Pinned)
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
	if _, _, err := ReleaseMemory(0); err != nil {
		t.Fatal(err)
	}
	if c, _ := emuCounts(); c.Pinned != 0 || c.DevAllocs != 0 || c.DevBytes != 0 {
		t.Errorf("after releasing the cached memory: %d pinned buffers, %d device allocations (%d B) left", c.Pinned, c.DevAllocs, c.DevBytes)
	}
}

// keptDeviceBytes is CachedMemory's device bytes of device 0.
func keptDeviceBytes(t *testing.T) int64 {
	t.Helper()
	b, _, err := CachedMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGPUMemoryReuseEmulated: a call repeated with the same inputs takes all
// its device memory from what the first one left (no cudaMalloc), for each
// kind of call, and computes the same values; ReleaseMemory frees what is kept;
// WarmUp runs once a process and library.
func TestGPUMemoryReuseEmulated(t *testing.T) {
	requireEmulated(t)
	if _, _, err := ReleaseMemory(0); err != nil {
		t.Fatal(err)
	}
	took, err := WarmUp(0)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := WarmUp(0); err != nil || again != took {
		t.Errorf("a second WarmUp: %v, %v; want the first's outcome (%v, nil)", again, err, took)
	}
	rng := rand.New(rand.NewPCG(65, 66))
	var X []*graph.Graph
	for i := 0; i < 5; i++ {
		n := 4 + 2*i
		X = append(X, testgraphs.Random(rng, n, n+rng.IntN(n), i%2 == 0))
	}
	n := len(X)
	ks := testgraphs.KernelSets[len(testgraphs.KernelSets)-1]
	opt := mgk.Options{NodeKernel: testgraphs.Parse(ks.NK), EdgeKernel: testgraphs.Parse(ks.EK), Q: 0.1}
	f := &sparsegram.Features{NumCols: 4, Ptr: []int{0, 2, 3, 5}, Col: []int32{0, 3, 1, 0, 2}, Val: []uint32{3, 1, 2, 5, 7}}
	calls := []struct {
		name  string
		size  int
		bound float64
		run   func(out []float64) error
	}{
		{"gram", n * n, 1e-9, func(out []float64) error {
			_, err := MarginalizedGram(X, nil, nil, nil, true, opt, 0, Float64, out)
			return err
		}},
		{"grad", n * n * (1 + mgk.NumParams(opt)), 1e-4, func(out []float64) error {
			_, err := MarginalizedGramGrad(X, nil, nil, nil, true, opt, 0, Float32, out[:n*n], out[n*n:], nil)
			return err
		}},
		{"sp", n * n, 1e-9, func(out []float64) error {
			return ShortestPathGram(X, nil, true, spkernel.Options{WeightCol: spkernel.HopCounts}, 0, Float64, SPHybrid{CPUWork: -1}, out, nil)
		}},
		{"explicit", 9, 0, func(out []float64) error {
			return ExplicitGram(f, nil, true, sparsegram.SumProduct, 0, out, nil)
		}},
	}
	for _, c := range calls {
		first, second := make([]float64, c.size), make([]float64, c.size)
		if err := c.run(first); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		c0, _ := emuCounts()
		if err := c.run(second); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		c1, _ := emuCounts()
		if d := c1.DevAllocCalls - c0.DevAllocCalls; d != 0 {
			t.Errorf("%s: the repeated call allocated device memory %d times, want 0", c.name, d)
		}
		// The device's sums may be ordered differently from call to call
		// (shared-memory atomics): the same values within the precision's
		// bound, not the same bits.
		if worst, at := accuracy.Worst(second, first, accuracy.Scale(first)); !(worst <= c.bound) {
			t.Errorf("%s: entry %d is %v on the first call and %v on the second (relative %.3g, allowed %.0e)", c.name, at, first[at], second[at], worst, c.bound)
		}
	}
	kept, pinned, err := CachedMemory(0)
	if err != nil || kept <= 0 || pinned <= 0 {
		t.Fatalf("CachedMemory: %d device and %d pinned bytes kept (%v), want both > 0", kept, pinned, err)
	}
	if c, _ := emuCounts(); c.DevBytes != kept {
		t.Errorf("%d device bytes allocated, %d reported kept", c.DevBytes, kept)
	}
	freed, freedPinned, err := ReleaseMemory(0)
	if err != nil || freed != kept || freedPinned != pinned {
		t.Errorf("ReleaseMemory freed %d and %d bytes (%v), want %d and %d", freed, freedPinned, err, kept, pinned)
	}
	if c, _ := emuCounts(); c.DevAllocs != 0 || c.DevBytes != 0 || c.Pinned != 0 {
		t.Errorf("after ReleaseMemory: %+v", c)
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
	if c, _ := emuCounts(); c.Pinned != 1 || c.Streams != 0 || c.Events != 0 || c.DevBytes != keptDeviceBytes(t) {
		t.Errorf("after concurrent calls: %+v (%d device bytes kept)", c, keptDeviceBytes(t))
	}
	if err := emuReleaseHostBuffers(); err != nil {
		t.Fatal(err)
	}
	if c, _ := emuCounts(); c.Pinned != 0 {
		t.Errorf("%d pinned buffers after release", c.Pinned)
	}
}
