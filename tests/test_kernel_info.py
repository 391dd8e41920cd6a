"""The registry of the explicit-feature kinds as Python sees it: KernelInfo is the
one source of the kernels' bounds, scales and fixed columns, and features(X) of
every kind is its feature map or refused with the core's reason."""

import numpy as np
import pytest

from graphgram import (GraphletSamplingKernel, HashGraphKernel, NeighborhoodHashKernel, NSPDKKernel,
                       PyramidMatchKernel, datasets)
from graphgram import _backend

KINDS = ("wl", "edges", "hash", "nh", "graphlets", "propagation", "propagation_attr", "nspdk", "pyramid", "oddsth")


@pytest.fixture(scope="module")
def graphs():
    return datasets.load_mutag()[0][:12]


def test_every_kind_answers():
    for kind in KINDS:
        info = _backend.kernel_info(kind)
        assert info["features"] == kind and info["semirings"]
        assert info["feature_map"] == (info["no_feature_map"] == "")
        assert all(low <= high for low, high in info["bounds"].values())
    assert _backend.kernel_info("hash")["bounds"] == {"n_iter": [0, 100], "hashes": [1, 10000], "per_hash": [1, 64]}
    assert _backend.kernel_info("nh")["bounds"] == {"rounds": [1, 100], "bits": [1, 64]}
    assert _backend.kernel_info("hash", hashes=4)["feature_scale"] == 0.5
    assert len(_backend.kernel_info("graphlets", k=4)["classes"]) == 11
    # A cached answer is not shared: changing one leaves the next intact.
    _backend.kernel_info("nh")["bounds"].clear()
    assert _backend.kernel_info("nh")["bounds"]
    with pytest.raises(ValueError, match="features must be one of"):
        _backend.kernel_info("nope")
    with pytest.raises(ValueError, match="unknown field"):
        _backend.kernel_info("pyramid", levels=3)


def test_bounds_come_from_the_core():
    hi = _backend.kernel_info("hash")["bounds"]["per_hash"][1]
    with pytest.raises(ValueError, match=r"n_projections must be in \[1, %d\], got %d" % (hi, hi + 1)):
        HashGraphKernel(n_projections=hi + 1)._check_params()
    hi = _backend.kernel_info("pyramid")["bounds"]["L"][1]
    with pytest.raises(ValueError, match=r"L must be in \[1, %d\]" % hi):
        PyramidMatchKernel(L=hi + 1)._check_params()


def test_features_of_every_kind(graphs):
    for kernel in (NeighborhoodHashKernel(), NSPDKKernel()):
        with pytest.raises(NotImplementedError, match="has no .* feature map: .*; use the Gram matrix"):
            kernel.features(graphs)
    for kernel in (GraphletSamplingKernel(k=4), PyramidMatchKernel(L=3, d=4)):
        F = kernel.features(graphs)
        np.testing.assert_allclose((F @ F.T).toarray(), kernel(graphs), rtol=1e-13)
    F = GraphletSamplingKernel(k=3).features(graphs)
    np.testing.assert_allclose(np.asarray(F.sum(axis=1)).ravel(), 1, rtol=1e-15)
