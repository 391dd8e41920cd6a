package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/cuda/internal/testgraphs"
	"github.com/graphgram/graphgram/gokernel/mgk"
	"github.com/graphgram/graphgram/gokernel/microkernel"
)

func validOptions() mgk.Options {
	return mgk.Options{NodeKernel: testgraphs.Parse(testgraphs.KernelSets[1].NK), EdgeKernel: testgraphs.Parse(testgraphs.KernelSets[1].EK), Q: 0.1}
}

// otherKernel is a base kernel the CUDA library does not know.
type otherKernel struct{ microkernel.Constant }

func TestPrepareValidates(t *testing.T) {
	gs := testgraphs.EdgeCases(1)
	out := make([]float64, len(gs)*len(gs))
	cases := []struct {
		name string
		mod  func(o *mgk.Options) ([]float64, Precision)
		want string
	}{
		{"q", func(o *mgk.Options) ([]float64, Precision) { o.Q = 1; return out, Float64 }, "stopping probability"},
		{"lmin", func(o *mgk.Options) ([]float64, Precision) { o.Lmin = 2; return out, Float64 }, "lmin"},
		{"precision", func(o *mgk.Options) ([]float64, Precision) { return out, 16 }, "precision"},
		{"out", func(o *mgk.Options) ([]float64, Precision) { return out[1:], Float64 }, "out has"},
		{"columns", func(o *mgk.Options) ([]float64, Precision) {
			o.NodeKernel = testgraphs.Parse(`{"kind":"kronecker_delta","h":0.1,"col":7}`)
			return out, Float64
		}, "column 7"},
	}
	for _, c := range cases {
		o := validOptions()
		o2, prec := c.mod(&o)
		_, _, _, _, _, err := prepare(gs, nil, nil, nil, true, o, prec, len(o2))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	o := validOptions()
	o.EdgeKernel = &otherKernel{}
	if _, _, _, _, _, err := prepare(gs, nil, nil, nil, true, o, Float64, len(out)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown base kernel: %v, want ErrUnsupported", err)
	}
	o = validOptions()
	ro, _, _, nc, ec, err := prepare(gs, nil, nil, nil, true, o, Float32, len(out))
	if err != nil || ro.Tol != Float32MinTol || ro.MaxIter != mgk.DefaultMaxIter || nc != 1 || ec != 2 {
		t.Errorf("defaults: %+v %d %d %v", ro, nc, ec, err)
	}
}
