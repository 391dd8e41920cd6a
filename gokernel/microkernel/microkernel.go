// Package microkernel implements the base kernels that compare two nodes or two
// edges by their feature rows, and their sums, products and normalization. A
// kernel is built from the JSON expression described in docs/abi.md.
package microkernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Kernel compares two feature rows.
type Kernel interface {
	// Eval returns k(x, y).
	Eval(x, y []float64) float64
	// NumParams returns the number of hyperparameters in this kernel and its children.
	NumParams() int
	// EvalGrad returns k(x, y) and writes ∂k/∂θ into grad[:NumParams()], hyperparameters
	// numbered depth-first over the leaves.
	EvalGrad(x, y, grad []float64) float64
	// maxCol returns one past the highest feature column read.
	maxCol() int
}

// Constant is c whatever its arguments.
type Constant struct{ C float64 }

// KroneckerDelta is 1 when the Width columns from Col are all equal, H otherwise.
type KroneckerDelta struct {
	H          float64
	Col, Width int
}

// SquareExponential is exp(-‖x−y‖²/(2ℓ²)) over the Width columns from Col.
type SquareExponential struct {
	LengthScale float64
	Col, Width  int
}

// BrownianBridge is max(0, C − |x−y|) on column Col.
type BrownianBridge struct {
	C   float64
	Col int
}

// DotProduct is σ0² + x·y over the Width columns from Col.
type DotProduct struct {
	Sigma0     float64
	Col, Width int
}

// Convolution compares two multisets stored as count (or weight) vectors: the
// Width columns from Col hold how many times each element of a vocabulary occurs,
// Values[i] is the value of element i, and K compares two element values (it reads
// column 0 of one-column rows). The value is the mean of K over all pairs of
// elements, Σᵢⱼ xᵢ yⱼ K(vᵢ, vⱼ) / (Σxᵢ · Σyⱼ); two empty multisets (total count ≤ 0)
// give 1 and an empty with a non-empty one 0, which keeps the kernel positive
// semi-definite (the empty multiset is one more, orthogonal, point).
type Convolution struct {
	K          Kernel
	Col, Width int
	Values     []float64
}

// Table looks the value up in a table over discrete labels: Labels[i] is the
// label of row and column i of the Len(Labels)² row-major Matrix. A label that
// is not in the table is similar (1) only to an equal label and 0 to anything
// else. It has no hyperparameters.
type Table struct {
	Col    int
	Labels []float64
	Matrix []float64
	pos    map[float64]int
}

// Sum is the sum of its terms.
type Sum struct{ Terms []Kernel }

// Product is the product of its terms.
type Product struct{ Terms []Kernel }

// Normalized is K(x,y)/sqrt(K(x,x)·K(y,y)), or 0 where either self-similarity is 0.
type Normalized struct{ K Kernel }

// Eval implements Kernel.
func (k *Constant) Eval(x, y []float64) float64 { return k.C }

// NumParams implements Kernel.
func (k *Constant) NumParams() int { return 1 }

// EvalGrad implements Kernel.
func (k *Constant) EvalGrad(x, y, grad []float64) float64 { grad[0] = 1; return k.C }
func (k *Constant) maxCol() int                           { return 0 }

func (k *KroneckerDelta) equal(x, y []float64) bool {
	for c := k.Col; c < k.Col+k.Width; c++ {
		if x[c] != y[c] {
			return false
		}
	}
	return true
}

// Eval implements Kernel.
func (k *KroneckerDelta) Eval(x, y []float64) float64 {
	if k.equal(x, y) {
		return 1
	}
	return k.H
}

// NumParams implements Kernel.
func (k *KroneckerDelta) NumParams() int { return 1 }

// EvalGrad implements Kernel.
func (k *KroneckerDelta) EvalGrad(x, y, grad []float64) float64 {
	if k.equal(x, y) {
		grad[0] = 0
		return 1
	}
	grad[0] = 1
	return k.H
}
func (k *KroneckerDelta) maxCol() int { return k.Col + k.Width }

func (k *SquareExponential) sqdist(x, y []float64) float64 {
	s := 0.0
	for c := k.Col; c < k.Col+k.Width; c++ {
		d := x[c] - y[c]
		s += d * d
	}
	return s
}

// Eval implements Kernel.
func (k *SquareExponential) Eval(x, y []float64) float64 {
	return math.Exp(-k.sqdist(x, y) / (2 * k.LengthScale * k.LengthScale))
}

// NumParams implements Kernel.
func (k *SquareExponential) NumParams() int { return 1 }

// EvalGrad implements Kernel.
func (k *SquareExponential) EvalGrad(x, y, grad []float64) float64 {
	d2 := k.sqdist(x, y)
	l := k.LengthScale
	v := math.Exp(-d2 / (2 * l * l))
	grad[0] = v * d2 / (l * l * l)
	return v
}
func (k *SquareExponential) maxCol() int { return k.Col + k.Width }

// Eval implements Kernel.
func (k *BrownianBridge) Eval(x, y []float64) float64 {
	return math.Max(0, k.C-math.Abs(x[k.Col]-y[k.Col]))
}

// NumParams implements Kernel.
func (k *BrownianBridge) NumParams() int { return 1 }

// EvalGrad implements Kernel.
func (k *BrownianBridge) EvalGrad(x, y, grad []float64) float64 {
	v := k.C - math.Abs(x[k.Col]-y[k.Col])
	if v <= 0 {
		grad[0] = 0
		return 0
	}
	grad[0] = 1
	return v
}
func (k *BrownianBridge) maxCol() int { return k.Col + 1 }

func (k *DotProduct) dot(x, y []float64) float64 {
	s := 0.0
	for c := k.Col; c < k.Col+k.Width; c++ {
		s += x[c] * y[c]
	}
	return s
}

// Eval implements Kernel.
func (k *DotProduct) Eval(x, y []float64) float64 { return k.Sigma0*k.Sigma0 + k.dot(x, y) }

// NumParams implements Kernel.
func (k *DotProduct) NumParams() int { return 1 }

// EvalGrad implements Kernel.
func (k *DotProduct) EvalGrad(x, y, grad []float64) float64 {
	grad[0] = 2 * k.Sigma0
	return k.Eval(x, y)
}
func (k *DotProduct) maxCol() int { return k.Col + k.Width }

func (k *Convolution) total(x []float64) float64 {
	s := 0.0
	for c := k.Col; c < k.Col+k.Width; c++ {
		s += x[c]
	}
	return s
}

// Eval implements Kernel.
func (k *Convolution) Eval(x, y []float64) float64 {
	return k.EvalGrad(x, y, nil)
}

// NumParams implements Kernel.
func (k *Convolution) NumParams() int { return k.K.NumParams() }

// EvalGrad implements Kernel; grad nil computes the value only.
func (k *Convolution) EvalGrad(x, y, grad []float64) float64 {
	np := k.K.NumParams()
	if grad != nil {
		clear(grad[:np])
	}
	nx, ny := k.total(x), k.total(y)
	if nx <= 0 || ny <= 0 {
		if nx <= 0 && ny <= 0 {
			return 1
		}
		return 0
	}
	var g []float64
	if grad != nil && np > 0 {
		g = make([]float64, np)
	}
	// Σ_ij x_i y_j κ(v_i, v_j) as Σ_i x_i y_i κ(v_i, v_i) + Σ_i<j (x_i y_j +
	// x_j y_i) κ(v_i, v_j): the same operations, bit for bit, with x and y
	// swapped (the graph kernels rely on it, see TestEvalSymmetric), and κ
	// evaluated once per pair of values.
	s := 0.0
	term := func(w float64, vi, vj []float64) {
		if g == nil {
			s += w * k.K.Eval(vi, vj)
			return
		}
		s += w * k.K.EvalGrad(vi, vj, g)
		for p, d := range g {
			grad[p] += w * d
		}
	}
	for i := 0; i < k.Width; i++ {
		xi, yi := x[k.Col+i], y[k.Col+i]
		vi := k.Values[i : i+1]
		if w := xi * yi; w != 0 {
			term(w, vi, vi)
		}
		for j := i + 1; j < k.Width; j++ {
			// The conversions round each product: Go may fuse a*b + c into one
			// FMA on arm64 (and does), which rounds only one of the two products
			// and breaks the x-y symmetry; amd64 never fuses.
			if w := float64(xi*y[k.Col+j]) + float64(x[k.Col+j]*yi); w != 0 {
				term(w, vi, k.Values[j:j+1])
			}
		}
	}
	n := nx * ny
	for p := range g {
		grad[p] /= n
	}
	return s / n
}
func (k *Convolution) maxCol() int { return k.Col + k.Width }

// NewTable builds a Table; labels must be distinct and the matrix square and symmetric.
func NewTable(col int, labels, matrix []float64) (*Table, error) {
	n := len(labels)
	if n == 0 || len(matrix) != n*n {
		return nil, fmt.Errorf("kernel \"table\": %d labels need a %d×%d matrix, got %d values", n, n, n, len(matrix))
	}
	pos := make(map[float64]int, n)
	for i, l := range labels {
		if _, dup := pos[l]; dup {
			return nil, fmt.Errorf("kernel \"table\": label %v appears twice", l)
		}
		pos[l] = i
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := matrix[i*n+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("kernel \"table\": entry (%d, %d) = %v is not finite", i, j, v)
			}
			if v != matrix[j*n+i] {
				return nil, fmt.Errorf("kernel \"table\": the matrix is not symmetric at (%d, %d)", i, j)
			}
		}
	}
	return &Table{Col: col, Labels: labels, Matrix: matrix, pos: pos}, nil
}

// Eval implements Kernel.
func (k *Table) Eval(x, y []float64) float64 {
	a, b := x[k.Col], y[k.Col]
	i, okx := k.pos[a]
	j, oky := k.pos[b]
	if okx && oky {
		return k.Matrix[i*len(k.Labels)+j]
	}
	if !okx && !oky && a == b {
		return 1
	}
	return 0
}

// NumParams implements Kernel.
func (k *Table) NumParams() int { return 0 }

// EvalGrad implements Kernel.
func (k *Table) EvalGrad(x, y, grad []float64) float64 { return k.Eval(x, y) }
func (k *Table) maxCol() int                           { return k.Col + 1 }

// Eval implements Kernel.
func (k *Sum) Eval(x, y []float64) float64 {
	s := 0.0
	for _, t := range k.Terms {
		s += t.Eval(x, y)
	}
	return s
}

// NumParams implements Kernel.
func (k *Sum) NumParams() int { return sumParams(k.Terms) }

// EvalGrad implements Kernel.
func (k *Sum) EvalGrad(x, y, grad []float64) float64 {
	s, off := 0.0, 0
	for _, t := range k.Terms {
		np := t.NumParams()
		s += t.EvalGrad(x, y, grad[off:off+np])
		off += np
	}
	return s
}
func (k *Sum) maxCol() int { return maxCols(k.Terms) }

// Eval implements Kernel.
func (k *Product) Eval(x, y []float64) float64 {
	p := 1.0
	for _, t := range k.Terms {
		p *= t.Eval(x, y)
	}
	return p
}

// NumParams implements Kernel.
func (k *Product) NumParams() int { return sumParams(k.Terms) }

// EvalGrad implements Kernel. The gradient of a term is scaled by the product of
// the other terms' values, computed without division so zero factors are exact.
func (k *Product) EvalGrad(x, y, grad []float64) float64 {
	vals := make([]float64, len(k.Terms))
	offs := make([]int, len(k.Terms)+1)
	for i, t := range k.Terms {
		np := t.NumParams()
		offs[i+1] = offs[i] + np
		vals[i] = t.EvalGrad(x, y, grad[offs[i]:offs[i+1]])
	}
	p := 1.0
	for i := range k.Terms {
		others := 1.0
		for j, v := range vals {
			if j != i {
				others *= v
			}
		}
		for g := offs[i]; g < offs[i+1]; g++ {
			grad[g] *= others
		}
		p *= vals[i]
	}
	return p
}
func (k *Product) maxCol() int { return maxCols(k.Terms) }

// Eval implements Kernel.
func (k *Normalized) Eval(x, y []float64) float64 {
	kxx, kyy := k.K.Eval(x, x), k.K.Eval(y, y)
	if kxx <= 0 || kyy <= 0 {
		return 0
	}
	return k.K.Eval(x, y) / math.Sqrt(kxx*kyy)
}

// NumParams implements Kernel.
func (k *Normalized) NumParams() int { return k.K.NumParams() }

// EvalGrad implements Kernel.
func (k *Normalized) EvalGrad(x, y, grad []float64) float64 {
	np := k.K.NumParams()
	gxx, gyy := make([]float64, np), make([]float64, np)
	kxy := k.K.EvalGrad(x, y, grad[:np])
	kxx := k.K.EvalGrad(x, x, gxx)
	kyy := k.K.EvalGrad(y, y, gyy)
	if kxx <= 0 || kyy <= 0 {
		for i := range grad[:np] {
			grad[i] = 0
		}
		return 0
	}
	r := math.Sqrt(kxx * kyy)
	s, v := 1/r, kxy/r // v exactly as Eval computes it
	for i := 0; i < np; i++ {
		grad[i] = grad[i]*s - 0.5*v*(gxx[i]/kxx+gyy[i]/kyy)
	}
	return v
}
func (k *Normalized) maxCol() int { return k.K.maxCol() }

func sumParams(ts []Kernel) int {
	n := 0
	for _, t := range ts {
		n += t.NumParams()
	}
	return n
}

func maxCols(ts []Kernel) int {
	m := 0
	for _, t := range ts {
		m = max(m, t.maxCol())
	}
	return m
}

// MaxCol returns one past the highest feature column k reads, so callers can check
// it against the feature rows they hold.
func MaxCol(k Kernel) int { return k.maxCol() }

type node struct {
	Kind        string            `json:"kind"`
	C           *float64          `json:"c"`
	H           *float64          `json:"h"`
	LengthScale *float64          `json:"length_scale"`
	Col         int               `json:"col"`
	Width       *int              `json:"width"`
	Terms       []json.RawMessage `json:"terms"`
	Kernel      json.RawMessage   `json:"kernel"`
	Index       *int              `json:"index"`
	Sigma0      *float64          `json:"sigma_0"`
	Values      []float64         `json:"values"`
	Labels      []float64         `json:"labels"`
	Matrix      [][]float64       `json:"matrix"`
}

// Parse builds a kernel from its JSON expression (docs/abi.md).
func Parse(spec string) (Kernel, error) {
	k, _, err := ParseIndexed(spec)
	return k, err
}

// MustParse is like Parse but panics if the expression cannot be parsed. It
// simplifies tables of kernels in tests and benchmarks (as regexp.MustCompile).
func MustParse(spec string) Kernel {
	k, err := Parse(spec)
	if err != nil {
		panic(err)
	}
	return k
}

// ParseIndexed builds a kernel from its JSON expression and returns, for each
// of its hyperparameters in the order EvalGrad numbers them, the "index" the
// expression gives that leaf (-1 where it gives none). The caller that wrote
// the expression decides what the indices mean; they let it receive gradients
// in its own order without Go and the caller agreeing on an order by convention.
func ParseIndexed(spec string) (Kernel, []int, error) {
	var index []int
	k, err := parse([]byte(spec), &index, 0)
	if err != nil {
		return nil, nil, err
	}
	return k, index, nil
}

// maxDepth bounds the nesting of expressions, so that a hostile expression
// cannot exhaust the stack.
const maxDepth = 64

func parse(b []byte, index *[]int, depth int) (Kernel, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("kernel expression nested deeper than %d levels", maxDepth)
	}
	var n node
	// Unknown fields are errors: a misspelt "col" must not silently read column 0.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		return nil, fmt.Errorf("kernel expression: %w", err)
	}
	need := func(name string, p *float64, positive bool) (float64, error) {
		if p == nil {
			return 0, fmt.Errorf("kernel %q: missing %q", n.Kind, name)
		}
		if math.IsNaN(*p) || math.IsInf(*p, 0) || (positive && *p <= 0) || *p < 0 {
			return 0, fmt.Errorf("kernel %q: %s = %v is out of range", n.Kind, name, *p)
		}
		return *p, nil
	}
	width := 1
	if n.Width != nil {
		width = *n.Width
	}
	if n.Col < 0 || width < 1 {
		return nil, fmt.Errorf("kernel %q: bad columns col=%d width=%d", n.Kind, n.Col, width)
	}
	leaf := func() {
		i := -1
		if n.Index != nil {
			i = *n.Index
		}
		*index = append(*index, i)
	}
	children := func() ([]Kernel, error) {
		if len(n.Terms) == 0 {
			return nil, fmt.Errorf("kernel %q: no terms", n.Kind)
		}
		ks := make([]Kernel, len(n.Terms))
		for i, t := range n.Terms {
			k, err := parse(t, index, depth+1)
			if err != nil {
				return nil, err
			}
			ks[i] = k
		}
		return ks, nil
	}
	switch n.Kind {
	case "constant":
		leaf()
		c, err := need("c", n.C, false)
		return &Constant{C: c}, err
	case "kronecker_delta":
		leaf()
		h, err := need("h", n.H, false)
		return &KroneckerDelta{H: h, Col: n.Col, Width: width}, err
	case "square_exponential":
		leaf()
		l, err := need("length_scale", n.LengthScale, true)
		return &SquareExponential{LengthScale: l, Col: n.Col, Width: width}, err
	case "brownian_bridge":
		leaf()
		c, err := need("c", n.C, true)
		return &BrownianBridge{C: c, Col: n.Col}, err
	case "dot_product":
		leaf()
		s, err := need("sigma_0", n.Sigma0, false)
		return &DotProduct{Sigma0: s, Col: n.Col, Width: width}, err
	case "convolution":
		if len(n.Kernel) == 0 {
			return nil, fmt.Errorf("kernel \"convolution\": missing \"kernel\"")
		}
		if len(n.Values) != width {
			return nil, fmt.Errorf("kernel \"convolution\": %d values for width %d", len(n.Values), width)
		}
		for _, v := range n.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("kernel \"convolution\": value %v is not finite", v)
			}
		}
		k, err := parse(n.Kernel, index, depth+1)
		if err != nil {
			return nil, err
		}
		if k.maxCol() > 1 {
			return nil, fmt.Errorf("kernel \"convolution\": its element kernel must read column 0 only, it reads up to column %d", k.maxCol()-1)
		}
		return &Convolution{K: k, Col: n.Col, Width: width, Values: n.Values}, nil
	case "table":
		if n.Width != nil && *n.Width != 1 {
			return nil, fmt.Errorf("kernel \"table\": compares one column, got width %d", *n.Width)
		}
		flat := make([]float64, 0, len(n.Labels)*len(n.Labels))
		for _, row := range n.Matrix {
			if len(row) != len(n.Labels) {
				return nil, fmt.Errorf("kernel \"table\": a row of %d values for %d labels", len(row), len(n.Labels))
			}
			flat = append(flat, row...)
		}
		return NewTable(n.Col, n.Labels, flat)
	case "sum":
		ts, err := children()
		return &Sum{Terms: ts}, err
	case "product":
		ts, err := children()
		return &Product{Terms: ts}, err
	case "normalized":
		if len(n.Kernel) == 0 {
			return nil, fmt.Errorf("kernel \"normalized\": missing \"kernel\"")
		}
		k, err := parse(n.Kernel, index, depth+1)
		return &Normalized{K: k}, err
	}
	return nil, fmt.Errorf("unknown kernel kind %q", n.Kind)
}
