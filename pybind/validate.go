package pybind

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// Self-validation on first use. No line of the CUDA backend is trusted
// before it has agreed with the CPU on the device at hand: the first call of
// a process that would compute on a device first computes a small fixed set
// of Gram matrices there and on the CPU (validationCases: the marginalized
// kernel with table and evaluated base kernels on graphs with dense and with
// sparse tiles, and the shortest-path kernel, each in float64 and float32)
// and compares them within the accuracy contract of each precision. On any
// disagreement or device error the device is marked failed for the rest of
// the process: device="auto" computes on the CPU with one RuntimeWarning
// saying what disagreed and by how much, device="cuda" raises that message.
// deviceParams.ValidateGPU = false (Python: set_config(validate_gpu=False))
// skips the check; Devices reports each device's outcome.

// validation is the outcome of one device's self-validation.
type validation struct {
	// State is "passed" or "failed".
	State string `json:"state"`
	// Detail says what was compared (passed) or what went wrong (failed).
	Detail string `json:"detail"`
	// Seconds is the validation's wall time.
	Seconds float64 `json:"seconds"`
	// warned records that the fallback warning has been given.
	warned bool
}

// validations holds the outcome per CUDA library and device index, for the
// life of the process.
var validations = struct {
	sync.Mutex
	done map[string]*validation
}{done: map[string]*validation{}}

// validationSkew, when not 0, scales every device result of the validation
// by 1 + validationSkew before the comparison: tests plant a wrong device
// result with it.
var validationSkew float64

func validationKey(device int) string {
	return fmt.Sprintf("%s#%d", cuda.LibraryPath(), device)
}

// validated returns device's validation, running it on first use.
func validated(device int) *validation {
	validations.Lock()
	defer validations.Unlock()
	key := validationKey(device)
	if v, ok := validations.done[key]; ok {
		return v
	}
	t := time.Now()
	v := &validation{State: "passed"}
	if compared, err := runValidation(device); err != nil {
		v.State, v.Detail = "failed", err.Error()
	} else {
		v.Detail = fmt.Sprintf("%d Gram matrices agreed with the CPU", compared)
	}
	v.Seconds = time.Since(t).Seconds()
	validations.done[key] = v
	return v
}

// validationOf returns device's validation without running it (nil: not run).
func validationOf(device int) *validation {
	validations.Lock()
	defer validations.Unlock()
	return validations.done[validationKey(device)]
}

// resetValidations forgets every outcome (tests).
func resetValidations() {
	validations.Lock()
	defer validations.Unlock()
	validations.done = map[string]*validation{}
}

// checkValidated applies the validation to a call that would run on device:
// whether it may (true), or the CPU computes it ("auto", false, with the
// warning on the process's first fallback), or the error ("cuda").
func checkValidated(d deviceParams, warn *warnings) (bool, error) {
	if d.ValidateGPU != nil && !*d.ValidateGPU {
		return true, nil
	}
	v := validated(d.DeviceIndex)
	if v.State == "passed" {
		return true, nil
	}
	msg := fmt.Sprintf("CUDA device %d failed graphgram's self-validation against the CPU: %s. "+
		"Please report this with the output of graphgram.devices(). To compute on the CPU, use device='cpu'; "+
		"to use the GPU regardless, graphgram.set_config(validate_gpu=False)", d.DeviceIndex, v.Detail)
	if d.Device == "cuda" {
		return false, &pyError{runtimeError, fmt.Errorf("device='cuda' cannot be used: %s", msg)}
	}
	validations.Lock()
	first := !v.warned
	v.warned = true
	validations.Unlock()
	if first {
		warn.add("RuntimeWarning", msg+"; computing on the CPU for the rest of this process")
	}
	return false, nil
}

// validationCase is one kernel of the validation: its Gram matrix of the
// validation graphs on the CPU, and on the device in each precision, where it
// must agree within bound[precision].
type validationCase struct {
	name  string
	bound map[cuda.Precision]float64
	gpu   func(device int, prec cuda.Precision, out []float64) error
	cpu   func(out []float64) error
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
	// against the CPU's own 1e-9; shortest paths 1e-12 and 1e-5.
	mgkBound := map[cuda.Precision]float64{cuda.Float64: 1e-8, cuda.Float32: 1e-3}
	var cases []validationCase
	for _, m := range []struct {
		name string
		opt  mgk.Options
	}{{"table", table}, {"evaluated", evaluated}} {
		opt := m.opt
		cases = append(cases, validationCase{
			name: "marginalized kernel (" + m.name + " base kernels)", bound: mgkBound,
			gpu: func(device int, prec cuda.Precision, out []float64) error {
				_, err := cuda.MarginalizedGram(X, nil, nil, nil, true, opt, device, prec, out)
				return err
			},
			cpu: func(out []float64) error {
				_, err := mgk.Gram(X, nil, nil, nil, true, opt, out, nil)
				return err
			},
		})
	}
	cases = append(cases, validationCase{
		name: "shortest-path kernel", bound: map[cuda.Precision]float64{cuda.Float64: 1e-12, cuda.Float32: 1e-5},
		gpu: func(device int, prec cuda.Precision, out []float64) error {
			return cuda.ShortestPathGram(X, nil, true, sp, device, prec, cuda.SPHybrid{CPUWork: -1}, out, nil)
		},
		cpu: func(out []float64) error { return spkernel.Gram(X, nil, true, sp, out) },
	})
	return cases
}

// runValidation computes every case on device and on the CPU and returns the
// number of Gram matrices compared, or the first disagreement or error.
func runValidation(device int) (compared int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the validation panicked: %v", r)
		}
	}()
	X := validationGraphs()
	n := len(X)
	for _, c := range validationCases(X) {
		want := make([]float64, n*n)
		if err := c.cpu(want); err != nil {
			return compared, fmt.Errorf("%s failed on the CPU: %v", c.name, err)
		}
		for _, prec := range []cuda.Precision{cuda.Float64, cuda.Float32} {
			if err := compareDevice(c, prec, device, n, want); err != nil {
				return compared, err
			}
			compared++
		}
	}
	return compared, nil
}

// compareDevice computes case c on device in prec and compares it with the
// CPU's n×n want.
func compareDevice(c validationCase, prec cuda.Precision, device, n int, want []float64) error {
	name := c.name + ", float64"
	if prec == cuda.Float32 {
		name = c.name + ", float32"
	}
	got := make([]float64, len(want))
	if err := c.gpu(device, prec, got); err != nil {
		return fmt.Errorf("%s failed on the device: %v", name, err)
	}
	if validationSkew != 0 {
		for k := range got {
			got[k] *= 1 + validationSkew
		}
	}
	// The error measure of the GPU suite: |got − want| relative to
	// |want| + 1e-3·max|want|, so tiny entries are not judged alone.
	scale := 0.0
	for _, x := range want {
		scale = max(scale, math.Abs(x))
	}
	worst, at := 0.0, 0
	for k := range want {
		d := math.Abs(got[k]-want[k]) / (math.Abs(want[k]) + 1e-3*scale + 1e-300)
		if d > worst || math.IsNaN(d) {
			worst, at = d, k
			if math.IsNaN(d) {
				break
			}
		}
	}
	if !(worst <= c.bound[prec]) {
		return fmt.Errorf("%s: entry (%d, %d) is %.17g on the device and %.17g on the CPU, relative difference %.3g (allowed %.0e)",
			name, at/n, at%n, got[at], want[at], worst, c.bound[prec])
	}
	return nil
}

// deviceLost handles a device whose context a call has lost (a launch
// stopped by the driver's watchdog, cuda.ErrLaunchTimeout): the device is
// failed for the rest of the process, as after a failed validation, and the
// call goes on on the CPU with a warning (device="auto", cpu true) or raises
// err, which names the device and the pairs (device="cuda").
func deviceLost(d deviceParams, err error, warn *warnings) (cpu bool, _ error) {
	validations.Lock()
	validations.done[validationKey(d.DeviceIndex)] = &validation{State: "failed", Detail: err.Error(), warned: true}
	validations.Unlock()
	if d.Device == "cuda" {
		return false, &pyError{runtimeError, fmt.Errorf("device='cuda': %v; the device cannot be used again in this process: compute on the CPU with device='cpu'", err)}
	}
	warn.add("RuntimeWarning", fmt.Sprintf("%v; computing on the CPU, as every call of this process will", err))
	return true, nil
}
