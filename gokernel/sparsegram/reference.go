package sparsegram

import "github.com/graphgram/graphgram/gokernel/schedule"

// referenceGram is the first implementation of Gram, kept as the tests'
// oracle and as the path for inputs whose values could pass 2^53 (where
// float64 accumulation stops being exact): every pair of rows is merged,
// summing in int64.
func referenceGram(X, Y *Features, symmetric bool, opt Options, out []float64) error {
	nx, ny := X.Rows(), Y.Rows()
	opt.Control.AddTotal(nx)
	return schedule.Run(opt.Control, nx, opt.NJobs, 1, func(_, i int) error {
		j0 := 0
		if symmetric {
			j0 = i
		}
		for j := j0; j < ny; j++ {
			v := float64(rowPair(X, i, Y, j, opt.Semiring))
			out[i*ny+j] = v
			if symmetric {
				out[j*ny+i] = v
			}
		}
		opt.Control.Done(1)
		return nil
	})
}

// rowPair combines row i of X and row j of Y by merging their sorted columns.
func rowPair(X *Features, i int, Y *Features, j int, s Semiring) int64 {
	a, b := X.Ptr[i], Y.Ptr[j]
	ae, be := X.Ptr[i+1], Y.Ptr[j+1]
	var sum int64
	for a < ae && b < be {
		switch ca, cb := X.Col[a], Y.Col[b]; {
		case ca < cb:
			a++
		case ca > cb:
			b++
		default:
			if s == SumMin {
				sum += int64(min(X.Val[a], Y.Val[b]))
			} else {
				sum += int64(X.Val[a]) * int64(Y.Val[b])
			}
			a++
			b++
		}
	}
	return sum
}
