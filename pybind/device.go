package pybind

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/graphgram/graphgram/cuda"
)

// deviceParams select where a kernel runs (docs/abi.md); they are embedded in
// every kernel's parameters.
type deviceParams struct {
	// Device is "cpu", "auto" (the GPU when the CUDA library and a device are
	// present, else the CPU, silently) or "cuda" (the GPU, or an error saying why not).
	Device string `json:"device"`
	// DeviceIndex is the CUDA device to use.
	DeviceIndex int `json:"device_index"`
	// CUDALibrary is the path of libggcuda.so shipped with the Python package, "" if none.
	CUDALibrary string `json:"cuda_library"`
	// Precision is the GPU arithmetic, "float64" (also when empty) or
	// "float32"; the CPU always computes in float64.
	Precision string `json:"precision"`
	// ValidateGPU false skips the device's self-validation (validate.go);
	// absent means true.
	ValidateGPU *bool `json:"validate_gpu"`
}

// precision returns the GPU arithmetic asked for.
func (d deviceParams) precision() (cuda.Precision, error) {
	switch d.Precision {
	case "", "float64":
		return cuda.Float64, nil
	case "float32":
		return cuda.Float32, nil
	}
	return 0, inputError("precision must be 'float64' or 'float32', got %q", d.Precision)
}

// gpu reports whether this call runs on the GPU: a usable device that has
// passed its self-validation (validate.go), whose fallback warning goes to
// warn.
func (d deviceParams) gpu(warn *warnings) (bool, error) {
	if _, err := d.precision(); err != nil {
		return false, err
	}
	switch d.Device {
	case "", "cpu":
		return false, nil
	case "auto", "cuda":
	default:
		return false, inputError("device must be 'auto', 'cpu' or 'cuda', got %q", d.Device)
	}
	if d.CUDALibrary != "" {
		cuda.SetLibraryPath(d.CUDALibrary)
	}
	err := cuda.Check(d.DeviceIndex)
	switch {
	case err == nil:
		return checkValidated(d, warn)
	case d.Device == "auto":
		return false, nil
	}
	return false, &pyError{runtimeError, fmt.Errorf("device='cuda' cannot be used: %w", err)}
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
	Validation *validation `json:"validation"`
}

// Devices reports, as a JSON object, whether this build has the CUDA backend,
// whether the library (at library, or the default lookup when "") loads and
// finds a usable device, why not, and the devices it sees.
func Devices(library string) (report string, err error) {
	defer guard(&err)
	if library != "" {
		cuda.SetLibraryPath(library)
	}
	r := deviceReport{Built: cuda.Built, Library: library, Devices: []deviceInfoJSON{}}
	devs, derr := cuda.Devices()
	if derr != nil {
		r.Reason = derr.Error()
	}
	r.Usable = derr == nil && len(devs) > 0
	for _, d := range devs {
		r.Devices = append(r.Devices, deviceInfoJSON{d.Index, d.Name, fmt.Sprintf("%d.%d", d.Major, d.Minor), d.Memory, d.MultiProcessors, validationOf(d.Index)})
	}
	b, err := json.Marshal(r)
	return string(b), err
}
