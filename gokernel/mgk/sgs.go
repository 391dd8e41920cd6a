package mgk

import (
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/vec"
)

// Symmetric Gauss–Seidel preconditioning in Eisenstat's form.
//
// Split M = D − S W S (pairSolver) as M = L + Dm + Lᵀ with Dm its diagonal and
// L its strictly lower part in the solver's node order (product node i·n' + i'
// grouped by G's node i), and let E = Dm + L. The SGS preconditioner is
// P = E Dm⁻¹ Eᵀ, and CG preconditioned by P is CG on
//
//	Â ŷ = E⁻¹ b,  Â = E⁻¹ M E⁻ᵀ,  y = E⁻ᵀ ŷ,
//
// preconditioned by Dm (z = Dm∘r̂). Since M = E + Eᵀ − Dm,
//
//	Â p = t + E⁻¹ (p − Dm t),  t = E⁻ᵀ p,
//
// so one product with Â is a backward sweep (Eᵀ's strictly upper part) and a
// forward sweep (L), which together visit every pair of undirected edges once
// with two updates each: the four updates of one W product, in two passes.
// CG stops on the preconditioned residual √(r̂ᵀ Dm r̂), relative to its start.
//
// Edge pairs are processed grouped by G's node: the backward sweep over G's
// nodes from last to first gathers, for the block of node i, the products over
// G's edges to nodes j > i (already final), and the forward sweep those to
// nodes j < i. A self-loop of G couples product nodes within one block
// (i, a') ↔ (i, b'); those entries are handled point by point inside the
// block, in H's node order, through H's adjacency.
//
// The sweeps work on the unscaled system A x = S⁻¹b, A = S⁻¹ M S⁻¹ =
// D V⁻¹ − W (symmetric), x = S y: SGS preconditioning is invariant under
// diagonal scaling, so the iterates and the stopping test are those of the
// scaled system, and the sweeps save every multiplication by s and the vector
// s∘t. A node pair with v = 0 has x = 0 (its row of M reads D y = 0); it gets
// a zero inverse diagonal and zero Dm, so that every vector stays 0 there and
// CG runs on the other rows only.
//
// When the preconditioner's diagonal Dp had to be made positive (M is then not
// positive definite and CG will report a breakdown), the identity reads
// M = E + Eᵀ − (2Dp − Dm) and dk holds 2Dp − Dm.

// sweepLists holds a graph's edges grouped by endpoint for the sweeps: for
// node i, the edges to higher-numbered nodes (up) and to lower ones (down)
// with their other endpoints, and its self-loops.
type sweepLists struct {
	// ends packs each edge's endpoints, u | v<<32, for the sweeps over the
	// other graph of a pair.
	ends                  []uint64
	upPtr, up, upTo       []int32
	downPtr, down, downTo []int32
	loopPtr, loop         []int32
}

func newSweepLists(g *graph.Graph) sweepLists {
	var s sweepLists
	s.upPtr = make([]int32, g.N+1)
	s.downPtr = make([]int32, g.N+1)
	s.loopPtr = make([]int32, g.N+1)
	for e := range g.NumEdges() {
		u, v := g.EdgeU[e], g.EdgeV[e]
		switch {
		case u == v:
			s.loopPtr[u+1]++
		default:
			s.upPtr[min(u, v)+1]++
			s.downPtr[max(u, v)+1]++
		}
	}
	for i := 0; i < g.N; i++ {
		s.upPtr[i+1] += s.upPtr[i]
		s.downPtr[i+1] += s.downPtr[i]
		s.loopPtr[i+1] += s.loopPtr[i]
	}
	s.up = make([]int32, s.upPtr[g.N])
	s.upTo = make([]int32, s.upPtr[g.N])
	s.down = make([]int32, s.downPtr[g.N])
	s.downTo = make([]int32, s.downPtr[g.N])
	s.loop = make([]int32, s.loopPtr[g.N])
	s.ends = make([]uint64, g.NumEdges())
	for e := range s.ends {
		s.ends[e] = uint64(uint32(g.EdgeU[e])) | uint64(uint32(g.EdgeV[e]))<<32
	}
	nu := append([]int32(nil), s.upPtr[:g.N]...)
	nd := append([]int32(nil), s.downPtr[:g.N]...)
	nl := append([]int32(nil), s.loopPtr[:g.N]...)
	for e := range g.NumEdges() {
		u, v := g.EdgeU[e], g.EdgeV[e]
		if u == v {
			s.loop[nl[u]] = int32(e)
			nl[u]++
			continue
		}
		lo, hi := min(u, v), max(u, v)
		s.up[nu[lo]], s.upTo[nu[lo]] = int32(e), hi
		nu[lo]++
		s.down[nd[hi]], s.downTo[nd[hi]] = int32(e), lo
		nd[hi]++
	}
	return s
}

// prepareSGS sets up the sweeps of the pair after prepare has filled the edge
// table (with edgeOperator's self-loop factors) and the diagonal: the unscaled
// diagonals xdm = Dp/v, xinv = v/Dp and dk = (2Dp − Dm)/v (0 where v = 0), the
// work vectors, and for every node of G with self-loops the summed table row
// w_e·w'_f·κe over its loops (H's self-loops zeroed: they lie on the diagonal).
func (ps *pairSolver) prepareSGS() {
	g, h := ps.a.g, ps.b.g
	n, mh := g.N*h.N, h.NumEdges()
	ps.acc = grow(ps.acc, h.N)
	ps.xdm, ps.xinv = grow(ps.xdm, n), grow(ps.xinv, n)
	ps.dkIsDm = true
	for k, d := range ps.diag[:n] {
		v := ps.v[k]
		if d != ps.dk[k] {
			ps.dkIsDm = false // the preconditioner's diagonal was fixed
		}
		if v == 0 {
			ps.xdm[k], ps.xinv[k], ps.dk[k] = 0, 0, 0
			continue
		}
		// dk held the true diagonal Dm; the preconditioner's is Dp = diag.
		ps.dk[k] = (2*d - ps.dk[k]) / v
		ps.xdm[k] = d / v
		ps.xinv[k] = v / d
	}
	sw := &ps.a.sw
	ps.loopOff = ps.loopOff[:0]
	ps.loopRows = ps.loopRows[:0]
	if len(sw.loop) == 0 {
		return
	}
	for i := 0; i < g.N; i++ {
		if sw.loopPtr[i] == sw.loopPtr[i+1] {
			ps.loopOff = append(ps.loopOff, -1)
			continue
		}
		off := len(ps.loopRows)
		ps.loopOff = append(ps.loopOff, int32(off))
		for range mh {
			ps.loopRows = append(ps.loopRows, 0)
		}
		row := ps.loopRows[off : off+mh]
		for _, e := range sw.loop[sw.loopPtr[i]:sw.loopPtr[i+1]] {
			for f, c := range ps.cache[int(e)*mh : (int(e)+1)*mh] {
				if h.EdgeU[f] != h.EdgeV[f] {
					row[f] += 2 * c // undo the table's ½ for G's loop
				}
			}
		}
	}
}

// loopRow returns the summed self-loop row of G's node i, nil when i has none.
func (ps *pairSolver) loopRow(i int) []float64 {
	if len(ps.loopOff) == 0 || ps.loopOff[i] < 0 {
		return nil
	}
	mh := ps.b.g.NumEdges()
	o := int(ps.loopOff[i])
	return ps.loopRows[o : o+mh]
}

// backward solves Eᵀ t = src (unscaled). With r non-nil it first forms,
// block by block, the next search direction src = dm∘r + beta·src (CG's
// direction update, fused into the sweep to save a pass over the vectors).
func (ps *pairSolver) backward(t, src, r []float64, beta float64) {
	g, h := ps.a.g, ps.b.g
	nh, mh := h.N, h.NumEdges()
	hab := ps.b.sw.ends[:mh]
	sw := &ps.a.sw
	inv, dm := ps.xinv, ps.xdm
	acc := ps.acc[:nh]
	for i := g.N - 1; i >= 0; i-- {
		clear(acc)
		for k := sw.upPtr[i]; k < sw.upPtr[i+1]; k++ {
			e, j := int(sw.up[k]), int(sw.upTo[k])
			tj := t[j*nh : (j+1)*nh]
			for f, c := range ps.cache[e*mh : (e+1)*mh] {
				ab := hab[f]
				a, b := uint32(ab), ab>>32
				acc[a] += c * tj[b]
				acc[b] += c * tj[a]
			}
		}
		base := i * nh
		ti, xi, ii := t[base:base+nh], src[base:base+nh], inv[base:base+nh]
		lr := ps.loopRow(i)
		if r != nil && lr == nil {
			ri, di := r[base:base+nh], dm[base:base+nh]
			for ip, a := range acc {
				x := ri[ip]*di[ip] + beta*xi[ip]
				xi[ip] = x
				ti[ip] = (x + a) * ii[ip]
			}
			continue
		}
		if r != nil {
			ri, di := r[base:base+nh], dm[base:base+nh]
			for ip, x := range xi {
				xi[ip] = ri[ip]*di[ip] + beta*x
			}
		}
		if lr != nil {
			for ip := nh - 1; ip >= 0; ip-- {
				sum := acc[ip]
				for kp := h.RowPtr[ip]; kp < h.RowPtr[ip+1]; kp++ {
					if jp := int(h.Col[kp]); jp > ip {
						sum += lr[h.EdgeOf[kp]] * ti[jp]
					}
				}
				ti[ip] = (xi[ip] + sum) * ii[ip]
			}
			continue
		}
		for ip, a := range acc {
			ti[ip] = (xi[ip] + a) * ii[ip]
		}
	}
}

// forward solves E z = src − dk∘t (unscaled), overwriting t with z, and sets
// ap = t + z, returning srcᵀap: with src = p and t = E⁻ᵀ p on entry,
// ap = Â p. With rhs set it solves E ap = src (the transformed right-hand
// side), using t as scratch, and returns 0. Block i of t is not read again
// once the sweep has passed it, so z can take its place.
func (ps *pairSolver) forward(ap, t, src []float64, rhs bool) float64 {
	g, h := ps.a.g, ps.b.g
	nh, mh := h.N, h.NumEdges()
	hab := ps.b.sw.ends[:mh]
	sw := &ps.a.sw
	inv, dk := ps.xinv, ps.dk
	acc := ps.acc[:nh]
	pap := 0.0
	for i := 0; i < g.N; i++ {
		clear(acc)
		for k := sw.downPtr[i]; k < sw.downPtr[i+1]; k++ {
			e, j := int(sw.down[k]), int(sw.downTo[k])
			zj := t[j*nh : (j+1)*nh]
			for f, c := range ps.cache[e*mh : (e+1)*mh] {
				ab := hab[f]
				a, b := uint32(ab), ab>>32
				acc[a] += c * zj[b]
				acc[b] += c * zj[a]
			}
		}
		base := i * nh
		ti, xi, ii, oi, di := t[base:base+nh], src[base:base+nh], inv[base:base+nh], ap[base:base+nh], dk[base:base+nh]
		if lr := ps.loopRow(i); lr != nil {
			for ip := 0; ip < nh; ip++ {
				for kp := h.RowPtr[ip]; kp < h.RowPtr[ip+1]; kp++ {
					if jp := int(h.Col[kp]); jp < ip {
						acc[ip] += lr[h.EdgeOf[kp]] * ti[jp] // z, written already
					}
				}
				if rhs {
					z := (xi[ip] + acc[ip]) * ii[ip]
					ti[ip], oi[ip] = z, z
					continue
				}
				tk := ti[ip]
				z := (xi[ip] - di[ip]*tk + acc[ip]) * ii[ip]
				ti[ip] = z
				oi[ip] = tk + z
				pap += xi[ip] * oi[ip]
			}
			continue
		}
		if rhs {
			for ip, a := range acc {
				z := (xi[ip] + a) * ii[ip]
				ti[ip], oi[ip] = z, z
			}
			continue
		}
		if ps.dkIsDm {
			// dk·inv = 1: z = (x + a)·inv − t and ap = t + z = (x + a)·inv.
			for ip, a := range acc {
				x := xi[ip]
				ak := (x + a) * ii[ip]
				ti[ip] = ak - ti[ip]
				oi[ip] = ak
				pap += x * ak
			}
			continue
		}
		for ip, a := range acc {
			tk := ti[ip]
			z := (xi[ip] - di[ip]*tk + a) * ii[ip]
			ti[ip] = z
			ak := tk + z
			oi[ip] = ak
			pap += xi[ip] * ak
		}
	}
	return pap
}

// cgSGS solves M y = rhs into y by CG preconditioned with symmetric
// Gauss–Seidel (see the top of this file), from y = 0, stopping when the
// preconditioned residual has dropped by tol, after maxIter iterations, or when
// p̂ᵀÂp̂ ≤ 0 shows M is not positive definite. It works on the unscaled system
// and converts at entry and exit. It allocates nothing; rhs may alias ps.ap.
func (ps *pairSolver) cgSGS(rhs, y []float64, tol float64, maxIter int) solveResult {
	n := len(rhs)
	r, p, ap, t, dm, y := ps.r[:n], ps.p[:n], ps.ap[:n], ps.t[:n], ps.xdm[:n], y[:n]
	s := ps.s[:n]
	clear(y)
	// r̂ = E⁻¹ S⁻¹ rhs; the unscaled right-hand side goes through p.
	for k, b := range rhs {
		if s[k] > 0 {
			p[k] = b / s[k]
		} else {
			p[k] = 0
		}
	}
	ps.forward(r, t, p, true)
	rz := 0.0
	for k, x := range r {
		rz += x * x * dm[k]
	}
	if rz == 0 {
		return solveResult{converged: true}
	}
	// The first direction is Dm∘r̂: backward's update with beta = 0 on a
	// zeroed p.
	clear(p)
	beta := 0.0
	rz0, thr := rz, tol*tol*rz
	res := solveResult{}
	for it := 0; ; it++ {
		if rz <= thr {
			res = solveResult{iters: it, residual: math.Sqrt(rz / rz0), converged: true}
			break
		}
		if it >= maxIter {
			res = solveResult{iters: it, residual: math.Sqrt(rz / rz0)}
			break
		}
		ps.backward(t, p, r, beta)
		pap := ps.forward(ap, t, p, false)
		if !(pap > 0) || math.IsInf(pap, 0) {
			res = solveResult{iters: it, residual: math.Sqrt(rz / rz0)}
			break
		}
		alpha := rz / pap
		rzNew, _ := vec.Step(y, r, p, ap, dm, alpha)
		beta = rzNew / rz
		rz = rzNew
	}
	// x = E⁻ᵀ x̂, y = S⁻¹ x.
	ps.backward(t, y, nil, 0)
	for k, x := range t {
		if s[k] > 0 {
			y[k] = x / s[k]
		} else {
			y[k] = 0
		}
	}
	return res
}
