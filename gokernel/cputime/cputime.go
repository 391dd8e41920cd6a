// Package cputime reads the CPU time the process has used, the measure the
// benchmarks and timing tests report beside wall time: with one goroutine it is
// the work done, much less disturbed by other jobs on a loaded machine.
package cputime

import "time"

// Process returns the user plus system CPU time of the process so far (all its
// threads), or 0 where the system cannot say.
func Process() time.Duration { return process() }
