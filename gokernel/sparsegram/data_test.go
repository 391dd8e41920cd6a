package sparsegram

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// fromRows builds a Features from per-row maps of column → count.
func fromRows(numCols int, rows []map[int32]uint32) *Features {
	f := &Features{NumCols: numCols, Ptr: make([]int, 1, len(rows)+1)}
	for _, r := range rows {
		cols := make([]int32, 0, len(r))
		for c := range r {
			cols = append(cols, c)
		}
		slices.Sort(cols)
		for _, c := range cols {
			f.Col = append(f.Col, c)
			f.Val = append(f.Val, r[c])
		}
		f.Ptr = append(f.Ptr, len(f.Col))
	}
	return f
}

// zipfFeatures returns rows×cols counts whose column frequencies are
// heavy-tailed: column c is picked with probability ∝ (c+1)^-alpha, perRow
// picks per row on average (some rows stay empty when emptyFrac > 0). Counts
// are 1..maxCount, with a few of bigCount when bigCount > 0.
func zipfFeatures(rng *rand.Rand, rows, cols int, perRow float64, alpha float64, maxCount uint32, emptyFrac float64, bigCount uint32) *Features {
	cdf := make([]float64, cols)
	s := 0.0
	for c := range cdf {
		s += math.Pow(float64(c+1), -alpha)
		cdf[c] = s
	}
	rs := make([]map[int32]uint32, rows)
	for i := range rs {
		rs[i] = map[int32]uint32{}
		if rng.Float64() < emptyFrac || cols == 0 {
			continue
		}
		k := int(rng.ExpFloat64() * perRow)
		for range k {
			c, _ := slices.BinarySearch(cdf, rng.Float64()*s)
			c = min(c, cols-1)
			v := 1 + uint32(rng.IntN(int(maxCount)))
			if bigCount > 0 && rng.IntN(50) == 0 {
				v = bigCount - uint32(rng.IntN(3))
			}
			rs[i][int32(c)] += v
		}
	}
	return fromRows(cols, rs)
}

// nci1Like returns a synthetic matrix with the statistics of the WL (h = 5)
// features of NCI1: 4,100 rows, about 130,000 columns, 430,000 nonzeros and
// Σ_f n_f² ≈ 1.8·10⁸ (n_f = rows holding feature f). Each row is a graph of
// WL iterations 0..5: iteration t draws its labels from a vocabulary that
// grows with t and is heavy-tailed, so the first iterations' labels are in
// most rows with counts up to ~25 while the last ones are nearly unique.
func nci1Like(seed uint64) *Features {
	const rows = 4100
	rng := rand.New(rand.NewPCG(seed, 7))
	// Vocabulary per iteration, Zipf exponent, labels per row.
	type iter struct {
		vocab int
		alpha float64
		draws int
	}
	its := []iter{{37, 1.4, 14}, {300, 1.1, 22}, {4000, 1.0, 22}, {25000, 0.75, 23}, {45000, 0.4, 23}, {56000, 0.1, 23}}
	rs := make([]map[int32]uint32, rows)
	for i := range rs {
		rs[i] = map[int32]uint32{}
	}
	base := int32(0)
	for _, it := range its {
		cdf := make([]float64, it.vocab)
		s := 0.0
		for c := range cdf {
			s += math.Pow(float64(c+1), -it.alpha)
			cdf[c] = s
		}
		for i := range rs {
			n := it.draws/2 + rng.IntN(it.draws)
			for range n {
				c, _ := slices.BinarySearch(cdf, rng.Float64()*s)
				rs[i][base+int32(min(c, it.vocab-1))]++
			}
		}
		base += int32(it.vocab)
	}
	return fromRows(int(base), rs)
}

// stats returns nonzeros, columns in use and Σ_f n_f².
func stats(f *Features) (nnz, used int, sq float64, maxVal uint32) {
	n := make([]int, f.NumCols)
	for k, c := range f.Col {
		n[c]++
		maxVal = max(maxVal, f.Val[k])
	}
	for _, v := range n {
		if v > 0 {
			used++
		}
		sq += float64(v) * float64(v)
	}
	return len(f.Col), used, sq, maxVal
}

var nci1 struct {
	once sync.Once
	f    *Features
	err  error
}

// nci1WL returns the WL subtree features of NCI1 (h = 5, the labels of all
// iterations in one dictionary, as package wl will build them), or skips
// when the data set is absent.
func nci1WL(tb testing.TB) *Features {
	tb.Helper()
	f, err := nci1Features()
	if err != nil {
		tb.Skip(err)
	}
	return f
}

// nci1Features builds NCI1's WL features once, by plain WL relabelling: a
// node's new label is its (iteration, label, sorted neighbour labels).
func nci1Features() (*Features, error) {
	const h = 5
	nci1.once.Do(func() {
		ds, err := tudataset.Open("NCI1")
		if err != nil {
			nci1.err = err
			return
		}
		dict := map[string]int32{}
		id := func(key []byte) int32 {
			v, ok := dict[string(key)]
			if !ok {
				v = int32(len(dict))
				dict[string(key)] = v
			}
			return v
		}
		rows := make([]map[int32]uint32, len(ds.Graphs))
		labels := make([][]int32, len(ds.Graphs))
		for g, gr := range ds.Graphs {
			rows[g] = map[int32]uint32{}
			labels[g] = make([]int32, gr.N)
			for v := range gr.N {
				labels[g][v] = id([]byte{0, byte(gr.NodeFeat[v*gr.NodeCols])})
				rows[g][labels[g][v]]++
			}
		}
		var key []byte
		var nb []int32
		for it := 1; it <= h; it++ {
			for g, gr := range ds.Graphs {
				next := make([]int32, gr.N)
				for v := range gr.N {
					nb = nb[:0]
					for e := gr.RowPtr[v]; e < gr.RowPtr[v+1]; e++ {
						nb = append(nb, labels[g][gr.Col[e]])
					}
					slices.Sort(nb)
					key = append(key[:0], byte(it))
					for _, x := range append([]int32{labels[g][v]}, nb...) {
						key = append(key, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
					}
					next[v] = id(key)
					rows[g][next[v]]++
				}
				labels[g] = next
			}
		}
		nci1.f = fromRows(len(dict), rows)
	})
	return nci1.f, nci1.err
}

// TestNCI1Like checks that the synthetic benchmark data keeps the statistics
// it stands for (those of NCI1's WL features: 4,110 rows, 130,791 columns,
// 434,973 nonzeros, Σ n_f² = 1.83·10⁸).
func TestNCI1Like(t *testing.T) {
	f := nci1Like(1)
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	nnz, _, sq, _ := stats(f)
	if f.Rows() != 4100 || f.NumCols < 120_000 || f.NumCols > 140_000 ||
		nnz < 400_000 || nnz > 460_000 || sq < 1.6e8 || sq > 2.0e8 {
		t.Errorf("%d rows, %d columns, %d nonzeros, Σ n_f² = %.3g", f.Rows(), f.NumCols, nnz, sq)
	}
}

// unary expands every column f of counts into max_f binary columns, [x_f ≥ t]
// for t = 1..max_f, so that Σ_f min(x_f, y_f) = Σ_f Σ_t [x_f ≥ t][y_f ≥ t]:
// the SumMin Gram of f is the SumProduct Gram of unary(f).
func unary(f *Features) *Features {
	st := statsOf(f)
	base := make([]int32, f.NumCols+1)
	for c, m := range st.max {
		base[c+1] = base[c] + int32(m)
	}
	u := &Features{NumCols: int(base[f.NumCols]), Ptr: make([]int, 1, len(f.Ptr))}
	for r := 0; r < f.Rows(); r++ {
		for k := f.Ptr[r]; k < f.Ptr[r+1]; k++ {
			for t := range int32(f.Val[k]) {
				u.Col = append(u.Col, base[f.Col[k]]+t)
				u.Val = append(u.Val, 1)
			}
		}
		u.Ptr = append(u.Ptr, len(u.Col))
	}
	return u
}
