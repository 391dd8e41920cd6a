#!/usr/bin/env bash
# What can be checked of macOS here (#33): the Go core, pybind and cgo compiled for
# darwin/arm64 and darwin/amd64 with zig's clang, into a C archive of a small cgo
# program that calls pybind (a C archive is not linked: linking a Mach-O library needs
# Apple's SDK, CoreFoundation among it, which cannot be had here). gopy's generated
# wrapper is not compiled (it needs a Mac's pyconfig.h); setup.py links it on a Mac
# with -undefined dynamic_lookup. Nothing here has run on a Mac.
#
#   packaging/check_darwin.sh            # = make check-darwin; about 30 s
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/build/wheeltools
[ -x "$TOOLS/bin/python" ] || { echo "check_darwin: needs the wheel tools of packaging/build_wheels.sh in $TOOLS" >&2; exit 1; }
# Inside the module (for its imports), under build/_* (out of ./... patterns).
shim=$ROOT/build/_darwincheck
rm -rf "$shim" && mkdir -p "$shim"
cat >"$shim/main.go" <<'GO'
package main

import "C"

import "github.com/graphgram/graphgram/pybind"

//export ggVersion
func ggVersion() *C.char { return C.CString(pybind.Version()) }

func main() {}
GO
for target in aarch64-macos:arm64 x86_64-macos:amd64; do
    zig=${target%%:*} goarch=${target##*:}
    (cd "$shim" && GOOS=darwin GOARCH=$goarch GOEXPERIMENT=simd CGO_ENABLED=1 ZIG_PYTHON=$TOOLS/bin/python \
        ZIG_TARGET=$zig CC=$ROOT/packaging/zcc go build -buildmode=c-archive -o "$shim/graphgram-$goarch.a" .)
    syms=$(GOOS=darwin GOARCH=$goarch go tool nm "$shim/graphgram-$goarch.a")
    grep -q ' T _ggVersion$' <<<"$syms" ||
        { echo "check_darwin: darwin/$goarch archive lacks _ggVersion" >&2; exit 1; }
    echo "ok   darwin/$goarch: the Go core, pybind and cgo compile ($(du -k "$shim/graphgram-$goarch.a" | cut -f1) KiB archive)"
done
# Every package's own code (tests too) for both, without cgo.
for goarch in arm64 amd64; do
    GOOS=darwin GOARCH=$goarch GOEXPERIMENT=simd go vet ./gokernel/... ./pybind/
    echo "ok   darwin/$goarch: go vet ./gokernel/... ./pybind/ (tests included)"
done
