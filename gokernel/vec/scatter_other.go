//go:build !amd64 || purego

package vec

func scatter2Asm(acc, x [][2]float64, c []float64, ab []uint64) {
	Scatter2Go(acc, x, c, Ends{ab: ab})
}
