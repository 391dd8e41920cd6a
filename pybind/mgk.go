package pybind

import (
	"fmt"
	"strings"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
)

// maxReported is how many unconverged pairs a warning names.
const maxReported = 10

// descCols returns the node and edge feature column counts a descriptor
// declares. They are read from the descriptor rather than from the graphs so
// that kernels are checked even for an empty batch.
func descCols(desc uintptr) (nodeCols, edgeCols int) {
	d := i64s(desc, descLen)
	return int(d[descNodeCols]), int(d[descEdgeCols])
}

// splitStarts views the packed per-node start probabilities at addr as one
// slice per graph; addr 0 means all ones (nil).
func splitStarts(addr uintptr, gs []*graph.Graph) [][]float64 {
	if addr == 0 {
		return nil
	}
	total := 0
	for _, g := range gs {
		total += g.N
	}
	all := f64s(addr, total)
	out := make([][]float64, len(gs))
	off := 0
	for i, g := range gs {
		out[i] = all[off : off+g.N : off+g.N]
		off += g.N
	}
	return out
}

// mgkCall holds the decoded arguments shared by the Marginalized* functions.
type mgkCall struct {
	X, Y   []*graph.Graph
	sX, sY [][]float64
	opt    mgk.Options
}

// readMGK decodes batches, start probabilities and kernels. When symmetric,
// descY and startY are ignored and X is used on both sides.
func readMGK(descX, descY uintptr, symmetric bool, nodeSpec, edgeSpec string, q float64, lmin int,
	startX, startY uintptr, tol float64, maxIter, nJobs int) (*mgkCall, error) {
	c := &mgkCall{}
	var err error
	if c.X, err = readBatch(descX); err != nil {
		return nil, fmt.Errorf("X: %w", err)
	}
	nc, ec := descCols(descX)
	c.sX = splitStarts(startX, c.X)
	if symmetric {
		c.Y, c.sY = c.X, c.sX
	} else {
		if c.Y, err = readBatch(descY); err != nil {
			return nil, fmt.Errorf("Y: %w", err)
		}
		ncY, ecY := descCols(descY)
		nc, ec = min(nc, ncY), min(ec, ecY)
		c.sY = splitStarts(startY, c.Y)
	}
	nk, err := readKernel("node kernel", nodeSpec, nc)
	if err != nil {
		return nil, err
	}
	ek, err := readKernel("edge kernel", edgeSpec, ec)
	if err != nil {
		return nil, err
	}
	c.opt = mgk.Options{NodeKernel: nk, EdgeKernel: ek, Q: q, Lmin: lmin, Tol: tol, MaxIter: maxIter, NJobs: nJobs}
	return c, nil
}

// unconvergedMessage describes unconverged solves for a Python warning: up to
// maxReported pairs with residual and iterations, and the total count.
func unconvergedMessage(bad []mgk.Unconverged, opt mgk.Options) string {
	if len(bad) == 0 {
		return ""
	}
	tol, maxIter := opt.Tol, opt.MaxIter
	if tol == 0 {
		tol = mgk.DefaultTol
	}
	if maxIter == 0 {
		maxIter = mgk.DefaultMaxIter
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d solve(s) did not reach the tolerance %g within %d iterations (raise maxiter or tol, or check that the base kernels are at most 1): ", len(bad), tol, maxIter)
	for k, u := range bad[:min(len(bad), maxReported)] {
		if k > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "pair (%d, %d) residual %.3g after %d iterations", u.I, u.J, u.Residual, u.Iterations)
	}
	if len(bad) > maxReported {
		fmt.Fprintf(&b, "; and %d more", len(bad)-maxReported)
	}
	return b.String()
}

func packedNodes(gs []*graph.Graph) int {
	n := 0
	for _, g := range gs {
		n += g.N
	}
	return n
}

// outBuffer views the float64 result buffer at addr, which must be given
// whenever there is something to write.
func outBuffer(addr uintptr, n int, what string) ([]float64, error) {
	if addr == 0 && n > 0 {
		return nil, fmt.Errorf("%s: null output buffer", what)
	}
	return f64s(addr, n), nil
}

// MarginalizedGram computes the marginalized graph kernel matrix K(X, Y).
// descX/descY are batch descriptors (docs/abi.md); when symmetric, descY is
// ignored and X is used twice. startX/startY: addresses of float64 arrays with
// one start probability per packed node (ΣnX, ΣnY); 0 means all ones.
// out: float64[len(X)*len(Y)]; iters: int32[len(X)*len(Y)] (0 to skip).
// tol = 0 and maxIter = 0 select the defaults; nJobs <= 0 uses all cores.
// Returns "" when every solve converged, else a message naming up to 10
// unconverged pairs (indices, residual, iterations) and the total count.
func MarginalizedGram(descX, descY uintptr, symmetric bool, nodeSpec, edgeSpec string, q float64, lmin int,
	startX, startY uintptr, tol float64, maxIter, nJobs int, out, iters uintptr) (msg string, err error) {
	defer guard(&err)
	c, err := readMGK(descX, descY, symmetric, nodeSpec, edgeSpec, q, lmin, startX, startY, tol, maxIter, nJobs)
	if err != nil {
		return "", err
	}
	n := len(c.X) * len(c.Y)
	K, err := outBuffer(out, n, "out")
	if err != nil {
		return "", err
	}
	bad, err := mgk.Gram(c.X, c.Y, c.sX, c.sY, symmetric, c.opt, K, i32s(iters, n))
	if err != nil {
		return "", err
	}
	return unconvergedMessage(bad, c.opt), nil
}

// MarginalizedDiag computes K(X[i], X[i]) into out: float64[len(X)]. The other
// arguments are as in MarginalizedGram.
func MarginalizedDiag(descX uintptr, nodeSpec, edgeSpec string, q float64, lmin int, startX uintptr,
	tol float64, maxIter, nJobs int, out uintptr) (msg string, err error) {
	defer guard(&err)
	c, err := readMGK(descX, 0, true, nodeSpec, edgeSpec, q, lmin, startX, 0, tol, maxIter, nJobs)
	if err != nil {
		return "", err
	}
	d, err := outBuffer(out, len(c.X), "out")
	if err != nil {
		return "", err
	}
	bad, err := mgk.Diag(c.X, c.sX, c.opt, d)
	if err != nil {
		return "", err
	}
	return unconvergedMessage(bad, c.opt), nil
}

// MarginalizedNodal computes the node-pair similarities p_i p'_i' x_(i,i')
// (minus the length-0 term with lmin = 1) into out: float64[ΣnX·ΣnY],
// row-major, nodes packed graph after graph. The other arguments are as in
// MarginalizedGram.
func MarginalizedNodal(descX, descY uintptr, symmetric bool, nodeSpec, edgeSpec string, q float64, lmin int,
	startX, startY uintptr, tol float64, maxIter, nJobs int, out uintptr) (msg string, err error) {
	defer guard(&err)
	c, err := readMGK(descX, descY, symmetric, nodeSpec, edgeSpec, q, lmin, startX, startY, tol, maxIter, nJobs)
	if err != nil {
		return "", err
	}
	R, err := outBuffer(out, packedNodes(c.X)*packedNodes(c.Y), "out")
	if err != nil {
		return "", err
	}
	bad, err := mgk.Nodal(c.X, c.Y, c.sX, c.sY, symmetric, c.opt, R)
	if err != nil {
		return "", err
	}
	return unconvergedMessage(bad, c.opt), nil
}

// MarginalizedNumParams returns the number of hyperparameters that
// MarginalizedGramGrad differentiates for these kernel expressions: 1 (q) plus
// the node kernel's plus the edge kernel's.
func MarginalizedNumParams(nodeSpec, edgeSpec string) (n int, err error) {
	defer guard(&err)
	nk, err := readKernel("node kernel", nodeSpec, 1<<30)
	if err != nil {
		return 0, err
	}
	ek, err := readKernel("edge kernel", edgeSpec, 1<<30)
	if err != nil {
		return 0, err
	}
	return mgk.NumParams(mgk.Options{NodeKernel: nk, EdgeKernel: ek}), nil
}

// MarginalizedGramGrad computes K(X, Y) as MarginalizedGram does and its
// gradient into outGrad: float64[len(X)*len(Y)*nParams], layout [i][j][param],
// with respect to the raw hyperparameters (q, then the node kernel's in
// depth-first leaf order, then the edge kernel's); see MarginalizedNumParams.
func MarginalizedGramGrad(descX, descY uintptr, symmetric bool, nodeSpec, edgeSpec string, q float64, lmin int,
	startX, startY uintptr, tol float64, maxIter, nJobs int, out, iters, outGrad uintptr) (msg string, err error) {
	defer guard(&err)
	c, err := readMGK(descX, descY, symmetric, nodeSpec, edgeSpec, q, lmin, startX, startY, tol, maxIter, nJobs)
	if err != nil {
		return "", err
	}
	n := len(c.X) * len(c.Y)
	K, err := outBuffer(out, n, "out")
	if err != nil {
		return "", err
	}
	G, err := outBuffer(outGrad, n*mgk.NumParams(c.opt), "outGrad")
	if err != nil {
		return "", err
	}
	bad, err := mgk.GramGrad(c.X, c.Y, c.sX, c.sY, symmetric, c.opt, K, G, i32s(iters, n))
	if err != nil {
		return "", err
	}
	return unconvergedMessage(bad, c.opt), nil
}
