package sparsegram

import "github.com/graphgram/graphgram/gokernel/schedule"

// blockRows is the number of processing rows of one task: a multiple of mr,
// small enough that NCI1's 4,100 rows make ~85 tasks for dynamic balancing
// (the upper triangle's first rows cost most) and that a cancel is seen
// within a millisecond or so; the kernels also poll between micro-panels.
const blockRows = 8 * mr

// engine computes one Gram matrix: the panel product assigns every entry of
// a processing row's part of out (upper part when symmetric), then the
// scatter adds the sparse features into it.
type engine struct {
	s         Semiring
	sym       bool
	nx, ny    int
	out       []float64
	xrows     []int32 // processing order: xrows[i] is the caller's row
	yrows     []int32 // order of Y's rows in the panel and index
	pan       panel
	sc        scatter
	ctl       *schedule.Control
	keepOrder bool
}

func newEngine(X, Y *Features, symmetric bool, opt Options, out []float64) *engine {
	e := &engine{s: opt.Semiring, sym: symmetric, nx: X.Rows(), ny: Y.Rows(), out: out, ctl: opt.Control}
	cols := choosePanel(X, Y, opt.Semiring)
	panelCol := make([]int32, X.NumCols)
	for c := range panelCol {
		panelCol[c] = -1
	}
	for p, c := range cols {
		panelCol[c] = int32(p)
	}
	order := opt.Order
	if order == DefaultOrder {
		order = defaultOrder
	}
	if order == MinHashOrder {
		e.xrows = minHashOrder(X, panelCol)
		e.yrows = e.xrows
		if !symmetric {
			e.yrows = minHashOrder(Y, panelCol)
		}
	} else {
		e.keepOrder = true
		e.xrows, e.yrows = identity(e.nx), identity(e.ny)
	}
	if F := len(cols); F > 0 {
		kern, nr := kernelFor(opt.Semiring)
		e.pan = panel{F: F, nr: nr, kern: kern,
			ap: packA(X, e.xrows, panelCol, F),
			bp: packB(Y, e.yrows, panelCol, F, nr)}
	}
	e.sc = buildScatter(X, Y, e.xrows, e.yrows, panelCol, symmetric)
	return e
}

// run computes out, reporting progress in processing rows plus, when
// symmetric, mirrored tile rows.
func (e *engine) run(nJobs int) error {
	nb := (e.nx + blockRows - 1) / blockRows
	mb := 0
	if e.sym {
		mb = (e.nx + mirrorTile - 1) / mirrorTile
	}
	e.ctl.AddTotal(e.nx + mb)
	err := schedule.Run(e.ctl, nb, nJobs, 1, func(_, b int) error {
		if blockHook != nil {
			blockHook(b)
		}
		i0, i1 := b*blockRows, min((b+1)*blockRows, e.nx)
		if err := e.block(i0, i1); err != nil {
			return err
		}
		e.ctl.Done(i1 - i0)
		return nil
	})
	if err != nil || !e.sym {
		return err
	}
	return e.mirror(nJobs)
}

// blockHook, when set, is called at the start of every block (a test hook).
var blockHook func(b int)

// block computes processing rows [i0, i1), i0 a multiple of mr.
func (e *engine) block(i0, i1 int) error {
	ny := e.ny
	if F, nr := e.pan.F, e.pan.nr; F > 0 {
		var t [mr * maxNR]float32
		np := (ny + nr - 1) / nr
		jp0 := 0
		if e.sym {
			jp0 = i0 / nr
		}
		for jp := jp0; jp < np; jp++ {
			if e.ctl.Cancelled() {
				return schedule.ErrCancelled
			}
			bp := e.pan.bp[jp*F*nr : (jp+1)*F*nr]
			for s := i0 / mr; s*mr < i1; s++ {
				if e.sym && (jp+1)*nr <= s*mr {
					continue // below the diagonal: mirrored later
				}
				e.pan.kern(e.pan.ap[s*F*mr:(s+1)*F*mr], bp, F, &t)
				e.writeTile(s*mr, jp*nr, nr, &t)
			}
		}
	} else {
		for i := i0; i < i1; i++ {
			r := int(e.xrows[i])
			clear(e.out[r*ny : (r+1)*ny])
		}
	}
	for i := i0; i < i1; i++ {
		if i%16 == 0 && e.ctl.Cancelled() {
			return schedule.ErrCancelled
		}
		r := int(e.xrows[i])
		e.sc.addRow(i, e.out[r*ny:(r+1)*ny], e.s)
	}
	return nil
}

// writeTile stores the mr×nr tile at processing rows i0.., panel columns
// j0.. into out, in the caller's order, dropping the padding.
func (e *engine) writeTile(i0, j0, nr int, t *[mr * maxNR]float32) {
	ny := e.ny
	rows := min(mr, e.nx-i0)
	cols := min(nr, ny-j0)
	ycols := e.yrows[j0 : j0+cols]
	for r := range rows {
		orow := e.out[int(e.xrows[i0+r])*ny : (int(e.xrows[i0+r])+1)*ny]
		tr := t[r*nr : r*nr+cols]
		if e.keepOrder {
			copyWiden(orow[j0:j0+cols], tr)
			continue
		}
		for c, j := range ycols {
			orow[j] = float64(tr[c])
		}
	}
}

func copyWiden(dst []float64, src []float32) {
	src = src[:len(dst)]
	for k, v := range src {
		dst[k] = float64(v)
	}
}

// mirrorTile is the side of the square tiles the mirror copies between, so
// that both the rows read and the columns written stay in cache.
const mirrorTile = 64

// mirror completes a symmetric out from the entries computed: (a, b) was
// computed when a comes no later than b in the processing order, and is
// copied to (b, a).
func (e *engine) mirror(nJobs int) error {
	n := e.nx
	pos := e.xrows // keepOrder: the identity
	if !e.keepOrder {
		pos = make([]int32, n)
		for i, r := range e.xrows {
			pos[r] = int32(i)
		}
	}
	out := e.out
	nt := (n + mirrorTile - 1) / mirrorTile
	return schedule.Run(e.ctl, nt, nJobs, 1, func(_, ta int) error {
		a0, a1 := ta*mirrorTile, min((ta+1)*mirrorTile, n)
		for b0 := a0; b0 < n; b0 += mirrorTile {
			b1 := min(b0+mirrorTile, n)
			for a := a0; a < a1; a++ {
				arow := out[a*n : (a+1)*n]
				pa := pos[a]
				for b := max(b0, a+1); b < b1; b++ {
					if pa <= pos[b] {
						out[b*n+a] = arow[b]
					} else {
						arow[b] = out[b*n+a]
					}
				}
			}
		}
		e.ctl.Done(1)
		return nil
	})
}
