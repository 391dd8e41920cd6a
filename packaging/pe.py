"""Read what a Windows PE file (a .dll or .pyd) exports and imports.

    python packaging/pe.py def python313.dll > python313.def   # a .def for `zig dlltool`
    python packaging/pe.py imports _ggcore.cp313-win_amd64.pyd  # the DLLs it loads

The import library the Windows wheel links against (packaging/build_wheels_windows.sh)
is made from the exports of the embeddable CPython's python3XY.dll: one line per
exported name, with DATA for those that lie outside executable sections (variables
such as _Py_NoneStruct and PyExc_TypeError, which the headers reach through
__declspec(dllimport) and which must not get a function thunk). packaging/check_wheel.py
reads the imports of the wheel's .pyd. Standard library only; PE32 and PE32+.
"""

import struct
import sys

MACHINES = {0x14C: "i386", 0x8664: "amd64", 0xAA64: "arm64"}
_SCN_CNT_CODE = 0x20
_SCN_MEM_EXECUTE = 0x20000000


class PE:
    """The headers, sections and data directories of one PE image held in memory."""

    def __init__(self, data):
        if data[:2] != b"MZ":
            raise ValueError("not a PE file (no MZ header)")
        self.data = data
        pe = struct.unpack_from("<I", data, 0x3C)[0]
        if data[pe:pe + 4] != b"PE\0\0":
            raise ValueError("not a PE file (no PE signature)")
        machine, nsections, _, _, _, opt_size, _ = struct.unpack_from("<HHIIIHH", data, pe + 4)
        self.machine = MACHINES.get(machine, hex(machine))
        opt = pe + 24
        magic = struct.unpack_from("<H", data, opt)[0]
        if magic == 0x20B:  # PE32+
            ndirs_at = opt + 108
        elif magic == 0x10B:  # PE32
            ndirs_at = opt + 92
        else:
            raise ValueError("unknown optional header magic %#x" % magic)
        ndirs = struct.unpack_from("<I", data, ndirs_at)[0]
        self.dirs = [struct.unpack_from("<II", data, ndirs_at + 4 + 8 * i) for i in range(ndirs)]
        self.sections = []
        for i in range(nsections):
            name, vsize, va, rawsize, rawptr = struct.unpack_from("<8sIIII", data, opt + opt_size + 40 * i)
            flags = struct.unpack_from("<I", data, opt + opt_size + 40 * i + 36)[0]
            self.sections.append((name.rstrip(b"\0").decode("ascii", "replace"), va, max(vsize, rawsize), rawptr, flags))

    def offset(self, rva):
        for _name, va, size, rawptr, _flags in self.sections:
            if va <= rva < va + size:
                return rawptr + rva - va
        raise ValueError("RVA %#x is in no section" % rva)

    def cstring(self, rva):
        off = self.offset(rva)
        return self.data[off:self.data.index(b"\0", off)].decode("ascii")

    def executable(self, rva):
        for _name, va, size, _rawptr, flags in self.sections:
            if va <= rva < va + size:
                return bool(flags & (_SCN_CNT_CODE | _SCN_MEM_EXECUTE))
        return False

    def directory(self, i):
        return self.dirs[i] if i < len(self.dirs) and self.dirs[i][0] else (0, 0)

    def dll_name(self):
        """The name the export directory gives (e.g. python313.dll), or None."""
        rva, _ = self.directory(0)
        return self.cstring(struct.unpack_from("<I", self.data, self.offset(rva) + 12)[0]) if rva else None

    def exports(self):
        """[(name, is_data)] of the exports by name; forwarded exports count as functions."""
        rva, size = self.directory(0)
        if not rva:
            return []
        d = self.offset(rva)
        _, _, _, _, _, _, _, nnames, funcs, names, ordinals = struct.unpack_from("<IIHHIIIIIII", self.data, d)
        out = []
        for i in range(nnames):
            name = self.cstring(struct.unpack_from("<I", self.data, self.offset(names) + 4 * i)[0])
            ordinal = struct.unpack_from("<H", self.data, self.offset(ordinals) + 2 * i)[0]
            target = struct.unpack_from("<I", self.data, self.offset(funcs) + 4 * ordinal)[0]
            forwarded = rva <= target < rva + size
            out.append((name, not forwarded and not self.executable(target)))
        return out

    def imports(self):
        """Names of the DLLs in the import and delay-import directories, in order."""
        out = []
        rva, _ = self.directory(1)
        if rva:
            off = self.offset(rva)
            while True:
                desc = struct.unpack_from("<IIIII", self.data, off)
                if not any(desc):
                    break
                out.append(self.cstring(desc[3]))
                off += 20
        rva, _ = self.directory(13)
        if rva:
            off = self.offset(rva)
            while True:
                desc = struct.unpack_from("<8I", self.data, off)
                if not any(desc):
                    break
                out.append(self.cstring(desc[1]))
                off += 32
        return out


def def_file(pe):
    """The text of a .def file listing the exports of the DLL pe."""
    lines = ["LIBRARY %s" % pe.dll_name(), "EXPORTS"]
    lines += ["%s%s" % (name, " DATA" if data else "") for name, data in pe.exports()]
    return "\n".join(lines) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("def", "imports"):
        sys.exit("usage: pe.py def|imports FILE")
    with open(argv[1], "rb") as f:
        pe = PE(f.read())
    if argv[0] == "def":
        sys.stdout.write(def_file(pe))
    else:
        print("\n".join(pe.imports()))


if __name__ == "__main__":
    main()
