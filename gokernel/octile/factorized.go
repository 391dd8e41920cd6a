package octile

// factState is the per-pair data of the Factorized path.
//
// With κe written on effective classes as K = Σ_t u_t v_tᵀ, the product is
//
//	Y = Σ_t (A ⊙ u_t) X (A' ⊙ v_t)ᵀ,
//
// where A ⊙ u scales each nonzero of A by u at its edge class. Each term costs
// a sparse-times-dense product Z = X (A' ⊙ v)ᵀ on the rows of X that A ⊙ u
// needs, then Y += (A ⊙ u) Z as contiguous axpys of length n'.
type factState struct {
	us, vs []float64 // nTerms rows of leA and leB values
	nTerms int
	terms  []term
	z      []float64
	mark   []bool
}

// term is one rank-one term in compressed-row form.
type term struct {
	aPtr []int32 // rows of A ⊙ u: entries aPtr[i] ≤ k < aPtr[i+1]
	aCol []int32
	aVal []float64
	need []int32 // distinct columns of A ⊙ u: the rows of Z to form
	bPtr []int32 // rows of A' ⊙ v
	bCol []int32
	bVal []float64
}

// decompose writes kEff as a short sum of rank-one terms u vᵀ into f.us, f.vs:
// one term when either side has a single effective class; c·11ᵀ plus one term
// per entry off c when the entries differing from the most common value c form
// a matching (at most one per row and column: a Kronecker delta on labels,
// whatever h); otherwise one term per row or per column, whichever is fewer.
func (f *factState) decompose(k []float64, la, lb int) {
	f.us, f.vs, f.nTerms = f.us[:0], f.vs[:0], 0
	add := func(u, v func(int) float64) {
		for i := 0; i < la; i++ {
			f.us = append(f.us, u(i))
		}
		for j := 0; j < lb; j++ {
			f.vs = append(f.vs, v(j))
		}
		f.nTerms++
	}
	one := func(int) float64 { return 1 }
	unit := func(at int, s float64) func(int) float64 {
		return func(i int) float64 {
			if i == at {
				return s
			}
			return 0
		}
	}
	switch {
	case la == 0 || lb == 0:
		return
	case la == 1:
		add(one, func(j int) float64 { return k[j] })
		return
	case lb == 1:
		add(func(i int) float64 { return k[i] }, one)
		return
	}
	// Most common value, first seen on ties.
	c, best := k[0], 0
	for _, v := range k {
		n := 0
		for _, w := range k {
			if w == v {
				n++
			}
		}
		if n > best {
			c, best = v, n
		}
	}
	if la*lb-best <= min(la, lb) {
		rowUsed, colUsed := make([]bool, la), make([]bool, lb)
		ok := true
		for i := 0; i < la && ok; i++ {
			for j := 0; j < lb; j++ {
				if k[i*lb+j] != c {
					if rowUsed[i] || colUsed[j] {
						ok = false
						break
					}
					rowUsed[i], colUsed[j] = true, true
				}
			}
		}
		if ok {
			if c != 0 {
				add(one, func(int) float64 { return c })
			}
			for i := 0; i < la; i++ {
				for j := 0; j < lb; j++ {
					if d := k[i*lb+j]; d != c {
						add(unit(i, 1), unit(j, d-c))
					}
				}
			}
			return
		}
	}
	if la <= lb {
		for i := 0; i < la; i++ {
			add(unit(i, 1), func(j int) float64 { return k[i*lb+j] })
		}
		return
	}
	for j := 0; j < lb; j++ {
		add(func(i int) float64 { return k[i*lb+j] }, unit(j, 1))
	}
}

// planFactorized decomposes the class table and returns the estimated cost of
// one factorized mat-vec; ok is false when the decomposition has too many
// terms to beat a class table lookup (more than 16).
func (p *Pair) planFactorized() (cost float64, ok bool) {
	f := &p.fact
	f.decompose(p.kEff, p.leA, p.leB)
	if f.nTerms > 16 {
		return 0, false
	}
	a, b := p.A.G, p.B.G
	// Nonzeros per effective class, to size each term.
	cntA := make([]int, p.leA)
	for k := range a.Col {
		cntA[p.effA[p.A.EdgeClass[a.EdgeOf[k]]]]++
	}
	cntB := make([]int, p.leB)
	for k := range b.Col {
		cntB[p.effB[p.B.EdgeClass[b.EdgeOf[k]]]]++
	}
	c := &p.opt.Costs
	for t := 0; t < f.nTerms; t++ {
		na, nb := 0, 0
		for l, n := range cntA {
			if f.us[t*p.leA+l] != 0 {
				na += n
			}
		}
		for l, n := range cntB {
			if f.vs[t*p.leB+l] != 0 {
				nb += n
			}
		}
		rows := min(na, a.N)
		cost += c.Gather*float64(rows*nb) + c.Axpy*float64(na*b.N+rows*b.N)
	}
	return cost, true
}

// setupFactorized builds each term's scaled matrices.
func (p *Pair) setupFactorized() {
	f := &p.fact
	a, b := p.A.G, p.B.G
	for len(f.terms) < f.nTerms {
		f.terms = append(f.terms, term{})
	}
	f.mark = grow(f.mark, a.N)
	for t := 0; t < f.nTerms; t++ {
		tm := &f.terms[t]
		u := f.us[t*p.leA : (t+1)*p.leA]
		v := f.vs[t*p.leB : (t+1)*p.leB]
		tm.aPtr, tm.aCol, tm.aVal = scaleCSR(tm.aPtr, tm.aCol, tm.aVal, p.A, p.effA, u)
		tm.bPtr, tm.bCol, tm.bVal = scaleCSR(tm.bPtr, tm.bCol, tm.bVal, p.B, p.effB, v)
		clear(f.mark)
		tm.need = tm.need[:0]
		for _, j := range tm.aCol {
			if !f.mark[j] {
				f.mark[j] = true
				tm.need = append(tm.need, j)
			}
		}
	}
	f.z = grow(f.z, a.N*b.N)
}

// scaleCSR returns g's adjacency with each nonzero scaled by s at its
// effective class, dropping those scaled to zero.
func scaleCSR(ptr, col []int32, val []float64, g *Graph, eff []int32, s []float64) ([]int32, []int32, []float64) {
	h := g.G
	ptr = grow(ptr, h.N+1)
	col, val = col[:0], val[:0]
	for i := 0; i < h.N; i++ {
		ptr[i] = int32(len(col))
		for k := h.RowPtr[i]; k < h.RowPtr[i+1]; k++ {
			if f := s[eff[g.EdgeClass[h.EdgeOf[k]]]]; f != 0 {
				col = append(col, h.Col[k])
				val = append(val, h.Val[k]*f)
			}
		}
	}
	ptr[h.N] = int32(len(col))
	return ptr, col, val
}

// factMatVec forms y += W·x as Σ_t (A ⊙ u_t) (X (A' ⊙ v_t)ᵀ).
func (p *Pair) factMatVec(x, y []float64) {
	f := &p.fact
	nA, nB := p.A.N, p.B.N
	for t := 0; t < f.nTerms; t++ {
		tm := &f.terms[t]
		// Z rows four at a time: one pass over the sparse rows of A' ⊙ v feeds
		// four independent sums, where one row alone would be a chain of
		// dependent additions.
		need := tm.need
		q := 0
		for ; q+4 <= len(need); q += 4 {
			j0, j1, j2, j3 := int(need[q]), int(need[q+1]), int(need[q+2]), int(need[q+3])
			x0, x1 := x[j0*nB:(j0+1)*nB], x[j1*nB:(j1+1)*nB]
			x2, x3 := x[j2*nB:(j2+1)*nB], x[j3*nB:(j3+1)*nB]
			z0, z1 := f.z[j0*nB:(j0+1)*nB], f.z[j1*nB:(j1+1)*nB]
			z2, z3 := f.z[j2*nB:(j2+1)*nB], f.z[j3*nB:(j3+1)*nB]
			for ip := 0; ip < nB; ip++ {
				k0, k1 := tm.bPtr[ip], tm.bPtr[ip+1]
				cols, vals := tm.bCol[k0:k1], tm.bVal[k0:k1]
				var s0, s1, s2, s3 float64
				for k, jp := range cols {
					v := vals[k]
					s0 += v * x0[jp]
					s1 += v * x1[jp]
					s2 += v * x2[jp]
					s3 += v * x3[jp]
				}
				z0[ip], z1[ip], z2[ip], z3[ip] = s0, s1, s2, s3
			}
		}
		for ; q < len(need); q++ {
			j := int(need[q])
			xr, zr := x[j*nB:(j+1)*nB], f.z[j*nB:(j+1)*nB]
			for ip := range zr {
				k0, k1 := tm.bPtr[ip], tm.bPtr[ip+1]
				cols, vals := tm.bCol[k0:k1], tm.bVal[k0:k1]
				s := 0.0
				for k, jp := range cols {
					s += vals[k] * xr[jp]
				}
				zr[ip] = s
			}
		}
		for i := 0; i < nA; i++ {
			yr := y[i*nB : (i+1)*nB]
			k0, k1 := tm.aPtr[i], tm.aPtr[i+1]
			for k, j := range tm.aCol[k0:k1] {
				axpy(tm.aVal[int(k0)+k], f.z[int(j)*nB:int(j+1)*nB], yr)
			}
		}
	}
}
