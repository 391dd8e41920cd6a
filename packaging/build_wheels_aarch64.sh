#!/usr/bin/env bash
# Cross-build graphgram's Linux aarch64 wheels (manylinux_2_17_aarch64, CPU only) with
# zig, check them as the x86-64 ones are, and test each under qemu-user with Debian's
# arm64 CPython of its version, installed from the wheel file: the wheel smoke test,
# the demo, and the value tests of the pytest suite (every kernel against its
# references: dense solves, closed forms, GraKeL's aarch64 wheel, one call on all graphs).
#
#   packaging/build_wheels_aarch64.sh                       # = make wheels-aarch64
#   AARCH64_PYTHONS=3.11 packaging/build_wheels_aarch64.sh  # one version (CI)
#
# The versions are those Debian ships for arm64, each with its pyconfig.h (from
# libpython3.X-dev) and an interpreter to test with: 3.9 (bullseye), 3.11 (bookworm),
# 3.13 (trixie). CPython 3.10 and 3.12 have no arm64 build in any Debian release, so
# they get no aarch64 wheel (their users build the sdist).
#
# Needs: qemu-aarch64-static (apt: qemu-user-static), apt-get (Debian's arm64 packages
# are fetched with a private apt configuration under build/apt-<suite> and unpacked
# into build/arm64-root-cpXY, never installed: no `dpkg --add-architecture`), the
# host's CPython of each version (pyenv's are found), Go.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
PLAT=manylinux_2_17_aarch64
TOOLS=$ROOT/build/wheeltools
LOGS=$ROOT/build/wheel-logs
PYTHONS=${AARCH64_PYTHONS:-"3.9 3.11 3.13"}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
# The emulated CPU: a Neoverse N1 (AWS Graviton2), not qemu's default "max", whose SME
# the OpenBLAS of scipy 1.18 (0.3.34) picks kernels for ("armv9sme"), and qemu 7.2's SME
# emulation returned wrong matrix products from them (LowRankGraphKernel's K(X, Y) off
# by up to 28x in test_call_independence under cp313, right with the generic kernels).
export QEMU_CPU=${QEMU_CPU:-neoverse-n1}

say() { printf '== %s\n' "$*"; }
die() { printf 'build_wheels_aarch64: error: %s\n' "$*" >&2; exit 1; }

command -v qemu-aarch64-static >/dev/null || die "needs qemu-aarch64-static (apt-get install qemu-user-static)"
command -v go >/dev/null || die "needs the Go toolchain on PATH"
[ -x "$TOOLS/bin/python" ] || die "needs the wheel tools of packaging/build_wheels.sh in $TOOLS (make wheels-build once)"
. packaging/lib.sh  # the scripts run from the repository root (cd above)
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/graphgram/_version.py)
mkdir -p "$DIST" "$LOGS"
RUNDIR=$(mktemp -d)
trap 'rm -rf "$RUNDIR"' EXIT

debian_suite() {  # the Debian release whose arm64 CPython is version $1
    case $1 in
        3.9) echo bullseye ;; 3.11) echo bookworm ;; 3.13) echo trixie ;;
        *) die "no Debian release ships an arm64 CPython $1 (aarch64 wheels: 3.9, 3.11, 3.13)" ;;
    esac
}

# Debian's arm64 CPython $1 and the libraries it loads (its packages' dependencies as
# apt resolves them for that release, and libstdc++ for numpy and scipy) unpacked into
# $2; apt's state stays in build/apt-<suite>.
arm64_sysroot() {
    local v=$1 sysroot=$2 suite aptdir debs
    suite=$(debian_suite "$v")
    aptdir=$ROOT/build/apt-$suite
    debs=$aptdir/debs
    local apt=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o Dir::Etc::SourceParts=/dev/null
               -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache" -o Dir::State::status=/dev/null
               -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o APT::Sandbox::User=root -qq)
    say "cp${v/./} aarch64: Debian $suite's arm64 python$v, unpacked into $sysroot"
    rm -rf "$aptdir" "$sysroot"
    mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$debs" "$sysroot"
    echo "deb [arch=arm64] http://deb.debian.org/debian $suite main" >"$aptdir/sources.list"
    apt-get "${apt[@]}" update >/dev/null || die "apt-get update of Debian $suite (arm64) failed"
    local pkgs
    pkgs=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances "python$v-minimal" "libpython$v-stdlib" "libpython$v-dev" libstdc++6 | grep -v '^ \|^<' | sort -u)
    (cd "$debs" && apt-get "${apt[@]}" download $pkgs >/dev/null) || die "apt-get download from Debian $suite failed"
    for f in "$debs"/*.deb; do dpkg -x "$f" "$sysroot"; done
    # Merged /usr (trixie): the packages ship /usr/lib/ld-linux-aarch64.so.1 and
    # base-files, not unpacked here, makes /lib the link to it.
    [ -e "$sysroot/lib" ] || ln -s usr/lib "$sysroot/lib"
}

build_and_test() {
    local v=$1 tag=cp${1/./} py sysroot inc raw whl log site t0
    py=$(find_python "$v")
    sysroot=$ROOT/build/arm64-root-$tag
    [ -x "$sysroot/usr/bin/python$v" ] || arm64_sysroot "$v" "$sysroot"
    local arm64py=(qemu-aarch64-static -L "$sysroot" "$sysroot/usr/bin/python$v")
    local about
    about=$("${arm64py[@]}" -c 'import platform, sys; print(sys.version.split()[0], platform.machine())') ||
        die "Debian's arm64 python$v does not run under qemu-aarch64 -L $sysroot"
    say "$tag aarch64: arm64 CPython $about"
    inc=$sysroot/usr/include
    [ -f "$inc/aarch64-linux-gnu/python$v/pyconfig.h" ] || die "no arm64 pyconfig.h in $inc (libpython$v-dev:arm64)"
    # Debian's pyconfig.h wrapper includes <aarch64-linux-gnu/python3.X/pyconfig.h>: a
    # folder holding that alone, not all of usr/include, whose glibc headers (newer
    # releases unpack libc6-dev) would displace zig's glibc 2.17 ones.
    local pyinc=$sysroot/pyinclude
    mkdir -p "$pyinc/aarch64-linux-gnu"
    ln -sfn "$inc/aarch64-linux-gnu/python$v" "$pyinc/aarch64-linux-gnu/python$v"
    # CPython 3.9's Python.h includes <crypt.h> (libcrypt's, which zig's glibc lacks);
    # it only declares crypt(3).
    if grep -q '<crypt.h>' "$inc/python$v/Python.h"; then
        ln -sfn "$inc/crypt.h" "$pyinc/crypt.h"
    fi

    # The wheel: setup.py cross-compiles the Go extension (GOARCH=arm64, the arm64
    # headers) with zig targeting glibc 2.17 on aarch64; the rest of the wheel is the same.
    local RAW=$ROOT/build/wheels-raw-aarch64/$tag
    rm -rf "$RAW" && mkdir -p "$RAW"
    rm -f "$DIST"/graphgram-"$VERSION"-"$tag"-*aarch64*.whl
    log=$LOGS/$tag-aarch64.log
    t0=$(date +%s)
    raw=$(GRAPHGRAM_CROSS_GOARCH=arm64 GRAPHGRAM_CROSS_INCLUDE="$inc/python$v:$pyinc" \
        GRAPHGRAM_CROSS_EXT_SUFFIX=".cpython-${tag#cp}-aarch64-linux-gnu.so" cross_wheel "$py" "$RAW" "$log" linux_aarch64)
    # auditwheel's manylinux check and tag. (auditwheel offers the aarch64 policies by name only on aarch64: "auto" picks the
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
    local pipflags=(-q --only-binary=:all: --python-version "$v" --implementation cp --platform manylinux_2_28_aarch64
                    --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 --target "$site")
    say "$tag aarch64: pip install --platform manylinux_2_28_aarch64 --target $site"
    "$py" -m pip install "${pipflags[@]}" "$whl" || die "pip install of the aarch64 wheel and its dependencies failed"
    local run=$RUNDIR/$tag
    mkdir -p "$run"
    cp tests/wheel_smoke.py tests/wheel_smoke_golden.json "$run/"
    say "$tag aarch64: smoke test under qemu-aarch64 ($sysroot/usr/bin/python$v)"
    (cd "$run" && PYTHONPATH=$site PYTHONNOUSERSITE=1 "${arm64py[@]}" wheel_smoke.py)
    say "$tag aarch64: demo under qemu-aarch64"
    (cd "$run" && PYTHONPATH=$site PYTHONNOUSERSITE=1 "${arm64py[@]}" -m graphgram.demo)

    # The value tests, from a copy of tests/ (and the golden file they share with Go),
    # against the installed wheel. Data sets: $GRAPHGRAM_DATASETS, else the checkout's.
    say "$tag aarch64: value tests under qemu-aarch64 (pytest)"
    # GraKeL has no aarch64 wheel for every CPython (none for 3.13 as of 0.1.10).
    stage_value_tests "$py" "$run" "$tag aarch64" "${pipflags[@]}"
    local datasets=${GRAPHGRAM_DATASETS:-$(dirname "$ROOT")/shared/datasets}
    t0=$(date +%s)
    # AARCH64_TESTS: the test files (the default: about 3 minutes under emulation here; the
    # shortest-path tests against GraKeL add about 7: AARCH64_TESTS="... tests/test_shortest_path.py").
    local tests=${AARCH64_TESTS:-"tests/test_marginalized.py tests/test_random_walk.py tests/test_explicit.py
        tests/test_call_independence.py tests/test_properties.py tests/test_graph.py tests/test_microkernels.py"}
    # shellcheck disable=SC2086 # a list of files
    (cd "$run/repo" && GRAPHGRAM_DATASETS=$datasets PYTHONPATH=$site PYTHONNOUSERSITE=1 "${arm64py[@]}" -m pytest -q \
        -p no:cacheprovider --durations=5 $tests)
    say "$tag aarch64: value tests passed in $(( $(date +%s) - t0 )) s"
}

export ZIG_PYTHON=$TOOLS/bin/python ZIG_TARGET=aarch64-linux-gnu.2.17 CC=$ROOT/packaging/zcc
unset GRAPHGRAM_CUDA GRAPHGRAM_CUDA_PREBUILT
export PATH=$TOOLS/bin:$PATH
for v in $PYTHONS; do
    debian_suite "$v" >/dev/null
    build_and_test "$v"
done
say "aarch64 wheels built and tested: $PYTHONS"
