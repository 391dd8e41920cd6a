"""Check that an sdist carries what building from source needs.

    python packaging/check_sdist.py dist/graphgram-<version>.tar.gz

Compares the archive with what the build reads: go.mod, go.sum, setup.py,
pyproject.toml, the build backend (packaging/backend), every file of the module's
own Go packages that `go build` of pybind reads, as `go list -deps` reports it (Go, cgo, assembly, C and header
files, embedded files, and those a build constraint leaves out on this machine:
other platforms, the cuda tag, the simd experiment), every other non-test Go
file of pybind/, gokernel/ and cuda/, every file of python/graphgram/ that git
tracks there (modules and the bundled data), the Go modules in vendor/ exactly as
`go mod vendor` writes them (the offline build), and nothing compiled. A quick check
(no build): `make sdist-test` builds the sdist for real. Ends with 'N passed, N failed'.
"""

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "github.com/graphgram/graphgram"
# The fields of `go list -json` that name files a package's build reads (or would
# read under other build constraints).
BUILD_FIELDS = ("GoFiles", "CgoFiles", "CFiles", "CXXFiles", "HFiles", "SFiles", "SysoFiles", "EmbedFiles",
                "IgnoredGoFiles", "IgnoredOtherFiles")


def go_build_files():
    """The files of the module's own packages that building pybind reads, from `go list`
    (with and without the cuda tag, with the simd experiment as setup.py builds), or
    None without a Go toolchain."""
    go = shutil.which("go")
    if go is None:
        return None
    files = set()
    env = dict(os.environ, GOEXPERIMENT="simd", GOFLAGS="-mod=mod")
    for tags in ([], ["-tags", "cuda"]):
        out = subprocess.run([go, "list", "-deps", "-json"] + tags + ["./pybind"], cwd=ROOT, env=env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("check_sdist: go list failed:\n" + out.stderr)
        dec, text, i = json.JSONDecoder(), out.stdout, 0
        while i < len(text):
            if text[i].isspace():
                i += 1
                continue
            pkg, i = dec.raw_decode(text, i)
            if pkg.get("Standard") or not (pkg["ImportPath"] == MODULE or pkg["ImportPath"].startswith(MODULE + "/")):
                continue
            rel = os.path.relpath(pkg["Dir"], ROOT)
            for field in BUILD_FIELDS:
                files.update(os.path.join(rel, n) for n in pkg.get(field) or () if not n.endswith("_test.go"))
    return files


def vendor_files():
    """The files `go mod vendor` writes for this module (vendor/...), or None without
    a Go toolchain."""
    go = shutil.which("go")
    if go is None:
        return None
    tmp = tempfile.mkdtemp()
    try:
        out = os.path.join(tmp, "vendor")
        proc = subprocess.run([go, "mod", "vendor", "-o", out], cwd=ROOT, capture_output=True, text=True,
                              env=dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local"))
        if proc.returncode != 0:
            sys.exit("check_sdist: go mod vendor failed:\n" + proc.stderr)
        return {os.path.relpath(os.path.join(d, n), tmp) for d, _, names in os.walk(out) for n in names}
    finally:
        shutil.rmtree(tmp)


def needed_files():
    files = {"go.mod", "go.sum", "setup.py", "pyproject.toml", "README.md"}
    backend = os.path.join(ROOT, "packaging", "backend")
    files.update(os.path.join("packaging", "backend", n) for n in os.listdir(backend) if n.endswith(".py"))
    built = go_build_files()
    if built is None:
        print("note no Go toolchain: the Go files are checked by name only, not by what the build reads")
    else:
        files.update(built)
    for top in ("pybind", "gokernel", "cuda"):
        for d, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [x for x in dirs if x != "testdata"]
            for n in names:
                if n.endswith(".go") and not n.endswith("_test.go"):
                    files.add(os.path.relpath(os.path.join(d, n), ROOT))
    tracked = subprocess.run(["git", "ls-files", "python/graphgram"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode == 0 and tracked.stdout.strip():
        files.update(tracked.stdout.split())
    else:  # not a git checkout: the Python modules at least
        for d, _, names in os.walk(os.path.join(ROOT, "python", "graphgram")):
            files.update(os.path.relpath(os.path.join(d, n), ROOT) for n in names if n.endswith(".py"))
    return files


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    with tarfile.open(argv[0]) as tf:
        names = {m.name.split("/", 1)[1] for m in tf.getmembers() if m.isfile() and "/" in m.name}
    vendored = vendor_files()
    if vendored is None:
        print("note no Go toolchain: vendor/ is checked for its modules.txt only")
    needed = needed_files() | (vendored if vendored is not None else {"vendor/modules.txt"})
    missing = sorted(needed - names)
    # A vendor/ file that `go mod vendor` no longer writes is a stale module.
    stale = sorted(n for n in names - needed if n.startswith("vendor/")) if vendored is not None else []
    compiled = sorted(n for n in names if n.endswith((".so", ".pyc")) or "/_ggcore/" in n)
    for n in missing:
        print("FAIL sdist lacks %s" % n)
    for n in stale:
        print("FAIL sdist has a vendored file go mod vendor does not write: %s" % n)
    for n in compiled:
        print("FAIL sdist has a build product: %s" % n)
    n_fail = len(missing) + len(stale) + len(compiled)
    if not n_fail:
        print("ok   %s: %d files, everything a source build needs" % (os.path.basename(argv[0]), len(names)))
    print("check_sdist: %d passed, %d failed" % (0 if n_fail else 1, 1 if n_fail else 0))
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
