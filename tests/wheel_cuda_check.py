"""Check the CUDA side of an installed graphgram wheel, run outside the source tree.

    python wheel_cuda_check.py                 # the library the wheel ships
    GRAPHGRAM_CUDA_LIB=/path/libggcuda_emu.so python wheel_cuda_check.py --emulated

The wheel is one wheel for machines with and without a GPU: it ships
libggcuda.so and a Go core that opens it at run time. Without --emulated this
checks that the library is shipped and loads, that device="auto" computes on the
CPU silently and bit for bit where no GPU can be used (as on the build
machines), and that device="cuda" then raises a RuntimeError naming the CUDA
error; where a GPU is present it compares the GPU with the CPU instead. With
--emulated, $GRAPHGRAM_CUDA_LIB is the host-emulated build of the same library
(cuda/build.py --emulated: the same C API and kernels on CPU threads), and the
GPU path of the installed wheel must agree with its CPU path: the marginalized
kernel to 1e-9 relative (float64) and 1e-4 (float32), the shortest-path kernel
to 1e-12. Ends with 'N passed, N failed'; exit 1 on failure.
"""

import argparse
import os
import sys
import warnings

results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""))


def relative_error(a, b):
    import numpy as np
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emulated", action="store_true",
                        help="GRAPHGRAM_CUDA_LIB names the emulated library: compare its results with the CPU's")
    args = parser.parse_args(argv)

    import graphgram
    from graphgram import MarginalizedGraphKernel, ShortestPathKernel, datasets
    from graphgram._backend import cuda_library
    from graphgram.microkernels import KroneckerDelta, TensorProduct

    here = os.path.dirname(os.path.abspath(__file__))
    check("graphgram imported from an installed package", not graphgram.__file__.startswith(here),
          graphgram.__file__)
    library = cuda_library()
    if args.emulated:
        check("GRAPHGRAM_CUDA_LIB selects the library", library == os.environ.get("GRAPHGRAM_CUDA_LIB"), library)
    else:
        shipped = os.path.join(os.path.dirname(graphgram.__file__), "libggcuda.so")
        check("the wheel ships libggcuda.so", library == shipped and os.path.isfile(shipped), library or "none")

    info = graphgram.devices()
    print("     graphgram.devices(): %s" % info)
    check("graphgram.devices(): the CUDA backend is built in", info["built"] is True)
    if args.emulated:
        check("graphgram.devices() lists the emulated device", info["usable"] and len(info["devices"]) == 1)

    graphs = datasets.load_mutag()[0][:12]
    label = TensorProduct(label=KroneckerDelta(0.5))

    def mgk(**kw):
        return MarginalizedGraphKernel(label, label, q=0.05, **kw)

    def spk(**kw):
        return ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)), **kw)

    cpu = mgk(device="cpu")(graphs)
    try:
        gpu = mgk(device="cuda")(graphs)
        why = None
    except RuntimeError as exc:
        gpu, why = None, str(exc)

    if args.emulated:
        check("device='cuda' runs on the emulated library", why is None, why or "")
        if gpu is not None:
            err = relative_error(gpu, cpu)
            check("marginalized kernel, float64: GPU path within 1e-9 of the CPU", err <= 1e-9, "%.2e" % err)
            f32 = mgk(device="cuda", precision="float32")(graphs)
            err32 = relative_error(f32, cpu)
            check("marginalized kernel, float32: within 1e-4 of float64, and not float64", 1e-12 < err32 <= 1e-4,
                  "%.2e" % err32)
            sp_cpu = spk(device="cpu")(graphs)
            sp_gpu = spk(device="cuda")(graphs)
            err = relative_error(sp_gpu, sp_cpu)
            check("shortest-path kernel: GPU path within 1e-12 of the CPU", err <= 1e-12, "%.2e" % err)
            # The emulated device (kernels on host threads) is far slower than the CPU backend:
            # the sample auto times on first use says so, and auto keeps the call on the CPU.
            import numpy as np
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                auto = mgk(device="auto")(graphs)
            check("device='auto' on the emulated device is the CPU, silently and bit for bit",
                  np.array_equal(auto, cpu))
            last = graphgram.devices()["devices"][0]["last_auto"]
            check("graphgram.devices() says why: the CPU is predicted faster, from a timed sample",
                  last.startswith("marginalized, float64 precision, 78 pairs: the CPU: predicted")
                  and "sample timed in this process" in last, last)
    elif why is None:
        # A machine with a GPU: the GPU against the CPU.
        err = relative_error(gpu, cpu)
        check("GPU present: marginalized kernel within 1e-9 of the CPU", err <= 1e-9, "%.2e" % err)
    else:
        print("     device='cuda': %s" % why)
        check("device='cuda' without a GPU raises, naming the CUDA error",
              "device='cuda' cannot be used" in why and "cuda" in why.split("cannot be used", 1)[1].lower(), why)
        check("the shipped library loaded (the error is about the device, not the library)",
              "could not be loaded" not in why, why)
        check("graphgram.devices() says the same", not info["usable"] and info["reason"] in why, info["reason"])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            auto = mgk(device="auto")(graphs)
        import numpy as np
        check("device='auto' without a GPU is the CPU, silently and bit for bit", np.array_equal(auto, cpu))

    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
