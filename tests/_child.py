"""Helper run in fresh Python processes by test_dependability.py.

``python _child.py roundtrip IN OUT``: first builds graphs with string labels of
its own (so that any process-local numbering of labels would differ from the
parent's), then loads the objects pickled in IN with pickle, joblib and
cloudpickle and writes what they compute to OUT (.npz).

``python _child.py interrupt``: starts a long Gram matrix with its progress bar
drawn from the first poll on (on stderr), is sent SIGINT by the parent once the
bar shows pairs done, and prints when the KeyboardInterrupt arrived and whether
the next call works.

``python _child.py hostile``: runs every malformed-input case of
hostile_cases() and prints one JSON line per case.
"""

import json
import pickle
import signal
import sys
import time

import numpy as np


def _other_labels():
    from graphgram import Graph, MarginalizedGraphKernel
    from graphgram.microkernels import KroneckerDelta, TensorProduct

    gs = [Graph(3, [(0, 1), (1, 2)], node_attrs={"label": ["Zz", "Yy", "Xx"], "sym": ["Q", "R", "S"]},
                edge_attrs={"b": ["w", "v"]}) for _ in range(2)]
    MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(b=KroneckerDelta(0.5)))(gs)


def roundtrip(path_in, path_out):
    import cloudpickle
    import joblib

    _other_labels()
    out = {}
    for how, load in (("pickle", lambda f: pickle.load(f)), ("joblib", joblib.load),
                      ("cloudpickle", lambda f: cloudpickle.load(f))):
        with open("%s.%s" % (path_in, how), "rb") as f:
            objs = load(f)
        for name, value in compute_all(objs).items():
            out["%s/%s" % (how, name)] = value
    np.savez(path_out, **out)


def compute_all(objs):
    """What the parent computes from the same objects: the results that must be bit-identical."""
    graphs, test = objs["graphs"], objs["test"]
    res = {}
    for name, k in objs["kernels"].items():
        res["kernel/" + name] = k(graphs)
        res["kernel_xy/" + name] = k(graphs[:3], test)
    for name, k in objs["fitted"].items():
        res["transform/" + name] = k.transform(test)
    res["pipeline/predict"] = objs["pipeline"].predict(test).astype(np.float64)
    res["pipeline/decision"] = objs["pipeline"].decision_function(test)
    res["gp/predict"] = objs["gp"].predict(test)
    return res


def interrupt():
    from graphgram import MarginalizedGraphKernel, _backend, datasets
    from graphgram.microkernels import KroneckerDelta, TensorProduct

    graphs, _ = datasets.load_mutag()
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)),
                                q=0.01, verbose=True)
    many = distinct_copies(graphs, 40)
    _backend._PROGRESS_DELAY = 0  # the parent watches the bar to know that Go is computing
    print("ready", flush=True)
    t = None
    try:
        k(many)  # 7,520 distinct graphs: ~28 million pairs, minutes of work
        print("finished", flush=True)
    except KeyboardInterrupt:
        t = time.monotonic()
    _backend._PROGRESS_DELAY = 2.0
    print(json.dumps({"caught_at": t, "small_call_ok": bool(np.isfinite(k(graphs[:4])).all())}), flush=True)


def interrupt_gp():
    """Ctrl-C during GaussianProcessRegressor.fit with the low-rank kernel and LBFGS."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel

    from graphgram import MarginalizedGraphKernel, _backend, datasets
    from graphgram.gaussian_process import LBFGS, LowRankGraphKernel
    from graphgram.microkernels import KroneckerDelta, TensorProduct

    graphs, y = datasets.load_mutag()
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)),
                                q=0.01, verbose=True)
    many = distinct_copies(graphs, 20)
    lr = LowRankGraphKernel(k, inducing=200, method="random")  # no kernel call before the fit's first evaluation
    gp = GaussianProcessRegressor(ConstantKernel() * lr + WhiteKernel(), optimizer=LBFGS(file=sys.stdout))
    _backend._PROGRESS_DELAY = 0  # the parent watches the bar to know that Go is computing
    print("ready", flush=True)
    t = None
    try:
        gp.fit(many, np.tile(y, 20))  # 3,760 × 200 distinct pairs with gradients per evaluation
        print("finished", flush=True)
    except KeyboardInterrupt:
        t = time.monotonic()
    _backend._PROGRESS_DELAY = 2.0
    # The fit's kernel (a clone of lr) has its inducing graphs: it still computes.
    small = LowRankGraphKernel(k, inducing=gp.kernel_.k1.k2.inducing_graphs_[:20])(graphs[:4])
    print(json.dumps({"caught_at": t, "small_call_ok": bool(np.isfinite(small).all())}), flush=True)


def interrupt_torch():
    """Ctrl-C during BoTorch's fit_gpytorch_mll with graphgram's GPyTorch kernel."""
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    from graphgram import MarginalizedGraphKernel, _backend, datasets
    from graphgram.gpytorch import FitProgress, GPyTorchGraphKernel
    from graphgram.microkernels import KroneckerDelta, TensorProduct

    graphs, y = datasets.load_mutag()
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)),
                                q=0.01, verbose=True)
    many = distinct_copies(graphs, 10)
    X = torch.arange(len(many), dtype=torch.float64)[:, None]
    gp = SingleTaskGP(X, torch.as_tensor(np.tile(y, 10), dtype=torch.float64)[:, None],
                      covar_module=GPyTorchGraphKernel(k, many))
    _backend._PROGRESS_DELAY = 0  # the parent watches the bar to know that Go is computing
    print("ready", flush=True)
    t = None
    try:
        # 1,880 distinct graphs: 1.8 million pairs with gradients per evaluation
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp), optimizer_kwargs={"callback": FitProgress()})
        print("finished", flush=True)
    except KeyboardInterrupt:
        t = time.monotonic()
    _backend._PROGRESS_DELAY = 2.0
    small = GPyTorchGraphKernel(k, graphs[:4])(torch.arange(4.0)[:, None]).to_dense()
    print(json.dumps({"caught_at": t, "small_call_ok": bool(torch.isfinite(small).all())}), flush=True)


def distinct_copies(graphs, n):
    """n copies of each graph with slightly different weights, so that the solver
    cannot deduplicate them: a genuinely long computation."""
    from graphgram import Graph

    return [Graph(g.n_nodes, g.edges, g.weights * (1 + 1e-3 * c), dict(g.node_attrs), dict(g.edge_attrs))
            for c in range(n) for g in graphs]


def hostile():
    from hostile_cases import CASES

    for name, case in CASES:
        try:
            case()
            result = {"case": name, "outcome": "ok"}
        except (ValueError, TypeError, MemoryError, RuntimeError) as exc:
            result = {"case": name, "outcome": type(exc).__name__, "message": str(exc)}
        except Exception as exc:  # noqa: BLE001 - reported, and the test fails on it
            result = {"case": name, "outcome": "other:" + type(exc).__name__, "message": str(exc)}
        print(json.dumps(result), flush=True)
    print(json.dumps({"case": "__end__"}), flush=True)


if __name__ == "__main__":
    # Ctrl-C as in a terminal, whatever this process inherited: a launcher that
    # runs the tests in the background (`cmd &` in a non-interactive shell)
    # starts them with SIGINT ignored, and Python then never raises
    # KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cmd = sys.argv[1]
    if cmd == "roundtrip":
        roundtrip(sys.argv[2], sys.argv[3])
    elif cmd == "interrupt":
        interrupt()
    elif cmd == "interrupt_gp":
        interrupt_gp()
    elif cmd == "interrupt_torch":
        interrupt_torch()
    elif cmd == "hostile":
        hostile()
