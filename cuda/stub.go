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

// Library is one opened CUDA library; without the cuda tag there is none.
type Library struct{}

// Open opens the CUDA library at path; without the cuda tag it returns
// ErrNotBuilt.
func Open(path string) (*Library, error) { return nil, ErrNotBuilt }

// Path returns the path the library was opened by; empty without the cuda
// tag.
func (l *Library) Path() string { return "" }

// SetLibraryPath sets the library of the package-level functions; without
// the cuda tag it does nothing.
//
// Deprecated: open the library with Open and call its methods.
func SetLibraryPath(path string) {}

// LibraryPath returns the path of the package-level functions' library;
// empty without the cuda tag.
//
// Deprecated: use the Path of the Library that Open returns.
func LibraryPath() string { return "" }

// Available reports whether a CUDA device of the library can be used, and
// why not.
func (l *Library) Available() (bool, string) { return false, ErrNotBuilt.Error() }

// Check says whether the library's CUDA device index device can be used;
// without the cuda tag it returns ErrNotBuilt.
func (l *Library) Check(device int) error { return ErrNotBuilt }

// Devices lists the library's CUDA devices; without the cuda tag it returns
// ErrNotBuilt.
func (l *Library) Devices() ([]Device, error) { return nil, ErrNotBuilt }

// WarmUp prepares the library's CUDA device for the calls to come; without
// the cuda tag it returns ErrNotBuilt.
func (l *Library) WarmUp(device int) (time.Duration, error) { return 0, ErrNotBuilt }

// CachedMemory returns the memory the library keeps for a device between
// calls; without the cuda tag it returns ErrNotBuilt.
func (l *Library) CachedMemory(device int) (deviceBytes, pinnedBytes int64, err error) {
	return 0, 0, ErrNotBuilt
}

// ReleaseMemory frees the memory the library keeps for a device between
// calls; without the cuda tag it returns ErrNotBuilt.
func (l *Library) ReleaseMemory(device int) (deviceBytes, pinnedBytes int64, err error) {
	return 0, 0, ErrNotBuilt
}

// MarginalizedGram is the package-level MarginalizedGram on the library;
// without the cuda tag it returns ErrNotBuilt.
func (l *Library) MarginalizedGram(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// MarginalizedGramStats is the package-level MarginalizedGramStats on the
// library; without the cuda tag it returns ErrNotBuilt.
func (l *Library) MarginalizedGramStats(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64, iters []int32, stats *Stats) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// MarginalizedGramGrad is the package-level MarginalizedGramGrad on the
// library; without the cuda tag it returns ErrNotBuilt.
func (l *Library) MarginalizedGramGrad(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out, grad []float64, iters []int32) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// MarginalizedDiag is the package-level MarginalizedDiag on the library;
// without the cuda tag it returns ErrNotBuilt.
func (l *Library) MarginalizedDiag(X []*graph.Graph, startX [][]float64, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// MarginalizedNodal is the package-level MarginalizedNodal on the library;
// without the cuda tag it returns ErrNotBuilt.
func (l *Library) MarginalizedNodal(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return nil, ErrNotBuilt
}

// ShortestPathGram is the package-level ShortestPathGram on the library;
// without the cuda tag it returns ErrNotBuilt.
func (l *Library) ShortestPathGram(X, Y []*graph.Graph, symmetric bool, opt spkernel.Options, device int, prec Precision, hybrid SPHybrid, out []float64, stats *Stats) error {
	return ErrNotBuilt
}

// ExplicitGram is the package-level ExplicitGram on the library; without
// the cuda tag it returns ErrNotBuilt.
func (l *Library) ExplicitGram(X, Y *sparsegram.Features, symmetric bool, semiring sparsegram.Semiring, device int, out []float64, stats *Stats) error {
	return ErrNotBuilt
}

// EmulatedLaunchTimeout is the emulated library's test hook; without CUDA
// there is none.
func (l *Library) EmulatedLaunchTimeout(n int64) error { return ErrNotBuilt }

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
