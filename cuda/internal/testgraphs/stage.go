package testgraphs

import "github.com/graphgram/graphgram/cuda/layout"

// StageBytes mirrors src/mgk.cuh's stage_pair_bytes: the dynamic shared
// memory (bytes, a multiple of 16) that staging the octiles of the pair
// (X[i], Y[j]) takes with valueBytes-byte weights (8 for float64, 4 for
// float32). Tests pick ggc_mgk_options.stage_limit with it so that some pairs
// of a call are staged and others are not, and check which were.
func StageBytes(X *layout.Graphs, i int, Y *layout.Graphs, j int, valueBytes int64) int64 {
	one := func(L *layout.Graphs, k int) int64 {
		d := L.Desc[k*layout.DescFields:]
		nt := d[layout.DescNT]
		t0, t1 := L.TilePtr[d[layout.DescTilePtr0]], L.TilePtr[d[layout.DescTilePtr0]+nt]
		tiles, nnz := int64(t1-t0), int64(L.NzPtr[t1]-L.NzPtr[t0])
		return 8*tiles + valueBytes*nnz + 4*((nt+1)+tiles+(tiles+1)+nnz) + nnz
	}
	return (one(X, i) + one(Y, j) + 15) &^ 15
}
