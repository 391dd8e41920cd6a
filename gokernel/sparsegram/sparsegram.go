// Package sparsegram computes Gram matrices of explicit sparse feature maps:
// K = Φ_X Φ_Yᵀ over a semiring, for kernels whose feature vectors are exact
// counts (Weisfeiler–Lehman subtree and optimal assignment, vertex and edge
// histograms, the shortest-path kernel's exact-count path). One row of Φ per
// graph, one column per feature; X and Y must number their features from one
// dictionary (build both in one call).
//
// Gram splits the feature columns by how many rows hold them (plan.go). The
// few held by many rows (WL's first iterations) form a dense panel whose
// block of K is a small dense product, computed exactly in float32 by
// register-tiled SIMD kernels (panel*.go, GOEXPERIMENT=simd on amd64, with a
// portable fallback). The many rare ones are scattered row by row through an
// inverted index into the output row, which stays in cache (sparse.go).
// Symmetric results compute the upper triangle and mirror it (engine.go). On
// NCI1's WL features (4,110 graphs, h = 5) the symmetric Gram takes 40–50 ms
// on 2 cores against ~2 s for merging every pair of rows.
package sparsegram

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/graphgram/graphgram/gokernel/schedule"
)

// Features is a sparse matrix of positive integer counts in compressed sparse
// row form: row r holds the features Col[Ptr[r]:Ptr[r+1]], strictly
// increasing and below NumCols, with counts Val[Ptr[r]:Ptr[r+1]] (all > 0).
type Features struct {
	NumCols int
	Ptr     []int
	Col     []int32
	Val     []uint32
}

// Rows returns the number of rows (graphs).
func (f *Features) Rows() int { return len(f.Ptr) - 1 }

// AppendRow appends the row that counts the feature ids (in any order; ids is
// sorted in place) to f, whose Ptr must hold at least its leading 0. NumCols
// is the caller's to set.
func (f *Features) AppendRow(ids []int32) {
	if !slices.IsSorted(ids) {
		slices.Sort(ids)
	}
	for k := 0; k < len(ids); {
		j := k
		for j < len(ids) && ids[j] == ids[k] {
			j++
		}
		f.Col = append(f.Col, ids[k])
		f.Val = append(f.Val, uint32(j-k))
		k = j
	}
	f.Ptr = append(f.Ptr, len(f.Col))
}

// Validate checks the CSR invariants.
func (f *Features) Validate() error {
	if len(f.Ptr) == 0 || f.Ptr[0] != 0 {
		return errors.New("sparsegram: Ptr must start with 0")
	}
	nnz := f.Ptr[len(f.Ptr)-1]
	if len(f.Col) != nnz || len(f.Val) != nnz {
		return fmt.Errorf("sparsegram: %d nonzeros but %d columns and %d values", nnz, len(f.Col), len(f.Val))
	}
	for r := 0; r < f.Rows(); r++ {
		if f.Ptr[r+1] < f.Ptr[r] {
			return fmt.Errorf("sparsegram: row %d ends before it starts", r)
		}
		prev := int32(-1)
		for k := f.Ptr[r]; k < f.Ptr[r+1]; k++ {
			if f.Col[k] <= prev || int(f.Col[k]) >= f.NumCols {
				return fmt.Errorf("sparsegram: row %d: column %d out of order or range", r, f.Col[k])
			}
			if f.Val[k] == 0 {
				return fmt.Errorf("sparsegram: row %d: explicit zero", r)
			}
			prev = f.Col[k]
		}
	}
	return nil
}

// Semiring says how two rows combine into one kernel value.
type Semiring int

const (
	// SumProduct is K[i][j] = Σ_f X[i][f]·Y[j][f]: the linear kernel on counts
	// (WL subtree, vertex and edge histograms).
	SumProduct Semiring = iota
	// SumMin is K[i][j] = Σ_f min(X[i][f], Y[j][f]): histogram intersection
	// (WL optimal assignment).
	SumMin
)

// Options configures Gram and Diag.
type Options struct {
	// Semiring says how two rows combine; the zero value is SumProduct.
	Semiring Semiring
	// NJobs is the number of goroutines; <= 0 uses all cores.
	NJobs int
	// Control stops the computation and reports progress in rows of the
	// result; nil for none.
	Control *schedule.Control
	// tune overrides the engine's own choices (tests and benchmarks only).
	tune tuning
}

// Gram writes K(X, Y) to out, row-major len(X)×len(Y). With symmetric, Y is
// ignored and taken to be X: the upper triangle is computed and mirrored, so
// out is exactly symmetric. Values are exact integers: the widely held
// features go through a dense float32 panel whose sums are kept below 2^24,
// the others are added in float64 when every kernel value is provably below
// 2^53, and inputs that could exceed that are summed in int64 row pair by
// row pair (an overflow past 2^63 is not checked). Malformed X or Y (see
// Validate) return an error.
func Gram(X, Y *Features, symmetric bool, opt Options, out []float64) error {
	if symmetric {
		Y = X
	}
	if X.NumCols != Y.NumCols {
		return fmt.Errorf("sparsegram: X has %d feature columns and Y %d; build both from one dictionary", X.NumCols, Y.NumCols)
	}
	nx, ny := X.Rows(), Y.Rows()
	if len(out) != nx*ny {
		return fmt.Errorf("sparsegram: output has %d entries for a %d×%d kernel matrix", len(out), nx, ny)
	}
	// The engine indexes with the columns (~1 ms for NCI1 to check): a
	// malformed matrix returns an error instead of panicking.
	if err := X.Validate(); err != nil {
		return fmt.Errorf("X: %w", err)
	}
	if Y != X {
		if err := Y.Validate(); err != nil {
			return fmt.Errorf("Y: %w", err)
		}
	}
	if nx == 0 || ny == 0 {
		return nil
	}
	// The engine indexes rows and nonzeros with int32 and sums in float64.
	if max(nx, ny, len(X.Col), len(Y.Col)) >= math.MaxInt32 ||
		bound(X, Y, opt.Semiring, nil) >= 1<<53 {
		return referenceGram(X, Y, symmetric, opt, out)
	}
	if opt.Control.Cancelled() {
		return schedule.ErrCancelled
	}
	return newEngine(X, Y, symmetric, opt, out).run(opt.NJobs)
}

// Diag writes K(x, x) for every row x of X to out.
func Diag(X *Features, opt Options, out []float64) error {
	if len(out) != X.Rows() {
		return fmt.Errorf("sparsegram: output has %d entries for %d rows", len(out), X.Rows())
	}
	for i := range out {
		var sum int64
		for k := X.Ptr[i]; k < X.Ptr[i+1]; k++ {
			v := int64(X.Val[k])
			if opt.Semiring == SumMin {
				sum += v
			} else {
				sum += v * v
			}
		}
		out[i] = float64(sum)
	}
	return nil
}
