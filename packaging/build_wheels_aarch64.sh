#!/usr/bin/env bash
# Cross-build graphgram's Linux aarch64 wheel (manylinux_2_17_aarch64, CPU only) with
# zig, check it as the x86-64 ones are, and test it under qemu-user with Debian's
# arm64 CPython, installed from the wheel file: the wheel smoke test, the demo, and
# the value tests of the pytest suite (every kernel against its references: dense
# solves, closed forms, GraKeL's aarch64 wheel, one call on all graphs).
#
#   packaging/build_wheels_aarch64.sh      # = make wheels-aarch64; CPython 3.11
#
# Needs: qemu-aarch64-static (apt: qemu-user-static), apt-get with the arm64
# architecture (`dpkg --add-architecture arm64 && apt-get update`: Debian's arm64
# python3.11 packages are unpacked into build/arm64-root, never installed), the
# host's CPython 3.11 (pyenv's is found), Go. Debian bookworm has CPython 3.11
# alone for arm64, so 3.11 is the version built and tested.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
PLAT=manylinux_2_17_aarch64
TOOLS=$ROOT/build/wheeltools
LOGS=$ROOT/build/wheel-logs
RAW=$ROOT/build/wheels-raw-aarch64
SYSROOT=$ROOT/build/arm64-root
v=3.11
tag=cp311
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

say() { printf '== %s\n' "$*"; }
die() { printf 'build_wheels_aarch64: error: %s\n' "$*" >&2; exit 1; }

command -v qemu-aarch64-static >/dev/null || die "needs qemu-aarch64-static (apt-get install qemu-user-static)"
command -v go >/dev/null || die "needs the Go toolchain on PATH"
[ -x "$TOOLS/bin/python" ] || die "needs the wheel tools of packaging/build_wheels.sh in $TOOLS (make wheels-build once)"
. packaging/lib.sh  # the scripts run from the repository root (cd above)
py=$(find_python "$v")
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/graphgram/_version.py)
mkdir -p "$DIST" "$LOGS"

# Debian's arm64 CPython 3.11 and the libraries it loads, unpacked (not installed).
PKGS="python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11-dev libc6 libexpat1 zlib1g
      libffi8 libbz2-1.0 liblzma5 libssl3 libcrypt1 libuuid1 libncursesw6 libtinfo6 libreadline8 libsqlite3-0
      libgcc-s1 libstdc++6 libnsl2 libtirpc3 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libcom-err2 libkrb5support0
      libkeyutils1 libzstd1"
if [ ! -x "$SYSROOT/usr/bin/python3.11" ]; then
    say "arm64 CPython: apt-get download of Debian's arm64 packages into $SYSROOT"
    debs=$ROOT/build/arm64-debs
    rm -rf "$debs" "$SYSROOT"
    mkdir -p "$debs" "$SYSROOT"
    for p in $PKGS; do
        (cd "$debs" && apt-get download -qq "$p:arm64" >/dev/null 2>&1) ||
            die "apt-get download $p:arm64 failed (dpkg --add-architecture arm64 && apt-get update first)"
    done
    for f in "$debs"/*.deb; do dpkg -x "$f" "$SYSROOT"; done
fi
arm64py=(qemu-aarch64-static -L "$SYSROOT" "$SYSROOT/usr/bin/python3.11")
say "arm64 CPython: $("${arm64py[@]}" -c 'import platform, sys; print(sys.version.split()[0], platform.machine())')"
inc=$SYSROOT/usr/include
[ -f "$inc/aarch64-linux-gnu/python3.11/pyconfig.h" ] || die "no arm64 pyconfig.h in $inc (libpython3.11-dev:arm64)"

# The wheel: setup.py cross-compiles the Go extension (GOARCH=arm64, the arm64
# headers: Debian's pyconfig.h wrapper includes <aarch64-linux-gnu/python3.11/...>)
# with zig targeting glibc 2.17 on aarch64; the rest of the wheel is the same.
export ZIG_PYTHON=$TOOLS/bin/python ZIG_TARGET=aarch64-linux-gnu.2.17 CC=$ROOT/packaging/zcc
export GRAPHGRAM_CROSS_GOARCH=arm64 GRAPHGRAM_CROSS_INCLUDE="$inc/python3.11:$inc"
export GRAPHGRAM_CROSS_EXT_SUFFIX=.cpython-311-aarch64-linux-gnu.so
unset GRAPHGRAM_CUDA GRAPHGRAM_CUDA_PREBUILT
export PATH=$TOOLS/bin:$PATH
rm -rf "$RAW" && mkdir -p "$RAW"
rm -f "$DIST"/graphgram-"$VERSION"-"$tag"-*aarch64*.whl
log=$LOGS/$tag-aarch64.log
t0=$(date +%s)
# From a fresh sdist, so that nothing built in the checkout for this machine (an
# editable install's x86-64 extension) can slip into the wheel.
"$TOOLS/bin/python" -m build --sdist --outdir "$RAW/sdist" . >"$log" 2>&1 || { tail -n 40 "$log"; die "sdist failed (log: $log)"; }
say "$tag aarch64: building from $(basename "$RAW"/sdist/*.tar.gz) with $py, CC=zig cc -target $ZIG_TARGET"
"$py" -m pip wheel -v --no-deps -w "$RAW" "$RAW"/sdist/graphgram-*.tar.gz >>"$log" 2>&1 ||
    { tail -n 40 "$log"; die "pip wheel failed (log: $log)"; }
raw=$(ls "$RAW"/graphgram-*.whl)
# pip tags the wheel for this machine; the tag of the machine it was built for, then
# auditwheel's manylinux check and tag.
"$TOOLS/bin/python" -m wheel tags --remove --platform-tag linux_aarch64 "$raw" >/dev/null
raw=$(ls "$RAW"/graphgram-*linux_aarch64.whl)
# (auditwheel offers the aarch64 policies by name only on aarch64: "auto" picks the
# most compatible one the symbols allow, which must be $PLAT.)
auditwheel repair --plat auto --only-plat -w "$DIST" "$raw" >"$LOGS/$tag-aarch64.auditwheel.txt" 2>&1 ||
    { cat "$LOGS/$tag-aarch64.auditwheel.txt"; die "auditwheel repair failed"; }
whl=$(ls "$DIST"/graphgram-"$VERSION"-"$tag"-*aarch64*.whl)
case "$whl" in *"$PLAT"*) ;; *) die "auditwheel tagged $(basename "$whl"), not $PLAT";; esac
say "$tag aarch64: $(basename "$whl") built in $(( $(date +%s) - t0 )) s"
"$TOOLS/bin/python" packaging/check_wheel.py --max-glibc 2.17 "$whl"

# Installed from the wheel file, as pip on an aarch64 machine would, with numpy's
# and scipy's aarch64 wheels, into a folder the arm64 CPython reads; then the smoke
# test (the values against a dense solve's) and the demo, outside the source tree.
site=$ROOT/build/wheel-venvs/$tag-aarch64/site-packages
rm -rf "$(dirname "$site")"
say "$tag aarch64: pip install --platform manylinux_2_28_aarch64 --target $site"
"$py" -m pip install -q --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    --target "$site" "$whl" ||
    die "pip install of the aarch64 wheel and its dependencies failed"
RUNDIR=$(mktemp -d)
trap 'rm -rf "$RUNDIR"' EXIT
cp tests/wheel_smoke.py tests/wheel_smoke_golden.json "$RUNDIR/"
say "$tag aarch64: smoke test under qemu-aarch64 ($SYSROOT/usr/bin/python3.11)"
(cd "$RUNDIR" && PYTHONPATH=$site PYTHONNOUSERSITE=1 "${arm64py[@]}" wheel_smoke.py)
say "$tag aarch64: demo under qemu-aarch64"
(cd "$RUNDIR" && PYTHONPATH=$site PYTHONNOUSERSITE=1 "${arm64py[@]}" -m graphgram.demo)

# The value tests, from a copy of tests/ (and the golden file they share with Go),
# against the installed wheel. Data sets: $GRAPHGRAM_DATASETS, else the checkout's.
say "$tag aarch64: value tests under qemu-aarch64 (pytest)"
"$py" -m pip install -q --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    --target "$site" --upgrade pytest hypothesis grakel >/dev/null || die "pip install of pytest, hypothesis, grakel failed"
mkdir -p "$RUNDIR/repo/gokernel/mgk"
cp -r tests "$RUNDIR/repo/"
cp -r gokernel/mgk/testdata "$RUNDIR/repo/gokernel/mgk/"
datasets=${GRAPHGRAM_DATASETS:-$(dirname "$ROOT")/shared/datasets}
t0=$(date +%s)
# AARCH64_TESTS: the test files (the default: about 3 minutes under emulation here; the
# shortest-path tests against GraKeL add about 7: AARCH64_TESTS="... tests/test_shortest_path.py").
tests=${AARCH64_TESTS:-"tests/test_marginalized.py tests/test_random_walk.py tests/test_explicit.py
    tests/test_call_independence.py tests/test_properties.py tests/test_graph.py tests/test_microkernels.py"}
# shellcheck disable=SC2086 # a list of files
(cd "$RUNDIR/repo" && GRAPHGRAM_DATASETS=$datasets PYTHONPATH=$site PYTHONNOUSERSITE=1 "${arm64py[@]}" -m pytest -q \
    -p no:cacheprovider --durations=5 $tests)
say "$tag aarch64: value tests passed in $(( $(date +%s) - t0 )) s"
