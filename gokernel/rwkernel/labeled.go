package rwkernel

import (
	"fmt"
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"gonum.org/v1/gonum/mat"
)

// Tuning of the labeled solvers.
const (
	// cgRelErr is the bound on the relative error of the kernel value at which CG
	// stops (see cg); the error actually reached is usually far smaller.
	cgRelErr = 1e-14
	// cgMaxIter bounds CG before it gives way to the direct solve.
	cgMaxIter = 2000
	// maxDirect is the largest product system solved by dense LU (≈ 0.5 GiB).
	maxDirect = 8000
	// maxProductEdges is the largest explicit product graph (12 bytes per edge);
	// above it the matrix-free grid operator is used.
	maxProductEdges = 1 << 22
	// maxTable bounds the number of node classes whose kernel is tabulated.
	maxTable = 1024
)

// scratch is per-goroutine working memory, grown as needed and reused across pairs.
type scratch struct {
	kn     []float64
	idx    []int32
	rowPtr []int32
	col    []int32
	val    []float64
	diag   []float64
	rowSum []float64 // W×·1, a by-product of building the product graph
	vec    [6][]float64
	g1, g2 []float64
	dense  []float64
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// productOp applies W× restricted to the product nodes with κ ≠ 0: explicitly
// as a sparse matrix over those nodes (csr), or matrix-free on the full n×n' grid
// as κ ∘ (A · (κ ∘ X) · A'), which needs only O(n·n') memory.
type productOp struct {
	dim   int
	csr   bool
	loops bool // W× has diagonal entries (both graphs have self-loops)
	ws    *scratch
	a, b  *graph.Graph
	kn    []float64
}

// applyShifted sets q = d − λ·W×d and returns dᵀq, in one pass for the explicit
// product graph: the CG step's mat-vec, update and dot product.
func (o *productOp) applyShifted(d, q []float64, lam float64) float64 {
	dq := 0.0
	if !o.csr {
		o.apply(d, q)
		for k, v := range d {
			q[k] = v - lam*q[k]
			dq += v * q[k]
		}
		return dq
	}
	ws := o.ws
	rp, col, val := ws.rowPtr[:o.dim+1], ws.col, ws.val
	val = val[:len(col)]
	q = q[:o.dim]
	d = d[:o.dim]
	e := rp[0]
	for r := range q {
		end := rp[r+1]
		s := 0.0
		for ; e < end; e++ {
			s += val[e] * d[col[e]]
		}
		v := d[r] - lam*s
		q[r] = v
		dq += d[r] * v
	}
	return dq
}

func (o *productOp) apply(x, y []float64) {
	ws := o.ws
	if o.csr {
		rp, col, val := ws.rowPtr[:o.dim+1], ws.col, ws.val
		val = val[:len(col)]
		y = y[:o.dim]
		e := rp[0]
		for r := range y {
			end := rp[r+1]
			s := 0.0
			for ; e < end; e++ {
				s += val[e] * x[col[e]]
			}
			y[r] = s
		}
		return
	}
	n, m := o.a.N, o.b.N
	t, z := ws.g1, ws.g2
	for k := range t {
		t[k] = o.kn[k] * x[k]
	}
	// Z = A·T, row by row over A's adjacency lists.
	for u := 0; u < n; u++ {
		zu := z[u*m : (u+1)*m]
		clear(zu)
		for e := o.a.RowPtr[u]; e < o.a.RowPtr[u+1]; e++ {
			w, tv := o.a.Val[e], t[int(o.a.Col[e])*m:int(o.a.Col[e]+1)*m]
			for k, x := range tv {
				zu[k] += w * x
			}
		}
	}
	// Y = Z·A' (A' symmetric), then κ ∘ Y.
	for u := 0; u < n; u++ {
		zu, yu := z[u*m:(u+1)*m], y[u*m:(u+1)*m]
		for l := 0; l < m; l++ {
			s := 0.0
			for f := o.b.RowPtr[l]; f < o.b.RowPtr[l+1]; f++ {
				s += o.b.Val[f] * zu[o.b.Col[f]]
			}
			yu[l] = s * o.kn[u*m+l]
		}
	}
}

// labeledPair evaluates K on the product graph weighted by the node kernel, its
// nodes numbered row-major over (graph i, graph j); errors do not name the pair.
func (p *plan) labeledPair(ws *scratch, i, j int) (float64, error) {
	ga, gb := p.graphs[i], p.graphs[j]
	n, m := ga.N, gb.N
	if n == 0 || m == 0 {
		return 0, nil
	}
	nm := n * m
	ws.kn = grow(ws.kn, nm)
	kn := ws.kn
	p.nodeMatrix(i, j, kn)
	csr := !p.opt.GridProduct && int64(len(ga.Col))*int64(len(gb.Col)) <= maxProductEdges
	// One pass over the node pairs: the largest |κ|, the active pairs (κ ≠ 0) and,
	// for the explicit product graph, their indices and its exact edge count.
	maxK := 0.0
	active, edges := 0, 0
	if csr {
		ws.idx = grow(ws.idx, nm)
		idx := ws.idx
		for u := 0; u < n; u++ {
			du := int(ga.RowPtr[u+1] - ga.RowPtr[u])
			row, irow := kn[u*m:(u+1)*m], idx[u*m:(u+1)*m]
			for k, x := range row {
				irow[k] = -1
				if x != 0 {
					maxK = max(maxK, math.Abs(x))
					irow[k] = int32(active)
					active++
					edges += du * int(gb.RowPtr[k+1]-gb.RowPtr[k])
				}
			}
		}
	} else {
		for _, x := range kn {
			maxK = max(maxK, math.Abs(x))
			if x != 0 {
				active++
			}
		}
	}
	// Product nodes with κ = 0 have no edges: each adds exactly 1 (μ_0 = 1) to the
	// k = 0 term and nothing else.
	if active == 0 {
		return float64(nm), nil
	}
	op := &productOp{ws: ws, a: ga, b: gb, kn: kn, csr: csr}
	offset := 0.0
	loops := p.rw[i].loops && p.rw[j].loops
	if csr {
		op.dim = active
		offset = float64(nm - active)
		p.buildProduct(ws, ga, gb, kn, active, edges, loops)
	} else {
		op.dim = nm
		ws.g1, ws.g2 = grow(ws.g1, nm), grow(ws.g2, nm)
		ws.diag = grow(ws.diag, nm)
		clear(ws.diag)
		for u := 0; loops && u < n; u++ {
			for e := ga.RowPtr[u]; e < ga.RowPtr[u+1]; e++ {
				if int(ga.Col[e]) != u {
					continue
				}
				for k := 0; k < m; k++ {
					for f := gb.RowPtr[k]; f < gb.RowPtr[k+1]; f++ {
						if int(gb.Col[f]) == k {
							x := kn[u*m+k]
							ws.diag[u*m+k] += ga.Val[e] * gb.Val[f] * x * x
						}
					}
				}
			}
		}
	}
	op.loops = loops
	for k := range ws.vec {
		ws.vec[k] = grow(ws.vec[k], op.dim)
	}
	switch {
	case p.opt.Steps > 0:
		return offset + p.truncated(op), nil
	case p.opt.Kind == Exponential:
		bound := p.lambda * p.rw[i].rho * p.rw[j].rho * maxK * maxK
		return offset + p.expAction(op, bound), nil
	}
	s, err := p.geometric(op, p.rw[i].rho*p.rw[j].rho*maxK*maxK, offset)
	if err != nil {
		return 0, err
	}
	return offset + s, nil
}

// buildProduct stores W× over the active product nodes in ws (CSR, rows in the
// order u-major, k-minor; ws.idx maps node pairs to rows, -1 when inactive) and,
// when both graphs have self-loops, its diagonal for the Jacobi preconditioner.
// edges bounds the number of entries (Σ over active pairs of deg(u)·deg(k)), so
// the arrays are sized once and filled by index.
func (p *plan) buildProduct(ws *scratch, ga, gb *graph.Graph, kn []float64, active, edges int, loops bool) {
	n, m := ga.N, gb.N
	idx := ws.idx
	ws.rowPtr = grow(ws.rowPtr, active+1)
	ws.diag = grow(ws.diag, active)
	ws.rowSum = grow(ws.rowSum, active)
	col, val := grow(ws.col, edges), grow(ws.val, edges)
	bRow, bCol, bVal := gb.RowPtr, gb.Col, gb.Val
	r, t := 0, 0
	for u := 0; u < n; u++ {
		na := ga.Col[ga.RowPtr[u]:ga.RowPtr[u+1]]
		wa := ga.Val[ga.RowPtr[u]:ga.RowPtr[u+1]]
		wa = wa[:len(na)]
		for k, x := range kn[u*m : (u+1)*m] {
			if x == 0 {
				continue
			}
			ws.rowPtr[r] = int32(t)
			nb := bCol[bRow[k]:bRow[k+1]]
			wb := bVal[bRow[k]:bRow[k+1]]
			wb = wb[:len(nb)]
			sum := 0.0
			for e, j := range na {
				jm, w := int(j)*m, wa[e]*x
				row, krow := idx[jm:jm+m], kn[jm:jm+m]
				for f, l := range nb {
					if c := row[l]; c >= 0 {
						v := w * wb[f] * krow[l]
						col[t], val[t] = c, v
						sum += v
						t++
					}
				}
			}
			ws.rowSum[r] = sum
			r++
		}
	}
	ws.rowPtr[active] = int32(t)
	ws.col, ws.val = col[:t], val[:t]
	if !loops {
		return
	}
	for r := 0; r < active; r++ {
		d := 0.0
		for e := ws.rowPtr[r]; e < ws.rowPtr[r+1]; e++ {
			if int(ws.col[e]) == r {
				d += ws.val[e]
			}
		}
		ws.diag[r] = d
	}
}

// truncated returns Σ_{k=0..p} μ_k 1ᵀ(W×)^k 1 over all n·n' product nodes minus
// the inactive ones the caller adds (μ_0 = 1 for those).
func (p *plan) truncated(op *productOp) float64 {
	v, w := op.ws.vec[0], op.ws.vec[1]
	for k := range v {
		v[k] = 1
	}
	s := p.mu[0] * float64(op.dim)
	for k := 1; k < len(p.mu); k++ {
		op.apply(v, w)
		v, w = w, v
		t := 0.0
		for _, x := range v {
			t += x
		}
		s += p.mu[k] * t
	}
	return s
}

// expAction returns 1ᵀ exp(λW×) 1 by exp(λW) = (exp(λW/s))^s with s ≥ λ‖W‖, each
// factor a Taylor series summed until its terms fall below 1e-17 of the partial
// sum. normBound bounds λ‖W×‖₂.
func (p *plan) expAction(op *productOp, normBound float64) float64 {
	v, t, w := op.ws.vec[0], op.ws.vec[1], op.ws.vec[2]
	for k := range v {
		v[k] = 1
	}
	steps := max(1, int(math.Ceil(normBound)))
	h := p.lambda / float64(steps)
	for range steps {
		copy(t, v)
		for k := 1; k < 200; k++ {
			op.apply(t, w)
			tn, sn := 0.0, 0.0
			c := h / float64(k)
			for x := range t {
				t[x] = c * w[x]
				v[x] += t[x]
				tn = max(tn, math.Abs(t[x]))
				sn = max(sn, math.Abs(v[x]))
			}
			if tn <= 1e-17*sn {
				break
			}
		}
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// geometric returns 1ᵀx for (I − λW×)x = 1. rhoW bounds ρ(W×), so that
// 1 − λ·rhoW bounds the smallest eigenvalue of the system from below, and offset
// (the inactive product nodes) is what the caller will add to the result.
func (p *plan) geometric(op *productOp, rhoW, offset float64) (float64, error) {
	if p.opt.Solver != SolverDirect {
		if s, ok := p.cg(op, rhoW, offset); ok {
			return s, nil
		}
	}
	if op.dim > maxDirect {
		return 0, fmt.Errorf("conjugate gradients did not converge on the %d-node product graph (lamda too close to its limit?) and it is too large to factorize", op.dim)
	}
	return p.direct(op)
}

// cg solves M x = 1, M = I − λW× (symmetric positive definite when λρ(W×) < 1), by
// conjugate gradients, preconditioned with M's diagonal when W× has one (self-
// loops; otherwise the diagonal is I and plain CG is used).
//
// Only 1ᵀx is wanted, and for any iterate x_k with residual r_k = 1 − M x_k,
//
//	1ᵀx = 1ᵀx_k + x_kᵀr_k + e_kᵀ M e_k,   e_k = x − x_k,
//
// so the corrected estimate 1ᵀx_k + x_kᵀr_k is off by e_kᵀMe_k ≤ ‖r_k‖²/λ_min(M),
// the square of what 1ᵀx_k alone is off by. CG stops when that bound, with
// λ_min(M) ≥ 1 − λ·rhoW, is below cgRelErr of n·n' ≤ K: a guaranteed relative
// error bound reached in about half the iterations a residual test would need.
func (p *plan) cg(op *productOp, rhoW, offset float64) (float64, bool) {
	lam := p.lambda
	ws := op.ws
	lmin := 1 - lam*rhoW
	if !(lmin > 0) {
		return 0, false
	}
	// The kernel is at least n·n' (offset + dim): W× ≥ 0 entrywise (base kernels
	// and weights are non-negative), so x = Σ (λW×)^k 1 ≥ 1. Measuring the error
	// bound against that needs no running estimate of the kernel.
	scale := offset + float64(op.dim)
	x, r, z, d, q := ws.vec[0], ws.vec[1], ws.vec[2], ws.vec[3], ws.vec[4]
	dinv := ws.vec[5]
	pre := false
	if op.loops {
		for k := range x {
			dinv[k] = 1 / (1 - lam*ws.diag[k])
			pre = pre || ws.diag[k] != 0
		}
	}
	if !pre {
		z = r
	}
	// x_0 = 0, r_0 = 1.
	rz, rr := 0.0, 0.0
	for k := range x {
		x[k], r[k] = 0, 1
		if pre {
			z[k] = dinv[k]
		}
		d[k] = z[k]
		rz += r[k] * z[k]
		rr++
	}
	for it := 0; it < cgMaxIter; it++ {
		var dq float64
		if it == 0 && op.csr && !pre {
			// d = 1: W×d is the row sums the build already summed.
			for k, v := range ws.rowSum[:op.dim] {
				q[k] = 1 - lam*v
				dq += q[k]
			}
		} else {
			dq = op.applyShifted(d, q, lam)
		}
		if !(dq > 0) {
			return 0, false
		}
		alpha := rz / dq
		rzNew := 0.0
		rr = 0
		if pre {
			for k := range x {
				x[k] += alpha * d[k]
				r[k] -= alpha * q[k]
				z[k] = dinv[k] * r[k]
				rzNew += r[k] * z[k]
				rr += r[k] * r[k]
			}
		} else {
			for k := range x {
				x[k] += alpha * d[k]
				r[k] -= alpha * q[k]
				rr += r[k] * r[k]
			}
			rzNew = rr
		}
		if rr/lmin <= cgRelErr*scale {
			sx, xr := 0.0, 0.0
			for k, v := range x {
				sx += v
				xr += v * r[k]
			}
			return sx + xr, true
		}
		beta := rzNew / rz
		rz = rzNew
		for k := range d {
			d[k] = z[k] + beta*d[k]
		}
	}
	return 0, false
}

// direct solves (I − λW×)x = 1 by dense LU.
func (p *plan) direct(op *productOp) (float64, error) {
	nd := op.dim
	ws := op.ws
	ws.dense = grow(ws.dense, nd*nd)
	e, col := ws.vec[0], ws.vec[1]
	for c := 0; c < nd; c++ {
		clear(e)
		e[c] = 1
		op.apply(e, col)
		for r := 0; r < nd; r++ {
			ws.dense[r*nd+c] = -p.lambda * col[r]
		}
		ws.dense[c*nd+c]++
	}
	ones := make([]float64, nd)
	for k := range ones {
		ones[k] = 1
	}
	var lu mat.LU
	lu.Factorize(mat.NewDense(nd, nd, ws.dense))
	var x mat.VecDense
	if err := lu.SolveVecTo(&x, false, mat.NewVecDense(nd, ones)); err != nil {
		return 0, fmt.Errorf("the product system is singular: %w", err)
	}
	s := 0.0
	for k := 0; k < nd; k++ {
		s += x.AtVec(k)
	}
	return s, nil
}

// nodeMatrix fills kn (n_i × n_j) with the node kernel between graphs i and j.
func (p *plan) nodeMatrix(i, j int, kn []float64) {
	ga, gb := p.graphs[i], p.graphs[j]
	m := gb.N
	if p.table != nil {
		ci, cj := p.cls[i], p.cls[j]
		for u, c := range ci {
			t := p.table[int(c)*p.nClass : int(c+1)*p.nClass]
			row := kn[u*m : (u+1)*m]
			for k, d := range cj {
				row[k] = t[d]
			}
		}
		return
	}
	k := p.opt.NodeKernel
	for u := 0; u < ga.N; u++ {
		x := ga.Node(u)
		row := kn[u*m : (u+1)*m]
		for v := range row {
			row[v] = k.Eval(x, gb.Node(v))
		}
	}
}

// nodeClasses gives nodes with identical feature rows (over the columns the
// kernel reads) one class and, when there are at most maxTable classes, tabulates
// the kernel between classes once, so pairs copy values instead of evaluating.
// Classes are numbered in the order they appear in the call, but the numbers
// only index the table: no sum runs in their order. Rows of a class are equal
// bit for bit (-0 and +0 are two classes), so that an entry is exactly the
// kernel on any two rows of its classes, whatever the kernel: κ, and a pair's
// value, are the same whether and however a call tabulates.
func (p *plan) nodeClasses() {
	cols := microkernel.MaxCol(p.opt.NodeKernel)
	ids := make(map[string]int32)
	var rep [][]float64
	p.cls = make([][]int32, len(p.graphs))
	key := make([]byte, 0, 8*cols)
	for i, g := range p.graphs {
		c := make([]int32, g.N)
		for u := range c {
			row := g.Node(u)[:cols]
			key = key[:0]
			for _, x := range row {
				b := math.Float64bits(x)
				for s := 0; s < 64; s += 8 {
					key = append(key, byte(b>>s))
				}
			}
			id, ok := ids[string(key)]
			if !ok {
				if len(rep) == maxTable {
					p.cls = nil
					return
				}
				id = int32(len(rep))
				ids[string(key)] = id
				rep = append(rep, row)
			}
			c[u] = id
		}
		p.cls[i] = c
	}
	p.nClass = len(rep)
	p.table = make([]float64, p.nClass*p.nClass)
	for a, x := range rep {
		for b, y := range rep {
			p.table[a*p.nClass+b] = p.opt.NodeKernel.Eval(x, y)
		}
	}
}

// kernelBound returns a bound on |κ(x, y)| known from the kernel's form, and
// whether one is known. It lets Gram check λ for the whole batch before any work.
func kernelBound(k microkernel.Kernel) (float64, bool) {
	switch k := k.(type) {
	case *microkernel.Constant:
		return math.Abs(k.C), true
	case *microkernel.KroneckerDelta:
		return max(1, math.Abs(k.H)), true
	case *microkernel.SquareExponential:
		return 1, true
	case *microkernel.BrownianBridge:
		return math.Abs(k.C), true
	case *microkernel.Sum:
		s := 0.0
		for _, t := range k.Terms {
			b, ok := kernelBound(t)
			if !ok {
				return 0, false
			}
			s += b
		}
		return s, true
	case *microkernel.Product:
		s := 1.0
		for _, t := range k.Terms {
			b, ok := kernelBound(t)
			if !ok {
				return 0, false
			}
			s *= b
		}
		return s, true
	case *microkernel.Normalized:
		// Cauchy–Schwarz bounds a normalized positive semi-definite kernel by 1.
		if psd(k.K) {
			return 1, true
		}
	}
	return 0, false
}

// psd reports whether k is positive semi-definite by construction.
func psd(k microkernel.Kernel) bool {
	switch k := k.(type) {
	case *microkernel.Constant:
		return k.C >= 0
	case *microkernel.KroneckerDelta:
		return k.H >= 0 && k.H <= 1
	case *microkernel.SquareExponential, *microkernel.BrownianBridge:
		return true
	case *microkernel.Sum:
		for _, t := range k.Terms {
			if !psd(t) {
				return false
			}
		}
		return true
	case *microkernel.Product:
		for _, t := range k.Terms {
			if !psd(t) {
				return false
			}
		}
		return true
	case *microkernel.Normalized:
		return psd(k.K)
	}
	return false
}
