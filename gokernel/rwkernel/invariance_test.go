package rwkernel

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/graph/graphtest"
	"github.com/graphgram/graphgram/gokernel/tudataset/tudatasettest"
)

// manyLabels returns count random graphs (randomGraph) whose label column
// takes labels distinct values, so that node classes are many and numbered
// differently by every call.
func manyLabels(seed uint64, count, maxN, labels int) []*graph.Graph {
	r := rand.New(rand.NewPCG(seed, 5))
	gs := randomGraphs(seed, count, maxN, true)
	for k, g := range gs {
		nf := slices.Clone(g.NodeFeat)
		for u := 0; u < g.N; u++ {
			nf[u*g.NodeCols] = float64(r.IntN(labels))
		}
		gs[k] = graphtest.WithNodeFeat(g, nf)
	}
	return gs
}

// rankLabels returns copies of X and Y with each node label (column 0)
// replaced by 3 + 10·r, r its rank among the labels of X and Y together: an
// increasing recoding that depends on the call, as the Python side's coding of
// string labels by their rank among the call's labels does (there r itself;
// here one that differs from the labels even where the call has them all).
// Exact-match node kernels give the same values on the copies.
func rankLabels(X, Y []*graph.Graph) ([]*graph.Graph, []*graph.Graph) {
	var labels []float64
	for _, g := range slices.Concat(X, Y) {
		for u := 0; u < g.N; u++ {
			labels = append(labels, g.Node(u)[0])
		}
	}
	slices.Sort(labels)
	labels = slices.Compact(labels)
	recode := func(gs []*graph.Graph) []*graph.Graph {
		out := make([]*graph.Graph, len(gs))
		for k, g := range gs {
			nf := slices.Clone(g.NodeFeat)
			for u := 0; u < g.N; u++ {
				r, _ := slices.BinarySearch(labels, nf[u*g.NodeCols])
				nf[u*g.NodeCols] = float64(3 + 10*r)
			}
			out[k] = graphtest.WithNodeFeat(g, nf)
		}
		return out
	}
	return recode(X), recode(Y)
}

// TestValueIndependentOfCall: K(G, G') must be the same float64, bit for bit,
// in every call that has the pair: whichever side each graph is on, whatever
// else is in the call and in which order, with duplicates, symmetric or not,
// with any number of goroutines, with labels recoded for the call (in order).
// A call numbers node classes as they appear in it and meets a pair at
// whatever positions the pair has there; the calls below move every pair
// around against one symmetric call over the whole set and compare with ==,
// never with a tolerance.
func TestValueIndependentOfCall(t *testing.T) {
	for _, set := range []struct {
		name string
		gs   func(testing.TB) []*graph.Graph
		// kernels are the node kernels to try: MUTAG has only its label column.
		kernels []string
		// untabulated says that the whole set has too many node classes to
		// tabulate the node kernel and its subset call does not.
		untabulated bool
	}{
		{
			// The last graph is a copy of the first at other addresses: equal
			// hashes, the content compared in full, either orientation.
			name: "random",
			gs: func(testing.TB) []*graph.Graph {
				gs := manyLabels(11, 45, 12, 15)
				return append(gs, graphtest.WithNodeFeat(gs[0], nil))
			},
			kernels: []string{"none", "label", "float", "both"},
		},
		{
			// About 1200 distinct float features on sparse graphs: more node
			// classes than maxTable in the whole set, fewer in its parts, so
			// that calls differ in whether they tabulate the node kernel.
			name: "random-untabulated",
			gs: func(testing.TB) []*graph.Graph {
				r := rand.New(rand.NewPCG(12, 5))
				gs := make([]*graph.Graph, 24)
				for k := range gs {
					n := 40 + r.IntN(20)
					gs[k] = randomGraph(r, n, 3/float64(n), true)
				}
				return gs
			},
			kernels:     []string{"float"},
			untabulated: true,
		},
		{
			name: "MUTAG",
			gs: func(tb testing.TB) []*graph.Graph {
				return tudatasettest.Load(tb, "MUTAG").Graphs[:60]
			},
			kernels: []string{"none", "label"},
		},
	} {
		t.Run(set.name, func(t *testing.T) {
			gs := set.gs(t)
			n := len(gs)
			rho := maxRho(gs)
			perm := rand.New(rand.NewPCG(7, 8)).Perm(n)
			var every3, dups []int
			for i := 0; i < n; i += 3 {
				every3 = append(every3, i)
			}
			for _, i := range perm[:n/3] {
				dups = append(dups, i, i)
			}
			if set.untabulated {
				opt := Options{Lambda: 1, NodeKernel: nodeKernels["float"]}
				all, _ := newPlan(gs, n, opt)
				part, _ := newPlan(graphtest.Pick(gs, every3), len(every3), opt)
				if all.table != nil || part.table == nil {
					t.Fatalf("node kernel tabulated for the whole set: %t, for every third graph: %t; want false, true (maxTable = %d)", all.table != nil, part.table != nil, maxTable)
				}
			}
			for _, kname := range set.kernels {
				for _, o := range []struct {
					name string
					opt  Options
				}{
					{"geometric", Options{Lambda: 0.5 / (rho * rho)}},
					{"exponential", Options{Lambda: 0.2, Kind: Exponential}},
					{"p3", Options{Lambda: 0.3, Steps: 3}},
					{"geometric-grid", Options{Lambda: 0.5 / (rho * rho), GridProduct: true}},
				} {
					if kname == "none" && o.opt.GridProduct {
						continue
					}
					opt := o.opt
					opt.NodeKernel = nodeKernels[kname]
					opt.NJobs = 1
					name := kname + "/" + o.name
					ref := make([]float64, n*n)
					if err := Gram(gs, nil, true, opt, ref); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for _, c := range []struct {
						name      string
						x, y      []int
						symmetric bool
						njobs     int
						// ranked recodes the labels (rankLabels).
						ranked bool
					}{
						// k(X[40:60], X[:20]) against the block of k(X): every
						// pair changes sides.
						{name: "cross B×A", x: graphtest.Seq(2*n/3, n), y: graphtest.Seq(0, n/3), njobs: 2},
						{name: "cross A×B", x: graphtest.Seq(0, n/3), y: graphtest.Seq(2*n/3, n), njobs: 2},
						{name: "cross all×all", x: graphtest.Seq(0, n), y: graphtest.Seq(0, n), njobs: 2},
						{name: "cross reversed", x: graphtest.Seq(0, n/2), y: []int{5, 4, 3, 2, 1, 0}, njobs: 2},
						{name: "permuted", x: perm, symmetric: true, njobs: 2},
						{name: "subset", x: every3, symmetric: true, njobs: 2},
						{name: "duplicates", x: dups, symmetric: true, njobs: 2},
						{name: "cross duplicates", x: dups, y: perm[:n/2], njobs: 2},
						{name: "n_jobs 3", x: graphtest.Seq(0, n), symmetric: true, njobs: 3},
						{name: "cross B×A, labels ranked", x: graphtest.Seq(2*n/3, n), y: graphtest.Seq(0, n/3), njobs: 2, ranked: true},
						{name: "subset, labels ranked", x: every3, symmetric: true, njobs: 2, ranked: true},
					} {
						opt := opt
						opt.NJobs = c.njobs
						y := c.y
						if c.symmetric {
							y = c.x
						}
						X, Y := graphtest.Pick(gs, c.x), graphtest.Pick(gs, y)
						if c.ranked {
							X, Y = rankLabels(X, Y)
						}
						out := make([]float64, len(c.x)*len(y))
						if err := Gram(X, Y, c.symmetric, opt, out); err != nil {
							t.Fatalf("%s %s: %v", name, c.name, err)
						}
						var differ int
						var first string
						for a, i := range c.x {
							for b, j := range y {
								if got, want := out[a*len(y)+b], ref[i*n+j]; got != want {
									if differ == 0 {
										first = fmt.Sprintf("K(%d, %d) = %.17g, symmetric call over all has %.17g", i, j, got, want)
									}
									differ++
								}
							}
						}
						if differ > 0 {
							t.Errorf("%s %s: %d of %d entries differ from the symmetric call, first %s", name, c.name, differ, len(out), first)
						}
					}
					diag := make([]float64, len(perm))
					if err := Diag(graphtest.Pick(gs, perm), opt, diag); err != nil {
						t.Fatalf("%s diag: %v", name, err)
					}
					for a, i := range perm {
						if diag[a] != ref[i*n+i] {
							t.Errorf("%s: Diag of the permuted set gives K(%d, %d) = %.17g, Gram %.17g", name, i, i, diag[a], ref[i*n+i])
						}
					}
				}
			}
		})
	}
}

// TestContentRanks: contentRanks orders graphs as graph.CompareContent does,
// equal content (the same graph twice, or a copy) sharing a rank.
func TestContentRanks(t *testing.T) {
	gs := manyLabels(13, 30, 6, 4)
	gs = append(gs, gs[3], graphtest.WithNodeFeat(gs[3], nil), graphtest.WithNodeFeat(gs[7], nil))
	empty, _ := graph.New(0, nil, nil, nil, 2, nil, 0)
	gs = append(gs, empty, graphtest.WithNodeFeat(empty, nil))
	rank := contentRanks(gs)
	for i := range gs {
		for j := range gs {
			if got, want := cmp.Compare(rank[i], rank[j]), graph.CompareContent(gs[i], nil, gs[j], nil); got != want {
				t.Errorf("graphs %d and %d: ranks %d and %d, CompareContent %d", i, j, rank[i], rank[j], want)
			}
		}
	}
}
