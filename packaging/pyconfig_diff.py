"""The macros CPython's headers test on which two Windows pyconfig.h files disagree,
as zig's MinGW-w64 x86-64 target (the Windows wheels' compiler) sees them.

    python packaging/pyconfig_diff.py INCLUDE A/pyconfig.h B/pyconfig.h [--allow NAME ...]

No Debian release ships CPython 3.10's or 3.12's source, so their Windows wheels
compile against their own Include/ with a neighbouring version's Windows pyconfig.h
(packaging/build_wheels_windows.sh). This checks that choice: the macros each
neighbour's file defines (``-E -dM``, with ``MS_WIN64`` defined as the build does) are
compared on the identifiers that appear in the code of INCLUDE's headers (comments
stripped). Prints each difference; exits 1 if one is not named by --allow.
Standard library and build/wheeltools' zig only.
"""

import argparse
import glob
import os
import re
import subprocess
import sys


def header_identifiers(include):
    """Every identifier in the code (not the comments) of the headers under include, but pyconfig.h."""
    ids = set()
    for path in glob.glob(os.path.join(include, "**", "*.h"), recursive=True):
        if os.path.basename(path) == "pyconfig.h":
            continue
        with open(path, errors="replace") as f:
            code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", f.read(), flags=re.S)
        ids |= set(re.findall(r"\b[A-Za-z_]\w*\b", code))
    return ids


def macros(pyconfig, zig_python):
    """name -> definition of every macro defined after including pyconfig (compiler's own too)."""
    out = subprocess.run(
        [zig_python, "-m", "ziglang", "cc", "-target", "x86_64-windows-gnu", "-DMS_WIN64=", "-E", "-dM",
         "-include", os.path.abspath(pyconfig), "-x", "c", os.devnull],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"#define (\w+)(\([^)]*\))? ?(.*)$", line)
        if m:
            found[m.group(1)] = (m.group(2) or "") + m.group(3)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("include")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--allow", nargs="*", default=[])
    ap.add_argument("--zig-python", default=os.environ.get("ZIG_PYTHON", sys.executable))
    args = ap.parse_args()
    ids = header_identifiers(args.include)
    a, b = macros(args.a, args.zig_python), macros(args.b, args.zig_python)
    differ = sorted(k for k in (set(a) | set(b)) & ids if a.get(k) != b.get(k))
    bad = [k for k in differ if k not in args.allow]
    for k in differ:
        print("%s %s: %r vs %r" % ("allowed" if k not in bad else "DIFFERS", k, a.get(k), b.get(k)))
    print("pyconfig_diff: %d of the %d identifiers of %s's headers differ, %d not allowed"
          % (len(differ), len(ids), args.include, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
