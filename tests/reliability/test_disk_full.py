"""Issue 27, item 5: a full disk (SQLite's own SQLITE_FULL, made real with ``max_page_count``;
ENOSPC injected into a file write) is one line naming the cause, nothing stored is lost, and no
message advises discarding a database that passes its integrity check."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from workbench.record.store import Store, database_error_message
from workbench.workspace.workspace import WorkspaceError, _open_store


@pytest.fixture
def small(tmp_path, make_workspace, write_corpus):
    ws = make_workspace()
    ws.ingest([write_corpus(tmp_path / "corpus", 4)])
    return ws


def test_sqlite_disk_full_is_named_as_such_and_loses_nothing(small, tmp_path, write_corpus):
    before = small.store.count("documents")
    pages = small.store.db.execute("PRAGMA page_count").fetchone()[0]
    small.store.db.execute(f"PRAGMA max_page_count = {pages}")  # this connection's disk is now full
    with pytest.raises(sqlite3.OperationalError) as caught:
        for n in range(20):
            small.store.set_meta(f"filler{n}", "x" * 200_000)
    assert "full" in str(caught.value)
    message, damaged = database_error_message(small.path / "workspace.sqlite", caught.value)
    assert not damaged
    assert message.startswith(f"{small.path / 'workspace.sqlite'}: the disk is full")
    assert "passes its integrity check" in message and "nothing stored is lost" in message
    assert "backup" not in message and "move it away" not in message and "\n" not in message
    small.store.db.execute("PRAGMA max_page_count = 1073741823")
    assert small.store.integrity_ok() and small.store.count("documents") == before


def test_the_command_line_reports_a_full_disk_in_one_line(small, monkeypatch, capsys):
    from workbench import cli
    from workbench.cli import core

    small.close()

    def full(args):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(core, "cmd_stats", full)
    code = cli.main(["--workspace", str(small.path), "stats"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "the disk is full" in err
    assert "backup" not in err and "move it away" not in err and "Traceback" not in err


def test_a_full_disk_at_open_is_not_called_a_foreign_database(small, monkeypatch):
    small.close()
    real_connect = sqlite3.connect

    def io_error(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(sqlite3, "connect", io_error)
    with pytest.raises(WorkspaceError) as caught:
        _open_store(small.path, create=False)
    monkeypatch.setattr(sqlite3, "connect", real_connect)
    text = str(caught.value)
    assert "an I/O error of the disk" in text and "nothing stored is lost" in text
    assert "not a workbench database" not in text and "move it away" not in text
    assert Store(small.path / "workspace.sqlite").integrity_ok()


def test_a_damaged_database_is_still_called_damaged(tmp_path):
    bad = tmp_path / "workspace.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    message, damaged = database_error_message(bad, sqlite3.DatabaseError("database disk image is malformed"))
    assert damaged and "cannot be read" in message


def test_enospc_is_described_by_its_cause():
    from workbench.ingest.failures import describe_os_error

    assert describe_os_error(OSError(errno.ENOSPC, "No space left on device")).startswith("the disk is full")
    assert describe_os_error(OSError(errno.EIO, "Input/output error")).startswith("an I/O error of the disk")
