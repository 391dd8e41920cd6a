package autodevice

import (
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/costmodel"
	"github.com/graphgram/graphgram/gokernel/graph"
)

// molecules returns n sample-sized graphs and their marginalized workload.
func molecules(n int) costmodel.Workload {
	return WorkloadOf(costmodel.Marginalized, sampleGraphs(n), nil, true)
}

// fakeSample is a sample that reports fixed times and counts its calls.
type fakeSample struct {
	cpu, gpu float64
	err      error
	calls    int
	lib      *cuda.Library // the last sample's
}

func (f *fakeSample) run(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision, cores int) (timing, error) {
	f.calls++
	f.lib = lib
	return timing{cpu: molecules(24), gpu: molecules(24), cpuSeconds: f.cpu, gpuSeconds: f.gpu}, f.err
}

// TestRatesSampleOnceAndScale: the first Rates of a device, kind and
// precision times the sample, the rates then predict it, and later calls
// reuse them; another precision is sampled anew; a failed sample leaves the
// defaults and says why.
func TestRatesSampleOnceAndScale(t *testing.T) {
	var lib *cuda.Library // none: the sample is fake
	r := NewRegistry()
	f := &fakeSample{cpu: 0.2, gpu: 0.05}
	r.sample = f.run
	if _, calibrated := r.Lookup(lib, 0, costmodel.Marginalized, cuda.Float64); calibrated {
		t.Fatal("Lookup before any sample says calibrated")
	}
	a := r.Rates(lib, 0, costmodel.Marginalized, cuda.Float64)
	b := r.Rates(lib, 0, costmodel.Marginalized, cuda.Float64)
	if f.calls != 1 || a != b {
		t.Errorf("sampled %d times (want 1); rates %+v then %+v", f.calls, a, b)
	}
	p := a.Predict(molecules(24), runtime.GOMAXPROCS(0), Slots(lib, 0))
	if math.Abs(p.CPUSeconds/0.2-1) > 1e-9 || math.Abs(p.GPUSeconds/0.05-1) > 1e-9 {
		t.Errorf("calibrated rates predict the sample as %+v, want CPU 0.2 s, GPU 0.05 s", p)
	}
	if !strings.Contains(a.Source, "sample timed in this process") {
		t.Errorf("source %q does not say it was timed", a.Source)
	}
	if got, calibrated := r.Lookup(lib, 0, costmodel.Marginalized, cuda.Float64); !calibrated || got != a {
		t.Errorf("Lookup = %+v, %v; want the calibrated rates", got, calibrated)
	}
	r.Rates(lib, 0, costmodel.Marginalized, cuda.Float32)
	if f.calls != 2 {
		t.Errorf("float32 did not take its own sample (%d calls)", f.calls)
	}
	// Another library's device 0 (a zero cuda.Library stands for one) is
	// another device: sampled anew, the sample told which library.
	other := new(cuda.Library)
	if _, calibrated := r.Lookup(other, 0, costmodel.Marginalized, cuda.Float64); calibrated {
		t.Error("another library's device 0 has the first one's rates")
	}
	r.Rates(other, 0, costmodel.Marginalized, cuda.Float64)
	if f.calls != 3 || f.lib != other {
		t.Errorf("another library: %d samples (want 3), the last of library %p (want %p)", f.calls, f.lib, other)
	}
	f.err = errors.New("planted")
	c := r.Rates(lib, 0, costmodel.ShortestPath, cuda.Float64)
	def := costmodel.Default(costmodel.ShortestPath, false, Slots(lib, 0))
	if c.CPU != def.CPU || c.GPU != def.GPU || !strings.Contains(c.Source, "the timed sample failed (planted)") {
		t.Errorf("after a failed sample: %+v, want the defaults saying why", c)
	}
}

// TestDecidePlantedDevices: the same call goes to the GPU on a planted fast
// device and stays on the CPU on a slow one; a call of few large pairs stays
// on the CPU on a device whose large pairs are slow (today's marginalized
// solver), whatever its small-pair speed; more cores move the break-even.
func TestDecidePlantedDevices(t *testing.T) {
	var lib *cuda.Library // none: the rates are planted
	mol := molecules(200)
	big := WorkloadOf(costmodel.Marginalized, []*graph.Graph{largeGraph(300), largeGraph(550)}, nil, true)
	if big.Large == 0 {
		t.Fatalf("the large pairs are not large: %+v", big)
	}
	fast := costmodel.Rates{CPU: 1e-8, CPULarge: 1e-7, GPU: 1e-11, GPULarge: 1e-9, GPUCall: 1e-3, SmallPair: 1 << 16, Source: "planted fast"}
	slow := fast
	slow.GPU, slow.GPULarge, slow.Source = 1e-8, 1e-5, "planted slow"
	largeSlow := fast
	largeSlow.GPULarge, largeSlow.Source = 1e-5, "planted: large pairs slow"
	for _, tc := range []struct {
		name  string
		rates costmodel.Rates
		w     costmodel.Workload
		cores int
		gpu   bool
	}{
		{"fast device, molecules", fast, mol, 2, true},
		{"slow device, molecules", slow, mol, 2, false},
		{"fast device, large pairs", fast, big, 2, true},
		{"large pairs slow, large pairs", largeSlow, big, 2, false},
		{"large pairs slow, molecules", largeSlow, mol, 2, true},
		{"fast device, one tiny pair", fast, molecules(1), 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			r.sample = func(*cuda.Library, int, costmodel.Kind, cuda.Precision, int) (timing, error) {
				t.Fatal("a planted device was sampled")
				return timing{}, nil
			}
			r.Plant(lib, 0, costmodel.Marginalized, cuda.Float64, tc.rates)
			d := r.Decide(lib, 0, tc.w, cuda.Float64, tc.cores)
			if d.GPU != tc.gpu {
				t.Errorf("GPU %v, want %v: %s", d.GPU, tc.gpu, d.Reason())
			}
			where := "the CPU:"
			if tc.gpu {
				where = "the GPU:"
			}
			if !strings.HasPrefix(d.Reason(), where) || !strings.Contains(d.Reason(), tc.rates.Source) {
				t.Errorf("reason %q does not start with %q and name the rates", d.Reason(), where)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	var lib *cuda.Library // none: the rates are planted
	r := NewRegistry()
	r.Plant(lib, 0, costmodel.Explicit, cuda.Float64, costmodel.Rates{CPU: 1e-8, CPULarge: 1e-8, GPU: 1e-8, GPUCall: 1e-3, SmallPair: math.Inf(1), Source: "planted"})
	if s := r.Summary(lib, 0, costmodel.Explicit, cuda.Float64, 2); !strings.HasPrefix(s, "CPU: the device's throughput is not above 2 cores'") || !strings.Contains(s, "rates: planted") {
		t.Errorf("slow device: %q", s)
	}
	r.Plant(lib, 0, costmodel.ShortestPath, cuda.Float64, costmodel.Rates{CPU: 1e-8, CPULarge: 1e-8, GPU: 1e-10, GPUCall: 1e-3, SmallPair: math.Inf(1), Source: "planted"})
	if s := r.Summary(lib, 0, costmodel.ShortestPath, cuda.Float64, 2); !strings.HasPrefix(s, "GPU for calls of more than 2.04e+05 terms") {
		t.Errorf("fast device: %q", s)
	}
	if s := r.Summary(lib, 0, costmodel.Marginalized, cuda.Float32, 2); !strings.Contains(s, "default rates (") || !strings.Contains(s, "pairs up to 6.55e+04 terms each") {
		t.Errorf("uncalibrated: %q", s)
	}
}

// TestSampleEmulated times the real samples on the emulated CUDA library
// ($GGCUDA_TEST_LIB, whose kernels run on host threads far slower than any
// GPU): every kind calibrates from a sample that ran, and device="auto" then
// keeps a molecule Gram on the CPU.
func TestSampleEmulated(t *testing.T) {
	path := os.Getenv("GGCUDA_TEST_LIB")
	if path == "" || !cuda.Built {
		t.Skip("GGCUDA_TEST_LIB not set or no cuda build tag: no emulated CUDA library to time")
	}
	lib, err := cuda.Open(path)
	if err == nil {
		err = lib.Check(0)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry()
	for _, k := range costmodel.Kinds {
		t0 := time.Now()
		rates := r.Rates(lib, 0, k, cuda.Float64)
		t.Logf("%v: %v; %s", k, time.Since(t0), rates.Source)
		if !strings.Contains(rates.Source, "sample timed in this process") {
			t.Errorf("%v: %s", k, rates.Source)
		}
	}
	if d := r.Decide(lib, 0, molecules(200), cuda.Float64, 0); d.GPU {
		t.Errorf("the emulated device was chosen: %s", d.Reason())
	}
}

// largeGraph is a ring of n nodes with chords: n + 2·(2n) terms.
func largeGraph(n int) *graph.Graph {
	var edges []int64
	for i := range n {
		edges = append(edges, int64(i), int64((i+1)%n), int64(i), int64((i+7)%n))
	}
	w := make([]float64, len(edges)/2)
	for i := range w {
		w[i] = 1
	}
	g, err := graph.New(n, edges, w, make([]float64, n), 1, make([]float64, len(w)), 1)
	if err != nil {
		panic(err)
	}
	return g
}

// BenchmarkCPURates reports each kind's sample on one CPU core in core-ns
// per term (costmodel.Default's CPU rates of the shortest-path and explicit
// kinds come from it).
func BenchmarkCPURates(b *testing.B) {
	for _, k := range costmodel.Kinds {
		b.Run(k.String(), func(b *testing.B) {
			var s timing
			for b.Loop() {
				var err error
				if s, err = sample(nil, 0, k, cuda.Float64, 1); err != nil && !strings.HasPrefix(err.Error(), "GPU:") {
					b.Fatal(err)
				}
			}
			b.ReportMetric(1e9*s.cpuSeconds/(s.cpu.Small+s.cpu.Large), "core-ns/term")
		})
	}
}
