# The two commands of the README, plus pieces for development.
# `make demo`: install graphgram into .venv and run the MUTAG demo.
# `make test`: install graphgram with its test dependencies into .venv and run every test (Go and Python).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-go test-fuzz test-python venv install install-test dev

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

venv: $(PY)

install: venv
	$(PY) -m pip install -q .

install-test: venv
	$(PY) -m pip install -q ".[test]"

demo: install
	cd /tmp && $(abspath $(PY)) -m graphgram.demo

# Go tests run twice: portable build, and with the simd experiment (the AVX2
# kernels the Python extension is built with; their fallback otherwise).
test-go:
	go vet ./gokernel/... ./pybind/...
	go test ./gokernel/... ./pybind/...
	GOEXPERIMENT=simd go vet ./gokernel/... ./pybind/...
	GOEXPERIMENT=simd go test ./gokernel/... ./pybind/...

# Short fuzzing runs of the inputs that cross the boundary: batch decoding,
# base-kernel expressions, octile packing and node reordering.
FUZZTIME ?= 10s
test-fuzz:
	go test -run '^$$' -fuzz '^FuzzUnpack$$' -fuzztime $(FUZZTIME) ./gokernel/graph
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./gokernel/microkernel
	go test -run '^$$' -fuzz '^FuzzPack$$' -fuzztime $(FUZZTIME) ./gokernel/octile
	go test -run '^$$' -fuzz '^FuzzReorder$$' -fuzztime $(FUZZTIME) ./gokernel/reorder

test-python: install-test
	$(PY) -m pytest -q -p no:cacheprovider tests

test: test-go test-fuzz test-python

# In-place build for development: edit Go or Python, rerun this, then pytest.
dev: venv
	$(PY) -m pip install -q -e ".[test]"
