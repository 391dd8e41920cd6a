package vec

import "fmt"

// Ends lists the edges of a graph for Scatter2: edge f's endpoints a and b
// packed as a | b<<32, every endpoint below the node count it was built with.
// It is checked once, when built, so that Scatter2 needs only compare vector
// lengths with that node count.
type Ends struct {
	ab []uint64
	n  int
}

// NewEnds returns the Ends of the edges u[f]–v[f] of a graph with n nodes. It
// panics if an endpoint lies outside [0, n) or u and v differ in length.
func NewEnds(u, v []int32, n int) Ends {
	if len(u) != len(v) {
		panic(fmt.Sprintf("vec: %d edge starts but %d ends", len(u), len(v)))
	}
	ab := make([]uint64, len(u))
	for f := range ab {
		a, b := u[f], v[f]
		if a < 0 || int(a) >= n || b < 0 || int(b) >= n {
			panic(fmt.Sprintf("vec: edge %d (%d, %d) outside a graph of %d nodes", f, a, b, n))
		}
		ab[f] = uint64(uint32(a)) | uint64(uint32(b))<<32
	}
	return Ends{ab: ab, n: n}
}

// Packed returns the edges' endpoints, a | b<<32 for edge a–b, for loops
// that index them directly (and check each index).
func (e Ends) Packed() []uint64 { return e.ab }

// check panics unless Scatter2 may run on ends' first m edges with
// vectors of na and nx entries.
func (e Ends) check(m, na, nx int) {
	if m > len(e.ab) || na < e.n || nx < e.n {
		panic(fmt.Sprintf("vec: scatter of %d edges of %d, graph of %d nodes, on vectors of %d and %d", m, len(e.ab), e.n, na, nx))
	}
}

// Scatter2 adds, in both columns of two side by side (see interleaved.go),
// for each of the first len(c) edges f of ends (a–b), c[f]·x_b to acc_a and
// then c[f]·x_a to acc_b: the scatter of one edge-table row in GramGrad's
// SGS sweeps, each column's arithmetic that of the one-column scatter of
// package mgk. acc and x need an entry for every node of the graph. On amd64
// it runs in assembly, with the bounds checked once per call through ends
// instead of once per entry.
func Scatter2(acc, x [][2]float64, c []float64, ends Ends) {
	ends.check(len(c), len(acc), len(x))
	if len(c) > 0 {
		scatter2Asm(acc, x, c, ends.ab)
	}
}

// Scatter2Go is the portable Scatter2.
func Scatter2Go(acc, x [][2]float64, c []float64, ends Ends) {
	ab := ends.ab[:len(c)]
	for f, cf := range c {
		a, b := uint32(ab[f]), ab[f]>>32
		acc[a][0] += cf * x[b][0]
		acc[a][1] += cf * x[b][1]
		acc[b][0] += cf * x[a][0]
		acc[b][1] += cf * x[a][1]
	}
}
