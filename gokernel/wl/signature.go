package wl

import (
	"slices"
)

// sortInts sorts s: by insertion for the short neighbour lists of most graphs
// (slices.Sort's set-up costs more there), else slices.Sort.
func sortInts(s []int32) {
	if len(s) > 16 {
		slices.Sort(s)
		return
	}
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i - 1
		for j >= 0 && s[j] > x {
			s[j+1] = s[j]
			j--
		}
		s[j+1] = x
	}
}

// sortPairs sorts the (a, b) pairs of s = [a0 b0 a1 b1 ...] lexicographically.
func sortPairs(s []int32) {
	n := len(s) / 2
	// Insertion sort: neighbour lists are short (molecules: ≤ 4–6 entries);
	// a long list falls back to a packed 64-bit sort.
	if n <= 16 {
		for i := 1; i < n; i++ {
			a, b := s[2*i], s[2*i+1]
			j := i - 1
			for j >= 0 && (s[2*j] > a || s[2*j] == a && s[2*j+1] > b) {
				s[2*j+2], s[2*j+3] = s[2*j], s[2*j+1]
				j--
			}
			s[2*j+2], s[2*j+3] = a, b
		}
		return
	}
	packed := make([]uint64, n)
	for i := range packed {
		packed[i] = uint64(uint32(s[2*i]))<<32 | uint64(uint32(s[2*i+1]))
	}
	slices.Sort(packed)
	for i, p := range packed {
		s[2*i], s[2*i+1] = int32(p>>32), int32(uint32(p))
	}
}

// sigKey is the bytes of a signature, a map key.
func sigKey(s []int32) string {
	b := make([]byte, 4*len(s))
	for i, x := range s {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return string(b)
}

// hashSig is a 64-bit hash of a signature (FNV-style mixing of whole words).
func hashSig(s []int32) uint64 {
	h := uint64(len(s)) * 0x9e3779b97f4a7c15
	for _, x := range s {
		h ^= uint64(uint32(x))
		h *= 0x100000001b3
		h ^= h >> 29
	}
	return h
}

// hashTable maps 64-bit hashes to labels by open addressing with linear
// probing (half the time of a Go map here); it grows at half load.
type hashTable struct {
	keys []uint64
	vals []int32 // -1: empty
	n    int
}

func newHashTable(expected int) *hashTable {
	size := 16
	for size < 2*expected {
		size *= 2
	}
	t := &hashTable{keys: make([]uint64, size), vals: make([]int32, size)}
	for i := range t.vals {
		t.vals[i] = -1
	}
	return t
}

// slot returns where h is, or the empty slot where it would go.
func (t *hashTable) slot(h uint64) int {
	mask := len(t.keys) - 1
	i := int(h>>32^h) & mask
	for t.vals[i] >= 0 && t.keys[i] != h {
		i = (i + 1) & mask
	}
	return i
}

func (t *hashTable) get(h uint64) (int32, bool) {
	i := t.slot(h)
	return t.vals[i], t.vals[i] >= 0
}

func (t *hashTable) put(h uint64, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		old := *t
		*t = *newHashTable(len(old.keys))
		for i, ov := range old.vals {
			if ov >= 0 {
				t.put(old.keys[i], ov)
			}
		}
	}
	i := t.slot(h)
	t.keys[i], t.vals[i] = h, v
	t.n++
}
