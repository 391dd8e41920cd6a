//go:build !cuda

package cuda

import (
	"time"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// Built reports whether this binary was built with the cuda build tag.
const Built = false

// SetLibraryPath sets the path of libggcuda.so; without the cuda tag it does nothing.
func SetLibraryPath(path string) {}

// LibraryPath returns the library path in use; empty without the cuda tag.
func LibraryPath() string { return "" }

// Available reports whether a CUDA device can be used, and why not.
func Available() (bool, string) { return false, ErrNotBuilt.Error() }

// Check says whether CUDA device index device can be used; without the cuda
// tag it returns ErrNotBuilt.
func Check(device int) error { return ErrNotBuilt }

// Devices lists the CUDA devices.
func Devices() ([]Device, error) { return nil, ErrNotBuilt }

// MarginalizedGram computes the marginalized-kernel Gram matrix on a device;
// without the cuda tag it returns ErrNotBuilt.
func MarginalizedGram(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// MarginalizedGramStats is MarginalizedGram with per-entry iteration counts
// and timings; without the cuda tag it returns ErrNotBuilt.
func MarginalizedGramStats(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64, iters []int32, stats *Stats) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// MarginalizedGramGrad computes the Gram matrix and its gradient with respect
// to the hyperparameters on a device; without the cuda tag it returns
// ErrNotBuilt.
func MarginalizedGramGrad(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out, grad []float64, iters []int32) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// MarginalizedNodal computes the node-pair similarities of mgk.Nodal on a
// device; without the cuda tag it returns ErrNotBuilt.
func MarginalizedNodal(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// ShortestPathGram computes the shortest-path kernel's Gram matrix on a
// device; without the cuda tag it returns ErrNotBuilt.
func ShortestPathGram(X, Y []*graph.Graph, symmetric bool, opt spkernel.Options, device int, prec Precision, hybrid SPHybrid, out []float64, stats *Stats) error {
	return ErrNotBuilt
}

// ExplicitGram computes the Gram matrix of explicit feature maps (as
// sparsegram.Gram) on a device; without the cuda tag it returns ErrNotBuilt.
func ExplicitGram(X, Y *sparsegram.Features, symmetric bool, semiring sparsegram.Semiring, device int, out []float64, stats *Stats) error {
	return ErrNotBuilt
}

// MarginalizedDiag computes K(X[i], X[i]) on a device; without the cuda tag it
// returns ErrNotBuilt.
func MarginalizedDiag(X []*graph.Graph, startX [][]float64, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// WarmUp prepares a CUDA device for the calls to come; without the cuda tag
// it returns ErrNotBuilt.
func WarmUp(device int) (time.Duration, error) { return 0, ErrNotBuilt }

// CachedMemory returns the memory kept for a device between calls; without
// the cuda tag it returns ErrNotBuilt.
func CachedMemory(device int) (deviceBytes, pinnedBytes int64, err error) { return 0, 0, ErrNotBuilt }

// ReleaseMemory frees the memory kept for a device between calls; without
// the cuda tag it returns ErrNotBuilt.
func ReleaseMemory(device int) (deviceBytes, pinnedBytes int64, err error) { return 0, 0, ErrNotBuilt }

// EmulatedLaunchTimeout is the emulated library's test hook; without CUDA
// there is none.
func EmulatedLaunchTimeout(n int64) error { return ErrNotBuilt }
