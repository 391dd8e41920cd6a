//go:build !cuda

package cuda

import (
	"errors"
	"strings"
	"testing"
)

func TestStubSaysNotBuilt(t *testing.T) {
	ok, why := Available()
	if ok || !strings.Contains(why, "without CUDA") {
		t.Errorf("Available() = %v, %q", ok, why)
	}
	if err := Check(0); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Check: %v", err)
	}
	if _, err := Devices(); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Devices: %v", err)
	}
	if _, err := MarginalizedGram(nil, nil, nil, nil, true, validOptions(), 0, Float64, nil); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("MarginalizedGram: %v", err)
	}
	if err := ExplicitGram(nil, nil, true, 0, 0, nil, nil); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("ExplicitGram: %v", err)
	}
	for _, path := range []string{"", "libggcuda.so"} {
		if l, err := Open(path); l != nil || !errors.Is(err, ErrNotBuilt) {
			t.Errorf("Open(%q) = %v, %v", path, l, err)
		}
	}
	var l *Library
	if err := l.Check(0); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Library.Check: %v", err)
	}
	if _, err := l.MarginalizedGram(nil, nil, nil, nil, true, validOptions(), 0, Float64, nil); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Library.MarginalizedGram: %v", err)
	}
}
