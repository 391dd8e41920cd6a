package mgk

// Kronecker-factored product (issue #37, step 1: a prototype, not wired into
// Gram). With an edge kernel that is a constant plus a match of label
// classes,
//
//	κe(ℓ, ℓ') = α + β·[c(ℓ) = c'(ℓ')],
//
// (KroneckerDelta(h): α = h, β = 1 − h, the classes those of the columns it
// reads; Constant(c): α = c, β = 0), the product adjacency is a short sum of
// Kronecker products of class-split adjacencies,
//
//	W = α (A ⊗ A') + β Σ_c (A_c ⊗ A'_c),
//
// and W·x for X = reshape(x, n × n') (row i holds the product nodes (i, ·))
// is
//
//	Y = Σ_c A_c (α R + β R_c),  R_c = X A'_cᵀ,  R = X A'ᵀ.
//
// kronOperator forms it in two passes: a gather over H's adjacency that
// yields R and every R_c (n·nnz' scalar multiply-adds; per node over label
// segments, or with flat set over H's edges into one slot per class, summed
// after), then, per nonzero (i, j) of A with class c, the row update
// Y_i += α w R_j + β w R_c,j on contiguous rows of length n' (SIMD on the
// simd build): 2·nnz·n' multiply-adds. The edge-pair loop does nnz·nnz'
// instead, as scalar scatters. The solver is Jacobi-preconditioned CG
// (pairSolver.jacobi) on the same system and to the same tolerance as
// SolverJacobi: only the product changes.
//
// Measured against today's scatter-SGS solve it is ×0.36 on MUTAG (Jacobi's
// 27.4 iterations against SGS's 6.73, and a product no faster on graphs this
// small): benchmarks/log/kronecker_prototype.md. It is kept for step 1's
// record and tests, not used by Gram.

// kronAdj is one graph's symmetric adjacency (graph.Graph's CSR: a self-loop
// once) with each node's neighbours ordered by edge label and grouped into
// segments of one label.
type kronAdj struct {
	n int
	// rowPtr delimits node i's entries as in graph.Graph.RowPtr; segPtr its
	// segments; segOff[s]..segOff[s+1] are segment s's entries and segLab[s]
	// its label (the side's edge label number, side.elab).
	rowPtr, segPtr, segOff, segLab []int32
	// col, w and lab are each entry's neighbour, weight and label.
	col []int32
	w   []float64
	lab []int32
	// eu, ev, ew and el list the undirected edges (in the side's order:
	// matchings, for the unpacked graphs, see matchingOrder) for the flat
	// gather; a self-loop has eu = ev.
	eu, ev []int32
	ew     []float64
	el     []int32
}

// newKronAdj builds s's kronAdj. It is per graph, not per pair.
func newKronAdj(s *side) kronAdj {
	g := s.g
	nnz := len(g.Col)
	ka := kronAdj{n: g.N, rowPtr: g.RowPtr, segPtr: make([]int32, g.N+1),
		col: make([]int32, 0, nnz), w: make([]float64, 0, nnz), lab: make([]int32, 0, nnz)}
	ka.segOff = append(ka.segOff, 0)
	for i := range g.N {
		lo, hi := int(g.RowPtr[i]), int(g.RowPtr[i+1])
		ks := make([]int, 0, hi-lo)
		for k := lo; k < hi; k++ {
			ks = append(ks, k)
		}
		lab := func(k int) int32 { return s.elab[g.EdgeOf[k]] }
		// Insertion sort by label: rows are short.
		for x := 1; x < len(ks); x++ {
			for y := x; y > 0 && lab(ks[y-1]) > lab(ks[y]); y-- {
				ks[y-1], ks[y] = ks[y], ks[y-1]
			}
		}
		for x, k := range ks {
			if x == 0 || lab(ks[x-1]) != lab(k) {
				if x > 0 {
					ka.segOff = append(ka.segOff, int32(len(ka.col)))
				}
				ka.segLab = append(ka.segLab, lab(k))
			}
			ka.col = append(ka.col, g.Col[k])
			ka.w = append(ka.w, g.Val[k])
			ka.lab = append(ka.lab, lab(k))
		}
		if len(ks) > 0 {
			ka.segOff = append(ka.segOff, int32(len(ka.col)))
		}
		ka.segPtr[i+1] = int32(len(ka.segLab))
	}
	ka.eu, ka.ev, ka.ew, ka.el = g.EdgeU, g.EdgeV, g.Weight, s.elab
	return ka
}

// kronOperator is the Kronecker-factored productOperator of one pair (see
// the top of this file).
type kronOperator struct {
	n, nh int
	// stride is the row stride of rtot and rs: nh rounded up to a multiple
	// of 4, so the row updates load whole vectors.
	stride int
	// g is G's adjacency; ca and cb hold α·w and β·w per entry, gslot the
	// slot of R_c the entry reads (−1: none, the β term vanishes).
	g      *kronAdj
	ca, cb []float64
	gslot  []int32
	// h is H's adjacency, segSlot the slot its segments write (−1: none).
	h       *kronAdj
	segSlot []int32
	nslot   int
	// rtot holds R, rs the R_c one after another (nslot of them).
	rtot, rs []float64
	// rtotBuf and rsBuf own rtot's and rs's memory when they are not views
	// of fs.
	rtotBuf, rsBuf []float64
	// flat selects the flat gather (mulWFlat) over H's undirected edges:
	// eoff is each edge's slot offset in fs, which holds nslot+1 slots, the
	// last for the edges of no class; R is their sum.
	flat bool
	eoff []int
	fs   []float64
	// gc, hc and defRow are reset's scratch (splitTable).
	gc, hc, defRow []int32
}

// splitTable writes the pair's edge-label table ke (lg × lh) as
//
//	ke[la, lb] = α + β·[gc[la] = hc[lb] ≥ 0],
//
// with the labels of each side in classes (the feature rows a
// KroneckerDelta on some of their columns cannot tell apart), numbered
// 0..nc−1 (−1: a label in no class, reading α alone). It reports false when
// ke has no such form. gc and hc must have lg and lh entries; defRow is
// scratch of lg entries.
func splitTable(ke []float64, lg, lh int, gc, hc, defRow []int32) (alpha, beta float64, nc int, ok bool) {
	if lg == 0 || lh == 0 {
		for la := range gc[:lg] {
			gc[la] = -1
		}
		for lb := range hc[:lh] {
			hc[lb] = -1
		}
		return 0, 0, 0, true
	}
	try := func(a float64) (float64, int, bool) {
		b, seen, nc := 0.0, false, 0
		for lb := range hc[:lh] {
			hc[lb] = -1
		}
		for la := range lg {
			gc[la] = -1
			row := ke[la*lh : (la+1)*lh]
			for lb, v := range row {
				if v == a {
					continue
				}
				if seen && v != b {
					return 0, 0, false
				}
				b, seen = v, true
				if gc[la] < 0 {
					// The first label above α names the class.
					c := hc[lb]
					if c < 0 {
						c = int32(nc)
						defRow[c] = int32(la)
						nc++
					}
					gc[la] = c
				}
				if hc[lb] >= 0 && hc[lb] != gc[la] {
					return 0, 0, false
				}
				hc[lb] = gc[la]
			}
			// The row must be its class's defining row.
			if c := gc[la]; c >= 0 {
				d := ke[int(defRow[c])*lh : (int(defRow[c])+1)*lh]
				for lb := range row {
					if row[lb] != d[lb] {
						return 0, 0, false
					}
				}
			}
		}
		if !seen {
			return 0, 0, true
		}
		return b - a, nc, true
	}
	if b, nc, ok := try(ke[0]); ok {
		return ke[0], b, nc, true
	}
	// ke[0] may itself lie in a class: take the first other value.
	for _, v := range ke[:lg*lh] {
		if v != ke[0] {
			if b, nc, ok := try(v); ok {
				return v, b, nc, true
			}
			break
		}
	}
	return 0, 0, 0, false
}

// reset sets the operator up for the pair (G, H) whose edge-label table ke
// has splitTable's form. It reports false when it has not.
func (o *kronOperator) reset(g, h *kronAdj, ke []float64, lg, lh int) bool {
	o.gc, o.hc, o.defRow = growI(o.gc, lg), growI(o.hc, lh), growI(o.defRow, lg)
	alpha, beta, nc, ok := splitTable(ke, lg, lh, o.gc, o.hc, o.defRow)
	if !ok {
		return false
	}
	o.n, o.nh, o.g, o.h = g.n, h.n, g, h
	o.stride = (h.n + 3) &^ 3
	// One slot per class: R_c sums H's entries of the class's labels.
	o.nslot = nc
	if beta == 0 {
		o.nslot = 0
	}
	nnz := len(g.col)
	o.ca, o.cb = growF(o.ca, nnz), growF(o.cb, nnz)
	o.gslot = growI(o.gslot, nnz)
	for k, w := range g.w {
		o.ca[k], o.cb[k], o.gslot[k] = alpha*w, beta*w, -1
		if o.nslot > 0 {
			o.gslot[k] = o.gc[g.lab[k]]
		}
	}
	o.segSlot = growI(o.segSlot, len(h.segLab))
	for s, lb := range h.segLab {
		o.segSlot[s] = -1
		if o.nslot > 0 {
			o.segSlot[s] = o.hc[lb]
		}
	}
	nn := o.n * o.stride
	o.rtotBuf, o.rsBuf = growF(o.rtotBuf, nn), growF(o.rsBuf, o.nslot*nn)
	o.rtot, o.rs = o.rtotBuf, o.rsBuf
	if o.flat {
		o.fs = growF(o.fs, (o.nslot+1)*nn)
		o.eoff = o.eoff[:0]
		for _, lb := range h.el {
			sl := o.nslot
			if o.nslot > 0 && o.hc[lb] >= 0 {
				sl = int(o.hc[lb])
			}
			o.eoff = append(o.eoff, sl*nn)
		}
		// The class slots lead fs, so the row pass reads them there.
		o.rs = o.fs[:o.nslot*nn]
		if o.nslot == 0 {
			o.rtot = o.fs[:nn]
		}
	}
	return true
}

func growF(s []float64, n int) []float64 { return grow(s, n) }

func growI(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// mulW implements productOperator.
func (o *kronOperator) mulW(dst, src []float64) {
	if o.flat {
		o.mulWFlat(dst, src)
		return
	}
	n, nh, st := o.n, o.nh, o.stride
	nn := n * st
	h := o.h
	rs := o.rs[:o.nslot*nn]
	if o.nslot == 0 {
		// R alone: a plain CSR gather over H.
		hp, hc, hw := h.rowPtr[:nh+1], h.col, h.w
		for i := range n {
			x := src[i*nh : (i+1)*nh]
			rt := o.rtot[i*st : i*st+nh]
			for ip := range rt {
				s := 0.0
				for k := hp[ip]; k < hp[ip+1]; k++ {
					s += hw[k] * x[hc[k]]
				}
				rt[ip] = s
			}
		}
	} else {
		clear(rs)
		sp, so, hc, hw, ss := h.segPtr[:nh+1], h.segOff, h.col, h.w, o.segSlot
		for i := range n {
			x := src[i*nh : (i+1)*nh]
			base := i * st
			rt := o.rtot[base : base+nh]
			for ip := range rt {
				tot := 0.0
				for s := sp[ip]; s < sp[ip+1]; s++ {
					sum := 0.0
					for k := so[s]; k < so[s+1]; k++ {
						sum += hw[k] * x[hc[k]]
					}
					if sl := ss[s]; sl >= 0 {
						rs[int(sl)*nn+base+ip] += sum
					}
					tot += sum
				}
				rt[ip] = tot
			}
		}
	}
	kronRows(o, dst)
}

// mulWFlat is mulW with the gather as one flat loop over H's undirected
// edges per row of X, each edge adding to both of its ends in its class's
// slot (no per-node loops, whose short trip counts mispredict), then R as
// the sum of the slots.
func (o *kronOperator) mulWFlat(dst, src []float64) {
	n, nh, st := o.n, o.nh, o.stride
	nn := n * st
	h := o.h
	fs := o.fs[:(o.nslot+1)*nn]
	clear(fs)
	// Edge outer, rows inner: the edge's ends, weight and slot stay in
	// registers, and the rows' updates are independent (strided, within L1).
	ev, ew, eoff := h.ev[:len(h.eu)], h.ew[:len(h.eu)], o.eoff[:len(h.eu)]
	xs := src[:n*nh]
	for e, u := range h.eu {
		v, w, off := int(ev[e]), ew[e], eoff[e]
		u := int(u)
		if u == v {
			for i := range n {
				fs[off+i*st+u] += w * xs[i*nh+u]
			}
			continue
		}
		for i := range n {
			xi, fi := xs[i*nh:i*nh+nh], fs[off+i*st:off+i*st+st]
			fi[u] += w * xi[v]
			fi[v] += w * xi[u]
		}
	}
	if o.nslot > 0 {
		kronSum(o.rtot[:nn], fs, o.nslot+1)
	}
	kronRows(o, dst)
}

// kronSumGo sets dst to the sum of the k slots of fs, each len(dst) long.
func kronSumGo(dst, fs []float64, k int) {
	nn := len(dst)
	copy(dst, fs[(k-1)*nn:k*nn])
	for sl := range k - 1 {
		r := fs[sl*nn : (sl+1)*nn]
		for i := range dst {
			dst[i] += r[i]
		}
	}
}

// kronRowsGo is the row pass of mulW: Y_i = Σ_(i,j) ca·R_j + cb·R_c,j.
func kronRowsGo(o *kronOperator, dst []float64) {
	n, nh, st := o.n, o.nh, o.stride
	nn := n * st
	g := o.g
	for i := range n {
		d := dst[i*nh : (i+1)*nh]
		clear(d)
		for k := g.rowPtr[i]; k < g.rowPtr[i+1]; k++ {
			j := int(g.col[k]) * st
			rt := o.rtot[j : j+nh]
			a := o.ca[k]
			if sl := o.gslot[k]; sl >= 0 {
				r2 := o.rs[int(sl)*nn+j : int(sl)*nn+j+nh]
				b := o.cb[k]
				for ip := range d {
					d[ip] += a*rt[ip] + b*r2[ip]
				}
				continue
			}
			for ip := range d {
				d[ip] += a * rt[ip]
			}
		}
	}
}

// prepareKron is prepare for the Kronecker-Jacobi prototype: V, D and the
// Jacobi diagonal as SolverJacobi has them, the product through op on the
// sides' kronAdj ka and kb (a's and b's). It reports false, with ps not
// usable, when the pair's edge-label table has no Kronecker form.
func (ps *pairSolver) prepareKron(a, b *side, ka, kb *kronAdj, op *kronOperator, opt *Options) (bool, error) {
	ps.a, ps.b, ps.opt = a, b, opt
	n := a.g.N * b.g.N
	for _, s := range []*[]float64{&ps.v, &ps.s, &ps.dd, &ps.diag, &ps.inv, &ps.sol, &ps.r, &ps.p, &ps.ap, &ps.t, &ps.z} {
		*s = grow(*s, n)
	}
	ps.sgs = false
	ps.tol, ps.gradTol = tolFor(opt, false), gradTolFor(opt, false)
	if err := ps.nodeKernels(a, b, opt); err != nil {
		return false, err
	}
	ps.fill(1 / ((1 - opt.Q) * (1 - opt.Q)))
	ps.edgeKernels(a, b, opt)
	if !op.reset(ka, kb, ps.ke, len(a.erep), len(b.erep)) {
		return false, nil
	}
	ps.jacobiDiagonal(false)
	ps.w = op
	return true, nil
}
