package pybind

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/autodevice"
	"github.com/graphgram/graphgram/cuda/costmodel"
	"github.com/graphgram/graphgram/cuda/selfcheck"
)

// validations are the process's device self-validations (package
// cuda/selfcheck): each device is checked against the CPU on the first call
// that would compute on it. This file translates an outcome into what a call
// does: use the device, or fall back to the CPU with one RuntimeWarning
// (device="auto"), or raise (device="cuda").
var validations = selfcheck.NewRegistry()

// autoRates are the process's cost-model rates (package cuda/autodevice):
// where device="auto" computes a call that a validated device could take.
var autoRates = autodevice.NewRegistry()

// lastAuto is the reason of the latest device="auto" decision per library
// and device, which Devices reports.
var lastAuto sync.Map // libraryDevice → string

// libraryDevice is a device of a CUDA library: the key of the process's
// per-device state (validations, autoRates and lastAuto keep theirs per
// library and device), so that the devices of two libraries never share it.
type libraryDevice struct {
	lib    *cuda.Library
	device int
}

// deviceParams select where a kernel runs (docs/abi.md); they are embedded in
// every kernel's parameters.
type deviceParams struct {
	// Device is "cpu", "auto" (the GPU when the CUDA library and a validated
	// device are present and the cost model expects the call to be faster
	// there, else the CPU, silently) or "cuda" (the GPU, or an error saying
	// why not).
	Device string `json:"device"`
	// DeviceIndex is the CUDA device to use.
	DeviceIndex int `json:"device_index"`
	// CUDALibrary is the path of the CUDA library this call uses (Python's
	// cuda_library(): $GRAPHGRAM_CUDA_LIB, else the libggcuda.so shipped
	// with the package), "" for the default lookup (cuda.Open). Each call
	// uses the library it names, whatever earlier calls named.
	CUDALibrary string `json:"cuda_library"`
	// Precision is the GPU arithmetic, "float64" (also when empty) or
	// "float32"; the CPU always computes in float64.
	Precision string `json:"precision"`
	// ValidateGPU false skips the device's self-validation (package
	// cuda/selfcheck); absent means true.
	ValidateGPU *bool `json:"validate_gpu"`
}

// The rules of a kernel's device and precision parameters, stated once: Python
// asks DeviceParams before packing a call, and every call's deviceParams are
// checked against the same rules.
const (
	deviceRule    = "device must be 'auto', 'cpu', 'cuda' or 'cuda:N'"
	precisionRule = "precision must be 'float64' or 'float32'"
)

// DeviceParams parses a kernel's device ("auto", "cpu", "cuda" or "cuda:N")
// and precision ("float64" or "float32"), each given as its Python repr (so
// that a message shows what the user wrote, strings or not), and returns the
// JSON of the device, device_index and precision fields of deviceParams
// (docs/abi.md), or a ValueError stating the rule.
func DeviceParams(deviceRepr, precisionRepr string) (params string, err error) {
	defer guard(&err)
	var d deviceParams
	device, ok := pyString(deviceRepr)
	kind, index, found := strings.Cut(device, ":")
	switch {
	case ok && !found && (kind == "auto" || kind == "cpu" || kind == "cuda"):
		d.Device = kind
	case ok && found && kind == "cuda" && index != "" && strings.Trim(index, "0123456789") == "":
		n, err := strconv.Atoi(index)
		if err != nil {
			return "", inputError("%s, got %s", deviceRule, deviceRepr)
		}
		d.Device, d.DeviceIndex = kind, n
	default:
		return "", inputError("%s, got %s", deviceRule, deviceRepr)
	}
	if d.Precision, ok = pyString(precisionRepr); !ok || (d.Precision != "float64" && d.Precision != "float32") {
		return "", inputError("%s, got %s", precisionRule, precisionRepr)
	}
	b, err := json.Marshal(map[string]any{"device": d.Device, "device_index": d.DeviceIndex, "precision": d.Precision})
	return string(b), err
}

// pyString returns the string a Python repr of a plain string spells ('…'
// without quotes or escapes inside), and whether it was one.
func pyString(repr string) (string, bool) {
	if len(repr) < 2 || repr[0] != '\'' || repr[len(repr)-1] != '\'' {
		return "", false
	}
	s := repr[1 : len(repr)-1]
	return s, !strings.ContainsAny(s, "'\"\\")
}

// precision returns the GPU arithmetic asked for.
func (d deviceParams) precision() (cuda.Precision, error) {
	switch d.Precision {
	case "", "float64":
		return cuda.Float64, nil
	case "float32":
		return cuda.Float32, nil
	}
	return 0, inputError("%s, got %q", precisionRule, d.Precision)
}

// gpu returns the CUDA library this call computes with (the one d names),
// or nil when it runs on the CPU. A call runs on the GPU on a usable device
// that has passed its self-validation (checkValidated), whose fallback
// warning goes to warn, and for device="auto" is expected to be faster than
// the CPU's jobs workers (≤ 0: all cores) on the call's work, which work
// returns (called only then). A nil work means the call has no device code
// path: "auto" is then the CPU without looking for a device, and "cuda" goes
// on, for the caller to say that the CPU computes it.
func (d deviceParams) gpu(warn *warnings, work func() costmodel.Workload, jobs int) (*cuda.Library, error) {
	prec, err := d.precision()
	if err != nil {
		return nil, err
	}
	switch d.Device {
	case "", "cpu":
		return nil, nil
	case "auto", "cuda":
		if d.DeviceIndex < 0 {
			return nil, inputError("%s, got device_index %d", deviceRule, d.DeviceIndex)
		}
	default:
		return nil, inputError("%s, got %q", deviceRule, d.Device)
	}
	if d.Device == "auto" && work == nil {
		return nil, nil
	}
	lib, err := cuda.Open(d.CUDALibrary)
	if err == nil {
		err = lib.Check(d.DeviceIndex)
	}
	switch {
	case err == nil:
		ok, err := checkValidated(lib, d, warn)
		if !ok || err != nil {
			return nil, err
		}
		if d.Device == "cuda" {
			return lib, nil
		}
		w := work()
		dec := autoRates.Decide(lib, d.DeviceIndex, w, prec, jobs)
		lastAuto.Store(libraryDevice{lib, d.DeviceIndex}, fmt.Sprintf("%v, %s precision, %.0f pairs: %s", w.Kind, d.precisionName(), w.Pairs, dec.Reason()))
		if !dec.GPU {
			return nil, nil
		}
		return lib, nil
	case d.Device == "auto":
		return nil, nil
	}
	return nil, &pyError{runtimeError, fmt.Errorf("device='cuda' cannot be used: %w", err)}
}

// precisionName is the precision as the user wrote it ("float64" when empty).
func (d deviceParams) precisionName() string {
	if d.Precision == "" {
		return "float64"
	}
	return d.Precision
}

// checkValidated applies the self-validation of the device of lib to a call
// that would run on it: whether it may (true), or the CPU computes it
// ("auto", false, with a warning on the first fallback of the process), or
// the error ("cuda"). deviceParams.ValidateGPU false skips it.
func checkValidated(lib *cuda.Library, d deviceParams, warn *warnings) (bool, error) {
	if d.ValidateGPU != nil && !*d.ValidateGPU {
		return true, nil
	}
	v := validations.Validate(lib, d.DeviceIndex)
	if v.State == selfcheck.Passed {
		return true, nil
	}
	msg := fmt.Sprintf("CUDA device %d failed graphgram's self-validation against the CPU: %s. "+
		"Please report this with the output of graphgram.devices(). To compute on the CPU, use device='cpu'; "+
		"to use the GPU regardless, graphgram.set_config(validate_gpu=False)", d.DeviceIndex, v.Detail)
	if d.Device == "cuda" {
		return false, &pyError{runtimeError, fmt.Errorf("device='cuda' cannot be used: %s", msg)}
	}
	if validations.Announce(lib, d.DeviceIndex) {
		warn.add("RuntimeWarning", msg+"; computing on the CPU for the rest of this process")
	}
	return false, nil
}

// deviceLost handles a device of lib whose context a call has lost (a launch
// stopped by the driver's watchdog, cuda.ErrLaunchTimeout): the device is
// failed for the rest of the process, as after a failed validation, and the
// call goes on on the CPU with a warning (device="auto", cpu true) or raises
// err, which names the device and the pairs (device="cuda").
func deviceLost(lib *cuda.Library, d deviceParams, err error, warn *warnings) (cpu bool, _ error) {
	validations.Record(lib, d.DeviceIndex, selfcheck.Outcome{State: selfcheck.Failed, Detail: err.Error()})
	validations.Announce(lib, d.DeviceIndex) // this call's warning or error is the announcement
	if d.Device == "cuda" {
		return false, &pyError{runtimeError, fmt.Errorf("device='cuda': %v; the device cannot be used again in this process: compute on the CPU with device='cpu'", err)}
	}
	warn.add("RuntimeWarning", fmt.Sprintf("%v; computing on the CPU, as every call of this process will", err))
	return true, nil
}

// onCPU tells whether a GPU call's error means: compute on the CPU instead.
// Base kernels outside the compiled-in set are computed on the CPU with a
// warning; any other error is returned as it is.
func onCPU(err error, warn *warnings) bool {
	if errors.Is(err, cuda.ErrUnsupported) {
		warn.add("RuntimeWarning", "computed on the CPU instead of the GPU: "+err.Error())
		return true
	}
	return false
}

// cpuOnly records that a mode has no GPU implementation.
func cpuOnly(mode string, warn *warnings) {
	warn.add("RuntimeWarning", fmt.Sprintf("%s is computed on the CPU: the GPU backend does not implement it", mode))
}

// deviceReport is what Devices returns, as JSON.
type deviceReport struct {
	Built   bool             `json:"built"`
	Library string           `json:"library"`
	Usable  bool             `json:"usable"`
	Reason  string           `json:"reason"`
	Devices []deviceInfoJSON `json:"devices"`
}

type deviceInfoJSON struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	ComputeCapability string `json:"compute_capability"`
	MemoryBytes       int64  `json:"memory_bytes"`
	Multiprocessors   int    `json:"multiprocessors"`
	// Validation is the device's self-validation in this process, nil
	// (JSON null) when it has not run.
	Validation *selfcheck.Outcome `json:"validation"`
	// Auto says, per kernel kind and precision ("marginalized float64"),
	// what device="auto" does with the rates in use, on all cores.
	Auto map[string]string `json:"auto"`
	// LastAuto is the latest device="auto" decision of the process on this
	// device and its reason; "" when none.
	LastAuto string `json:"last_auto"`
	// KeptBytes is the memory kept for the device's next calls: idle device
	// allocations and the pinned host staging buffer (cuda.CachedMemory).
	KeptBytes int64 `json:"kept_bytes"`
}

// Devices reports, as a JSON object, whether this build has the CUDA backend,
// whether the library (at library, or the default lookup when "") loads and
// finds a usable device, why not, and the devices it sees with what the
// process keeps for each (its validation, device="auto"'s rates and latest
// decision: those of this library's devices).
func Devices(library string) (report string, err error) {
	defer guard(&err)
	r := deviceReport{Built: cuda.Built, Library: library, Devices: []deviceInfoJSON{}}
	lib, derr := cuda.Open(library)
	var devs []cuda.Device
	if derr == nil {
		devs, derr = lib.Devices()
	}
	if derr != nil {
		r.Reason = derr.Error()
	}
	r.Usable = derr == nil && len(devs) > 0
	for _, d := range devs {
		var v *selfcheck.Outcome
		if o, ok := validations.Lookup(lib, d.Index); ok {
			v = &o
		}
		auto := map[string]string{}
		for _, k := range costmodel.Kinds {
			for _, p := range []cuda.Precision{cuda.Float64, cuda.Float32} {
				auto[fmt.Sprintf("%v float%d", k, p)] = autoRates.Summary(lib, d.Index, k, p, runtime.GOMAXPROCS(0))
			}
		}
		last, _ := lastAuto.Load(libraryDevice{lib, d.Index})
		lastS, _ := last.(string)
		db, pb, _ := lib.CachedMemory(d.Index)
		r.Devices = append(r.Devices, deviceInfoJSON{d.Index, d.Name, fmt.Sprintf("%d.%d", d.Major, d.Minor), d.Memory, d.MultiProcessors, v, auto, lastS, db + pb})
	}
	b, err := json.Marshal(r)
	return string(b), err
}

// ReleaseGPUMemory frees the memory kept for later calls on every device of
// the CUDA library (at library, or the default lookup when "") and returns
// how many bytes it freed: 0 without a usable device.
func ReleaseGPUMemory(library string) (freed int64, err error) {
	defer guard(&err)
	lib, derr := cuda.Open(library)
	if derr != nil {
		return 0, nil
	}
	devs, derr := lib.Devices()
	if derr != nil {
		return 0, nil
	}
	for _, d := range devs {
		db, pb, err := lib.ReleaseMemory(d.Index)
		if err != nil {
			return freed, err
		}
		freed += db + pb
	}
	return freed, nil
}
