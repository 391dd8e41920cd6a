#!/usr/bin/env bash
# Build graphgram's CUDA library and GPU test suite, and run the suite on a
# machine with a GPU.
#
#   cuda/gpu_suite.sh build  # anywhere (no GPU needed): nvcc from pip into
#                            # .cuda-toolkit/ if none is found, libggcuda.so,
#                            # the Go test binary and compute-sanitizer, all
#                            # under cuda/build/ and .cuda-toolkit/
#   cuda/gpu_suite.sh run    # on the GPU machine: the suite in its short
#                            # form and the selfcheck, the short suite's
#                            # correctness tests under compute-sanitizer
#                            # (memcheck, racecheck, synccheck, initcheck),
#                            # the GPU-vs-CPU benchmarks, then the full
#                            # suite; logs and one summary, report.md, to
#                            # $OUT (or cuda/build/gpu-logs)
#   cuda/gpu_suite.sh measure  # on the GPU machine: issue #50's timings,
#                            # CPU against GPU and what device="auto" picks
#                            # (cuda/autodevice TestMeasureIssue50), to
#                            # $OUT/issue50.json; the TU sets from
#                            # $GRAPHGRAM_DATASETS, by default cuda/build/datasets
#                            # (copy NCI1 and PROTEINS there before the
#                            # device call: cuda/build travels with it)
#   cuda/gpu_suite.sh        # both, on a GPU machine with Go and Python
#
# `run` needs neither Go nor nvcc: the build products are self-contained
# (static CUDA runtime; the test binary only needs libc and libdl). It fails
# when no device is usable rather than reporting a suite of skips.
#
# Each phase of `run` runs under a wall-clock limit, so that one device
# lease returns every phase's log even if one phase hangs: GG_SHORT_S (the
# short suite, default 300), GG_SANITIZER_S (each sanitizer tool, default
# 900), GG_BENCH_S (the benchmarks, default 1200), GG_SUITE_S (the full suite,
# default 1200). A phase cut off is a failure and report.md says so. Within a
# 15-minute lease (2026-11-27, H100: short suite 3 s, memcheck, synccheck and
# initcheck under 30 s each, racecheck over 120 s, benchmarks about 25 s):
#   GG_SANITIZER_S=60 GG_BENCH_S=90 GG_SUITE_S=200 cuda/gpu_suite.sh run
set -euo pipefail
cd "$(dirname "$0")/.."
B=cuda/build
TK=.cuda-toolkit

build() {
    python3 cuda/build.py --install-toolkit --out "$B"
    go test -c -tags cuda -o "$B/cuda.test" ./cuda
    go test -c -tags cuda -o "$B/selfcheck.test" ./cuda/selfcheck
    go test -c -tags cuda -o "$B/autodevice.test" ./cuda/autodevice
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
    # The whole suite in its short form first (about 3 s on an H100): every
    # test reaches the device even when a lease is too short for the full one.
    (cd cuda && GGCUDA_SHORT=1 GGCUDA_TEST_LIB=$lib timeout "${GG_SHORT_S:-300}" "$test" -test.v -test.count=1) 2>&1 |
        tee "$logs/short.txt" || { echo "gpu_suite: the short suite failed or was cut off (exit ${PIPESTATUS[0]}; 124: past GG_SHORT_S)" | tee -a "$logs/short.txt"; rc=1; }
    # The device self-validation that graphgram runs on first use (cuda/selfcheck).
    (cd cuda/selfcheck && GGCUDA_TEST_LIB=$lib timeout 300 "$(realpath "../../$B/selfcheck.test")" -test.v -test.count=1) 2>&1 |
        tee -a "$logs/short.txt" || { echo "gpu_suite: the selfcheck tests failed (exit ${PIPESTATUS[0]})" | tee -a "$logs/short.txt"; rc=1; }
    if grep -q -- "--- SKIP: TestGPUGramAgainstCPU" "$logs/short.txt"; then
        echo "gpu_suite: the GPU tests were skipped: no usable device (see $logs/short.txt)"
        report "$logs" "no usable device: the suite skipped itself"
        exit 1
    fi
    local san
    san=$(command -v compute-sanitizer || find "$(pwd)/$TK" -path '*bin/compute-sanitizer' -type f 2>/dev/null | head -1 || true)
    if [ -z "$san" ]; then
        echo "gpu_suite: compute-sanitizer not found; sanitizer runs skipped" | tee "$logs/sanitizer.txt"
    else
        for tool in memcheck racecheck synccheck initcheck; do
            echo "== compute-sanitizer --tool $tool" | tee -a "$logs/sanitizer.txt"
            (cd cuda && GGCUDA_SANITIZE=1 GGCUDA_TEST_LIB=$lib timeout "${GG_SANITIZER_S:-900}" "$san" --tool "$tool" --error-exitcode 9 \
                "$test" -test.count=1 -test.run 'TestGPU(GramAgainstCPU|GradAgainstCPU|PersistentAndChunks|GradChunks|Unconverged|Staging$|Nodal|Diag|ShortestPath$|ShortestPathStreams|Explicit)') \
                >>"$logs/sanitizer.txt" 2>&1 || {
                local e=$?
                rc=1
                if [ "$e" = 124 ]; then echo "   CUT OFF ($tool)"; else echo "   FAILED ($tool)"; fi | tee -a "$logs/sanitizer.txt"
            }
            tail -3 "$logs/sanitizer.txt"
        done
    fi
    # The GPU against the CPU backend on the same inputs (gpu_bench_test.go).
    (cd cuda && GGCUDA_TEST_LIB=$lib timeout "${GG_BENCH_S:-1200}" "$test" -test.run '^$' -test.bench 'BenchmarkGPU' -test.benchtime 3x \
        -test.timeout 20m) 2>&1 | tee "$logs/bench.txt" || rc=1
    # The full suite last: on an H100 it needs more than 20 minutes (its
    # 300-550-node timing graphs and the 150-node suite graph are slow on the
    # device, and the CPU references take their share).
    (cd cuda && GGCUDA_TEST_LIB=$lib timeout "${GG_SUITE_S:-1200}" "$test" -test.v -test.count=1 -test.timeout 60m) 2>&1 |
        tee "$logs/suite.txt" || { echo "gpu_suite: the suite failed or was cut off (exit ${PIPESTATUS[0]}; 124: past GG_SUITE_S)" | tee -a "$logs/suite.txt"; rc=1; }
    report "$logs" ""
    exit $rc
}

# measure runs TestMeasureIssue50 under GG_MEASURE_S (default 420 s):
# GGCUDA_MEASURE_SETS and GGCUDA_MEASURE_NCI1 pass through.
measure() {
    local logs=${OUT:-$B/gpu-logs}
    mkdir -p "$logs"
    local lib data
    lib=$(realpath "$B/libggcuda.so")
    data=$(realpath -m "${GRAPHGRAM_DATASETS:-$B/datasets}")
    (cd cuda/autodevice && GGCUDA_MEASURE=1 GGCUDA_TEST_LIB=$lib GRAPHGRAM_DATASETS=$data \
        GGCUDA_MEASURE_OUT=$(realpath "$logs")/issue50.json timeout "${GG_MEASURE_S:-420}" \
        "$(realpath "../../$B/autodevice.test")" -test.run '^TestMeasureIssue50$' -test.v -test.count=1 -test.timeout 60m) 2>&1 |
        tee "$logs/measure.txt"
}

# report writes $1/report.md: the device, the suite's counts and failures,
# each sanitizer tool's result and the benchmarks (GPU time / CPU time).
report() {
    local logs=$1 note=$2 r=$1/report.md
    {
        echo "# graphgram GPU suite, $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo
        [ -n "$note" ] && echo "**$note**" && echo
        echo "## Device"
        echo
        echo '```'
        nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>/dev/null ||
            echo "nvidia-smi not available"
        grep -h -E 'gpu_test.go:[0-9]+: device [0-9]+: ' "$logs/short.txt" 2>/dev/null | sed 's/^ *gpu_test.go:[0-9]*: //' || true
        echo '```'
        echo
        echo "## Suite"
        echo
        local f
        for f in "$logs/short.txt" "$logs/suite.txt"; do
            echo "$(basename "$f" .txt):"
            if [ -f "$f" ]; then
                echo "tests: $(grep -c -- '^--- PASS' "$f") passed, $(grep -c -- '^--- FAIL' "$f") failed," \
                    "$(grep -c -- '^--- SKIP' "$f") skipped; subtests: $(grep -c -E -- '^ +--- PASS' "$f") passed," \
                    "$(grep -c -E -- '^ +--- FAIL' "$f") failed; result: $(grep -E '^(ok|FAIL|PASS)' "$f" | tail -1)"
                grep -E -- '--- FAIL|cut off' "$f" | sed 's/^ */    /' | head -50 || true
            else
                echo "not run"
            fi
            echo
        done
        echo
        echo "## compute-sanitizer"
        echo
        f=$logs/sanitizer.txt
        if [ -f "$f" ]; then
            local tool
            for tool in memcheck racecheck synccheck initcheck; do
                local part
                part=$(awk -v t="== compute-sanitizer --tool $tool" '$0 == t {on = 1; next} /^== compute-sanitizer/ {on = 0} on' "$f")
                if [ -z "$part" ]; then
                    echo "* $tool: not run"
                elif grep -q "CUT OFF ($tool)" "$f"; then
                    echo "* $tool: **cut off** after GG_SANITIZER_S: $(echo "$part" | grep -c -E 'Error|hazard') errors reported before that"
                elif grep -q "FAILED ($tool)" "$f"; then
                    echo "* $tool: **FAILED**: $(echo "$part" | grep -m1 'ERROR SUMMARY' || echo "$part" | grep -m1 -E 'FAIL|Error')"
                else
                    echo "* $tool: ok ($(echo "$part" | grep -m1 'ERROR SUMMARY' || echo 'no summary line'))"
                fi
            done
            grep -q "not found" "$f" && head -1 "$f" || true
        else
            echo "not run"
        fi
        echo
        echo "## Benchmarks (ns/op, 3 runs each; GPU wall time includes uploads and downloads)"
        echo
        f=$logs/bench.txt
        if [ -f "$f" ] && grep -q '^BenchmarkGPU' "$f"; then
            echo "| benchmark | ns/op | CPU / this |"
            echo "|---|---|---|"
            awk '/^BenchmarkGPU/ {
                    name = $1; sub(/-[0-9]+$/, "", name); ns = $3
                    split(name, p, "/"); if (p[2] == "cpu") cpu[p[1]] = ns
                    names[++n] = name; v[name] = ns
                 }
                 END {
                    for (i = 1; i <= n; i++) {
                        split(names[i], p, "/"); c = cpu[p[1]]
                        printf "| %s | %.0f | %s |\n", names[i], v[names[i]], (c && v[names[i]]) ? sprintf("%.2f", c / v[names[i]]) : "-"
                    }
                 }' "$f"
            echo
            echo "Timing tests (CUDA events against the CPU, from the suite):"
            echo
            grep -E 'CPU [0-9.]+[mµn]?s.*(GPU|wall)' "$logs/suite.txt" 2>/dev/null | sed 's/^ */    /' | head -40 || true
        else
            echo "not run"
        fi
        echo
        echo "Logs: short.txt, suite.txt, sanitizer.txt, bench.txt, nvidia-smi.txt, ptxas.json."
    } >"$r"
    echo "gpu_suite: report in $r"
}

case "${1:-all}" in
build) build ;;
run) run ;;
measure) measure ;;
all) build && run ;;
*) echo "usage: $0 [build|run|measure]" >&2; exit 2 ;;
esac
