package rwkernel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// rwGraph is what one graph contributes to every pair, computed once.
type rwGraph struct {
	n     int
	loops bool    // has a self-loop (A has diagonal entries)
	rho   float64 // spectral radius of A
	// Unlabeled infinite series: eigenvalues e_a of A and weights c_a = (q_a·1)²,
	// only those with c_a > 0 (eigenvectors orthogonal to 1 never contribute).
	eig, c []float64
	// Unlabeled truncated series: walk counts 1ᵀA^k1 for k = 0..p.
	walks []float64
}

// spectralCutoff drops eigenvectors with (q·1)² below it times n: their weight is
// rounding noise (the exact value is 0 for eigenvectors orthogonal to 1, which
// symmetric molecules have many of), and dropping them changes K by less than
// 1e-15 relative.
const spectralCutoff = 1e-16

// prepGraph computes graph i's spectrum, spectral radius or walk counts, as the
// kernel needs.
func (p *plan) prepGraph(i int) error {
	g := p.graphs[i]
	r := &p.rw[i]
	r.n = g.N
	for e := range g.EdgeU {
		r.loops = r.loops || g.EdgeU[e] == g.EdgeV[e]
	}
	if g.N == 0 {
		r.walks = make([]float64, len(p.mu))
		return nil
	}
	if p.unlabeled && p.opt.Steps > 0 {
		// Walk counts need no spectrum and are exact: 1ᵀA^k1 by repeated
		// sparse products.
		r.walks = make([]float64, p.opt.Steps+1)
		v, w := make([]float64, g.N), make([]float64, g.N)
		for k := range v {
			v[k] = 1
		}
		for k := 0; k <= p.opt.Steps; k++ {
			s := 0.0
			for _, x := range v {
				s += x
			}
			r.walks[k] = s
			if k == p.opt.Steps {
				break
			}
			for a := 0; a < g.N; a++ {
				t := 0.0
				for e := g.RowPtr[a]; e < g.RowPtr[a+1]; e++ {
					t += g.Val[e] * v[g.Col[e]]
				}
				w[a] = t
			}
			v, w = w, v
		}
		return nil
	}
	needRho := p.opt.Kind == Geometric && p.opt.Steps == 0
	if !p.unlabeled {
		if needRho {
			rho, err := spectralRadius(g.Dense(), g.N)
			if err != nil {
				return err
			}
			r.rho = rho
		} else {
			// Exponential and truncated labeled sums only need a bound on ρ, to
			// scale the Taylor series: the largest absolute row sum.
			r.rho = maxRowSum(g.Dense(), g.N)
		}
		return nil
	}
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(g.N, g.Dense()), true) {
		return fmt.Errorf("the eigendecomposition of the adjacency matrix did not converge")
	}
	vals := es.Values(nil)
	q := es.RawQ()
	for a, e := range vals {
		s := 0.0
		for k := 0; k < g.N; k++ {
			s += q.At(k, a)
		}
		r.rho = max(r.rho, math.Abs(e))
		if c := s * s; c > spectralCutoff*float64(g.N) {
			r.eig, r.c = append(r.eig, e), append(r.c, c)
		}
	}
	return nil
}

// spectralRadius returns the largest absolute eigenvalue of the symmetric n×n
// matrix a (row-major).
func spectralRadius(a []float64, n int) (float64, error) {
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(n, a), false) {
		return 0, fmt.Errorf("the eigenvalues of the adjacency matrix did not converge")
	}
	rho := 0.0
	for _, e := range es.RawValues() {
		rho = max(rho, math.Abs(e))
	}
	return rho, nil
}

// maxRowSum returns max_i Σ_j |a_ij|, an upper bound on the spectral radius.
func maxRowSum(a []float64, n int) float64 {
	m := 0.0
	for i := 0; i < n; i++ {
		s := 0.0
		for _, x := range a[i*n : (i+1)*n] {
			s += math.Abs(x)
		}
		m = max(m, s)
	}
	return m
}

// unlabeledPair evaluates K for W× = A ⊗ A' (λ already scaled for a constant node
// kernel): Σ_k μ_k w_k w'_k for truncated sums, since 1ᵀ(A⊗A')^k1 = (1ᵀA^k1)(1ᵀA'^k1);
// otherwise the spectral sum Σ_ab c_a c'_b f(λ e_a e'_b), with f(x) = 1/(1−x) or e^x.
// The spectral sum is not symmetric in i and j in floating point: pair orients
// them.
func (p *plan) unlabeledPair(i, j int) float64 {
	a, b := &p.rw[i], &p.rw[j]
	if a.n == 0 || b.n == 0 {
		return 0
	}
	if p.opt.Steps > 0 {
		s := 0.0
		for k, m := range p.mu {
			// w_k·w'_k first: the product commutes exactly, so the sum is the
			// same in either orientation and newPlan does not order graphs.
			s += m * (a.walks[k] * b.walks[k])
		}
		return s
	}
	lam := p.lambda
	s := 0.0
	if p.opt.Kind == Exponential {
		for x, ea := range a.eig {
			t := 0.0
			le := lam * ea
			for y, eb := range b.eig {
				t += b.c[y] * math.Exp(le*eb)
			}
			s += a.c[x] * t
		}
		return s
	}
	for x, ea := range a.eig {
		t := 0.0
		le := lam * ea
		for y, eb := range b.eig {
			t += b.c[y] / (1 - le*eb)
		}
		s += a.c[x] * t
	}
	return s
}
