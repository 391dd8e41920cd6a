package microkernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, spec string) Kernel {
	t.Helper()
	k, err := Parse(spec)
	if err != nil {
		t.Fatalf("Parse(%s): %v", spec, err)
	}
	return k
}

const convAB = `{"kind": "convolution", "col": 0, "width": 3, "values": [0, 1, 2], "kernel": {"kind": "kronecker_delta", "h": 0.5, "col": 0}}`
const table = `{"kind": "table", "col": 0, "labels": [1, 2], "matrix": [[1, 0.3], [0.3, 2]]}`

func TestValues(t *testing.T) {
	x := []float64{1, 2.0, 0.5, -1}
	y := []float64{1, 3.0, 0.5, 1}
	for _, tc := range []struct {
		spec string
		x, y []float64
		want float64
	}{
		{`{"kind": "constant", "c": 2.5}`, x, y, 2.5},
		{`{"kind": "kronecker_delta", "h": 0.3, "col": 0}`, x, y, 1},
		{`{"kind": "kronecker_delta", "h": 0.3, "col": 1}`, x, y, 0.3},
		{`{"kind": "kronecker_delta", "h": 0.3, "col": 2, "width": 2}`, x, y, 0.3},
		{`{"kind": "kronecker_delta", "h": 0.3, "col": 0, "width": 1}`, x, x, 1},
		{`{"kind": "square_exponential", "length_scale": 2.0, "col": 1}`, x, y, math.Exp(-1.0 / 8)},
		{`{"kind": "square_exponential", "length_scale": 1.0, "col": 1, "width": 3}`, x, y, math.Exp(-5.0 / 2)},
		{`{"kind": "brownian_bridge", "c": 3.0, "col": 1}`, x, y, 2},
		{`{"kind": "brownian_bridge", "c": 0.5, "col": 1}`, x, y, 0},
		{`{"kind": "sum", "terms": [{"kind": "constant", "c": 1}, {"kind": "kronecker_delta", "h": 0.25, "col": 1}]}`, x, y, 1.25},
		{`{"kind": "product", "terms": [{"kind": "constant", "c": 2}, {"kind": "kronecker_delta", "h": 0.25, "col": 1}]}`, x, y, 0.5},
		// normalized(c + δ): k(x,y) = 0.5 + h = 1 (column 1 differs), k(x,x) = k(y,y) = 1.5.
		{`{"kind": "normalized", "kernel": {"kind": "sum", "terms": [{"kind": "constant", "c": 0.5}, {"kind": "kronecker_delta", "h": 0.5, "col": 1}]}}`, x, y, 1 / 1.5},
		// normalized(δ·SE) between different points and of a point with itself.
		{`{"kind": "normalized", "kernel": {"kind": "product", "terms": [{"kind": "kronecker_delta", "h": 0.5, "col": 1}, {"kind": "square_exponential", "length_scale": 1, "col": 3}]}}`, x, y, 0.5 * math.Exp(-2)},
		{`{"kind": "normalized", "kernel": {"kind": "product", "terms": [{"kind": "kronecker_delta", "h": 0.5, "col": 1}, {"kind": "square_exponential", "length_scale": 1, "col": 3}]}}`, y, y, 1},
		{`{"kind": "dot_product", "sigma_0": 0.5, "col": 1, "width": 2}`, x, y, 0.25 + 6 + 0.25},
		// Multisets over a vocabulary of 3 values in columns 0..2: {a, a, b} against {b, c}.
		{convAB, []float64{2, 1, 0}, []float64{0, 1, 1}, (2*0.5 + 2*0.5 + 1*1 + 1*0.5) / 6},
		{convAB, []float64{2, 1, 0}, []float64{0, 0, 0}, 0},
		{convAB, []float64{0, 0, 0}, []float64{0, 0, 0}, 1},
		{convAB, []float64{0, 3, 0}, []float64{0, 1, 0}, 1},
		// Element values compared by a square exponential: |3 − 5| = 2.
		{`{"kind": "convolution", "col": 0, "width": 2, "values": [3, 5], "kernel": {"kind": "square_exponential", "length_scale": 2, "col": 0}}`,
			[]float64{1, 0}, []float64{0, 1}, math.Exp(-0.5)},
		{table, []float64{1}, []float64{2}, 0.3},
		{table, []float64{2}, []float64{2}, 2},
		{table, []float64{1}, []float64{7}, 0},
		{table, []float64{7}, []float64{7}, 1},
		{table, []float64{7}, []float64{8}, 0},
	} {
		k := mustParse(t, tc.spec)
		if got := k.Eval(tc.x, tc.y); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: Eval = %.17g, want %.17g", tc.spec, got, tc.want)
		}
		if got := k.Eval(tc.y, tc.x); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: not symmetric: %.17g", tc.spec, got)
		}
	}
}

// TestNormalizedZero: a zero self-similarity makes the normalized value and
// its gradient 0, not NaN. (brownian_bridge with c = 0 cannot be parsed, so the
// kernel is built directly.)
func TestNormalizedZero(t *testing.T) {
	k := &Normalized{K: &BrownianBridge{C: 0, Col: 0}}
	g := []float64{math.NaN()}
	if v := k.Eval([]float64{1}, []float64{1}); v != 0 {
		t.Errorf("Eval = %v, want 0", v)
	}
	if v := k.EvalGrad([]float64{1}, []float64{1}, g); v != 0 || g[0] != 0 {
		t.Errorf("EvalGrad = %v, grad %v; want 0 and [0]", v, g)
	}
}

func TestNumParamsMaxCol(t *testing.T) {
	for _, tc := range []struct {
		spec        string
		np, maxCols int
	}{
		{`{"kind": "constant", "c": 1}`, 1, 0},
		{`{"kind": "kronecker_delta", "h": 0.5, "col": 3}`, 1, 4},
		{`{"kind": "square_exponential", "length_scale": 1, "col": 1, "width": 3}`, 1, 4},
		{`{"kind": "brownian_bridge", "c": 1, "col": 2}`, 1, 3},
		{`{"kind": "normalized", "kernel": {"kind": "product", "terms": [
			{"kind": "kronecker_delta", "h": 0.3, "col": 0},
			{"kind": "sum", "terms": [{"kind": "square_exponential", "length_scale": 1, "col": 5}, {"kind": "constant", "c": 0.01}]}]}}`, 3, 6},
	} {
		k := mustParse(t, tc.spec)
		if k.NumParams() != tc.np || MaxCol(k) != tc.maxCols {
			t.Errorf("%s: NumParams %d MaxCol %d, want %d and %d", tc.spec, k.NumParams(), MaxCol(k), tc.np, tc.maxCols)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ spec, contains string }{
		{`not json`, "kernel expression"},
		{`{"kind": "gaussian"}`, `unknown kernel kind "gaussian"`},
		{`{}`, `unknown kernel kind ""`},
		{`{"kind": "constant"}`, `missing "c"`},
		{`{"kind": "constant", "c": -1}`, "out of range"},
		{`{"kind": "kronecker_delta"}`, `missing "h"`},
		{`{"kind": "kronecker_delta", "h": -0.1}`, "out of range"},
		{`{"kind": "square_exponential", "length_scale": 0}`, "out of range"},
		{`{"kind": "brownian_bridge", "c": 0}`, "out of range"},
		{`{"kind": "kronecker_delta", "h": 0.5, "col": -1}`, "bad columns"},
		{`{"kind": "kronecker_delta", "h": 0.5, "width": 0}`, "bad columns"},
		{`{"kind": "sum", "terms": []}`, "no terms"},
		{`{"kind": "product"}`, "no terms"},
		{`{"kind": "sum", "terms": [{"kind": "constant"}]}`, `missing "c"`},
		{`{"kind": "normalized"}`, `missing "kernel"`},
		{`{"kind": "normalized", "kernel": {"kind": "nope"}}`, "unknown kernel kind"},
		{`{"kind": "constant", "c": "one"}`, "kernel expression"},
		{`{"kind": "dot_product"}`, `missing "sigma_0"`},
		{`{"kind": "convolution", "values": [1]}`, `missing "kernel"`},
		{`{"kind": "convolution", "width": 2, "values": [1], "kernel": {"kind": "constant", "c": 1}}`, "1 values for width 2"},
		{`{"kind": "convolution", "values": [1], "kernel": {"kind": "kronecker_delta", "h": 0.5, "col": 1}}`, "column 0 only"},
		{`{"kind": "table", "labels": [], "matrix": []}`, "0 labels"},
		{`{"kind": "table", "labels": [1, 1], "matrix": [[1, 0], [0, 1]]}`, "appears twice"},
		{`{"kind": "table", "labels": [1, 2], "matrix": [[1, 0.5], [0.4, 1]]}`, "not symmetric"},
		{`{"kind": "table", "labels": [1, 2], "matrix": [[1, 0.5], [0.5]]}`, "a row of 1 values"},
		{`{"kind": "table", "labels": [1], "matrix": [[1]], "width": 2}`, "width 2"},
	} {
		_, err := Parse(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("Parse(%s): error %v, want one containing %q", tc.spec, err, tc.contains)
		}
	}
}

// params returns pointers to k's hyperparameters in depth-first leaf order.
func params(k Kernel) []*float64 {
	switch k := k.(type) {
	case *Constant:
		return []*float64{&k.C}
	case *KroneckerDelta:
		return []*float64{&k.H}
	case *SquareExponential:
		return []*float64{&k.LengthScale}
	case *BrownianBridge:
		return []*float64{&k.C}
	case *DotProduct:
		return []*float64{&k.Sigma0}
	case *Convolution:
		return params(k.K)
	case *Table:
		return nil
	case *Sum:
		var ps []*float64
		for _, t := range k.Terms {
			ps = append(ps, params(t)...)
		}
		return ps
	case *Product:
		var ps []*float64
		for _, t := range k.Terms {
			ps = append(ps, params(t)...)
		}
		return ps
	case *Normalized:
		return params(k.K)
	}
	panic(fmt.Sprintf("unknown kernel %T", k))
}

func TestEvalGradFiniteDifferences(t *testing.T) {
	pts := [][]float64{
		{0, 0.3, 1.0, 2, 0, 1},
		{0, -0.4, 1.5, 0, 0, 0},
		{1, 0.3, -0.2, 1, 1, 0},
		{2, 1.1, 0.4, 0, 3, 2},
	}
	for _, spec := range []string{
		`{"kind": "constant", "c": 0.7}`,
		`{"kind": "kronecker_delta", "h": 0.3, "col": 0}`,
		`{"kind": "kronecker_delta", "h": 0.3, "col": 0, "width": 2}`,
		`{"kind": "square_exponential", "length_scale": 0.8, "col": 1}`,
		`{"kind": "square_exponential", "length_scale": 1.3, "col": 1, "width": 2}`,
		`{"kind": "brownian_bridge", "c": 2.5, "col": 2}`,
		`{"kind": "sum", "terms": [{"kind": "kronecker_delta", "h": 0.3, "col": 0}, {"kind": "square_exponential", "length_scale": 0.5, "col": 1}]}`,
		`{"kind": "product", "terms": [{"kind": "kronecker_delta", "h": 0.3, "col": 0}, {"kind": "square_exponential", "length_scale": 0.5, "col": 1}, {"kind": "constant", "c": 2}]}`,
		`{"kind": "product", "terms": [{"kind": "kronecker_delta", "h": 0, "col": 0}, {"kind": "brownian_bridge", "c": 3, "col": 2}]}`,
		`{"kind": "normalized", "kernel": {"kind": "product", "terms": [{"kind": "kronecker_delta", "h": 0.3, "col": 0},
			{"kind": "sum", "terms": [{"kind": "square_exponential", "length_scale": 1.0, "col": 1}, {"kind": "constant", "c": 0.01}]}]}}`,
		`{"kind": "normalized", "kernel": {"kind": "sum", "terms": [{"kind": "kronecker_delta", "h": 0.3, "col": 0}, {"kind": "square_exponential", "length_scale": 0.05, "col": 1}]}}`,
		`{"kind": "sum", "terms": [{"kind": "normalized", "kernel": {"kind": "brownian_bridge", "c": 2, "col": 1}}, {"kind": "product", "terms": [{"kind": "constant", "c": 0.5}, {"kind": "square_exponential", "length_scale": 2, "col": 2}]}]}`,
		`{"kind": "dot_product", "sigma_0": 0.7, "col": 1, "width": 2}`,
		`{"kind": "normalized", "kernel": {"kind": "dot_product", "sigma_0": 0.7, "col": 0, "width": 3}}`,
		`{"kind": "convolution", "col": 3, "width": 3, "values": [0, 1, 2], "kernel": {"kind": "kronecker_delta", "h": 0.4, "col": 0}}`,
		`{"kind": "normalized", "kernel": {"kind": "convolution", "col": 3, "width": 3, "values": [3, 5, 6],
			"kernel": {"kind": "product", "terms": [{"kind": "square_exponential", "length_scale": 1.5, "col": 0}, {"kind": "constant", "c": 0.5}]}}}`,
		`{"kind": "product", "terms": [{"kind": "table", "col": 0, "labels": [0, 1, 2], "matrix": [[1, 0.2, 0.1], [0.2, 1, 0.3], [0.1, 0.3, 1]]},
			{"kind": "square_exponential", "length_scale": 0.8, "col": 1}]}`,
	} {
		k := mustParse(t, spec)
		ps := params(k)
		if len(ps) != k.NumParams() {
			t.Fatalf("%s: %d parameters found, NumParams %d", spec, len(ps), k.NumParams())
		}
		grad := make([]float64, k.NumParams())
		for _, x := range pts {
			for _, y := range pts {
				v := k.EvalGrad(x, y, grad)
				if e := k.Eval(x, y); v != e {
					t.Errorf("%s: EvalGrad value %.17g, Eval %.17g", spec, v, e)
				}
				for p, ptr := range ps {
					orig := *ptr
					h := 1e-6 * math.Max(1, math.Abs(orig))
					*ptr = orig + h
					up := k.Eval(x, y)
					*ptr = orig - h
					down := k.Eval(x, y)
					*ptr = orig
					fd := (up - down) / (2 * h)
					if math.Abs(grad[p]-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
						t.Errorf("%s at %v, %v: ∂k/∂θ%d = %.10g, finite differences %.10g", spec, x, y, p, grad[p], fd)
					}
				}
			}
		}
	}
}

func TestParseIndexed(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		index []int
	}{
		{`{"kind": "constant", "c": 1, "index": 4}`, []int{4}},
		{`{"kind": "constant", "c": 1}`, []int{-1}},
		{`{"kind": "product", "terms": [{"kind": "kronecker_delta", "h": 0.5, "col": 0, "index": 2},
			{"kind": "normalized", "kernel": {"kind": "square_exponential", "length_scale": 1, "col": 1, "index": 0}},
			{"kind": "brownian_bridge", "c": 2, "col": 2, "index": 1}]}`, []int{2, 0, 1}},
	} {
		k, index, err := ParseIndexed(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if k.NumParams() != len(index) || !slices.Equal(index, tc.index) {
			t.Errorf("%s: index %v (NumParams %d), want %v", tc.spec, index, k.NumParams(), tc.index)
		}
	}
	deep := `{"kind": "constant", "c": 1}`
	for i := 0; i < 100; i++ {
		deep = `{"kind": "normalized", "kernel": ` + deep + `}`
	}
	if _, err := Parse(deep); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep expression: error %v", err)
	}
}

// FuzzParse checks that any byte string either parses into a kernel whose
// parameter count matches its index list and that evaluates without panicking
// on rows wide enough for it, or is rejected with an error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"kind": "constant", "c": 1}`,
		`{"kind": "kronecker_delta", "h": 0.5, "col": 1, "index": 0}`,
		`{"kind": "square_exponential", "length_scale": 2, "col": 0, "width": 3}`,
		`{"kind": "sum", "terms": [{"kind": "brownian_bridge", "c": 3, "col": 0}, {"kind": "constant", "c": 2}]}`,
		`{"kind": "normalized", "kernel": {"kind": "product", "terms": [{"kind": "constant", "c": 0}]}}`,
		`{"kind": "dot_product", "sigma_0": 1, "col": 0, "width": 2, "index": 0}`,
		convAB,
		`{"kind": "convolution", "col": 1, "width": 2, "values": [3, 5], "kernel": {"kind": "square_exponential", "length_scale": 2, "col": 0}}`,
		table,
		`{"kind": "normalized", "kernel": {"kind": "table", "col": 1, "labels": [0], "matrix": [[0]]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		k, index, err := ParseIndexed(spec)
		if err != nil {
			return
		}
		if k.NumParams() != len(index) {
			t.Fatalf("%s: %d parameters, %d indices", spec, k.NumParams(), len(index))
		}
		w := MaxCol(k)
		if w > 1<<16 {
			return
		}
		x, y := make([]float64, w), make([]float64, w)
		for i := range y {
			y[i] = float64(i)
		}
		grad := make([]float64, k.NumParams())
		v := k.EvalGrad(x, y, grad)
		if e := k.Eval(x, y); e != v && !(math.IsNaN(e) && math.IsNaN(v)) {
			t.Fatalf("%s: Eval %v, EvalGrad %v", spec, e, v)
		}
	})
}

// TestEvalSymmetric: every kind is symmetric bit for bit, values and
// gradients: k(x, y) == k(y, x) exactly. The graph kernels rely on it: they
// solve each pair in one orientation whichever side each graph is on, and
// read call-wide tables transposed (gokernel/mgk's kernelTable.at).
func TestEvalSymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pts := make([][]float64, 12)
	for i := range pts {
		pts[i] = make([]float64, 6)
		for c := range pts[i] {
			switch c {
			case 0: // labels
				pts[i][c] = float64(rng.IntN(3))
			case 3, 4, 5: // counts, for convolution
				pts[i][c] = float64(rng.IntN(4)) * (0.5 + rng.Float64())
			default:
				pts[i][c] = rng.NormFloat64() * 3
			}
		}
	}
	for _, spec := range []string{
		`{"kind": "constant", "c": 0.7}`,
		`{"kind": "kronecker_delta", "h": 0.3, "col": 0, "width": 2}`,
		`{"kind": "square_exponential", "length_scale": 1.3, "col": 1, "width": 2}`,
		`{"kind": "brownian_bridge", "c": 2.5, "col": 2}`,
		`{"kind": "dot_product", "sigma_0": 0.7, "col": 1, "width": 3}`,
		`{"kind": "convolution", "col": 3, "width": 3, "values": [0.1, 1.3, 2.7], "kernel": {"kind": "square_exponential", "length_scale": 0.9, "col": 0}}`,
		`{"kind": "normalized", "kernel": {"kind": "convolution", "col": 3, "width": 3, "values": [3, 5, 6],
			"kernel": {"kind": "product", "terms": [{"kind": "square_exponential", "length_scale": 1.5, "col": 0}, {"kind": "constant", "c": 0.5}]}}}`,
		`{"kind": "product", "terms": [{"kind": "table", "col": 0, "labels": [0, 1, 2], "matrix": [[1, 0.2, 0.1], [0.2, 1, 0.3], [0.1, 0.3, 1]]},
			{"kind": "square_exponential", "length_scale": 0.8, "col": 1}]}`,
		`{"kind": "normalized", "kernel": {"kind": "sum", "terms": [{"kind": "kronecker_delta", "h": 0.3, "col": 0}, {"kind": "square_exponential", "length_scale": 0.05, "col": 1},
			{"kind": "product", "terms": [{"kind": "brownian_bridge", "c": 4, "col": 2}, {"kind": "dot_product", "sigma_0": 0.2, "col": 1, "width": 2}]}]}}`,
	} {
		k := mustParse(t, spec)
		gxy, gyx := make([]float64, k.NumParams()), make([]float64, k.NumParams())
		for _, x := range pts {
			for _, y := range pts {
				if a, b := k.Eval(x, y), k.Eval(y, x); a != b {
					t.Errorf("%s: Eval(x, y) = %.17g, Eval(y, x) = %.17g", spec, a, b)
				}
				a, b := k.EvalGrad(x, y, gxy), k.EvalGrad(y, x, gyx)
				if a != b || !slices.Equal(gxy, gyx) {
					t.Errorf("%s: EvalGrad(x, y) = %.17g %v, EvalGrad(y, x) = %.17g %v", spec, a, gxy, b, gyx)
				}
			}
		}
	}
}

func TestMustParse(t *testing.T) {
	spec := `{"kind":"kronecker_delta","h":0.5,"col":0}`
	want, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	x, y := []float64{1}, []float64{2}
	if got := MustParse(spec); got.Eval(x, y) != want.Eval(x, y) || got.Eval(x, x) != want.Eval(x, x) {
		t.Fatalf("MustParse(%s) = %v, Parse gives %v", spec, got, want)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustParse of a bad expression did not panic")
		}
	}()
	MustParse(`{"kind":"no such kernel"}`)
}
