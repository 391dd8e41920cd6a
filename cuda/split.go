package cuda

import (
	"errors"
	"fmt"
)

// A call into the library holds its whole input and output in device memory.
// When they do not fit, the library returns GGC_ERR_OOM and the bridge splits
// the work into halves, each a call of its own, until the pieces fit or one
// that cannot be split fails. solveBlocks splits a matrix of pairs (Gram,
// gradient, nodal, explicit features), solveList a list (the diagonal, the
// shortest-path pairs); the callers differ only in what one piece computes
// and where its results go.

// span is the half-open range [lo, hi) of a list of graphs, feature rows or
// pairs.
type span struct{ lo, hi int }

func (s span) len() int { return s.hi - s.lo }

// halves cuts s at its middle; the first half is the shorter one.
func (s span) halves() (span, span) {
	h := s.lo + s.len()/2
	return span{s.lo, h}, span{h, s.hi}
}

// String formats s as Python's slice of it, for error messages.
func (s span) String() string { return fmt.Sprintf("%d:%d", s.lo, s.hi) }

// part returns the items of s in r, or nil for a nil s (an optional input).
// The result shares s's array; its capacity ends at r.hi.
func part[T any](s []T, r span) []T {
	if s == nil {
		return nil
	}
	return s[r.lo:r.hi:r.hi]
}

// errTooLong is what a piece of more than one pair returns to be split
// before it reaches the library (a launch over the call's bound, LaunchTerms
// by default).
var errTooLong = errors.New("launch too long")

// splittable reports whether a piece that failed with err may succeed in
// halves.
func splittable(err error) bool {
	return errors.Is(err, ErrOutOfMemory) || errors.Is(err, errTooLong)
}

// pairBlocks is the matrix of pairs X × Y of one call, computed a block at a
// time by solveBlocks.
type pairBlocks interface {
	// solve computes the block x × y in one library call and places it in
	// the call's results. With symmetric, x == y and the library fills the
	// block's both triangles itself. An error for which splittable holds
	// asks for the block in smaller pieces.
	solve(x, y span, symmetric bool) error
	// mirror copies the placed block x × y to y × x, the lower triangle of
	// a symmetric block that was split.
	mirror(x, y span)
}

// solveBlocks computes the block x × y of b (symmetric: x == y) with one
// call, or splits it when that call fails with a splittable error: a
// symmetric block into its two diagonal blocks and the off-diagonal block
// between them, which is mirrored; any other block along its longer side,
// Y's on a tie. The first error of a piece ends the call: the result is lost
// with it, and after a stopped launch every further one fails too.
func solveBlocks(b pairBlocks, x, y span, symmetric bool) error {
	if x.len() == 0 || y.len() == 0 {
		return nil
	}
	err := b.solve(x, y, symmetric)
	if !splittable(err) || x.len() == 1 && y.len() == 1 {
		return err
	}
	type piece struct {
		x, y      span
		symmetric bool
	}
	var pieces []piece
	switch {
	case symmetric:
		l, h := x.halves()
		pieces = []piece{{l, l, true}, {l, h, false}, {h, h, true}}
	case y.len() >= x.len():
		l, h := y.halves()
		pieces = []piece{{x, l, false}, {x, h, false}}
	default:
		l, h := x.halves()
		pieces = []piece{{l, y, false}, {h, y, false}}
	}
	for _, p := range pieces {
		if err := solveBlocks(b, p.x, p.y, p.symmetric); err != nil {
			return err
		}
	}
	if symmetric {
		b.mirror(pieces[1].x, pieces[1].y)
	}
	return nil
}

// solveList computes the items r of a list with one call of solve, or, when
// that fails with a splittable error, each half of r in turn (see
// solveBlocks).
func solveList(r span, solve func(r span) error) error {
	if r.len() == 0 {
		return nil
	}
	err := solve(r)
	if !splittable(err) || r.len() == 1 {
		return err
	}
	l, h := r.halves()
	if err := solveList(l, solve); err != nil {
		return err
	}
	return solveList(h, solve)
}
