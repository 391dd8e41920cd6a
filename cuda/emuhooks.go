//go:build cuda

package cuda

// #include <stdint.h>
// static void gg_emu_counts(void* f, int64_t* c) { ((void (*)(int64_t*))f)(c); }
// static int64_t gg_emu_fail_after(void* f, int64_t n) { return ((int64_t (*)(int64_t))f)(n); }
// static void gg_emu_release(void* f) { ((void (*)(void))f)(); }
import "C"

// Test hooks of the emulated library (libggcuda_emu.so, cuda/emu/emu_runtime.h):
// they fail with ErrNoLibrary against a real libggcuda.so, which lacks them.

// emuLive is what the emulated runtime holds alive.
type emuLive struct {
	Streams, Events, DevAllocs, DevBytes, Pinned int64
	PinnedCalls                                  int64 // cudaMallocHost calls so far
	DevAllocCalls                                int64 // cudaMalloc calls so far
}

// emuCounts returns the emulated runtime's live objects.
func emuCounts() (emuLive, error) {
	fn, _, err := libFn(&callOptions{}, "ggc_emu_counts")
	if err != nil {
		return emuLive{}, err
	}
	var c [7]C.int64_t
	C.gg_emu_counts(fn, &c[0])
	return emuLive{int64(c[0]), int64(c[1]), int64(c[2]), int64(c[3]), int64(c[4]), int64(c[5]), int64(c[6])}, nil
}

// emuFailAfter makes the n-th next fallible runtime call fail (n <= 0: none)
// and returns the countdown left from the previous setting (0: its failure
// happened).
func emuFailAfter(n int64) (int64, error) {
	fn, _, err := libFn(&callOptions{}, "ggc_emu_fail_after")
	if err != nil {
		return 0, err
	}
	return int64(C.gg_emu_fail_after(fn, C.int64_t(n))), nil
}

// emuReleaseHostBuffers frees the library's cached pinned staging buffers.
func emuReleaseHostBuffers() error {
	fn, _, err := libFn(&callOptions{}, "ggc_emu_release_host_buffers")
	if err != nil {
		return err
	}
	C.gg_emu_release(fn)
	return nil
}

// EmulatedLaunchTimeout is Library.EmulatedLaunchTimeout on the default
// library (LibraryPath).
func EmulatedLaunchTimeout(n int64) error {
	l, err := defaultLibrary()
	if err != nil {
		return err
	}
	return l.EmulatedLaunchTimeout(n)
}

// EmulatedLaunchTimeout makes the n-th next kernel launch of the emulated
// library (libggcuda_emu.so) fail as a display driver's watchdog stops a
// kernel (cudaErrorLaunchTimeout, the context lost until
// EmulatedLaunchTimeout(0) restores it), for the tests of the timeout's
// handling here and in pybind. It fails with ErrNoLibrary against a real
// libggcuda.so, which lacks the hook.
func (l *Library) EmulatedLaunchTimeout(n int64) error {
	if err := l.valid(); err != nil {
		return err
	}
	fn, _, err := libFn(&callOptions{lib: l}, "ggc_emu_launch_timeout")
	if err != nil {
		return err
	}
	C.gg_emu_fail_after(fn, C.int64_t(n)) // the same signature: int64_t (int64_t)
	return nil
}
