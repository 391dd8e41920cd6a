// Command graphgram computes the marginalized graph kernel Gram matrix of a TU
// data set and writes it as a .npy file:
//
//	go run ./gokernel/cmd/graphgram -data ../shared/datasets/MUTAG -q 0.01 -o K.npy
//
// The node and edge kernels default to KroneckerDelta(0.5) on the label column
// when the data set has labels, Constant(1) otherwise; -node and -edge take the
// JSON expressions of docs/abi.md instead.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
	"github.com/graphgram/graphgram/gokernel/tudataset"
	"github.com/sbinet/npyio"
	"gonum.org/v1/gonum/mat"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "graphgram:", err)
		os.Exit(1)
	}
}

const (
	labelKernel = `{"kind": "kronecker_delta", "h": 0.5, "col": 0}`
	unitKernel  = `{"kind": "constant", "c": 1.0}`
)

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("graphgram", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var (
		data    = fl.String("data", "", "folder of a TU data set (required)")
		name    = fl.String("name", "", "data set file prefix (default: the folder's name)")
		q       = fl.Float64("q", 0.05, "stopping probability, in (0, 1)")
		lmin    = fl.Int("lmin", 0, "shortest walk length counted: 0 or 1")
		node    = fl.String("node", "", "node kernel JSON (default: KroneckerDelta(0.5) on the label, or Constant(1))")
		edge    = fl.String("edge", "", "edge kernel JSON (default: KroneckerDelta(0.5) on the label, or Constant(1))")
		jobs    = fl.Int("jobs", 0, "goroutines (0 = all cores)")
		tol     = fl.Float64("tol", 0, "CG relative residual tolerance (0 = default)")
		maxIter = fl.Int("maxiter", 0, "CG iteration cap (0 = default)")
		first   = fl.Int("n", 0, "use only the first n graphs (0 = all)")
		out     = fl.String("o", "", "output .npy file (default: none)")
	)
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *data == "" {
		fl.Usage()
		return fmt.Errorf("-data is required")
	}
	if *name == "" {
		*name = filepath.Base(filepath.Clean(*data))
	}
	t0 := time.Now()
	ds, err := tudataset.Load(*data, *name)
	if err != nil {
		return err
	}
	gs := ds.Graphs
	if *first > 0 && *first < len(gs) {
		gs = gs[:*first]
	}
	fmt.Fprintf(stdout, "%s: %d graphs loaded in %.2f s\n", ds.Name, len(gs), time.Since(t0).Seconds())

	pick := func(spec string, labeled bool, what string) (microkernel.Kernel, error) {
		if spec == "" {
			spec = unitKernel
			if labeled {
				spec = labelKernel
			}
		}
		k, err := microkernel.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return k, nil
	}
	nk, err := pick(*node, ds.NodeLabels, "node kernel")
	if err != nil {
		return err
	}
	ek, err := pick(*edge, ds.EdgeLabels, "edge kernel")
	if err != nil {
		return err
	}
	opt := mgk.Options{NodeKernel: nk, EdgeKernel: ek, Q: *q, Lmin: *lmin, Tol: *tol, MaxIter: *maxIter, NJobs: *jobs}

	n := len(gs)
	K := make([]float64, n*n)
	iters := make([]int32, n*n)
	t1 := time.Now()
	bad, err := mgk.Gram(gs, nil, nil, nil, true, opt, K, iters)
	if err != nil {
		return err
	}
	dt := time.Since(t1).Seconds()
	pairs := n * (n + 1) / 2
	var total, most int64
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			it := int64(iters[i*n+j])
			total += it
			most = max(most, it)
		}
	}
	fmt.Fprintf(stdout, "Gram %d×%d (q=%g, lmin=%d): %d pairs in %.3f s, %.0f pairs/s, CG iterations mean %.1f max %d\n",
		n, n, *q, *lmin, pairs, dt, float64(pairs)/dt, float64(total)/float64(max(pairs, 1)), most)
	if len(bad) > 0 {
		fmt.Fprintf(stderr, "warning: %d pairs did not converge, first %v\n", len(bad), bad[0])
	}
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		if err := npyio.Write(f, mat.NewDense(n, n, K)); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", *out, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", *out)
	}
	return nil
}
