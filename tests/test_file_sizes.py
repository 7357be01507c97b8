"""Every source file of the project holds one concept, and so stays under 600 lines: a file
that grows past it is two concepts, to be given a module each (a module cut at a line count
instead of a concept is caught in review, not here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT

LIMIT = 600


def source_files(root: Path = ROOT) -> list[Path]:
    """The project's Python files: the package, the app, its pages and the tests."""
    found = [*root.glob("*.py"), *(root / "pages").glob("*.py")]
    for folder in ("workbench", "tests"):
        found += (root / folder).rglob("*.py")
    return sorted(found)


def too_long(paths: list[Path], limit: int = LIMIT) -> list[str]:
    """``"path: N lines"`` for each file of ``limit`` lines or more."""
    counted = ((p, len(p.read_text(encoding="utf-8").splitlines())) for p in paths)
    return [f"{p.relative_to(ROOT) if p.is_relative_to(ROOT) else p}: {n} lines" for p, n in counted if n >= limit]


def test_the_walk_reads_the_project():
    files = source_files()
    assert len(files) > 200 and ROOT / "app.py" in files and ROOT / "workbench" / "workspace" / "workspace.py" in files


def test_every_source_file_is_under_600_lines():
    assert too_long(source_files()) == []


@pytest.mark.parametrize("lines, caught", [(599, False), (600, True)])
def test_a_file_at_the_limit_is_caught(tmp_path, lines, caught):
    planted = tmp_path / "big.py"
    planted.write_text("x = 1\n" * lines, encoding="utf-8")
    assert bool(too_long([planted])) is caught
