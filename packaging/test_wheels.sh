#!/usr/bin/env bash
# Install each built wheel into a fresh virtual environment with neither Go nor a C
# compiler on PATH, then run the wheel smoke test and the demo from outside the source tree.
#
#   packaging/test_wheels.sh                        # every Python of PYTHONS (default 3.9 ... 3.13)
#   PYTHONS="3.11 3.13" packaging/test_wheels.sh
#
# The wheels come from dist/ (packaging/build_wheels.sh). Venvs: build/wheel-venvs/cpXY.
# Every step runs with PATH set to the venv's bin/ alone (the smoke test checks that go,
# cc, gcc, clang and zig are not found). Once, it also checks that the smoke test fails
# on golden values off by 2e-9 relative: a smoke test that cannot fail tests nothing.
# A wheel that ships libggcuda.so (CUDA=1 builds) is also checked with
# tests/wheel_cuda_check.py: the shipped library loads and, without a GPU, 'auto' is
# the CPU and 'cuda' names the CUDA error; then the wheel's GPU path runs against the
# host-emulated library (cuda/build.py --emulated, built here with g++) and must agree
# with its CPU path.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHONS=${PYTHONS:-"3.9 3.10 3.11 3.12 3.13"}
DIST=${DIST:-$ROOT/dist}
VENVS=$ROOT/build/wheel-venvs
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

say() { printf '== %s\n' "$*"; }
die() { printf 'test_wheels: error: %s\n' "$*" >&2; exit 1; }

. packaging/lib.sh  # the scripts run from the repository root (cd above)

VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/graphgram/_version.py)
# The smoke test and its golden values are copied out of the source tree so that nothing
# from it can be imported.
RUNDIR=$(mktemp -d)
trap 'rm -rf "$RUNDIR"' EXIT
cp tests/wheel_smoke.py tests/wheel_smoke_golden.json tests/wheel_cuda_check.py "$RUNDIR/"
EMULATED=$ROOT/build/cuda-emu/libggcuda_emu.so
write_perturbed_golden python3 "$RUNDIR"

passed=0 failed=0 negative_done=0 emulated_built=0
for v in $PYTHONS; do
    tag=cp${v/./}
    whl=$(ls "$DIST"/graphgram-"$VERSION"-"$tag"-*manylinux*x86_64.whl 2>/dev/null | head -n 1 || true)
    [ -n "$whl" ] || die "no $tag wheel in $DIST (run packaging/build_wheels.sh first)"
    py=$(find_python "$v")
    venv=$VENVS/$tag
    rm -rf "$venv"
    "$py" -m venv "$venv"
    clean=(env PATH="$venv/bin" "$venv/bin/python")
    say "$tag: installing $(basename "$whl") into a fresh venv, PATH=$venv/bin (no go, no cc)"
    if ! (cd "$RUNDIR" && "${clean[@]}" -m pip install -q "$whl"); then
        failed=$((failed + 1)); echo "FAIL $tag: pip install"; continue
    fi
    say "$tag: wheel smoke test"
    if (cd "$RUNDIR" && "${clean[@]}" wheel_smoke.py --no-toolchain); then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL $tag: wheel smoke test"
    fi
    say "$tag: demo (python -m graphgram.demo)"
    if (cd "$RUNDIR" && "${clean[@]}" -m graphgram.demo); then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL $tag: demo"
    fi
    if python3 -c "import sys, zipfile; sys.exit('graphgram/libggcuda.so' not in zipfile.ZipFile(sys.argv[1]).namelist())" "$whl"; then
        say "$tag: the wheel's CUDA library (wheel_cuda_check.py)"
        if (cd "$RUNDIR" && "${clean[@]}" wheel_cuda_check.py); then
            passed=$((passed + 1))
        else
            failed=$((failed + 1)); echo "FAIL $tag: wheel CUDA check"
        fi
        if [ "$emulated_built" = 0 ]; then
            emulated_built=1
            python3 cuda/build.py --emulated --out "$(dirname "$EMULATED")" || die "cannot build the emulated CUDA library"
        fi
        say "$tag: the wheel's GPU path on the emulated CUDA library"
        if (cd "$RUNDIR" && env GRAPHGRAM_CUDA_LIB="$EMULATED" "${clean[@]}" wheel_cuda_check.py --emulated); then
            passed=$((passed + 1))
        else
            failed=$((failed + 1)); echo "FAIL $tag: wheel GPU path on the emulated library"
        fi
    fi
    if [ "$negative_done" = 0 ]; then
        negative_done=1
        say "$tag: the smoke test must fail on golden values perturbed by 2e-9 relative"
        if (cd "$RUNDIR" && "${clean[@]}" wheel_smoke.py --golden perturbed_golden.json >"$RUNDIR/neg.log" 2>&1); then
            cat "$RUNDIR/neg.log"; failed=$((failed + 1)); echo "FAIL $tag: smoke test passed against wrong golden values"
        elif grep -q '^FAIL MUTAG Gram block' "$RUNDIR/neg.log"; then
            grep -E '^FAIL' "$RUNDIR/neg.log" | sed 's/^/   (expected) /'
            passed=$((passed + 1))
        else
            cat "$RUNDIR/neg.log"; failed=$((failed + 1)); echo "FAIL $tag: smoke test failed, but not on the Gram block"
        fi
    fi
done
# A statically linked CPython has no libpython for an extension to load (conda's and uv's
# are built so; so is Debian's /usr/bin/python3.X): the case where a wheel that links
# libpython fails. Where one of the versions tested is there, the smoke test runs under it too.
for v in $PYTHONS; do
    tag=cp${v/./}
    sp=/usr/bin/python$v
    [ -x "$sp" ] && "$sp" -c "import venv, ensurepip" 2>/dev/null || continue
    if ldd "$sp" | grep -q libpython; then continue; fi
    whl=$(ls "$DIST"/graphgram-"$VERSION"-"$tag"-*manylinux*x86_64.whl | head -n 1)
    venv=$VENVS/$tag-static
    rm -rf "$venv"
    "$sp" -m venv "$venv"
    clean=(env PATH="$venv/bin" "$venv/bin/python")
    say "$tag: statically linked $sp ($("$sp" -V 2>&1), no libpython): install and smoke test"
    if (cd "$RUNDIR" && "${clean[@]}" -m pip install -q "$whl" && "${clean[@]}" wheel_smoke.py --no-toolchain); then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL $tag: wheel under the statically linked $sp"
    fi
done
echo "wheel tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
