package graph

import (
	"math"
	"testing"
)

// TestCompareContent: the content order is antisymmetric, 0 exactly for the
// same content (another *Graph included, and then the fingerprints agree),
// and tells apart every field and the extra vectors (nil from empty too).
func TestCompareContent(t *testing.T) {
	mk := func(n int, edges []int64, w, nf, ef []float64) *Graph {
		g, err := New(n, edges, w, nf, 1, ef, 1)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	base := mk(3, []int64{0, 1, 1, 2}, []float64{1, 2}, []float64{0, 1, 2}, []float64{5, 6})
	for _, tc := range []struct {
		name   string
		g      *Graph
		extraA [][]float64
		extraB [][]float64
		same   bool
	}{
		{"itself", base, nil, nil, true},
		{"a copy", mk(3, []int64{0, 1, 1, 2}, []float64{1, 2}, []float64{0, 1, 2}, []float64{5, 6}), nil, nil, true},
		{"a copy, equal extras", mk(3, []int64{0, 1, 1, 2}, []float64{1, 2}, []float64{0, 1, 2}, []float64{5, 6}), [][]float64{{1, 2}}, [][]float64{{1, 2}}, true},
		{"a node feature", mk(3, []int64{0, 1, 1, 2}, []float64{1, 2}, []float64{0, 1, 3}, []float64{5, 6}), nil, nil, false},
		{"an edge feature", mk(3, []int64{0, 1, 1, 2}, []float64{1, 2}, []float64{0, 1, 2}, []float64{5, 7}), nil, nil, false},
		{"a weight", mk(3, []int64{0, 1, 1, 2}, []float64{1, 2.5}, []float64{0, 1, 2}, []float64{5, 6}), nil, nil, false},
		{"an endpoint", mk(3, []int64{0, 1, 0, 2}, []float64{1, 2}, []float64{0, 1, 2}, []float64{5, 6}), nil, nil, false},
		{"-0", mk(3, []int64{0, 1, 1, 2}, []float64{1, 2}, []float64{0, 1, 2}, []float64{5, 6}), [][]float64{{0}}, [][]float64{{math.Copysign(0, -1)}}, false},
		{"nil and empty extras", base, [][]float64{nil}, [][]float64{{}}, false},
		{"extras split differently", base, [][]float64{{1}, {2}}, [][]float64{{1, 2}, nil}, false},
		{"a node more", mk(4, []int64{0, 1, 1, 2}, []float64{1, 2}, []float64{0, 1, 2, 0}, []float64{5, 6}), nil, nil, false},
	} {
		fa, fb := ContentFingerprint(base, tc.extraA...), ContentFingerprint(tc.g, tc.extraB...)
		ab := CompareContent(base, tc.extraA, tc.g, tc.extraB)
		ba := CompareContent(tc.g, tc.extraB, base, tc.extraA)
		if (ab == 0) != tc.same || ab != -ba {
			t.Errorf("%s: CompareContent %d and reversed %d, want same = %v", tc.name, ab, ba, tc.same)
		}
		if tc.same && fa != fb {
			t.Errorf("%s: the same content has fingerprints %x and %x", tc.name, fa, fb)
		}
	}
}

// TestCompareContentIsNumeric: the order compares floats as numbers, so that
// recoding labels by an increasing map (ranks among a call's labels, which
// differ between calls) keeps the order of every two graphs.
func TestCompareContentIsNumeric(t *testing.T) {
	mk := func(labels ...float64) *Graph {
		g, err := New(len(labels), nil, nil, labels, 1, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	recode := func(x float64) float64 { return 3*x*x + 1 } // increasing on x ≥ 0
	for _, tc := range [][2][]float64{
		{{0, 1, 2}, {0, 2, 1}},
		{{5, 0.5}, {5, 3}},
		{{2}, {10}},
		{{1e100}, {1e-100}},
		{{math.Copysign(0, -1)}, {0}},
		{{-3, 1}, {-2, 1}},
	} {
		a, b := mk(tc[0]...), mk(tc[1]...)
		want := CompareContent(a, nil, b, nil)
		var ra, rb []float64
		for _, x := range tc[0] {
			ra = append(ra, recode(math.Abs(x))*math.Copysign(1, x))
		}
		for _, x := range tc[1] {
			rb = append(rb, recode(math.Abs(x))*math.Copysign(1, x))
		}
		if got := CompareContent(mk(ra...), nil, mk(rb...), nil); got != want || want == 0 {
			t.Errorf("%v against %v: %d, recoded %d", tc[0], tc[1], want, got)
		}
	}
}
