"""The device parameter: 'auto' computes on the CPU silently where no GPU can be
used (as here), 'cuda' says why not, and anything else is refused."""

import re
import warnings

import numpy as np
import pytest

import graphgram
from graphgram import MarginalizedGraphKernel, RandomWalkKernel, ShortestPathKernel, WassersteinWLKernel, datasets
from graphgram.microkernels import KroneckerDelta, TensorProduct

LABEL = TensorProduct(label=KroneckerDelta(0.5))
KERNELS = [lambda **kw: MarginalizedGraphKernel(LABEL, LABEL, q=0.05, **kw),
           lambda **kw: ShortestPathKernel(node_kernel=TensorProduct(label=KroneckerDelta(0.0)), **kw),
           lambda **kw: RandomWalkKernel(lamda=0.01, **kw),
           lambda **kw: WassersteinWLKernel(**kw)]


@pytest.fixture(scope="module")
def graphs():
    return datasets.load_mutag()[0][:8]


@pytest.mark.parametrize("make", KERNELS)
def test_auto_is_cpu_without_gpu(make, graphs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = make(device="auto")(graphs)
    np.testing.assert_array_equal(K, make(device="cpu")(graphs))
    assert make().get_params()["device"] == "auto"


@pytest.mark.parametrize("make", KERNELS)
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_cuda_without_gpu_says_why(make, device, graphs):
    with pytest.raises(RuntimeError, match=r"device='cuda' cannot be used: graphgram was built without CUDA|"
                                           r"device='cuda' cannot be used: .*(could not be loaded|no usable CUDA device)"):
        make(device=device)(graphs)


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "cpu:0", 1, None])
def test_invalid_device(device, graphs):
    with pytest.raises(ValueError, match="device must be 'auto', 'cpu', 'cuda' or 'cuda:N'"):
        MarginalizedGraphKernel(device=device)(graphs)


@pytest.mark.parametrize("make", KERNELS)
def test_float32_is_float64_on_the_cpu(make, graphs):
    """precision is the GPU's arithmetic; the CPU computes in float64 whatever is asked."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = make(device="cpu", precision="float32")(graphs)
    assert K.dtype == np.float64
    np.testing.assert_array_equal(K, make(device="cpu")(graphs))
    assert make().get_params()["precision"] == "float64"


@pytest.mark.parametrize("precision", ["float16", "double", np.float32, None])
def test_invalid_precision(precision, graphs):
    with pytest.raises(ValueError, match="precision must be 'float64' or 'float32'"):
        MarginalizedGraphKernel(precision=precision)(graphs)


def test_devices_report():
    """graphgram.devices() says whether a GPU can be used and, here, why not."""
    info = graphgram.devices()
    assert set(info) == {"built", "library", "usable", "reason", "devices"}
    assert isinstance(info["devices"], list)
    if info["usable"]:
        assert info["reason"] == "" and info["devices"]
        for d in info["devices"]:
            assert d["memory_bytes"] > 0 and d["name"] and d["kept_bytes"] >= 0
            assert d["validation"] is None or d["validation"]["state"] in ("passed", "failed")
    else:
        # No GPU on the machines the tests run on: the reason is one line naming the cause.
        assert info["devices"] == [] and info["reason"]
        assert ("built without CUDA" in info["reason"]) != info["built"]
        with pytest.raises(RuntimeError, match="device='cuda' cannot be used: " + re.escape(info["reason"][:40])):
            MarginalizedGraphKernel(device="cuda")(datasets.load_mutag()[0][:2])
        assert graphgram.release_gpu_memory() == 0


def test_validate_gpu_switch():
    """The GPU self-validation is on by default, sent with every call's device
    parameters, and turned off for a block or a thread by the config switch
    (its effect on a device is tested in Go against the emulated library:
    pybind/device_test.go and cuda/selfcheck)."""
    from graphgram._backend import device_params
    assert graphgram.get_config()["validate_gpu"] is True
    assert device_params("auto", "float64")["validate_gpu"] is True
    with graphgram.config_context(validate_gpu=False):
        assert device_params("cuda", "float32")["validate_gpu"] is False
        K = MarginalizedGraphKernel(LABEL, LABEL, q=0.05)(datasets.load_mutag()[0][:3])
        assert K.shape == (3, 3)
    assert device_params("auto", "float64")["validate_gpu"] is True
