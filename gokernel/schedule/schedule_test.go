package schedule

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

func TestPairs(t *testing.T) {
	for _, tc := range []struct {
		n, m int
		sym  bool
		want int
	}{{4, 4, true, 10}, {3, 5, false, 15}, {1, 1, true, 1}, {0, 0, true, 0}} {
		if got := len(Pairs(tc.n, tc.m, tc.sym)); got != tc.want {
			t.Errorf("Pairs(%d,%d,%v): %d pairs, want %d", tc.n, tc.m, tc.sym, got, tc.want)
		}
	}
}

func TestLargestFirst(t *testing.T) {
	ps := Pairs(5, 5, true)
	LargestFirst(ps, func(p Pair) float64 { return float64(p.I * p.J) })
	for k := 1; k < len(ps); k++ {
		if ps[k-1].I*ps[k-1].J < ps[k].I*ps[k].J {
			t.Fatalf("not sorted at %d: %v", k, ps)
		}
	}
}

func TestRunVisitsEachOnce(t *testing.T) {
	for _, tc := range []struct{ n, jobs, grain int }{{1000, 4, 7}, {3, 8, 1}, {0, 2, 1}, {57, 1, 100}} {
		seen := make([]atomic.Int32, tc.n)
		if err := Run(nil, tc.n, tc.jobs, tc.grain, func(_, k int) error { seen[k].Add(1); return nil }); err != nil {
			t.Fatal(err)
		}
		for k := range seen {
			if seen[k].Load() != 1 {
				t.Fatalf("%+v: index %d visited %d times", tc, k, seen[k].Load())
			}
		}
	}
}

func TestRunErrorsAndPanics(t *testing.T) {
	want := errors.New("pair 5 failed")
	if err := Run(nil, 100, 4, 1, func(_, k int) error {
		if k == 5 {
			return want
		}
		return nil
	}); !errors.Is(err, want) {
		t.Errorf("got %v, want %v", err, want)
	}
	err := Run(nil, 100, 4, 1, func(_, k int) error {
		if k == 7 {
			var s []int
			_ = s[k]
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Errorf("panic not turned into an error: %v", err)
	}
}

func TestRunCancelled(t *testing.T) {
	const workers = 2
	ctl := NewControl()
	var ran, late atomic.Int64
	err := Run(ctl, 1000, workers, 1, func(_, k int) error {
		// A task that finds the flag already set started after the cancel. Counted
		// this way, not as tasks run after the 10th: the goroutine that cancels may
		// be descheduled between its count and Cancel while the other runs on.
		if ctl.Cancelled() {
			late.Add(1)
		}
		if ran.Add(1) == 10 {
			ctl.Cancel()
		}
		ctl.Done(1)
		return nil
	})
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("error %v, want ErrCancelled", err)
	}
	// At most one task per worker may start after the flag is set: the one whose
	// index it claimed just before.
	if n := late.Load(); n > workers {
		t.Errorf("%d tasks started after the cancel, want at most %d", n, workers)
	}
	if done, _ := ctl.Progress(); done != ran.Load() {
		t.Errorf("progress %d, ran %d", done, ran.Load())
	}
	if !ctl.Cancelled() || (*Control)(nil).Cancelled() {
		t.Error("Cancelled: wrong state")
	}
}

func TestControlAt(t *testing.T) {
	words := make([]int64, ControlWords)
	ctl, err := ControlAt(words)
	if err != nil {
		t.Fatal(err)
	}
	ctl.AddTotal(7)
	ctl.Done(3)
	words[0] = 1 // the caller's cancel flag, set from outside Go
	if words[1] != 3 || words[2] != 7 || !ctl.Cancelled() {
		t.Errorf("words %v, cancelled %v", words, ctl.Cancelled())
	}
	if _, err := ControlAt(words[:2]); err == nil {
		t.Error("a two-word block was accepted")
	}
	if NumPairs(4, 0, true) != len(Pairs(4, 4, true)) || NumPairs(3, 5, false) != 15 {
		t.Error("NumPairs disagrees with Pairs")
	}
}

func TestPairsLargestFirst(t *testing.T) {
	sx := []float64{3, 9, 1, 9, 4}
	sy := []float64{2, 7, 5}
	for _, tc := range []struct {
		sym  bool
		m    int
		size []float64
	}{{true, 5, sx}, {false, 3, sy}} {
		ps := PairsLargestFirst(sx, tc.size, tc.sym)
		want := map[Pair]bool{}
		for _, p := range Pairs(5, tc.m, tc.sym) {
			want[p] = true
		}
		if len(ps) != len(want) {
			t.Fatalf("sym=%v: %d pairs, want %d", tc.sym, len(ps), len(want))
		}
		for _, p := range ps {
			if !want[p] {
				t.Fatalf("sym=%v: unexpected or repeated pair %v", tc.sym, p)
			}
			delete(want, p)
		}
		// The first pair joins the largest graphs, the last the smallest.
		first, last := ps[0], ps[len(ps)-1]
		if sx[first.I]*tc.size[first.J] < sx[last.I]*tc.size[last.J] {
			t.Errorf("sym=%v: first %v costs less than last %v", tc.sym, first, last)
		}
	}
}
