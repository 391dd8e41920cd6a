package sparsegram

import (
	"sync"

	"github.com/graphgram/graphgram/gokernel/schedule"
)

// blockRows is the number of rows of one task. It is a multiple
// of mr and of every kernel's nr, so that a symmetric block's panel products
// start exactly at its first row and no block writes below another's
// diagonal; 64 makes ~65 tasks of NCI1's 4,100 rows for dynamic balancing
// (the upper triangle's first rows cost most) and a cancel is seen within a
// millisecond or so (the kernels also poll between micro-panels).
const blockRows = 64

// engine computes one Gram matrix: the panel product assigns every entry of
// a row's part of out (upper part when symmetric), then the scatter adds the
// sparse features into it and, when symmetric, the block's finished rows are
// copied across the diagonal. Rows go in the caller's order: grouping alike
// rows by MinHash signatures (Jiang et al., PPoPP 2020) measured 1.1 to 2
// times slower on NCI1's WL features, its permuted tile stores and mirror
// turning into scattered writes over the result
// (benchmarks/log/go_core_measurements.md).
type engine struct {
	s      Semiring
	sym    bool
	nx, ny int
	out    []float64
	pan    panel
	sc     scatter
	ctl    *schedule.Control
	hook   func(b int) // tuning.blockHook
}

func newEngine(X, Y *Features, symmetric bool, opt Options, out []float64) *engine {
	e := &engine{s: opt.Semiring, sym: symmetric, nx: X.Rows(), ny: Y.Rows(), out: out, ctl: opt.Control,
		hook: opt.tune.blockHook}
	cols := choosePanel(X, Y, opt.Semiring, opt.tune)
	panelCol := make([]int32, X.NumCols)
	for c := range panelCol {
		panelCol[c] = -1
	}
	for p, c := range cols {
		panelCol[c] = int32(p)
	}
	pack := func() {
		if F := len(cols); F > 0 {
			kern, nr := kernelFor(opt.Semiring, opt.tune.kernels)
			e.pan = panel{F: F, nr: nr, kern: kern,
				ap: packA(X, panelCol, F),
				bp: packB(Y, panelCol, F, nr)}
		}
	}
	// Packing (~2 ms on NCI1) overlaps the index build (~7 ms) when more
	// than one goroutine is allowed.
	var wg sync.WaitGroup
	if schedule.Workers(opt.NJobs) > 1 {
		wg.Go(pack)
	} else {
		pack()
	}
	e.sc = buildScatter(X, Y, panelCol, symmetric)
	wg.Wait()
	return e
}

// run computes out, reporting progress in rows.
func (e *engine) run(nJobs int) error {
	nb := (e.nx + blockRows - 1) / blockRows
	e.ctl.AddTotal(e.nx)
	return schedule.Run(e.ctl, nb, nJobs, 1, func(_, b int) error {
		if e.hook != nil {
			e.hook(b)
		}
		i0, i1 := b*blockRows, min((b+1)*blockRows, e.nx)
		if err := e.block(i0, i1); err != nil {
			return err
		}
		if e.sym {
			e.mirror(i0, i1)
		}
		e.ctl.Done(i1 - i0)
		return nil
	})
}

// block computes rows [i0, i1), i0 a multiple of blockRows: all their
// entries, or when symmetric those in columns ≥ i0.
func (e *engine) block(i0, i1 int) error {
	ny := e.ny
	j0 := 0
	if e.sym {
		j0 = i0
	}
	if F, nr := e.pan.F, e.pan.nr; F > 0 {
		var t [mr * maxNR]float32
		np := (ny + nr - 1) / nr
		for jp := j0 / nr; jp < np; jp++ {
			if e.ctl.Cancelled() {
				return schedule.ErrCancelled
			}
			bp := e.pan.bp[jp*F*nr : (jp+1)*F*nr]
			for s := i0 / mr; s*mr < i1; s++ {
				if e.sym && (jp+1)*nr <= s*mr {
					continue // below the diagonal: mirrored
				}
				e.pan.kern(e.pan.ap[s*F*mr:(s+1)*F*mr], bp, F, &t)
				e.writeTile(s*mr, jp*nr, nr, &t)
			}
		}
	} else {
		for i := i0; i < i1; i++ {
			clear(e.out[i*ny+j0 : (i+1)*ny])
		}
	}
	for i := i0; i < i1; i++ {
		if i%16 == 0 && e.ctl.Cancelled() {
			return schedule.ErrCancelled
		}
		e.sc.addRow(i, e.out[i*ny:(i+1)*ny], e.s)
	}
	return nil
}

// writeTile stores the mr×nr tile at rows i0.., columns j0.. into out,
// dropping the padding.
func (e *engine) writeTile(i0, j0, nr int, t *[mr * maxNR]float32) {
	ny := e.ny
	rows := min(mr, e.nx-i0)
	cols := min(nr, ny-j0)
	for r := range rows {
		copyWiden(e.out[(i0+r)*ny+j0:(i0+r)*ny+j0+cols], t[r*nr:r*nr+cols])
	}
}

func copyWiden(dst []float64, src []float32) {
	src = src[:len(dst)]
	for k, v := range src {
		dst[k] = float64(v)
	}
}

// mirrorTile is the number of destination rows the mirror fills per pass
// over a block's rows: writing whole destination rows and reading columns,
// 64 was the fastest tile measured (benchmarks/log/go_core_measurements.md).
const mirrorTile = 64

// mirror copies the finished rows [i0, i1) across the diagonal: entry (i, j),
// j > i, to (j, i). It runs while other blocks are computed, which is safe
// because a block never writes its rows' entries in columns before its first
// row (those are the ones mirrored into it).
func (e *engine) mirror(i0, i1 int) {
	n, out := e.nx, e.out
	for j0 := i0; j0 < n; j0 += mirrorTile {
		j1 := min(j0+mirrorTile, n)
		for j := j0; j < j1; j++ {
			jrow := out[j*n : (j+1)*n]
			for i := i0; i < min(i1, j); i++ {
				jrow[i] = out[i*n+j]
			}
		}
	}
}
