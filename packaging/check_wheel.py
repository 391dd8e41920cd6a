"""Check built wheels: platform tag, and what their shared libraries need.

    python packaging/check_wheel.py [--max-glibc 2.17] [--expect-cuda] dist/graphgram-*.whl

For each wheel, every ELF file inside must have no libpython in its NEEDED entries
(an extension module leaves Python's symbols to the interpreter that imports it),
no RPATH/RUNPATH pointing outside the wheel, only libraries from the manylinux
policy in NEEDED, and no glibc symbol version newer than --max-glibc; the wheel's
file name must carry a manylinux tag no newer than that glibc. With --expect-cuda each
wheel must ship graphgram/libggcuda.so, exporting its C API (ggc_*) and nothing else
(the static C++ runtime inside must stay private).

A win_amd64 wheel (packaging/build_wheels_windows.sh) holds PE files instead: each
must be built for x86-64, and import only DLLs of Windows itself and the python3XY.dll
of its cpXY tag; its extension must be named .cpXY-win_amd64.pyd, import that DLL and
export PyInit_<name>; no ELF file may be in it. Prints one line per wheel and exits 1
if any check fails. Needs pyelftools (in build/wheeltools).
"""

import argparse
import io
import re
import struct
import sys
import zipfile

from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection
from elftools.elf.sections import SymbolTableSection

import pe

# The libraries manylinux2014 (and every later policy) lets a wheel link from the system.
ALLOWED_NEEDED = {
    "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1",
    "libc.so.6", "libnsl.so.1", "libutil.so.1", "libpthread.so.0", "libresolv.so.2",
    "libX11.so.6", "libXext.so.6", "libXrender.so.1", "libICE.so.6", "libSM.so.6",
    "libGL.so.1", "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
}


# The ELF e_machine of each platform tag's architecture (pyelftools' names).
ELF_MACHINE = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}


def _version(s):
    return tuple(int(x) for x in s.split("."))


def check_elf(name, data, max_glibc):
    """Return a list of problems of one ELF file, and its (needed, max glibc) summary."""
    problems = []
    elf = ELFFile(io.BytesIO(data))
    needed, rpaths = [], []
    glibc = []
    for section in elf.iter_sections():
        if isinstance(section, DynamicSection):
            for tag in section.iter_tags():
                if tag.entry.d_tag == "DT_NEEDED":
                    needed.append(tag.needed)
                elif tag.entry.d_tag in ("DT_RPATH", "DT_RUNPATH"):
                    rpaths.append(getattr(tag, "rpath", None) or getattr(tag, "runpath", ""))
        elif isinstance(section, GNUVerNeedSection):
            for _verneed, auxes in section.iter_versions():
                for aux in auxes:
                    m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)+)", aux.name)
                    if m:
                        glibc.append(_version(m.group(1)))
    for lib in needed:
        if lib.startswith("libpython"):
            problems.append("%s links %s (an extension module must not)" % (name, lib))
        elif lib not in ALLOWED_NEEDED and not lib.startswith("graphgram"):
            problems.append("%s needs %s, which is outside the manylinux policy" % (name, lib))
    for rp in rpaths:
        if any(not p.startswith("$ORIGIN") for p in rp.split(":") if p):
            problems.append("%s has RPATH/RUNPATH %r outside the wheel" % (name, rp))
    top = max(glibc) if glibc else None
    if top is not None and top > max_glibc:
        problems.append("%s needs GLIBC_%s, newer than %s" % (name, ".".join(map(str, top)),
                                                             ".".join(map(str, max_glibc))))
    return problems, needed, top


CUDA_LIBRARY = "graphgram/libggcuda.so"


def exported(data):
    """Names of the symbols an ELF shared library defines for others to use."""
    elf = ELFFile(io.BytesIO(data))
    names = []
    for section in elf.iter_sections():
        if isinstance(section, SymbolTableSection) and section.name == ".dynsym":
            for sym in section.iter_symbols():
                if (sym.name and sym["st_shndx"] != "SHN_UNDEF"
                        and sym["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")
                        and sym["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT", "STT_TLS")):
                    names.append(sym.name)
    return names


# The DLLs a Windows extension may import besides the python3XY.dll of its version:
# Windows' own (always present; the API sets api-ms-win-* are matched by prefix).
# Nothing that comes with a compiler (a MinGW libgcc/libwinpthread, MSVC's
# vcruntime140.dll) or any other package.
WINDOWS_SYSTEM_DLLS = {
    "kernel32.dll", "ntdll.dll", "user32.dll", "advapi32.dll", "ws2_32.dll", "winmm.dll",
    "msvcrt.dll", "ucrtbase.dll", "bcrypt.dll", "shell32.dll", "ole32.dll", "oleaut32.dll",
    "crypt32.dll", "secur32.dll", "iphlpapi.dll", "dnsapi.dll", "userenv.dll", "powrprof.dll",
    "synchronization.dll", "version.dll", "shlwapi.dll", "dbghelp.dll",
}


def check_pe_wheel(path, cp):
    """The problems of a win_amd64 wheel of CPython tag cp (cp313), and its summary."""
    pydll = "python%s.dll" % cp[2:]
    problems, summary, n_pe, n_ext = [], [], 0, 0
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            data = zf.read(info)
            name = info.filename
            if data[:4] == b"\x7fELF":
                problems.append("%s is an ELF file, in a Windows wheel" % name)
                continue
            if data[:2] != b"MZ":
                continue
            n_pe += 1
            try:
                image = pe.PE(data)
                imports = image.imports()
                exports = [n for n, _ in image.exports()]
            except (ValueError, IndexError, struct.error) as e:
                problems.append("%s: unreadable PE file (%s)" % (name, e))
                continue
            if image.machine != "amd64":
                problems.append("%s is built for %s, in a wheel for win_amd64" % (name, image.machine))
            for dll in imports:
                low = dll.lower()
                if low in WINDOWS_SYSTEM_DLLS or low.startswith("api-ms-win-") or low == pydll:
                    continue
                if re.fullmatch(r"python3\d*\.dll", low):
                    problems.append("%s imports %s, in a wheel for %s" % (name, dll, cp))
                else:
                    problems.append("%s imports %s, which is neither Windows' nor %s" % (name, dll, pydll))
            base = name.rsplit("/", 1)[-1]
            if base.endswith(".pyd"):
                n_ext += 1
                m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\.(cp\d+)-win_amd64\.pyd", base)
                if not m or m.group(2) != cp:
                    problems.append("%s: an extension of a %s win_amd64 wheel is named <name>.%s-win_amd64.pyd" % (name, cp, cp))
                elif "PyInit_" + m.group(1) not in exports:
                    problems.append("%s does not export PyInit_%s" % (name, m.group(1)))
                if pydll not in [d.lower() for d in imports]:
                    problems.append("%s does not import %s" % (name, pydll))
            summary.append("%s %s imports=%s" % (base, image.machine, ",".join(imports)))
    if n_ext == 0:
        problems.append("%s: contains no compiled extension (.pyd)" % path)
    return ["%s: %s" % (path, p) for p in problems], "; ".join(summary)


def check_wheel(path, max_glibc, expect_cuda=False):
    problems = []
    m = re.search(r"-(cp\d+)-(cp\d+)-([^/]+)\.whl$", path)
    if not m:
        return ["%s: not a CPython-specific wheel name" % path], ""
    if m.group(3) == "win_amd64":
        if expect_cuda:
            return ["%s: no CUDA library is built for Windows" % path], ""
        return check_pe_wheel(path, m.group(1))
    tags = m.group(3).split(".")
    ok_tag = False
    arch = None
    for tag in tags:
        t = re.fullmatch(r"manylinux_(\d+)_(\d+)_(x86_64|aarch64)", tag)
        if t and (int(t.group(1)), int(t.group(2))) <= max_glibc:
            ok_tag, arch = True, t.group(3)
        t = re.fullmatch(r"manylinux2014_(x86_64|aarch64)", tag)
        if t and (2, 17) <= max_glibc:
            ok_tag, arch = True, t.group(1)
    if not ok_tag:
        problems.append("%s: platform tag %s is not manylinux <= glibc %s" % (path, m.group(3), ".".join(map(str, max_glibc))))
    summary = []
    n_elf = 0
    has_cuda = False
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            data = zf.read(info)
            if data[:4] != b"\x7fELF":
                continue
            n_elf += 1
            p, needed, top = check_elf(info.filename, data, max_glibc)
            machine = ELFFile(io.BytesIO(data))["e_machine"]
            if arch and machine != ELF_MACHINE[arch]:
                p.append("%s is built for %s, in a wheel for %s" % (info.filename, machine, arch))
            if info.filename == CUDA_LIBRARY:
                has_cuda = True
                extra = sorted(n for n in exported(data) if not n.startswith("ggc_"))
                if extra:
                    p.append("%s exports %d symbols besides its C API, e.g. %s" % (
                        info.filename, len(extra), ", ".join(extra[:5])))
            problems += ["%s: %s" % (path, x) for x in p]
            summary.append("%s NEEDED=%s max GLIBC_%s" % (info.filename.rsplit("/", 1)[-1], ",".join(needed),
                                                           ".".join(map(str, top)) if top else "-"))
    if n_elf == 0:
        problems.append("%s: contains no compiled extension" % path)
    if expect_cuda and not has_cuda:
        problems.append("%s: has no %s (built with CUDA=0?)" % (path, CUDA_LIBRARY))
    return problems, "; ".join(summary)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-glibc", default="2.17", help="newest glibc symbol version allowed (default 2.17)")
    parser.add_argument("--expect-cuda", action="store_true", help="each wheel must ship " + CUDA_LIBRARY)
    parser.add_argument("wheels", nargs="+")
    args = parser.parse_args(argv)
    max_glibc = _version(args.max_glibc)
    failed = 0
    for path in args.wheels:
        problems, summary = check_wheel(path, max_glibc, args.expect_cuda)
        if problems:
            failed += 1
            for p in problems:
                print("FAIL %s" % p)
        else:
            print("ok   %s: %s" % (path.rsplit("/", 1)[-1], summary))
    print("check_wheel: %d passed, %d failed" % (len(args.wheels) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
