#!/usr/bin/env bash
# The Go core's own tests compiled for linux/arm64 (GOEXPERIMENT=simd, as the wheels
# build it: the SIMD kernels fall back to their portable code there) and run under
# qemu-user, each in its package folder as `go test` runs it (#33). This is what
# caught Go fusing a*b + c*d into an FMA on arm64 (microkernel.Convolution lost its
# bit-for-bit symmetry), which x86-64 never does.
#
#   packaging/test_go_arm64.sh         # = make test-go-arm64; about 3 minutes here
#   GO_ARM64_PKGS="./gokernel/vec ./gokernel/mgk" packaging/test_go_arm64.sh   # some packages
#
# Needs Go and qemu-aarch64-static (apt: qemu-user-static); no arm64 sysroot (the
# tests are static Go binaries).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/build/arm64-gotests
command -v qemu-aarch64-static >/dev/null || { echo "test_go_arm64: needs qemu-aarch64-static (apt-get install qemu-user-static)" >&2; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"
export GOARCH=arm64 GOEXPERIMENT=simd CGO_ENABLED=0
# The emulated CPU, as for the aarch64 wheels (build_wheels_aarch64.sh says why).
export QEMU_CPU=${QEMU_CPU:-neoverse-n1}
pkgs=$(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ${GO_ARM64_PKGS:-./gokernel/... ./pybind/})
for dir in $pkgs; do
    rel=${dir#"$ROOT"/}
    go test -c -o "$OUT/${rel//\//_}.test" "./$rel"
done
echo "== test_go_arm64: $(echo "$pkgs" | wc -w) test binaries built for arm64; running under qemu-aarch64 (two at a time)"
datasets=${GRAPHGRAM_DATASETS:-$(dirname "$ROOT")/shared/datasets}
run() {  # one package's tests in its folder; prints its verdict line
    local dir=$1 rel=${1#"$ROOT"/} t0=$SECONDS
    if (cd "$dir" && GRAPHGRAM_DATASETS=$datasets qemu-aarch64-static "$OUT/${rel//\//_}.test" >"$OUT/${rel//\//_}.log" 2>&1); then
        echo "ok   $rel ($((SECONDS - t0)) s)"
    else
        echo "FAIL $rel ($((SECONDS - t0)) s):"; tail -n 30 "$OUT/${rel//\//_}.log"; return 1
    fi
}
export -f run
export ROOT OUT datasets
echo "$pkgs" | xargs -n1 -P2 bash -c 'run "$0"'
echo "== test_go_arm64: all passed"
