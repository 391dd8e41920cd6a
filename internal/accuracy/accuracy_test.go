package accuracy

import (
	"math"
	"testing"
)

func TestErr(t *testing.T) {
	for _, c := range []struct{ got, want, scale, err float64 }{
		{1, 1, 0, 0},
		{0, 0, 0, 0},
		{1.5, 1, 0, 0.5},
		{-1, -2, 0, 0.5},
		{2, 1, 1000, 0.5}, // |Δ| / (1 + 1)
		{1e-3, 0, 1, 1},   // a near-zero entry judged on the scale
		{math.Inf(1), math.Inf(1), 0, math.NaN()},
		{math.NaN(), 1, 1, math.NaN()},
	} {
		e := Err(c.got, c.want, c.scale)
		if !(e == c.err || math.IsNaN(e) && math.IsNaN(c.err)) {
			t.Errorf("Err(%v, %v, %v) = %v, want %v", c.got, c.want, c.scale, e, c.err)
		}
	}
}

func TestScaleWorst(t *testing.T) {
	want := []float64{1, -4, 0.5}
	if s := Scale(want, []float64{-2}); s != 4 {
		t.Errorf("Scale = %v, want 4", s)
	}
	if w, at := Worst([]float64{1, -4, 0.75}, want, Scale(want)); math.Abs(w-0.25/0.504) > 1e-15 || at != 2 {
		t.Errorf("Worst = %v at %d", w, at)
	}
	if w, at := Worst([]float64{2, math.NaN(), math.NaN()}, want, 4); !math.IsNaN(w) || at != 1 {
		t.Errorf("Worst with NaN = %v at %d, want NaN at 1", w, at)
	}
	if w, at := Worst(nil, nil, 0); w != 0 || at != 0 {
		t.Errorf("Worst of nothing = %v at %d", w, at)
	}
}
