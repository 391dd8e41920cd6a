package cuda

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// fakeBlocks records the pieces solveBlocks asks for, fails those of more
// than limit pairs with ErrOutOfMemory (or fail, when set, for the piece
// named failAt), and places pair (i, j) as i*n + j in an n×n matrix.
type fakeBlocks struct {
	n, limit int
	failAt   string
	fail     error
	out      []int
	trace    []string
}

func (f *fakeBlocks) solve(x, y span, symmetric bool) error {
	name := fmt.Sprintf("%v×%v", x, y)
	if symmetric {
		name += "s"
	}
	f.trace = append(f.trace, name)
	if name == f.failAt {
		return f.fail
	}
	pairs := x.len() * y.len()
	if symmetric {
		pairs = x.len() * (x.len() + 1) / 2
	}
	if pairs > f.limit {
		return fmt.Errorf("%d pairs: %w", pairs, ErrOutOfMemory)
	}
	for i := x.lo; i < x.hi; i++ {
		for j := y.lo; j < y.hi; j++ {
			if symmetric && j < i {
				continue
			}
			if f.out[i*f.n+j] != -1 {
				f.trace = append(f.trace, fmt.Sprintf("(%d,%d) twice", i, j))
			}
			f.out[i*f.n+j] = i*f.n + j
			if symmetric {
				f.out[j*f.n+i] = i*f.n + j
			}
		}
	}
	return nil
}

func (f *fakeBlocks) mirror(x, y span) {
	f.trace = append(f.trace, fmt.Sprintf("mirror %v×%v", x, y))
	for i := x.lo; i < x.hi; i++ {
		for j := y.lo; j < y.hi; j++ {
			f.out[j*f.n+i] = f.out[i*f.n+j]
		}
	}
}

func newFake(n, limit int) *fakeBlocks {
	f := &fakeBlocks{n: n, limit: limit, out: make([]int, n*n)}
	for k := range f.out {
		f.out[k] = -1
	}
	return f
}

// TestSolveBlocksSymmetric: a symmetric call splits into two diagonal blocks
// and the off-diagonal one between them, mirrored after both diagonal
// blocks are done; every pair of the upper triangle is solved once.
func TestSolveBlocksSymmetric(t *testing.T) {
	f := newFake(5, 4)
	if err := solveBlocks(f, span{0, 5}, span{0, 5}, true); err != nil {
		t.Fatal(err)
	}
	want := []string{"0:5×0:5s", "0:2×0:2s", "0:2×2:5", "0:2×2:3", "0:2×3:5",
		"2:5×2:5s", "2:3×2:3s", "2:3×3:5", "3:5×3:5s", "mirror 2:3×3:5", "mirror 0:2×2:5"}
	if !slices.Equal(f.trace, want) {
		t.Errorf("pieces %q, want %q", f.trace, want)
	}
	for i := range 5 {
		for j := range 5 {
			if want := min(i, j)*5 + max(i, j); f.out[i*5+j] != want {
				t.Errorf("entry (%d,%d) = %d, want %d", i, j, f.out[i*5+j], want)
			}
		}
	}
}

// TestSolveBlocksRectangular: a rectangular block is halved along its
// longer side (Y on a tie), the first half the shorter; no mirroring.
func TestSolveBlocksRectangular(t *testing.T) {
	f := newFake(5, 2)
	if err := solveBlocks(f, span{0, 3}, span{2, 5}, false); err != nil {
		t.Fatal(err)
	}
	want := []string{"0:3×2:5", "0:3×2:3", "0:1×2:3", "1:3×2:3", "0:3×3:5", "0:1×3:5", "1:3×3:5", "1:3×3:4", "1:3×4:5"}
	if !slices.Equal(f.trace, want) {
		t.Errorf("pieces %q, want %q", f.trace, want)
	}
	for i := range 3 {
		for j := 2; j < 5; j++ {
			if f.out[i*5+j] != i*5+j {
				t.Errorf("entry (%d,%d) = %d, want %d", i, j, f.out[i*5+j], i*5+j)
			}
		}
	}
}

// TestSolveBlocksErrors: an error other than out-of-memory is returned as
// the piece returned it and ends the call; a single pair out of memory is
// returned; errTooLong splits as out-of-memory does; empty blocks call
// nothing.
func TestSolveBlocksErrors(t *testing.T) {
	other := errors.New("other")
	f := newFake(4, 1)
	f.failAt, f.fail = "0:2×2:4", other
	if err := solveBlocks(f, span{0, 4}, span{0, 4}, true); err != other {
		t.Errorf("error %v, want %v", err, other)
	}
	if want := []string{"0:4×0:4s", "0:2×0:2s", "0:1×0:1s", "0:1×1:2", "1:2×1:2s", "mirror 0:1×1:2", "0:2×2:4"}; !slices.Equal(f.trace, want) {
		t.Errorf("pieces %q, want %q", f.trace, want)
	}

	f = newFake(2, 0)
	if err := solveBlocks(f, span{0, 2}, span{0, 2}, false); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("error %v, want ErrOutOfMemory", err)
	}
	if want := []string{"0:2×0:2", "0:2×0:1", "0:1×0:1"}; !slices.Equal(f.trace, want) {
		t.Errorf("pieces %q, want %q", f.trace, want)
	}

	f = newFake(2, 4)
	f.failAt, f.fail = "0:2×0:2", errTooLong
	if err := solveBlocks(f, span{0, 2}, span{0, 2}, false); err != nil {
		t.Errorf("errTooLong: %v", err)
	}
	if want := []string{"0:2×0:2", "0:2×0:1", "0:2×1:2"}; !slices.Equal(f.trace, want) {
		t.Errorf("pieces %q, want %q", f.trace, want)
	}

	f = newFake(2, 4)
	if err := solveBlocks(f, span{0, 0}, span{0, 2}, false); err != nil || len(f.trace) != 0 {
		t.Errorf("empty block: %v, pieces %q", err, f.trace)
	}
}

// TestSolveList: a list is halved, the first half the shorter, until the
// pieces fit; a single item out of memory, or any other error, ends it.
func TestSolveList(t *testing.T) {
	run := func(n, limit int) ([]string, error) {
		var trace []string
		err := solveList(span{0, n}, func(r span) error {
			trace = append(trace, r.String())
			if r.len() > limit {
				return ErrOutOfMemory
			}
			return nil
		})
		return trace, err
	}
	trace, err := run(5, 2)
	if want := []string{"0:5", "0:2", "2:5", "2:3", "3:5"}; err != nil || !slices.Equal(trace, want) {
		t.Errorf("pieces %q (%v), want %q", trace, err, want)
	}
	trace, err = run(2, 0)
	if want := []string{"0:2", "0:1"}; !errors.Is(err, ErrOutOfMemory) || !slices.Equal(trace, want) {
		t.Errorf("pieces %q (%v), want %q and ErrOutOfMemory", trace, err, want)
	}
	if trace, err = run(0, 0); err != nil || len(trace) != 0 {
		t.Errorf("empty list: %v, pieces %q", err, trace)
	}
}
