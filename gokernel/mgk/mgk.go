// Package mgk computes the marginalized graph kernel (Kashima et al. 2003) with
// GraphDot's conventions: for graphs G and G' with node kernel κv, edge kernel
// κe, stopping probability q and start probabilities p, p',
//
//	K(G, G') = Σ p_i p'_i' x_(i,i'),  (D V⁻¹ − W) x = D·1,
//
// over the product nodes (i, i') (index i·n' + i'), where D = diag(d ⊗ d')/(1−q)²
// with d_i = Σ_j w_ij (1 for an isolated node), V = diag(κv(v_i, v'_i')) and
// W[(i,i'),(j,j')] = w_ij w'_i'j' κe(e_ij, e'_i'j'). With Lmin = 1 the length-0
// term V·1 of x = Σ_k (V D⁻¹ W)^k V·1 is left out.
//
// Each pair is solved by conjugate gradients on the product graph; the product
// matrix W is never stored as such. Per pair the solver picks, by a cost model
// measured with BenchmarkOperators, how W·x is formed: a loop over pairs of
// undirected edges with the edge kernel tabulated per pair (small molecules),
// octile's tiled, factorized or explicit products on graphs packed once into
// 8×8 tiles and reordered (larger, denser graphs and discrete edge labels), or
// the edge kernel evaluated inside the product when even its table would not
// fit in the memory budget. Pairs on the edge table are preconditioned by
// symmetric Gauss–Seidel in Eisenstat's form (sgs.go: about half Jacobi's
// iterations for the cost of one product each); the others by Jacobi.
// SolverJacobi selects Jacobi everywhere: it is the reference the tests
// compare with, besides dense solves.
//
// Accuracy: by default every K agrees with the exact solution of its system to
// 1e-9 relative (Options.Accuracy; the residual tolerances are derived from it
// with factors measured on the MUTAG, ENZYMES, NCI1 and PROTEINS Gram
// matrices, where the largest error stayed below 0.37× the accuracy asked
// for; on 18,000 pairs of small random graphs with self-loops and weights
// 0.1–2, tests/test_properties.py's, it reached 0.91× with one solve per
// pair, before the two below). On SGS pairs K comes from two solves, the
// primal and the adjoint (whose solution weights K's residual), run in
// lockstep with both columns side by side (sgs2.go): its error is the
// product of theirs, so each stops near the square root of the accuracy
// (dual.go). GramGrad takes K from the same two solves, bit for bit Gram's,
// and goes on to Options.GradAccuracy (1e-6 relative) for the gradients.
//
// Gram, Diag and GramGrad replace each graph by its quotient under colour
// refinement on node, edge and start-probability values (quotient.go; exact),
// and solve graphs with equal quotients once; each graph's set-up (quotient,
// packing, sweep lists) is kept for later calls that meet it again
// (sidecache.go, SideCacheBytes). The vector work of CG runs in fused AVX2
// loops (package vec) when built with GOEXPERIMENT=simd.
package mgk

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
	"github.com/graphgram/graphgram/gokernel/schedule"
)

// DefaultAccuracy is the relative error of each kernel value that the solver
// aims for when Options.Accuracy and Options.Tol are 0: K agrees with the
// exact solution of its linear system to about 1e-9 relative. The residual
// tolerance of each solver is derived from it by factors measured on the full
// MUTAG, NCI1 and ENZYMES Gram matrices (see tolFor).
const DefaultAccuracy = 1e-9

// DefaultGradAccuracy is the relative accuracy of GramGrad's gradients when
// Options.GradAccuracy is 0.
const DefaultGradAccuracy = 1e-6

// DefaultTol is the relative residual at which the reference (Jacobi) solver
// stops for the default accuracy; it is what Options.Tol = 0 means for
// SolverJacobi. Other solvers derive their own tolerance from Accuracy.
const DefaultTol = jacobiTolPerAccuracy * DefaultAccuracy

// DefaultMaxIter is the CG iteration cap when Options.MaxIter is 0. CG needs
// roughly √(1/q)·log(1/Tol) iterations, a few hundred at q = 0.001.
const DefaultMaxIter = 10000

// Solver selects how each pair's linear system is preconditioned.
type Solver int

const (
	// SolverAuto uses symmetric Gauss–Seidel where the pair's edge-kernel
	// table fits and the cost model prefers it over octile's tiled products
	// with Jacobi, and Jacobi elsewhere.
	SolverAuto Solver = iota
	// SolverJacobi is the reference: Jacobi-preconditioned CG on every pair,
	// with the operator chosen by the cost model.
	SolverJacobi
	// SolverSGS uses symmetric Gauss–Seidel (Eisenstat's form) on every pair
	// whose edge-kernel table fits, Jacobi on the others.
	SolverSGS
)

// Options are the kernel's hyperparameters and the solver's settings.
type Options struct {
	// NodeKernel and EdgeKernel compare node and edge feature rows. Their values
	// must be non-negative; values above 1 can make the system indefinite.
	NodeKernel, EdgeKernel microkernel.Kernel
	// Q is the stopping probability, in (0, 1).
	Q float64
	// Lmin is the shortest walk length counted: 0 or 1.
	Lmin int
	// Accuracy is the relative error of each kernel value asked for; 0 means
	// DefaultAccuracy (1e-9). Use 1e-6 for screening, 1e-12 for references.
	// The solvers' residual tolerances are derived from it; Tol, when set,
	// overrides them.
	Accuracy float64
	// GradAccuracy is the relative accuracy of the gradients of GramGrad; 0
	// means DefaultGradAccuracy (1e-6). The solves the gradients read stop
	// at a tolerance derived from it; GramGrad's K equals Gram's all the
	// same (taken from the same iterates, dual.go, or on Jacobi pairs from
	// the same primal solve; with Tol set, from a primal solve to Tol).
	GradAccuracy float64
	// Tol, when positive, is the relative residual tolerance of each CG solve
	// instead of the one derived from Accuracy: ‖r‖/‖b‖ on the symmetrically
	// scaled system for Jacobi, the preconditioned residual norm ratio
	// √(rᵀ P⁻¹ r / bᵀ P⁻¹ b) for symmetric Gauss–Seidel. K then comes from
	// the primal solve alone, also on SGS pairs (not from two solves,
	// dual.go). Meant for tests and experiments.
	Tol float64
	// MaxIter caps CG iterations per solve (per lockstep of two solves on
	// SGS pairs); 0 means DefaultMaxIter.
	MaxIter int
	// NJobs is the number of goroutines; <= 0 means all cores.
	NJobs int
	// Control, when not nil, can stop the computation (between pairs and inside
	// solves) and counts the pairs done.
	Control *schedule.Control
	// Solver selects the preconditioner; the zero value is SolverAuto.
	Solver Solver
	// Quotient controls the colour-refinement quotient of Gram, Diag and
	// GramGrad: each graph is replaced by its quotient under 1-WL colour
	// refinement on node, edge and start-probability values (exact: K is
	// unchanged), and graphs with identical quotients are solved once. The
	// zero value, QuotientAuto, refines every call's graphs.
	Quotient Quotient
	// PackMinEdges is the edge count from which a graph is packed into octiles
	// for octile's products; 0 means the default (graphs too small for octile
	// to pay are left unpacked). Tests set 1 to pack every graph.
	PackMinEdges int

	// op and octilePath force an operator and octile path when it applies
	// (tests only); the zero values let the cost model choose.
	op         opKind
	octilePath octile.Path
	// tolScale, when positive, multiplies the tolerance derived from Accuracy
	// (calibration experiments only).
	tolScale float64
	// labelTableBudget bounds the entries of a base-kernel label table
	// (labels.go); 0 means defaultLabelTableBudget, < 0 builds none (tests).
	labelTableBudget int
}

// Quotient says whether graphs are replaced by their colour-refinement
// quotients.
type Quotient int

const (
	// QuotientAuto refines every graph and quotients those whose quotient
	// is smaller. Whether a graph is quotiented must not depend on the call
	// (the two are the same value in exact arithmetic only), so no call
	// skips the refinement: about 25 µs per QM7 molecule, spread over the
	// cores, which repays itself on a full Gram matrix and costs a column
	// K(X, {z}) or a diagonal some of its time (benchmarks/log/lowrank_gp_issue21.md).
	QuotientAuto Quotient = iota
	// QuotientOff solves every pair on the graphs as given.
	QuotientOff
	// QuotientOn refines the graphs of every call (as QuotientAuto does).
	QuotientOn
)

// refines reports whether a call refines its graphs (see Quotient).
func (o *Options) refines() bool { return o.Quotient != QuotientOff }

// Unconverged reports a pair whose solve hit MaxIter before reaching Tol (or
// broke down because the system was not positive definite).
type Unconverged struct {
	// I and J index the pair: X[I], Y[J].
	I, J int
	// Iterations is the number of CG iterations run (of the two solves in
	// lockstep, on SGS pairs).
	Iterations int
	// Residual is the relative residual reached: on SGS pairs solved for K
	// from two solves (dual.go), the product of their relative residuals,
	// which their stopping test compares with τ.
	Residual float64
}

// String describes u for warnings.
func (u Unconverged) String() string {
	return fmt.Sprintf("(%d, %d): residual %.3g after %d iterations", u.I, u.J, u.Residual, u.Iterations)
}

// resolve checks o and returns it with defaults filled in.
func (o Options) resolve() (Options, error) {
	switch {
	case !(o.Q > 0 && o.Q < 1):
		return o, fmt.Errorf("mgk: stopping probability q = %v must be in (0, 1)", o.Q)
	case o.Lmin != 0 && o.Lmin != 1:
		return o, fmt.Errorf("mgk: lmin = %d must be 0 or 1", o.Lmin)
	case o.NodeKernel == nil:
		return o, fmt.Errorf("mgk: node kernel is nil")
	case o.EdgeKernel == nil:
		return o, fmt.Errorf("mgk: edge kernel is nil")
	case !(o.Tol >= 0) || math.IsInf(o.Tol, 0):
		return o, fmt.Errorf("mgk: tolerance %v must be finite and non-negative (0 = derived from the accuracy)", o.Tol)
	case !(o.Accuracy >= 0) || o.Accuracy >= 1:
		return o, fmt.Errorf("mgk: accuracy %v must be in [0, 1) (0 = default %g)", o.Accuracy, DefaultAccuracy)
	case !(o.GradAccuracy >= 0) || o.GradAccuracy >= 1:
		return o, fmt.Errorf("mgk: gradient accuracy %v must be in [0, 1) (0 = default %g)", o.GradAccuracy, DefaultGradAccuracy)
	case o.Solver < SolverAuto || o.Solver > SolverSGS:
		return o, fmt.Errorf("mgk: unknown solver %d", o.Solver)
	case o.Quotient < QuotientAuto || o.Quotient > QuotientOn:
		return o, fmt.Errorf("mgk: unknown quotient mode %d", o.Quotient)
	case o.MaxIter < 0:
		return o, fmt.Errorf("mgk: max_iter = %d must be non-negative (0 = default %d)", o.MaxIter, DefaultMaxIter)
	}
	if o.Accuracy == 0 {
		o.Accuracy = DefaultAccuracy
	}
	if o.GradAccuracy == 0 {
		o.GradAccuracy = DefaultGradAccuracy
	}
	if o.PackMinEdges <= 0 {
		o.PackMinEdges = defaultPackMinEdges
	}
	if o.MaxIter == 0 {
		o.MaxIter = DefaultMaxIter
	}
	return o, nil
}

// sideSet is one side of a call (X or Y): the distinct graphs the solver
// works on and, for each, the caller's graphs it stands for (several when
// their colour-refinement quotients are equal).
type sideSet struct {
	sides   []side
	members [][]int
}

// validate checks a list of graphs and its start probabilities against opt's
// kernels. name is "X" or "Y".
func validate(name string, gs []*graph.Graph, starts [][]float64, opt *Options) error {
	if starts != nil && len(starts) != len(gs) {
		return fmt.Errorf("mgk: start%s has %d entries for %d graphs", name, len(starts), len(gs))
	}
	nc, ec := microkernel.MaxCol(opt.NodeKernel), microkernel.MaxCol(opt.EdgeKernel)
	for i, g := range gs {
		if g == nil {
			return fmt.Errorf("%s[%d]: nil graph", name, i)
		}
		if nc > g.NodeCols {
			return fmt.Errorf("%s[%d]: the node kernel reads node feature column %d but the graph has %d columns", name, i, nc-1, g.NodeCols)
		}
		if ec > g.EdgeCols {
			return fmt.Errorf("%s[%d]: the edge kernel reads edge feature column %d but the graph has %d columns", name, i, ec-1, g.EdgeCols)
		}
		if starts != nil && starts[i] != nil {
			st := starts[i]
			if len(st) != g.N {
				return fmt.Errorf("mgk: start%s[%d] has %d probabilities for %d nodes", name, i, len(st), g.N)
			}
			for k, x := range st {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("mgk: start%s[%d][%d] is %v", name, i, k, x)
				}
			}
		}
	}
	return nil
}

// prepareSides precomputes what the solver needs per graph of a call: when it
// refines (Options.refines), each graph's quotient and one side per distinct
// quotient (identical content); else one side per graph.
func prepareSides(X, Y []*graph.Graph, startX, startY [][]float64, opt *Options) (xs, ys sideSet, err error) {
	all := append(slices.Clip(X), Y...)
	starts := make([][]float64, len(all))
	for i := range X {
		if startX != nil {
			starts[i] = startX[i]
		}
	}
	for j := range Y {
		if startY != nil {
			starts[len(X)+j] = startY[j]
		}
	}
	qs := make([]quotient, len(all))
	refine, packMin := opt.refines(), opt.PackMinEdges
	// A graph met before has its set-up cached (sidecache.go); a new one is
	// prepared from a copy of its start probabilities (which may be a view
	// of the caller's memory; graphs are immutable).
	cached := make([]*preparedSide, len(all))
	keys := make([]uint64, len(all))
	copyStarts := make([][]float64, len(all))
	qfp := make([]uint64, len(all)) // the quotients' fingerprints, for grouping (refine only)
	// Refinement and packing (with reordering) are linear in each graph's
	// size; spread them over the cores like the pairs.
	err = schedule.Run(opt.Control, len(all), opt.NJobs, 16, func(_, i int) error {
		g, start := all[i], starts[i]
		if SideCacheBytes > 0 {
			keys[i] = sideKey(g, start)
			e, full := sideCache.get(keys[i], g, start, refine, packMin)
			if full {
				cached[i], qs[i], qfp[i] = e, e.q, e.qfp
				return nil
			}
			if e != nil {
				// The quotient is cached (QuotientOf's, or another packing's
				// entry): only the side is to be built, and cached.
				qs[i], qfp[i], copyStarts[i] = e.q, e.qfp, e.start
				return nil
			}
			start = slices.Clone(start) // nil stays nil
			copyStarts[i] = start
		}
		if !refine {
			qs[i] = quotient{g: g, start: start}
			return nil
		}
		name := fmt.Sprintf("X[%d]", i)
		if i >= len(X) {
			name = fmt.Sprintf("Y[%d]", i-len(X))
		}
		var err error
		if qs[i], err = safeQuotient(name, g, start); err == nil {
			qfp[i] = graph.ContentFingerprint(qs[i].g, qs[i].content()...)
		}
		return err
	})
	if err != nil {
		return
	}
	group := func(qs []quotient, qfp []uint64) (set sideSet, todo []quotient) {
		// Graphs whose quotients have the same content, bit for bit, share
		// a side: every pair of theirs is the same arithmetic.
		seen := map[uint64][]int{} // fingerprint → indices into todo
	next:
		for i := range qs {
			q := &qs[i]
			if refine {
				fp := qfp[i]
				for _, u := range seen[fp] {
					r := &todo[u]
					if graph.CompareContent(q.g, q.content(), r.g, r.content()) == 0 {
						set.members[u] = append(set.members[u], i)
						continue next
					}
				}
				seen[fp] = append(seen[fp], len(todo))
			}
			set.members = append(set.members, []int{i})
			todo = append(todo, *q)
		}
		set.sides = make([]side, len(todo))
		return set, todo
	}
	xs, qx := group(qs[:len(X)], qfp[:len(X)])
	ys, qy := group(qs[len(X):], qfp[len(X):])
	err = schedule.Run(opt.Control, len(qx)+len(qy), opt.NJobs, 16, func(_, i int) error {
		set, q, u, offset := &xs, qx, i, 0
		if i >= len(qx) {
			set, q, u, offset = &ys, qy, i-len(qx), len(X)
		}
		// The side of the group's first graph; a group's graphs have equal
		// quotients, hence equal sides.
		first := offset + set.members[u][0]
		if e := cached[first]; e != nil {
			set.sides[u] = e.s
			return nil
		}
		set.sides[u] = newQuotientSide(q[u], packMin)
		if SideCacheBytes > 0 {
			for _, j := range set.members[u] {
				if j += offset; cached[j] == nil {
					sideCache.put(keys[j], &preparedSide{g: all[j], start: copyStarts[j], refine: refine,
						packMin: packMin, q: qs[j], qfp: qfp[j], sided: true, s: set.sides[u], bytes: sizeOf(all[j])})
				}
			}
		}
		return nil
	})
	return xs, ys, err
}

// safeQuotient is quotientOf with a panic (a graph corrupted after
// construction) returned as an error naming the graph, as the workers do.
func safeQuotient(name string, g *graph.Graph, start []float64) (q quotient, err error) {
	return safely(name, func() quotient { return quotientOf(g, start) })
}

// safely returns f's quotient, or its panic (a graph corrupted after
// construction) as an error naming the graph name.
func safely(name string, f func() quotient) (q quotient, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mgk: panic while refining %s: %v", name, r)
		}
	}()
	return f(), nil
}

// Check validates the arguments of Gram (and Nodal, GramGrad) as this
// package's solvers do, for other backends of the same kernel (the CUDA
// bridge): it returns opt with its defaults resolved, and Y, which is X when
// symmetric (Y must then be nil or X, startY nil or equal to startX).
func Check(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt Options) (Options, []*graph.Graph, error) {
	o, err := opt.resolve()
	if err != nil {
		return o, nil, err
	}
	if symmetric {
		if Y != nil {
			if len(Y) != len(X) {
				return o, nil, fmt.Errorf("mgk: symmetric needs X and Y to be the same list; they have %d and %d graphs", len(X), len(Y))
			}
			for i := range X {
				if X[i] != Y[i] {
					return o, nil, fmt.Errorf("mgk: symmetric needs X and Y to be the same list; graph %d differs", i)
				}
			}
		}
		if startY != nil && !sameStarts(startX, startY) {
			return o, nil, fmt.Errorf("mgk: symmetric needs startY to be nil or equal to startX")
		}
		Y, startY = X, startX
	}
	if err := validate("X", X, startX, &o); err != nil {
		return o, nil, err
	}
	if !symmetric {
		if err := validate("Y", Y, startY, &o); err != nil {
			return o, nil, err
		}
	}
	return o, Y, nil
}

// setup validates the arguments common to Gram, Nodal and GramGrad and returns
// the prepared sides; for a symmetric call Y aliases X.
func setup(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt Options) (xs, ys sideSet, o Options, err error) {
	if o, Y, err = Check(X, Y, startX, startY, symmetric, opt); err != nil {
		return
	}
	if symmetric {
		xs, _, err = prepareSides(X, nil, startX, nil, &o)
		return xs, xs, o, err
	}
	xs, ys, err = prepareSides(X, Y, startX, startY, &o)
	return
}

func sameStarts(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for k := range a[i] {
			if a[i][k] != b[i][k] {
				return false
			}
		}
	}
	return true
}

// largestFirst lists the pairs of distinct sides to solve (I ≤ J when
// symmetric), the largest graphs first, so that the last pairs to finish are small.
func largestFirst(xs, ys sideSet, symmetric bool) []schedule.Pair {
	size := func(ss []side) []float64 {
		out := make([]float64, len(ss))
		for i := range ss {
			out[i] = float64(len(ss[i].g.Col) + ss[i].g.N)
		}
		return out
	}
	return schedule.PairsLargestFirst(size(xs.sides), size(ys.sides), symmetric)
}

// cost estimates the work of a pair as the product of the graphs' adjacency
// sizes, the number of terms in one mat-vec.
func cost(a, b *side) float64 {
	return float64(len(a.g.Col)+a.g.N) * float64(len(b.g.Col)+b.g.N)
}

// run solves every pair of distinct sides (I ≤ J when symmetric), largest
// first, on opt.NJobs goroutines, for K (solveValue) or, when nodal, for x
// (solvePrimal; k is then 0), and calls done in the worker that solved it.
// done must only write memory owned by its pair's members (see forMembers).
// Unconverged solves are collected for every member pair, sorted by (I, J).
func run(xs, ys sideSet, symmetric bool, opt *Options, nodal bool, done func(ps *pairSolver, p schedule.Pair, k float64, res solveResult) error) ([]Unconverged, error) {
	ps := largestFirst(xs, ys, symmetric)
	return runPairs(xs, ys, ps, opt, false, !nodal && opt.dualValues(), func(s *pairSolver, p schedule.Pair) (solveResult, error) {
		if nodal {
			res := s.solvePrimal()
			return res, done(s, p, 0, res)
		}
		k, res := s.solveValue()
		return res, done(s, p, k, res)
	}, memberPairs(xs, ys, symmetric))
}

// memberPairs returns the function runPairs reports unconverged pairs
// through: the entries (i, j), i ≤ j when symmetric, that a pair stands for.
func memberPairs(xs, ys sideSet, symmetric bool) func(p schedule.Pair, f func(i, j int)) {
	return func(p schedule.Pair, f func(i, j int)) {
		forMembers(xs, ys, p, symmetric, func(i, j int, first bool) {
			if first {
				f(i, j)
			}
		})
	}
}

// runPairs prepares every pair of ps, largest first, and calls solve on it in
// the worker that prepared it, collecting unconverged results. grad asks for
// the base kernels' gradients in the call's label tables (GramGrad); twoCol
// sets the workers up for two columns in lockstep (sgs2.go).
func runPairs(xs, ys sideSet, ps []schedule.Pair, opt *Options, grad, twoCol bool, solve func(s *pairSolver, p schedule.Pair) (solveResult, error), members func(p schedule.Pair, f func(i, j int))) ([]Unconverged, error) {
	nw := schedule.Workers(opt.NJobs)
	solvers := newSolvers(nw)
	tabs := buildLabelTables(xs, ys, sameSides(xs, ys), len(ps), opt, grad)
	for w := range solvers {
		solvers[w].tab, solvers[w].twoCol = &tabs, twoCol
	}
	bad := make([][]Unconverged, nw)
	opt.Control.AddTotal(len(ps))
	err := schedule.Run(opt.Control, len(ps), opt.NJobs, 1, func(w, k int) error {
		p := ps[k]
		s := &solvers[w]
		a, b, swapped := pairOrder(&xs.sides[p.I], &ys.sides[p.J])
		s.swapped = swapped
		if err := s.prepare(a, b, opt); err != nil {
			i, j := xs.members[p.I][0], ys.members[p.J][0]
			return fmt.Errorf("X[%d] × Y[%d]: %w", i, j, err)
		}
		res, err := solve(s, p)
		if err != nil {
			return err
		}
		if !res.converged {
			members(p, func(i, j int) {
				bad[w] = append(bad[w], Unconverged{I: i, J: j, Iterations: res.iters, Residual: res.residual})
			})
		}
		opt.Control.Done(1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mergeUnconverged(bad), nil
}

// forMembers calls f(i, j, first) for every entry (i, j) of the caller's
// matrix that the solved pair p of distinct sides stands for; for a
// symmetric call that includes the mirrored entries, first being false for
// them (and true for i ≤ j).
func forMembers(xs, ys sideSet, p schedule.Pair, symmetric bool, f func(i, j int, first bool)) {
	for _, i := range xs.members[p.I] {
		for _, j := range ys.members[p.J] {
			if !symmetric {
				f(i, j, true)
				continue
			}
			if p.I == p.J && j < i {
				continue // the pair (j, i) is visited too
			}
			f(min(i, j), max(i, j), true)
			if i != j {
				f(max(i, j), min(i, j), false)
			}
		}
	}
}

func mergeUnconverged(bad [][]Unconverged) []Unconverged {
	var all []Unconverged
	for _, b := range bad {
		all = append(all, b...)
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].I != all[b].I {
			return all[a].I < all[b].I
		}
		return all[a].J < all[b].J
	})
	return all
}

// Gram writes K(X[i], Y[j]) to out[i*len(Y)+j]. startX and startY hold per-graph
// per-node start probabilities (nil, or a nil entry, means all ones).
// symmetric requires X and Y to be the same list (Y may be nil; startY must be
// nil or equal to startX): only i <= j is solved and the lower triangle mirrored.
// iters, when non-nil, receives the CG iteration count per entry (same layout).
// Pairs whose solve did not converge are returned, not treated as errors.
func Gram(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt Options, out []float64, iters []int32) ([]Unconverged, error) {
	xs, ys, o, err := setup(X, Y, startX, startY, symmetric, opt)
	if err != nil {
		return nil, err
	}
	n, m := len(X), len(Y)
	if symmetric {
		m = n
	}
	if len(out) != n*m {
		return nil, fmt.Errorf("mgk: out has %d entries for a %d×%d Gram matrix", len(out), n, m)
	}
	if iters != nil && len(iters) != n*m {
		return nil, fmt.Errorf("mgk: iters has %d entries for a %d×%d Gram matrix", len(iters), n, m)
	}
	return run(xs, ys, symmetric, &o, false, func(s *pairSolver, p schedule.Pair, k float64, res solveResult) error {
		forMembers(xs, ys, p, symmetric, func(i, j int, _ bool) {
			out[i*m+j] = k
			if iters != nil {
				iters[i*m+j] = int32(res.iters)
			}
		})
		return nil
	})
}

// Diag writes K(X[i], X[i]) to out[i].
func Diag(X []*graph.Graph, startX [][]float64, opt Options, out []float64) ([]Unconverged, error) {
	xs, o, err := diagSetup(X, startX, opt, out, nil)
	if err != nil {
		return nil, err
	}
	return runPairs(xs, xs, selfPairs(xs), &o, false, o.dualValues(), func(s *pairSolver, p schedule.Pair) (solveResult, error) {
		k, res := s.solveValue()
		for _, i := range xs.members[p.I] {
			out[i] = k
		}
		return res, nil
	}, selfMembers(xs))
}

// selfPairs are the pairs (i, i) of xs's distinct graphs, largest first.
// diagSetup is the set-up of Diag and DiagGrad: opt resolved, X validated,
// out checked (one entry per graph), then the caller's own check of its
// other outputs (nil: none), and the sides of X.
func diagSetup(X []*graph.Graph, startX [][]float64, opt Options, out []float64, check func(o *Options) error) (sideSet, Options, error) {
	o, err := opt.resolve()
	if err != nil {
		return sideSet{}, o, err
	}
	if err := validate("X", X, startX, &o); err != nil {
		return sideSet{}, o, err
	}
	if len(out) != len(X) {
		return sideSet{}, o, fmt.Errorf("mgk: out has %d entries for %d graphs", len(out), len(X))
	}
	if check != nil {
		if err := check(&o); err != nil {
			return sideSet{}, o, err
		}
	}
	xs, _, err := prepareSides(X, nil, startX, nil, &o)
	return xs, o, err
}

func selfPairs(xs sideSet) []schedule.Pair {
	ps := make([]schedule.Pair, len(xs.sides))
	for i := range ps {
		ps[i] = schedule.Pair{I: i, J: i}
	}
	schedule.LargestFirst(ps, func(p schedule.Pair) float64 { return cost(&xs.sides[p.I], &xs.sides[p.J]) })
	return ps
}

// selfMembers maps a self pair to the input graphs it stands for (as memberPairs).
func selfMembers(xs sideSet) func(p schedule.Pair, f func(i, j int)) {
	return func(p schedule.Pair, f func(i, j int)) {
		for _, i := range xs.members[p.I] {
			f(i, i)
		}
	}
}

// nodalTolFactor tightens Nodal's solves: a single node-pair value is more
// sensitive to the residual than the sum K (measured on MUTAG's golden nodal
// matrix, where Gram's tolerance leaves node pairs 2e-9 off).
const nodalTolFactor = 1e-3

// JacobiNodalTolerance returns the residual tolerance Nodal's solves need
// with Jacobi-preconditioned CG (opt.Tol when set), for other backends of
// Nodal (the CUDA bridge); opt is resolved as Check returns it.
func JacobiNodalTolerance(opt Options) float64 {
	if opt.tolScale == 0 {
		opt.tolScale = nodalTolFactor
	}
	return tolFor(&opt, false)
}

// offsets returns the first packed node row of each graph and the total.
func offsets(ss []side) ([]int, int) {
	off := make([]int, len(ss))
	t := 0
	for i := range ss {
		off[i] = t
		t += ss[i].g.N
	}
	return off, t
}

// Nodal writes the node-pair similarities p_i p'_i' x_(i,i') (minus p_i p'_i' v
// with Lmin = 1) as a (ΣnX × ΣnY) row-major matrix, nodes packed graph after
// graph. symmetric is as in Gram. Opt.Accuracy applies to each node-pair value
// here: the solves run nodalTolFactor tighter than Gram's.
func Nodal(X, Y []*graph.Graph, startX, startY [][]float64, symmetric bool, opt Options, out []float64) ([]Unconverged, error) {
	opt.Quotient = QuotientOff
	if opt.tolScale == 0 {
		opt.tolScale = nodalTolFactor
	}
	xs, ys, o, err := setup(X, Y, startX, startY, symmetric, opt)
	if err != nil {
		return nil, err
	}
	offX, nX := offsets(xs.sides)
	offY, nY := offsets(ys.sides)
	if len(out) != nX*nY {
		return nil, fmt.Errorf("mgk: out has %d entries for a %d×%d nodal matrix", len(out), nX, nY)
	}
	return run(xs, ys, symmetric, &o, true, func(s *pairSolver, p schedule.Pair, _ float64, _ solveResult) error {
		// s.a and s.b are the pair in the order it was solved in (pairOrder).
		a, b := s.a, s.b
		nh := b.g.N
		for i := 0; i < a.g.N; i++ {
			for ip := 0; ip < nh; ip++ {
				k := i*nh + ip
				x := s.x(k) * a.p(i) * b.p(ip)
				row, col := offX[p.I]+a.node(i), offY[p.J]+b.node(ip)
				if s.swapped {
					row, col = offX[p.I]+b.node(ip), offY[p.J]+a.node(i)
				}
				out[row*nY+col] = x
				if symmetric {
					out[col*nY+row] = x
				}
			}
		}
		return nil
	})
}
