"""The version of graphgram: its single source.

pyproject.toml reads it (``[tool.setuptools.dynamic]``), setup.py passes it to the Go
linker, and ``graphgram.__version__`` re-exports it. Change it here only.
"""

__version__ = "0.1.0"
