//go:build !amd64 || purego

package vec

const haveScatterAsm = false

func scatter2Asm(acc, x *[2]float64, c *float64, ab *uint64, m int) {
	panic("vec: no assembly scatter in this build")
}
