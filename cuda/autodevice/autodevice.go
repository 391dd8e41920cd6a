// Package autodevice decides where a device="auto" call computes: on the GPU
// only where the cost model (package cuda/costmodel) expects it to be faster
// than the CPU. The model's rates start as the measurements of earlier GPU
// runs; the first time a process would use a device for a kind of kernel in a
// precision, a small fixed sample is timed on the CPU and on the device and
// the rates are scaled to predict it (costmodel.Rates.Calibrated), then kept
// for the life of the Registry (pybind holds one for the process).
//
// The package builds with and without the cuda build tag; without it the
// device sample fails with cuda.ErrNotBuilt and the rates stay the defaults,
// which callers never reach: they ask only for devices that passed
// cuda.Check and the self-validation.
package autodevice

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/costmodel"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
	"github.com/graphgram/graphgram/gokernel/wl"
)

// Decision is where one call computes and why.
type Decision struct {
	costmodel.Prediction
	// Rates are the rates the prediction used.
	Rates costmodel.Rates
	// Cores and Slots are the CPU workers and device multiprocessors the
	// prediction assumed.
	Cores, Slots int
}

// Reason says in one sentence why the call computes where it does.
func (d Decision) Reason() string {
	where, other := "the GPU", "the CPU"
	if !d.GPU {
		where, other = other, where
	}
	return fmt.Sprintf("%s: predicted %.3g s against %.3g s on %s (%d CPU cores, %d multiprocessors; rates: %s)",
		where, min(d.CPUSeconds, d.GPUSeconds), max(d.CPUSeconds, d.GPUSeconds), other, d.Cores, d.Slots, d.Rates.Source)
}

// Registry holds the calibrated rates per CUDA library (the cuda.Library
// sampled), device, kind and precision: device 0 of one library is not
// device 0 of another. The zero value is not usable: NewRegistry makes one.
// Its methods may be called from any goroutine; samples run one at a time.
type Registry struct {
	mu    sync.Mutex
	rates map[key]calibration
	// sample computes one kind's timed sample (sample, unless a test
	// replaces it).
	sample func(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision, cores int) (timing, error)
}

// calibration is the rates in use for one key and the device's
// multiprocessors, read once with them (Library.Devices asks the driver).
type calibration struct {
	rates costmodel.Rates
	slots int
}

// key is a kind and precision on a device of a library: cuda.Open gives one
// *cuda.Library a library file and process, so the pointer names the
// library.
type key struct {
	library *cuda.Library
	device  int
	kind    costmodel.Kind
	prec    cuda.Precision
}

// NewRegistry returns a registry with no calibration: each device, kind and
// precision is sampled on its first Rates.
func NewRegistry() *Registry {
	return &Registry{rates: map[key]calibration{}, sample: sample}
}

// Slots returns the multiprocessors of device of lib, 0 when they cannot be
// read.
func Slots(lib *cuda.Library, device int) int {
	devs, err := lib.Devices()
	if err != nil {
		return 0
	}
	for _, d := range devs {
		if d.Index == device {
			return d.MultiProcessors
		}
	}
	return 0
}

// Rates returns the rates of kind k in precision prec on device of lib,
// timing the sample on the first call for them. A sample that fails leaves
// the default rates, with the failure in their Source.
func (r *Registry) Rates(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision) costmodel.Rates {
	return r.calibrated(lib, device, k, prec).rates
}

// calibrated is Rates with the device's multiprocessors.
func (r *Registry) calibrated(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision) calibration {
	r.mu.Lock()
	defer r.mu.Unlock()
	kk := key{lib, device, k, prec}
	if c, ok := r.rates[kk]; ok {
		return c
	}
	slots, cores := Slots(lib, device), runtime.GOMAXPROCS(0)
	rates := costmodel.Default(k, prec == cuda.Float32, slots)
	s, err := r.sample(lib, device, k, prec, cores)
	if err != nil {
		rates.Source += fmt.Sprintf("; the timed sample failed (%v)", err)
	} else {
		rates = rates.Calibrated(s.cpu, s.cpuSeconds, s.gpu, s.gpuSeconds, cores, slots, fmt.Sprintf(
			"%s, scaled to a sample timed in this process: CPU %.3g s for %.3g pairs, GPU %.3g s for %.3g pairs",
			rates.Source, s.cpuSeconds, s.cpu.Pairs, s.gpuSeconds, s.gpu.Pairs))
	}
	c := calibration{rates, slots}
	r.rates[kk] = c
	return c
}

// Lookup returns the rates in use without sampling: calibrated is false
// when no sample has run and the rates are the defaults.
func (r *Registry) Lookup(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision) (rates costmodel.Rates, calibrated bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.rates[key{lib, device, k, prec}]; ok {
		return c.rates, true
	}
	return costmodel.Default(k, prec == cuda.Float32, Slots(lib, device)), false
}

// Plant sets the rates of device of lib, kind and precision for the rest of
// the registry's life, as if a sample had given them: tests plant a fast or
// a slow device with it.
func (r *Registry) Plant(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision, rates costmodel.Rates) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rates[key{lib, device, k, prec}] = calibration{rates, Slots(lib, device)}
}

// Decide predicts w on device of lib in precision prec against cores CPU
// workers (≤ 0: all of them) and says where it is faster.
func (r *Registry) Decide(lib *cuda.Library, device int, w costmodel.Workload, prec cuda.Precision, cores int) Decision {
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	c := r.calibrated(lib, device, w.Kind, prec)
	return Decision{Prediction: c.rates.Predict(w, cores, c.slots), Rates: c.rates, Cores: cores, Slots: c.slots}
}

// Summary says what device="auto" does for kind k in precision prec on
// device of lib with cores CPU workers, from the rates in use (no sample is
// run).
func (r *Registry) Summary(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision, cores int) string {
	rates, calibrated := r.Lookup(lib, device, k, prec)
	state := "default rates (" + rates.Source + "; a sample is timed on the first call)"
	if calibrated {
		state = "rates: " + rates.Source
	}
	be := rates.BreakEven(cores)
	switch {
	case math.IsInf(be, 1):
		return fmt.Sprintf("CPU: the device's throughput is not above %d cores'; %s", cores, state)
	case !math.IsInf(rates.SmallPair, 1):
		return fmt.Sprintf("GPU for calls of more than %.3g terms of pairs up to %.3g terms each, where it is predicted faster than %d cores; larger pairs by the prediction; %s", be, rates.SmallPair, cores, state)
	}
	return fmt.Sprintf("GPU for calls of more than %.3g terms, where it is predicted faster than %d cores; %s", be, cores, state)
}

// SizesOf returns kind k's size (costmodel.Kind.Size) of each graph.
func SizesOf(k costmodel.Kind, gs []*graph.Graph) []float64 {
	s := make([]float64, len(gs))
	for i, g := range gs {
		s[i] = k.Size(g.N, len(g.Col))
	}
	return s
}

// WorkloadOf returns the workload of kind k on X × Y (the upper triangle of
// X × X when symmetric), large pairs by the default rates' SmallPair.
func WorkloadOf(k costmodel.Kind, X, Y []*graph.Graph, symmetric bool) costmodel.Workload {
	small := costmodel.Default(k, false, 0).SmallPair
	return costmodel.NewWorkload(k, SizesOf(k, X), SizesOf(k, Y), symmetric, small)
}

// DiagWorkloadOf returns the workload of kind k on the pairs (g, g) of X:
// the self-similarities.
func DiagWorkloadOf(k costmodel.Kind, X []*graph.Graph) costmodel.Workload {
	small := costmodel.Default(k, false, 0).SmallPair
	w := costmodel.Workload{Kind: k, Pairs: float64(len(X))}
	for _, s := range SizesOf(k, X) {
		t := k.PairTerms(s, s)
		if t <= small {
			w.Small += t
		} else {
			w.Large += t
		}
		w.MaxPair = max(w.MaxPair, t)
	}
	return w
}

// sampleGraphs are the sample's graphs: n random labeled graphs of 10 to 29
// nodes with 1.25 edges a node (molecule-sized), fixed by the seed.
func sampleGraphs(n int) []*graph.Graph {
	rng := rand.New(rand.NewPCG(50, 4))
	gs := make([]*graph.Graph, n)
	for i := range gs {
		nodes := 10 + rng.IntN(20)
		var edges []int64
		var w, ef []float64
		for u := 1; u < nodes; u++ { // a random tree, then chords
			edges = append(edges, int64(rng.IntN(u)), int64(u))
		}
		seen := map[[2]int64]bool{}
		for j := 0; j < len(edges); j += 2 {
			seen[[2]int64{edges[j], edges[j+1]}] = true
		}
		for range nodes / 4 {
			u, v := int64(rng.IntN(nodes)), int64(rng.IntN(nodes))
			if u > v {
				u, v = v, u
			}
			if u != v && !seen[[2]int64{u, v}] {
				seen[[2]int64{u, v}] = true
				edges = append(edges, u, v)
			}
		}
		for range len(edges) / 2 {
			w = append(w, 1)
			ef = append(ef, float64(rng.IntN(3)))
		}
		nf := make([]float64, nodes)
		for j := range nf {
			nf[j] = float64(rng.IntN(4))
		}
		g, err := graph.New(nodes, edges, w, nf, 1, ef, 1)
		if err != nil {
			panic(err) // valid by construction
		}
		gs[i] = g
	}
	return gs
}

// timing is a sample's workloads and measured times on each side.
type timing struct {
	cpu, gpu               costmodel.Workload
	cpuSeconds, gpuSeconds float64
}

// subsample is how many of the sample's graphs the device computes first:
// when that part alone takes longer than the CPU's whole sample, the device
// is slower beyond doubt and the rest is not timed (an emulated device, or
// an old one, would otherwise hold the first call for seconds).
const subsample = 4

// sample times kind k's sample on the CPU (cores workers) and on device of
// lib:
// a symmetric Gram matrix of molecule-sized graphs, the faster of two runs on
// each side, the device's after its subsample (one run). The marginalized
// kind's 72 graphs (2,628 pairs) are more pairs than the largest GPUs have
// warps in a persistent launch (148 SMs × 2 blocks × 8 warps), so that the
// sample runs the warp solver as the calls of many molecules do; the
// shortest-path kind has 24 graphs (300 pairs), the explicit kind the WL
// features of 200.
func sample(lib *cuda.Library, device int, k costmodel.Kind, prec cuda.Precision, cores int) (s timing, err error) {
	n := map[costmodel.Kind]int{costmodel.Marginalized: 72, costmodel.ShortestPath: 24, costmodel.Explicit: 200}[k]
	X := sampleGraphs(n)
	var cpu func() error
	var gpu func(X []*graph.Graph) error
	switch k {
	case costmodel.Marginalized:
		opt := mgk.Options{NodeKernel: &microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1},
			EdgeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}, Q: 0.05, NJobs: cores}
		out := make([]float64, len(X)*len(X))
		cpu = func() error { _, err := mgk.Gram(X, nil, nil, nil, true, opt, out, nil); return err }
		gpu = func(X []*graph.Graph) error {
			_, err := lib.MarginalizedGram(X, nil, nil, nil, true, opt, device, prec, out[:len(X)*len(X)])
			return err
		}
	case costmodel.ShortestPath:
		opt := spkernel.Options{NodeKernel: &microkernel.KroneckerDelta{H: 0.2, Col: 0, Width: 1}, WeightCol: spkernel.HopCounts, NJobs: cores}
		out := make([]float64, len(X)*len(X))
		cpu = func() error { return spkernel.Gram(X, nil, true, opt, out) }
		gpu = func(X []*graph.Graph) error {
			return lib.ShortestPathGram(X, nil, true, opt, device, prec, cuda.SPHybrid{CPUWork: -1}, out[:len(X)*len(X)], nil)
		}
	case costmodel.Explicit:
		features := func(X []*graph.Graph) (*sparsegram.Features, error) {
			return wl.Features(X, wl.Options{Iterations: 3, NodeLabelCol: 0, EdgeLabelCol: -1, NJobs: cores})
		}
		f, err := features(X)
		if err != nil {
			return s, err
		}
		out := make([]float64, len(X)*len(X))
		opt := sparsegram.Options{Semiring: sparsegram.SumProduct, NJobs: cores}
		cpu = func() error { return sparsegram.Gram(f, f, true, opt, out) }
		gpu = func(X []*graph.Graph) error {
			f := f
			if len(X) < n {
				if f, err = features(X); err != nil {
					return err
				}
			}
			return lib.ExplicitGram(f, nil, true, sparsegram.SumProduct, device, out[:len(X)*len(X)], nil)
		}
	default:
		return s, fmt.Errorf("no sample for %v", k)
	}
	timed := func(runs int, f func() error) (float64, error) {
		best := math.Inf(1)
		for range runs {
			t := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			best = min(best, time.Since(t).Seconds())
		}
		return best, nil
	}
	s.cpu = WorkloadOf(k, X, nil, true)
	if s.cpuSeconds, err = timed(2, cpu); err != nil {
		return s, fmt.Errorf("CPU: %w", err)
	}
	// A device not yet warmed up would load its kernels inside the timing.
	if _, err := lib.WarmUp(device); err != nil {
		return s, fmt.Errorf("GPU: %w", err)
	}
	part := X[:subsample]
	s.gpu = WorkloadOf(k, part, nil, true)
	if s.gpuSeconds, err = timed(1, func() error { return gpu(part) }); err != nil {
		return s, fmt.Errorf("GPU: %w", err)
	}
	if s.gpuSeconds < s.cpuSeconds {
		s.gpu = WorkloadOf(k, X, nil, true)
		if s.gpuSeconds, err = timed(2, func() error { return gpu(X) }); err != nil {
			return s, fmt.Errorf("GPU: %w", err)
		}
	}
	return s, nil
}
