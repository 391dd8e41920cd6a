//go:build gopy

package pybind

// The extension code gopy generates from this package (setup.py's build) imports
// gopyh, which no file of the tree does. This file, which no build selects (no
// build sets the gopy tag), records that import, so that `go mod vendor` puts
// gopyh into the sdist's vendor/ (the offline source build) and `go mod tidy`
// keeps gopy a direct requirement.
import _ "github.com/go-python/gopy/gopyh"
