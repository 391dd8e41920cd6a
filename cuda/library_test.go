//go:build cuda

package cuda

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/internal/accuracy"
)

// emulatedPath returns the path of the host-emulated library
// ($GGCUDA_TEST_LIB or cuda/build/libggcuda.so, when it is that one), or
// skips. It leaves no library open.
func emulatedPath(t *testing.T) string {
	t.Helper()
	p := builtLibrary(t)
	resetLibrary()
	defer resetLibrary()
	l, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if ds, err := l.Devices(); err != nil || len(ds) == 0 || ds[0].Name != "graphgram host emulation" {
		t.Skipf("needs the host-emulated library: %s has %v, %v", p, ds, err)
	}
	return p
}

// libraryGram is a small marginalized Gram matrix and the CPU's, to compute
// on a library's device 0.
type libraryGram struct {
	X   []*graph.Graph
	opt mgk.Options
	cpu []float64
}

func newLibraryGram(t *testing.T) libraryGram {
	rng := rand.New(rand.NewPCG(53, 5))
	g := libraryGram{X: []*graph.Graph{testgraphs.Random(rng, 5, 7, false), testgraphs.Random(rng, 8, 11, true)}, opt: validOptions()}
	g.cpu = make([]float64, len(g.X)*len(g.X))
	if _, err := mgk.Gram(g.X, nil, nil, nil, true, g.opt, g.cpu, nil); err != nil {
		t.Fatal(err)
	}
	return g
}

// check computes the Gram matrix on l's device 0 and compares it with the
// CPU's.
func (g libraryGram) check(l *Library) error {
	out := make([]float64, len(g.cpu))
	if _, err := l.MarginalizedGram(g.X, nil, nil, nil, true, g.opt, 0, Float64, out); err != nil {
		return err
	}
	for k := range out {
		if math.Abs(out[k]-g.cpu[k]) > accuracy.MGK64*math.Abs(g.cpu[k]) {
			return errors.New("entries differ from the CPU's")
		}
	}
	return nil
}

// TestOpenPerPath: two libraries in one process, opened in either order,
// each call computing with the one it names: the emulated library computes
// while a nonexistent path fails with ErrNoLibrary naming that path, before
// and after the other is opened; a second Open of a path returns its first
// outcome (the same Library, or its error); and the deprecated
// SetLibraryPath switches the package-level functions between them at any
// time, not only before the first load, without changing either Library.
func TestOpenPerPath(t *testing.T) {
	emu := emulatedPath(t)
	missing := filepath.Join(t.TempDir(), "absent", "libggcuda.so")
	g := newLibraryGram(t)
	defer resetLibrary()
	for _, order := range []struct {
		name  string
		paths []string
	}{
		{"emulated first", []string{emu, missing}},
		{"missing first", []string{missing, emu}},
		{"emulated, missing, emulated", []string{emu, missing, emu}},
		{"missing, emulated, missing", []string{missing, emu, missing}},
	} {
		t.Run(order.name, func(t *testing.T) {
			resetLibrary()
			first := map[string]*Library{}
			for round := range 2 {
				for _, p := range order.paths {
					l, err := Open(p)
					if p == missing {
						if l != nil || !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), missing) {
							t.Errorf("round %d: Open(missing) = %v, %v; want ErrNoLibrary naming %s", round, l, err, missing)
						}
						continue
					}
					if err != nil {
						t.Fatalf("round %d: Open(emulated): %v", round, err)
					}
					if f, ok := first[p]; ok && f != l {
						t.Errorf("round %d: a second Open(emulated) gave another Library", round)
					}
					first[p] = l
					if l.Path() != libKey(emu) {
						t.Errorf("Path() = %q, want %q", l.Path(), libKey(emu))
					}
					if err := g.check(l); err != nil {
						t.Errorf("round %d: the emulated library: %v", round, err)
					}
				}
			}
			// The deprecated wrapper: the package-level functions use the
			// library last set, whichever was loaded first.
			for _, p := range order.paths {
				SetLibraryPath(p)
				if LibraryPath() != libKey(p) {
					t.Errorf("LibraryPath() = %q after SetLibraryPath(%q)", LibraryPath(), p)
				}
				ok, why := Available()
				if want := p == emu; ok != want || !want && !strings.Contains(why, missing) {
					t.Errorf("SetLibraryPath(%q): Available() = %v, %q", p, ok, why)
				}
				out := make([]float64, len(g.cpu))
				_, err := MarginalizedGram(g.X, nil, nil, nil, true, g.opt, 0, Float64, out)
				if (err == nil) != (p == emu) || p == missing && !errors.Is(err, ErrNoLibrary) {
					t.Errorf("SetLibraryPath(%q): MarginalizedGram: %v", p, err)
				}
			}
			if l, err := Open(emu); err != nil || l != first[emu] {
				t.Errorf("Open(emulated) after SetLibraryPath: %v, %v; want the first Library", l, err)
			} else if err := g.check(l); err != nil {
				t.Errorf("the emulated library after SetLibraryPath(missing): %v", err)
			}
		})
	}
}

// TestOpenSameAndOtherFile: paths that name one file (spelled with "." and
// "..", or a symbolic link) give one Library; a copy of the file is another
// library, loaded on its own, whose devices keep their own state: memory
// kept after a call on one is not the other's, and releasing one leaves the
// other's.
func TestOpenSameAndOtherFile(t *testing.T) {
	emu := emulatedPath(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "link.so")
	if err := os.Symlink(emu, link); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "copy.so")
	copyFile(t, emu, cp)
	g := newLibraryGram(t)
	defer resetLibrary()
	resetLibrary()
	a, err := Open(emu)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Dir(emu) + "/./" + filepath.Base(emu),
		filepath.Dir(emu) + "/../" + filepath.Base(filepath.Dir(emu)) + "/" + filepath.Base(emu),
		link,
	} {
		if l, err := Open(p); err != nil || l != a {
			t.Errorf("Open(%q) = %p, %v; want the Library of %s (%p)", p, l, err, emu, a)
		}
	}
	b, err := Open(cp)
	if err != nil {
		t.Fatal(err)
	}
	if b == a || b.Path() != cp {
		t.Fatalf("the copy: Library %p at %q, the original's %p", b, b.Path(), a)
	}
	kept := func(l *Library) int64 {
		d, p, err := l.CachedMemory(0)
		if err != nil {
			t.Fatal(err)
		}
		return d + p
	}
	if _, _, err := a.ReleaseMemory(0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.ReleaseMemory(0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		run, idle *Library
	}{{"original", a, b}, {"copy", b, a}} {
		if err := g.check(c.run); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if kept(c.run) == 0 || kept(c.idle) != 0 {
			t.Errorf("after a call on the %s: %d bytes kept there, %d by the other library (want > 0, 0)", c.name, kept(c.run), kept(c.idle))
		}
		if _, _, err := c.run.ReleaseMemory(0); err != nil {
			t.Fatal(err)
		}
	}
}

// copyFile copies the file from to the new file to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	r, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLibKey: the paths Open compares and loads.
func TestLibKey(t *testing.T) {
	for _, c := range []struct {
		path, env, want string
	}{
		{"", "", "libggcuda.so"},
		{"", "/opt/gg/lib/../libggcuda.so", "/opt/gg/libggcuda.so"},
		{"/a/b.so", "/opt/gg/libggcuda.so", "/a/b.so"},
		{"libggcuda.so", "", "libggcuda.so"},
		{"libggcuda_emu.so", "", "libggcuda_emu.so"},
		{"./libggcuda.so", "", "./libggcuda.so"},
		{"build/../libggcuda.so", "", "./libggcuda.so"},
		{"build//x/./libggcuda.so", "", "build/x/libggcuda.so"},
		{"/a//b/../c/lib.so", "", "/a/c/lib.so"},
	} {
		t.Setenv("GRAPHGRAM_CUDA_LIB", c.env)
		if got := libKey(c.path); got != c.want {
			t.Errorf("libKey(%q) with $GRAPHGRAM_CUDA_LIB=%q = %q, want %q", c.path, c.env, got, c.want)
		}
	}
}

// TestLibraryZero: a Library that Open did not return fails with
// ErrNoLibrary instead of calling into no library.
func TestLibraryZero(t *testing.T) {
	for _, c := range []struct {
		name string
		l    *Library
	}{{"nil", nil}, {"zero", new(Library)}} {
		if err := c.l.Check(0); !errors.Is(err, ErrNoLibrary) {
			t.Errorf("%s: Check: %v", c.name, err)
		}
		if _, err := c.l.WarmUp(0); !errors.Is(err, ErrNoLibrary) {
			t.Errorf("%s: WarmUp: %v", c.name, err)
		}
		if _, _, err := c.l.CachedMemory(0); !errors.Is(err, ErrNoLibrary) {
			t.Errorf("%s: CachedMemory: %v", c.name, err)
		}
		if _, err := c.l.MarginalizedGram(nil, nil, nil, nil, true, validOptions(), 0, Float64, nil); !errors.Is(err, ErrNoLibrary) {
			t.Errorf("%s: MarginalizedGram: %v", c.name, err)
		}
		if err := c.l.EmulatedLaunchTimeout(0); !errors.Is(err, ErrNoLibrary) {
			t.Errorf("%s: EmulatedLaunchTimeout: %v", c.name, err)
		}
	}
}
