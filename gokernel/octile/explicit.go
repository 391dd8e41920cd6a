package octile

// explicitState is the product matrix W in compressed-row form, rows and
// columns indexed i·n' + i'.
type explicitState struct {
	rowPtr []int32
	col    []int32
	val    []float64
}

// setupExplicit builds W from the two adjacencies, taking κe from the class
// table when there is one and evaluating it otherwise.
func (p *Pair) setupExplicit() {
	e := &p.exp
	a, b := p.A.G, p.B.G
	nB := b.N
	e.rowPtr = grow(e.rowPtr, a.N*nB+1)
	nnz := len(a.Col) * len(b.Col)
	e.col = grow(e.col, nnz)
	e.val = grow(e.val, nnz)
	q := 0
	for i := 0; i < a.N; i++ {
		for ip := 0; ip < nB; ip++ {
			e.rowPtr[i*nB+ip] = int32(q)
			for ka := a.RowPtr[i]; ka < a.RowPtr[i+1]; ka++ {
				j, ea, wa := int(a.Col[ka]), a.EdgeOf[ka], a.Val[ka]
				var krow []float64
				if p.table {
					ca := int(p.effA[p.A.EdgeClass[ea]])
					krow = p.kEff[ca*p.leB : (ca+1)*p.leB]
				}
				for kb := b.RowPtr[ip]; kb < b.RowPtr[ip+1]; kb++ {
					eb := b.EdgeOf[kb]
					var k float64
					if krow != nil {
						k = krow[p.effB[p.B.EdgeClass[eb]]]
					} else {
						k = p.ke.Eval(a.Edge(int(ea)), b.Edge(int(eb)))
					}
					e.col[q] = int32(j*nB + int(b.Col[kb]))
					e.val[q] = wa * b.Val[kb] * k
					q++
				}
			}
		}
	}
	e.rowPtr[a.N*nB] = int32(q)
}

// expMatVec forms y += W·x with the stored W. Four partial sums per row keep
// the additions independent.
func (p *Pair) expMatVec(x, y []float64) {
	e := &p.exp
	for r := range y {
		k0, k1 := e.rowPtr[r], e.rowPtr[r+1]
		cols, vals := e.col[k0:k1], e.val[k0:k1]
		vals = vals[:len(cols)]
		var s0, s1, s2, s3 float64
		k := 0
		for ; k+4 <= len(cols); k += 4 {
			s0 += vals[k] * x[cols[k]]
			s1 += vals[k+1] * x[cols[k+1]]
			s2 += vals[k+2] * x[cols[k+2]]
			s3 += vals[k+3] * x[cols[k+3]]
		}
		for ; k < len(cols); k++ {
			s0 += vals[k] * x[cols[k]]
		}
		y[r] += (s0 + s1) + (s2 + s3)
	}
}
