package cputime

import (
	"testing"
	"time"
)

// Spinning on one goroutine for a while must show as CPU time, and CPU time
// never goes backwards.
func TestProcessCountsWork(t *testing.T) {
	before := Process()
	if before <= 0 {
		t.Fatalf("Process() = %v at start, want > 0 (the runtime has run)", before)
	}
	x := 1.0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		for range 1000 {
			x = x*1.0000001 + 1e-9
		}
	}
	after := Process()
	if after <= before {
		t.Errorf("Process() went from %v to %v over 50 ms of spinning (x = %g)", before, after, x)
	}
}
