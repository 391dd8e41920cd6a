package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio"
	"gonum.org/v1/gonum/mat"
)

func readNPY(t *testing.T, path string) *mat.Dense {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var m mat.Dense
	if err := npyio.Read(f, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// TestGolden runs the command on the MUTAG excerpt with its default kernels
// (KroneckerDelta(0.5) on node and edge labels) and compares with the golden
// Gram matrix made by the dense direct solve.
func TestGolden(t *testing.T) {
	testdata := filepath.Join("..", "..", "mgk", "testdata")
	out := filepath.Join(t.TempDir(), "K.npy")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-data", filepath.Join(testdata, "MUTAG20"), "-q", "0.05", "-jobs", "2", "-o", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "210 pairs") || !strings.Contains(stdout.String(), "pairs/s") {
		t.Errorf("output %q", stdout.String())
	}
	got, want := readNPY(t, out), readNPY(t, filepath.Join(testdata, "mutag20_q0.05.npy"))
	r, c := want.Dims()
	if gr, gc := got.Dims(); gr != r || gc != c {
		t.Fatalf("shape %d×%d, want %d×%d", gr, gc, r, c)
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if g, w := got.At(i, j), want.At(i, j); math.Abs(g-w) > 1e-9*math.Abs(w) {
				t.Errorf("K[%d][%d] = %.15g, golden %.15g", i, j, g, w)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		contains string
	}{
		{nil, "-data is required"},
		{[]string{"-data", t.TempDir()}, "is missing"},
		{[]string{"-data", filepath.Join("..", "..", "mgk", "testdata", "MUTAG20"), "-q", "1.5"}, "stopping probability"},
		{[]string{"-data", filepath.Join("..", "..", "mgk", "testdata", "MUTAG20"), "-node", "{"}, "node kernel"},
		{[]string{"-data", filepath.Join("..", "..", "mgk", "testdata", "MUTAG20"), "-edge", `{"kind": "kronecker_delta", "h": 0.5, "col": 3}`}, "edge kernel reads edge feature column 3"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(tc.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.contains)
		}
	}
}
