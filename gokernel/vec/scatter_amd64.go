//go:build amd64 && !purego

package vec

// The scatters are written in assembly (scatter_amd64.s, SSE2, which every
// amd64 CPU has): Go's bounds check on each of an update's four indexed
// accesses, and the register spills of the archsimd version, made the loop
// instruction-bound; in assembly it runs at about the rate of its loads and
// stores, and the two-column scatter costs what the one-column one does.
// Each update is a multiplication then an addition, rounded separately, as in
// the Go versions.

//go:noescape
func scatterAsm(acc, x, c []float64, ends []uint64)

//go:noescape
func scatter2Asm(acc, x [][2]float64, c []float64, ends []uint64)
