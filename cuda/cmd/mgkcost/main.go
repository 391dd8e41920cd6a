// Command mgkcost counts what the CUDA marginalized-kernel solver does for a
// set of graphs, without a GPU: per matrix-vector product of the product
// graph, the octile tile pairs its warps visit, the nonzero products among
// them, the input words they load, the output blocks and the block-wide
// barriers; per CG solve the iterations (the CPU's Jacobi solver on the
// device's system, against the CPU's own default solver); per launch the
// blocks busy against the device's block slots. Each count is taken in the
// node order of the graphs as given, in the order the CPU solver packs them
// (octile.PackReordered) and in the device's (cuda.RenumberForDevice: the
// colour-refinement quotients, renumbered where that pays), with the host's
// time to pack them.
//
// The counts follow the kernels of cuda/src/mgk.cuh: one block of
// MGK_THREADS threads solves one pair; each warp owns 8×8 output blocks and,
// for each, sweeps every tile pair of the two tile rows, loading the 64
// entries of x (and of the scale vector) that the B tile's columns select;
// a tile pair with at least DENSE_MIN_PAIRS nonzero pairs takes the dense
// primitive, the others the sparse one (one shared-memory atomic per nonzero
// pair). A CG iteration has five block-wide barriers (two block sums of two
// barriers each and the one after the update of p).
//
// Usage:
//
//	mgkcost [-data DIR] [-sets NCI1,PROTEINS] [-synthetic] [-iters N] [-json]
//
// -synthetic adds the GPU suite's two timing sets (TestGPUTimings: 200
// molecule-sized random graphs of 10-29 nodes, and 6 graphs of 300-550
// nodes with 1,200 edges). -iters N solves the pairs of the first N graphs
// of each set on the CPU to count CG iterations (0: none).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/graphgram/graphgram/cuda"
	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/octile"
	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// The device's constants (cuda/src/mgk.cuh, cuda/include/gg/tile.h).
const (
	denseMinPairs        = 256
	barriersPerIter      = 5
	blockSlotsPerSM      = 2   // MGK_MIN_BLOCKS
	referenceSMs         = 132 // an H100
	vectorWordsPerIter   = 15  // N-vectors read or written per CG iteration outside the product
	inputWordsPerEntry   = 2   // load_x reads scale[k] and x[k]
	entriesPerTilePair   = 64
	defaultIterGraphs    = 40
	syncwarpsPerTilePair = 2
)

// Order is the census of one set in one node order, summed over the upper
// triangle of its Gram matrix (diagonal included), per mat-vec.
type Order struct {
	Tiles          int     `json:"tiles"`
	NNZ            int     `json:"nnz"`
	NNZPerTile     float64 `json:"nnz_per_tile"`
	TilePairs      float64 `json:"tile_pairs"`
	DenseTilePairs float64 `json:"dense_tile_pairs"`
	NonzeroPairs   float64 `json:"nonzero_pairs"`
	// UsefulPerLoad is NonzeroPairs over the 64 input entries each tile
	// pair loads: the products a warp computes per entry it loads.
	UsefulPerLoad float64 `json:"useful_products_per_loaded_entry"`
	InputWords    float64 `json:"input_words"`
	OutputBlocks  float64 `json:"output_blocks"`
	Syncwarps     float64 `json:"syncwarps"`
	// LargestPairTilePairs is the tile pairs of the costliest pair: a launch
	// of few pairs takes as long as its largest.
	LargestPairTilePairs float64 `json:"largest_pair_tile_pairs"`
	// PackSeconds is the host's time to pack the set in this order (one
	// core): what a call pays before its upload.
	PackSeconds float64 `json:"pack_seconds"`
	// ProductNodes is Σ n·n' over the pairs of the graphs as packed (fewer
	// in the device's order, which solves quotients): each CG iteration
	// reads and writes vectors of that length.
	ProductNodes float64 `json:"product_nodes"`
}

// Iterations are CG counts over the pairs of the first graphs of a set.
type Iterations struct {
	Pairs int `json:"pairs"`
	// Device is the CPU's Jacobi-preconditioned CG on the quotient graphs
	// at the device's tolerance: the device's system.
	DeviceMean float64 `json:"device_mean"`
	DeviceMax  int32   `json:"device_max"`
	// CPU is the CPU's default solver (quotient graphs, symmetric
	// Gauss-Seidel where it pays) at the default accuracy.
	CPUMean float64 `json:"cpu_mean"`
	CPUMax  int32   `json:"cpu_max"`
}

// Set is one row of the report.
type Set struct {
	Name        string           `json:"name"`
	Graphs      int              `json:"graphs"`
	Pairs       float64          `json:"pairs"`
	MeanNodes   float64          `json:"mean_nodes"`
	MeanEdges   float64          `json:"mean_edges"`
	ProductN    float64          `json:"product_nodes"`
	Orders      map[string]Order `json:"orders"`
	BlocksBusy  float64          `json:"blocks_busy_first_launch"`
	BlockSlots  int              `json:"block_slots"`
	Iterations  *Iterations      `json:"iterations,omitempty"`
	VectorWords float64          `json:"vector_words_per_iteration"`
}

// pairSum returns Σ over the upper triangle (diagonal included) of f(i)·g(j)
// summed symmetrically: ((Σf)(Σg) + Σ f_i g_i) / 2 for f = g.
func pairSum(f []float64) float64 {
	var s, d float64
	for _, v := range f {
		s += v
		d += v * v
	}
	return (s*s + d) / 2
}

func census(pk []*octile.Graph) Order {
	var o Order
	n := len(pk)
	tiles, nnz, nt := make([]float64, n), make([]float64, n), make([]float64, n)
	// hist[i][c]: graph i's tiles with c nonzeros.
	hist := make([][65]float64, n)
	var total [65]float64
	nodes := make([]float64, n)
	for i, p := range pk {
		nodes[i] = float64(p.G.N)
		tiles[i], nnz[i], nt[i] = float64(p.NumTiles()), float64(p.NNZ()), float64(p.NT)
		o.Tiles += p.NumTiles()
		o.NNZ += p.NNZ()
		for t := range p.TileCol {
			c := int(p.NzPtr[t+1] - p.NzPtr[t])
			hist[i][c]++
			total[c]++
		}
	}
	o.NNZPerTile = float64(o.NNZ) / math.Max(1, float64(o.Tiles))
	o.TilePairs = pairSum(tiles)
	o.NonzeroPairs = pairSum(nnz)
	o.OutputBlocks = pairSum(nt)
	// Dense tile pairs: Σ over pairs of graphs of Σ_{a,b} [a·b ≥ 256] h_i[a] h_j[b],
	// symmetric: (total ⊗ total + Σ_i h_i ⊗ h_i) / 2.
	dense := func(h1, h2 *[65]float64) float64 {
		var s float64
		for a := 1; a <= 64; a++ {
			for b := 1; b <= 64; b++ {
				if a*b >= denseMinPairs {
					s += h1[a] * h2[b]
				}
			}
		}
		return s
	}
	o.DenseTilePairs = dense(&total, &total)
	for i := range hist {
		o.DenseTilePairs += dense(&hist[i], &hist[i])
	}
	o.DenseTilePairs /= 2
	o.ProductNodes = pairSum(nodes)
	o.InputWords = inputWordsPerEntry * entriesPerTilePair * o.TilePairs
	o.UsefulPerLoad = o.NonzeroPairs / (entriesPerTilePair * o.TilePairs)
	o.Syncwarps = syncwarpsPerTilePair * o.TilePairs
	for i := range pk {
		for j := i; j < n; j++ {
			o.LargestPairTilePairs = max(o.LargestPairTilePairs, tiles[i]*tiles[j])
		}
	}
	return o
}

// The node orders counted: the graphs as given (the device before issue
// #50), every graph renumbered (the CPU solver's packing) and the device's
// (cuda.RenumberForDevice, for the set's symmetric Gram matrix: quotients,
// renumbered).
var orders = []string{"as given", "all reordered", "device"}

func pack(gs []*graph.Graph, order string) ([]*octile.Graph, error) {
	if order == "device" {
		var err error
		if gs, err = cuda.RenumberForDevice(gs, len(gs)); err != nil {
			return nil, err
		}
	}
	out := make([]*octile.Graph, len(gs))
	for i, g := range gs {
		var err error
		if order == "all reordered" {
			out[i], err = octile.PackReordered(g)
		} else {
			out[i], err = octile.Pack(g)
		}
		if err != nil {
			return nil, fmt.Errorf("graph %d: %w", i, err)
		}
	}
	return out, nil
}

// iterations counts CG iterations over the pairs of gs (upper triangle) with
// label kernels (Kronecker deltas, h = 0.5) on feature column 0 where the
// graphs have one (the TU sets' labels; the synthetic sets' first label
// column), q = 0.05.
func iterations(gs []*graph.Graph) (*Iterations, error) {
	label := func(cols int) microkernel.Kernel {
		if cols == 0 {
			return &microkernel.Constant{C: 1}
		}
		return &microkernel.KroneckerDelta{H: 0.5, Col: 0, Width: 1}
	}
	opt := mgk.Options{NodeKernel: label(gs[0].NodeCols), EdgeKernel: label(gs[0].EdgeCols), Q: 0.05}
	n := len(gs)
	count := func(o mgk.Options) (float64, int32, error) {
		out, it := make([]float64, n*n), make([]int32, n*n)
		if _, err := mgk.Gram(gs, nil, nil, nil, true, o, out, it); err != nil {
			return 0, 0, err
		}
		var s float64
		var m int32
		var k int
		for i := range n {
			for j := i; j < n; j++ {
				v := it[i*n+j]
				if v < 0 {
					v = -v
				}
				s += float64(v)
				m = max(m, v)
				k++
			}
		}
		return s / float64(k), m, nil
	}
	r := &Iterations{Pairs: n * (n + 1) / 2}
	var err error
	if r.CPUMean, r.CPUMax, err = count(opt); err != nil {
		return nil, err
	}
	dev := opt
	dev.Solver = mgk.SolverJacobi // on the quotients, as the device
	resolved, _, err := mgk.Check(gs, nil, nil, nil, true, dev)
	if err != nil {
		return nil, err
	}
	dev.Tol = mgk.JacobiTolerance(resolved)
	if r.DeviceMean, r.DeviceMax, err = count(dev); err != nil {
		return nil, err
	}
	return r, nil
}

func measure(name string, gs []*graph.Graph, iterGraphs int) (Set, error) {
	s := Set{Name: name, Graphs: len(gs), Orders: map[string]Order{}, BlockSlots: blockSlotsPerSM * referenceSMs}
	n := float64(len(gs))
	s.Pairs = n * (n + 1) / 2
	nodes := make([]float64, len(gs))
	for i, g := range gs {
		s.MeanNodes += float64(g.N) / n
		s.MeanEdges += float64(g.NumEdges()) / n
		nodes[i] = float64(g.N)
	}
	s.ProductN = pairSum(nodes)
	s.VectorWords = vectorWordsPerIter * s.ProductN
	s.BlocksBusy = math.Min(s.Pairs, float64(s.BlockSlots))
	for _, o := range orders {
		t0 := time.Now()
		pk, err := pack(gs, o)
		if err != nil {
			return s, err
		}
		c := census(pk)
		c.PackSeconds = time.Since(t0).Seconds()
		s.Orders[o] = c
	}
	if iterGraphs > 0 {
		sub := gs[:min(iterGraphs, len(gs))]
		it, err := iterations(sub)
		if err != nil {
			return s, err
		}
		s.Iterations = it
	}
	return s, nil
}

// synthetic returns TestGPUTimings' two sets (cuda/gpu_test.go).
func synthetic() (mol, big []*graph.Graph) {
	rng := rand.New(rand.NewPCG(31, 32))
	for range 200 {
		n := 10 + rng.IntN(20)
		mol = append(mol, testgraphs.Random(rng, n, n+n/4, false))
	}
	for i := range 6 {
		big = append(big, testgraphs.Random(rng, 300+50*i, 1200, false))
	}
	return
}

func main() {
	defaultData, _ := tudataset.Dir()
	data := flag.String("data", defaultData, "directory holding the TU data sets (default: $"+tudataset.DirEnv+", or shared/datasets beside the repository)")
	sets := flag.String("sets", "NCI1", "comma-separated TU data set names")
	synth := flag.Bool("synthetic", true, "add the GPU suite's timing sets")
	iters := flag.Int("iters", defaultIterGraphs, "count CG iterations on the pairs of the first N graphs of each set (0: none)")
	asJSON := flag.Bool("json", false, "write JSON instead of a table")
	flag.Parse()
	var rows []Set
	add := func(name string, gs []*graph.Graph) {
		s, err := measure(name, gs, *iters)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mgkcost: %s: %v\n", name, err)
			os.Exit(1)
		}
		rows = append(rows, s)
	}
	if *synth {
		mol, big := synthetic()
		add("200 molecule-sized (10-29 nodes)", mol)
		add("6 large (300-550 nodes)", big)
	}
	for _, name := range strings.Split(*sets, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		ds, err := tudataset.Load(filepath.Join(*data, name), name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mgkcost: skipping %s: %v\n", name, err)
			continue
		}
		add(name, ds.Graphs)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	for _, s := range rows {
		fmt.Printf("%s: %d graphs (%.1f nodes, %.1f edges), %.4g pairs, %.4g product nodes; %d block slots, %.0f busy in the first launch\n",
			s.Name, s.Graphs, s.MeanNodes, s.MeanEdges, s.Pairs, s.ProductN, s.BlockSlots, s.BlocksBusy)
		fmt.Printf("  per mat-vec  %-18s %10s %10s %12s %12s %12s %10s %12s %12s %12s %9s\n", "order", "tiles", "nnz/tile", "tile pairs", "dense", "nz pairs", "useful/ld", "input words", "largest pair", "product n", "pack (s)")
		for _, on := range orders {
			o := s.Orders[on]
			fmt.Printf("               %-18s %10d %10.2f %12.4g %12.4g %12.4g %10.3f %12.4g %12.4g %12.4g %9.3f\n", on, o.Tiles, o.NNZPerTile, o.TilePairs, o.DenseTilePairs, o.NonzeroPairs, o.UsefulPerLoad, o.InputWords, o.LargestPairTilePairs, o.ProductNodes, o.PackSeconds)
		}
		fmt.Printf("  per CG iteration: %d block barriers, %.4g vector words outside the product\n", barriersPerIter, s.VectorWords)
		if it := s.Iterations; it != nil {
			fmt.Printf("  CG iterations over %d pairs: device (Jacobi, quotients) mean %.1f max %d; CPU default mean %.1f max %d\n",
				it.Pairs, it.DeviceMean, it.DeviceMax, it.CPUMean, it.CPUMax)
		}
	}
}
