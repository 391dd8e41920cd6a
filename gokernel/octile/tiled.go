package octile

import (
	"cmp"
	"math"
	"slices"
)

// tiledState is the per-pair data of the Tiled path.
type tiledState struct {
	force Prim
	// dense is false when the weighted dense tiles would exceed MaxDense; then
	// only sparse×sparse is available.
	dense bool
	// fwd and rev tell whether any tile pair uses a forward or reverse dense
	// primitive; padded whether the vectors are copied to padded layout.
	fwd, rev, padded bool
	sA8, sB8         int // padded row lengths 8·NT

	// bScaled[l·nnz(B) + k] = w'_k · κ(effective class l of A, class of k).
	bScaled []float64
	// bDense holds, per effective class l of A and tile t' of B, the tile
	// weighted as in bScaled, row-major: (l·T' + t')·64 + 8r' + c'.
	// aDense is the same for A's tiles and B's classes.
	bDense, aDense []float64

	// Per-tile costs of the forward dense primitives on A's tiles and of the
	// reverse ones on B's tiles, and which of DS or DD achieves them.
	fwdCost, revCost []float64
	fwdMode, revMode []Prim
	ga, gb           groups

	xp, yp, xt, yt []float64
}

// groups lists, per tile, its nonzeros grouped by (effective class, column):
// the nonzeros of one group share one 8×8 mat-vec in DD.
type groups struct {
	tilePtr []int32 // groups of tile t are tilePtr[t] ≤ g < tilePtr[t+1]
	eff     []int32
	col     []uint8
	start   []int32 // group g holds nonzeros ord[start[g]:start[g+1]]
	ord     []int32
}

func (gr *groups) build(g *Graph, eff []int32) {
	nt := g.NumTiles()
	gr.tilePtr = grow(gr.tilePtr, nt+1)
	gr.ord = grow(gr.ord, len(g.Pos))
	gr.eff, gr.col, gr.start = gr.eff[:0], gr.col[:0], gr.start[:0]
	for t := 0; t < nt; t++ {
		gr.tilePtr[t] = int32(len(gr.eff))
		k0, k1 := g.NzPtr[t], g.NzPtr[t+1]
		ord := gr.ord[k0:k1]
		for i := range ord {
			ord[i] = k0 + int32(i)
		}
		slices.SortFunc(ord, func(a, b int32) int {
			if c := cmp.Compare(eff[a], eff[b]); c != 0 {
				return c
			}
			if c := cmp.Compare(g.Pos[a]&7, g.Pos[b]&7); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for i, k := range ord {
			if i == 0 || eff[k] != eff[ord[i-1]] || g.Pos[k]&7 != g.Pos[ord[i-1]]&7 {
				gr.eff = append(gr.eff, eff[k])
				gr.col = append(gr.col, g.Pos[k]&7)
				gr.start = append(gr.start, k0+int32(i))
			}
		}
	}
	gr.tilePtr[nt] = int32(len(gr.eff))
	gr.start = append(gr.start, int32(len(g.Pos)))
}

// tileCosts fills the per-tile cost of the cheaper dense primitive, DS or DD,
// with the tile's nonzeros on the sparse (outer) side.
func tileCosts(g *Graph, gr *groups, c *Costs, cost []float64, mode []Prim, ds, dd Prim) {
	for t := range cost {
		n := float64(g.NzPtr[t+1] - g.NzPtr[t])
		ng := float64(gr.tilePtr[t+1] - gr.tilePtr[t])
		cds, cdd := c.MV*n, c.MV*ng+c.AX*n
		if cdd < cds {
			cost[t], mode[t] = cdd, dd
		} else {
			cost[t], mode[t] = cds, ds
		}
	}
}

// decide returns the primitive for tile pair (ta, tb) with na and nb nonzeros.
func (t *tiledState) decide(kSS float64, na, nb int32, ta, tb int) Prim {
	if t.force != PrimAuto {
		return t.force
	}
	ss := kSS * float64(na*nb)
	f, r := t.fwdCost[ta], t.revCost[tb]
	if ss <= f && ss <= r {
		return SS
	}
	if f <= r {
		return t.fwdMode[ta]
	}
	return t.revMode[tb]
}

// planTiled builds the groups and per-tile costs and returns the estimated
// cost of one tiled mat-vec, recording which primitives it will use. With
// auto set it plans as PrimAuto whatever the options say.
func (p *Pair) planTiled(auto bool) float64 {
	t := &p.tiled
	a, b := p.A, p.B
	c := &p.opt.Costs
	t.force = p.opt.Prim
	if auto {
		t.force = PrimAuto
	}
	ntA, ntB := a.NumTiles(), b.NumTiles()
	t.dense = 64*(p.leA*ntB+p.leB*ntA) <= p.opt.MaxDense
	t.fwdCost, t.fwdMode = grow(t.fwdCost, ntA), grow(t.fwdMode, ntA)
	t.revCost, t.revMode = grow(t.revCost, ntB), grow(t.revMode, ntB)
	if t.dense {
		t.ga.build(a, p.aEff)
		t.gb.build(b, p.bEff)
		tileCosts(a, &t.ga, c, t.fwdCost, t.fwdMode, DS, DD)
		tileCosts(b, &t.gb, c, t.revCost, t.revMode, SD, DDRev)
		for i := range t.revCost {
			t.revCost[i] *= c.Rev
		}
	} else {
		if t.force != PrimAuto && t.force != SS {
			// A dense primitive was forced without room for dense tiles;
			// setupTiled reports it.
			return math.Inf(1)
		}
		for i := range t.fwdCost {
			t.fwdCost[i] = math.Inf(1)
		}
		for i := range t.revCost {
			t.revCost[i] = math.Inf(1)
		}
	}
	t.fwd, t.rev = false, false
	est := 0.0
	for ta := 0; ta < ntA; ta++ {
		na := a.NzPtr[ta+1] - a.NzPtr[ta]
		for tb := 0; tb < ntB; tb++ {
			nb := b.NzPtr[tb+1] - b.NzPtr[tb]
			est += c.Tile
			switch pr := t.decide(c.SS, na, nb, ta, tb); pr {
			case SS:
				est += c.SS * float64(na*nb)
			case DS, DD:
				t.fwd = true
				if pr == DS {
					est += c.MV * float64(na)
				} else {
					est += c.MV*float64(t.ga.tilePtr[ta+1]-t.ga.tilePtr[ta]) + c.AX*float64(na)
				}
			case SD, DDRev:
				t.rev = true
				if pr == SD {
					est += c.Rev * c.MV * float64(nb)
				} else {
					est += c.Rev * (c.MV*float64(t.gb.tilePtr[tb+1]-t.gb.tilePtr[tb]) + c.AX*float64(nb))
				}
			}
		}
	}
	t.padded = t.fwd || t.rev
	t.sA8, t.sB8 = 8*a.NT, 8*b.NT
	bytes := 8 * p.leA * len(b.Pos)
	if t.fwd {
		bytes += 8 * 64 * p.leA * ntB
	}
	if t.rev {
		bytes += 8 * 64 * p.leB * ntA
	}
	if float64(bytes) > c.Cache {
		est *= c.Spill
	}
	nn := float64(a.N * b.N)
	if t.fwd {
		est += 2 * c.Pad * nn
	}
	if t.rev {
		est += 2 * c.Pad * nn
	}
	return est
}

// setupTiled builds the weighted copies of the nonzeros and dense tiles that
// the planned primitives need, and the padded vectors.
func (p *Pair) setupTiled() error {
	t := &p.tiled
	a, b := p.A, p.B
	if !t.dense && t.force != PrimAuto && t.force != SS {
		return ErrTooManyClasses
	}
	nzB := len(b.Pos)
	t.bScaled = grow(t.bScaled, p.leA*nzB)
	for l := 0; l < p.leA; l++ {
		row := p.kEff[l*p.leB : (l+1)*p.leB]
		s := t.bScaled[l*nzB : (l+1)*nzB]
		for k, w := range b.Weight {
			s[k] = w * row[p.bEff[k]]
		}
	}
	if t.fwd {
		t.bDense = denseTiles(t.bDense, b, p.leA, func(l int, k int32) float64 { return t.bScaled[l*nzB+int(k)] })
	}
	if t.rev {
		t.aDense = denseTiles(t.aDense, a, p.leB, func(l int, k int32) float64 {
			return a.Weight[k] * p.kEff[int(p.aEff[k])*p.leB+l]
		})
	}
	if t.padded {
		t.xp = grow(t.xp, t.sA8*t.sB8)
		t.yp = grow(t.yp, t.sA8*t.sB8)
		clear(t.xp)
	}
	if t.rev {
		t.xt = grow(t.xt, t.sA8*t.sB8)
		t.yt = grow(t.yt, t.sA8*t.sB8)
		clear(t.xt)
	}
	return nil
}

// denseTiles expands g's tiles for each of nc classes into row-major 8×8
// blocks holding val(class, nonzero); a nonzero's index in its block is its
// bit position.
func denseTiles(buf []float64, g *Graph, nc int, val func(l int, k int32) float64) []float64 {
	nt := g.NumTiles()
	buf = grow(buf, nc*nt*64)
	clear(buf)
	for l := 0; l < nc; l++ {
		for t := 0; t < nt; t++ {
			m := buf[(l*nt+t)*64 : (l*nt+t+1)*64]
			for k := g.NzPtr[t]; k < g.NzPtr[t+1]; k++ {
				m[g.Pos[k]] = val(l, k)
			}
		}
	}
	return buf
}

// tiledMatVec forms y += W·x tile pair by tile pair.
func (p *Pair) tiledMatVec(x, y []float64) {
	t := &p.tiled
	a, b := p.A, p.B
	nA, nB := a.N, b.N
	X, Y, s := x, y, nB
	if t.padded {
		X, Y, s = t.xp, t.yp, t.sB8
		for j := 0; j < nA; j++ {
			copy(X[j*s:j*s+nB], x[j*nB:(j+1)*nB])
		}
		clear(Y)
	}
	if t.rev {
		transpose(t.xt, t.sA8, x, nA, nB)
		clear(t.yt)
	}
	kSS := p.opt.Costs.SS
	ntA, ntB := a.NumTiles(), b.NumTiles()
	nzB := len(b.Pos)
	// Forward primitives write the 8 rows of Y of A's tile row, so A's tiles
	// go in the outer loop and that strip of Y stays in cache.
	for ta := 0; ta < ntA; ta++ {
		I, J := int(a.TileRow[ta]), int(a.TileCol[ta])
		a0, a1 := a.NzPtr[ta], a.NzPtr[ta+1]
		for tb := 0; tb < ntB; tb++ {
			Ip, Jp := int(b.TileRow[tb]), int(b.TileCol[tb])
			b0, b1 := b.NzPtr[tb], b.NzPtr[tb+1]
			switch t.decide(kSS, a1-a0, b1-b0, ta, tb) {
			case SS:
				ssTile(a.Pos[a0:a1], a.Weight[a0:a1], p.aEff[a0:a1], b.Pos[b0:b1], t.bScaled[b0:], nzB,
					X, Y, 8*J*s+8*Jp, 8*I*s+8*Ip, s)
			case DS:
				dsTile(a.Pos[a0:a1], a.Weight[a0:a1], p.aEff[a0:a1], t.bDense[tb*64:], ntB*64,
					X, Y, 8*J*s+8*Jp, 8*I*s+8*Ip, s)
			case DD:
				ddTile(&t.ga, ta, a.Pos, a.Weight, t.bDense[tb*64:], ntB*64,
					X, Y, 8*J*s+8*Jp, 8*I*s+8*Ip, s)
			}
		}
	}
	// Reverse primitives write rows of Yᵀ by B's tile row: a second pass with
	// B's tiles outside, for the same cache reason.
	if t.rev {
		for tb := 0; tb < ntB; tb++ {
			Ip, Jp := int(b.TileRow[tb]), int(b.TileCol[tb])
			b0, b1 := b.NzPtr[tb], b.NzPtr[tb+1]
			for ta := 0; ta < ntA; ta++ {
				I, J := int(a.TileRow[ta]), int(a.TileCol[ta])
				switch t.decide(kSS, a.NzPtr[ta+1]-a.NzPtr[ta], b1-b0, ta, tb) {
				case SD:
					dsTile(b.Pos[b0:b1], b.Weight[b0:b1], p.bEff[b0:b1], t.aDense[ta*64:], ntA*64,
						t.xt, t.yt, 8*Jp*t.sA8+8*J, 8*Ip*t.sA8+8*I, t.sA8)
				case DDRev:
					ddTile(&t.gb, tb, b.Pos, b.Weight, t.aDense[ta*64:], ntA*64,
						t.xt, t.yt, 8*Jp*t.sA8+8*J, 8*Ip*t.sA8+8*I, t.sA8)
				}
			}
		}
	}
	if t.padded {
		for i := 0; i < nA; i++ {
			axpy(1, Y[i*s:i*s+nB], y[i*nB:(i+1)*nB])
		}
	}
	if t.rev {
		addTransposed(y, nA, nB, t.yt, t.sA8)
	}
}

// transpose writes the n×m row-major x into dst as m rows of stride ld, in
// 8×8 blocks so that both sides stay within a few cache lines per block.
func transpose(dst []float64, ld int, x []float64, n, m int) {
	for j0 := 0; j0 < n; j0 += 8 {
		j1 := min(j0+8, n)
		for k0 := 0; k0 < m; k0 += 8 {
			k1 := min(k0+8, m)
			for j := j0; j < j1; j++ {
				for k := k0; k < k1; k++ {
					dst[k*ld+j] = x[j*m+k]
				}
			}
		}
	}
}

// addTransposed adds the m×n matrix src (rows of stride ld) transposed to the
// n×m row-major y, in 8×8 blocks.
func addTransposed(y []float64, n, m int, src []float64, ld int) {
	for i0 := 0; i0 < n; i0 += 8 {
		i1 := min(i0+8, n)
		for k0 := 0; k0 < m; k0 += 8 {
			k1 := min(k0+8, m)
			for i := i0; i < i1; i++ {
				for k := k0; k < k1; k++ {
					y[i*m+k] += src[k*ld+i]
				}
			}
		}
	}
}

// ssTile is the sparse×sparse primitive: for every nonzero pair (a, b) of the
// two tiles, Y[ra][rb] += w_a · ŵ_b · X[ca][cb], where ŵ_b = bScaled[eff_a·nzB+b]
// already holds w'_b·κ. Offsets xo, yo locate the 8×8 blocks; s is the row length.
//
// Summing straight into Y[ra][rb] chains every update of one entry through
// memory, and consecutive nonzeros of b often share a row; so the loop walks b
// row by row, sums each row segment in registers, and takes four nonzeros of a
// at a time so that four independent sums are in flight.
func ssTile(aPos []uint8, aW []float64, aEff []int32, bPos []uint8, bScaled []float64, nzB int,
	X, Y []float64, xo, yo, s int) {
	nb := len(bPos)
	ka := 0
	for ; ka+4 <= len(aPos); ka += 4 {
		p0, p1, p2, p3 := aPos[ka], aPos[ka+1], aPos[ka+2], aPos[ka+3]
		x0, x1 := X[xo+int(p0&7)*s:], X[xo+int(p1&7)*s:]
		x2, x3 := X[xo+int(p2&7)*s:], X[xo+int(p3&7)*s:]
		w0 := bScaled[int(aEff[ka])*nzB:][:nb]
		w1 := bScaled[int(aEff[ka+1])*nzB:][:nb]
		w2 := bScaled[int(aEff[ka+2])*nzB:][:nb]
		w3 := bScaled[int(aEff[ka+3])*nzB:][:nb]
		y0, y1 := Y[yo+int(p0>>3)*s:], Y[yo+int(p1>>3)*s:]
		y2, y3 := Y[yo+int(p2>>3)*s:], Y[yo+int(p3>>3)*s:]
		for kb := 0; kb < nb; {
			r := bPos[kb] >> 3
			var s0, s1, s2, s3 float64
			for ; kb < nb && bPos[kb]>>3 == r; kb++ {
				c := bPos[kb] & 7
				s0 += w0[kb] * x0[c]
				s1 += w1[kb] * x1[c]
				s2 += w2[kb] * x2[c]
				s3 += w3[kb] * x3[c]
			}
			y0[r] += aW[ka] * s0
			y1[r] += aW[ka+1] * s1
			y2[r] += aW[ka+2] * s2
			y3[r] += aW[ka+3] * s3
		}
	}
	for ; ka < len(aPos); ka++ {
		pa := aPos[ka]
		xr := X[xo+int(pa&7)*s:]
		yr := Y[yo+int(pa>>3)*s:]
		wb := bScaled[int(aEff[ka])*nzB:][:nb]
		for kb := 0; kb < nb; {
			r := bPos[kb] >> 3
			sum := 0.0
			for ; kb < nb && bPos[kb]>>3 == r; kb++ {
				sum += wb[kb] * xr[bPos[kb]&7]
			}
			yr[r] += aW[ka] * sum
		}
	}
}

// dsTile is the sparse×dense primitive: for every nonzero a of the outer tile,
// Y[ra][0:8] += w_a · M_{eff_a} · X[ca][0:8], where the weighted dense tile of
// class l is dense[l·stride:][:64].
func dsTile(pos []uint8, w []float64, eff []int32, dense []float64, stride int,
	X, Y []float64, xo, yo, s int) {
	for k, pa := range pos {
		o := int(eff[k]) * stride
		gemv8((*[8]float64)(Y[yo+int(pa>>3)*s:]), w[k], (*[64]float64)(dense[o:o+64]), (*[8]float64)(X[xo+int(pa&7)*s:]))
	}
}

// ddTile is the dense×dense primitive: per group (class l, column c) of outer
// tile t, z = M_l · X[c][0:8] once, then Y[r][0:8] += w · z for each nonzero (r, c).
func ddTile(gr *groups, t int, pos []uint8, w []float64, dense []float64, stride int,
	X, Y []float64, xo, yo, s int) {
	var z [8]float64
	for g := gr.tilePtr[t]; g < gr.tilePtr[t+1]; g++ {
		o := int(gr.eff[g]) * stride
		mv8(&z, (*[64]float64)(dense[o:o+64]), (*[8]float64)(X[xo+int(gr.col[g])*s:]))
		for _, k := range gr.ord[gr.start[g]:gr.start[g+1]] {
			axpy8((*[8]float64)(Y[yo+int(pos[k]>>3)*s:]), w[k], &z)
		}
	}
}

// evalMatVec is the Eval path: sparse×sparse over tile pairs, evaluating κe on
// the edge feature rows for each nonzero pair.
func (p *Pair) evalMatVec(x, y []float64) {
	a, b := p.A, p.B
	nB := b.N
	for ta := 0; ta < a.NumTiles(); ta++ {
		I, J := int(a.TileRow[ta]), int(a.TileCol[ta])
		for tb := 0; tb < b.NumTiles(); tb++ {
			Ip, Jp := int(b.TileRow[tb]), int(b.TileCol[tb])
			for ka := a.NzPtr[ta]; ka < a.NzPtr[ta+1]; ka++ {
				pa := int(a.Pos[ka])
				ea := a.G.Edge(int(a.Edge[ka]))
				yr := y[(8*I+pa/8)*nB+8*Ip:]
				xr := x[(8*J+pa%8)*nB+8*Jp:]
				wa := a.Weight[ka]
				for kb := b.NzPtr[tb]; kb < b.NzPtr[tb+1]; kb++ {
					pb := int(b.Pos[kb])
					k := p.ke.Eval(ea, b.G.Edge(int(b.Edge[kb])))
					yr[pb/8] += wa * b.Weight[kb] * k * xr[pb%8]
				}
			}
		}
	}
}
