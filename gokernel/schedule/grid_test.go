package schedule

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// grids returns grids of every shape and order, empty and single-entry ones
// included.
func grids() map[string]Grid {
	sx := []float64{3, 9, 1, 9, 4, 0, 2}
	sy := []float64{2, 7, 5, 7}
	return map[string]Grid{
		"cross":          NewGrid(7, 4, false),
		"cross-largest":  GridLargestFirst(sx, sy, false),
		"upper":          NewGrid(7, 0, true),
		"upper-largest":  GridLargestFirst(sx, nil, true),
		"diag":           DiagGrid(7),
		"cross-1x1":      NewGrid(1, 1, false),
		"cross-1x5":      NewGrid(1, 5, false),
		"cross-0x3":      NewGrid(0, 3, false),
		"cross-3x0":      NewGrid(3, 0, false),
		"upper-1":        NewGrid(1, 1, true),
		"upper-0":        NewGrid(0, 0, true),
		"diag-0":         DiagGrid(0),
		"upper-largest2": GridLargestFirst([]float64{1, 2}, nil, true),
		// Large enough that chunks grow past the grain (chunksPerWorker).
		"upper-300":    NewGrid(300, 0, true),
		"cross-200x90": GridLargestFirst(make([]float64, 200), make([]float64, 90), false),
	}
}

// want returns the entries of g as a set, from its definition.
func want(g Grid) map[Pair]bool {
	w := map[Pair]bool{}
	n := len(g.Rows)
	switch g.Shape {
	case Cross:
		for i := 0; i < n; i++ {
			for j := 0; j < len(g.Cols); j++ {
				w[Pair{i, j}] = true
			}
		}
	case Upper:
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				w[Pair{i, j}] = true
			}
		}
	case Diagonal:
		for i := 0; i < n; i++ {
			w[Pair{i, i}] = true
		}
	}
	return w
}

func TestGridOrder(t *testing.T) {
	for name, g := range grids() {
		ps := g.List()
		w := want(g)
		if len(ps) != len(w) || g.Len() != len(w) {
			t.Errorf("%s: %d pairs listed, Len %d, want %d", name, len(ps), g.Len(), len(w))
		}
		for k, p := range ps {
			if !w[p] {
				t.Errorf("%s: unexpected or repeated pair %v", name, p)
			}
			delete(w, p)
			// A cursor started anywhere agrees with the walk from the start.
			c := g.at(k)
			if i, j := c.pair(); (Pair{i, j}) != p {
				t.Errorf("%s: entry %d is %v from the start, (%d, %d) from a cursor", name, k, p, i, j)
			}
		}
	}
	// Largest first: rows by decreasing size (ties in index order), and in a cross
	// row the columns by decreasing size.
	ps := grids()["cross-largest"].List()
	if ps[0] != (Pair{1, 1}) || ps[1] != (Pair{1, 3}) || ps[4] != (Pair{3, 1}) || ps[len(ps)-1] != (Pair{5, 0}) {
		t.Errorf("cross largest first: %v", ps)
	}
	ps = grids()["upper-largest"].List()
	if ps[0] != (Pair{1, 1}) || ps[1] != (Pair{1, 3}) || ps[len(ps)-1] != (Pair{5, 5}) {
		t.Errorf("upper largest first: %v", ps)
	}
}

// value is the kernel value RunPairs tests write for (i, j).
func value(i, j int) float64 { return float64(1000*i + j + 1) }

func TestRunPairs(t *testing.T) {
	for name, g := range grids() {
		for _, tc := range []struct{ jobs, grain int }{{1, 1}, {3, 1}, {2, 4}, {4, 100}, {0, 0}} {
			id := fmt.Sprintf("%s jobs=%d grain=%d", name, tc.jobs, tc.grain)
			out := make([]float64, g.outLen())
			seen := make([]atomic.Int32, g.outLen())
			var scratches atomic.Int32
			ctl := NewControl()
			type scratch struct{ calls int }
			err := RunPairs(ctl, g, tc.jobs, tc.grain,
				func() *scratch { scratches.Add(1); return new(scratch) },
				func(s *scratch, i, j int) (float64, error) {
					s.calls++
					if g.Shape == Diagonal {
						seen[i].Add(1)
					} else {
						seen[i*len(out)/max(1, len(g.Rows))+j].Add(1)
					}
					return value(i, j), nil
				}, out)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if n := scratches.Load(); int(n) > Workers(tc.jobs) {
				t.Errorf("%s: %d scratch values for %d workers", id, n, Workers(tc.jobs))
			}
			// Every entry visited once, and the whole output written (mirror included).
			visits := 0
			for k := range seen {
				visits += int(seen[k].Load())
				if seen[k].Load() > 1 {
					t.Errorf("%s: entry %d visited %d times", id, k, seen[k].Load())
				}
			}
			if visits != g.Len() {
				t.Errorf("%s: %d visits for %d entries", id, visits, g.Len())
			}
			for p := range want(g) {
				switch g.Shape {
				case Diagonal:
					if out[p.I] != value(p.I, p.I) {
						t.Errorf("%s: out[%d] = %v", id, p.I, out[p.I])
					}
				case Upper:
					n := len(g.Rows)
					if out[p.I*n+p.J] != value(p.I, p.J) || out[p.J*n+p.I] != value(p.I, p.J) {
						t.Errorf("%s: (%d, %d) = %v, mirror %v", id, p.I, p.J, out[p.I*n+p.J], out[p.J*n+p.I])
					}
				case Cross:
					if v := out[p.I*len(g.Cols)+p.J]; v != value(p.I, p.J) {
						t.Errorf("%s: (%d, %d) = %v", id, p.I, p.J, v)
					}
				}
			}
			if done, total := ctl.Progress(); done != int64(g.Len()) || total != int64(g.Len()) {
				t.Errorf("%s: progress %d of %d, want %d of %d", id, done, total, g.Len(), g.Len())
			}
		}
	}
}

func TestRunPairsErrors(t *testing.T) {
	bad := errors.New("singular")
	for _, tc := range []struct {
		name  string
		g     Grid
		fail  Pair
		err   error
		match string
	}{
		{"cross", NewGrid(5, 6, false), Pair{3, 4}, bad, "X[3] and Y[4]: singular"},
		{"upper", GridLargestFirst([]float64{1, 5, 2, 4}, nil, true), Pair{1, 3}, bad, "X[1] and X[3]: singular"},
		{"diag", DiagGrid(5), Pair{2, 2}, bad, "X[2]: singular"},
		{"cancel", NewGrid(5, 5, true), Pair{2, 3}, ErrCancelled, ErrCancelled.Error()},
		{"panic", NewGrid(5, 6, false), Pair{4, 0}, nil, "index out of range"},
	} {
		for _, jobs := range []int{1, 3} {
			ctl := NewControl()
			out := make([]float64, tc.g.outLen())
			err := RunPairs(ctl, tc.g, jobs, 2, nil, func(_ struct{}, i, j int) (float64, error) {
				if (Pair{i, j}) == tc.fail {
					if tc.err == nil {
						var s []int
						_ = s[i]
					}
					return 0, tc.err
				}
				return 1, nil
			}, out)
			if err == nil || !strings.Contains(err.Error(), tc.match) {
				t.Errorf("%s jobs=%d: error %v, want %q", tc.name, jobs, err, tc.match)
			}
			switch {
			case tc.err == nil && !errors.Is(err, ErrPanic):
				t.Errorf("%s: %v does not wrap ErrPanic", tc.name, err)
			case tc.err != nil && !errors.Is(err, tc.err):
				t.Errorf("%s: %v does not wrap %v", tc.name, err, tc.err)
			}
			if done, total := ctl.Progress(); done >= total || total != int64(tc.g.Len()) {
				t.Errorf("%s: progress %d of %d after an error, want fewer than %d done", tc.name, done, total, tc.g.Len())
			}
		}
	}
	if err := RunPairs(nil, NewGrid(3, 3, true), 1, 1, nil, func(struct{}, int, int) (float64, error) { return 0, nil }, make([]float64, 6)); err == nil {
		t.Error("a short output was accepted")
	}
}

func TestRunPairsCancelled(t *testing.T) {
	const workers = 2
	ctl := NewControl()
	var ran, late atomic.Int64
	g := NewGrid(40, 40, true)
	err := RunPairs(ctl, g, workers, 3, nil, func(_ struct{}, i, j int) (float64, error) {
		if ctl.Cancelled() {
			late.Add(1)
		}
		if ran.Add(1) == 10 {
			ctl.Cancel()
		}
		return 0, nil
	}, make([]float64, 40*40))
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("error %v, want ErrCancelled", err)
	}
	// A chunk that started before the cancel runs to its end: at most one chunk
	// of grain 3 per worker runs after the flag is set.
	if n := late.Load(); n > workers*3 {
		t.Errorf("%d pairs ran after the cancel, want at most %d", n, workers*3)
	}
	if done, total := ctl.Progress(); done != ran.Load() || total != int64(g.Len()) {
		t.Errorf("progress %d of %d, ran %d of %d", done, total, ran.Load(), g.Len())
	}
}
