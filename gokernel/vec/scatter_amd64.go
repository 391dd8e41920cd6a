//go:build amd64 && !purego

package vec

// Scatter2 is written in assembly (scatter_amd64.s, SSE2, which every amd64
// CPU has): the archsimd version, with Go's bounds check on each of an
// update's four indexed accesses and its register spills, cost twice the
// one-column scalar loop; in assembly it costs about what that loop does.
// (The one-column loop in assembly, called once per table row, was slower
// than mgk's inlined Go loop.) Each update is a multiplication then an
// addition, rounded separately, as in the Go versions.

//go:noescape
func scatter2Asm(acc, x [][2]float64, c []float64, ends []uint64)
