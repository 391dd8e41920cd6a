#!/usr/bin/env python3
"""Build libggcuda.so, graphgram's CUDA library, ahead of time.

    python3 cuda/build.py [--out DIR] [--arch 75,80,90] [--no-check]

or from Python (setup.py): ``build(out_dir) -> (path or None, message)``.

nvcc is looked for, in order, in $CUDACXX, $CUDA_HOME/bin and $CUDA_PATH/bin,
$PATH, the pip CUDA packages (nvidia-cuda-nvcc and friends, importable as
``nvidia``), and the toolkit that ``--install-toolkit`` puts in
.cuda-toolkit/ at the repository root. The library targets sm_75, sm_80 and
sm_90 plus PTX for compute_90 (CUDA 13 dropped sm_70), links the CUDA runtime
statically, is compiled with warnings as errors, and its ptxas resource usage
is checked (see check_resources): the solver kernels that run the product
mat-vec and the explicit-feature Gram kernels must use no local memory and
spill no registers, and static shared
memory must stay within 48 KiB a block. The resource report is written next to
the library as ptxas.json.

    python3 cuda/build.py --linker packaging/zcxx

links the library for binary wheels instead: nvcc compiles, and the given C++
driver (zig's, targeting glibc 2.17) links against old glibc symbol versions,
with zig's static libc++abi and unwinder in place of libstdc++, exporting the
ggc_* API alone (see portable_link).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCES = [os.path.join(HERE, "src", "ggcuda.cu")]
DEFAULT_ARCHS = ("75", "80", "90")
PTX_ARCH = "90"
LIBNAME = "libggcuda.so"
SMEM_BUDGET = 48 * 1024
# The pip packages that make a complete nvcc (CUDA 13).
PIP_PACKAGES = ["nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime", "nvidia-cuda-cccl"]
LOCAL_TOOLKIT = os.path.join(ROOT, ".cuda-toolkit")


def _nvcc_in(root):
    p = os.path.join(root, "bin", "nvcc")
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


def _pip_roots():
    """Toolkit roots of the pip CUDA packages importable here or installed in
    .cuda-toolkit/."""
    roots = []
    try:
        import nvidia  # namespace package of the pip CUDA wheels

        for base in list(getattr(nvidia, "__path__", [])):
            roots += sorted(glob.glob(os.path.join(base, "cu1*")), reverse=True)
            roots.append(os.path.join(base, "cuda_nvcc"))
    except ImportError:
        pass
    roots += sorted(glob.glob(os.path.join(LOCAL_TOOLKIT, "nvidia", "cu1*")), reverse=True)
    return roots


def find_nvcc():
    """Return (nvcc path, where it was found) or (None, why not)."""
    tried = []
    cx = os.environ.get("CUDACXX")
    if cx:
        if os.path.isfile(cx) and os.access(cx, os.X_OK):
            return cx, "CUDACXX"
        tried.append("CUDACXX=%s is not an executable" % cx)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            p = _nvcc_in(root)
            if p:
                return p, var
            tried.append("%s=%s has no bin/nvcc" % (var, root))
    p = shutil.which("nvcc")
    if p:
        return p, "PATH"
    for root in _pip_roots():
        p = _nvcc_in(root)
        if p:
            return p, "pip CUDA packages (%s)" % root
    tried.append("no nvcc on PATH and no pip CUDA packages (pip install %s)" % " ".join(PIP_PACKAGES))
    return None, "; ".join(tried)


def host_compiler():
    for c in (os.environ.get("CUDAHOSTCXX"), os.environ.get("CXX"), "g++", "c++"):
        if c and shutil.which(c.split()[0]):
            return c
    return None


def nvcc_command(nvcc, out, archs=DEFAULT_ARCHS, ccbin=None, compile_only=False):
    """nvcc's command line: the shared library, or with compile_only its object file.
    --threads 0 compiles the architectures side by side, one per core (2m25s → 1m20s
    on two cores, the same ptxas report)."""
    cmd = [nvcc, "-std=c++17", "-O3", "--threads", "0", "-c" if compile_only else "-shared", "-cudart", "static",
           "-I", os.path.join(HERE, "include"),
           "-I", os.path.join(HERE, "src"), "-Werror", "all-warnings", "-Xptxas", "-v",
           "-Xcompiler", "-fPIC,-Wall,-Wextra,-Werror,-fvisibility=hidden"]
    if ccbin:
        cmd += ["-ccbin", ccbin]
    for a in archs:
        cmd += ["-gencode", "arch=compute_%s,code=sm_%s" % (a, a)]
    cmd += ["-gencode", "arch=compute_%s,code=compute_%s" % (PTX_ARCH, PTX_ARCH)]
    cmd += SOURCES + ["-o", out]
    return cmd


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?")
_SMEM = re.compile(r"(\d+) bytes smem")


def _demangle(names):
    try:
        r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        out = r.stdout.splitlines()
        if len(out) == len(names):
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    return names


def parse_ptxas(log):
    """Parse nvcc -Xptxas -v output into one record per (kernel, arch):
    name, arch, registers, stack, spill_stores, spill_loads, smem."""
    recs, cur, funcs = [], None, None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            cur = {"mangled": m.group(1), "arch": m.group(2), "registers": 0, "stack": 0, "spill_stores": 0,
                   "spill_loads": 0, "smem": 0}
            recs.append(cur)
            funcs = None
            continue
        if "Function properties for" in line:
            funcs = line.split("Function properties for", 1)[1].strip()
            continue
        m = _FRAME.search(line)
        if m and cur is not None and funcs == cur["mangled"]:
            cur["stack"], cur["spill_stores"], cur["spill_loads"] = map(int, m.groups())
            continue
        if "Used" in line and "registers" in line and cur is not None:
            cur["registers"] = int(re.search(r"Used (\d+) registers", line).group(1))
            m = _SMEM.search(line)
            cur["smem"] = int(m.group(1)) if m else 0
            m = re.search(r"(\d+) bytes cumulative stack size", line)
            if m:
                cur["stack"] = max(cur["stack"], int(m.group(1)))
    names = _demangle([r["mangled"] for r in recs])
    for r, n in zip(recs, names):
        r["name"] = n.split("(")[0]
    return recs


def is_matvec_kernel(name):
    """The kernels whose inner loops must not spill: the marginalized solvers on
    the κe class table (their product mat-vec; the path every pair with at most
    4M edge-class pairs takes: mgk_solve for Gram, mgk_gsolve for gradients,
    mgk_solve_warp for small Gram pairs, mgk_wide_matvec for large ones),
    the shortest-path walk stage in both precisions (sp_walk<float>,
    sp_walk<double>), and the explicit-feature Gram kernels of both semirings
    (ex_dense<…>, whose output tile's accumulators live in registers, and
    ex_sparse<…>)."""
    name = name.strip()
    solvers = ("mgk_solve<", "mgk_gsolve<", "mgk_solve_warp<", "mgk_wide_matvec<")
    return ((any(k in name for k in solvers) and name.endswith("true>"))
            or "sp_walk<" in name or name.endswith("sp_walk") or "ex_dense<" in name or "ex_sparse<" in name)


def check_resources(recs):
    """Return a list of violations (empty when the build is within budget)."""
    bad = []
    for r in recs:
        if r["smem"] > SMEM_BUDGET:
            bad.append("%s (%s): %d bytes of static shared memory > %d" % (r["name"], r["arch"], r["smem"], SMEM_BUDGET))
        if is_matvec_kernel(r["name"]) and (r["stack"] or r["spill_stores"] or r["spill_loads"]):
            bad.append("%s (%s): %d bytes stack, %d/%d bytes spilled" % (r["name"], r["arch"], r["stack"],
                                                                          r["spill_stores"], r["spill_loads"]))
    return bad


def summary(recs):
    lines = []
    for r in recs:
        lines.append("%-28s %s  %3d regs  %5d B smem  %4d B stack  %4d/%4d B spill" % (
            r["name"].replace("gg::", "").replace("void ", ""), r["arch"], r["registers"], r["smem"], r["stack"],
            r["spill_stores"], r["spill_loads"]))
    return "\n".join(lines)


# Exported symbols of the portable link: the C API alone, so that the static C++
# runtime inside never interposes on (or is interposed by) the process's own.
VERSION_SCRIPT = os.path.join(HERE, "src", "ggcuda.map")
# libstdc++'s one out-of-line helper that g++-compiled std::vector code calls;
# the portable link has libc++abi instead of libstdc++ (see portable_link).
LIBSTDCXX_SHIM = os.path.join(HERE, "src", "libstdcxx_shim.cc")


def cudart_static(nvcc):
    """The static CUDA runtime of the toolkit that nvcc belongs to, or None."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    for sub in ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib")):
        p = os.path.join(root, sub, "libcudart_static.a")
        if os.path.isfile(p):
            return p
    return None


def portable_link(linker, obj, cudart, out):
    """The command linking nvcc's object into a libggcuda.so that runs on any
    x86_64 glibc >= 2.17 (the wheels' manylinux2014 floor).

    linker is a clang-compatible C++ driver that targets the old glibc (zig c++
    -target x86_64-linux-gnu.2.17: packaging/zcxx). It links the static CUDA
    runtime and its own static libc++abi and unwinder: Debian's libstdc++.a and
    libgcc_eh.a need glibc 2.32-2.36 symbols (__libc_single_threaded,
    arc4random, _dl_find_object). The object's C++ needs only the Itanium ABI
    (operator new, __cxa_*, the personality routine), which libc++abi provides,
    plus one libstdc++ helper supplied by LIBSTDCXX_SHIM. -z defs turns any
    other missing symbol into a link error instead of a load error.
    """
    return linker.split() + ["-shared", "-fPIC", "-O2", "-s", "-Wl,-z,defs", "-Wl,--version-script=" + VERSION_SCRIPT,
                             "-o", out, obj, LIBSTDCXX_SHIM, cudart, "-lpthread", "-ldl", "-lrt"]


def build(out_dir, archs=DEFAULT_ARCHS, check=True, verbose=False, linker=None):
    """Build libggcuda.so into out_dir. Returns (path, message) on success and
    (None, one sentence saying why not) otherwise. With linker (see
    portable_link), nvcc compiles and linker links, for the binary wheels."""
    nvcc, where = find_nvcc()
    if nvcc is None:
        return None, "CUDA library not built: nvcc not found (%s)." % where
    ccbin = host_compiler()
    if ccbin is None:
        return None, "CUDA library not built: no C++ host compiler (g++) found for nvcc."
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, LIBNAME)
    obj = os.path.join(out_dir, "ggcuda.o")
    cmd = nvcc_command(nvcc, obj if linker else out, archs, ccbin, compile_only=bool(linker))
    if verbose:
        print(" ".join(cmd), file=sys.stderr)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        return None, "CUDA library not built: running %s failed (%s)." % (nvcc, e)
    log = r.stdout + r.stderr
    with open(os.path.join(out_dir, "nvcc.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + log)
    if r.returncode != 0:
        first = next((l for l in log.splitlines() if "error" in l.lower()), log.strip().splitlines()[-1:] or ["?"])
        if isinstance(first, list):
            first = first[0]
        return None, "CUDA library not built: nvcc (%s) failed: %s (full log in %s)." % (
            where, first.strip(), os.path.join(out_dir, "nvcc.log"))
    if linker:
        cudart = cudart_static(nvcc)
        if cudart is None:
            return None, "CUDA library not built: no libcudart_static.a beside %s." % nvcc
        link = portable_link(linker, obj, cudart, out)
        if verbose:
            print(" ".join(link), file=sys.stderr)
        r = subprocess.run(link, capture_output=True, text=True)
        with open(os.path.join(out_dir, "nvcc.log"), "a") as f:
            f.write(" ".join(link) + "\n" + r.stdout + r.stderr)
        os.remove(obj)
        if r.returncode != 0:
            first = (r.stderr.strip().splitlines() or ["?"])[0]
            return None, "CUDA library not built: the portable link (%s) failed: %s." % (linker, first)
    recs = parse_ptxas(log)
    with open(os.path.join(out_dir, "ptxas.json"), "w") as f:
        json.dump(recs, f, indent=1)
    if check:
        bad = check_resources(recs)
        if not recs:
            bad = ["no ptxas resource report in nvcc's output"]
        if bad:
            os.remove(out)
            return None, "CUDA library not built: ptxas resource check failed: %s." % "; ".join(bad)
    return out, "Built %s with nvcc from %s for sm_%s + PTX compute_%s%s." % (
        out, where, ", sm_".join(archs), PTX_ARCH, ", linked by %s" % linker if linker else "")


def build_emulated(out_dir, cxx=None, gpu_sizes=False):
    """Build libggcuda_emu.so with g++ alone: the same C API and kernels, run on
    host threads with the CUDA runtime mocked (emu/), for running the GPU test
    suite without a GPU. The kernels get the emulation's small blocks (fewer
    host threads), or with gpu_sizes the GPU's 256 threads a block, as
    libggcuda_emu256.so. Returns (path or None, message)."""
    cxx = cxx or os.environ.get("CXX") or "g++"
    if not shutil.which(cxx.split()[0]):
        return None, "emulated CUDA library not built: no C++ compiler (%s)." % cxx
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "libggcuda_emu256.so" if gpu_sizes else "libggcuda_emu.so")
    cmd = cxx.split() + ["-std=c++20", "-O2", "-fPIC", "-shared", "-pthread", "-Wall", "-Wextra", "-Werror",
                         "-DGG_EMU_GPU_SIZES=%d" % (1 if gpu_sizes else 0),
                         "-I", os.path.join(HERE, "include"), "-I", os.path.join(HERE, "src"),
                         os.path.join(HERE, "emu", "emu_lib.cc"), "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, "emulated CUDA library not built: %s" % (r.stderr.strip().splitlines() or ["?"])[0]
    return out, "Built %s (host emulation, no GPU)." % out


def install_toolkit(target=os.path.join(LOCAL_TOOLKIT)):
    """pip-install the CUDA 13 compiler packages into target (about 130 MB of
    wheels); the toolkit root is then target/nvidia/cu13."""
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", target] + PIP_PACKAGES, check=True)


def main(argv):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "build"))
    ap.add_argument("--arch", default=",".join(DEFAULT_ARCHS))
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--install-toolkit", action="store_true", help="pip-install nvcc into .cuda-toolkit/ first")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--emulated", action="store_true", help="build libggcuda_emu.so with g++ only (tests)")
    ap.add_argument("--gpu-block-sizes", action="store_true",
                    help="with --emulated: the GPU's block sizes (256 threads), as libggcuda_emu256.so")
    ap.add_argument("--linker", help="link with this C++ driver targeting an old glibc (wheels: packaging/zcxx)")
    a = ap.parse_args(argv)
    if a.emulated:
        path, msg = build_emulated(a.out, gpu_sizes=a.gpu_block_sizes)
        print(msg)
        return 0 if path else 1
    if a.install_toolkit and find_nvcc()[0] is None:
        install_toolkit()
    path, msg = build(a.out, tuple(x for x in a.arch.split(",") if x), check=not a.no_check, verbose=a.verbose,
                      linker=a.linker)
    print(msg)
    rep = os.path.join(a.out, "ptxas.json")
    if os.path.exists(rep):
        with open(rep) as f:
            print(summary(json.load(f)))
    return 0 if path else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
