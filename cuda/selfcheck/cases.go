package selfcheck

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
	"github.com/graphgram/graphgram/gokernel/wl"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// validationCase is one kernel of the validation: its Gram matrix of the
// validation graphs on the CPU, and on the device in each of its variants
// (the precisions), each of which must agree within its bound.
type validationCase struct {
	name     string
	cpu      func(out []float64) error
	variants []variant
}

// variant is one device computation of a case.
type variant struct {
	// label follows the case's name in messages: "float64", "float32",
	// "exact".
	label string
	// bound is the largest error (accuracy.Err, scale the CPU matrix's) the
	// device result may have; 0 asks for equality.
	bound float64
	gpu   func(lib *cuda.Library, device int, out []float64) error
}

// validationGraphs are the validation's graphs: fixed random labeled,
// weighted graphs with node and edge labels (column 0) and real attributes
// (column 1), of 5 to 20 nodes, sparse (rings with chords: sparse tiles) and
// dense (most pairs connected: dense tiles), one with self-loops.
func validationGraphs() []*graph.Graph {
	rng := rand.New(rand.NewPCG(22, 3))
	var gs []*graph.Graph
	for _, s := range []struct {
		n     int
		dense float64
		loops bool
	}{{5, 0.5, true}, {9, 0.15, false}, {12, 0.7, false}, {20, 0.1, true}} {
		var edges []int64
		var w, ef []float64
		add := func(i, j int) {
			edges = append(edges, int64(i), int64(j))
			w = append(w, 0.5+rng.Float64())
			ef = append(ef, float64(rng.IntN(2)), rng.NormFloat64())
		}
		for i := 0; i < s.n; i++ {
			add(i, (i+1)%s.n)
			for j := i + 2; j < s.n; j++ {
				if rng.Float64() < s.dense && !(i == 0 && j == s.n-1) {
					add(i, j)
				}
			}
			if s.loops && i%4 == 0 {
				add(i, i)
			}
		}
		nf := make([]float64, 0, 2*s.n)
		for range s.n {
			nf = append(nf, float64(rng.IntN(3)), rng.NormFloat64())
		}
		g, err := graph.New(s.n, edges, w, nf, 2, ef, 2)
		if err != nil {
			panic(err) // the construction above is valid by design
		}
		gs = append(gs, g)
	}
	return gs
}

// precisions are the variants of a floating-point kernel: gpu in float64
// and float32, within bound64 and bound32.
func precisions(bound64, bound32 float64, gpu func(lib *cuda.Library, device int, prec cuda.Precision, out []float64) error) []variant {
	return []variant{
		{"float64", bound64, func(lib *cuda.Library, device int, out []float64) error { return gpu(lib, device, cuda.Float64, out) }},
		{"float32", bound32, func(lib *cuda.Library, device int, out []float64) error { return gpu(lib, device, cuda.Float32, out) }},
	}
}

// validationCases lists the validation's computations on the graphs X.
func validationCases(X []*graph.Graph) []validationCase {
	table := mgk.Options{
		NodeKernel: &microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1},
		EdgeKernel: &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1},
		Q:          0.05, NJobs: 1,
	}
	evaluated := mgk.Options{
		NodeKernel: &microkernel.Product{Terms: []microkernel.Kernel{
			&microkernel.KroneckerDelta{H: 0.3, Col: 0, Width: 1},
			&microkernel.SquareExponential{LengthScale: 1.5, Col: 1, Width: 1}}},
		EdgeKernel: &microkernel.SquareExponential{LengthScale: 1, Col: 1, Width: 1},
		Q:          0.3, NJobs: 1,
	}
	sp := spkernel.Options{NodeKernel: &microkernel.KroneckerDelta{H: 0.2, Col: 0, Width: 1}, WeightCol: spkernel.HopCounts, NJobs: 1}
	// The contracts of cuda/README.md: the marginalized kernel 1e-9
	// (float64) and 1e-4 (float32) against a converged reference, here
	// against the CPU's own 1e-9; shortest paths 1e-12 and 1e-5; the
	// explicit-feature Gram is exact integer arithmetic on both sides.
	var cases []validationCase
	for _, m := range []struct {
		name string
		opt  mgk.Options
	}{{"table", table}, {"evaluated", evaluated}} {
		opt := m.opt
		cases = append(cases, validationCase{
			name: "marginalized kernel (" + m.name + " base kernels)",
			cpu: func(out []float64) error {
				_, err := mgk.Gram(X, nil, nil, nil, true, opt, out, nil)
				return err
			},
			variants: precisions(accuracy.MGKCheck64, accuracy.MGKCheck32, func(lib *cuda.Library, device int, prec cuda.Precision, out []float64) error {
				_, err := lib.MarginalizedGram(X, nil, nil, nil, true, opt, device, prec, out)
				return err
			}),
		})
	}
	cases = append(cases, validationCase{
		name: "shortest-path kernel",
		cpu:  func(out []float64) error { return spkernel.Gram(X, nil, true, sp, out) },
		variants: precisions(accuracy.SP64, accuracy.SP32, func(lib *cuda.Library, device int, prec cuda.Precision, out []float64) error {
			return lib.ShortestPathGram(X, nil, true, sp, device, prec, cuda.SPHybrid{CPUWork: -1}, out, nil)
		}),
	})
	// The explicit-feature kernels: the feature maps are the CPU's (package
	// wl); what runs on the device is their Gram product.
	for _, f := range []struct {
		name     string
		features func() (*sparsegram.Features, error)
	}{
		{"WL features, 2 iterations", sync.OnceValues(func() (*sparsegram.Features, error) {
			return wl.Features(X, wl.Options{Iterations: 2, NodeLabelCol: 0, EdgeLabelCol: 0, NJobs: 1})
		})},
		{"edge label histogram", sync.OnceValues(func() (*sparsegram.Features, error) {
			return wl.EdgeFeatures(X, 0)
		})},
	} {
		for _, s := range []struct {
			name     string
			semiring sparsegram.Semiring
		}{{"sum-product", sparsegram.SumProduct}, {"sum-min", sparsegram.SumMin}} {
			cases = append(cases, validationCase{
				name: "explicit-feature Gram (" + f.name + ", " + s.name + ")",
				cpu: func(out []float64) error {
					F, err := f.features()
					if err != nil {
						return err
					}
					return sparsegram.Gram(F, nil, true, sparsegram.Options{Semiring: s.semiring, NJobs: 1}, out)
				},
				variants: []variant{{"exact", 0, func(lib *cuda.Library, device int, out []float64) error {
					F, err := f.features()
					if err != nil {
						return err
					}
					return lib.ExplicitGram(F, nil, true, s.semiring, device, out, nil)
				}}},
			})
		}
	}
	return cases
}

// run computes every case on device of lib and on the CPU and returns the
// number of Gram matrices compared, or the first disagreement or error.
// skew, when not 0, scales every device result by 1 + skew (Registry.skew).
func run(lib *cuda.Library, device int, skew float64) (compared int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the validation panicked: %v", r)
		}
	}()
	// The device is warmed up (context, kernels loaded: Library.WarmUp) while
	// the CPU computes the references, so that neither waits for the other.
	warm := make(chan error, 1)
	go func() {
		_, err := lib.WarmUp(device)
		warm <- err
	}()
	X := validationGraphs()
	n := len(X)
	cases := validationCases(X)
	wants := make([][]float64, len(cases))
	var cpuErr error
	for i, c := range cases {
		wants[i] = make([]float64, n*n)
		if err := c.cpu(wants[i]); err != nil {
			cpuErr = fmt.Errorf("%s failed on the CPU: %v", c.name, err)
			break
		}
	}
	if err := <-warm; err != nil {
		return compared, fmt.Errorf("the warm-up failed on the device: %v", err)
	}
	if cpuErr != nil {
		return compared, cpuErr
	}
	for i, c := range cases {
		want := wants[i]
		for _, v := range c.variants {
			if err := compareDevice(c.name+", "+v.label, v, lib, device, n, want, skew); err != nil {
				return compared, err
			}
			compared++
		}
	}
	return compared, nil
}

// compareDevice computes variant v (named name in messages) on device of
// lib and compares it with the CPU's n×n want.
func compareDevice(name string, v variant, lib *cuda.Library, device, n int, want []float64, skew float64) error {
	got := make([]float64, len(want))
	if err := v.gpu(lib, device, got); err != nil {
		return fmt.Errorf("%s failed on the device: %v", name, err)
	}
	if skew != 0 {
		for k := range got {
			got[k] *= 1 + skew
		}
	}
	worst, at := accuracy.Worst(got, want, accuracy.Scale(want))
	if worst <= v.bound {
		return nil
	}
	allowed := fmt.Sprintf("allowed %.0e", v.bound)
	if v.bound == 0 {
		allowed = "exact arithmetic: must be equal"
	}
	return fmt.Errorf("%s: entry (%d, %d) is %.17g on the device and %.17g on the CPU, relative difference %.3g (%s)",
		name, at/n, at%n, got[at], want[at], worst, allowed)
}
