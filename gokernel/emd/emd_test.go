package emd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// assignment returns min over permutations σ of Σ_i C[i, σ(i)], by brute force.
func assignment(cost []float64, n int) float64 {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	best := math.Inf(1)
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			s := 0.0
			for i, j := range perm {
				s += cost[i*n+j]
			}
			best = min(best, s)
			return
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0)
	return best
}

// negativeCycle reports whether the residual graph of flow has a cycle of
// negative cost (Floyd–Warshall), which is exactly when the flow is not optimal.
func negativeCycle(cost []float64, flow []int64, n, m int) bool {
	v := n + m
	d := make([]float64, v*v)
	for k := range d {
		d[k] = math.Inf(1)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			d[i*v+n+j] = cost[i*m+j]
			if flow[i*m+j] > 0 {
				d[(n+j)*v+i] = -cost[i*m+j]
			}
		}
	}
	for k := 0; k < v; k++ {
		for a := 0; a < v; a++ {
			for b := 0; b < v; b++ {
				d[a*v+b] = min(d[a*v+b], d[a*v+k]+d[k*v+b])
			}
		}
	}
	for a := 0; a < v; a++ {
		if d[a*v+a] < -1e-9 {
			return true
		}
	}
	return false
}

func randomCost(r *rand.Rand, n, m int, levels int) []float64 {
	c := make([]float64, n*m)
	for k := range c {
		if levels > 0 {
			c[k] = float64(r.IntN(levels))
		} else {
			c[k] = r.Float64()
		}
	}
	return c
}

func TestFloatAssignment(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s Solver
	for _, tc := range []struct{ n, levels int }{{1, 0}, {2, 0}, {3, 0}, {5, 0}, {6, 0}, {6, 3}, {7, 2}} {
		for rep := 0; rep < 20; rep++ {
			c := randomCost(r, tc.n, tc.n, tc.levels)
			got, err := s.Float(c, tc.n, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			want := assignment(c, tc.n) / float64(tc.n)
			if math.Abs(got-want) > 1e-14 {
				t.Errorf("n=%d levels=%d: EMD %v, assignment %v", tc.n, tc.levels, got, want)
			}
		}
	}
}

func TestOptimalFlow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var s Solver
	for _, tc := range []struct{ n, m, levels int }{{1, 5, 0}, {5, 1, 0}, {2, 3, 0}, {4, 7, 0}, {7, 4, 3}, {9, 6, 2}, {12, 10, 0}} {
		for rep := 0; rep < 10; rep++ {
			c := randomCost(r, tc.n, tc.m, tc.levels)
			got, err := s.Float(c, tc.n, tc.m)
			if err != nil {
				t.Fatal(err)
			}
			f := s.Flow()
			rows, cols := make([]int64, tc.n), make([]int64, tc.m)
			sum := 0.0
			for k, x := range f {
				if x < 0 {
					t.Fatalf("negative flow %d", x)
				}
				rows[k/tc.m] += x
				cols[k%tc.m] += x
				sum += float64(x) * c[k]
			}
			for _, x := range rows {
				if x != int64(tc.m) {
					t.Fatalf("%v: row sums %v, want %d", tc, rows, tc.m)
				}
			}
			for _, x := range cols {
				if x != int64(tc.n) {
					t.Fatalf("%v: column sums %v, want %d", tc, cols, tc.n)
				}
			}
			if negativeCycle(c, f, tc.n, tc.m) {
				t.Errorf("%v: the flow is not optimal (negative residual cycle)", tc)
			}
			if want := sum / float64(tc.n*tc.m); math.Abs(got-want) > 1e-14 {
				t.Errorf("%v: value %v, flow's cost %v", tc, got, want)
			}
			// Integer costs give the same optimum without rounding.
			if tc.levels > 0 {
				ic := make([]int64, len(c))
				for k, x := range c {
					ic[k] = int64(x)
				}
				gi, err := s.Int(ic, tc.n, tc.m)
				if err != nil {
					t.Fatal(err)
				}
				if float64(gi) != sum {
					t.Errorf("%v: Int %d, Float's flow cost %v", tc, gi, sum)
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	var s Solver
	for _, tc := range []struct {
		cost []float64
		n, m int
	}{{nil, 0, 1}, {[]float64{1}, 1, 2}, {[]float64{-1}, 1, 1}, {[]float64{math.NaN()}, 1, 1}, {[]float64{math.Inf(1)}, 1, 1}} {
		if _, err := s.Float(tc.cost, tc.n, tc.m); err == nil {
			t.Errorf("%v %d×%d: no error", tc.cost, tc.n, tc.m)
		}
	}
}

func BenchmarkFloat(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{20, 60, 120} {
		c := randomCost(r, n, n+7, 0)
		b.Run(string(rune('0'+n/20)), func(b *testing.B) {
			var s Solver
			for b.Loop() {
				if _, err := s.Float(c, n, n+7); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMerged checks that merging equal points into one of their summed mass
// (as package wwl does) keeps the optimum, and Transport's checks.
func TestMerged(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var s Solver
	for rep := 0; rep < 30; rep++ {
		// Distinct points p (rows) and q (columns) with multiplicities.
		np, nq := 1+r.IntN(4), 1+r.IntN(5)
		cp, cq := make([]int64, np), make([]int64, nq)
		var rows, cols []int
		for i := range cp {
			cp[i] = 1 + r.Int64N(3)
			for k := int64(0); k < cp[i]; k++ {
				rows = append(rows, i)
			}
		}
		for j := range cq {
			cq[j] = 1 + r.Int64N(3)
			for k := int64(0); k < cq[j]; k++ {
				cols = append(cols, j)
			}
		}
		small := make([]int64, np*nq)
		for k := range small {
			small[k] = r.Int64N(5)
		}
		n, m := len(rows), len(cols)
		big := make([]int64, n*m)
		for a, i := range rows {
			for b, j := range cols {
				big[a*m+b] = small[i*nq+j]
			}
		}
		want, err := s.Int(big, n, m)
		if err != nil {
			t.Fatal(err)
		}
		a, b := make([]int64, np), make([]int64, nq)
		for i := range a {
			a[i] = cp[i] * int64(m)
		}
		for j := range b {
			b[j] = cq[j] * int64(n)
		}
		got, err := s.Transport(small, a, b)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("merged %d, expanded %d", got, want)
		}
	}
	if _, err := s.Transport([]int64{1, 1}, []int64{2}, []int64{1, 2}); err == nil {
		t.Error("unequal masses: no error")
	}
	if _, err := s.Transport([]int64{1}, []int64{0}, []int64{0}); err == nil {
		t.Error("zero masses: no error")
	}
}

// BenchmarkPoints is the continuous WWL case: Euclidean costs between random
// points in 10 dimensions, 33 × 35, by each method.
func BenchmarkPoints(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	n, m, d := 33, 35, 10
	p := make([]float64, (n+m)*d)
	for k := range p {
		p[k] = r.NormFloat64()
	}
	c := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for k := 0; k < d; k++ {
				t := p[i*d+k] - p[(n+j)*d+k]
				s += t * t
			}
			c[i*m+j] = math.Sqrt(s)
		}
	}
	benchMethods(b, func(s *Solver) error {
		_, err := s.Float(c, n, m)
		return err
	})
}

// benchMethods runs a benchmark of solve for each method.
func benchMethods(b *testing.B, solve func(s *Solver) error) {
	for _, meth := range []struct {
		name string
		m    method
	}{{"auto", auto}, {"ssp", ssp}, {"simplex", netSimplex}} {
		b.Run(meth.name, func(b *testing.B) {
			s := Solver{method: meth.m}
			for b.Loop() {
				if err := solve(&s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMerged is the discrete WWL case: Hamming costs (0..4) between
// label sequences of molecules, 12 × 14 distinct points of random
// multiplicities, by each method.
func BenchmarkMerged(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	n, m := 12, 14
	c := make([]int64, n*m)
	for k := range c {
		c[k] = 1 + r.Int64N(4)
		if r.IntN(8) == 0 {
			c[k] = 0
		}
	}
	ca, cb := make([]int64, n), make([]int64, m)
	var na, nb int64
	for i := range ca {
		ca[i] = 1 + r.Int64N(3)
		na += ca[i]
	}
	for j := range cb {
		cb[j] = 1 + r.Int64N(3)
		nb += cb[j]
	}
	for i := range ca {
		ca[i] *= nb
	}
	for j := range cb {
		cb[j] *= na
	}
	benchMethods(b, func(s *Solver) error {
		_, err := s.Transport(c, ca, cb)
		return err
	})
}
