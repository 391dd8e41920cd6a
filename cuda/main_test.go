//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain names the emulator's seed when a test against the emulated
// library (libggcuda_emu*.so) fails: the order in which its blocks and
// threads run follows from $GGCUDA_EMU_SEED (cuda/emu/emu.h), so a
// failure reproduces with the same value.
func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 && strings.Contains(filepath.Base(os.Getenv("GGCUDA_TEST_LIB")), "_emu") {
		seed := os.Getenv("GGCUDA_EMU_SEED")
		if seed == "" {
			seed = "1 (the default)"
		}
		fmt.Fprintf(os.Stderr, "the emulated library ran with GGCUDA_EMU_SEED=%s\n", seed)
	}
	os.Exit(code)
}
