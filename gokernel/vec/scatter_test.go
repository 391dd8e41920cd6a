package vec

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// scatterRef is the one-column scatter of mgk's SGS sweeps, which Scatter2
// runs on each of its columns.
func scatterRef(acc, x, c []float64, u, v []int32) {
	for f, cf := range c {
		a, b := u[f], v[f]
		acc[a] += cf * x[b]
		acc[b] += cf * x[a]
	}
}

// TestScatter checks Scatter2, assembly and portable, bit for bit against
// scatterRef on each column, over edges with shared endpoints and
// self-loops in no order, on all edges and on the first few only.
func TestScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	for n := 1; n <= 23; n++ {
		m := 2*n + 1
		u, v := make([]int32, m), make([]int32, m)
		for f := range u {
			u[f], v[f] = int32(rng.IntN(n)), int32(rng.IntN(n))
		}
		ends := NewEnds(u, v, n)
		for _, used := range []int{m, m / 2, 1} {
			t.Run(fmt.Sprintf("n=%d,m=%d", n, used), func(t *testing.T) {
				c := randVec(rng, used)
				acc1, acc2, x1, x2 := randVec(rng, n), randVec(rng, n), randVec(rng, n), randVec(rng, n)
				want1, want2 := cp(acc1), cp(acc2)
				scatterRef(want1, x1, c, u, v)
				scatterRef(want2, x2, c, u, v)
				for name, scatter := range map[string]func(acc, x [][2]float64, c []float64, ends Ends){"Scatter2": Scatter2, "Scatter2Go": Scatter2Go} {
					got := interleave2(acc1, acc2)
					scatter(got, interleave2(x1, x2), c, ends)
					sameCols(t, name, got, want1, want2)
				}
			})
		}
	}
}

// TestScatterChecksBounds checks that the assembly scatter, which indexes
// without checks, is never reached with an endpoint outside the vectors.
func TestScatterChecksBounds(t *testing.T) {
	panics := func(what, want string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), want) {
				t.Errorf("%s: recovered %v, want a panic containing %q", what, r, want)
			}
		}()
		f()
	}
	u, v := []int32{0, 1, 2}, []int32{1, 2, 3}
	panics("endpoint = n", "outside a graph of 3 nodes", func() { NewEnds(u, v, 3) })
	panics("negative endpoint", "outside", func() { NewEnds([]int32{-1}, []int32{0}, 3) })
	panics("lengths", "3 edge starts but 2 ends", func() { NewEnds(u, v[:2], 4) })
	ends := NewEnds(u, v, 4)
	c := []float64{1, 2, 3}
	panics("short acc", "on vectors of 3 and 4", func() { Scatter2(make([][2]float64, 3), make([][2]float64, 4), c, ends) })
	panics("short x", "on vectors of 4 and 2", func() { Scatter2(make([][2]float64, 4), make([][2]float64, 2), c, ends) })
	panics("too many weights", "scatter of 4 edges of 3", func() {
		Scatter2(make([][2]float64, 4), make([][2]float64, 4), make([]float64, 4), ends)
	})
	// Fewer weights than edges, and vectors longer than the graph, are fine.
	acc, x := make([][2]float64, 6), make([][2]float64, 6)
	for k := range x {
		x[k] = [2]float64{1, 10}
	}
	Scatter2(acc, x, c[:2], ends)
	if want := [][2]float64{{1, 10}, {3, 30}, {2, 20}, {}, {}, {}}; fmt.Sprint(acc) != fmt.Sprint(want) {
		t.Errorf("acc = %v, want %v", acc, want)
	}
}

// BenchmarkScatter times Scatter2, assembly and portable, beside the
// one-column loop (scatterRef), whose cost the two-column scatter should
// about match, on a drug-size molecule: 26 atoms, 28 bonds (a tree and two
// ring closures).
func BenchmarkScatter(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, m = 26, 28
	var u, v []int32
	for k := 1; k < n; k++ {
		u, v = append(u, int32(rng.IntN(k))), append(v, int32(k))
	}
	for len(u) < m {
		if a, c := rng.IntN(n), rng.IntN(n); a != c {
			u, v = append(u, int32(a)), append(v, int32(c))
		}
	}
	ends, c := NewEnds(u, v, n), randVec(rng, m)
	b.Run("1", func(b *testing.B) {
		acc, x := make([]float64, n), randVec(rng, n)
		for b.Loop() {
			scatterRef(acc, x, c, u, v)
		}
	})
	b.Run("2", func(b *testing.B) {
		acc, x := make([][2]float64, n), interleave2(randVec(rng, n), randVec(rng, n))
		for b.Loop() {
			Scatter2(acc, x, c, ends)
		}
	})
	b.Run("2Go", func(b *testing.B) {
		acc, x := make([][2]float64, n), interleave2(randVec(rng, n), randVec(rng, n))
		for b.Loop() {
			Scatter2Go(acc, x, c, ends)
		}
	})
}
