package costmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// bruteWorkload sums over every pair, one at a time.
func bruteWorkload(k Kind, X, Y []float64, symmetric bool, smallPair float64) Workload {
	w := Workload{Kind: k}
	if symmetric {
		Y = X
	}
	for i, a := range X {
		for j, b := range Y {
			if symmetric && j < i {
				continue
			}
			t := k.PairTerms(a, b)
			if t <= smallPair {
				w.Small += t
			} else {
				w.Large += t
			}
			w.Pairs++
			w.MaxPair = max(w.MaxPair, t)
		}
	}
	return w
}

func TestNewWorkloadAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := func(n int, scale float64) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Floor(1 + scale*rng.Float64())
		}
		return s
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }
	for _, k := range Kinds {
		for _, tc := range []struct {
			nx, ny    int
			scale     float64
			symmetric bool
			smallPair float64
		}{
			{0, 5, 100, false, 1000},
			{1, 1, 100, true, 1000},
			{7, 11, 100, false, 1000},
			{13, 13, 300, true, 2000},
			{20, 3, 50, false, math.Inf(1)},
			{9, 9, 1000, true, 0},
		} {
			X, Y := sizes(tc.nx, tc.scale), sizes(tc.ny, tc.scale)
			name := fmt.Sprintf("%v/%dx%d/sym=%v/small=%g", k, tc.nx, tc.ny, tc.symmetric, tc.smallPair)
			got := NewWorkload(k, X, Y, tc.symmetric, tc.smallPair)
			want := bruteWorkload(k, X, Y, tc.symmetric, tc.smallPair)
			if got.Pairs != want.Pairs || !near(got.Small, want.Small) || !near(got.Large, want.Large) || got.MaxPair != want.MaxPair {
				t.Errorf("%s: NewWorkload = %+v, brute force %+v", name, got, want)
			}
		}
	}
}

func TestPredictClosedForm(t *testing.T) {
	r := Rates{CPU: 2, CPULarge: 5, GPU: 0.5, GPULarge: 3, GPUCall: 7, SmallPair: 10}
	for _, tc := range []struct {
		w            Workload
		cores, slots int
		cpu, gpu     float64
	}{
		{Workload{Small: 100}, 4, 10, 50, 57},
		{Workload{Small: 100}, 1, 10, 200, 57},
		// Few large pairs: the largest bounds the device's time.
		{Workload{Large: 40, MaxPair: 20}, 2, 10, 100, 7 + 3*20},
		// Many: the work shared by the slots.
		{Workload{Large: 4000, MaxPair: 20}, 2, 10, 10000, 7 + 3*400},
		{Workload{}, 0, 0, 0, 7},
	} {
		p := r.Predict(tc.w, tc.cores, tc.slots)
		if p.CPUSeconds != tc.cpu || p.GPUSeconds != tc.gpu || p.GPU != (tc.gpu < tc.cpu) {
			t.Errorf("Predict(%+v, %d, %d) = %+v; want CPU %g, GPU %g", tc.w, tc.cores, tc.slots, p, tc.cpu, tc.gpu)
		}
	}
}

func TestCalibratedPredictsItsSample(t *testing.T) {
	r := Default(Marginalized, false, 132)
	sample := Workload{Kind: Marginalized, Pairs: 300, Small: 1e6}
	part := Workload{Kind: Marginalized, Pairs: 10, Small: 3e4}
	c := r.Calibrated(sample, 0.5, part, 0.01, 2, 132, "sample")
	if p := c.Predict(sample, 2, 132); math.Abs(p.CPUSeconds-0.5) > 1e-15 || c.Source != "sample" {
		t.Errorf("calibrated rates predict the CPU's sample in %g s (source %q), want 0.5 s", p.CPUSeconds, c.Source)
	}
	if p := c.Predict(part, 2, 132); math.Abs(p.GPUSeconds-0.01) > 1e-15 {
		t.Errorf("calibrated rates predict the GPU's sample in %g s, want 0.01 s", p.GPUSeconds)
	}
	// One factor per side: the ratios between the rates stay.
	same := func(a, b float64) bool { return math.Abs(a/b-1) < 1e-12 }
	if !same(c.CPULarge/c.CPU, r.CPULarge/r.CPU) || !same(c.GPULarge/c.GPU, r.GPULarge/r.GPU) || !same(c.GPUCall/c.GPU, r.GPUCall/r.GPU) || c.SmallPair != r.SmallPair {
		t.Errorf("calibration changed the rates' shape: %+v from %+v", c, r)
	}
	// A failed timing (0) leaves that side alone.
	if u := r.Calibrated(sample, 0, sample, 0, 2, 132, "x"); u.CPU != r.CPU || u.GPU != r.GPU {
		t.Errorf("zero timings changed the rates: %+v", u)
	}
}

func TestBreakEven(t *testing.T) {
	r := Rates{CPU: 8, GPU: 1, GPUCall: 10, SmallPair: math.Inf(1)}
	if got := r.BreakEven(4); got != 10 { // 10 / (8/4 - 1)
		t.Errorf("BreakEven(4) = %g, want 10", got)
	}
	if got := r.BreakEven(8); !math.IsInf(got, 1) {
		t.Errorf("BreakEven(8) = %g, want +Inf (device no faster than 8 cores)", got)
	}
	w := Workload{Small: 10}
	if p := r.Predict(w, 4, 1); p.CPUSeconds != p.GPUSeconds {
		t.Errorf("at the break-even point CPU %g, GPU %g", p.CPUSeconds, p.GPUSeconds)
	}
}

// TestDefaultsReproduceTheMeasuredCalls: the default rates choose the faster
// device on every call the GPU runs measured (Default's list), on their host
// of 16 cores and a 132-multiprocessor H100.
func TestDefaultsReproduceTheMeasuredCalls(t *testing.T) {
	mol := Workload{Kind: Marginalized, Pairs: 5050, Small: 1.73e7, MaxPair: 9.41e3} // 100 graphs of 10-29 nodes
	big := Workload{Kind: Marginalized, Pairs: 21, Large: 1.64e8, MaxPair: 8.66e6}   // 6 graphs of 300-550 nodes
	for _, tc := range []struct {
		name    string
		w       Workload
		float32 bool
		gpu     bool // the measured faster device
		ratio   float64
	}{
		{"marginalized, molecules, float64 (0.49-0.70x)", mol, false, false, 0.6},
		{"marginalized, molecules, float32 (2.8-4.4x)", mol, true, true, 3.6},
		{"marginalized, 6 large graphs, float64 (CPU 1.17 s, GPU 20.0 s)", big, false, false, 1.17 / 20},
		{"marginalized, 6 large graphs, float32 (GPU 9.8 s)", big, true, false, 1.17 / 9.8},
		{"shortest path (7.9-9.9x)", Workload{Kind: ShortestPath, Pairs: 820, Small: 2.6e10}, false, true, 9},
		{"explicit features (0.42-0.90x)", Workload{Kind: Explicit, Pairs: 2e6, Small: 2e8}, false, false, 0.66},
	} {
		p := Default(tc.w.Kind, tc.float32, referenceSlots).Predict(tc.w, referenceCores, referenceSlots)
		ratio := p.CPUSeconds / p.GPUSeconds
		if p.GPU != tc.gpu || math.Abs(ratio/tc.ratio-1) > 0.1 {
			t.Errorf("%s: predicted CPU %.3g s, GPU %.3g s (%.2fx): GPU %v, want %v at about %.2fx", tc.name, p.CPUSeconds, p.GPUSeconds, ratio, p.GPU, tc.gpu, tc.ratio)
		}
	}
	if r := Default(Kind(99), false, 0); r != (Rates{}) {
		t.Errorf("Default of an unknown kind = %+v, want zero rates", r)
	}
}

func TestDefaultScalesWithMultiprocessors(t *testing.T) {
	a, b := Default(Marginalized, false, 132), Default(Marginalized, false, 66)
	if b.GPU != 2*a.GPU || b.GPULarge != a.GPULarge || b.CPU != a.CPU {
		t.Errorf("66 multiprocessors: %+v; 132: %+v", b, a)
	}
}

func ExampleRates_Predict() {
	r := Default(Marginalized, false, 132)
	// 2,000 drug-size molecules (25 atoms, 27 bonds: 79 terms each) on 2 cores.
	w := NewWorkload(Marginalized, repeat(Marginalized.Size(25, 2*27), 2000), nil, true, r.SmallPair)
	p := r.Predict(w, 2, 132)
	fmt.Printf("%.0f pairs: CPU %.1f s, GPU %.2f s, GPU faster: %v\n", w.Pairs, p.CPUSeconds, p.GPUSeconds, p.GPU)
	// Output: 2001000 pairs: CPU 106.2 s, GPU 20.67 s, GPU faster: true
}

func repeat(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}
