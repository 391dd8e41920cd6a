module github.com/graphgram/graphgram

go 1.26.6

tool (
	github.com/go-python/gopy
	golang.org/x/tools/cmd/goimports
)

// gopy is a direct requirement: the extension code it generates (setup.py)
// imports its gopyh package (pybind/gopyh.go records that import).
require (
	github.com/go-python/gopy v0.4.10
	github.com/sbinet/npyio v0.6.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/campoy/embedmd v1.0.0 // indirect
	github.com/gonuts/commander v0.1.0 // indirect
	github.com/gonuts/flag v0.1.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261009151841-97e8ea77aa2a // indirect
	golang.org/x/tools v0.52.0 // indirect
)
