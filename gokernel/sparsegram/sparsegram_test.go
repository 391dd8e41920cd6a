package sparsegram

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphgram/graphgram/gokernel/schedule"
)

type pairCase struct {
	name string
	X, Y *Features
}

// testCases covers the shapes and value ranges Gram must handle exactly.
func testCases() []pairCase {
	rng := rand.New(rand.NewPCG(11, 12))
	z := func(rows, cols int, perRow, alpha float64, maxCount uint32, empty float64, big uint32) *Features {
		return zipfFeatures(rng, rows, cols, perRow, alpha, maxCount, empty, big)
	}
	empty := func(rows, cols int) *Features {
		return &Features{NumCols: cols, Ptr: make([]int, rows+1)}
	}
	sub := func(f *Features, rows int) *Features {
		return &Features{NumCols: f.NumCols, Ptr: f.Ptr[:rows+1], Col: f.Col[:f.Ptr[rows]], Val: f.Val[:f.Ptr[rows]]}
	}
	zx := z(23, 300, 12, 1.1, 20, 0.1, 0)
	return []pairCase{
		{"all-empty", empty(9, 5), empty(4, 5)},
		{"no-columns", empty(3, 0), empty(2, 0)},
		{"zero-rows", empty(0, 7), z(5, 7, 3, 1, 5, 0, 0)},
		{"zero-rows-y", z(5, 7, 3, 1, 5, 0, 0), empty(0, 7)},
		{"one-row", z(1, 40, 10, 1, 20, 0, 0), z(1, 40, 10, 1, 20, 0, 0)},
		{"zipf", zx, z(41, 300, 12, 1.1, 20, 0.1, 0)},
		{"zipf-dense", z(150, 60, 30, 0.8, 20, 0.05, 0), z(70, 60, 30, 0.8, 20, 0.05, 0)},
		{"zipf-wide", z(130, 5000, 40, 1.2, 20, 0.2, 0), z(20, 5000, 40, 1.2, 20, 0.2, 0)},
		{"big-counts", z(80, 200, 15, 1.1, 20, 0.1, 4000), z(33, 200, 15, 1.1, 20, 0.1, 4000)},
		{"huge-counts", z(60, 200, 15, 1.1, 20, 0.1, 1<<20), z(31, 200, 15, 1.1, 20, 0.1, 1<<20)},
		{"beyond-2^53", z(30, 100, 10, 1.1, 20, 0, 3_000_000_000), z(12, 100, 10, 1.1, 20, 0, 3_000_000_000)},
		{"nci1-like", sub(nci1Like(3), 200), sub(nci1Like(4), 90)},
	}
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

// TestGramAgainstReference checks every entry of Gram against the merge of
// row pairs, exactly, for both semirings, symmetric or not, one or three
// goroutines, panels of no, some and all columns, both row orders, and the
// SIMD and portable kernels. out starts as NaN so a missed entry fails too.
func TestGramAgainstReference(t *testing.T) {
	for _, tc := range testCases() {
		for _, s := range []Semiring{SumProduct, SumMin} {
			for _, sym := range []bool{true, false} {
				Y := tc.Y
				if sym {
					Y = tc.X
				}
				want := nanSlice(tc.X.Rows() * Y.Rows())
				if err := referenceGram(tc.X, Y, sym, Options{Semiring: s, NJobs: 1}, want); err != nil {
					t.Fatal(err)
				}
				for _, panel := range []int{-1, 0, 3, 1 << 30} {
					for _, kern := range []string{"best", "avx2", "portable"} {
						for _, jobs := range []int{1, 3} {
							tune := tuning{panel: panel, panelForced: panel >= 0, kernels: map[string]kernelSet{
								"best": bestKernels, "avx2": noAVX512Kernels, "portable": portableKernels}[kern]}
							name := fmt.Sprintf("%s/s%d/sym=%v/panel=%d/kernel=%s/jobs=%d", tc.name, s, sym, panel, kern, jobs)
							got := nanSlice(len(want))
							err := Gram(tc.X, tc.Y, sym, Options{Semiring: s, NJobs: jobs, tune: tune}, got)
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							for k := range want {
								if got[k] != want[k] {
									t.Fatalf("%s: entry (%d, %d) = %v, want %v", name, k/Y.Rows(), k%Y.Rows(), got[k], want[k])
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestPanelKernels checks the tile kernels in use against the portable ones
// on random tiles with all panel lengths 0..40.
func TestPanelKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []Semiring{SumProduct, SumMin, SumProduct + 2, SumMin + 2} {
		set := bestKernels
		if s >= 2 {
			set = noAVX512Kernels // the AVX2 kernels, where the CPU has them
		}
		s %= 2
		kern, nr := kernelFor(s, set)
		ref := prodGo(nr)
		if s == SumMin {
			ref = minGo(nr)
		}
		for F := 0; F <= 40; F++ {
			ap, bp := make([]float32, F*mr), make([]float32, F*nr)
			for k := range ap {
				ap[k] = float32(rng.IntN(4) * rng.IntN(30))
			}
			for k := range bp {
				bp[k] = float32(rng.IntN(4) * rng.IntN(30))
			}
			var got, want [mr * maxNR]float32
			kern(ap, bp, F, &got)
			ref(ap, bp, F, &want)
			if got != want {
				t.Fatalf("semiring %d, F = %d: kernel and portable kernel differ", s, F)
			}
		}
	}
}

func TestDiag(t *testing.T) {
	for _, tc := range testCases() {
		for _, s := range []Semiring{SumProduct, SumMin} {
			got := nanSlice(tc.X.Rows())
			if err := Diag(tc.X, Options{Semiring: s}, got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if want := float64(rowPair(tc.X, i, tc.X, i, s)); got[i] != want {
					t.Fatalf("%s: Diag[%d] = %v, want %v", tc.name, i, got[i], want)
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	a := &Features{NumCols: 3, Ptr: []int{0, 1}, Col: []int32{2}, Val: []uint32{1}}
	b := &Features{NumCols: 4, Ptr: []int{0, 0}}
	if err := Gram(a, b, false, Options{}, make([]float64, 1)); err == nil {
		t.Error("mismatched NumCols: no error")
	}
	if err := Gram(a, a, false, Options{}, make([]float64, 2)); err == nil {
		t.Error("wrong len(out): no error")
	}
	if err := Gram(a, nil, true, Options{}, make([]float64, 0)); err == nil {
		t.Error("wrong len(out), symmetric: no error")
	}
	bad := &Features{NumCols: 3, Ptr: []int{0, 2}, Col: []int32{2, 1}, Val: []uint32{1, 1}}
	if err := Gram(bad, a, false, Options{}, make([]float64, 1)); err == nil {
		t.Error("unsorted columns: no error")
	}
	if err := Gram(a, bad, false, Options{}, make([]float64, 1)); err == nil {
		t.Error("unsorted columns in Y: no error")
	}
	if err := Diag(a, Options{}, nil); err == nil {
		t.Error("Diag, wrong len(out): no error")
	}
}

// TestProgress checks that done reaches total on success.
func TestProgress(t *testing.T) {
	for _, tc := range testCases() {
		for _, sym := range []bool{true, false} {
			ctl := schedule.NewControl()
			Y := tc.Y
			if sym {
				Y = tc.X
			}
			if err := Gram(tc.X, tc.Y, sym, Options{Control: ctl, NJobs: 2}, make([]float64, tc.X.Rows()*Y.Rows())); err != nil {
				t.Fatal(err)
			}
			if done, total := ctl.Progress(); done != total {
				t.Errorf("%s, symmetric %v: done %d of %d", tc.name, sym, done, total)
			}
		}
	}
}

// TestCancel cancels before the start and from a task in the middle (through
// the tuning's blockHook, so the test does not depend on timing): Gram must
// stop and return ErrCancelled.
func TestCancel(t *testing.T) {
	X := nci1Like(5)
	X = &Features{NumCols: X.NumCols, Ptr: X.Ptr[:1001], Col: X.Col[:X.Ptr[1000]], Val: X.Val[:X.Ptr[1000]]}
	out := make([]float64, 1000*1000)
	for _, s := range []Semiring{SumProduct, SumMin} {
		ctl := schedule.NewControl()
		ctl.Cancel()
		if err := Gram(X, nil, true, Options{Semiring: s, Control: ctl}, out); !errors.Is(err, schedule.ErrCancelled) {
			t.Errorf("cancelled before the start: got %v", err)
		}
		for _, sym := range []bool{true, false} {
			ctl = schedule.NewControl()
			hook := func(b int) {
				if b == 2 {
					go ctl.Cancel()
					for !ctl.Cancelled() {
					}
				}
			}
			err := Gram(X, X, sym, Options{Semiring: s, Control: ctl, NJobs: 2, tune: tuning{blockHook: hook}}, out)
			if !errors.Is(err, schedule.ErrCancelled) {
				t.Errorf("cancelled from another goroutine: got %v", err)
			}
			if done, total := ctl.Progress(); done >= total {
				t.Errorf("cancelled, yet done %d of %d", done, total)
			}
		}
	}
}

// TestUnary checks the identity behind BenchmarkSumMinUnary.
func TestUnary(t *testing.T) {
	for _, tc := range testCases()[:8] {
		n := tc.X.Rows()
		want, got := make([]float64, n*n), make([]float64, n*n)
		if err := Gram(tc.X, nil, true, Options{Semiring: SumMin}, want); err != nil {
			t.Fatal(err)
		}
		if err := Gram(unary(tc.X), nil, true, Options{Semiring: SumProduct}, got); err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%s: entry %d: unary %v, min %v", tc.name, k, got[k], want[k])
			}
		}
	}
}

// TestNCI1 checks the engine on real WL features: the first 400 graphs of
// NCI1 (skipped when the data set is absent) against the first 100.
func TestNCI1(t *testing.T) {
	f := nci1WL(t)
	sub := func(rows int) *Features {
		return &Features{NumCols: f.NumCols, Ptr: f.Ptr[:rows+1], Col: f.Col[:f.Ptr[rows]], Val: f.Val[:f.Ptr[rows]]}
	}
	X, Y := sub(400), sub(100)
	for _, s := range []Semiring{SumProduct, SumMin} {
		for _, sym := range []bool{true, false} {
			ny := Y.Rows()
			if sym {
				ny = X.Rows()
			}
			want, got := make([]float64, X.Rows()*ny), nanSlice(X.Rows()*ny)
			if err := referenceGram(X, map[bool]*Features{true: X, false: Y}[sym], sym, Options{Semiring: s}, want); err != nil {
				t.Fatal(err)
			}
			if err := Gram(X, Y, sym, Options{Semiring: s}, got); err != nil {
				t.Fatal(err)
			}
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("semiring %d, symmetric %v: entry %d = %v, want %v", s, sym, k, got[k], want[k])
				}
			}
		}
	}
}
