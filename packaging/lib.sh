# Sourced by packaging's scripts (build_wheels.sh, test_wheels.sh, test_sdist.sh,
# build_wheels_aarch64.sh), which each define die.

# find_python V prints the path of CPython V: pyenv's newest V.x, else pythonV on
# PATH; else it dies saying where it looked.
find_python() {
    local v=$1 root=${PYENV_ROOT:-$HOME/.pyenv} p
    p=$(ls -d "$root"/versions/"$v".[0-9]*/bin/python"$v" 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$p" ] || p=$(command -v "python$v" || true)
    [ -n "$p" ] || die "no CPython $v found (looked in $root/versions and for python$v on PATH)"
    echo "$p"
}
