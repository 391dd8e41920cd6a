// Package selfcheck is the CUDA backend's self-validation on first use: no
// line of the backend is trusted before it has agreed with the CPU on the
// device at hand. The first Validate of a process for a device computes a
// small fixed set of Gram matrices there and on the CPU (cases.go: the
// marginalized kernel with table and evaluated base kernels on graphs with
// dense and with sparse tiles and the shortest-path kernel, each in float64
// and float32; the explicit-feature Gram of WL and edge-histogram features in
// both semirings, exact) and compares them within the accuracy contract of
// each (package internal/accuracy's measure). The Outcome, Passed or Failed
// with what disagreed and by how much, is kept per CUDA library (the
// cuda.Library the validation ran on) and device for the life of the Registry
// (pybind holds one for the process).
//
// What a failure means to a caller (fall back to the CPU with a warning,
// refuse device='cuda') is the caller's: see pybind/device.go. The package
// builds with and without the cuda build tag: without it every device call
// returns cuda.ErrNotBuilt, so a validation fails saying so.
package selfcheck

import (
	"encoding"
	"fmt"
	"sync"
	"time"

	"github.com/graphgram/graphgram/cuda"
)

// State is whether a device passed its self-validation.
type State int

const (
	// Passed: every Gram matrix agreed with the CPU's.
	Passed State = iota + 1
	// Failed: a Gram matrix disagreed, or the device failed to compute one,
	// or the device was lost later in the process (Registry.Record).
	Failed
)

// String is "passed" or "failed" (the JSON form).
func (s State) String() string {
	switch s {
	case Passed:
		return "passed"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// MarshalText writes "passed" or "failed"; any other State is an error.
func (s State) MarshalText() ([]byte, error) {
	if s != Passed && s != Failed {
		return nil, fmt.Errorf("selfcheck: invalid state %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads "passed" or "failed".
func (s *State) UnmarshalText(b []byte) error {
	switch string(b) {
	case "passed":
		*s = Passed
	case "failed":
		*s = Failed
	default:
		return fmt.Errorf("selfcheck: state must be \"passed\" or \"failed\", got %q", b)
	}
	return nil
}

// Outcome is one device's self-validation. Its JSON form,
// {"state": "passed"|"failed", "detail": ..., "seconds": ...}, is what
// graphgram.devices() shows as a device's "validation".
type Outcome struct {
	State State `json:"state"`
	// Detail says what was compared (Passed: "N Gram matrices agreed with
	// the CPU") or what went wrong (Failed).
	Detail string `json:"detail"`
	// Seconds is the validation's wall time (0 for a recorded outcome).
	Seconds float64 `json:"seconds"`
}

// State marshals as text, so Outcome marshals as the JSON above.
var _ encoding.TextMarshaler = Passed

// Registry holds the outcomes per CUDA library and device index: device 0 of
// one library is not device 0 of another (two builds of libggcuda.so in one
// process), and each is validated on its own. The zero value is not usable:
// NewRegistry makes one. Its methods may be called from any goroutine;
// validations run one at a time.
type Registry struct {
	mu   sync.Mutex
	done map[key]*entry
	// skew, when not 0, scales every device result of a validation by
	// 1 + skew before the comparison: this package's tests plant a wrong
	// device result with it.
	skew float64
}

// entry is a recorded outcome and whether it has been announced.
type entry struct {
	Outcome
	announced bool
}

// NewRegistry returns an empty registry: every device is validated on its
// first Validate.
func NewRegistry() *Registry {
	return &Registry{done: map[key]*entry{}}
}

// key is a device of a library: cuda.Open gives one *cuda.Library a library
// file and process, so the pointer names the library.
type key struct {
	lib    *cuda.Library
	device int
}

// Validate returns the outcome of device of the library lib, running the
// validation there on the first call for them. The caller has checked that
// the device is usable (lib.Check); if it is not, the outcome is Failed
// with the device's error.
func (r *Registry) Validate(lib *cuda.Library, device int) Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := key{lib, device}
	if e, ok := r.done[k]; ok {
		return e.Outcome
	}
	t := time.Now()
	o := Outcome{State: Passed}
	if compared, err := run(lib, device, r.skew); err != nil {
		o.State, o.Detail = Failed, err.Error()
	} else {
		o.Detail = fmt.Sprintf("%d Gram matrices agreed with the CPU", compared)
	}
	o.Seconds = time.Since(t).Seconds()
	r.done[k] = &entry{Outcome: o}
	return o
}

// Lookup returns the outcome of device of lib without running the
// validation; false when none has been run or recorded.
func (r *Registry) Lookup(lib *cuda.Library, device int) (Outcome, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.done[key{lib, device}]
	if !ok {
		return Outcome{}, false
	}
	return e.Outcome, true
}

// Record sets the outcome of device of lib for the rest of the registry's
// life, as if its validation had given it: a device whose context a call has
// lost (a launch stopped by the watchdog, cuda.ErrLaunchTimeout) is recorded
// Failed with the error. The outcome is not yet announced.
func (r *Registry) Record(lib *cuda.Library, device int, o Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done[key{lib, device}] = &entry{Outcome: o}
}

// Announce reports whether the Failed outcome of device of lib is yet to be
// announced, and marks it announced: true once per failure recorded or
// validated, false for a Passed or absent outcome. Callers say what a
// failure means (a warning) only when it returns true.
func (r *Registry) Announce(lib *cuda.Library, device int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.done[key{lib, device}]
	if !ok || e.State != Failed || e.announced {
		return false
	}
	e.announced = true
	return true
}
