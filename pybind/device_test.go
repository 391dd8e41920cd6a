package pybind

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/autodevice"
	"github.com/graphgram/graphgram/cuda/costmodel"
	"github.com/graphgram/graphgram/cuda/selfcheck"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// freshValidations gives the process a new registry of self-validations for
// the rest of the test, as at the start of a process, and restores the old
// one after it. Tests that call it do not run in parallel (they share the
// process's CUDA library too).
func freshValidations(t *testing.T) {
	old, oldAuto := validations, autoRates
	validations, autoRates = selfcheck.NewRegistry(), autodevice.NewRegistry()
	t.Cleanup(func() { validations, autoRates = old, oldAuto; lastAuto.Clear() })
}

// plantDevice plants the cost-model rates of device 0 of lib, every kind and
// precision: a device far faster than the CPU (fast), or far slower, so that
// device="auto" takes or leaves the emulated library whatever its speed.
func plantDevice(lib *cuda.Library, fast bool) {
	rates := costmodel.Rates{CPU: 1e-6, CPULarge: 1e-6, GPU: 1e-12, GPULarge: 1e-12, GPUCall: 0, SmallPair: math.Inf(1), Source: "planted fast device"}
	if !fast {
		rates.GPU, rates.GPULarge, rates.GPUCall, rates.Source = 1, 1, 1, "planted slow device"
	}
	for _, k := range costmodel.Kinds {
		for _, p := range []cuda.Precision{cuda.Float64, cuda.Float32} {
			autoRates.Plant(lib, 0, k, p, rates)
		}
	}
}

// openEmulated opens the emulated CUDA library of $GGCUDA_TEST_LIB, or
// skips; it returns the library and its path.
func openEmulated(t *testing.T) (*cuda.Library, string) {
	t.Helper()
	path := os.Getenv("GGCUDA_TEST_LIB")
	if path == "" {
		t.Skip("GGCUDA_TEST_LIB not set: no emulated CUDA library to test the GPU path with")
	}
	lib, err := cuda.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return lib, path
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

// device0 returns what Devices reports of device 0.
func device0(t *testing.T, lib string) deviceInfoJSON {
	t.Helper()
	js, err := Devices(lib)
	if err != nil {
		t.Fatal(err)
	}
	var r deviceReport
	if err := json.Unmarshal([]byte(js), &r); err != nil || len(r.Devices) == 0 {
		t.Fatalf("%v: %s", err, js)
	}
	return r.Devices[0]
}

// deviceValidation returns the validation Devices reports for device 0.
func deviceValidation(t *testing.T, lib string) *selfcheck.Outcome {
	t.Helper()
	return device0(t, lib).Validation
}

// TestDeviceValidationEmulated runs the self-validation on the emulated CUDA
// library (GGCUDA_TEST_LIB): it passes on the first GPU call and Devices
// reports it; with a failed outcome (recorded as a validation with a planted
// wrong device result gives it: cuda/selfcheck's TestValidateEmulated),
// device="auto" computes on the CPU with one warning saying what disagreed,
// device="cuda" refuses, and validate_gpu=false uses the device regardless.
func TestDeviceValidationEmulated(t *testing.T) {
	handle, lib := openEmulated(t)
	x := testBatch(7)
	cpu, _, err := computeGram(t, x, "cpu", "", "")
	if err != nil {
		t.Fatal(err)
	}

	freshValidations(t)
	if v := deviceValidation(t, lib); v != nil {
		t.Fatalf("validation reported before any GPU call: %+v", v)
	}
	if _, warn, err := computeGram(t, x, "auto", lib, ""); err != nil || warn != "" {
		t.Fatalf("auto: %v %q", err, warn)
	}
	v := deviceValidation(t, lib)
	if v == nil || v.State != selfcheck.Passed || v.Seconds <= 0 {
		t.Fatalf("after a GPU call: validation %+v", v)
	}
	t.Logf("validation on the emulated library: %s in %.3f s", v.Detail, v.Seconds)

	freshValidations(t)
	validations.Record(handle, 0, selfcheck.Outcome{State: selfcheck.Failed, Detail: "marginalized kernel (table base kernels), float64: " +
		"entry (3, 3) is 350.26516159906981 on the device and 350.26481133416462 on the CPU, relative difference 9.99e-07 (allowed 1e-08)"})
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
	if v := deviceValidation(t, lib); v == nil || v.State != selfcheck.Failed || !strings.Contains(v.Detail, "relative difference") {
		t.Errorf("Devices after the failure: %+v", v)
	}
	off, warn, err := computeGram(t, x, "cuda", lib, `"validate_gpu": false`)
	if err != nil || warn != "" {
		t.Fatalf("validate_gpu false: %v %q", err, warn)
	}
	for k := range cpu {
		if math.Abs(off[k]-cpu[k]) > accuracy.MGK64*math.Abs(cpu[k]) {
			t.Fatalf("validate_gpu false: entry %d GPU %v, CPU %v", k, off[k], cpu[k])
		}
	}
}

// emulatedWithTimeouts opens the emulated library (GGCUDA_TEST_LIB, or
// skips), whose planted launch timeouts are off again after the test, and
// returns it and its path with a batch of 7 graphs and their CPU Gram
// matrix.
func emulatedWithTimeouts(t *testing.T) (*cuda.Library, string, *packed, []float64) {
	t.Helper()
	handle, lib := openEmulated(t)
	t.Cleanup(func() { handle.EmulatedLaunchTimeout(0) })
	x := testBatch(7)
	cpu, _, err := computeGram(t, x, "cpu", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return handle, lib, x, cpu
}

// TestDeviceLaunchTimeoutEmulated: a launch stopped by the watchdog (the
// emulated library's planted cudaErrorLaunchTimeout) makes device="auto"
// compute the call on the CPU with one warning naming the device and the
// pairs, and every later call too (the device is marked lost, as Devices
// reports); device="cuda" raises the same text.
func TestDeviceLaunchTimeoutEmulated(t *testing.T) {
	handle, lib, x, cpu := emulatedWithTimeouts(t)
	for _, device := range []string{"auto", "cuda"} {
		freshValidations(t)
		plantDevice(handle, true) // auto computes on the device: the timeout reaches it
		// The first call validates the device.
		if _, warn, err := computeGram(t, x, device, lib, ""); err != nil || warn != "" {
			t.Fatalf("%s before the timeout: %v %q", device, err, warn)
		}
		if err := handle.EmulatedLaunchTimeout(1); err != nil {
			t.Fatal(err)
		}
		got, warn, err := computeGram(t, x, device, lib, "")
		handle.EmulatedLaunchTimeout(0)
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
		if v := deviceValidation(t, lib); v == nil || v.State != selfcheck.Failed || !strings.Contains(v.Detail, "cudaErrorLaunchTimeout") {
			t.Errorf("Devices after the timeout: %+v", v)
		}
	}
}

// TestCheckValidatedTranslation: checkValidated's translation of a recorded
// failed outcome, without a device: device="auto" falls back to the CPU with
// one RuntimeWarning for the process, device="cuda" raises the same message,
// validate_gpu=false uses the device regardless.
func TestCheckValidatedTranslation(t *testing.T) {
	freshValidations(t)
	var lib *cuda.Library // none: the outcome is recorded
	validations.Record(lib, 0, selfcheck.Outcome{State: selfcheck.Failed, Detail: "shortest-path kernel, float32 failed on the device: boom"})
	var warn warnings
	for i := range 2 {
		ok, err := checkValidated(lib, deviceParams{Device: "auto"}, &warn)
		if ok || err != nil {
			t.Fatalf("auto, call %d: %v %v", i, ok, err)
		}
	}
	w := warn.String()
	if strings.Count(w, "RuntimeWarning: ") != 1 || !strings.Contains(w, "CUDA device 0 failed graphgram's self-validation against the CPU: "+
		"shortest-path kernel, float32 failed on the device: boom. Please report this") ||
		!strings.HasSuffix(strings.TrimSpace(w), "computing on the CPU for the rest of this process") {
		t.Errorf("auto: warnings %q (want one)", w)
	}
	ok, err := checkValidated(lib, deviceParams{Device: "cuda"}, &warn)
	if ok || err == nil || !strings.Contains(err.Error(), "device='cuda' cannot be used: CUDA device 0 failed graphgram's self-validation") {
		t.Errorf("cuda: %v %v", ok, err)
	}
	off := false
	if ok, err := checkValidated(lib, deviceParams{Device: "cuda", ValidateGPU: &off}, &warn); !ok || err != nil {
		t.Errorf("validate_gpu false: %v %v", ok, err)
	}
}

// TestDeviceParams: the one parser of the device and precision parameters,
// given Python reprs.
func TestDeviceParams(t *testing.T) {
	for _, c := range []struct {
		device, precision, want, err string
	}{
		{"'auto'", "'float64'", `{"device":"auto","device_index":0,"precision":"float64"}`, ""},
		{"'cpu'", "'float32'", `{"device":"cpu","device_index":0,"precision":"float32"}`, ""},
		{"'cuda'", "'float64'", `{"device":"cuda","device_index":0,"precision":"float64"}`, ""},
		{"'cuda:12'", "'float32'", `{"device":"cuda","device_index":12,"precision":"float32"}`, ""},
		{"'gpu'", "'float64'", "", "ValueError: device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got 'gpu'"},
		{"'cuda:x'", "'float64'", "", "got 'cuda:x'"},
		{"'cuda:'", "'float64'", "", "got 'cuda:'"},
		{"'cpu:0'", "'float64'", "", "got 'cpu:0'"},
		{"'cuda:-1'", "'float64'", "", "got 'cuda:-1'"},
		{"'cuda:99999999999999999999'", "'float64'", "", "got 'cuda:99999999999999999999'"},
		{"1", "'float64'", "", "got 1"},
		{"None", "'float64'", "", "got None"},
		{`"'auto'"`, "'float64'", "", "device must be"},
		{"'auto'", "'float16'", "", "ValueError: precision must be 'float64' or 'float32', got 'float16'"},
		{"'auto'", "<class 'numpy.float32'>", "", "got <class 'numpy.float32'>"},
		{"'auto'", "''", "", "precision must be"},
	} {
		got, err := DeviceParams(c.device, c.precision)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("DeviceParams(%s, %s) = %s, %v; want %s", c.device, c.precision, got, err, c.want)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("DeviceParams(%s, %s): error %v, want one containing %q", c.device, c.precision, err, c.err)
		}
	}
}

// autoReport returns what Devices says of device 0's device="auto": the
// summary per kind and precision and the latest decision.
func autoReport(t *testing.T, lib string) (map[string]string, string) {
	t.Helper()
	d := device0(t, lib)
	return d.Auto, d.LastAuto
}

// TestDeviceAutoEmulated: device="auto" on the emulated CUDA library
// (GGCUDA_TEST_LIB) decides per call by the cost model. Unplanted, the
// process times its sample on the emulated device (host threads: far slower
// than the CPU backend) and keeps the call on the CPU, bit for bit the
// CPU's values, silently; with a planted fast device the same call computes
// on the device (the float64 contract against the CPU; a planted launch
// timeout then shows that the device is used); with a planted slow one it
// stays on the CPU, the planted timeout unseen. Devices says what auto does
// and why each time. (The device's values are compared within the bound,
// not bit for bit: the emulated solver's sums depend on the order its host
// threads run in.)
func TestDeviceAutoEmulated(t *testing.T) {
	handle, lib, x, cpu := emulatedWithTimeouts(t)
	for _, tc := range []struct {
		name  string
		plant func()
		gpu   bool
		rates string
	}{
		{"sampled emulated device", func() {}, false, "sample timed in this process"},
		{"planted fast device", func() { plantDevice(handle, true) }, true, "planted fast device"},
		{"planted slow device", func() { plantDevice(handle, false) }, false, "planted slow device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			freshValidations(t)
			tc.plant()
			got, warn, err := computeGram(t, x, "auto", lib, "")
			if err != nil || warn != "" {
				t.Fatalf("auto: %v %q", err, warn)
			}
			where := "the CPU: predicted"
			if tc.gpu {
				where = "the GPU: predicted"
			}
			for k := range got {
				if tc.gpu && math.Abs(got[k]-cpu[k]) > accuracy.MGK64*math.Abs(cpu[k]) || !tc.gpu && got[k] != cpu[k] {
					t.Fatalf("entry %d is %v, the CPU's %v (want %s)", k, got[k], cpu[k], where)
				}
			}
			auto, last := autoReport(t, lib)
			if !strings.HasPrefix(last, "marginalized, float64 precision, 28 pairs: "+where) || !strings.Contains(last, tc.rates) {
				t.Errorf("last_auto %q, want the decision (%s) and its rates (%s)", last, where, tc.rates)
			}
			if s := auto["marginalized float64"]; !strings.Contains(s, tc.rates) {
				t.Errorf("auto[marginalized float64] = %q lacks %q", s, tc.rates)
			}
			if len(auto) != 2*len(costmodel.Kinds) {
				t.Errorf("auto reports %d kinds and precisions: %v", len(auto), auto)
			}
			// The next launch of the device times out: seen only by a call
			// that uses the device.
			if err := handle.EmulatedLaunchTimeout(1); err != nil {
				t.Fatal(err)
			}
			_, warn, err = computeGram(t, x, "auto", lib, "")
			handle.EmulatedLaunchTimeout(0)
			if err != nil || strings.Contains(warn, "watchdog") != tc.gpu {
				t.Errorf("with a planted launch timeout: %v, warning %q (device used: want %v)", err, warn, tc.gpu)
			}
		})
	}
}

// TestDeviceAutoWithoutDevicePath: device="auto" leaves a call that has no
// device code path (a kernel or mode the GPU backend does not implement) on
// the CPU without looking for a device: no library is loaded, no validation
// runs, nothing is said.
func TestDeviceAutoWithoutDevicePath(t *testing.T) {
	freshValidations(t)
	p := deviceParams{Device: "auto", CUDALibrary: "/nonexistent/libggcuda.so"}
	var warn warnings
	if gpu, err := p.gpu(&warn, nil, 0); gpu != nil || err != nil || warn.String() != "" {
		t.Errorf("auto without a device path: %v, %v, %q", gpu, err, warn.String())
	}
	if _, ok := validations.Lookup(nil, 0); ok {
		t.Error("a validation ran")
	}
}

// TestDevicePerCallLibraryEmulated: each call uses the CUDA library its
// parameters name, in either order within one process: the emulated library
// (GGCUDA_TEST_LIB) computes on its device, a nonexistent path makes
// device="cuda" raise naming that path and device="auto" compute on the CPU
// silently, and Devices and ReleaseGPUMemory report on the library they are
// given, before and after the other one is used.
func TestDevicePerCallLibraryEmulated(t *testing.T) {
	_, emu := openEmulated(t)
	missing := filepath.Join(t.TempDir(), "absent", "libggcuda.so")
	x := testBatch(5)
	cpu, _, err := computeGram(t, x, "cpu", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range []struct {
		name  string
		paths []string
	}{
		{"emulated first", []string{emu, missing, emu}},
		{"missing first", []string{missing, emu, missing}},
	} {
		t.Run(order.name, func(t *testing.T) {
			freshValidations(t)
			for i, p := range order.paths {
				// validate_gpu false: this test is about which library, not
				// the validation (TestDeviceValidationEmulated).
				got, warn, err := computeGram(t, x, "cuda", p, `"validate_gpu": false`)
				if p == emu {
					if err != nil || warn != "" {
						t.Fatalf("call %d, cuda, emulated: %v %q", i, err, warn)
					}
					for k := range cpu {
						if math.Abs(got[k]-cpu[k]) > accuracy.MGK64*math.Abs(cpu[k]) {
							t.Fatalf("call %d, cuda, emulated: entry %d is %v, the CPU's %v", i, k, got[k], cpu[k])
						}
					}
				} else if err == nil || !strings.Contains(err.Error(), "device='cuda' cannot be used") || !strings.Contains(err.Error(), missing) {
					t.Errorf("call %d, cuda, missing: error %v, want one naming %s", i, err, missing)
				}
				if p == missing {
					got, warn, err := computeGram(t, x, "auto", p, "")
					if err != nil || warn != "" || !slices.Equal(got, cpu) {
						t.Errorf("call %d, auto, missing: %v %q; want the CPU's values, silently", i, err, warn)
					}
				}
				js, err := Devices(p)
				if err != nil {
					t.Fatal(err)
				}
				var r deviceReport
				if err := json.Unmarshal([]byte(js), &r); err != nil {
					t.Fatal(err)
				}
				if p == emu && (!r.Usable || r.Library != p || len(r.Devices) != 1) ||
					p == missing && (r.Usable || r.Library != p || len(r.Devices) != 0 || !strings.Contains(r.Reason, missing)) {
					t.Errorf("call %d: Devices(%q) = %s", i, p, js)
				}
				if freed, err := ReleaseGPUMemory(p); err != nil || p == missing && freed != 0 {
					t.Errorf("call %d: ReleaseGPUMemory(%q) = %d, %v", i, p, freed, err)
				}
			}
		})
	}
}

// TestDeviceStatePerLibraryEmulated: what the process keeps per device (its
// self-validation, device="auto"'s rates and latest decision) is kept per
// library: device 0 of a copy of the emulated library, recorded as failed
// and never sampled, leaves device 0 of the original validated and planted
// fast, and the other way round.
func TestDeviceStatePerLibraryEmulated(t *testing.T) {
	orig, emu := openEmulated(t)
	cp := filepath.Join(t.TempDir(), "copy", "libggcuda.so")
	if err := os.MkdirAll(filepath.Dir(cp), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(emu)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	other, err := cuda.Open(cp)
	if err != nil {
		t.Fatal(err)
	}
	if other == orig {
		t.Fatal("the copy opened as the original")
	}
	x := testBatch(7)
	freshValidations(t)
	plantDevice(orig, true)
	validations.Record(other, 0, selfcheck.Outcome{State: selfcheck.Failed, Detail: "planted on the copy"})
	if _, warn, err := computeGram(t, x, "auto", emu, ""); err != nil || warn != "" {
		t.Fatalf("auto, original: %v %q", err, warn)
	}
	if _, _, err := computeGram(t, x, "cuda", cp, ""); err == nil || !strings.Contains(err.Error(), "planted on the copy") {
		t.Errorf("cuda, copy: %v; want its recorded failure", err)
	}
	d, c := device0(t, emu), device0(t, cp)
	if d.Validation == nil || d.Validation.State != selfcheck.Passed {
		t.Errorf("original: validation %+v, want passed", d.Validation)
	}
	if c.Validation == nil || c.Validation.State != selfcheck.Failed || c.Validation.Detail != "planted on the copy" {
		t.Errorf("copy: validation %+v, want the planted failure", c.Validation)
	}
	if !strings.Contains(d.LastAuto, "the GPU: predicted") || !strings.Contains(d.Auto["marginalized float64"], "planted fast device") {
		t.Errorf("original: last_auto %q, auto %q; want the planted fast device's decision", d.LastAuto, d.Auto["marginalized float64"])
	}
	if c.LastAuto != "" || strings.Contains(c.Auto["marginalized float64"], "planted") {
		t.Errorf("copy: last_auto %q, auto %q; want none of the original's", c.LastAuto, c.Auto["marginalized float64"])
	}
}
