package sparsegram

import (
	"cmp"
	"math"
	"slices"
)

// The engine splits the feature columns in two. The few that most rows hold
// (WL's iteration-0 and -1 labels) form a dense panel whose Gram block is a
// small dense matrix product, done with register-tiled SIMD kernels; the many
// rare ones are scattered through an inverted index, whose work is
// Σ_f n_f^X·n_f^Y for n_f the rows holding f. A column is worth a panel slot
// when its scatter work exceeds the panel's work per column, nx·ny·ρ, where ρ
// is the ratio of a panel multiply-add (one SIMD lane) to a scattered one.

// densityCut is ρ: a column joins the panel when n_f^X·n_f^Y > ρ·nx·ny. The
// panel time is flat from 25 to 100 columns on NCI1's WL features, so ρ need
// only be about right: 0.02 with the AVX-512 kernels, 0.04 with AVX2 (1.2–1.5
// times slower), and no panel at all with the portable kernels, whose fixed
// cost exceeds what a few columns save (BenchmarkPanelWidth; the numbers are
// in benchmarks/log/go_core_measurements.md).
func densityCut(k kernelSet) float64 {
	switch lanes := simdLanes(k); {
	case lanes >= 16:
		return 0.02
	case lanes >= 8:
		return 0.04
	}
	return math.Inf(1)
}

// maxPanel caps the panel's width: past it the scatter work left is tiny next
// to the panel's, whatever the data.
const maxPanel = 2048

// maxPanelValue is the largest count a panel column may hold: larger counts
// would soon push the float32 panel sums past 2^24. Such columns stay sparse,
// where float64 sums are exact to 2^53.
const maxPanelValue = 1 << 12

// colStats holds, per column, the rows holding it and its largest count.
type colStats struct {
	rows []int32
	max  []uint32
}

func statsOf(f *Features) colStats {
	s := colStats{rows: make([]int32, f.NumCols), max: make([]uint32, f.NumCols)}
	for k, c := range f.Col {
		s.rows[c]++
		s.max[c] = max(s.max[c], f.Val[k])
	}
	return s
}

// rowNorms returns the largest row sum (L1) and the largest count (L∞) of f
// over the columns where in holds (all when in is nil).
func rowNorms(f *Features, in []bool) (l1, linf float64) {
	for r := 0; r < f.Rows(); r++ {
		s := 0.0
		for k := f.Ptr[r]; k < f.Ptr[r+1]; k++ {
			if in == nil || in[f.Col[k]] {
				v := float64(f.Val[k])
				s += v
				linf = max(linf, v)
			}
		}
		l1 = max(l1, s)
	}
	return l1, linf
}

// bound returns an upper bound on every kernel value over the columns where
// in holds (all when in is nil): every partial sum of nonnegative terms is at most the total, so
// sums below 2^24 (float32) or 2^53 (float64) are exact in any order.
// Σ_f x_f·y_f ≤ ‖x‖₁‖y‖∞ and Σ_f min(x_f, y_f) ≤ min(‖x‖₁, ‖y‖₁).
func bound(X, Y *Features, s Semiring, in []bool) float64 {
	xl1, xinf := rowNorms(X, in)
	yl1, yinf := xl1, xinf
	if Y != X {
		yl1, yinf = rowNorms(Y, in)
	}
	if s == SumMin {
		return min(xl1, yl1)
	}
	return min(xl1*yinf, xinf*yl1)
}

// choosePanel returns the panel's columns, most widely held first. The panel
// is cut down, when needed, until its float32 sums are provably exact.
func choosePanel(X, Y *Features, s Semiring, t tuning) []int32 {
	sx := statsOf(X)
	sy := sx
	if Y != X {
		sy = statsOf(Y)
	}
	nx, ny := float64(X.Rows()), float64(Y.Rows())
	work := func(c int32) float64 { return float64(sx.rows[c]) * float64(sy.rows[c]) }
	// The candidates are the columns whose work passes cut; sorting only
	// those, not all ~10^5 columns, saves most of the planning time.
	pick := func(cut float64) []int32 {
		var cand []int32
		for c := range int32(X.NumCols) {
			if work(c) > cut && max(sx.max[c], sy.max[c]) <= maxPanelValue {
				cand = append(cand, c)
			}
		}
		return cand
	}
	var cand []int32
	if t.panelForced {
		// Lower the cut until t.panel columns pass it, or all do.
		cut := nx * ny
		for cand = pick(cut); len(cand) < t.panel && cut >= 1; cand = pick(cut) {
			cut /= 2
		}
		if len(cand) < t.panel {
			cand = pick(0)
		}
	} else {
		cand = pick(densityCut(t.kernels) * nx * ny)
	}
	slices.SortFunc(cand, func(a, b int32) int {
		if c := cmp.Compare(work(b), work(a)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// The packed panel takes F·(nx+ny) float32s: at most about the size of
	// the result (nx·ny float64s), which matters only for very unequal shapes.
	width := min(len(cand), maxPanel, max(1, int(2*nx*ny/(nx+ny))))
	if t.panelForced {
		width = min(t.panel, len(cand))
	}
	in := make([]bool, X.NumCols)
	for width > 0 {
		clear(in)
		for _, c := range cand[:width] {
			in[c] = true
		}
		if bound(X, Y, s, in) < 1<<24 {
			break
		}
		width /= 2
	}
	return cand[:width]
}
