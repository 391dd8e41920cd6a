package sparsegram

// The sparse part is a row-by-row (Gustavson) product through an inverted
// index of Y: a nonzero x_f of row i adds x_f ⊗ y_f into out[i][j] for every
// row j of Y holding f. The output row, 8·ny bytes (33 KB for NCI1), stays in
// the first- or second-level cache while all of row i's lists scatter into it,
// and every list is read sequentially. For symmetric Gram matrices each list
// is read from row i's own entry on, which is the upper triangle.

// scatter holds the sparse part: for the t-th sparse nonzero of row i (t in
// ptr[i]:ptr[i+1]) with count val[t], the inverted-index entries
// index[from[t]:to[t]] hold the output columns (rows of Y) and the counts it
// meets.
type scatter struct {
	ptr      []int32
	val      []uint32
	from, to []int32
	index    []entry
}

// entry is one nonzero of the inverted index. Column and count side by side
// cost one cache miss, not two, when the index is built by scattered writes
// (benchmarks/log/go_core_measurements.md), and read as one stream when it is
// used.
type entry struct {
	j int32
	v uint32
}

// buildScatter builds the sparse part of X against Y over the columns where
// panelCol is -1. With symmetric (Y == X) each nonzero's list starts at its own
// entry.
func buildScatter(X, Y *Features, panelCol []int32, symmetric bool) scatter {
	nc := X.NumCols
	colPtr := make([]int32, nc+1)
	for _, c := range Y.Col {
		if panelCol[c] < 0 {
			colPtr[c+1]++
		}
	}
	for c := range nc {
		colPtr[c+1] += colPtr[c]
	}
	var sc scatter
	n := colPtr[nc]
	sc.index = make([]entry, n)
	m := n // the sparse nonzeros of X
	if !symmetric {
		m = 0
		for _, c := range X.Col {
			if panelCol[c] < 0 {
				m++
			}
		}
	}
	sc.ptr = make([]int32, 1, X.Rows()+1)
	sc.val, sc.from, sc.to = make([]uint32, 0, m), make([]int32, 0, m), make([]int32, 0, m)
	// Shifted by one, colPtr[c+1] holds column c's start and serves as its
	// fill position; filling advances it to the column's end, which is
	// column c+1's start, so that colPtr is the column pointer again.
	copy(colPtr[1:], colPtr[:nc])
	fill := colPtr[1:]
	for r := range int32(Y.Rows()) {
		for k := Y.Ptr[r]; k < Y.Ptr[r+1]; k++ {
			c := Y.Col[k]
			if panelCol[c] >= 0 {
				continue
			}
			e := fill[c]
			fill[c]++
			sc.index[e] = entry{r, Y.Val[k]}
			if symmetric {
				// Row r's list for c starts at its own entry and
				// runs to the column's end, known once all are counted.
				sc.val = append(sc.val, Y.Val[k])
				sc.from = append(sc.from, e)
				sc.to = append(sc.to, c) // made the column's end below
			}
		}
		if symmetric {
			sc.ptr = append(sc.ptr, int32(len(sc.val)))
		}
	}
	if symmetric {
		for t, c := range sc.to {
			sc.to[t] = colPtr[c+1]
		}
		return sc
	}
	for r := range X.Rows() {
		for k := X.Ptr[r]; k < X.Ptr[r+1]; k++ {
			c := X.Col[k]
			if panelCol[c] >= 0 {
				continue
			}
			if from, to := colPtr[c], colPtr[c+1]; from < to {
				sc.val = append(sc.val, X.Val[k])
				sc.from = append(sc.from, from)
				sc.to = append(sc.to, to)
			}
		}
		sc.ptr = append(sc.ptr, int32(len(sc.val)))
	}
	return sc
}

// addRow adds the sparse part of row i into orow (row i of out).
func (sc *scatter) addRow(i int, orow []float64, s Semiring) {
	for t := sc.ptr[i]; t < sc.ptr[i+1]; t++ {
		list := sc.index[sc.from[t]:sc.to[t]]
		x := sc.val[t]
		if s == SumMin {
			for _, e := range list {
				orow[e.j] += float64(min(x, e.v))
			}
		} else {
			xf := float64(x)
			for _, e := range list {
				orow[e.j] += xf * float64(e.v)
			}
		}
	}
}
