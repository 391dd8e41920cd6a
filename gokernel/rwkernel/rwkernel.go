// Package rwkernel computes random-walk graph kernels on the direct product graph
// (Gärtner et al. 2003; Vishwanathan et al. 2010):
//
//	K(G, G') = Σ_k μ_k · 1ᵀ (W×)^k 1,
//
// geometric (μ_k = λ^k) or exponential (μ_k = λ^k / k!), summed to infinity or
// truncated after p steps. The product graph has one node per node pair (i, k) of G
// and G', and
//
//	W×[(i,k),(j,l)] = A_ij · A'_kl · κ(i,k) · κ(j,l),
//
// where A, A' are the weighted adjacency matrices (a self-loop of weight w gives
// A_ii = w) and κ is the node kernel: the product graph's nodes are weighted by κ
// and its start and stop vectors are all ones over all n·n' node pairs. Without a
// node kernel κ ≡ 1 and W× = A ⊗ A' (unlabeled); with an exact match on labels
// κ(i,k) = [l_i = l'_k] this is the standard labeled kernel (GraKeL's
// method_type="baseline"); a node pair with κ = 0 is a product node without edges
// that still contributes its 1 to the k = 0 term.
//
// Unlabeled graphs are solved exactly through one eigendecomposition per graph
// (A = QΛQᵀ gives K = Σ_ab (q_a·1)² (q'_b·1)² f(λ_a λ'_b), O(n·n') per pair), or
// through walk counts 1ᵀA^k1 when truncated. Labeled graphs restrict the product
// graph to the node pairs with κ ≠ 0 and solve (I − λW×)x = 1 by Jacobi-
// preconditioned conjugate gradients to a relative residual of 1e-13 (falling
// back to a dense LU solve if CG stalls), apply exp(λW×) to 1 by a scaled Taylor
// series, or sum the p steps directly.
//
// The geometric series converges only when λ·ρ(W×) < 1. Since
// ρ(W×) ≤ ρ(A)·ρ(A')·max|κ|² (with equality for unlabeled graphs), Gram refuses
// λ ≥ 1/(ρ(A)ρ(A')·max|κ|²) over the pairs it is asked for, and its error gives
// the largest admissible λ.
//
// The arithmetic of a pair depends only on its two graphs and the options: it is
// solved in an orientation given by the graphs' content, not by their places in
// the call, and what a call computes once (spectra, walk counts, the node
// kernel's table, the content order) gives the same numbers whatever else the
// call holds. So K(G, G') is the same float64, bit for bit, in every call that
// has the pair: symmetric or not, whichever side each graph is on, whatever
// else is in the call, with any number of goroutines.
package rwkernel

import (
	"errors"
	"fmt"
	"math"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// Kind selects the weights μ_k of walks of length k.
type Kind int

// The series: μ_k = λ^k (Geometric) or λ^k / k! (Exponential).
const (
	Geometric Kind = iota
	Exponential
)

// String implements fmt.Stringer.
func (k Kind) String() string {
	switch k {
	case Geometric:
		return "geometric"
	case Exponential:
		return "exponential"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Solver selects how labeled geometric kernels solve (I − λW×)x = 1.
type Solver int

// SolverAuto uses conjugate gradients and falls back to SolverDirect if they stall;
// SolverDirect factorizes the product system (for tests and tiny graphs).
const (
	SolverAuto Solver = iota
	SolverDirect
)

// Options configures the kernel.
type Options struct {
	// NodeKernel weighs product nodes; nil means unlabeled (κ ≡ 1).
	NodeKernel microkernel.Kernel
	// Lambda is λ > 0.
	Lambda float64
	// Kind is Geometric or Exponential.
	Kind Kind
	// Steps is 0 for the infinite series, else the number p of steps: k = 0..p.
	Steps int
	// NJobs is the number of goroutines; ≤ 0 uses all cores.
	NJobs int
	// Solver is for labeled geometric kernels (SolverAuto unless testing).
	Solver Solver
	// GridProduct forces the matrix-free product operator (A·X·A' on the n×n' grid)
	// that labeled kernels otherwise use only when the explicit product graph would
	// be too large; for tests.
	GridProduct bool
	// Control, when not nil, can stop the computation and counts the pairs done.
	Control *schedule.Control
}

// ErrLambda is wrapped by the error Gram and Diag return when λ is too large for
// the geometric series to converge.
var ErrLambda = errors.New("lamda too large")

// Gram writes K(X[i], Y[j]) into out[i*len(Y)+j]. When symmetric, Y is ignored, the
// matrix is len(X)×len(X), and only its upper triangle is computed and mirrored.
func Gram(X, Y []*graph.Graph, symmetric bool, opt Options, out []float64) error {
	all, yOff, err := schedule.Operands(X, Y, symmetric, len(out))
	if err != nil {
		return err
	}
	nx, ny := len(X), len(all)-yOff
	p, err := newPlan(all, nx, opt)
	if err != nil {
		return err
	}
	ys := "Y"
	if symmetric {
		ys = "X"
	}
	if err := p.admissible(0, nx, yOff, yOff+ny, "X", ys); err != nil {
		return err
	}
	return schedule.RunPairs(opt.Control, schedule.NewGrid(nx, ny, symmetric), opt.NJobs, 1, newScratch,
		func(ws *scratch, i, j int) (float64, error) { return p.pair(ws, i, yOff+j) }, out)
}

func newScratch() *scratch { return &scratch{} }

// Diag writes K(X[i], X[i]) into out[i], the values Gram puts on its diagonal.
func Diag(X []*graph.Graph, opt Options, out []float64) error {
	if len(out) != len(X) {
		return fmt.Errorf("output has %d entries for %d graphs", len(out), len(X))
	}
	p, err := newPlan(X, len(X), opt)
	if err != nil {
		return err
	}
	// Only the pairs (i, i) are computed, so only they must converge.
	for i := range X {
		if err := p.admissible(i, i+1, i, i+1, "X", "X"); err != nil {
			return err
		}
	}
	return schedule.RunPairs(opt.Control, schedule.DiagGrid(len(X)), opt.NJobs, 1, newScratch,
		func(ws *scratch, i, _ int) (float64, error) { return p.pair(ws, i, i) }, out)
}

// plan is what one call computes once: per-graph spectra or walk counts, and the
// node-kernel set-up.
type plan struct {
	opt    Options
	graphs []*graph.Graph
	rw     []rwGraph
	// rank holds each graph's rank in content order (contentRanks), which
	// orients the pairs (pair).
	rank []int32
	// unlabeled is set when W× = c·(A ⊗ A'): no node kernel or a constant one;
	// lambda then absorbs c (λ_eff = λ·c²).
	unlabeled bool
	lambda    float64
	// bound is a bound on |κ| known from the kernel's form (boundOK), used for the
	// convergence check before any work.
	bound   float64
	boundOK bool
	// mu holds μ_0..μ_p for truncated sums.
	mu []float64
	// Node classes: identical rows share a class, and the node kernel between
	// classes is tabulated when there are few (table != nil).
	nClass int
	table  []float64
	cls    [][]int32
}

// newPlan validates the options and preprocesses gs, whose first nx graphs are X
// and the rest Y (messages name graphs within their batch).
func newPlan(gs []*graph.Graph, nx int, opt Options) (*plan, error) {
	switch {
	case !(opt.Lambda > 0) || math.IsInf(opt.Lambda, 0):
		return nil, fmt.Errorf("lamda must be a positive finite number, got %v", opt.Lambda)
	case opt.Kind != Geometric && opt.Kind != Exponential:
		return nil, fmt.Errorf("unknown random-walk kind %v: use geometric or exponential", opt.Kind)
	case opt.Steps < 0:
		return nil, fmt.Errorf("the number of steps p must be positive (or 0 for the infinite series), got %d", opt.Steps)
	}
	p := &plan{opt: opt, graphs: gs, lambda: opt.Lambda}
	if opt.NodeKernel != nil {
		mc := microkernel.MaxCol(opt.NodeKernel)
		for i, g := range gs {
			if g.NodeCols < mc {
				return nil, fmt.Errorf("%s: the node kernel reads feature column %d but the graph has %d node feature columns", schedule.OperandName(i, nx), mc-1, g.NodeCols)
			}
		}
	}
	switch k := opt.NodeKernel.(type) {
	case nil:
		p.unlabeled = true
	case *microkernel.Constant:
		p.unlabeled = true
		p.lambda *= k.C * k.C
	}
	if p.unlabeled {
		p.bound, p.boundOK = 1, true
	} else {
		p.bound, p.boundOK = kernelBound(opt.NodeKernel)
	}
	if opt.Steps > 0 {
		p.mu = make([]float64, opt.Steps+1)
		p.mu[0] = 1
		for k := 1; k <= opt.Steps; k++ {
			p.mu[k] = p.mu[k-1] * p.lambda
			if opt.Kind == Exponential {
				p.mu[k] /= float64(k)
			}
		}
	}
	if !p.unlabeled {
		p.nodeClasses()
	}
	p.rw = make([]rwGraph, len(gs))
	if p.unlabeled && opt.Steps > 0 {
		// Walk-count sums are symmetric in the two graphs (unlabeledPair):
		// equal ranks leave every pair as it comes, and the sort is saved. It
		// took 15% of the instructions of such a Gram matrix on MUTAG, and more
		// of the time, on one core while the pairs run on all.
		p.rank = make([]int32, len(gs))
	} else {
		p.rank = contentRanks(gs)
	}
	return p, schedule.Run(opt.Control, len(gs), opt.NJobs, 1, func(_, i int) error {
		if err := p.prepGraph(i); err != nil {
			return fmt.Errorf("%s: %w", schedule.OperandName(i, nx), err)
		}
		return nil
	})
}

// admissible checks that the geometric series converges for every pair of graphs
// in [i0, i1) × [j0, j1); truncated and exponential sums always do. With a bound
// on |κ| from the kernel's form the worst pair is the two largest spectral radii;
// otherwise every pair's max|κ| is computed first (one node-kernel matrix per
// pair, cheap next to the solves), so that the error names the limit for the
// whole batch rather than for the first pair that fails.
func (p *plan) admissible(i0, i1, j0, j1 int, xs, ys string) error {
	if p.opt.Kind != Geometric || p.opt.Steps > 0 {
		return nil
	}
	if p.boundOK {
		bi, bj := -1, -1
		for i := i0; i < i1; i++ {
			if bi < 0 || p.rw[i].rho > p.rw[bi].rho {
				bi = i
			}
		}
		for j := j0; j < j1; j++ {
			if bj < 0 || p.rw[j].rho > p.rw[bj].rho {
				bj = j
			}
		}
		if bi < 0 || bj < 0 {
			return nil
		}
		return p.check(bi, bj, p.bound, i0, j0, xs, ys)
	}
	type worst struct {
		rate, b float64
		i, j    int
	}
	nw := schedule.Workers(p.opt.NJobs)
	ws := make([]worst, nw)
	kns := make([][]float64, nw)
	err := schedule.Run(p.opt.Control, i1-i0, p.opt.NJobs, 1, func(w, di int) error {
		i := i0 + di
		for j := j0; j < j1; j++ {
			nm := p.graphs[i].N * p.graphs[j].N
			kns[w] = grow(kns[w], nm)
			p.nodeMatrix(i, j, kns[w])
			b := 0.0
			for _, x := range kns[w] {
				b = max(b, math.Abs(x))
			}
			if r := p.rw[i].rho * p.rw[j].rho * b * b; r > ws[w].rate {
				ws[w] = worst{r, b, i, j}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	top := worst{i: -1}
	for _, w := range ws {
		if w.rate > top.rate {
			top = w
		}
	}
	if top.i < 0 {
		return nil
	}
	return p.check(top.i, top.j, top.b, i0, j0, xs, ys)
}

// check returns an ErrLambda error if λ·ρ_i·ρ_j·b² ≥ 1; i0 and j0 turn graph
// indices into positions within X and Y for the message.
func (p *plan) check(i, j int, b float64, i0, j0 int, xs, ys string) error {
	rate := p.rw[i].rho * p.rw[j].rho * b * b
	if p.unlabeled {
		// λ was scaled by c² for a constant node kernel; report the user's λ.
		rate *= p.lambda / p.opt.Lambda
	}
	if p.opt.Lambda*rate < 1 {
		return nil
	}
	what := "(ρ(A)·ρ(A')) = 1/ρ(W×)"
	if !p.unlabeled {
		what = fmt.Sprintf("(ρ(A)·ρ(A')·max|κ|²) ≤ 1/ρ(W×), max|κ| = %.6g", b)
	}
	return fmt.Errorf("%w: the geometric random-walk series diverges for lamda=%.6g. It converges only for lamda < 1/%s; with spectral radii %.6g (%s[%d]) and %.6g (%s[%d]) the largest admissible lamda is just below %.10g. Use a smaller lamda, kind='exponential', or a finite number of steps p",
		ErrLambda, p.opt.Lambda, what, p.rw[i].rho, xs, i-i0, p.rw[j].rho, ys, j-j0, 1/rate)
}

// pair returns K(graph i, graph j), or an error where the value overflows float64
// (an exponential series or a long truncated sum with a large λ), rather than an
// infinity in the matrix; schedule.RunPairs prefixes an error with the names of
// the two graphs. It solves the pair with its graphs in content order
// (order.go), so that the value is the same, bit for bit, in every call that has
// the pair.
func (p *plan) pair(ws *scratch, i, j int) (float64, error) {
	a, b := i, j
	if p.rank[i] > p.rank[j] {
		a, b = j, i
	}
	var v float64
	var err error
	if p.unlabeled {
		v = p.unlabeledPair(a, b)
	} else if v, err = p.labeledPair(ws, a, b); err != nil {
		return 0, err
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("the kernel value overflows float64 (%v) with lamda=%g: use a smaller lamda or fewer steps", v, p.opt.Lambda)
	}
	return v, nil
}
