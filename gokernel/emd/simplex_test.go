package emd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// checkTree verifies the simplex's tree invariants: parent and pred agree, the
// thread is a preorder of the tree with rthread its inverse, subtree sizes and
// last successors are right, every tree arc has zero reduced cost (up to tol)
// and every real arc off the tree carries no flow.
func checkTree[T Number](x *simplex[T], cost []T) error {
	v := x.root + 1
	if x.parent[x.root] != -1 {
		return fmt.Errorf("root has parent %d", x.parent[x.root])
	}
	children := make([][]int, v)
	for u := 0; u < x.root; u++ {
		p := int(x.parent[u])
		children[p] = append(children[p], u)
		s, t := x.ends(int(x.pred[u]))
		if x.up[u] && (s != u || t != p) || !x.up[u] && (s != p || t != u) {
			return fmt.Errorf("node %d: pred arc %d (%d→%d) does not join it to its parent %d (up %v)", u, x.pred[u], s, t, p, x.up[u])
		}
		e := int(x.pred[u])
		if e < len(x.inTree) && !x.inTree[e] {
			return fmt.Errorf("node %d: pred arc %d not marked in the tree", u, e)
		}
		if d := float64(x.arcCost(cost, e) + x.pi[s] - x.pi[t]); math.Abs(d) > 1e-9 {
			return fmt.Errorf("tree arc %d has reduced cost %v", e, d)
		}
	}
	// Preorder: a subtree occupies succ consecutive thread positions from its node.
	order := []int{}
	for u, k := x.root, 0; k < v; k++ {
		order = append(order, u)
		if int(x.rthread[x.thread[u]]) != u {
			return fmt.Errorf("rthread[thread[%d]] = %d", u, x.rthread[x.thread[u]])
		}
		u = int(x.thread[u])
	}
	if int(x.thread[order[v-1]]) != x.root {
		return fmt.Errorf("thread is not one cycle")
	}
	pos := make([]int, v)
	for k, u := range order {
		pos[u] = k
	}
	var size func(u int) int
	size = func(u int) int {
		s := 1
		for _, c := range children[u] {
			s += size(c)
		}
		return s
	}
	for u := 0; u < v; u++ {
		s := size(u)
		if int(x.succ[u]) != s {
			return fmt.Errorf("succ[%d] = %d, subtree has %d", u, x.succ[u], s)
		}
		if pos[u]+s > v || int(x.last[u]) != order[pos[u]+s-1] {
			return fmt.Errorf("last[%d] = %d", u, x.last[u])
		}
		for k := pos[u]; k < pos[u]+s; k++ {
			w := order[k]
			for w != u && w != -1 {
				w = int(x.parent[w])
			}
			if w != u {
				return fmt.Errorf("thread position %d (node %d) in %d's range is not its descendant", k, order[k], u)
			}
		}
	}
	inTree := 0
	for e, t := range x.inTree[:x.n*x.m] {
		if t {
			inTree++
		} else if x.flow[e] != 0 {
			return fmt.Errorf("non-tree arc %d carries %d", e, x.flow[e])
		}
	}
	return nil
}

// solveChecked runs the simplex with the tree checked after every pivot.
func solveChecked[T Number](t *testing.T, x *simplex[T], cost []T, a, b []int64) {
	t.Helper()
	// The same steps as solve, with checks.
	if !x.solve(cost, a, b, 0) { // sets up, then gives up at once: the initial tree
		if err := checkTree(x, cost); err != nil {
			t.Fatalf("initial tree: %v", err)
		}
		for it := 0; it < 100000; it++ {
			in := x.price(cost)
			if in < 0 {
				return
			}
			x.pivot(cost, in)
			if err := checkTree(x, cost); err != nil {
				t.Fatalf("pivot %d (arc %d): %v", it, in, err)
			}
		}
		t.Fatal("no convergence")
	}
}

// againstSSP solves a problem by successive shortest paths and, with the
// tree checked after every pivot, by the simplex; it returns the simplex's
// value, SSP's, and the simplex's Solver (holding its flow).
func againstSSP(t *testing.T, cost []float64, a, b []int64) (got, want float64, ns *Solver) {
	t.Helper()
	ref := Solver{method: ssp}
	want, err := ref.TransportFloat(cost, a, b)
	if err != nil {
		t.Fatal(err)
	}
	ns = &Solver{method: netSimplex}
	solveChecked(t, &ns.fsx, cost, a, b)
	if got, err = ns.TransportFloat(cost, a, b); err != nil {
		t.Fatal(err)
	}
	return got, want, ns
}

// problem is a transport problem with integer masses.
type problem struct {
	cost []float64
	a, b []int64
}

func randomProblem(r *rand.Rand, n, m, levels int, maxMass int64) problem {
	p := problem{cost: randomCost(r, n, m, levels), a: make([]int64, n), b: make([]int64, m)}
	// Random masses with equal totals: split a total into n and m parts.
	split := func(total int64, k int) []int64 {
		w := make([]int64, k)
		for i := range w {
			w[i] = 1
		}
		for rest := total - int64(k); rest > 0; rest-- {
			w[r.IntN(k)]++
		}
		return w
	}
	total := int64(max(n, m)) + r.Int64N(maxMass)
	p.a, p.b = split(total, n), split(total, m)
	return p
}

// TestSimplexAgainstSSP compares the network simplex with successive shortest
// paths on random problems: exactly for integer costs (including heavy ties,
// which make the bases degenerate), to rounding for float64 costs; the tree is
// checked after every pivot.
func TestSimplexAgainstSSP(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		n, m, levels int
		mass         int64
	}{{1, 1, 0, 1}, {1, 6, 3, 10}, {6, 1, 0, 10}, {2, 2, 1, 4}, {3, 5, 2, 20}, {5, 3, 0, 20}, {7, 7, 1, 7},
		{8, 8, 2, 64}, {10, 13, 0, 130}, {12, 9, 4, 50}, {20, 20, 3, 400}, {25, 31, 0, 775}} {
		for rep := 0; rep < 15; rep++ {
			p := randomProblem(r, tc.n, tc.m, tc.levels, tc.mass)
			got, want, ns := againstSSP(t, p.cost, p.a, p.b)
			if tc.levels > 0 && got != want || math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("%v rep %d: simplex %v, SSP %v", tc, rep, got, want)
			}
			if tc.levels > 0 {
				ic := make([]int64, len(p.cost))
				for k, c := range p.cost {
					ic[k] = int64(c)
				}
				solveChecked(t, &ns.isx, ic, p.a, p.b)
				ref := Solver{method: ssp}
				wi, _ := ref.Transport(ic, p.a, p.b)
				gi, err := ns.Transport(ic, p.a, p.b)
				if err != nil {
					t.Fatal(err)
				}
				if gi != wi {
					t.Errorf("%v rep %d: integer simplex %d, SSP %d", tc, rep, gi, wi)
				}
			}
		}
	}
}

// TestSimplexDegenerate runs hand-made degenerate problems (every cost tied,
// zero costs, one row or column, masses whose partial sums coincide, huge
// masses) through both methods, checking the flow's feasibility and
// optimality (no negative residual cycle) and the value against SSP.
func TestSimplexDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cost []float64
		a, b []int64
	}{
		{"all tied", []float64{2, 2, 2, 2, 2, 2, 2, 2, 2}, []int64{3, 3, 3}, []int64{3, 3, 3}},
		{"zero costs", []float64{0, 0, 0, 0, 0, 0}, []int64{1, 5}, []int64{2, 2, 2}},
		{"one row", []float64{3, 1, 2, 5}, []int64{10}, []int64{1, 2, 3, 4}},
		{"one column", []float64{3, 1, 2, 5}, []int64{1, 2, 3, 4}, []int64{10}},
		{"coinciding partial sums", []float64{1, 2, 3, 2, 1, 2, 3, 2, 1, 1, 1, 1}, []int64{2, 2, 2, 2}, []int64{4, 2, 2}},
		{"tied diagonal", []float64{0, 1, 1, 1, 0, 1, 1, 1, 0}, []int64{1, 1, 1}, []int64{1, 1, 1}},
		{"anti-diagonal ties", []float64{1, 1, 0, 1, 0, 1, 0, 1, 1}, []int64{7, 7, 7}, []int64{7, 7, 7}},
		{"huge masses", []float64{0.5, 0.25, 0.125, 1}, []int64{1 << 39, 1 << 39}, []int64{1<<39 - 3, 1<<39 + 3}},
		{"tiny and large costs", []float64{1e-300, 1e12, 1e12, 1e-300}, []int64{4, 4}, []int64{4, 4}},
	} {
		got, want, ns := againstSSP(t, tc.cost, tc.a, tc.b)
		n, m := len(tc.a), len(tc.b)
		f := ns.Flow()
		rows, cols := make([]int64, n), make([]int64, m)
		for k, x := range f {
			if x < 0 {
				t.Fatalf("%s: negative flow", tc.name)
			}
			rows[k/m] += x
			cols[k%m] += x
		}
		for i := range rows {
			if rows[i] != tc.a[i] {
				t.Errorf("%s: row sums %v, want %v", tc.name, rows, tc.a)
			}
		}
		for j := range cols {
			if cols[j] != tc.b[j] {
				t.Errorf("%s: column sums %v, want %v", tc.name, cols, tc.b)
			}
		}
		if negativeCycle(tc.cost, f, n, m) {
			t.Errorf("%s: flow not optimal", tc.name)
		}
		if got != want {
			t.Errorf("%s: simplex %v, SSP %v", tc.name, got, want)
		}
	}
}

// TestSimplexReuse checks that a Solver's result does not depend on the
// problems it solved before (its working memory is reused).
func TestSimplexReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	p := randomProblem(r, 9, 11, 0, 99)
	var fresh Solver
	want, _ := fresh.TransportFloat(p.cost, p.a, p.b)
	wantFlow := append([]int64(nil), fresh.Flow()...)
	var s Solver
	for rep := 0; rep < 20; rep++ {
		q := randomProblem(r, 1+r.IntN(15), 1+r.IntN(15), r.IntN(3), 50)
		if _, err := s.TransportFloat(q.cost, q.a, q.b); err != nil {
			t.Fatal(err)
		}
		got, _ := s.TransportFloat(p.cost, p.a, p.b)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("after another problem: %v, fresh %v", got, want)
		}
		for k, x := range s.Flow() {
			if x != wantFlow[k] {
				t.Fatalf("after another problem: flow differs at %d", k)
			}
		}
	}
}
