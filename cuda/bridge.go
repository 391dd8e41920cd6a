//go:build cuda

package cuda

// #cgo CFLAGS: -I${SRCDIR}/include
// #cgo LDFLAGS: -ldl
// #include <dlfcn.h>
// #include <stdio.h>
// #include <stdlib.h>
// #include "ggcuda.h"
//
// typedef struct {
//   void* h;
//   int (*abi)(void);
//   int (*count)(int*, char*, size_t);
//   int (*info)(int, char*, size_t, int*, int*, int64_t*, int*, char*, size_t);
//   int (*gram)(const ggc_graphs*, const ggc_graphs*, const ggc_mk_program*, const ggc_mk_program*,
//               const ggc_mgk_options*, double*, int32_t*, double*, ggc_stats*, char*, size_t);
//   int (*grad)(const ggc_graphs*, const ggc_graphs*, const ggc_mk_program*, const ggc_mk_program*,
//               const ggc_mgk_options*, double*, double*, int32_t*, double*, ggc_stats*, char*, size_t);
//   int (*nodal)(const ggc_graphs*, const ggc_graphs*, const ggc_mk_program*, const ggc_mk_program*,
//               const ggc_mgk_options*, double*, double*, int32_t*, double*, ggc_stats*, char*, size_t);
// } gg_lib;
//
// static gg_lib* gg_open(const char* path, char* err, size_t n) {
//   void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
//   if (!h) { snprintf(err, n, "%s", dlerror()); return NULL; }
//   gg_lib* l = (gg_lib*)calloc(1, sizeof(gg_lib));
//   l->h = h;
//   l->abi = (int (*)(void))dlsym(h, "ggc_abi_version");
//   l->count = (int (*)(int*, char*, size_t))dlsym(h, "ggc_device_count");
//   l->info = (int (*)(int, char*, size_t, int*, int*, int64_t*, int*, char*, size_t))dlsym(h, "ggc_device_info");
//   l->gram = (int (*)(const ggc_graphs*, const ggc_graphs*, const ggc_mk_program*, const ggc_mk_program*,
//       const ggc_mgk_options*, double*, int32_t*, double*, ggc_stats*, char*, size_t))dlsym(h, "ggc_mgk_gram");
//   l->grad = (int (*)(const ggc_graphs*, const ggc_graphs*, const ggc_mk_program*, const ggc_mk_program*,
//       const ggc_mgk_options*, double*, double*, int32_t*, double*, ggc_stats*, char*, size_t))dlsym(h, "ggc_mgk_gram_grad");
//   l->nodal = (int (*)(const ggc_graphs*, const ggc_graphs*, const ggc_mk_program*, const ggc_mk_program*,
//       const ggc_mgk_options*, double*, double*, int32_t*, double*, ggc_stats*, char*, size_t))dlsym(h, "ggc_mgk_nodal");
//   if (!l->abi || !l->count || !l->info || !l->gram || !l->grad || !l->nodal) {
//     snprintf(err, n, "%s lacks a ggc_ function", path);
//     dlclose(h); free(l); return NULL;
//   }
//   return l;
// }
// static void* gg_sym(gg_lib* l, const char* name) { return dlsym(l->h, name); }
// static void* gg_handle(gg_lib* l) { return l->h; }
// static void gg_close(gg_lib* l) { dlclose(l->h); free(l); }
// static int gg_warm_up(void* f, int d, char* e, size_t n) { return ((int (*)(int, char*, size_t))f)(d, e, n); }
// static int gg_memory(void* f, int d, int64_t* db, int64_t* pb) { return ((int (*)(int, int64_t*, int64_t*))f)(d, db, pb); }
// static int gg_abi(gg_lib* l) { return l->abi(); }
// static int gg_count(gg_lib* l, int* c, char* e, size_t n) { return l->count(c, e, n); }
// static int gg_info(gg_lib* l, int d, char* name, size_t nl, int* ma, int* mi, int64_t* mem, int* sms, char* e, size_t n) {
//   return l->info(d, name, nl, ma, mi, mem, sms, e, n);
// }
// static int gg_gram(gg_lib* l, const ggc_graphs* x, const ggc_graphs* y, const ggc_mk_program* nk,
//     const ggc_mk_program* ek, const ggc_mgk_options* o, double* out, int32_t* it, double* res, ggc_stats* st,
//     char* e, size_t n) {
//   return l->gram(x, y, nk, ek, o, out, it, res, st, e, n);
// }
// static int gg_grad(gg_lib* l, const ggc_graphs* x, const ggc_graphs* y, const ggc_mk_program* nk,
//     const ggc_mk_program* ek, const ggc_mgk_options* o, double* out, double* g, int32_t* it, double* res,
//     ggc_stats* st, char* e, size_t n) {
//   return l->grad(x, y, nk, ek, o, out, g, it, res, st, e, n);
// }
// static int gg_nodal(gg_lib* l, const ggc_graphs* x, const ggc_graphs* y, const ggc_mk_program* nk,
//     const ggc_mk_program* ek, const ggc_mgk_options* o, double* out, double* nd, int32_t* it, double* res,
//     ggc_stats* st, char* e, size_t n) {
//   return l->nodal(x, y, nk, ek, o, out, nd, it, res, st, e, n);
// }
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/graphgram/graphgram/cuda/internal/cgraphs"
	"github.com/graphgram/graphgram/cuda/layout"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// Built reports whether this binary was built with the cuda build tag.
const Built = true

// Library is one opened CUDA library, a build of libggcuda.so. Open returns
// it, one a library file and process; its methods compute on that library's
// devices, and it holds what the process keeps per library and device (the
// device list, the warm-ups; the library itself keeps the devices' memory).
// The package-level functions of the same names are the methods of the
// library that LibraryPath names. Only Open makes a usable Library: the
// methods of a nil or zero one fail with ErrNoLibrary.
type Library struct {
	path string
	l    *C.gg_lib
	// calls serializes calls into the library (one device context, one
	// call at a time; the device itself runs many blocks).
	calls sync.Mutex
	// devs and devsErr are the device list, queried on the first Devices
	// (a device's properties do not change while the process runs).
	devsOnce sync.Once
	devs     []Device
	devsErr  error
	// warm holds each device's WarmUp outcome (the first call's).
	warmMu sync.Mutex
	warm   map[int]warmUp
}

// warmUp is one device's warm-up: how long it took and its error.
type warmUp struct {
	took time.Duration
	err  error
}

// callOptions are the settings of one call that the exported functions leave
// at their defaults and tests set, call by call (never through package state,
// so that tests may run in parallel): the library's test options, a bound on
// the marginalized kernel's launches, and a count of library calls.
type callOptions struct {
	// flags, blocks, stageLimit and memLimit are ggc_mgk_options.flags,
	// blocks, stage_limit and mem_limit; blocks and memLimit are also
	// ggc_sp_options' and memLimit ggc_explicit_options' (0: the library's
	// choice).
	flags, blocks, stageLimit int32
	memLimit                  int64
	// panel is ggc_explicit_options.panel: 0 lets the library's cost model
	// choose the dense panel, > 0 forces that many columns into it, < 0 none.
	panel int32
	// launchTerms bounds the work of one marginalized-kernel launch as
	// LaunchTerms does: 0 takes LaunchTerms, < 0 disables the split.
	launchTerms int64
	// calls, when not nil, counts the library calls made (splits show as
	// more).
	calls *atomic.Int64
	// lib is the library the call computes with; nil: the one LibraryPath
	// names (the package-level functions).
	lib *Library
}

// library returns the library the call computes with, opening the default
// one (LibraryPath) when the call names none.
func (co *callOptions) library() (*Library, error) {
	if co.lib != nil {
		return co.lib, nil
	}
	return defaultLibrary()
}

// counted records one library call.
func (co *callOptions) counted() {
	if co.calls != nil {
		co.calls.Add(1)
	}
}

// resetLibrary forgets the libraries opened and SetLibraryPath's path
// (tests): the next Open of a path loads it anew (dlopen then returns the
// handle it already has).
func resetLibrary() {
	mu.Lock()
	defer mu.Unlock()
	userPath, opened, byHandle = "", nil, nil
}

var (
	mu sync.Mutex
	// userPath is SetLibraryPath's path; "": the default lookup.
	userPath string
	// opened is Open's outcome per library key (libKey): each path is loaded
	// once a process, and one that failed is not tried again.
	opened map[string]opening
	// byHandle holds the libraries by their dlopen handle: paths that name
	// one file (a symbolic link) share its Library, its lock and its state.
	byHandle map[unsafe.Pointer]*Library
)

// opening is one Open's outcome.
type opening struct {
	l   *Library
	err error
}

// valid returns nil for a library that Open returned, else an error
// wrapping ErrNoLibrary (a nil or zero Library).
func (l *Library) valid() error {
	if l == nil || l.l == nil {
		return fmt.Errorf("%w: a *cuda.Library that cuda.Open did not return", ErrNoLibrary)
	}
	return nil
}

// Open returns the CUDA library at path, loading it on the process's first
// Open of that path; "" is the default lookup: $GRAPHGRAM_CUDA_LIB, else
// "libggcuda.so" through the dynamic loader's search path. Paths are
// compared cleaned (filepath.Clean; a name without a slash is looked up in
// the loader's search path, as dlopen does); paths that name one file give
// one Library. An error wraps ErrNoLibrary and names the path; it is kept,
// like a library, for the life of the process: a path that failed to load
// is not tried again. Open's libraries and errors are independent of each
// other and of SetLibraryPath: a process may use several libraries, each
// call the one it names.
func Open(path string) (*Library, error) {
	key := libKey(path)
	mu.Lock()
	defer mu.Unlock()
	if o, ok := opened[key]; ok {
		return o.l, o.err
	}
	l, err := open(key)
	if err == nil {
		h := C.gg_handle(l.l)
		if prev, ok := byHandle[h]; ok {
			C.gg_close(l.l) // one more reference to a file already open
			l = prev
		} else {
			if byHandle == nil {
				byHandle = map[unsafe.Pointer]*Library{}
			}
			byHandle[h] = l
		}
	}
	if opened == nil {
		opened = map[string]opening{}
	}
	opened[key] = opening{l, err}
	return l, err
}

// libKey is the path Open loads and compares for path: path cleaned, or
// the default lookup's when "". A name without a slash stays as it is (the
// loader's search path); a relative path keeps a "./" prefix, so that
// cleaning never turns it into such a name.
func libKey(path string) string {
	if path == "" {
		path = os.Getenv("GRAPHGRAM_CUDA_LIB")
	}
	if path == "" {
		return "libggcuda.so"
	}
	if !strings.Contains(path, "/") {
		return path
	}
	c := filepath.Clean(path)
	if !strings.Contains(c, "/") {
		c = "./" + c
	}
	return c
}

// defaultLibrary is the library of the package-level functions: the one
// LibraryPath names.
func defaultLibrary() (*Library, error) {
	mu.Lock()
	p := userPath
	mu.Unlock()
	return Open(p)
}

// SetLibraryPath sets the library that the package-level functions
// (Devices, MarginalizedGram, ...) use from now on: the one at path, or the
// default lookup's (Open) when path is "". It may be called at any time;
// libraries opened before stay open for the calls that name them.
//
// Deprecated: open the library with Open and call its methods: a call then
// uses the library it names, whatever other goroutines set.
func SetLibraryPath(path string) {
	mu.Lock()
	defer mu.Unlock()
	userPath = path
}

// LibraryPath returns the path of the library that the package-level
// functions use: SetLibraryPath's, else $GRAPHGRAM_CUDA_LIB, else
// "libggcuda.so", cleaned as Open compares paths.
//
// Deprecated: use the Path of the Library that Open returns.
func LibraryPath() string {
	mu.Lock()
	defer mu.Unlock()
	return libKey(userPath)
}

// Path returns the path the library was opened by, cleaned (see Open); the
// first one, for a library that two paths name.
func (l *Library) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// open loads the library at path.
func open(path string) (*Library, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var buf [512]C.char
	l := C.gg_open(cp, &buf[0], C.size_t(len(buf)))
	if l == nil {
		msg := C.GoString(&buf[0])
		if !strings.Contains(msg, path) {
			msg = path + ": " + msg
		}
		return nil, fmt.Errorf("%w: %s", ErrNoLibrary, msg)
	}
	if v := int(C.gg_abi(l)); v != C.GGC_ABI_VERSION {
		return nil, fmt.Errorf("%w: %s has ABI version %d, this binary needs %d", ErrNoLibrary, path, v, C.GGC_ABI_VERSION)
	}
	return &Library{path: path, l: l}, nil
}

// fn returns the library's entry point name (one that open does not
// resolve up front).
func (l *Library) fn(name string) (unsafe.Pointer, error) {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	fn := C.gg_sym(l.l, cn)
	if fn == nil {
		return nil, fmt.Errorf("%w: %s lacks %s", ErrNoLibrary, l.path, name)
	}
	return fn, nil
}

// libFn returns the entry point name of the call's library (co.library)
// and the library.
func libFn(co *callOptions, name string) (unsafe.Pointer, *Library, error) {
	l, err := co.library()
	if err != nil {
		return nil, nil, err
	}
	fn, err := l.fn(name)
	if err != nil {
		return nil, nil, err
	}
	return fn, l, nil
}

func statusErr(rc C.int, msg string) error {
	switch rc {
	case C.GGC_OK:
		return nil
	case C.GGC_ERR_NO_DEVICE:
		return fmt.Errorf("%w: %s", ErrNoDevice, msg)
	case C.GGC_ERR_OOM:
		return fmt.Errorf("%w: %s", ErrOutOfMemory, msg)
	case C.GGC_ERR_UNSUPPORTED:
		return fmt.Errorf("%s: %w", msg, ErrUnsupported)
	case C.GGC_ERR_CUDA:
		if strings.Contains(msg, "cudaErrorLaunchTimeout") {
			return fmt.Errorf("%w (%s)", ErrLaunchTimeout, msg)
		}
	}
	return errors.New("cuda: " + msg)
}

func (l *Library) devices() ([]Device, error) {
	l.devsOnce.Do(func() { l.devs, l.devsErr = l.queryDevices() })
	return l.devs, l.devsErr
}

func (l *Library) queryDevices() ([]Device, error) {
	var buf [512]C.char
	var n C.int
	if rc := C.gg_count(l.l, &n, &buf[0], C.size_t(len(buf))); rc != C.GGC_OK {
		return nil, statusErr(rc, C.GoString(&buf[0]))
	}
	ds := make([]Device, int(n))
	for i := range ds {
		var name [256]C.char
		var ma, mi, sms C.int
		var mem C.int64_t
		if rc := C.gg_info(l.l, C.int(i), &name[0], C.size_t(len(name)), &ma, &mi, &mem, &sms, &buf[0], C.size_t(len(buf))); rc != C.GGC_OK {
			return nil, statusErr(rc, C.GoString(&buf[0]))
		}
		ds[i] = Device{Index: i, Name: C.GoString(&name[0]), Major: int(ma), Minor: int(mi), Memory: int64(mem), MultiProcessors: int(sms)}
	}
	return ds, nil
}

// Available reports whether a CUDA device of the default library
// (LibraryPath) can be used; when not, why says why in one line (the
// library's load error or the CUDA error).
func Available() (ok bool, why string) {
	l, err := defaultLibrary()
	if err != nil {
		return false, err.Error()
	}
	return l.Available()
}

// Available reports whether a CUDA device of the library can be used; when
// not, why says why in one line (the CUDA error).
func (l *Library) Available() (ok bool, why string) {
	ds, err := l.Devices()
	if err != nil {
		return false, err.Error()
	}
	if len(ds) == 0 {
		return false, fmt.Sprintf("%v: the library %s sees no device", ErrNoDevice, l.path)
	}
	return true, fmt.Sprintf("%d CUDA device(s), first %s (sm_%d%d), library %s", len(ds), ds[0].Name, ds[0].Major, ds[0].Minor, l.path)
}

// Check returns nil when CUDA device index device of the default library
// (LibraryPath) can be used, else an error wrapping ErrNoLibrary or
// ErrNoDevice that says why (for device='cuda:N').
func Check(device int) error {
	l, err := defaultLibrary()
	if err != nil {
		return err
	}
	return l.Check(device)
}

// Check returns nil when the library's CUDA device index device can be used,
// else an error wrapping ErrNoDevice (ErrNoLibrary for a nil Library) that
// says why.
func (l *Library) Check(device int) error {
	ds, err := l.Devices()
	if err != nil {
		return err
	}
	if device < 0 || device >= len(ds) {
		return fmt.Errorf("%w: device %d requested, %d present", ErrNoDevice, device, len(ds))
	}
	return nil
}

// Devices lists the CUDA devices of the default library (LibraryPath), or
// says why there are none usable.
func Devices() ([]Device, error) {
	l, err := defaultLibrary()
	if err != nil {
		return nil, err
	}
	return l.Devices()
}

// Devices lists the library's CUDA devices, or says why there are none
// usable; the list is queried once a process and library.
func (l *Library) Devices() ([]Device, error) {
	if err := l.valid(); err != nil {
		return nil, err
	}
	return l.devices()
}

// WarmUp is Library.WarmUp on the default library (LibraryPath).
func WarmUp(device int) (time.Duration, error) {
	l, err := defaultLibrary()
	if err != nil {
		return 0, err
	}
	return l.WarmUp(device)
}

// WarmUp prepares CUDA device device for the calls to come (ggc_warm_up:
// its context, its properties and every kernel's code loaded), once per
// process and library: later calls return the first one's outcome at once.
// It returns how long the first one took. Calls warm their device up
// themselves; WarmUp lets a caller do it ahead, beside other work (the
// self-validation computes its CPU references meanwhile).
func (l *Library) WarmUp(device int) (time.Duration, error) {
	if err := l.valid(); err != nil {
		return 0, err
	}
	fn, err := l.fn("ggc_warm_up")
	if err != nil {
		return 0, err
	}
	if err := l.Check(device); err != nil {
		return 0, err
	}
	l.warmMu.Lock()
	defer l.warmMu.Unlock()
	if w, ok := l.warm[device]; ok {
		return w.took, w.err
	}
	l.calls.Lock()
	t := time.Now()
	var buf [512]C.char
	rc := C.gg_warm_up(fn, C.int(device), &buf[0], C.size_t(len(buf)))
	w := warmUp{took: time.Since(t), err: statusErr(rc, C.GoString(&buf[0]))}
	l.calls.Unlock()
	if l.warm == nil {
		l.warm = map[int]warmUp{}
	}
	l.warm[device] = w
	return w.took, w.err
}

// CachedMemory is Library.CachedMemory on the default library
// (LibraryPath).
func CachedMemory(device int) (deviceBytes, pinnedBytes int64, err error) {
	l, err := defaultLibrary()
	if err != nil {
		return 0, 0, err
	}
	return l.CachedMemory(device)
}

// CachedMemory returns the memory the library keeps for device between
// calls: idle device allocations (reused by the next calls, at most an
// eighth of the device's memory) and its pinned host staging buffer.
func (l *Library) CachedMemory(device int) (deviceBytes, pinnedBytes int64, err error) {
	return l.memoryCall("ggc_cached_memory", device)
}

// ReleaseMemory is Library.ReleaseMemory on the default library
// (LibraryPath).
func ReleaseMemory(device int) (deviceBytes, pinnedBytes int64, err error) {
	l, err := defaultLibrary()
	if err != nil {
		return 0, 0, err
	}
	return l.ReleaseMemory(device)
}

// ReleaseMemory frees what CachedMemory reports (the staging buffer unless
// a call is using it) and returns the bytes freed: for a process that hands
// the device to other work after its Gram matrices.
func (l *Library) ReleaseMemory(device int) (deviceBytes, pinnedBytes int64, err error) {
	return l.memoryCall("ggc_release_memory", device)
}

// memoryCall calls the library's function name of the ggc_cached_memory
// signature for device.
func (l *Library) memoryCall(name string, device int) (int64, int64, error) {
	if err := l.valid(); err != nil {
		return 0, 0, err
	}
	fn, err := l.fn(name)
	if err != nil {
		return 0, 0, err
	}
	l.calls.Lock()
	defer l.calls.Unlock()
	var db, pb C.int64_t
	C.gg_memory(fn, C.int(device), &db, &pb)
	return int64(db), int64(pb), nil
}

// MarginalizedGram writes K(X[i], Y[j]) to out[i*len(Y)+j] on CUDA device
// device, with the arguments and conventions of mgk.Gram (opt.NJobs is
// ignored). Errors wrap ErrNotBuilt, ErrNoLibrary, ErrNoDevice,
// ErrUnsupported (use the CPU) or ErrOutOfMemory.
func MarginalizedGram(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return MarginalizedGramStats(X, Y, startX, startY, symmetric, opt, device, prec, out, nil, nil)
}

// MarginalizedGramStats is MarginalizedGram that also returns the PCG
// iterations of each entry in iters (nil: not wanted) and timings in stats
// (nil: not wanted). When device memory runs out the work is split into
// blocks of the Gram matrix and each block solved in turn.
func MarginalizedGramStats(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64, iters []int32, stats *Stats) ([]mgk.Unconverged, error) {
	return gram(callOptions{}, X, Y, startX, startY, symmetric, opt, device, prec, out, nil, iters, stats)
}

// MarginalizedGramGrad is mgk.GramGrad on CUDA device device: out as
// MarginalizedGram and grad[(i*len(Y)+j)*mgk.NumParams(opt) + k] =
// ∂K(X[i], Y[j])/∂θ_k for θ = (q, node-kernel parameters, edge-kernel
// parameters) in microkernel's order. iters (nil: not wanted) receives the
// iterations of both solves of each entry; an entry is unconverged when
// either solve is, with the larger residual. The primal solves use
// MarginalizedGram's tolerance, the adjoint solves mgk's adjoint tolerance
// (both at least Float32MinTol in float32). Errors as MarginalizedGram's;
// device memory exhaustion splits the work the same way.
func MarginalizedGramGrad(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out, grad []float64, iters []int32) ([]mgk.Unconverged, error) {
	return gram(callOptions{}, X, Y, startX, startY, symmetric, opt, device, prec, out, grad, iters, nil)
}

// gram is MarginalizedGramStats with the options co, with gradients when
// grad is non-nil.
func gram(co callOptions, X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out, grad []float64, iters []int32, stats *Stats) ([]mgk.Unconverged, error) {
	o, node, edge, nc, ec, err := prepare(X, Y, startX, startY, symmetric, opt, prec, len(out))
	if err != nil {
		return nil, err
	}
	if symmetric {
		Y, startY = X, startX
	}
	rx, ry, err := renumberCall(X, Y, startX, startY, symmetric, o.Quotient != mgk.QuotientOff, o.NJobs)
	if err != nil {
		return nil, err
	}
	if iters != nil && len(iters) != len(out) {
		return nil, fmt.Errorf("mgk: iters has %d entries for a %d×%d Gram matrix", len(iters), len(X), len(Y))
	}
	np := mgk.NumParams(o)
	if grad != nil && len(grad) != len(out)*np {
		return nil, fmt.Errorf("mgk: grad has %d entries for a %d×%d Gram matrix with %d parameters", len(grad), len(X), len(Y), np)
	}
	l, err := co.library()
	if err != nil {
		return nil, err
	}
	if stats != nil {
		*stats = Stats{}
		sides, givens := []renumbered{rx, ry}, [][]*graph.Graph{X, Y}
		if symmetric {
			sides, givens = sides[:1], givens[:1]
		}
		for k, side := range sides {
			given := givens[k]
			for i, g := range side.graphs {
				stats.QuotientNodes += g.N
				stats.GivenNodes += given[i].N
			}
		}
	}
	if co.launchTerms == 0 {
		co.launchTerms = LaunchTerms
	}
	g := &gramCall{co: co, l: l, o: o, node: &node, edge: &edge, nc: nc, ec: ec, device: device, prec: prec, out: out, iters: iters,
		x: rx, y: ry, ny: len(Y), stats: stats, grad: grad, np: np, adjTol: mgk.JacobiAdjointTolerance(o)}
	if prec == Float32 {
		g.adjTol = max(g.adjTol, Float32MinTol)
	}
	if iters == nil {
		g.iters = make([]int32, len(out))
	}
	g.resid = make([]float64, len(out))
	if err := solveBlocks(g, span{0, len(X)}, span{0, len(Y)}, symmetric); err != nil {
		return nil, err
	}
	var bad []mgk.Unconverged
	for i := range X {
		for j := range Y {
			k := i*len(Y) + j
			if g.iters[k] < 0 && (!symmetric || i <= j) {
				bad = append(bad, mgk.Unconverged{I: i, J: j, Iterations: int(-g.iters[k]), Residual: g.resid[k]})
			}
		}
	}
	if iters != nil {
		for k, v := range iters {
			if v < 0 {
				iters[k] = -v
			}
		}
	}
	return bad, nil
}

// gramCall is one marginalized-kernel call: its options, its inputs and
// where its results go.
type gramCall struct {
	co             callOptions
	l              *Library
	o              mgk.Options
	node, edge     *layout.Program
	nc, ec, device int
	prec           Precision
	// x and y are the call's graphs as the device computes them (quotients,
	// renumbered), of which solve computes blocks (y is x for a symmetric
	// call).
	x, y       renumbered
	out, resid []float64
	iters      []int32
	ny         int
	stats      *Stats
	// diag asks the library for K(X[i], X[i]) only (GGC_FLAG_DIAG).
	diag bool
	// grad, when non-nil, receives np gradient entries per Gram entry
	// (ggc_mgk_gram_grad); adjTol is the adjoint solves' tolerance.
	grad   []float64
	np     int
	adjTol float64
	// nodal, when non-nil in call, receives the call's nodal matrix
	// (ggc_mgk_nodal).
	nodal []float64
}

func pick[T any](s []T, idx []int) []T {
	if s == nil {
		return nil
	}
	r := make([]T, len(idx))
	for k, i := range idx {
		r[k] = s[i]
	}
	return r
}

// solve computes the Gram block x × y and scatters it into the full matrix
// (see pairBlocks). A block whose work exceeds the call's launch bound
// (callOptions.launchTerms) is split before it is launched; a stopped launch
// names the device and the block's pairs.
func (g *gramCall) solve(x, y span, symmetric bool) error {
	n, m := x.len(), y.len()
	if lt := g.co.launchTerms; lt > 0 && (n > 1 || m > 1) && launchTerms(g.x.graphs, g.y.graphs, x, y, symmetric) > lt {
		return errTooLong
	}
	out, iters, resid := make([]float64, n*m), make([]int32, n*m), make([]float64, n*m)
	var grad []float64
	if g.grad != nil {
		grad = make([]float64, n*m*g.np)
	}
	err := g.call(g.x.part(x), g.y.part(y), symmetric, out, grad, iters, resid)
	if errors.Is(err, ErrLaunchTimeout) {
		return fmt.Errorf("device %d, pairs X[%s] × Y[%s]: %w", g.device, x, y, err)
	}
	if err != nil {
		return err
	}
	g.scatter(x, y, out, grad, iters, resid)
	return nil
}

// mirror copies the entries of the block x × y, with their gradients,
// iterations and residuals, to y × x.
func (g *gramCall) mirror(x, y span) {
	for i := x.lo; i < x.hi; i++ {
		for j := y.lo; j < y.hi; j++ {
			g.out[j*g.ny+i], g.iters[j*g.ny+i], g.resid[j*g.ny+i] = g.out[i*g.ny+j], g.iters[i*g.ny+j], g.resid[i*g.ny+j]
			if g.grad != nil {
				copy(g.grad[(j*g.ny+i)*g.np:(j*g.ny+i+1)*g.np], g.grad[(i*g.ny+j)*g.np:(i*g.ny+j+1)*g.np])
			}
		}
	}
}

// launchTerms estimates a launch's work: Σ over its pairs of one mat-vec's
// terms, (nnz+n)(nnz'+n'), half the square for a symmetric block.
func launchTerms(X, Y []*graph.Graph, x, y span, symmetric bool) int64 {
	size := func(gs []*graph.Graph, r span) int64 {
		s := int64(0)
		for _, g := range gs[r.lo:r.hi] {
			s += int64(len(g.Col) + g.N)
		}
		return s
	}
	sx := size(X, x)
	if symmetric {
		return sx * sx / 2
	}
	return sx * size(Y, y)
}

// scatter copies the solved block x × y into the call's results.
func (g *gramCall) scatter(x, y span, out, grad []float64, iters []int32, resid []float64) {
	m := y.len()
	for i := x.lo; i < x.hi; i++ {
		for j := y.lo; j < y.hi; j++ {
			k := (i-x.lo)*m + (j - y.lo)
			g.out[i*g.ny+j], g.iters[i*g.ny+j], g.resid[i*g.ny+j] = out[k], iters[k], resid[k]
			if g.grad != nil {
				copy(g.grad[(i*g.ny+j)*g.np:(i*g.ny+j+1)*g.np], grad[k*g.np:(k+1)*g.np])
			}
		}
	}
}

// call runs one ggc_mgk_gram on X × Y, or ggc_mgk_gram_grad when grad is
// non-nil.
func (g *gramCall) call(X, Y renumbered, symmetric bool, out, grad []float64, iters []int32, resid []float64) error {
	// Packing is linear in the graphs' size; do both sides at once.
	var LX, LY *layout.Graphs
	err := schedule.Run(nil, 2, 2, 1, func(_, k int) error {
		var err error
		if k == 0 {
			LX, err = X.pack(g.nc, g.ec)
		} else if !symmetric {
			LY, err = Y.pack(g.nc, g.ec)
		}
		return err
	})
	if err != nil {
		return err
	}
	gx := cgraphs.New(LX)
	defer gx.Free()
	cx := (*C.ggc_graphs)(gx.C())
	var cy *C.ggc_graphs
	if !symmetric {
		gy := cgraphs.New(LY)
		defer gy.Free()
		cy = (*C.ggc_graphs)(gy.C())
	}
	copt := C.ggc_mgk_options{q: C.double(g.o.Q), tol: C.double(g.o.Tol), lmin: C.int32_t(g.o.Lmin), max_iter: C.int32_t(g.o.MaxIter),
		precision: C.int32_t(g.prec), device: C.int32_t(g.device), flags: C.int32_t(g.co.flags), mem_limit: C.int64_t(g.co.memLimit),
		blocks: C.int32_t(g.co.blocks), stage_limit: C.int32_t(g.co.stageLimit), adj_tol: C.double(g.adjTol)}
	if symmetric {
		copt.symmetric = 1
	}
	if g.diag {
		copt.flags |= C.GGC_FLAG_DIAG
	}
	var st C.ggc_stats
	var buf [512]C.char
	var p runtime.Pinner
	defer p.Unpin()
	p.Pin(&out[0])
	p.Pin(&iters[0])
	p.Pin(&resid[0])
	g.co.counted()
	g.l.calls.Lock()
	var rc C.int
	if g.nodal != nil {
		p.Pin(&g.nodal[0])
		rc = C.gg_nodal(g.l.l, cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(g.node)), (*C.ggc_mk_program)(unsafe.Pointer(g.edge)), &copt,
			(*C.double)(&out[0]), (*C.double)(&g.nodal[0]), (*C.int32_t)(&iters[0]), (*C.double)(&resid[0]), &st, &buf[0], C.size_t(len(buf)))
	} else if grad != nil {
		p.Pin(&grad[0])
		rc = C.gg_grad(g.l.l, cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(g.node)), (*C.ggc_mk_program)(unsafe.Pointer(g.edge)), &copt,
			(*C.double)(&out[0]), (*C.double)(&grad[0]), (*C.int32_t)(&iters[0]), (*C.double)(&resid[0]), &st, &buf[0], C.size_t(len(buf)))
	} else {
		rc = C.gg_gram(g.l.l, cx, cy, (*C.ggc_mk_program)(unsafe.Pointer(g.node)), (*C.ggc_mk_program)(unsafe.Pointer(g.edge)), &copt,
			(*C.double)(&out[0]), (*C.int32_t)(&iters[0]), (*C.double)(&resid[0]), &st, &buf[0], C.size_t(len(buf)))
	}
	g.l.calls.Unlock()
	if err := statusErr(rc, C.GoString(&buf[0])); err != nil {
		return err
	}
	if g.stats != nil {
		s := g.stats
		s.UploadMS += float64(st.upload_ms)
		s.SolveMS += float64(st.solve_ms)
		s.DownloadMS += float64(st.download_ms)
		s.Blocks, s.Threads = max(s.Blocks, int(st.blocks)), int(st.threads)
		s.ScratchBytes = max(s.ScratchBytes, int64(st.scratch_bytes))
		s.StagedPairs += int(st.staged)
		s.WarpPairs += int(st.warp_pairs)
		s.WidePairs += int(st.wide_pairs)
		s.Batches++
	}
	return nil
}

// MarginalizedDiag writes K(X[i], X[i]) to out[i] on CUDA device device, as
// mgk.Diag does on the CPU.
func MarginalizedDiag(X []*graph.Graph, startX [][]float64, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return diag(callOptions{}, X, startX, opt, device, prec, out)
}

// diag is MarginalizedDiag with the options co.
func diag(co callOptions, X []*graph.Graph, startX [][]float64, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	if len(out) != len(X) {
		return nil, fmt.Errorf("mgk: out has %d entries for %d graphs", len(out), len(X))
	}
	o, node, edge, nc, ec, err := prepare(X, nil, startX, nil, true, opt, prec, -1) // no n×n output: only the diagonal
	if err != nil {
		return nil, err
	}
	l, err := co.library()
	if err != nil {
		return nil, err
	}
	d, err := quotients(X, startX, "X", o.Quotient != mgk.QuotientOff, o.NJobs)
	if err == nil {
		d, err = renumber(d, 1, o.NJobs)
	}
	if err != nil {
		return nil, err
	}
	g := &gramCall{co: co, l: l, o: o, node: &node, edge: &edge, nc: nc, ec: ec, device: device, prec: prec, diag: true}
	var bad []mgk.Unconverged
	err = solveList(span{0, len(X)}, func(r span) error {
		sub, it, res := make([]float64, r.len()), make([]int32, r.len()), make([]float64, r.len())
		if err := g.call(d.part(r), renumbered{}, true, sub, nil, it, res); err != nil {
			return err
		}
		for k := range sub {
			i := r.lo + k
			out[i] = sub[k]
			if it[k] < 0 {
				bad = append(bad, mgk.Unconverged{I: i, J: i, Iterations: int(-it[k]), Residual: res[k]})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(bad, func(a, b int) bool { return bad[a].I < bad[b].I })
	return bad, nil
}

// MarginalizedNodal writes the node-pair similarities p_i p'_i' x_(i,i')
// (minus p_i p'_i' v with Lmin = 1) of every pair of graphs to out, a
// (ΣnX × ΣnY) row-major matrix with nodes packed graph after graph, as
// mgk.Nodal does on the CPU (the same tolerance, nodalTolFactor tighter than
// Gram's). The matrix is assembled in device memory; when it or the work does
// not fit, the graph lists are split and the blocks solved in turn. Errors as
// MarginalizedGram's.
func MarginalizedNodal(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	return nodal(callOptions{}, X, Y, startX, startY, symmetric, opt, device, prec, out)
}

// nodal is MarginalizedNodal with the options co.
func nodal(co callOptions, X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt mgk.Options, device int, prec Precision, out []float64) ([]mgk.Unconverged, error) {
	o, node, edge, nc, ec, err := prepare(X, Y, startX, startY, symmetric, opt, prec, -1)
	if err != nil {
		return nil, err
	}
	if symmetric {
		Y, startY = X, startX
	}
	// prepare set Gram's tolerance; Nodal's is tighter (unless Tol is set),
	// derived from the caller's Tol and the resolved accuracy.
	ro := o
	ro.Tol = opt.Tol
	o.Tol = mgk.JacobiNodalTolerance(ro)
	if prec == Float32 {
		o.Tol = max(o.Tol, Float32MinTol)
	}
	offX, nX := nodeOffsets(X)
	offY, nY := nodeOffsets(Y)
	if len(out) != nX*nY {
		return nil, fmt.Errorf("mgk: out has %d entries for a %d×%d nodal matrix", len(out), nX, nY)
	}
	l, err := co.library()
	if err != nil {
		return nil, err
	}
	// Nodal matrices need every node: no quotients.
	rx, ry, err := renumberCall(X, Y, startX, startY, symmetric, false, o.NJobs)
	if err != nil {
		return nil, err
	}
	c := &nodalCall{g: &gramCall{co: co, l: l, o: o, node: &node, edge: &edge, nc: nc, ec: ec, device: device, prec: prec,
		x: rx, y: ry}, offX: offX, offY: offY, nY: nY, out: out}
	if err := solveBlocks(c, span{0, len(X)}, span{0, len(Y)}, symmetric); err != nil {
		return nil, err
	}
	unpermuteNodal(out, rx, ry, offX, offY)
	bad := c.bad
	sort.Slice(bad, func(a, b int) bool { return bad[a].I < bad[b].I || bad[a].I == bad[b].I && bad[a].J < bad[b].J })
	return bad, nil
}

// nodalCall is one MarginalizedNodal call: g's library calls return nodal
// blocks, which are placed in out, a matrix with nY columns in which graph
// X[i]'s rows start at offX[i] and Y[j]'s columns at offY[j].
type nodalCall struct {
	g          *gramCall
	offX, offY []int
	nY         int
	out        []float64
	bad        []mgk.Unconverged
}

// solve computes the nodal block of the pairs x × y and copies it into the
// full matrix (see pairBlocks).
func (c *nodalCall) solve(x, y span, symmetric bool) error {
	g := c.g
	X, Y := g.x.part(x).graphs, g.y.part(y).graphs
	n, m := len(X), len(Y)
	ao, bn := nodeOffsets(X)
	bo, bm := nodeOffsets(Y)
	g.nodal = make([]float64, max(bn*bm, 1))
	K, it, res := make([]float64, n*m), make([]int32, n*m), make([]float64, n*m)
	err := g.call(g.x.part(x), g.y.part(y), symmetric, K, nil, it, res)
	sub := g.nodal
	g.nodal = nil
	if err != nil {
		return err
	}
	for a := range n {
		i := x.lo + a
		for b := range m {
			j := y.lo + b
			for r := 0; r < X[a].N; r++ {
				copy(c.out[(c.offX[i]+r)*c.nY+c.offY[j]:(c.offX[i]+r)*c.nY+c.offY[j]+Y[b].N], sub[(ao[a]+r)*bm+bo[b]:(ao[a]+r)*bm+bo[b]+Y[b].N])
			}
			if it[a*m+b] < 0 && (!symmetric || a <= b) {
				c.bad = append(c.bad, mgk.Unconverged{I: i, J: j, Iterations: int(-it[a*m+b]), Residual: res[a*m+b]})
			}
		}
	}
	return nil
}

// mirror copies the node pairs of the graph pairs x × y to y × x.
func (c *nodalCall) mirror(x, y span) {
	X, Y := c.g.x.graphs, c.g.y.graphs
	for i := x.lo; i < x.hi; i++ {
		for j := y.lo; j < y.hi; j++ {
			for r := c.offX[i]; r < c.offX[i]+X[i].N; r++ {
				for col := c.offY[j]; col < c.offY[j]+Y[j].N; col++ {
					c.out[col*c.nY+r] = c.out[r*c.nY+col]
				}
			}
		}
	}
}
