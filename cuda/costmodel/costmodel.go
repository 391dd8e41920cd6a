// Package costmodel predicts how long a call would take on the CPU and on a
// CUDA device, so that device="auto" computes on the GPU only where it is
// expected to be faster. It is plain Go (no cgo, no CUDA): the rates it
// starts from are measurements of earlier GPU runs, and package
// cuda/autodevice corrects them by a timed sample on the device at hand.
//
// The model counts a call's work in terms, a per-pair measure that each
// kernel's time grows with (Kind.PairTerms):
//
//	CPU: (CPU·Tsmall + CPULarge·Tlarge) / cores
//	GPU: GPUCall + GPU·Tsmall + GPULarge·max(Tlarge/slots, largest pair)
//
// Tsmall and Tlarge are the terms of the pairs up to and above SmallPair.
// The GPU's large pairs are the marginalized solver's one pair per block: a
// call of few large pairs takes as long as its largest one, however many
// multiprocessors are idle (cuda/README.md, "Where the time goes").
package costmodel

import (
	"fmt"
	"math"
	"sort"
)

// Kind is a family of kernels that share a device code path.
type Kind int

const (
	// Marginalized is the marginalized graph kernel (package mgk); a pair's
	// terms are those of one product mat-vec, (nnz+n)(nnz'+n').
	Marginalized Kind = iota + 1
	// ShortestPath is the shortest-path kernel (package spkernel); a pair's
	// terms are the product of the graphs' shortest-path counts, n(n+1)/2
	// each (every node pair of a connected graph, and the node itself).
	ShortestPath
	// Explicit is the Gram product of explicit features (package
	// sparsegram); a pair's terms are the sum of the graphs' node counts,
	// which their feature counts grow with.
	Explicit
)

// String names the kind as graphgram.devices() shows it.
func (k Kind) String() string {
	switch k {
	case Marginalized:
		return "marginalized"
	case ShortestPath:
		return "shortest_path"
	case Explicit:
		return "explicit"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Kinds lists the kinds that have a device code path.
var Kinds = []Kind{Marginalized, ShortestPath, Explicit}

// Size returns the per-graph size that PairTerms combines: n+nnz for the
// marginalized kernel (nnz the adjacency's stored entries, both directions
// of each edge), n(n+1)/2 for shortest paths, n for explicit features.
func (k Kind) Size(nodes, nnz int) float64 {
	n := float64(nodes)
	switch k {
	case Marginalized:
		return n + float64(nnz)
	case ShortestPath:
		return n * (n + 1) / 2
	}
	return n
}

// product reports whether a pair's terms are the product of the sizes
// (else their sum).
func (k Kind) product() bool { return k != Explicit }

// PairTerms returns the terms of one pair of graphs of sizes a and b (Size).
func (k Kind) PairTerms(a, b float64) float64 {
	if k.product() {
		return a * b
	}
	return a + b
}

// Workload is what a call computes, as the model counts it.
type Workload struct {
	Kind Kind
	// Pairs is the number of graph pairs computed.
	Pairs float64
	// Small and Large are the terms of the pairs up to and above the rates'
	// SmallPair; MaxPair is the largest pair's terms.
	Small, Large, MaxPair float64
}

// NewWorkload returns the workload of the pairs of X × Y, or of the upper
// triangle (diagonal included) when symmetric (Y is then X), given each
// graph's Size; pairs of more than smallPair terms are large. It takes
// O((nx + ny) log ny) time, not one step per pair.
func NewWorkload(k Kind, sizesX, sizesY []float64, symmetric bool, smallPair float64) Workload {
	w := Workload{Kind: k}
	if symmetric {
		sizesY = sizesX
	}
	if len(sizesX) == 0 || len(sizesY) == 0 {
		return w
	}
	ys := append([]float64(nil), sizesY...)
	sort.Float64s(ys)
	prefix := make([]float64, len(ys)+1) // prefix[i]: Σ ys[:i]
	for i, s := range ys {
		prefix[i+1] = prefix[i] + s
	}
	var total float64
	for _, a := range sizesX {
		// The y of pair terms ≤ smallPair are a prefix of ys.
		var cut int
		if k.product() {
			cut = sort.Search(len(ys), func(i int) bool { return a*ys[i] > smallPair })
			w.Small += a * prefix[cut]
			total += a * prefix[len(ys)]
		} else {
			cut = sort.Search(len(ys), func(i int) bool { return a+ys[i] > smallPair })
			w.Small += float64(cut)*a + prefix[cut]
			total += float64(len(ys))*a + prefix[len(ys)]
		}
		w.MaxPair = max(w.MaxPair, k.PairTerms(a, ys[len(ys)-1]))
	}
	w.Large = total - w.Small
	w.Pairs = float64(len(sizesX)) * float64(len(sizesY))
	if symmetric {
		// Each off-diagonal pair was counted twice and each diagonal pair
		// once: halve, then add half the diagonal back.
		var dSmall, dLarge float64
		for _, a := range sizesX {
			if t := k.PairTerms(a, a); t <= smallPair {
				dSmall += t
			} else {
				dLarge += t
			}
		}
		w.Small, w.Large = (w.Small+dSmall)/2, (w.Large+dLarge)/2
		n := float64(len(sizesX))
		w.Pairs = n * (n + 1) / 2
	}
	// Sums of rounded products can leave a hair below zero.
	w.Small, w.Large = max(w.Small, 0), max(w.Large, 0)
	return w
}

// Rates are the constants of the model for one kind, precision and device.
type Rates struct {
	// CPU and CPULarge are core-seconds per term of small and large pairs.
	CPU, CPULarge float64
	// GPU is device-seconds per term of small pairs (many pairs share the
	// device); GPULarge is seconds per term of one large pair on the one
	// block that solves it.
	GPU, GPULarge float64
	// GPUCall is the fixed time of a device call: transfers, allocation,
	// launches.
	GPUCall float64
	// SmallPair is the largest pair, in terms, that the small rates hold
	// for (+Inf: every pair is small).
	SmallPair float64
	// Source says where the rates come from.
	Source string
}

// Prediction is the model's estimate of one call.
type Prediction struct {
	CPUSeconds, GPUSeconds float64
	// GPU is true when the GPU is expected to be faster.
	GPU bool
}

// Predict estimates w on cores CPU cores and on a device of slots
// concurrent pair solvers (its multiprocessors).
func (r Rates) Predict(w Workload, cores, slots int) Prediction {
	cores, slots = max(cores, 1), max(slots, 1)
	p := Prediction{
		CPUSeconds: (r.CPU*w.Small + r.CPULarge*w.Large) / float64(cores),
		GPUSeconds: r.GPUCall + r.GPU*w.Small,
	}
	if w.Large > 0 {
		p.GPUSeconds += r.GPULarge * max(w.Large/float64(slots), w.MaxPair)
	}
	p.GPU = p.GPUSeconds < p.CPUSeconds
	return p
}

// Calibrated returns the rates scaled so that they predict timed samples
// exactly: cpuSeconds is the time of cpuSample on cores CPU cores,
// gpuSeconds that of gpuSample on the device (the samples may differ: a
// device far slower than the CPU is timed on part of the sample). Every CPU
// rate is scaled by one factor and every GPU rate by another: the samples
// fix how fast this machine and this device are; the rates' shape (small
// against large pairs, the fixed cost of a call) stays that of the
// measurements they came from. A time of 0 leaves its side as it is.
func (r Rates) Calibrated(cpuSample Workload, cpuSeconds float64, gpuSample Workload, gpuSeconds float64, cores, slots int, source string) Rates {
	if p := r.Predict(cpuSample, cores, slots); p.CPUSeconds > 0 && cpuSeconds > 0 {
		f := cpuSeconds / p.CPUSeconds
		r.CPU, r.CPULarge = r.CPU*f, r.CPULarge*f
	}
	if p := r.Predict(gpuSample, cores, slots); p.GPUSeconds > 0 && gpuSeconds > 0 {
		f := gpuSeconds / p.GPUSeconds
		r.GPU, r.GPULarge, r.GPUCall = r.GPU*f, r.GPULarge*f, r.GPUCall*f
	}
	r.Source = source
	return r
}

// BreakEven returns the terms of small pairs above which the GPU is
// expected to be faster on cores CPU cores, or +Inf when it never is (the
// device's throughput is no better than the cores').
func (r Rates) BreakEven(cores int) float64 {
	perTerm := r.CPU/float64(max(cores, 1)) - r.GPU
	if perTerm <= 0 {
		return math.Inf(1)
	}
	return r.GPUCall / perTerm
}

// The reference device of the default rates: the GPU runs of 2026-11-26/27
// (benchmarks/log/gpu_runs.md) on an NVIDIA H100 (132 multiprocessors) beside a 16-core
// host.
const (
	referenceSlots = 132
	referenceCores = 16
	referenceRuns  = "H100 runs of 2026-11-26/27"
)

// Default returns the rates measured for kind in float32 (else float64) on
// the reference device, its small-pair throughput scaled to a device of
// slots multiprocessors. They are derived from these runs (terms counted
// on the runs' own graphs; CPU times with 16 cores):
//
//   - marginalized, 200 graphs of 10-29 nodes (20,100 pairs, 7.8·10⁷
//     terms): CPU 83 ms, so 1.7·10⁻⁸ core-s a term; 100 such graphs (5,050
//     pairs, 1.7·10⁷ terms) ran at 0.49-0.70× the CPU's speed in float64 and
//     2.8-4.4× in float32 (0.6 and 3.6 taken), transfers included;
//   - marginalized, 6 graphs of 300-550 nodes (21 pairs, 1.6·10⁸ terms, the
//     largest pair 8.7·10⁶): CPU 1.17 s (1.1·10⁻⁷ core-s a term), GPU 20.0 s
//     float64 and 9.8 s float32: 2.3·10⁻⁶ and 1.1·10⁻⁶ s a term of a pair on
//     its block;
//   - shortest path, 40 graphs of 40-159 nodes: 7.9-9.9× (float64) and
//     9.0-9.1× (float32) the CPU's speed (9 taken);
//   - explicit features, 2,000 rows: 0.42-0.90× (0.66 taken).
//
// The reference calls' terms are the runs' (1.73·10⁷, 2.6·10¹⁰, 2·10⁸), so
// that the rates give each its measured speed, the call's fixed time
// included. The pair size between the small and the large rates (2¹⁶
// terms: two graphs of about 80 atoms) and the 2 ms of a call are guesses
// that the GPU runs do not pin down; the CPU rates of the shortest-path and explicit
// kinds are this package's benchmark on a 2-core Intel Xeon (what matters
// is their ratio to the GPU's, and autodevice measures both).
func Default(k Kind, float32 bool, slots int) Rates {
	r := Rates{GPUCall: 2e-3, SmallPair: math.Inf(1), Source: referenceRuns}
	// The reference call of the kind: its terms, and the reference device's
	// speed on it over 16 cores, the call's fixed time included.
	var terms, speedup float64
	switch k {
	case Marginalized:
		r.CPU, r.CPULarge, r.SmallPair = 1.7e-8, 1.1e-7, 1<<16
		terms, r.GPULarge, speedup = 1.73e7, 2.3e-6, 0.6
		if float32 {
			r.GPULarge, speedup = 1.1e-6, 3.6
		}
	case ShortestPath:
		r.CPU, terms, speedup = spCPURate, 2.6e10, 9
	case Explicit:
		r.CPU, terms, speedup = explicitCPURate, 2e8, 0.66
	default:
		return Rates{}
	}
	if r.CPULarge == 0 {
		r.CPULarge = r.CPU
	}
	r.GPU = (r.CPU*terms/referenceCores/speedup - r.GPUCall) / terms
	if r.GPULarge == 0 {
		r.GPULarge = r.GPU * referenceSlots
	}
	if slots > 0 {
		r.GPU *= referenceSlots / float64(slots)
	}
	return r
}

// The CPU's core-seconds per term of the shortest-path and explicit kinds:
// BenchmarkCPURates of package cuda/autodevice (its sample on one core) on a
// 2-core Intel Xeon, 2026-12-05: 0.20-0.43 and 0.58-0.88 core-ns a term
// (the same run measured the marginalized kind at 6.4-6.6).
const (
	spCPURate       = 0.35e-9
	explicitCPURate = 0.8e-9
)
