package pybind

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/graphgram/graphgram/cuda"
)

// TestValidationCasesCPU checks the validation's fixed set without a device:
// its graphs are valid and the CPU computes every case to finite, nonzero
// Gram matrices; and without a usable device the validation fails saying so.
func TestValidationCasesCPU(t *testing.T) {
	gs := validationGraphs()
	n := len(gs)
	for _, c := range validationCases(gs) {
		out := make([]float64, n*n)
		if err := c.cpu(out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for k, x := range out {
			if !(x > 0) || math.IsInf(x, 0) {
				t.Fatalf("%s: entry %d is %v", c.name, k, x)
			}
		}
	}
	if cuda.Check(0) != nil {
		if _, err := runValidation(0); err == nil || !strings.Contains(err.Error(), "failed on the device") {
			t.Errorf("no usable device: validation error %v", err)
		}
	}
}

// computeGram runs the symmetric marginalized Gram matrix of x through
// Compute with mgkTestParams' kernels on device, plus extra JSON fields.
func computeGram(t *testing.T, x *packed, device, library, extra string) ([]float64, string, error) {
	t.Helper()
	params := fmt.Sprintf(mgkTestParams, device, library, "float64")
	if extra != "" {
		params = strings.TrimSuffix(strings.TrimSpace(params), "}") + ", " + extra + "}"
	}
	n := len(x.nodePtr) - 1
	out := make([]float64, n*n)
	warn, err := Compute("marginalized", "gram", params, uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), 0, 0,
		uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, 0, 0, 0, 0)
	return out, warn, err
}

// deviceValidation returns the validation Devices reports for device 0.
func deviceValidation(t *testing.T, lib string) *validation {
	t.Helper()
	js, err := Devices(lib)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Devices []struct {
			Validation *validation `json:"validation"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil || len(r.Devices) == 0 {
		t.Fatalf("%v: %s", err, js)
	}
	return r.Devices[0].Validation
}

// TestDeviceValidationEmulated runs the self-validation on the emulated CUDA
// library (GGCUDA_TEST_LIB): it passes on the first GPU call and Devices
// reports it; with a planted wrong device result (validationSkew) it fails,
// device="auto" computes on the CPU with one warning saying what disagreed,
// device="cuda" refuses, and validate_gpu=false uses the device regardless.
func TestDeviceValidationEmulated(t *testing.T) {
	lib := os.Getenv("GGCUDA_TEST_LIB")
	if lib == "" {
		t.Skip("GGCUDA_TEST_LIB not set: no emulated CUDA library to test the GPU path with")
	}
	defer resetValidations()
	x := testBatch(7)
	cpu, _, err := computeGram(t, x, "cpu", "", "")
	if err != nil {
		t.Fatal(err)
	}

	resetValidations()
	cuda.SetLibraryPath(lib)
	if v := deviceValidation(t, lib); v != nil {
		t.Fatalf("validation reported before any GPU call: %+v", v)
	}
	if _, warn, err := computeGram(t, x, "auto", lib, ""); err != nil || warn != "" {
		t.Fatalf("auto: %v %q", err, warn)
	}
	v := deviceValidation(t, lib)
	if v == nil || v.State != "passed" || v.Seconds <= 0 {
		t.Fatalf("after a GPU call: validation %+v", v)
	}
	t.Logf("validation on the emulated library: %s in %.3f s", v.Detail, v.Seconds)

	resetValidations()
	validationSkew = 1e-6
	defer func() { validationSkew = 0 }()
	got, warn, err := computeGram(t, x, "auto", lib, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RuntimeWarning: CUDA device 0 failed graphgram's self-validation",
		"marginalized kernel (table base kernels), float64", "relative difference 9.99e-07 (allowed 1e-08)",
		"device='cpu'", "validate_gpu=False", "computing on the CPU for the rest of this process"} {
		if !strings.Contains(warn, want) {
			t.Errorf("fallback warning lacks %q: %q", want, warn)
		}
	}
	for k := range cpu {
		if got[k] != cpu[k] {
			t.Fatalf("after the failed validation, entry %d is %v, the CPU's %v", k, got[k], cpu[k])
		}
	}
	if _, warn, err := computeGram(t, x, "auto", lib, ""); err != nil || warn != "" {
		t.Errorf("second call after the failure: %v, warning %q (want none: one warning per process)", err, warn)
	}
	if _, _, err := computeGram(t, x, "cuda", lib, ""); err == nil || !strings.Contains(err.Error(), "failed graphgram's self-validation") {
		t.Errorf("device='cuda' after the failure: %v", err)
	}
	if v := deviceValidation(t, lib); v == nil || v.State != "failed" || !strings.Contains(v.Detail, "relative difference") {
		t.Errorf("Devices after the failure: %+v", v)
	}
	off, warn, err := computeGram(t, x, "cuda", lib, `"validate_gpu": false`)
	if err != nil || warn != "" {
		t.Fatalf("validate_gpu false: %v %q", err, warn)
	}
	for k := range cpu {
		if math.Abs(off[k]-cpu[k]) > 1e-9*math.Abs(cpu[k]) {
			t.Fatalf("validate_gpu false: entry %d GPU %v, CPU %v", k, off[k], cpu[k])
		}
	}
}

// TestDeviceLaunchTimeoutEmulated: a launch stopped by the watchdog (the
// emulated library's planted cudaErrorLaunchTimeout) makes device="auto"
// compute the call on the CPU with one warning naming the device and the
// pairs, and every later call too (the device is marked lost, as Devices
// reports); device="cuda" raises the same text.
func TestDeviceLaunchTimeoutEmulated(t *testing.T) {
	lib := os.Getenv("GGCUDA_TEST_LIB")
	if lib == "" {
		t.Skip("GGCUDA_TEST_LIB not set: no emulated CUDA library to test the GPU path with")
	}
	cuda.SetLibraryPath(lib)
	defer resetValidations()
	defer cuda.EmulatedLaunchTimeout(0)
	x := testBatch(7)
	cpu, _, err := computeGram(t, x, "cpu", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, device := range []string{"auto", "cuda"} {
		resetValidations()
		if _, warn, err := computeGram(t, x, device, lib, ""); err != nil || warn != "" { // validates the device
			t.Fatalf("%s before the timeout: %v %q", device, err, warn)
		}
		if err := cuda.EmulatedLaunchTimeout(1); err != nil {
			t.Fatal(err)
		}
		got, warn, err := computeGram(t, x, device, lib, "")
		cuda.EmulatedLaunchTimeout(0)
		text := warn
		if device == "cuda" {
			if err == nil {
				t.Fatal("device='cuda': no error after the launch timed out")
			}
			text = err.Error()
		} else if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"device 0, pairs X[0:7] × Y[0:7]", "watchdog", "cudaErrorLaunchTimeout", "device='cpu'"} {
			if device == "auto" && want == "device='cpu'" {
				want = "computing on the CPU"
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s: %q lacks %q", device, text, want)
			}
		}
		if device == "cuda" {
			continue
		}
		for k := range cpu {
			if got[k] != cpu[k] {
				t.Fatalf("after the timeout, entry %d is %v, the CPU's %v", k, got[k], cpu[k])
			}
		}
		if _, warn, err := computeGram(t, x, "auto", lib, ""); err != nil || warn != "" {
			t.Errorf("the call after the timeout: %v, warning %q (want the CPU, silently)", err, warn)
		}
		if v := deviceValidation(t, lib); v == nil || v.State != "failed" || !strings.Contains(v.Detail, "cudaErrorLaunchTimeout") {
			t.Errorf("Devices after the timeout: %+v", v)
		}
	}
}
