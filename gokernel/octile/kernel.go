package octile

// The dense inner loops, in portable Go. Builds with GOEXPERIMENT=simd on
// amd64 may route gemv8, mv8 and axpy to vector versions (kernel_simd.go);
// these stay the reference and the fallback.
//
// Dense tiles are row-major, M[8r+c] at row r, column c: the index of an entry
// is its bit in the tile's Mask.

// gemv8Go sets y += alpha · M·x for a row-major 8×8 M.
func gemv8Go(y *[8]float64, alpha float64, m *[64]float64, x *[8]float64) {
	x0, x1, x2, x3, x4, x5, x6, x7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
	for r := 0; r < 8; r++ {
		row := (*[8]float64)(m[8*r : 8*r+8])
		// A pairwise sum keeps four independent products in flight.
		s := ((row[0]*x0 + row[1]*x1) + (row[2]*x2 + row[3]*x3)) + ((row[4]*x4 + row[5]*x5) + (row[6]*x6 + row[7]*x7))
		y[r] += alpha * s
	}
}

// mv8Go sets z = M·x for a row-major 8×8 M.
func mv8Go(z *[8]float64, m *[64]float64, x *[8]float64) {
	x0, x1, x2, x3, x4, x5, x6, x7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
	for r := 0; r < 8; r++ {
		row := (*[8]float64)(m[8*r : 8*r+8])
		z[r] = ((row[0]*x0 + row[1]*x1) + (row[2]*x2 + row[3]*x3)) + ((row[4]*x4 + row[5]*x5) + (row[6]*x6 + row[7]*x7))
	}
}

// axpy8Go sets y += a·z on 8 elements.
func axpy8Go(y *[8]float64, a float64, z *[8]float64) {
	y[0] += a * z[0]
	y[1] += a * z[1]
	y[2] += a * z[2]
	y[3] += a * z[3]
	y[4] += a * z[4]
	y[5] += a * z[5]
	y[6] += a * z[6]
	y[7] += a * z[7]
}

// axpyGo sets y += a·x; len(y) must be at least len(x).
func axpyGo(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}
