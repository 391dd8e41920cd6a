package pybind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/graphgram/graphgram/gokernel/cputime"
	"github.com/sbinet/npyio"
)

// replayed is one call's batch read back from the .npy files benchmarks/dump_call.py
// writes, with its JSON parameters.
type replayed struct {
	arrays  map[string]any // kept alive: desc holds their addresses
	desc    []int64
	first   []int64 // the descriptor of the batch's first graph alone
	params  string
	nGraphs int
}

// readReplay reads the call dumped in dir.
func readReplay(tb testing.TB, dir string) *replayed {
	tb.Helper()
	r := &replayed{arrays: map[string]any{}}
	load := func(name string, dst any) bool {
		f, err := os.Open(filepath.Join(dir, name+".npy"))
		if os.IsNotExist(err) {
			return false
		}
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		if err := npyio.Read(f, dst); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		r.arrays[name] = dst
		return true
	}
	var nodePtr, edgePtr, edges []int64
	var weights, nodeFeat, edgeFeat, start []float64
	load("node_ptr", &nodePtr)
	load("edge_ptr", &edgePtr)
	load("edges", &edges)
	load("weights", &weights)
	load("node_feat", &nodeFeat)
	load("edge_feat", &edgeFeat)
	load("start", &start)
	var params map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "params.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &params); err != nil {
		tb.Fatal(err)
	}
	r.params = string(b)
	r.nGraphs = len(nodePtr) - 1
	nodes, ne := int(nodePtr[r.nGraphs]), int(edgePtr[r.nGraphs])
	width := func(a []float64, rows int) int64 {
		if rows == 0 {
			return 0
		}
		return int64(len(a) / rows)
	}
	addr := func(a []int64) int64 {
		if len(a) == 0 {
			return 0
		}
		return int64(uintptr(unsafe.Pointer(&a[0])))
	}
	faddr := func(a []float64) int64 {
		if len(a) == 0 {
			return 0
		}
		return int64(uintptr(unsafe.Pointer(&a[0])))
	}
	r.arrays["slices"] = []any{nodePtr, edgePtr, edges, weights, nodeFeat, edgeFeat, start}
	r.desc = []int64{abiVersion, int64(r.nGraphs),
		addr(nodePtr), int64(len(nodePtr)), addr(edgePtr), int64(len(edgePtr)),
		addr(edges), int64(len(edges)), faddr(weights), int64(len(weights)),
		faddr(nodeFeat), int64(len(nodeFeat)), width(nodeFeat, nodes),
		faddr(edgeFeat), int64(len(edgeFeat)), width(edgeFeat, ne),
		faddr(start), int64(len(start))}
	// The first graph alone: its rows of every array (edges are graph-local).
	n0, m0 := nodePtr[1], edgePtr[1]
	head := func(a []float64, rows, total int64) []float64 {
		if total == 0 {
			return nil
		}
		return a[:int64(len(a))/total*rows]
	}
	firstStart := start
	if len(start) > 0 {
		firstStart = start[:n0]
	}
	ptr0, eptr0 := []int64{0, n0}, []int64{0, m0}
	nf0, ef0 := head(nodeFeat, n0, int64(nodes)), head(edgeFeat, m0, int64(ne))
	r.arrays["first"] = []any{ptr0, eptr0, nf0, ef0}
	r.first = []int64{abiVersion, 1,
		addr(ptr0), 2, addr(eptr0), 2,
		addr(edges[:2*m0]), 2 * m0, faddr(weights[:m0]), m0,
		faddr(nf0), int64(len(nf0)), width(nodeFeat, nodes),
		faddr(ef0), int64(len(ef0)), width(edgeFeat, ne),
		faddr(firstStart), int64(len(firstStart))}
	return r
}

// BenchmarkReplay replays the marginalized-kernel call dumped by
// benchmarks/dump_call.py into $GRAPHGRAM_REPLAY, as "gram" and as
// "gram_grad" (K(X, X) and its gradient), as "grad_ratio" (both, alternately,
// for the ratio of their times), as "one_solve" (K from one solve against K
// from two, alternately, dual.go), and as "column", K(X, {X[0]}): one column,
// as the choice of inducing graphs asks for, for profiles of real workloads:
//
//	GRAPHGRAM_REPLAY=/tmp/esol300 GOEXPERIMENT=simd go test ./pybind -run '^$' -bench Replay -cpuprofile cpu.out
func BenchmarkReplay(b *testing.B) {
	dir := os.Getenv("GRAPHGRAM_REPLAY")
	if dir == "" {
		b.Skip("GRAPHGRAM_REPLAY names no dumped call")
	}
	r := readReplay(b, dir)
	var p struct {
		NParams int `json:"n_params"`
	}
	if err := json.Unmarshal([]byte(r.params), &p); err != nil {
		b.Fatal(err)
	}
	n := r.nGraphs
	out := make([]float64, n*n)
	grad := make([]float64, n*n*p.NParams)
	compute := func(call string, y uintptr, yl, ol int, g uintptr, gl int) {
		warn, err := Compute("marginalized", call, r.params, uintptr(unsafe.Pointer(&r.desc[0])), len(r.desc), y, yl,
			uintptr(unsafe.Pointer(&out[0])), ol, 0, 0, g, gl, 0, 0)
		if err != nil || warn != "" {
			b.Fatalf("%v %q", err, warn)
		}
	}
	// grad_ratio alternates K and K with its gradient, call by call, and
	// reports the ratio of their summed times: load on the machine slows
	// both alike.
	b.Run("grad_ratio", func(b *testing.B) {
		var tk, tg time.Duration
		for b.Loop() {
			t0 := time.Now()
			compute("gram", 0, 0, len(out), 0, 0)
			t1 := time.Now()
			compute("gram_grad", 0, 0, len(out), uintptr(unsafe.Pointer(&grad[0])), len(grad))
			tk, tg = tk+t1.Sub(t0), tg+time.Since(t1)
		}
		b.ReportMetric(tg.Seconds()/tk.Seconds(), "grad/K")
	})
	// one_solve alternates K from two solves (the default on SGS pairs) and
	// K from the primal solve alone (the same call with Options.Tol set to
	// the single solve's default tolerance, 1e-9) and reports the ratio of
	// their summed times, one/two.
	b.Run("one_solve", func(b *testing.B) {
		one := strings.Replace(r.params, `"tol": 0.0`, `"tol": 1e-9`, 1)
		if one == r.params {
			b.Skip(`params.json has no "tol": 0.0 to replace`)
		}
		var t1, t2 time.Duration
		for b.Loop() {
			t0 := time.Now()
			if warn, err := Compute("marginalized", "gram", one, uintptr(unsafe.Pointer(&r.desc[0])), len(r.desc), 0, 0,
				uintptr(unsafe.Pointer(&out[0])), len(out), 0, 0, 0, 0, 0, 0); err != nil || warn != "" {
				b.Fatalf("%v %q", err, warn)
			}
			tm := time.Now()
			compute("gram", 0, 0, len(out), 0, 0)
			t1, t2 = t1+tm.Sub(t0), t2+time.Since(tm)
		}
		b.ReportMetric(t1.Seconds()/t2.Seconds(), "one/two")
	})
	for _, mode := range []string{"gram", "gram_grad", "column"} {
		b.Run(mode, func(b *testing.B) {
			pairs := n * (n + 1) / 2
			cpu0 := cputime.Process()
			for b.Loop() {
				var g, y uintptr
				gl, yl, ol := 0, 0, len(out)
				call := mode
				switch mode {
				case "gram_grad":
					g, gl = uintptr(unsafe.Pointer(&grad[0])), len(grad)
				case "column":
					call, y, yl, ol, pairs = "gram", uintptr(unsafe.Pointer(&r.first[0])), len(r.first), n, n
				}
				compute(call, y, yl, ol, g, gl)
			}
			b.ReportMetric(float64(pairs)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
			// CPU time (all threads) beside the wall time: with GOMAXPROCS=1 it
			// is the work done, less disturbed by other jobs on the machine.
			b.ReportMetric((cputime.Process()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
