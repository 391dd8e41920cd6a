"""Dependability: persistence across real process boundaries, Ctrl-C, progress,
memory, hostile input (each run in a subprocess), threads and memory over many calls."""

import copy
import json
import os
import pickle
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import cloudpickle
import joblib
import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
from sklearn.model_selection import cross_validate
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

import graphgram
from graphgram import Graph, MarginalizedGraphKernel, datasets
from graphgram.microkernels import KroneckerDelta, TensorProduct

import kernel_table

HERE = Path(__file__).resolve().parent
LABEL = TensorProduct(label=KroneckerDelta(0.5))


def child(*args, timeout=300, **kw):
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(HERE / "_child.py"), *args], cwd=HERE, env=env, timeout=timeout,
                          capture_output=True, text=True, **kw)


def string_graphs():
    """MUTAG with its labels turned into element symbols (strings), plus a few new symbols."""
    graphs, y = datasets.load_mutag()
    names = np.array(["C", "N", "O", "F", "I", "Cl", "Br"])
    out = []
    for g in graphs[:24]:
        out.append(Graph(g.n_nodes, g.edges, g.weights, node_attrs={"label": names[g.node_attrs["label"]]},
                         edge_attrs={"label": np.array(["single", "double", "triple", "aromatic"])[g.edge_attrs["label"]]}))
    return out, y[:24]


def persisted_objects():
    from _child import compute_all  # noqa: F401 - the same function the child process uses

    graphs, y = string_graphs()
    train, test, ytr = graphs[:16], graphs[16:], y[:16]
    # kernel_table.py's pickling column (the kernels it leaves out are listed by
    # test_every_kernel_pickles_or_says_why).
    kernels = {name: make() for name, make in kernel_table.constructors("pickling").items()}
    fitted = {name: copy.deepcopy(k).fit(train) for name, k in kernels.items()}
    pipe = Pipeline([("k", MarginalizedGraphKernel(LABEL, LABEL, q=0.05, normalize=True)),
                     ("svm", SVC(kernel="precomputed"))]).fit(train, ytr)
    gp = GaussianProcessRegressor(ConstantKernel() * MarginalizedGraphKernel(LABEL, LABEL, q=0.05, normalize=True)
                                  + WhiteKernel(), optimizer=None).fit(train, ytr.astype(float))
    return {"graphs": train, "test": test, "kernels": kernels, "fitted": fitted, "pipeline": pipe, "gp": gp}


def test_pickle_joblib_cloudpickle_into_fresh_processes_bit_identical(tmp_path):
    from _child import compute_all

    objs = persisted_objects()
    expected = compute_all(objs)
    base = tmp_path / "objs"
    with open("%s.pickle" % base, "wb") as f:
        pickle.dump(objs, f)
    joblib.dump(objs, "%s.joblib" % base)
    with open("%s.cloudpickle" % base, "wb") as f:
        cloudpickle.dump(objs, f)
    r = child("roundtrip", str(base), str(tmp_path / "out.npz"))
    assert r.returncode == 0, r.stderr[-3000:]
    got = np.load(tmp_path / "out.npz")
    assert len(got.files) == 3 * len(expected)
    for key in got.files:
        how, name = key.split("/", 1)
        np.testing.assert_array_equal(got[key], expected[name], err_msg=key)
    # In this process too: deep copies compute the same.
    again = compute_all(copy.deepcopy(objs))
    for name in expected:
        np.testing.assert_array_equal(again[name], expected[name], err_msg=name)


@pytest.mark.parametrize("name", kernel_table.params("pickling"))
def test_every_kernel_pickles_in_process(name):
    """Each kernel of the table's pickling column (the ones it leaves out are skipped with
    their reason), pickled and loaded here, computes the same bits; the test above takes
    them all into fresh processes."""
    graphs, _ = string_graphs()
    k = kernel_table.constructors("pickling")[name]()
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(k))(graphs[:6], graphs[6:9]), k(graphs[:6], graphs[6:9]))


def test_fitted_state_is_plain_data():
    graphs, _ = string_graphs()
    k = MarginalizedGraphKernel(LABEL, LABEL, normalize=True).fit(graphs[:4])
    for key, value in vars(k).items():
        assert isinstance(value, (type(None), bool, int, float, str, tuple, list, np.ndarray, TensorProduct)), key
    assert "addr" not in repr(vars(k)).lower()


def test_cross_validate_parallel_estimators_usable_in_parent():
    graphs, y = string_graphs()
    pipe = Pipeline([("k", MarginalizedGraphKernel(LABEL, LABEL, q=0.05, normalize=True)),
                     ("svm", SVC(kernel="precomputed"))])
    res = cross_validate(pipe, graphs, y, cv=2, n_jobs=2, return_estimator=True)
    assert len(res["estimator"]) == 2
    for est in res["estimator"]:
        K = est.named_steps["k"].transform(graphs[:5])
        assert K.shape == (5, est.named_steps["k"].n_graphs_fit_) and np.all(np.isfinite(K))
        pred = est.predict(graphs[:5])
        np.testing.assert_array_equal(pred, est.named_steps["svm"].predict(K))


def test_string_labels_mix_across_processes(tmp_path):
    """Graphs pickled in one process and used with graphs of another give the right values."""
    a = Graph(3, [(0, 1), (1, 2)], node_attrs={"label": ["C", "O", "N"]}, edge_attrs={"label": ["s", "d"]})
    k = MarginalizedGraphKernel(LABEL, LABEL)
    ref = k([a, a])
    code = ("import pickle,sys; from graphgram import Graph, MarginalizedGraphKernel; "
            "from graphgram.microkernels import TensorProduct, KroneckerDelta; "
            "Graph(2, [(0, 1)], node_attrs={'label': ['Zn', 'N']}, edge_attrs={'label': ['x']}); "
            "a = Graph(3, [(0, 1), (1, 2)], node_attrs={'label': ['C', 'O', 'N']}, edge_attrs={'label': ['s', 'd']}); "
            "sys.stdout.buffer.write(pickle.dumps(a))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    b = pickle.loads(r.stdout)
    np.testing.assert_array_equal(k([a, b]), ref)


# The progress bar of the many-pairs call, once it has counted some pairs done.
_BAR_WITH_PAIRS_DONE = re.compile(r"graphgram marginalized gram(\+grad)?: +\d+%.*\b[1-9]\d*/\d+ .*pair/s")


@pytest.mark.parametrize("command", ["interrupt", "interrupt_gp", "interrupt_torch"])
def test_progress_bar_then_ctrl_c_within_a_second_and_next_call_works(command):
    """A user watches the bar of a long call and presses Ctrl-C: the bar shows the
    pairs Go has done, KeyboardInterrupt arrives within a second, the next call works.
    The call is minutes of distinct pairs on any machine; nothing waits on a clock:
    the signal is sent once the bar has counted pairs done. ``interrupt_gp``: the
    call is an evaluation of a low-rank kernel inside GaussianProcessRegressor.fit;
    ``interrupt_torch``: inside BoTorch's fit_gpytorch_mll with the GPyTorch kernel."""
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, str(HERE / "_child.py"), command], cwd=HERE, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr = bytearray()
    bar_seen = threading.Event()

    def read_stderr():
        while chunk := os.read(p.stderr.fileno(), 4096):
            stderr.extend(chunk)
            if _BAR_WITH_PAIRS_DONE.search(stderr.decode(errors="replace")):
                bar_seen.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert p.stdout.readline().decode().strip() == "ready"
        # A safety net against a hang, not a measure of the work: the bar shows
        # from the first poll (50 ms) once Go has counted a pair.
        assert bar_seen.wait(300), "no progress bar with pairs done: %r" % stderr[-2000:].decode(errors="replace")
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=120)
        reader.join(10)
    finally:
        p.kill()
    err = stderr.decode(errors="replace")
    assert p.returncode == 0, err[-3000:]
    out = out.decode()
    assert "finished" not in out
    report = json.loads(out.strip().splitlines()[-1])
    assert report["caught_at"] is not None and report["caught_at"] - sent < 1.0, report
    assert report["small_call_ok"]


class _FakeClock:
    """A clock for ``_backend._run`` that reads ``start`` once, then ``later``;
    ``polled`` is set once the calling thread has looked ``polls`` times."""

    def __init__(self, start, later, polls=20):
        self.start, self.later, self.polls = start, later, polls
        self.reads = 0
        self.polled = threading.Event()

    def __call__(self):
        self.reads += 1
        if self.reads > self.polls:
            self.polled.set()
        return self.start if self.reads == 1 else self.later


@pytest.mark.parametrize("verbose, config_progress, running, shown", [
    (True, True, 2.0, True),      # still running at the delay (2 s): a bar
    (None, True, 3600.0, True),   # verbose=None follows the configuration
    (True, True, 1.99, False),    # not yet at the delay, however many polls: no bar
    (False, True, 3600.0, False),  # verbose=False: never a bar
    (None, False, 3600.0, False),  # config_context(progress=False): never a bar
])
def test_progress_bar_only_for_calls_still_running_after_the_delay(monkeypatch, capsys, verbose, config_progress,
                                                                    running, shown):
    """_backend._run on a stand-in for a Go call that announces 1,000 units, does
    400 and holds until released; the clock is driven by the test, so the outcome
    does not depend on the machine's speed."""
    from graphgram import _backend

    clock = _FakeClock(100.0, 100.0 + running)
    monkeypatch.setattr(_backend, "_clock", clock)
    monkeypatch.setattr(_backend, "_POLL", 0.001)
    bars = []
    bar_drawn = threading.Event()
    real_bar = _backend._progress_bar

    def recording_bar(total, desc):
        bars.append(real_bar(total, desc))
        bar_drawn.set()
        return bars[-1]

    monkeypatch.setattr(_backend, "_progress_bar", recording_bar)
    release = threading.Event()

    def held_call(ctl):
        ctl[2] = 1000
        ctl[1] = 400
        assert release.wait(120), "never released"
        ctl[1] = 1000
        return "done"

    def release_when_settled():
        # Released once the bar is drawn, or once the poll loop has looked 20 times without drawing one.
        (bar_drawn if shown else clock.polled).wait(120)
        release.set()

    threading.Thread(target=release_when_settled, daemon=True).start()
    ctl = np.zeros(3, dtype=np.int64)
    with graphgram.config_context(progress=config_progress):
        assert _backend._run(held_call, (ctl,), ctl, verbose, "graphgram test gram") == "done"
    assert clock.polled.is_set() or shown
    err = capsys.readouterr().err
    if shown:
        assert len(bars) == 1 and bars[0].total == 1000 and bars[0].n == 1000
        assert re.search(r"graphgram test gram: +\d+%.*\d+/1000 .*pair", err), err
    else:
        assert bars == [] and err == ""


def test_no_bar_for_a_call_that_ends_before_the_first_poll(monkeypatch, capsys):
    """Even with no delay at all, a call that is over before the calling thread
    first looks draws nothing: no bar flashes by."""
    from graphgram import _backend

    monkeypatch.setattr(_backend, "_PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(_backend, "_POLL", 3600.0)  # the first look comes when the call is over, however slow the machine
    monkeypatch.setattr(_backend, "_progress_bar", lambda total, desc: pytest.fail("a bar was drawn"))
    ctl = np.zeros(3, dtype=np.int64)

    def instant_call(ctl):
        ctl[2] = ctl[1] = 1000
        return "done"

    assert _backend._run(instant_call, (ctl,), ctl, True, "graphgram test gram") == "done"
    assert capsys.readouterr().err == ""


def test_quiet_calls_write_nothing():
    code = ("from graphgram import MarginalizedGraphKernel, datasets; "
            "from graphgram.microkernels import TensorProduct, KroneckerDelta; "
            "g, _ = datasets.load_mutag(); k = TensorProduct(label=KroneckerDelta(0.5)); "
            "MarginalizedGraphKernel(k, k, q=0.05, verbose=False)(g)")
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr[-500:]
    with graphgram.config_context(progress=False):
        assert graphgram.get_config()["progress"] is False
    assert graphgram.get_config()["progress"] is True


def test_hostile_inputs_raise_clear_errors_without_crashing():
    from hostile_cases import CASES, EXPECTED

    r = child("hostile")
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    done = [d["case"] for d in lines]
    assert r.returncode == 0 and done and done[-1] == "__end__", (
        "the interpreter died (exit %d) after case %r: %s" % (r.returncode, done[-1] if done else None, r.stderr[-2000:]))
    assert [name for name, _ in CASES] == done[:-1]
    for d in lines[:-1]:
        outcome, pattern = EXPECTED[d["case"]]
        assert d["outcome"] == outcome, d
        if pattern:
            assert re.search(pattern, d["message"]), d


def test_memory_error_names_the_size():
    g = Graph(1, node_attrs={"label": [1]})
    with pytest.raises(MemoryError, match=r"shape \(3000000, 3000000\).*needs .* TiB"):
        MarginalizedGraphKernel(LABEL, LABEL)([g] * 3_000_000)


def test_go_panic_becomes_runtime_error_and_core_keeps_working():
    from graphgram import _backend

    with pytest.raises(RuntimeError, match="Go panic"):
        _backend.self_test_panic()
    assert MarginalizedGraphKernel()([Graph(2, [(0, 1)])]).shape == (1, 1)


def test_gradient_layout_mismatch_is_refused_before_writing():
    """Go checks the hyperparameter count Python declares against its own."""
    k = MarginalizedGraphKernel(LABEL, LABEL)
    g = Graph(2, [(0, 1)], node_attrs={"label": [1, 2]}, edge_attrs={"label": [1]})
    params = k._params
    k._params = lambda nl, el: dict(params(nl, el), n_params=7)
    with pytest.raises(RuntimeError, match="Python declares 7 hyperparameters, the Go core finds 3"):
        k([g], eval_gradient=True)


def test_threads_bit_identical_and_n_jobs():
    graphs, _ = datasets.load_mutag()
    k = MarginalizedGraphKernel(LABEL, LABEL, q=0.05)
    ref = k(graphs[:30])
    results = [None] * 4

    def work(i):
        results[i] = MarginalizedGraphKernel(LABEL, LABEL, q=0.05, n_jobs=1 + i % 2)(graphs[:30])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for K in results:
        np.testing.assert_array_equal(K, ref)


def test_memory_flat_over_many_calls():
    graphs, _ = datasets.load_mutag()
    k = MarginalizedGraphKernel(LABEL, LABEL, q=0.05, verbose=False)
    for _ in range(100):
        k(graphs[:4])

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    before = rss()
    for _ in range(2000):
        k(graphs[:4], graphs[4:6])
    grown = rss() - before
    assert grown < 30 * 2**20, "resident memory grew by %.1f MiB over 2,000 calls" % (grown / 2**20)


def test_jupyter_progress_widget_then_interrupt():
    """In a Jupyter kernel: a long computation shows its progress bar as a widget,
    an interrupt then stops it within a second with KeyboardInterrupt, and the next
    cell works. The interrupt is sent once the widget is displayed, not after a wait."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(HERE))
    try:
        setup = ("import time; from graphgram import _backend, MarginalizedGraphKernel, datasets; "
                 "from graphgram.microkernels import TensorProduct, KroneckerDelta; from _child import distinct_copies; "
                 "g, _ = datasets.load_mutag(); kd = TensorProduct(label=KroneckerDelta(0.5)); "
                 "k = MarginalizedGraphKernel(kd, kd, q=0.01); many = distinct_copies(g, 40); "
                 "_backend._PROGRESS_DELAY = 0")
        assert kc.execute_interactive(setup, timeout=120)["content"]["status"] == "ok"
        # stop_on_error=False: the cell is meant to fail, and ipykernel would
        # otherwise abort the requests that reach it while it handles the
        # error — a race the next cell can lose (status 'aborted').
        msg_id = kc.execute("caught = None\ntry:\n    k(many)\nexcept KeyboardInterrupt:\n"
                            "    caught = time.monotonic()\n    raise", stop_on_error=False)
        while True:  # the widget, displayed from the first poll once Go has announced its pairs
            msg = kc.get_iopub_msg(timeout=300)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            assert msg["msg_type"] != "error", msg["content"]
            if "application/vnd.jupyter.widget-view+json" in msg["content"].get("data", {}):
                break
        sent = time.monotonic()
        km.interrupt_kernel()
        while True:
            msg = kc.get_shell_msg(timeout=120)
            if msg["msg_type"] == "execute_reply" and msg["parent_header"].get("msg_id") == msg_id:
                break
        assert msg["content"]["status"] == "error" and msg["content"]["ename"] == "KeyboardInterrupt"
        out = []
        reply = kc.execute_interactive("_backend._PROGRESS_DELAY = 2.0; print(caught - %r); print(k(g[:3]).shape)" % sent,
                                       timeout=120, output_hook=lambda m: out.append(m["content"].get("text", "")))
        assert reply["content"]["status"] == "ok"
        latency, shape = "".join(out).split("\n")[:2]
        assert float(latency) < 1.0 and shape == "(3, 3)"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_go_core_version_is_the_package_version():
    from graphgram import _backend

    assert _backend.go_version() == graphgram.__version__
