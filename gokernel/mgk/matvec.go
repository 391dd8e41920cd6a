package mgk

import (
	"cmp"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
)

// productOperator multiplies a vector over the product nodes of one graph pair
// (G, H), indexed i·H.N + i', by the weighted product adjacency
//
//	W[(i,i'),(j,j')] = w_ij · w'_i'j' · κe(e_ij, e'_i'j').
//
// The solver only ever touches W through this interface, so a faster kernel
// (a tiled one, say) can replace those below while the reference stays
// available to test it against.
type productOperator interface {
	// mulW sets dst = W·src. dst and src have length G.N·H.N and do not overlap.
	mulW(dst, src []float64)
}

// csrOperator is the reference productOperator: row (i, i') gathers over the
// neighbours of i and of i' in the two graphs' CSR adjacency, forming each
// product entry on the fly and never storing W. It is the simplest correct
// form, and the one used when the edge-kernel table would not fit in memory.
type csrOperator struct {
	g, h *graph.Graph
	// cache, when non-nil, holds w_e·w'_f·κe(e, f) at e·h.NumEdges() + f for
	// every pair of undirected edges.
	cache []float64
	// ek evaluates the edge kernel inside the product when cache is nil.
	ek microkernel.Kernel
}

// mulW implements productOperator. For each neighbour slot k of i the whole of
// h's adjacency is swept once: len(g.Col)·len(h.Col) multiply-adds.
func (o *csrOperator) mulW(dst, src []float64) {
	g, h := o.g, o.h
	nh, mh := h.N, h.NumEdges()
	hp, hc, he := h.RowPtr, h.Col, h.EdgeOf
	for i := 0; i < g.N; i++ {
		row := dst[i*nh : (i+1)*nh]
		clear(row)
		for k := g.RowPtr[i]; k < g.RowPtr[i+1]; k++ {
			j, e := int(g.Col[k]), int(g.EdgeOf[k])
			sj := src[j*nh : (j+1)*nh]
			if o.cache != nil {
				ce := o.cache[e*mh : (e+1)*mh]
				for ip := 0; ip < nh; ip++ {
					s := 0.0
					for kp := hp[ip]; kp < hp[ip+1]; kp++ {
						s += ce[he[kp]] * sj[hc[kp]]
					}
					row[ip] += s
				}
				continue
			}
			ge, wg := g.Edge(e), g.Val[k]
			for ip := 0; ip < nh; ip++ {
				s := 0.0
				for kp := hp[ip]; kp < hp[ip+1]; kp++ {
					s += h.Val[kp] * o.ek.Eval(ge, h.Edge(int(he[kp]))) * sj[hc[kp]]
				}
				row[ip] += wg * s
			}
		}
	}
}

// edgeOperator is the default productOperator when the edge-kernel table fits:
// it loops over pairs of undirected edges (a–b in G, a'–b' in H) and scatters
// the four product entries each pair makes,
//
//	(a,a')←(b,b'), (b,b')←(a,a'), (a,b')←(b,a'), (b,a')←(a,b').
//
// Molecular graphs have degrees of 2–3, so the reference's innermost loops run
// two or three times and their overhead dominates; this flat loop over H's edge
// list runs about 2.5× faster. For a self-loop the four entries coincide in
// pairs, so its table value carries a factor ½ (¼ for two self-loops).
type edgeOperator struct {
	g, h *graph.Graph
	// cache holds w_e·w'_f·κe(e, f)·½^[e loop]·½^[f loop] at e·h.NumEdges() + f.
	cache []float64
}

// mulW implements productOperator.
func (o *edgeOperator) mulW(dst, src []float64) {
	g, h := o.g, o.h
	nh, mh := h.N, h.NumEdges()
	hu, hv := h.EdgeU[:mh], h.EdgeV[:mh]
	clear(dst)
	for e := range g.NumEdges() {
		a, b := int(g.EdgeU[e])*nh, int(g.EdgeV[e])*nh
		ya, yb := dst[a:a+nh], dst[b:b+nh]
		xa, xb := src[a:a+nh], src[b:b+nh]
		for f, c := range o.cache[e*mh : (e+1)*mh] {
			ap, bp := hu[f], hv[f]
			ya[ap] += c * xb[bp]
			yb[bp] += c * xa[ap]
			ya[bp] += c * xb[ap]
			yb[ap] += c * xa[bp]
		}
	}
}

// octileOperator is the productOperator of the octile package: the two graphs
// packed into 8×8 tiles, the product formed by whichever of octile's paths its
// cost model picks (tiled, factorized on edge-label classes, or an explicit
// product matrix). It wins on larger and denser pairs, and on pairs whose
// edge-kernel table would not fit in memory.
type octileOperator struct {
	pair *octile.Pair
}

// mulW implements productOperator.
func (o *octileOperator) mulW(dst, src []float64) { o.pair.Mul(dst, src) }

// opKind names the productOperator a pair is solved with.
type opKind int

const (
	opAuto      opKind = iota // let choose decide (Options.op only)
	opEdge                    // edgeOperator on the edge-kernel table
	opCSRCached               // csrOperator on the edge-kernel table (reference)
	opCSR                     // csrOperator evaluating κe inside the product
	opOctile                  // octileOperator
	// opReference (Options.op only) selects the reference csrOperator, on the
	// table when it fits.
	opReference
)

// Cost model of choose, in nanoseconds, measured on the development machine
// (2-core AMD EPYC, AVX2) by BenchmarkOperators: edgeNS per pair of undirected
// edges in one edgeOperator product, tableNS per pair of edges to fill the
// table (one κe evaluation, spread over assumedIters mat-vecs), evalNS per
// pair of directed nonzeros when csrOperator evaluates κe in the product.
// octileMinPairs is the size below which octile is not even planned: its
// set-up costs more than it could save.
const (
	edgeNS         = 4.0
	tableNS        = 12
	evalNS         = 20
	assumedIters   = 30
	octileMinPairs = 2048
	// sgsWork is the work of symmetric Gauss–Seidel relative to Jacobi on the
	// same operator: about half the iterations (15 vs 32 on MUTAG, 20 vs 46 on
	// NCI1) at about 1.1× the cost each.
	sgsWork = 0.55
)

// choose picks the productOperator of the pair (a, b) by estimated cost per
// mat-vec, set-up included. When it returns opOctile, ps.oct is ready.
func (ps *pairSolver) choose(a, b *side, opt *Options) opKind {
	mg, mh := a.g.NumEdges(), b.g.NumEdges()
	pairs := mg * mh
	fits := pairs <= cmp.Or(ps.cacheLimit, minCacheEntries)
	if pairs == 0 {
		return opCSR
	}
	if opt.op == opReference {
		if fits {
			return opCSRCached
		}
		return opCSR
	}
	octileOK := a.pk != nil && b.pk != nil
	switch opt.op {
	case opOctile:
		if octileOK && ps.resetOctile(a, b, opt) {
			return opOctile
		}
	case opEdge, opCSRCached:
		if fits {
			return opt.op
		}
	case opCSR:
		return opCSR
	}
	kind, best := opCSR, evalNS*float64(len(a.g.Col))*float64(len(b.g.Col))
	if fits {
		edge := edgeNS
		if opt.Solver != SolverJacobi {
			edge *= sgsWork
		}
		kind, best = opEdge, (edge+tableNS/float64(assumedIters))*float64(pairs)
	}
	if fits && opt.Solver == SolverSGS {
		return opEdge
	}
	if octileOK && pairs >= octileMinPairs && ps.resetOctile(a, b, opt) && ps.oct.pair.Cost() < best {
		return opOctile
	}
	return kind
}

// resetOctile prepares ps.oct for the pair and reports whether it can serve it.
func (ps *pairSolver) resetOctile(a, b *side, opt *Options) bool {
	if ps.oct.pair == nil {
		ps.oct.pair = octile.NewPair(octile.Options{Path: opt.octilePath, Iterations: assumedIters})
	}
	return ps.oct.pair.Reset(a.pk, b.pk, opt.EdgeKernel) == nil
}
