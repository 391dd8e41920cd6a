# Sourced by packaging's scripts (build_wheels.sh, test_wheels.sh, test_sdist.sh,
# build_wheels_aarch64.sh, build_wheels_windows.sh), which each define die and say.

# find_python V prints the path of CPython V: pyenv's newest V.x, else pythonV on
# PATH; else it dies saying where it looked.
find_python() {
    local v=$1 root=${PYENV_ROOT:-$HOME/.pyenv} p
    p=$(ls -d "$root"/versions/"$v".[0-9]*/bin/python"$v" 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$p" ] || p=$(command -v "python$v" || true)
    [ -n "$p" ] || die "no CPython $v found (looked in $root/versions and for python$v on PATH)"
    echo "$p"
}

# write_perturbed_golden PY DIR writes DIR/perturbed_golden.json: DIR's
# wheel_smoke_golden.json with one Gram entry off by 2e-9 relative, against which
# the smoke test must fail (a smoke test that cannot fail tests nothing).
write_perturbed_golden() {
    "$1" -c "
import json, sys
d = json.load(open(sys.argv[1])); d['K'][3][7] *= 1 + 2e-9
json.dump(d, open(sys.argv[2], 'w'))" "$2/wheel_smoke_golden.json" "$2/perturbed_golden.json"
}

# stage_value_tests PY RUN LABEL PIPFLAGS... prepares the value tests of a cross-built
# wheel: pytest, hypothesis and, where the platform has a wheel of it, GraKeL (the
# reference of the explicit-feature and shortest-path tests, whose tests skip without it)
# installed by pip PY with PIPFLAGS (the target's --platform, --target, ...), and a copy of
# tests/ and the golden file they share with Go in RUN/repo. LABEL ("cp311 aarch64") names
# the target in messages. Needs die, say.
stage_value_tests() {
    local py=$1 run=$2 label=$3
    shift 3
    "$py" -m pip install "$@" --upgrade pytest hypothesis >/dev/null || die "pip install of pytest, hypothesis failed"
    "$py" -m pip install "$@" --upgrade grakel >/dev/null 2>&1 ||
        say "$label: no wheel of GraKeL for it: the tests against GraKeL skip"
    mkdir -p "$run/repo/gokernel/mgk"
    cp -r tests "$run/repo/"
    cp -r gokernel/mgk/testdata "$run/repo/gokernel/mgk/"
}

# cross_wheel PY RAW LOG PLATFORM_TAG builds graphgram's wheel for another machine
# (CC, ZIG_TARGET and GRAPHGRAM_CROSS_* set by the caller) into the empty folder RAW
# with CPython PY, from a fresh sdist, so that nothing built in the checkout for this
# machine (an editable install's extension) can slip in; pip tags the wheel for this
# machine, so it is retagged PLATFORM_TAG. Prints the wheel's path; the build's output
# goes to LOG. Needs TOOLS (build/wheeltools) and die, say.
cross_wheel() {
    local py=$1 raw=$2 log=$3 plat=$4 whl
    "$TOOLS/bin/python" -m build --sdist --outdir "$raw/sdist" . >"$log" 2>&1 ||
        { tail -n 40 "$log" >&2; die "sdist failed (log: $log)"; }
    say "building from $(basename "$raw"/sdist/*.tar.gz) with $py, CC=zig cc -target $ZIG_TARGET" >&2
    "$py" -m pip wheel -v --no-deps -w "$raw" "$raw"/sdist/graphgram-*.tar.gz >>"$log" 2>&1 ||
        { tail -n 40 "$log" >&2; die "pip wheel failed (log: $log)"; }
    whl=$(ls "$raw"/graphgram-*.whl)
    "$TOOLS/bin/python" -m wheel tags --remove --platform-tag "$plat" "$whl" >/dev/null
    ls "$raw"/graphgram-*-"$plat".whl
}
