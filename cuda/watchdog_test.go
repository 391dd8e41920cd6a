//go:build cuda

package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/mgk"
)

// TestGPULaunchSplit: with a launch bound (callOptions.launchTerms, the
// default LaunchTerms) below the work of two pairs, the bridge launches the marginalized kernel pair by pair (Gram and gradient,
// symmetric and rectangular), and the results still agree with the CPU.
func TestGPULaunchSplit(t *testing.T) {
	requireGPU(t)
	X, Y := suiteGraphs()
	opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[2].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[2].EK), Q: 0.05}
	smallest := launchTerms(X, X, span{0, 1}, span{0, 1}, false)
	for i := range X {
		smallest = min(smallest, launchTerms(X, X, span{i, i + 1}, span{i, i + 1}, false))
	}
	co := callOptions{launchTerms: smallest}
	var st Stats
	out := make([]float64, len(X)*len(X))
	if _, err := gram(co, X, nil, nil, nil, true, opt, 0, Float64, out, nil, nil, &st); err != nil {
		t.Fatal(err)
	}
	if want := len(X); st.Batches < want {
		t.Errorf("launch bound %d: %d launches for %d graphs, want at least one per graph", smallest, st.Batches, want)
	}
	t.Logf("launch bound %d: %d launches", smallest, st.Batches)
	compare(t, co, X, nil, nil, nil, true, opt, Float64)
	compare(t, co, X, Y, nil, nil, false, opt, Float64)
	compareGrad(t, co, X, nil, nil, nil, true, opt, Float64)
}

// TestGPULaunchTimeoutEmulated: a launch stopped by the watchdog (the
// emulated library's cudaErrorLaunchTimeout) fails the call with
// ErrLaunchTimeout naming the device and the launch's pairs; once the
// context is restored the same call succeeds.
func TestGPULaunchTimeoutEmulated(t *testing.T) {
	requireGPU(t)
	if err := EmulatedLaunchTimeout(0); err != nil {
		t.Skipf("not the emulated library: %v", err)
	}
	defer EmulatedLaunchTimeout(0)
	X, Y := suiteGraphs()
	opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[2].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[2].EK), Q: 0.05}
	out := make([]float64, len(X)*len(Y))
	if err := EmulatedLaunchTimeout(1); err != nil {
		t.Fatal(err)
	}
	_, err := MarginalizedGram(X, Y, nil, nil, false, opt, 0, Float64, out)
	if !errors.Is(err, ErrLaunchTimeout) {
		t.Fatalf("error %v, want ErrLaunchTimeout", err)
	}
	for _, want := range []string{"device 0, pairs X[0:", "× Y[0:", "cudaErrorLaunchTimeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	EmulatedLaunchTimeout(0)
	compare(t, callOptions{}, X, Y, nil, nil, false, opt, Float64)
}
