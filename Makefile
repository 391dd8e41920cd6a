# The two commands of the README, plus pieces for development.
# `make demo`: install graphgram into .venv and run the MUTAG demo.
# `make test`: install graphgram with its test dependencies into .venv and run every test (Go and Python).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-go test-python venv install install-test dev cuda test-cuda-host test-cuda-emu

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

test-python: install-test
	$(PY) -m pytest -q -p no:cacheprovider tests

test: test-go test-python

# In-place build for development: edit Go or Python, rerun this, then pytest.
dev: venv
	$(PY) -m pip install -q -e ".[test]"

# CUDA backend (cuda/README.md). `make cuda` builds cuda/build/libggcuda.so,
# pip-installing nvcc into .cuda-toolkit/ when none is found; no GPU needed.
# `make test-cuda-host` then runs everything about it that needs no GPU.
cuda:
	$(PYTHON) cuda/build.py --install-toolkit

test-cuda-host: cuda
	go vet ./cuda/... && go vet -tags cuda ./cuda/...
	go test ./cuda/...
	go test -tags cuda ./cuda/
	$(PYTHON) -m unittest discover -s cuda -p test_build.py

# The GPU suite against libggcuda_emu.so: the same C API and kernels built by
# g++, kernels on host threads, CUDA runtime mocked (cuda/emu); small sizes.
test-cuda-emu:
	$(PYTHON) cuda/build.py --emulated --out cuda/build
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) GGCUDA_SHORT=1 go test -count=1 -timeout 30m -tags cuda -run TestGPU ./cuda/
