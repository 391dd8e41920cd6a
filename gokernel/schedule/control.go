package schedule

import (
	"errors"
	"sync/atomic"
	"unsafe"
)

// ErrCancelled is returned by Run, and by the kernels built on it, when the
// computation was stopped through its Control.
var ErrCancelled = errors.New("computation cancelled")

// ErrPanic is wrapped by the error Run returns when a task panicked: a bug,
// not bad input.
var ErrPanic = errors.New("internal error (panic)")

// Control lets another goroutine, or another thread through shared memory, stop
// a computation and watch its progress. It is three words: a cancel flag that
// the watcher sets, and the counts of units done and to do that the computation
// maintains. A nil *Control is valid: it is never cancelled and counts nothing.
type Control struct {
	words *[ControlWords]int64
}

// ControlWords is the number of int64 words of a control block: cancel flag,
// units done, units in total.
const ControlWords = 3

const (
	wordCancel = iota
	wordDone
	wordTotal
)

// NewControl returns a Control backed by Go memory.
func NewControl() *Control { return &Control{words: new([ControlWords]int64)} }

// ControlAt returns a Control backed by words, which must hold ControlWords
// values, be 8-byte aligned, and stay valid while the computation runs (memory
// shared with a caller in another language, for instance).
func ControlAt(words []int64) (*Control, error) {
	if len(words) < ControlWords {
		return nil, errors.New("control block: too few words")
	}
	if uintptr(unsafe.Pointer(&words[0]))%8 != 0 {
		return nil, errors.New("control block: not 8-byte aligned")
	}
	return &Control{words: (*[ControlWords]int64)(words[:ControlWords])}, nil
}

// Cancel asks the computation to stop.
func (c *Control) Cancel() {
	if c != nil {
		atomic.StoreInt64(&c.words[wordCancel], 1)
	}
}

// Cancelled reports whether Cancel was called (or the flag set from outside).
// It costs one atomic load, cheap enough to poll inside solver iterations.
func (c *Control) Cancelled() bool {
	return c != nil && atomic.LoadInt64(&c.words[wordCancel]) != 0
}

// AddTotal announces n more units of work.
func (c *Control) AddTotal(n int) {
	if c != nil {
		atomic.AddInt64(&c.words[wordTotal], int64(n))
	}
}

// Done records n finished units.
func (c *Control) Done(n int) {
	if c != nil {
		atomic.AddInt64(&c.words[wordDone], int64(n))
	}
}

// Progress returns the units done and in total so far.
func (c *Control) Progress() (done, total int64) {
	if c == nil {
		return 0, 0
	}
	return atomic.LoadInt64(&c.words[wordDone]), atomic.LoadInt64(&c.words[wordTotal])
}
