package mgk

import (
	"sync"

	"github.com/graphgram/graphgram/gokernel/graph"
)

// SideCacheBytes is the memory, in bytes (estimated from the graphs' sizes),
// that the solver keeps of the graphs it has prepared, for later calls that
// meet the same graphs again: each graph's colour-refinement quotient, its
// octile packing and its sweep lists (everything of its set-up, which is
// linear in its size). Calls that ask for a few columns against many graphs
// spend most of their time there otherwise: the choice of inducing graphs
// (one call per column), the new columns of a Bayesian-optimisation round.
// When a graph does not fit, the cache is emptied first. Zero keeps nothing.
//
// A cached set-up is what the call would have built, bit for bit: it is a
// function of the graph's content, its start probabilities and
// Options.PackMinEdges alone, all of which its key holds.
var SideCacheBytes int64 = 256 << 20

// sideCache is the process's cache of prepared sides (SideCacheBytes).
var sideCache = preparedSides{entries: map[uint64][]*preparedSide{}}

// preparedSides maps content fingerprints to the prepared graphs that have
// them. Several calls (Python threads, Dask workers in threads) share it.
type preparedSides struct {
	mu      sync.Mutex
	entries map[uint64][]*preparedSide
	bytes   int64
	hits    int64 // lookups served, for the tests
}

// preparedSide is one graph's set-up: its quotient (the graph itself when
// the call does not refine) and its side. Both are read-only once cached; a
// call copies the side value and sets its call-wide label ids on the copy.
type preparedSide struct {
	g       *graph.Graph // the caller's graph (immutable), for the exact comparison
	start   []float64    // its start probabilities (a copy), nil for all ones
	refine  bool
	packMin int
	q       quotient
	qfp     uint64 // q's content fingerprint
	s       side
	bytes   int64
}

// sizeOf estimates the memory of a prepared graph: the caller's graph, its
// quotient and its packed copy, with their per-node and per-edge tables.
func sizeOf(g *graph.Graph) int64 {
	return 512 + 16*int64(g.N*(g.NodeCols+8)+g.NumEdges()*(g.EdgeCols+12))
}

// key is the cache key of a graph with its start probabilities.
func sideKey(g *graph.Graph, start []float64) uint64 {
	return graph.ContentFingerprint(g, start)
}

// find returns the entry under key for a graph with this content, these
// start probabilities and set-up options, or nil; c.mu is held.
func (c *preparedSides) find(key uint64, g *graph.Graph, start []float64, refine bool, packMin int) *preparedSide {
	for _, e := range c.entries[key] {
		if e.refine == refine && e.packMin == packMin &&
			graph.CompareContent(e.g, [][]float64{e.start}, g, [][]float64{start}) == 0 {
			return e
		}
	}
	return nil
}

// get returns the prepared side of a graph with this content, these start
// probabilities and set-up options, or nil.
func (c *preparedSides) get(key uint64, g *graph.Graph, start []float64, refine bool, packMin int) *preparedSide {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.find(key, g, start, refine, packMin)
	if e != nil {
		c.hits++
	}
	return e
}

// put keeps e under key, emptying the cache first when e would not fit.
func (c *preparedSides) put(key uint64, e *preparedSide) {
	limit := SideCacheBytes
	if limit <= 0 || e.bytes > limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.find(key, e.g, e.start, e.refine, e.packMin) != nil {
		return // another call prepared it meanwhile
	}
	if c.bytes+e.bytes > limit {
		clear(c.entries)
		c.bytes = 0
	}
	c.entries[key] = append(c.entries[key], e)
	c.bytes += e.bytes
}

// release empties the cache.
func (c *preparedSides) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.bytes = 0
}

// ReleaseSideCache frees the prepared graphs that the solver keeps
// (SideCacheBytes).
func ReleaseSideCache() { sideCache.release() }

// SideCacheInUse returns the estimated bytes the cache holds now.
func SideCacheInUse() int64 {
	sideCache.mu.Lock()
	defer sideCache.mu.Unlock()
	return sideCache.bytes
}
