package pybind

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// packed is a batch laid out as Python's _backend.pack lays it out.
type packed struct {
	nodePtr, edgePtr, edges []int64
	weights, nodeFeat       []float64
	desc                    []int64
}

// testBatch packs n small labeled graphs (one node-label column, no edge features).
func testBatch(n int) *packed {
	p := &packed{nodePtr: []int64{0}, edgePtr: []int64{0}}
	for g := 0; g < n; g++ {
		size := 2 + g%5
		for i := 0; i < size; i++ {
			p.nodeFeat = append(p.nodeFeat, float64((g+i)%3))
			if i > 0 {
				p.edges = append(p.edges, int64(i-1), int64(i))
				p.weights = append(p.weights, 1)
			}
		}
		p.edges = append(p.edges, 0, int64(size-1))
		p.weights = append(p.weights, 0.5)
		p.nodePtr = append(p.nodePtr, p.nodePtr[g]+int64(size))
		p.edgePtr = append(p.edgePtr, p.edgePtr[g]+int64(size))
	}
	addr := func(a []int64) int64 { return int64(uintptr(unsafe.Pointer(&a[0]))) }
	faddr := func(a []float64) int64 { return int64(uintptr(unsafe.Pointer(&a[0]))) }
	p.desc = []int64{abiVersion, int64(n),
		addr(p.nodePtr), int64(len(p.nodePtr)), addr(p.edgePtr), int64(len(p.edgePtr)),
		addr(p.edges), int64(len(p.edges)), faddr(p.weights), int64(len(p.weights)),
		faddr(p.nodeFeat), int64(len(p.nodeFeat)), 1, 0, 0, 0, 0, 0}
	return p
}

const mgkTestParams = `{"node_kernel": {"kind": "kronecker_delta", "h": 0.5, "col": 0, "index": 1},
	"edge_kernel": {"kind": "constant", "c": 1, "index": 2}, "q": 0.1, "q_index": 0, "n_params": 3,
	"device": "%s", "cuda_library": "%s", "precision": "%s"}`

// gram computes the symmetric marginalized Gram matrix of x through Compute.
func gram(t *testing.T, x *packed, device, library string) ([]float64, string, error) {
	return gramPrecision(t, x, device, library, "float64")
}

// gramPrecision is gram with the GPU arithmetic given.
func gramPrecision(t *testing.T, x *packed, device, library, precision string) ([]float64, string, error) {
	t.Helper()
	n := len(x.nodePtr) - 1
	out := make([]float64, n*n)
	warn, err := Compute("marginalized", "gram", fmt.Sprintf(mgkTestParams, device, library, precision),
		uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), 0, 0, uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, 0, 0, 0, 0)
	return out, warn, err
}

func TestDeviceSelection(t *testing.T) {
	x := testBatch(6)
	cpu, warn, err := gram(t, x, "cpu", "")
	if err != nil || warn != "" {
		t.Fatalf("cpu: %v %q", err, warn)
	}
	// Without a usable GPU (this build, or a library that does not load),
	// "auto" is the CPU, silently, whatever library earlier calls used: each
	// call uses the library it names.
	auto, warn, err := gram(t, x, "auto", "/nonexistent/libggcuda.so")
	if err != nil {
		t.Fatal(err)
	}
	for k := range cpu {
		if auto[k] != cpu[k] || warn != "" {
			t.Fatalf("auto differs from cpu at %d or warns %q", k, warn)
		}
	}
	_, _, err = gram(t, x, "cuda", "/nonexistent/libggcuda.so")
	if err == nil || !strings.HasPrefix(err.Error(), "RuntimeError: device='cuda' cannot be used: ") ||
		cuda.Built && !strings.Contains(err.Error(), "/nonexistent/libggcuda.so") {
		t.Errorf("device cuda without a GPU: error %v", err)
	}
	if _, _, err = gram(t, x, "tpu", ""); err == nil || !strings.HasPrefix(err.Error(), "ValueError: device must be") {
		t.Errorf("device tpu: error %v", err)
	}
	// The CPU computes in float64 whatever precision the GPU would use.
	if f32, warn, err := gramPrecision(t, x, "cpu", "", "float32"); err != nil || warn != "" {
		t.Errorf("precision float32 on the CPU: %v %q", err, warn)
	} else {
		for k := range cpu {
			if f32[k] != cpu[k] {
				t.Fatalf("precision float32 on the CPU: entry %d is %v, float64 %v", k, f32[k], cpu[k])
			}
		}
	}
	if _, _, err = gramPrecision(t, x, "cpu", "", "float16"); err == nil || !strings.HasPrefix(err.Error(), "ValueError: precision must be") {
		t.Errorf("precision float16: error %v", err)
	}
}

// TestDeviceEmulated runs the GPU path of Compute against the CUDA library
// built for host emulation (cuda/build.py --emulated; make test-cuda-host sets
// GGCUDA_TEST_LIB): the same kernels and C API, kernels on host threads.
func TestDeviceEmulated(t *testing.T) {
	lib := os.Getenv("GGCUDA_TEST_LIB")
	if lib == "" {
		t.Skip("GGCUDA_TEST_LIB not set: no emulated CUDA library to test the GPU path with")
	}
	x := testBatch(9)
	cpu, _, err := gram(t, x, "cpu", "")
	if err != nil {
		t.Fatal(err)
	}
	gpu, warn, err := gram(t, x, "cuda", lib)
	if err != nil {
		t.Fatal(err)
	}
	if warn != "" {
		t.Errorf("warnings %q", warn)
	}
	for k := range cpu {
		if math.Abs(gpu[k]-cpu[k]) > accuracy.MGK64*math.Abs(cpu[k]) {
			t.Fatalf("entry %d: GPU %v, CPU %v", k, gpu[k], cpu[k])
		}
	}
	// float32 on the GPU: within the bound cuda/README.md states (1e-4
	// relative, accuracy.MGK32), and really computed in single precision (not bit-equal).
	f32, warn, err := gramPrecision(t, x, "cuda", lib, "float32")
	if err != nil || warn != "" {
		t.Fatalf("float32: %v %q", err, warn)
	}
	differs := false
	for k := range cpu {
		if math.Abs(f32[k]-cpu[k]) > accuracy.MGK32*math.Abs(cpu[k]) {
			t.Fatalf("float32 entry %d: GPU %v, CPU %v", k, f32[k], cpu[k])
		}
		differs = differs || math.Abs(f32[k]-cpu[k]) > 1e-12*math.Abs(cpu[k])
	}
	if !differs {
		t.Error("float32 results equal float64's to 1e-12: single precision was not used")
	}
}

// gramGrad computes the symmetric marginalized Gram matrix of x and its
// gradient through Compute, with params (mgkTestParams' layout).
func gramGrad(t *testing.T, x *packed, params string) ([]float64, []float64, string, error) {
	t.Helper()
	n := len(x.nodePtr) - 1
	out, grad := make([]float64, n*n), make([]float64, n*n*3)
	warn, err := Compute("marginalized", "gram_grad", params, uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), 0, 0,
		uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, uintptr(unsafe.Pointer(&grad[0])), len(grad), 0, 0)
	return out, grad, warn, err
}

// scaledErrors returns accuracy.Err of each entry, scale the largest |want|:
// relative where want is large, absolute (to the scale) where a true value
// is near 0. NaN where got is.
func scaledErrors(got, want []float64) []float64 {
	scale := accuracy.Scale(want)
	e := make([]float64, len(want))
	for k := range want {
		e[k] = accuracy.Err(got[k], want[k], scale)
	}
	return e
}

// TestDeviceEmulatedGrad runs mode "gram_grad" on the GPU path (the emulated
// library) against the CPU path, with the gradient columns permuted from Go's
// order (q, node, edge) so that the mapping is checked too.
func TestDeviceEmulatedGrad(t *testing.T) {
	lib := os.Getenv("GGCUDA_TEST_LIB")
	if lib == "" {
		t.Skip("GGCUDA_TEST_LIB not set: no emulated CUDA library to test the GPU path with")
	}
	const params = `{"node_kernel": {"kind": "kronecker_delta", "h": 0.5, "col": 0, "index": 0},
	"edge_kernel": {"kind": "constant", "c": 0.8, "index": 1}, "q": 0.1, "q_index": 2, "n_params": 3,
	"device": "%s", "cuda_library": "%s"}`
	x := testBatch(9)
	cpuK, cpuG, _, err := gramGrad(t, x, fmt.Sprintf(params, "cpu", ""))
	if err != nil {
		t.Fatal(err)
	}
	gpuK, gpuG, warn, err := gramGrad(t, x, fmt.Sprintf(params, "cuda", lib))
	if err != nil {
		t.Fatal(err)
	}
	if warn != "" {
		t.Errorf("warnings %q", warn)
	}
	for k := range cpuK {
		if math.Abs(gpuK[k]-cpuK[k]) > accuracy.MGK64*math.Abs(cpuK[k]) {
			t.Fatalf("entry %d: GPU %v, CPU %v", k, gpuK[k], cpuK[k])
		}
	}
	worst := 0.0
	for k, e := range scaledErrors(gpuG, cpuG) {
		worst = max(worst, e)
		if e > accuracy.GradCheck64 {
			t.Errorf("gradient %d (entry %d, column %d): GPU %v, CPU %v", k, k/3, k%3, gpuG[k], cpuG[k])
		}
	}
	// The columns must differ from each other, or a wrong mapping would pass.
	if cpuG[0] == cpuG[1] || cpuG[1] == cpuG[2] || cpuG[0] == cpuG[2] {
		t.Fatalf("degenerate test: gradient columns %v", cpuG[:3])
	}
	t.Logf("worst gradient error %.2g", worst)
}

// TestDeviceEmulatedNodal runs mode "nodal" on the GPU path (the emulated
// library) against the CPU path.
func TestDeviceEmulatedNodal(t *testing.T) {
	lib := os.Getenv("GGCUDA_TEST_LIB")
	if lib == "" {
		t.Skip("GGCUDA_TEST_LIB not set: no emulated CUDA library to test the GPU path with")
	}
	x := testBatch(7)
	n := int(x.nodePtr[len(x.nodePtr)-1])
	nodal := func(device, library string) ([]float64, string) {
		out := make([]float64, n*n)
		for k := range out {
			out[k] = math.NaN()
		}
		warn, err := Compute("marginalized", "nodal", fmt.Sprintf(mgkTestParams, device, library, "float64"),
			uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), 0, 0, uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, 0, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return out, warn
	}
	cpu, _ := nodal("cpu", "")
	gpu, warn := nodal("cuda", lib)
	if warn != "" {
		t.Errorf("warnings %q", warn)
	}
	worst := 0.0
	for k, e := range scaledErrors(gpu, cpu) {
		if !(e <= accuracy.MGKCheck64) {
			t.Fatalf("nodal entry %d: GPU %v, CPU %v", k, gpu[k], cpu[k])
		}
		worst = max(worst, e)
	}
	t.Logf("worst nodal error %.2g", worst)
}

// explicitCompute runs the explicit-feature kernel in mode ("gram" or
// "diag") on x (and y when not nil) through Compute.
func explicitCompute(t *testing.T, mode, params string, x, y *packed) ([]float64, string) {
	t.Helper()
	nx, ny := len(x.nodePtr)-1, len(x.nodePtr)-1
	var dy uintptr
	var dyLen int
	if y != nil {
		ny, dy, dyLen = len(y.nodePtr)-1, uintptr(unsafe.Pointer(&y.desc[0])), len(y.desc)
	}
	n := nx * ny
	if mode == "diag" {
		n = nx
	}
	out := make([]float64, n)
	for k := range out {
		out[k] = math.NaN()
	}
	warn, err := Compute("explicit", mode, params, uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), dy, dyLen,
		uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out, warn
}

// TestDeviceEmulatedExplicit runs the explicit-feature kernels' GPU path (the
// emulated library) against the CPU path: mode "gram" equal entry for entry
// (both are exact) for the WL subtree and optimal-assignment kernels, the
// hash graph kernel (scaled by 1/T after the product) and the propagation
// kernel, symmetric and X ≠ Y,
// with no warning; modes "diag" and "features" stay on the CPU and say so.
func TestDeviceEmulatedExplicit(t *testing.T) {
	lib := os.Getenv("GGCUDA_TEST_LIB")
	if lib == "" {
		t.Skip("GGCUDA_TEST_LIB not set: no emulated CUDA library to test the GPU path with")
	}
	const wlParams = `{"features": "wl", "n_iter": 3, "node_label_col": 0, "edge_label_col": -1,
	"semiring": "%s", "n_jobs": 1, "device": "%s", "cuda_library": "%s"}`
	const hashParams = `{"features": "hash", "n_iter": 2, "node_label_col": -1, "edge_label_col": -1,
	"semiring": "%s", "n_jobs": 1, "device": "%s", "cuda_library": "%s",
	"hash": {"attr_col": 0, "attr_width": 1, "projections": [0.7, -1.3, 0.4], "offsets": [0.1, 0.5, 0.9],
	"hashes": 3, "per_hash": 1, "bin_width": 1.0}}`
	const propagationParams = `{"features": "propagation", "n_iter": 0, "node_label_col": 0, "edge_label_col": -1,
	"semiring": "%s", "n_jobs": 1, "device": "%s", "cuda_library": "%s",
	"propagation": {"t_max": 3, "w": 0.1, "labels": [0, 1, 2], "coef": [0.3, -1.2, 2.5, 1.1, 0.2, -0.7, -2, 0.9, 0.05],
	"offsets": [0.01, 0.05, 0.09], "sqrt": false, "unlabeled": -1, "clamp": false}}`
	x, y := testBatch(11), testBatch(6)
	for _, params := range []string{wlParams, hashParams, propagationParams} {
		for _, semiring := range []string{"product", "min"} {
			for _, other := range []*packed{nil, y} {
				cpu, _ := explicitCompute(t, "gram", fmt.Sprintf(params, semiring, "cpu", ""), x, other)
				gpu, warn := explicitCompute(t, "gram", fmt.Sprintf(params, semiring, "cuda", lib), x, other)
				if warn != "" {
					t.Errorf("gram on the GPU warned %q", warn)
				}
				for k := range cpu {
					if gpu[k] != cpu[k] {
						t.Fatalf("%s, semiring %s, X≠Y %v: entry %d: GPU %v, CPU %v", params[:20], semiring, other != nil, k, gpu[k], cpu[k])
					}
				}
			}
		}
	}
	// The hash kernel's 1/T is applied on the GPU path too: with T = 3 some
	// entries are not integers (and equal the CPU's above).
	h, _ := explicitCompute(t, "gram", fmt.Sprintf(hashParams, "product", "cuda", lib), x, nil)
	if !slices.ContainsFunc(h, func(v float64) bool { return v != math.Trunc(v) }) {
		t.Errorf("hash kernel entries are all integers: the 1/T scaling is not exercised (%v)", h[:4])
	}
	cpu, _ := explicitCompute(t, "diag", fmt.Sprintf(wlParams, "min", "cpu", ""), x, nil)
	gpu, warn := explicitCompute(t, "diag", fmt.Sprintf(wlParams, "min", "cuda", lib), x, nil)
	if !strings.Contains(warn, `mode "diag" of the explicit-feature kernels is computed on the CPU`) {
		t.Errorf("diag with device cuda: warning %q", warn)
	}
	for k := range cpu {
		if gpu[k] != cpu[k] {
			t.Fatalf("diag entry %d: %v, CPU %v", k, gpu[k], cpu[k])
		}
	}
}

// TestDevicesReport: Devices says whether the backend is built, usable and
// why not, and lists what it sees (the emulated library's mocked device when
// GGCUDA_TEST_LIB is set).
func TestDevicesReport(t *testing.T) {
	lib := os.Getenv("GGCUDA_TEST_LIB")
	js, err := Devices(lib)
	if err != nil {
		t.Fatal(err)
	}
	var r deviceReport
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	switch {
	case lib != "":
		if !r.Built || !r.Usable || r.Reason != "" || len(r.Devices) == 0 || r.Devices[0].Name == "" || r.Devices[0].MemoryBytes <= 0 {
			t.Errorf("emulated library: %s", js)
		}
		// What the calls of this process left kept is what ReleaseGPUMemory frees.
		if _, _, err := gram(t, testBatch(3), "cuda", lib); err != nil {
			t.Fatal(err)
		}
		kept := device0(t, lib).KeptBytes
		freed, err := ReleaseGPUMemory(lib)
		if err != nil || kept <= 0 || freed != kept || device0(t, lib).KeptBytes != 0 {
			t.Errorf("kept %d bytes, ReleaseGPUMemory freed %d (%v), %d kept after", kept, freed, err, device0(t, lib).KeptBytes)
		}
	case !r.Built:
		if r.Usable || !strings.Contains(r.Reason, "without CUDA") || len(r.Devices) != 0 {
			t.Errorf("build without CUDA: %s", js)
		}
	default:
		// Built with the tag, default library lookup: on this machine no device.
		if r.Usable != (len(r.Devices) > 0) || (!r.Usable && r.Reason == "") {
			t.Errorf("report inconsistent: %s", js)
		}
	}
	t.Log(js)
}

// TestDiagGradCompute checks mode "diag_grad" through Compute against the
// diagonal of "gram_grad" (bit for bit, the gradient columns permuted from
// Go's order as the JSON asks), and that it refuses a second list of graphs.
func TestDiagGradCompute(t *testing.T) {
	const params = `{"node_kernel": {"kind": "kronecker_delta", "h": 0.5, "col": 0, "index": 0},
	"edge_kernel": {"kind": "constant", "c": 0.8, "index": 1}, "q": 0.1, "q_index": 2, "n_params": 3,
	"device": "cpu", "cuda_library": ""}`
	x := testBatch(7)
	n := len(x.nodePtr) - 1
	K, G, _, err := gramGrad(t, x, params)
	if err != nil {
		t.Fatal(err)
	}
	d, dg := make([]float64, n), make([]float64, n*3)
	call := func(descY uintptr, descYLen int) (string, error) {
		return Compute("marginalized", "diag_grad", params, uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc), descY, descYLen,
			uintptr(unsafe.Pointer(&d[0])), len(d), 0, 0, uintptr(unsafe.Pointer(&dg[0])), len(dg), 0, 0)
	}
	if _, err := call(0, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if d[i] != K[i*n+i] {
			t.Errorf("K[%d][%d] = %v, diag_grad %v", i, i, K[i*n+i], d[i])
		}
		for k := 0; k < 3; k++ {
			if dg[i*3+k] != G[(i*n+i)*3+k] {
				t.Errorf("∂K[%d][%d]/∂θ%d = %v, diag_grad %v", i, i, k, G[(i*n+i)*3+k], dg[i*3+k])
			}
		}
	}
	if dg[0] == dg[1] || dg[1] == dg[2] {
		t.Fatalf("degenerate test: gradient columns %v", dg[:3])
	}
	if _, err := call(uintptr(unsafe.Pointer(&x.desc[0])), len(x.desc)); err == nil || !strings.Contains(err.Error(), "one list") {
		t.Errorf("diag_grad with Y: %v", err)
	}
}
