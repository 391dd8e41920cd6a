package sparsegram

import (
	"cmp"
	"slices"
)

// The engine splits the feature columns in two. The few that most rows hold
// (WL's iteration-0 and -1 labels) form a dense panel whose Gram block is a
// small dense matrix product, done with register-tiled SIMD kernels; the many
// rare ones are scattered through an inverted index, whose work is
// Σ_f n_f^X·n_f^Y for n_f the rows holding f. A column is worth a panel slot
// when its scatter work exceeds the panel's work per column, nx·ny·ρ, where ρ
// is the ratio of a panel multiply-add (one SIMD lane) to a scattered one.

// densityCut is ρ: a column joins the panel when n_f^X·n_f^Y > ρ·nx·ny.
// Measured on NCI1-like WL features (4,100 rows, panel widths 0..800 forced,
// see BenchmarkPanelWidth): with the AVX-512 kernels the symmetric SumProduct
// Gram is fastest for panels of 100–300 columns, which is ρ ≈ 0.002–0.01;
// with the portable kernels a panel multiply-add costs ~8× more.
func densityCut() float64 {
	if simdLanes() > 1 {
		return 0.004
	}
	return 0.03
}

// maxPanel caps the panel's width: past it the scatter work left is tiny next
// to the panel's, whatever the data.
const maxPanel = 2048

// maxPanelValue is the largest count a panel column may hold: larger counts
// would soon push the float32 panel sums past 2^24. Such columns stay sparse,
// where float64 sums are exact to 2^53.
const maxPanelValue = 1 << 12

// forcePanel, when >= 0, overrides the panel width (a test hook).
var forcePanel = -1

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
// over the columns where in(c) holds.
func rowNorms(f *Features, in func(c int32) bool) (l1, linf float64) {
	for r := 0; r < f.Rows(); r++ {
		s := 0.0
		for k := f.Ptr[r]; k < f.Ptr[r+1]; k++ {
			if in(f.Col[k]) {
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
// in holds: every partial sum of nonnegative terms is at most the total, so
// sums below 2^24 (float32) or 2^53 (float64) are exact in any order.
// Σ_f x_f·y_f ≤ ‖x‖₁‖y‖∞ and Σ_f min(x_f, y_f) ≤ min(‖x‖₁, ‖y‖₁).
func bound(X, Y *Features, s Semiring, in func(c int32) bool) float64 {
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
func choosePanel(X, Y *Features, s Semiring) []int32 {
	sx := statsOf(X)
	sy := sx
	if Y != X {
		sy = statsOf(Y)
	}
	nx, ny := float64(X.Rows()), float64(Y.Rows())
	var cand []int32
	for c := range int32(X.NumCols) {
		if sx.rows[c] > 0 && sy.rows[c] > 0 && max(sx.max[c], sy.max[c]) <= maxPanelValue {
			cand = append(cand, c)
		}
	}
	work := func(c int32) float64 { return float64(sx.rows[c]) * float64(sy.rows[c]) }
	slices.SortFunc(cand, func(a, b int32) int {
		if c := cmp.Compare(work(b), work(a)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	width := 0
	if forcePanel >= 0 {
		width = min(forcePanel, len(cand))
	} else {
		cut := densityCut() * nx * ny
		for width < len(cand) && width < maxPanel && work(cand[width]) > cut {
			width++
		}
	}
	in := make([]bool, X.NumCols)
	for width > 0 {
		clear(in)
		for _, c := range cand[:width] {
			in[c] = true
		}
		if bound(X, Y, s, func(c int32) bool { return in[c] }) < 1<<24 {
			break
		}
		width /= 2
	}
	return cand[:width]
}
