//go:build cuda

package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/spkernel"
)

// builtLibrary returns the libggcuda.so built by build.py ($GGCUDA_TEST_LIB,
// else cuda/build/libggcuda.so), or skips.
func builtLibrary(t *testing.T) string {
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
}
