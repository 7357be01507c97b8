"""What an embedded Chroma store leaves behind, given back: the catalogue's free pages, unless a
reader holds the catalogue (then nothing is touched and nothing is raised)."""

from __future__ import annotations

import sqlite3

import workbench.vectors.chroma_folders as chroma_folders
from workbench.vectors.chroma_folders import compact_catalogue


def _catalogue_withfree_pages(folder):
    folder.mkdir()
    path = folder / "chroma.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE rows (body TEXT)")
    db.executemany("INSERT INTO rows VALUES (?)", [("x" * 2000,) for _ in range(500)])
    db.commit()
    db.execute("DELETE FROM rows")
    db.commit()
    db.close()
    return path


def free_pages(path) -> int:
    """Free pages of the SQLite file at ``path``."""
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        db.close()


def test_the_catalogues_free_pages_are_given_back(tmp_path):
    path = _catalogue_withfree_pages(tmp_path / "chroma")
    before = path.stat().st_size
    assert free_pages(path) > 200
    compact_catalogue(tmp_path / "chroma")
    assert free_pages(path) == 0 and path.stat().st_size * 10 < before


def test_a_catalogue_a_reader_holds_is_left_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(chroma_folders, "CATALOGUE_BUSY_S", 0.1)
    path = _catalogue_withfree_pages(tmp_path / "chroma")
    reader = sqlite3.connect(path)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM rows").fetchone()  # a read transaction held open
    try:
        compact_catalogue(tmp_path / "chroma")
    finally:
        reader.rollback()
        reader.close()
    assert free_pages(path) > 200


def test_no_catalogue_is_nothing_to_do(tmp_path):
    compact_catalogue(tmp_path / "absent")
    assert not (tmp_path / "absent").exists()
