package mgk

import (
	"slices"
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
//
// QuotientOf (the quotients of the CUDA bridge) reads and fills the same
// cache: a graph's quotient is computed once, whichever backend meets the
// graph first; an entry QuotientOf made holds the quotient alone, and the
// solver's first call on that graph adds the rest.
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
// An entry of QuotientOf holds the quotient alone (sided false, refine true,
// packMin unused).
type preparedSide struct {
	g       *graph.Graph // the caller's graph (immutable), for the exact comparison
	start   []float64    // its start probabilities (a copy), nil for all ones
	refine  bool
	packMin int
	q       quotient
	qfp     uint64 // q's content fingerprint
	sided   bool   // s is built
	s       side
	bytes   int64
}

// sizeOf estimates the memory of a prepared graph: the caller's graph, its
// quotient and its packed copy, with their per-node and per-edge tables.
func sizeOf(g *graph.Graph) int64 {
	return 512 + 16*int64(g.N*(g.NodeCols+8)+g.NumEdges()*(g.EdgeCols+12))
}

// quotientSizeOf estimates the memory of QuotientOf's entry for g: the
// caller's graph and its quotient, without the packed copy.
func quotientSizeOf(g *graph.Graph) int64 {
	return 512 + 8*int64(g.N*(g.NodeCols+8)+g.NumEdges()*(g.EdgeCols+12))
}

// key is the cache key of a graph with its start probabilities.
func sideKey(g *graph.Graph, start []float64) uint64 {
	return graph.ContentFingerprint(g, start)
}

// same reports whether e was prepared for a graph with this content and
// these start probabilities, refined or not as refine says.
func (e *preparedSide) same(g *graph.Graph, start []float64, refine bool) bool {
	return e.refine == refine && graph.CompareContent(e.g, [][]float64{e.start}, g, [][]float64{start}) == 0
}

// find returns, from the entries under key for a graph with this content
// and these start probabilities, the one prepared with refine and packMin,
// its side built (full true); else, when refine, one that holds the graph's
// quotient (full false: any packMin, or an entry of QuotientOf); else nil.
// c.mu is held.
func (c *preparedSides) find(key uint64, g *graph.Graph, start []float64, refine bool, packMin int) (e *preparedSide, full bool) {
	for _, x := range c.entries[key] {
		if !x.same(g, start, refine) {
			continue
		}
		if x.sided && x.packMin == packMin {
			return x, true
		}
		if refine && e == nil {
			e = x
		}
	}
	return e, false
}

// get returns find's entry for a graph with this content, these start
// probabilities and set-up options, counting it as a hit: full when its
// side can serve, else (nil, or) one whose quotient can.
func (c *preparedSides) get(key uint64, g *graph.Graph, start []float64, refine bool, packMin int) (e *preparedSide, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, full = c.find(key, g, start, refine, packMin)
	if e != nil {
		c.hits++
	}
	return e, full
}

// put keeps e under key, emptying the cache first when e would not fit. An
// entry that holds what e holds is kept instead (another call prepared it
// meanwhile); a sided e replaces its graph's entry of QuotientOf.
func (c *preparedSides) put(key uint64, e *preparedSide) {
	limit := SideCacheBytes
	if limit <= 0 || e.bytes > limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.entries[key]
	for k, x := range list {
		if !x.same(e.g, e.start, e.refine) {
			continue
		}
		if !e.sided || x.sided && x.packMin == e.packMin {
			return // x holds what e holds
		}
		if !x.sided {
			c.entries[key] = slices.Delete(list, k, k+1)
			c.bytes -= x.bytes
			break
		}
	}
	if c.bytes+e.bytes > limit {
		clear(c.entries)
		c.bytes = 0
	}
	c.entries[key] = append(c.entries[key], e)
	c.bytes += e.bytes
}

// quotient returns the colour-refinement quotient of g with start (nil: all
// ones) from the cache, or computes it and keeps it there (an entry of the
// quotient alone, with a copy of start), so that a later QuotientOf or
// solver call on a graph of the same content does not refine it again. The
// quotient is read-only: the cache and its other users share it.
func (c *preparedSides) quotient(g *graph.Graph, start []float64) quotient {
	if SideCacheBytes <= 0 {
		return quotientOf(g, start)
	}
	key := sideKey(g, start)
	if e, _ := c.get(key, g, start, true, 0); e != nil {
		return e.q
	}
	start = slices.Clone(start) // nil stays nil
	q := quotientOf(g, start)
	c.put(key, &preparedSide{g: g, start: start, refine: true, q: q,
		qfp: graph.ContentFingerprint(q.g, q.content()...), bytes: quotientSizeOf(g)})
	return q
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
