package tudataset

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DirEnv names the environment variable that says where the TU data sets are:
// a folder with one subfolder per data set (MUTAG/MUTAG_A.txt, ...).
const DirEnv = "GRAPHGRAM_DATASETS"

// Dir returns the folder of TU data sets that tests, benchmarks and commands
// read: $GRAPHGRAM_DATASETS when it is set, else shared/datasets beside the
// repository, found from the working directory or any folder under it: the
// walk up checks each folder up to the parent of the module root (the first
// folder that holds go.mod) and goes no higher, so that nothing outside the
// clone and the folder it sits in can be found by chance. The error, when
// neither exists, names the variable.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		if _, err := os.Stat(d); err != nil {
			return "", fmt.Errorf("$%s: %w", DirEnv, err)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return findUp(wd, os.Stat)
}

// findUp returns the first shared/datasets folder in wd or a folder above it,
// up to the parent of the first folder holding go.mod (outside a module, up to
// the file system's root). The file system is a
// parameter so that tests control every path the walk looks at.
func findUp(wd string, stat func(string) (fs.FileInfo, error)) (string, error) {
	root := false // the previous folder held go.mod: this one is the last
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "datasets")
		if st, err := stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if root || filepath.Dir(d) == d {
			break
		}
		_, err := stat(filepath.Join(d, "go.mod"))
		root = err == nil
	}
	return "", fmt.Errorf("no shared/datasets beside the repository above %s; set $%s to the folder of the TU data sets: %w", wd, DirEnv, fs.ErrNotExist)
}

// SetDir returns the folder of the data set name under Dir, or an error
// wrapping fs.ErrNotExist when it is missing (tests skip on it).
func SetDir(name string) (string, error) {
	root, err := Dir()
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, name)
	if _, err := os.Stat(d); err != nil {
		return "", fmt.Errorf("data set %s not found: %w (set $%s)", name, err, DirEnv)
	}
	return d, nil
}

// Open loads the data set name from SetDir(name). When the data are absent the
// error wraps fs.ErrNotExist, so that tests and benchmarks can skip on it and
// fail on anything else.
func Open(name string) (*Dataset, error) {
	dir, err := SetDir(name)
	if err != nil {
		return nil, err
	}
	return Load(dir, name)
}
