"""An ingest reads again only the files whose stat changed (workbench.ingest.file_hashes)."""

from __future__ import annotations

import os
import time

import pytest

import workbench.ingest.file_hashes as file_hashes
from tests.conftest import make_corpus

OLD_NS = 1_600_000_000 * 10**9  # September 2020: far outside the racy window


@pytest.fixture
def reads(monkeypatch):
    """The files hashed (read), by path, counted around the real hashing."""
    seen: list[str] = []
    real = file_hashes.hashlib.file_digest

    def counting(handle, digest):
        seen.append(handle.name)
        return real(handle, digest)

    monkeypatch.setattr(file_hashes.hashlib, "file_digest", counting)
    return seen


def _age(folder, ns: int = OLD_NS) -> None:
    for path in folder.iterdir():
        os.utime(path, ns=(ns, ns))


def _rewrite_same_size(path) -> None:
    """New content of the same length, the modification time put back: only reading tells."""
    info = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("a", "e", 1) if "a" in text else text.upper(), encoding="utf-8")
    assert path.stat().st_size == info.st_size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def test_unchanged_files_are_not_read_again(make_workspace, tmp_path, reads):
    corpus = make_corpus(tmp_path / "notes", 12)
    _age(corpus)
    ws = make_workspace()
    first = ws.ingest([corpus])
    assert len(reads) == 12 and first.documents_added == 12
    reads.clear()
    second = ws.ingest([corpus])
    assert reads == [] and second.documents_unchanged == 12

    changed = sorted(corpus.iterdir())[3]
    changed.write_text(changed.read_text(encoding="utf-8") + "\nThe billing service depends on ledger.\n",
                       encoding="utf-8")
    third = ws.ingest([corpus])
    assert reads == [str(changed)]
    assert third.documents_unchanged == 11 and third.documents_seen == 12
    assert any("ledger" in c.text for c in ws.chunks())


def test_a_file_changed_within_the_racy_window_is_read_again(make_workspace, tmp_path, reads):
    corpus = make_corpus(tmp_path / "notes", 3)
    now = time.time_ns()
    _age(corpus, now)  # modified as it is hashed: its stat cannot vouch for it
    ws = make_workspace()
    ws.ingest([corpus])
    target = sorted(corpus.iterdir())[0]
    _rewrite_same_size(target)
    reads.clear()
    report = ws.ingest([corpus])
    assert str(target) in reads
    assert report.documents_unchanged == 2
    assert target.read_text(encoding="utf-8")[:40] in " ".join(c.text for c in ws.chunks())


def test_an_old_file_whose_stat_is_unchanged_is_trusted_and_a_new_time_is_not(tmp_path):
    path = tmp_path / "a.md"
    path.write_text("alpha", encoding="utf-8")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    first = file_hashes.FileHashes({})
    digest = first.digest(path, "a")
    kept = first.read_now()
    _rewrite_same_size(path)
    again = file_hashes.FileHashes(kept)
    assert again.digest(path, "a") == digest and again.reads == 0  # what git also trusts
    os.utime(path, ns=(OLD_NS + 1, OLD_NS + 1))
    assert again.digest(path, "a") != digest and again.reads == 1


def test_not_loadable_files_give_no_digest(tmp_path):
    hashes = file_hashes.FileHashes({})
    (tmp_path / "x.exe").write_bytes(b"MZ")
    os.mkfifo(tmp_path / "pipe.md")
    assert hashes.digest(tmp_path / "x.exe", "x") is None
    assert hashes.digest(tmp_path / "pipe.md", "p") is None  # a FIFO would block the read
    assert hashes.digest(tmp_path / "missing.md", "m") is None
    assert hashes.reads == 0


def test_hashes_of_removed_files_are_forgotten(make_workspace, tmp_path):
    corpus = make_corpus(tmp_path / "notes", 4)
    ws = make_workspace()
    ws.ingest([corpus])
    gone = sorted(corpus.iterdir())[0]
    assert str(gone.resolve()) in ws.store.file_hashes()
    gone.unlink()
    ws.ingest([corpus])
    assert str(gone.resolve()) not in ws.store.file_hashes()
    assert len(ws.store.file_hashes()) == 3
