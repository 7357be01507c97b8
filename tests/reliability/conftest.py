"""Fixtures of the reliability suite: small corpora and the command line run as a user runs it
(the helpers themselves live in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import make_corpus
from tests.conftest import run_cli as _run_cli


@pytest.fixture
def write_corpus():
    """``write_corpus(folder, n, offset=0)`` writes ``n`` one-line documents; returns the folder."""
    return make_corpus


@pytest.fixture
def run_cli():
    """``run_cli(*args, env=None)``: ``python -m workbench ARGS`` in a subprocess, output captured."""
    return _run_cli


@pytest.fixture
def small(tmp_path, make_workspace, write_corpus):
    """A workspace of six one-line documents, closed so the CLI can open it."""
    ws = make_workspace()
    ws.ingest([write_corpus(tmp_path / "corpus", 6)])
    ws.close()
    return ws
