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
// read: $GRAPHGRAM_DATASETS when it is set, else the first shared/datasets
// found in the working directory or one of its parents (a clone of the
// repository beside a shared/ folder finds it from any of its subfolders).
// The error, when neither exists, names the variable.
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
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "datasets")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no shared/datasets above %s; set $%s to the folder of the TU data sets: %w", wd, DirEnv, fs.ErrNotExist)
		}
	}
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
