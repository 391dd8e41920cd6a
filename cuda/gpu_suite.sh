#!/usr/bin/env bash
# Build graphgram's CUDA library and GPU test suite, and run the suite on a
# machine with a GPU.
#
#   cuda/gpu_suite.sh build  # anywhere (no GPU needed): nvcc from pip into
#                            # .cuda-toolkit/ if none is found, libggcuda.so,
#                            # the Go test binary and compute-sanitizer, all
#                            # under cuda/build/ and .cuda-toolkit/
#   cuda/gpu_suite.sh run    # on the GPU machine: the suite, then the suite's
#                            # correctness tests under compute-sanitizer
#                            # (memcheck, racecheck, synccheck, initcheck);
#                            # logs to $OUT (or cuda/build/gpu-logs)
#   cuda/gpu_suite.sh        # both, on a GPU machine with Go and Python
#
# `run` needs neither Go nor nvcc: the build products are self-contained
# (static CUDA runtime; the test binary only needs libc and libdl). It fails
# when no device is usable rather than reporting a suite of skips.
set -euo pipefail
cd "$(dirname "$0")/.."
B=cuda/build
TK=.cuda-toolkit

build() {
    python3 cuda/build.py --install-toolkit --out "$B"
    go test -c -tags cuda -o "$B/cuda.test" ./cuda
    if ! command -v compute-sanitizer >/dev/null && [ -z "$(find "$TK" -name compute-sanitizer -type f 2>/dev/null | head -1)" ]; then
        python3 -m pip install -q --target "$TK/sanitizer" nvidia-cuda-sanitizer-api ||
            echo "compute-sanitizer not installed; run will skip the sanitizer runs"
    fi
}

run() {
    local logs=${OUT:-$B/gpu-logs}
    mkdir -p "$logs"
    local lib test
    lib=$(realpath "$B/libggcuda.so")
    test=$(realpath "$B/cuda.test")
    (nvidia-smi || true) >"$logs/nvidia-smi.txt" 2>&1
    cp "$B/ptxas.json" "$logs/" 2>/dev/null || true
    local rc=0
    (cd cuda && GGCUDA_TEST_LIB=$lib "$test" -test.v -test.count=1 -test.timeout 20m) 2>&1 | tee "$logs/suite.txt" || rc=1
    if grep -q -- "--- SKIP: TestGPUGramAgainstCPU" "$logs/suite.txt"; then
        echo "gpu_suite: the GPU tests were skipped: no usable device (see $logs/suite.txt)"
        exit 1
    fi
    local san
    san=$(command -v compute-sanitizer || find "$(pwd)/$TK" -path '*bin/compute-sanitizer' -type f 2>/dev/null | head -1 || true)
    if [ -z "$san" ]; then
        echo "gpu_suite: compute-sanitizer not found; sanitizer runs skipped" | tee "$logs/sanitizer.txt"
    else
        for tool in memcheck racecheck synccheck initcheck; do
            echo "== compute-sanitizer --tool $tool" | tee -a "$logs/sanitizer.txt"
            (cd cuda && GGCUDA_SANITIZE=1 GGCUDA_TEST_LIB=$lib "$san" --tool "$tool" --error-exitcode 9 \
                "$test" -test.count=1 -test.run 'TestGPU(GramAgainstCPU|GradAgainstCPU|PersistentAndChunks|GradChunks|Unconverged|Staging$|Nodal|Diag|ShortestPath$|ShortestPathStreams|Explicit)') \
                >>"$logs/sanitizer.txt" 2>&1 || { rc=1; echo "   FAILED ($tool)" | tee -a "$logs/sanitizer.txt"; }
            tail -3 "$logs/sanitizer.txt"
        done
    fi
    exit $rc
}

case "${1:-all}" in
build) build ;;
run) run ;;
all) build && run ;;
*) echo "usage: $0 [build|run]" >&2; exit 2 ;;
esac
