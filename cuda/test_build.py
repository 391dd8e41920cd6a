"""Tests of cuda/build.py: run with `python3 -m unittest discover -s cuda -p test_build.py`.

The nvcc-dependent test builds the library and checks the ptxas report; it is
skipped with the reason when no nvcc is found."""
import json
import os
import tempfile
import unittest
from unittest import mock

import build

SAMPLE = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN2gg9mgk_solveIdLb1EEEvv' for 'sm_80'
ptxas info    : Function properties for _ZN2gg9mgk_solveIdLb1EEEvv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 104 registers, used 1 barriers, 8328 bytes smem, 824 bytes cmem[0]
ptxas info    : Compiling entry function '_ZN2gg9mgk_solveIdLb0EEEvv' for 'sm_80'
ptxas info    : Function properties for _ZN2gg9mgk_solveIdLb0EEEvv
    72 bytes stack frame, 92 bytes spill stores, 244 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 72 bytes cumulative stack size, 8328 bytes smem
"""


class ParseTest(unittest.TestCase):
    def test_parse_and_check(self):
        recs = build.parse_ptxas(SAMPLE)
        self.assertEqual(len(recs), 2)
        a, b = recs
        self.assertEqual(a["arch"], "sm_80")
        self.assertEqual((a["registers"], a["smem"], a["stack"], a["spill_stores"]), (104, 8328, 0, 0))
        self.assertEqual((b["registers"], b["stack"], b["spill_stores"], b["spill_loads"]), (255, 72, 92, 244))
        self.assertTrue(build.is_matvec_kernel(a["name"]), a["name"])
        self.assertFalse(build.is_matvec_kernel(b["name"]), b["name"])
        self.assertTrue(build.is_matvec_kernel("void gg::ex_dense<1>"))
        self.assertFalse(build.is_matvec_kernel("void gg::ex_finish"))
        self.assertEqual(build.check_resources(recs), [])

    def test_check_flags_spills_and_smem(self):
        recs = build.parse_ptxas(SAMPLE.replace("0 bytes stack frame, 0 bytes spill stores", "8 bytes stack frame, 4 bytes spill stores"))
        self.assertEqual(len(build.check_resources(recs)), 1)
        recs = build.parse_ptxas(SAMPLE.replace("8328 bytes smem", "60000 bytes smem"))
        self.assertEqual(len(build.check_resources(recs)), 2)


class NoCompilerTest(unittest.TestCase):
    def test_says_why_in_one_sentence(self):
        env = {k: v for k, v in os.environ.items() if k not in ("CUDACXX", "CUDA_HOME", "CUDA_PATH")}
        env["PATH"] = "/nonexistent"
        with mock.patch.dict(os.environ, env, clear=True), mock.patch.object(build, "_pip_roots", return_value=[]):
            with tempfile.TemporaryDirectory() as d:
                path, msg = build.build(d)
        self.assertIsNone(path)
        self.assertTrue(msg.startswith("CUDA library not built: nvcc not found"), msg)
        self.assertTrue(msg.endswith(".") and "\n" not in msg, msg)

    def test_bad_cudacxx_is_named(self):
        env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
        env.update(CUDACXX="/nonexistent/nvcc", PATH="/nonexistent")
        with mock.patch.dict(os.environ, env, clear=True), mock.patch.object(build, "_pip_roots", return_value=[]):
            nvcc, why = build.find_nvcc()
        self.assertIsNone(nvcc)
        self.assertIn("CUDACXX=/nonexistent/nvcc", why)


class BuildTest(unittest.TestCase):
    def test_build_and_ptxas_budget(self):
        nvcc, why = build.find_nvcc()
        if nvcc is None:
            self.skipTest("no nvcc: " + why)
        out = os.environ.get("GGCUDA_BUILD_DIR") or os.path.join(build.HERE, "build")
        lib = os.path.join(out, build.LIBNAME)
        rep = os.path.join(out, "ptxas.json")
        if not (os.path.exists(lib) and os.path.exists(rep)):
            path, msg = build.build(out)
            self.assertIsNotNone(path, msg)
        with open(rep) as f:
            recs = json.load(f)
        self.assertEqual(build.check_resources(recs), [])
        archs = {r["arch"] for r in recs if build.is_matvec_kernel(r["name"])}
        self.assertEqual(archs, {"sm_75", "sm_80", "sm_90"})
        walks = [r for r in recs if "sp_walk<" in r["name"]]
        self.assertEqual(len(walks), 6)  # float and double on three architectures
        self.assertEqual({r["name"].split("sp_walk<")[1] for r in walks}, {"float>", "double>"})
        self.assertTrue(all(build.is_matvec_kernel(r["name"]) for r in walks))
        # The explicit-feature kernels of both semirings, on every architecture.
        ex = [r for r in recs if "ex_dense<" in r["name"] or "ex_sparse<" in r["name"]]
        self.assertEqual(len(ex), 12)
        self.assertTrue(all(build.is_matvec_kernel(r["name"]) for r in ex))


if __name__ == "__main__":
    unittest.main()
