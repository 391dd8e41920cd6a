//go:build cuda

package cuda

import (
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/mgk"
)

// TestGPULaunchSplit: with LaunchTerms below the work of two pairs, the
// bridge launches the marginalized kernel pair by pair (Gram and gradient,
// symmetric and rectangular), and the results still agree with the CPU.
func TestGPULaunchSplit(t *testing.T) {
	requireGPU(t)
	defer func(v int64) { LaunchTerms = v }(LaunchTerms)
	X, Y := suiteGraphs()
	opt := mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[2].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[2].EK), Q: 0.05}
	smallest := launchTerms(X, X, []int{0}, []int{0}, false)
	for i := range X {
		smallest = min(smallest, launchTerms(X, X, []int{i}, []int{i}, false))
	}
	LaunchTerms = smallest
	var st Stats
	out := make([]float64, len(X)*len(X))
	if _, err := MarginalizedGramStats(X, nil, nil, nil, true, opt, 0, Float64, out, nil, &st); err != nil {
		t.Fatal(err)
	}
	if want := len(X); st.Batches < want {
		t.Errorf("LaunchTerms %d: %d launches for %d graphs, want at least one per graph", LaunchTerms, st.Batches, want)
	}
	t.Logf("LaunchTerms %d: %d launches", LaunchTerms, st.Batches)
	compare(t, X, nil, nil, nil, true, opt, Float64)
	compare(t, X, Y, nil, nil, false, opt, Float64)
	compareGrad(t, X, nil, nil, nil, true, opt, Float64)
}
