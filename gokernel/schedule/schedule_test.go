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
		if err := Run(tc.n, tc.jobs, tc.grain, func(_, k int) error { seen[k].Add(1); return nil }); err != nil {
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
	if err := Run(100, 4, 1, func(_, k int) error {
		if k == 5 {
			return want
		}
		return nil
	}); !errors.Is(err, want) {
		t.Errorf("got %v, want %v", err, want)
	}
	err := Run(100, 4, 1, func(_, k int) error {
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
