package selfcheck

import (
	"os"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/cuda"
)

// emulated opens the emulated library of $GGCUDA_TEST_LIB, or skips.
func emulated(t *testing.T) *cuda.Library {
	t.Helper()
	path := os.Getenv("GGCUDA_TEST_LIB")
	if path == "" || !cuda.Built {
		t.Skip("GGCUDA_TEST_LIB not set or no cuda build tag: no emulated CUDA library to validate")
	}
	lib, err := cuda.Open(path)
	if err == nil {
		err = lib.Check(0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestValidateEmulated runs the self-validation on the emulated CUDA library
// (GGCUDA_TEST_LIB), each registry in its own subtest, in parallel: it passes
// and says how many matrices agreed; with a planted wrong device result
// (every value scaled by 1 + 10⁻⁶) it fails on the first matrix saying which
// entry, by how much and the bound; with one of 10⁻¹³, which the
// floating-point kernels' bounds allow, it fails on the explicit-feature
// Gram, whose bound is equality.
func TestValidateEmulated(t *testing.T) {
	lib := emulated(t)
	for _, c := range []struct {
		name   string
		skew   float64
		state  State
		detail []string
	}{
		{"exact", 0, Passed, []string{"10 Gram matrices agreed with the CPU"}},
		{"skew 1e-6", 1e-6, Failed, []string{"marginalized kernel (table base kernels), float64: entry (",
			"on the device and", "relative difference 9.99e-07 (allowed 1e-08)"}},
		{"skew 1e-13", 1e-13, Failed, []string{"explicit-feature Gram (WL features, 2 iterations, sum-product), exact: entry (",
			"exact arithmetic: must be equal"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := &Registry{done: map[key]*entry{}, skew: c.skew}
			o := r.Validate(lib, 0)
			t.Logf("%s in %.3f s", o.Detail, o.Seconds)
			if o.State != c.state || !(o.Seconds > 0) {
				t.Errorf("outcome %+v, want state %v", o, c.state)
			}
			for _, want := range c.detail {
				if !strings.Contains(o.Detail, want) {
					t.Errorf("detail %q lacks %q", o.Detail, want)
				}
			}
			if again := r.Validate(lib, 0); again != o {
				t.Errorf("second Validate %+v, first %+v: it must not run again", again, o)
			}
			if got, ok := r.Lookup(lib, 0); !ok || got != o {
				t.Errorf("Lookup %+v %v", got, ok)
			}
			if r.Announce(lib, 0) != (c.state == Failed) || r.Announce(lib, 0) {
				t.Errorf("Announce of a %v outcome", c.state)
			}
		})
	}
}
