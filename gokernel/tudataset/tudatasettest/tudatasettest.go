// Package tudatasettest loads the shared TU data sets in tests and
// benchmarks: skipped when they are absent, failed when they do not load.
package tudatasettest

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/graphgram/graphgram/gokernel/tudataset"
)

// Load returns the data set name from tudataset.Open, skipping tb (with the
// message naming $GRAPHGRAM_DATASETS) when it is absent.
func Load(tb testing.TB, name string) *tudataset.Dataset {
	tb.Helper()
	ds, err := tudataset.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}
