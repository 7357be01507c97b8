"""Fixtures of the reliability suite: small corpora and the command line run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def make_corpus(folder: Path, n: int, offset: int = 0) -> Path:
    """``n`` one-line documents that state relations between services and queues."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(offset, offset + n):
        (folder / f"svc{i:04d}.txt").write_text(
            f"The service number {i} depends on the queue number {i % 7}.\n", encoding="utf-8")
    return folder


@pytest.fixture
def write_corpus():
    """``write_corpus(folder, n, offset=0)`` writes ``n`` one-line documents; returns the folder."""
    return make_corpus


def _run_cli(*args: str, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
        timeout=timeout, env={**os.environ, "TQDM_DISABLE": "1", **(env or {})},
    )


@pytest.fixture
def run_cli():
    """``run_cli(*args, env=None)``: ``python -m workbench ARGS`` in a subprocess, output captured."""
    return _run_cli
