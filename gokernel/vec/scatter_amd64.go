//go:build amd64 && !purego

package vec

// Blocks2.Scatter's rows are written in assembly (scatter_amd64.s, SSE2, which
// every amd64 CPU has): the archsimd version, with Go's bounds check on each
// of an update's four indexed accesses and its register spills, cost twice
// the one-column scalar loop; in assembly it costs about what that loop does.
// (The one-column loop in assembly, called once per table row, was slower
// than mgk's inlined Go loop.) Each update is a multiplication then an
// addition, rounded separately, as in the Go versions. It takes pointers
// rather than slices: its arguments go through the stack, and a block has
// about one row per sweep, so the call is a fair part of a small molecule's
// scatter.
const haveScatterAsm = true

// scatter2Asm is Scatter2Go on m ≥ 1 edges, unchecked: acc, x, c and ab
// point at the first entries of vectors that every endpoint indexes, of a
// row of m weights, and of m packed endpoints.
//
//go:noescape
func scatter2Asm(acc, x *[2]float64, c *float64, ab *uint64, m int)
