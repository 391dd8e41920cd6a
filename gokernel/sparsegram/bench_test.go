package sparsegram

import (
	"fmt"
	"testing"
)

// Benchmarks run on the synthetic NCI1-like WL features (nci1Like) and, when
// ../shared/datasets/NCI1 is found, on NCI1's own WL (h = 5) features.

func benchGram(b *testing.B, X *Features, opt Options) {
	out := make([]float64, X.Rows()*X.Rows())
	b.ResetTimer()
	for b.Loop() {
		if err := Gram(X, nil, true, opt, out); err != nil {
			b.Fatal(err)
		}
	}
}

func benchData(b *testing.B) map[string]*Features {
	d := map[string]*Features{"synthetic": nci1Like(1)}
	if f, err := nci1Features(); err == nil {
		d["NCI1"] = f
	} else {
		b.Log("NCI1 skipped:", err)
	}
	return d
}

var semirings = map[string]Semiring{"SumProduct": SumProduct, "SumMin": SumMin}

// BenchmarkGram is the full symmetric Gram of 4,100 graphs with the default
// options (all cores), as the Python side calls it.
func BenchmarkGram(b *testing.B) {
	for dn, X := range benchData(b) {
		for sn, s := range semirings {
			b.Run(dn+"/"+sn, func(b *testing.B) { benchGram(b, X, Options{Semiring: s}) })
		}
	}
}

// BenchmarkPanelWidth forces the panel width (densityCut's numbers were
// taken the same way, the widths interleaved to share the load changes).
func BenchmarkPanelWidth(b *testing.B) {
	for dn, X := range benchData(b) {
		for sn, s := range semirings {
			for _, F := range []int{0, 25, 50, 100, 150, 200} {
				b.Run(fmt.Sprintf("%s/%s/F=%d", dn, sn, F), func(b *testing.B) {
					benchGram(b, X, Options{Semiring: s, tune: tuning{panel: F, panelForced: true}})
				})
			}
		}
	}
}

// BenchmarkReference compares the merge reference with the engine on the
// first 1,000 rows (the reference takes seconds on all 4,100).
func BenchmarkReference(b *testing.B) {
	full := nci1Like(1)
	X := &Features{NumCols: full.NumCols, Ptr: full.Ptr[:1001], Col: full.Col[:full.Ptr[1000]], Val: full.Val[:full.Ptr[1000]]}
	out := make([]float64, 1000*1000)
	for sn, s := range semirings {
		b.Run(sn+"/reference", func(b *testing.B) {
			for b.Loop() {
				if err := referenceGram(X, X, true, Options{Semiring: s}, out); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sn+"/engine", func(b *testing.B) { benchGram(b, X, Options{Semiring: s}) })
	}
}

// BenchmarkSumMinUnary compares the SumMin Gram with the SumProduct Gram of
// the unary expansion (min(a, b) = Σ_t [a ≥ t][b ≥ t]), which has the same
// values, to see whether a min-add panel kernel is worth its own code.
func BenchmarkSumMinUnary(b *testing.B) {
	for dn, X := range benchData(b) {
		b.Run(dn+"/min-add", func(b *testing.B) { benchGram(b, X, Options{Semiring: SumMin}) })
		U := unary(X)
		b.Run(dn+"/unary", func(b *testing.B) { benchGram(b, U, Options{Semiring: SumProduct}) })
	}
}
