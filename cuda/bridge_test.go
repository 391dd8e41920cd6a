//go:build cuda

package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/sparsegram"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// builtLibrary returns the libggcuda.so built by build.py ($GGCUDA_TEST_LIB,
// else cuda/build/libggcuda.so), or skips.
func builtLibrary(t testing.TB) string {
	t.Helper()
	p := os.Getenv("GGCUDA_TEST_LIB")
	if p == "" {
		p, _ = filepath.Abs(filepath.Join("build", "libggcuda.so"))
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no libggcuda.so at %s (build it with python3 cuda/build.py): %v", p, err)
	}
	return p
}

func TestLibraryAbsent(t *testing.T) {
	defer resetLibrary()
	resetLibrary()
	SetLibraryPath("/nonexistent/libggcuda.so")
	ok, why := Available()
	if ok || !strings.Contains(why, "could not be loaded") || !strings.Contains(why, "/nonexistent/libggcuda.so") {
		t.Errorf("Available() = %v, %q", ok, why)
	}
	gs := testgraphs.EdgeCases(1)
	_, err := MarginalizedGram(gs, nil, nil, nil, true, validOptions(), 0, Float64, make([]float64, len(gs)*len(gs)))
	if !errors.Is(err, ErrNoLibrary) {
		t.Errorf("MarginalizedGram: %v, want ErrNoLibrary", err)
	}
	f := &sparsegram.Features{NumCols: 2, Ptr: []int{0, 1}, Col: []int32{1}, Val: []uint32{3}}
	if err := ExplicitGram(f, nil, true, sparsegram.SumMin, 0, make([]float64, 1), nil); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("ExplicitGram: %v, want ErrNoLibrary", err)
	}
}

// TestExplicitValidates: invalid feature matrices and outputs are plain
// errors, found before the library is needed.
func TestExplicitValidates(t *testing.T) {
	defer resetLibrary()
	resetLibrary()
	SetLibraryPath("/nonexistent/libggcuda.so")
	ok := &sparsegram.Features{NumCols: 3, Ptr: []int{0, 2, 2}, Col: []int32{0, 2}, Val: []uint32{1, 4}}
	cases := []struct {
		name    string
		X, Y    *sparsegram.Features
		sym     bool
		sr      sparsegram.Semiring
		out     int
		message string
	}{
		{"columns", ok, &sparsegram.Features{NumCols: 4, Ptr: []int{0}}, false, sparsegram.SumProduct, 0, "feature columns"},
		{"order", &sparsegram.Features{NumCols: 3, Ptr: []int{0, 2}, Col: []int32{2, 0}, Val: []uint32{1, 1}}, nil, true, sparsegram.SumProduct, 1, "out of order"},
		{"range", &sparsegram.Features{NumCols: 3, Ptr: []int{0, 1}, Col: []int32{3}, Val: []uint32{1}}, nil, true, sparsegram.SumProduct, 1, "out of order or range"},
		{"zero", &sparsegram.Features{NumCols: 3, Ptr: []int{0, 1}, Col: []int32{1}, Val: []uint32{0}}, nil, true, sparsegram.SumProduct, 1, "explicit zero"},
		{"out", ok, nil, true, sparsegram.SumProduct, 3, "output has 3 entries"},
		{"semiring", ok, nil, true, 7, 4, "semiring"},
		{"nil", nil, nil, true, sparsegram.SumProduct, 0, "nil"},
	}
	for _, c := range cases {
		err := ExplicitGram(c.X, c.Y, c.sym, c.sr, 0, make([]float64, c.out), nil)
		if err == nil || !strings.Contains(err.Error(), c.message) || errors.Is(err, ErrNoLibrary) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestLibraryWithoutDevice: the library loads, and where no device (or no
// driver) is present every entry point says so with the CUDA error's text.
func TestLibraryWithoutDevice(t *testing.T) {
	p := builtLibrary(t)
	defer resetLibrary()
	resetLibrary()
	SetLibraryPath(p)
	ok, why := Available()
	if ok {
		t.Skipf("a CUDA device is present (%s); the GPU suite covers this machine", why)
	}
	if !strings.Contains(why, "cudaGetDeviceCount") || !strings.Contains(why, "cudaError") {
		t.Errorf("Available() gave %q; want the CUDA error's name", why)
	}
	t.Logf("no device: %s", why)
	if err := Check(0); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Check(0) = %v, want ErrNoDevice", err)
	}
	gs := testgraphs.EdgeCases(1)
	_, err := MarginalizedGram(gs, nil, nil, nil, true, validOptions(), 0, Float64, make([]float64, len(gs)*len(gs)))
	if !errors.Is(err, ErrNoDevice) {
		t.Errorf("MarginalizedGram: %v, want ErrNoDevice", err)
	}
	err = ShortestPathGram(gs, nil, true, spkernel.Options{WeightCol: spkernel.HopCounts}, 0, Float64, SPHybrid{}, make([]float64, len(gs)*len(gs)), nil)
	if !errors.Is(err, ErrNoDevice) {
		t.Errorf("ShortestPathGram: %v, want ErrNoDevice", err)
	}
	f := &sparsegram.Features{NumCols: 2, Ptr: []int{0, 1}, Col: []int32{1}, Val: []uint32{3}}
	if err := ExplicitGram(f, nil, true, sparsegram.SumProduct, 0, make([]float64, 1), nil); !errors.Is(err, ErrNoDevice) {
		t.Errorf("ExplicitGram: %v, want ErrNoDevice", err)
	}
}
