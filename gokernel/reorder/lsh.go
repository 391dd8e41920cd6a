package reorder

import (
	"cmp"
	"slices"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// LSHOptions tunes LSH. Zero fields take the defaults shown.
type LSHOptions struct {
	// Hashes is the MinHash signature length (32).
	Hashes int
	// Bands is the number of LSH bands (16); it must divide Hashes. With r =
	// Hashes/Bands rows per band, a pair of Jaccard similarity s becomes a
	// candidate with probability 1 − (1 − s^r)^Bands: about 0.25 is the
	// similarity at which that is one half for the defaults (r = 2).
	Bands int
	// ClusterSize caps the number of rows in a cluster (8, one tile row).
	ClusterSize int
	// MaxBucket is the bucket size up to which every pair in a bucket becomes a
	// candidate (32); larger buckets only pair neighbours in node order, to stay
	// linear on hub-dominated graphs.
	MaxBucket int
	// Seed seeds the hash functions (1).
	Seed uint64
}

func (o *LSHOptions) defaults() {
	if o.Hashes <= 0 {
		o.Hashes = 32
	}
	if o.Bands <= 0 || o.Hashes%o.Bands != 0 {
		o.Bands = 16
		if o.Hashes%o.Bands != 0 {
			o.Bands = o.Hashes
		}
	}
	if o.ClusterSize <= 0 {
		o.ClusterSize = 8
	}
	if o.MaxBucket <= 1 {
		o.MaxBucket = 32
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// LSH returns the row-clustering order of Jiang et al. ("A Novel Data
// Transformation and Execution Strategy for Accelerating Sparse Matrix
// Multiplication on GPUs", PPoPP 2020), applied symmetrically to rows and
// columns: rows whose nonzero patterns are similar share tiles.
//
// Row v is the closed neighbourhood {v} ∪ N(v); including v makes adjacent nodes
// similar, not only nodes with common neighbours. MinHash signatures estimate the
// Jaccard similarity of rows, and LSH banding turns them into candidate pairs
// without comparing all pairs. Candidates are sorted by exact Jaccard similarity
// (ties by node index) and merged greedily with union-find while the merged
// cluster has at most ClusterSize rows. Clusters are then packed into tile rows
// of 8 by first-fit decreasing (ties by smallest node) and laid out bin by
// bin, full bins first, so that the clusters of full bins each lie in one tile
// row.
func LSH(g *graph.Graph, opt LSHOptions) []int {
	opt.defaults()
	n := g.N
	if n == 0 {
		return []int{}
	}
	ptr, adj := simpleAdj(g)
	// Closed neighbourhoods, sorted.
	sptr := make([]int32, n+1)
	sets := make([]int32, 0, len(adj)+n)
	for v := int32(0); int(v) < n; v++ {
		row := adj[ptr[v]:ptr[v+1]]
		i, _ := slices.BinarySearch(row, v)
		sets = append(sets, row[:i]...)
		sets = append(sets, v)
		sets = append(sets, row[i:]...)
		sptr[v+1] = int32(len(sets))
	}
	set := func(v int32) []int32 { return sets[sptr[v]:sptr[v+1]] }

	h := opt.Hashes
	seeds := make([]uint64, h)
	for k := range seeds {
		seeds[k] = mix64(opt.Seed*0x9e3779b97f4a7c15 + uint64(k))
	}
	sig := make([]uint64, n*h)
	for v := int32(0); int(v) < n; v++ {
		s := sig[int(v)*h : int(v+1)*h]
		for k := range s {
			s[k] = ^uint64(0)
		}
		for _, x := range set(v) {
			for k, sd := range seeds {
				if y := mix64(uint64(x) ^ sd); y < s[k] {
					s[k] = y
				}
			}
		}
	}

	// Banding: sort (band key, node) and pair nodes with equal keys.
	r := h / opt.Bands
	type keyed struct {
		key uint64
		v   int32
	}
	ks := make([]keyed, n)
	var cand [][2]int32
	for b := 0; b < opt.Bands; b++ {
		for v := 0; v < n; v++ {
			key := uint64(b) + 0x632be59bd9b4e019
			for _, x := range sig[v*h+b*r : v*h+(b+1)*r] {
				key = mix64(key ^ x)
			}
			ks[v] = keyed{key, int32(v)}
		}
		slices.SortFunc(ks, func(a, b keyed) int {
			if c := cmp.Compare(a.key, b.key); c != 0 {
				return c
			}
			return cmp.Compare(a.v, b.v)
		})
		for i := 0; i < n; {
			j := i + 1
			for j < n && ks[j].key == ks[i].key {
				j++
			}
			if j-i <= opt.MaxBucket {
				for a := i; a < j; a++ {
					for c := a + 1; c < j; c++ {
						cand = append(cand, [2]int32{ks[a].v, ks[c].v})
					}
				}
			} else {
				for a := i; a+1 < j; a++ {
					cand = append(cand, [2]int32{ks[a].v, ks[a+1].v})
				}
			}
			i = j
		}
	}
	slices.SortFunc(cand, func(a, b [2]int32) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	cand = slices.Compact(cand)

	type scored struct {
		sim  float64
		u, v int32
	}
	pairs := make([]scored, 0, len(cand))
	for _, c := range cand {
		if s := jaccard(set(c[0]), set(c[1])); s > 0 {
			pairs = append(pairs, scored{s, c[0], c[1]})
		}
	}
	slices.SortFunc(pairs, func(a, b scored) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		if c := cmp.Compare(a.u, b.u); c != 0 {
			return c
		}
		return cmp.Compare(a.v, b.v)
	})

	// Greedy clustering with a size cap.
	uf := newUnionFind(n)
	for _, p := range pairs {
		ru, rv := uf.find(p.u), uf.find(p.v)
		if ru != rv && int(uf.size[ru]+uf.size[rv]) <= opt.ClusterSize {
			uf.union(ru, rv)
		}
	}
	clusters := make(map[int32][]int32)
	var roots []int32
	for v := int32(0); int(v) < n; v++ {
		r := uf.find(v)
		if _, ok := clusters[r]; !ok {
			roots = append(roots, r)
		}
		clusters[r] = append(clusters[r], v)
	}
	// roots are in order of each cluster's smallest node; sort by size, stably.
	slices.SortStableFunc(roots, func(a, b int32) int { return cmp.Compare(len(clusters[b]), len(clusters[a])) })

	// First-fit decreasing into tile rows of 8.
	const bin = 8
	var bins [][]int32
	for _, rt := range roots {
		c := clusters[rt]
		placed := false
		for i := range bins {
			if len(bins[i])+len(c) <= bin {
				bins[i] = append(bins[i], c...)
				placed = true
				break
			}
		}
		if !placed {
			for len(c) > bin { // only when ClusterSize > 8
				bins = append(bins, append([]int32(nil), c[:bin]...))
				c = c[bin:]
			}
			bins = append(bins, append(make([]int32, 0, bin), c...))
		}
	}
	// Full bins first, each on a tile boundary. First-fit can leave several
	// bins short, and those after the first short one straddle tile
	// boundaries; emptying the last short bins into the earlier ones would
	// realign them but splits clusters, and measured more tiles on every TU
	// data set, so the short bins are laid out as they are.
	slices.SortStableFunc(bins, func(a, b []int32) int { return cmp.Compare(len(b), len(a)) })
	perm := make([]int, 0, n)
	for _, b := range bins {
		for _, v := range b {
			perm = append(perm, int(v))
		}
	}
	return perm
}

// jaccard returns |a∩b| / |a∪b| for sorted sets.
func jaccard(a, b []int32) float64 {
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// mix64 is the splitmix64 finalizer, a fast bijective hash of 64-bit words.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// unionFind is a disjoint-set forest with union by size and path halving.
type unionFind struct{ parent, size []int32 }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n), size: make([]int32, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = int32(i), 1
	}
	return u
}

func (u *unionFind) find(x int32) int32 {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

// union joins the trees of roots a and b.
func (u *unionFind) union(a, b int32) {
	if u.size[a] < u.size[b] || (u.size[a] == u.size[b] && b < a) {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
}
