//go:build cuda

package cuda

import (
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// The computations of a Library: each is the package-level function of its
// name computed with the library l instead of the default one
// (LibraryPath). A Library that Open did not return (nil, or a zero
// Library) fails with ErrNoLibrary.

// MarginalizedGram is the package-level MarginalizedGram on the library.
func (l *Library) MarginalizedGram(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return l.MarginalizedGramStats(X, Y, startX, startY, symmetric, opt, device, prec, out, nil, nil)
}

// MarginalizedGramStats is the package-level MarginalizedGramStats on the
// library.
func (l *Library) MarginalizedGramStats(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64, iters []int32, stats *Stats) ([]mgk.Unconverged, error) {
	if err := l.valid(); err != nil {
		return nil, err
	}
	return gram(callOptions{lib: l}, X, Y, startX, startY, symmetric, opt, device, prec, out, nil, iters, stats)
}

// MarginalizedGramGrad is the package-level MarginalizedGramGrad on the
// library.
func (l *Library) MarginalizedGramGrad(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out, grad []float64, iters []int32) ([]mgk.Unconverged, error) {
	if err := l.valid(); err != nil {
		return nil, err
	}
	return gram(callOptions{lib: l}, X, Y, startX, startY, symmetric, opt, device, prec, out, grad, iters, nil)
}

// MarginalizedDiag is the package-level MarginalizedDiag on the library.
func (l *Library) MarginalizedDiag(X []*graph.Graph, startX [][]float64, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	if err := l.valid(); err != nil {
		return nil, err
	}
	return diag(callOptions{lib: l}, X, startX, opt, device, prec, out)
}

// MarginalizedNodal is the package-level MarginalizedNodal on the library.
func (l *Library) MarginalizedNodal(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	if err := l.valid(); err != nil {
		return nil, err
	}
	return nodal(callOptions{lib: l}, X, Y, startX, startY, symmetric, opt, device, prec, out)
}

// ShortestPathGram is the package-level ShortestPathGram on the library.
func (l *Library) ShortestPathGram(X, Y []*graph.Graph, symmetric bool, opt spkernel.Options, device int, prec Precision, hybrid SPHybrid, out []float64, stats *Stats) error {
	if err := l.valid(); err != nil {
		return err
	}
	return shortestPath(callOptions{lib: l}, X, Y, symmetric, opt, device, prec, hybrid, out, stats)
}

// ExplicitGram is the package-level ExplicitGram on the library.
func (l *Library) ExplicitGram(X, Y *sparsegram.Features, symmetric bool, semiring sparsegram.Semiring, device int, out []float64, stats *Stats) error {
	if err := l.valid(); err != nil {
		return err
	}
	return explicitGram(callOptions{lib: l}, X, Y, symmetric, semiring, device, out, stats)
}
