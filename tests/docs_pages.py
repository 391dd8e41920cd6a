"""Run the Python code blocks of a docs page: what the tests of docs/*.md share."""

import re

from conftest import REPO

_FENCE = re.compile(r"```python\n(.*?)```", re.S)


def code_blocks(page):
    """The ```python blocks of ``docs/<page>``, in order.

    Parameters
    ----------
    page : str
        The page's file name, e.g. ``"mixtures.md"``.

    Returns
    -------
    list of (int, str)
        Each block's first line number on the page (from 1) and its code.
    """
    text = (REPO / "docs" / page).read_text()
    blocks = [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]
    assert blocks, "docs/%s has no ```python block" % page
    return blocks


def run_code_blocks(page, shared=False):
    """Execute every ```python block of ``docs/<page>``, in order.

    A failure's traceback names the page and the line of the page the failing
    statement is on.

    Parameters
    ----------
    page : str
        The page's file name, e.g. ``"attributes.md"``.
    shared : bool, default=False
        ``False``: each block runs in a fresh namespace (a page of
        self-contained recipes). ``True``: all run in one namespace, like a
        notebook's cells, for a page whose blocks build on each other.

    Returns
    -------
    dict
        The namespace of the last block (with ``shared=True``, the page's).
    """
    namespace = {}
    for line, code in code_blocks(page):
        if not shared:
            namespace = {}
        # Pad with blank lines so that line numbers in a traceback are the page's.
        exec(compile("\n" * (line - 1) + code, "docs/" + page, "exec"), namespace)
    return namespace
