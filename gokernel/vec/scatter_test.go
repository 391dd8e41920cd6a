package vec

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// scatterRef is the one-column scatter of mgk's SGS sweeps, which
// Blocks2.Scatter runs on each of its columns for each row.
func scatterRef(acc, x, c []float64, u, v []int32) {
	for f, cf := range c {
		a, b := u[f], v[f]
		acc[a] += cf * x[b]
		acc[b] += cf * x[a]
	}
}

// TestScatter checks Blocks2.Scatter, assembly and portable, bit for bit
// against scatterRef on each column, row after row, over edges with shared
// endpoints and self-loops in no order, for blocks with no row, one, and
// several (a block and a row used twice), into an acc that held other values.
func TestScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 1; n <= 23; n++ {
		m := 2*n + 1
		u, v := make([]int32, m), make([]int32, m)
		for f := range u {
			u[f], v[f] = int32(rng.IntN(n)), int32(rng.IntN(n))
		}
		ends := NewEnds(u, v, n)
		const nRows, nBlocks = 4, 3
		c := randVec(rng, nRows*m)
		x1, x2 := randVec(rng, nBlocks*n), randVec(rng, nBlocks*n)
		// Block 0 has no rows, block 1 one, block 2 three.
		b2 := Blocks2{C: c, Ends: ends, Ptr: []int32{0, 0, 1, 4}, Rows: []int32{2, 3, 0, 3}, Blocks: []int32{1, 2, 2, 0}}
		for i := range 3 {
			t.Run(fmt.Sprintf("n=%d,block=%d", n, i), func(t *testing.T) {
				want1, want2 := make([]float64, n), make([]float64, n)
				for k := b2.Ptr[i]; k < b2.Ptr[i+1]; k++ {
					e, j := int(b2.Rows[k]), int(b2.Blocks[k])
					row := c[e*m : (e+1)*m]
					scatterRef(want1, x1[j*n:(j+1)*n], row, u, v)
					scatterRef(want2, x2[j*n:(j+1)*n], row, u, v)
				}
				for name, scatter := range map[string]func(acc, x [][2]float64, i int){"Scatter": b2.Scatter, "ScatterGo": b2.ScatterGo} {
					got := interleave2(randVec(rng, n+2), randVec(rng, n+2))
					scatter(got, interleave2(x1, x2), i)
					sameCols(t, name, got[:n], want1, want2)
					if got[n] == ([2]float64{}) {
						t.Errorf("%s: wrote past the graph's %d nodes", name, n)
					}
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
	c := []float64{1, 2, 3, 4, 5, 6} // two rows
	x := make([][2]float64, 8)       // two blocks
	for _, bad := range []struct {
		what       string
		acc        int
		row, block int32
		want       string
	}{
		{"short acc", 3, 0, 0, "out of range"},
		{"block past x", 4, 0, 2, "block 2 of 2 out of range"},
		{"negative block", 4, 0, -1, "block -1 of 2 out of range"},
		{"row past c", 4, 2, 0, "table row 2 of 2"},
		{"negative row", 4, -1, 0, "table row -1 of 2"},
	} {
		b2 := Blocks2{C: c, Ends: ends, Ptr: []int32{0, 1}, Rows: []int32{bad.row}, Blocks: []int32{bad.block}}
		panics(bad.what, bad.want, func() { b2.Scatter(make([][2]float64, bad.acc), x, 0) })
		panics(bad.what+" (Go)", "out of range", func() { b2.ScatterGo(make([][2]float64, bad.acc), x, 0) })
	}
	// Vectors longer than the graph are fine; acc's later entries are left.
	acc := make([][2]float64, 6)
	acc[5] = [2]float64{7, 7}
	for k := range x {
		x[k] = [2]float64{1, 10}
	}
	b2 := Blocks2{C: c, Ends: ends, Ptr: []int32{0, 1}, Rows: []int32{1}, Blocks: []int32{1}}
	b2.Scatter(acc, x, 0)
	if want := [][2]float64{{4, 40}, {9, 90}, {11, 110}, {6, 60}, {}, {7, 7}}; fmt.Sprint(acc) != fmt.Sprint(want) {
		t.Errorf("acc = %v, want %v", acc, want)
	}
}

// BenchmarkScatter times Blocks2.Scatter on one row, assembly and portable,
// beside the one-column loop (scatterRef), whose cost the two-column scatter
// should about match, on a drug-size molecule: 26 atoms, 28 bonds (a tree
// and two ring closures).
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
	b2 := Blocks2{C: c, Ends: ends, Ptr: []int32{0, 1}, Rows: []int32{0}, Blocks: []int32{0}}
	b.Run("1", func(b *testing.B) {
		acc, x := make([]float64, n), randVec(rng, n)
		for b.Loop() {
			scatterRef(acc, x, c, u, v)
		}
	})
	b.Run("2", func(b *testing.B) {
		acc, x := make([][2]float64, n), interleave2(randVec(rng, n), randVec(rng, n))
		for b.Loop() {
			b2.Scatter(acc, x, 0)
		}
	})
	b.Run("2Go", func(b *testing.B) {
		acc, x := make([][2]float64, n), interleave2(randVec(rng, n), randVec(rng, n))
		for b.Loop() {
			b2.ScatterGo(acc, x, 0)
		}
	})
}
