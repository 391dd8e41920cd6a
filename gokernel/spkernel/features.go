package spkernel

import (
	"slices"

	"github.com/graphgram/graphgram/gokernel/schedule"
)

// buildIndex numbers the distinct (class u, class v, length) features of all graphs
// and stores each graph as a sparse vector of (feature, count). Feature ids come
// from a dense table when the key space is small (the usual case: few labels,
// lengths up to the diameter) and from a map otherwise.
func (p *plan) buildIndex() {
	nc, nl := int64(p.nClass), int64(len(p.lenVal))
	var dense []int32
	var sparse map[[3]int32]int32
	if nc*nc*nl <= 1<<22 {
		dense = make([]int32, nc*nc*nl)
		for k := range dense {
			dense[k] = -1
		}
	} else {
		sparse = make(map[[3]int32]int32)
	}
	p.vec = make([][]uint64, len(p.sp))
	for i, s := range p.sp {
		vec := make([]uint64, len(s.fn))
		for k := range s.fn {
			var id int32
			if dense != nil {
				at := (int64(s.fa[k])*nc+int64(s.fb[k]))*nl + int64(s.fl[k])
				id = dense[at]
				if id < 0 {
					id = int32(len(p.featG))
					dense[at] = id
					p.featG = append(p.featG, gFactor(s.fa[k], s.fb[k]))
				}
			} else {
				key := [3]int32{s.fa[k], s.fb[k], s.fl[k]}
				var ok bool
				if id, ok = sparse[key]; !ok {
					id = int32(len(p.featG))
					sparse[key] = id
					p.featG = append(p.featG, gFactor(s.fa[k], s.fb[k]))
				}
			}
			// Counts are below |SP| < 2^32 for any graph whose SP edges fit in memory.
			vec[k] = uint64(id)<<32 | uint64(s.fn[k])
		}
		p.vec[i] = vec
	}
	// Renumber features by decreasing frequency: the features most graphs share
	// then occupy the first rows of gramFeatures' dense table, which stay in the
	// L1 cache. Increasing feature order within each vector makes the table
	// reads move forward through memory.
	nf := len(p.featG)
	freq := make([]int32, nf)
	for _, vec := range p.vec {
		for _, x := range vec {
			freq[x>>32]++
		}
	}
	order := make([]int32, nf)
	for f := range order {
		order[f] = int32(f)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return int(freq[b] - freq[a]) })
	rank := make([]int32, nf)
	g := make([]float64, nf)
	for r, f := range order {
		rank[f] = int32(r)
		g[r] = p.featG[f]
	}
	p.featG = g
	for _, vec := range p.vec {
		for k, x := range vec {
			vec[k] = uint64(rank[x>>32])<<32 | x&(1<<32-1)
		}
		slices.Sort(vec)
	}
}

// blk is the number of rows of the Gram matrix computed together by gramFeatures:
// eight accumulators stay in registers and each sparse vector read serves eight dot
// products.
const blk = 8

// gramFeatures computes the Gram matrix as dot products of sparse count vectors. A
// block of eight rows is scattered into a dense feature×8 table (8·F values, in
// cache); then every column graph's sparse vector is read once and dotted with all
// eight rows. Products and sums are of integers, exact in float64 and independent
// of the order of the sums while the kernel values stay below 2^53 ≈ 9·10^15
// (graphs of up to a few thousand connected nodes). In the symmetric case the block also
// writes its transposed entries, eight contiguous values per row, so the whole
// matrix is filled in one pass.
func (p *plan) gramFeatures(nx, ny, yOff int, symmetric bool, out []float64) error {
	nf := len(p.featG)
	tables := make([][]float64, schedule.Workers(p.opt.NJobs))
	nb := (nx + blk - 1) / blk
	p.opt.Control.AddTotal(schedule.NumPairs(nx, ny, symmetric))
	return schedule.Run(p.opt.Control, nb, p.opt.NJobs, 1, func(w, bi int) error {
		if tables[w] == nil {
			tables[w] = make([]float64, nf*blk)
		}
		t := tables[w]
		i0, i1 := bi*blk, min(nx, (bi+1)*blk)
		if symmetric {
			defer p.opt.Control.Done(schedule.NumPairs(nx-i0, 0, true) - schedule.NumPairs(nx-i1, 0, true))
		} else {
			defer p.opt.Control.Done((i1 - i0) * ny)
		}
		for b := 0; b < i1-i0; b++ {
			for _, x := range p.vec[i0+b] {
				f := int(x >> 32)
				t[f*blk+b] = 2 * p.featG[f] * float64(uint32(x))
			}
		}
		j0 := yOff
		if symmetric {
			j0 = yOff + i0
		}
		for j := j0; j < yOff+ny; j++ {
			s := dot8(p.vec[j], t)
			if p.scale != 1 {
				for b := range s {
					s[b] *= p.scale
				}
			}
			jj := j - yOff
			for b := 0; b < i1-i0; b++ {
				out[(i0+b)*ny+jj] = s[b]
			}
			if symmetric {
				// Entry (j, i0+b) equals (i0+b, j); within the block both are
				// written with the same value.
				copy(out[jj*ny+i0:jj*ny+i1], s[:i1-i0])
			}
		}
		for b := 0; b < i1-i0; b++ {
			for _, x := range p.vec[i0+b] {
				t[int(x>>32)*blk+b] = 0
			}
		}
		return nil
	})
}

// dot8 returns the dot products of the sparse vector vec (feature<<32 | count)
// with the eight columns of the dense table t (feature-major, blk values per
// feature). It is a function of its own so that the eight accumulators and the
// loop state all stay in registers.
func dot8(vec []uint64, t []float64) [blk]float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for _, x := range vec {
		f := int(x>>32) * blk
		c := float64(uint32(x))
		r := t[f : f+blk : f+blk]
		s0 += r[0] * c
		s1 += r[1] * c
		s2 += r[2] * c
		s3 += r[3] * c
		s4 += r[4] * c
		s5 += r[5] * c
		s6 += r[6] * c
		s7 += r[7] * c
	}
	return [blk]float64{s0, s1, s2, s3, s4, s5, s6, s7}
}
