// Command tilestats prints, per data set, the number of non-empty 8×8 adjacency
// tiles and their mean density under each node order of package reorder: the
// natural order, reverse Cuthill–McKee, recursive-bisection partitioning and LSH
// row clustering, plus the per-graph best (the table of Figure 7 in Tang et al.,
// "A High-Throughput Solver for Marginalized Graph Kernels on GPU", IPDPS 2020).
//
// Usage:
//
//	tilestats [-data DIR] [-sets MUTAG,ENZYMES,PROTEINS,NCI1] [-synthetic N] [-json]
//
// TU data sets are read from DIR/NAME/NAME_*.txt; those missing are skipped.
// With -synthetic N > 0 two generated sets of N graphs are added:
// Newman–Watts–Strogatz (96 nodes, k = 3, p = 0.1) and Barabási–Albert (96
// nodes, m = 6), seeds 1..N.
//
// Tiles are summed over the graphs of a set; density is the mean over all
// non-empty tiles of (distinct nonzeros)/64. "best" picks per graph the order
// with fewest tiles (reorder.Best) and "wins" counts how often each order was
// picked. Times are the total reordering time per order.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/graphgram/graphgram/gokernel/graph"
	"github.com/graphgram/graphgram/gokernel/octile/octiletest"
	"github.com/graphgram/graphgram/gokernel/reorder"
	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// OrderStats is the tile census of one data set under one order.
type OrderStats struct {
	Tiles        int     `json:"tiles"`
	TilesPerGrph float64 `json:"tiles_per_graph"`
	Density      float64 `json:"mean_density"`
	Seconds      float64 `json:"seconds"`
	Wins         int     `json:"wins,omitempty"`
}

// SetStats is one row of the table.
type SetStats struct {
	Name      string                 `json:"name"`
	Graphs    int                    `json:"graphs"`
	MeanNodes float64                `json:"mean_nodes"`
	MeanEdges float64                `json:"mean_edges"`
	Orders    map[string]*OrderStats `json:"orders"`
	Best      *OrderStats            `json:"best"`
}

func main() {
	defaultData, _ := tudataset.Dir()
	data := flag.String("data", defaultData, "directory holding the TU data sets (default: $"+tudataset.DirEnv+", or shared/datasets beside the repository)")
	sets := flag.String("sets", "MUTAG,ENZYMES,PROTEINS,NCI1", "comma-separated TU data set names")
	synth := flag.Int("synthetic", 100, "graphs per synthetic set (0: none)")
	asJSON := flag.Bool("json", false, "write JSON instead of a table")
	flag.Parse()

	var rows []*SetStats
	for _, name := range strings.Split(*sets, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(*data, name, name+"_A.txt")); err != nil {
			fmt.Fprintf(os.Stderr, "tilestats: skipping %s: %v\n", name, err)
			continue
		}
		ds, err := tudataset.Load(filepath.Join(*data, name), name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tilestats:", err)
			os.Exit(1)
		}
		rows = append(rows, census(name, ds.Graphs))
	}
	if *synth > 0 {
		nws := make([]*graph.Graph, *synth)
		ba := make([]*graph.Graph, *synth)
		for i := range nws {
			nws[i] = octiletest.NewmanWattsStrogatz(96, 3, 0.1, uint64(i+1))
			ba[i] = octiletest.BarabasiAlbert(96, 6, uint64(i+1))
		}
		rows = append(rows, census("NWS(96,3,0.1)", nws), census("BA(96,6)", ba))
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintln(os.Stderr, "tilestats:", err)
			os.Exit(1)
		}
		return
	}
	printTable(rows)
}

// census reorders every graph of a set by every method.
func census(name string, gs []*graph.Graph) *SetStats {
	s := &SetStats{Name: name, Graphs: len(gs), Orders: make(map[string]*OrderStats), Best: &OrderStats{}}
	nnz := make(map[string]float64)
	for _, m := range reorder.Methods {
		s.Orders[m.String()] = &OrderStats{}
	}
	bestNNZ := 0.0
	for _, g := range gs {
		s.MeanNodes += float64(g.N)
		s.MeanEdges += float64(g.NumEdges())
		bestT, bestM, bestD := -1, reorder.Natural, 0.0
		for _, m := range reorder.Methods {
			t0 := time.Now()
			p := reorder.Order(g, m)
			dt := time.Since(t0).Seconds()
			tiles, dens := reorder.PermutedTileStats(g, p)
			o := s.Orders[m.String()]
			o.Tiles += tiles
			o.Seconds += dt
			nnz[m.String()] += dens * float64(64*tiles)
			if bestT < 0 || tiles < bestT {
				bestT, bestM, bestD = tiles, m, dens
			}
		}
		s.Orders[bestM.String()].Wins++
		s.Best.Tiles += bestT
		bestNNZ += bestD * float64(64*bestT)
	}
	n := float64(len(gs))
	s.MeanNodes /= n
	s.MeanEdges /= n
	fill := func(o *OrderStats, z float64) {
		o.TilesPerGrph = float64(o.Tiles) / n
		if o.Tiles > 0 {
			o.Density = z / float64(64*o.Tiles)
		}
	}
	for k, o := range s.Orders {
		fill(o, nnz[k])
	}
	fill(s.Best, bestNNZ)
	return s
}

func printTable(rows []*SetStats) {
	fmt.Printf("%-14s %6s %7s %7s", "data set", "graphs", "nodes", "edges")
	cols := append(reorder.Methods[:len(reorder.Methods):len(reorder.Methods)], -1)
	for _, m := range cols {
		name := "best"
		if m >= 0 {
			name = m.String()
		}
		fmt.Printf(" | %-22s", name+": tiles/graph dens")
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("%-14s %6d %7.1f %7.1f", r.Name, r.Graphs, r.MeanNodes, r.MeanEdges)
		for _, m := range cols {
			o := r.Best
			if m >= 0 {
				o = r.Orders[m.String()]
			}
			fmt.Printf(" | %10.2f %11.4f", o.TilesPerGrph, o.Density)
		}
		fmt.Println()
	}
	fmt.Println()
	fmt.Printf("%-14s", "wins / time")
	for _, m := range reorder.Methods {
		fmt.Printf(" | %-22s", m.String())
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("%-14s", r.Name)
		for _, m := range reorder.Methods {
			o := r.Orders[m.String()]
			fmt.Printf(" | %5d %14.3fs", o.Wins, o.Seconds)
		}
		fmt.Println()
	}
}
