package vec

import "fmt"

// Ends lists the edges of a graph for Blocks2: edge f's endpoints a and b
// packed as a | b<<32, every endpoint below the node count it was built with.
// It is checked once, when built, so that Blocks2.Scatter needs only check
// its rows and blocks against the counts it was built with.
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

// Blocks2 describes the products of the SGS sweeps' blocks with their
// neighbours' blocks through an edge table: for block i, the entries
// Ptr[i] to Ptr[i+1] of Rows and Blocks name a table row e of C (entries e·m
// to (e+1)·m, m the edge count of Ends) and the block j of the vector it
// multiplies (entries j·n to (j+1)·n, n the node count of Ends). It is built
// per pair and sweep direction, and Scatter runs it block by block.
type Blocks2 struct {
	C                 []float64
	Ends              Ends
	Ptr, Rows, Blocks []int32
}

// Scatter sets acc (its first n entries) to the sum, over block i's entries
// k, of Scatter2Go's updates for table row Rows[k] with block Blocks[k] of x,
// in k's order, each column's arithmetic that of the one-column scatter of
// package mgk. On amd64 each row runs in assembly, its indices unchecked:
// Ends' endpoints were checked when it was built, and every row and block is
// checked against C and x here. It panics if acc has fewer than n entries, or
// a row or block lies outside C or x.
func (s *Blocks2) Scatter(acc, x [][2]float64, i int) {
	n, m := s.Ends.n, len(s.Ends.ab)
	acc = acc[:n]
	clear(acc)
	if m == 0 {
		return
	}
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	rows, blocks := s.Rows[lo:hi], s.Blocks[lo:hi]
	for k, e := range rows {
		j := int(blocks[k])
		if j < 0 || (j+1)*n > len(x) || e < 0 || (int(e)+1)*m > len(s.C) {
			panic(fmt.Sprintf("vec: table row %d of %d and block %d of %d out of range", e, len(s.C)/m, j, len(x)/n))
		}
		if haveScatterAsm {
			scatter2Asm(&acc[0], &x[j*n], &s.C[int(e)*m], &s.Ends.ab[0], m)
		} else {
			Scatter2Go(acc, x[j*n:(j+1)*n], s.C[int(e)*m:(int(e)+1)*m], s.Ends)
		}
	}
}

// ScatterGo is the portable Scatter.
func (s *Blocks2) ScatterGo(acc, x [][2]float64, i int) {
	n, m := s.Ends.n, len(s.Ends.ab)
	acc = acc[:n]
	clear(acc)
	lo, hi := s.Ptr[i], s.Ptr[i+1]
	for k := lo; k < hi; k++ {
		e, j := int(s.Rows[k]), int(s.Blocks[k])
		Scatter2Go(acc, x[j*n:(j+1)*n], s.C[e*m:(e+1)*m], s.Ends)
	}
}

// Scatter2Go adds, in both columns of two side by side (see interleaved.go),
// for each of the first len(c) edges f of ends (a–b), c[f]·x_b to acc_a and
// then c[f]·x_a to acc_b: the scatter of one edge-table row. acc and x need
// an entry for every node of the graph (indexed with Go's checks).
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
