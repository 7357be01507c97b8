"""The record's tables and how its file is opened: the schema (its version refuses a workspace a
newer workbench wrote), write-ahead logging, and the limits of one statement."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["IN_BATCH", "LOCK_WAIT_S", "RECORD_FILE", "SCHEMA", "SCHEMA_VERSION", "StoreUnusable", "WAL_LIMIT_BYTES",
           "bump_version", "database_error_message", "passes_check", "rows_in", "write_ahead_logged"]

#: The version of the tables below; a workspace written by a newer workbench is refused.
SCHEMA_VERSION = 2
#: Bytes the record's write-ahead log is cut back to after a checkpoint (SQLite keeps it at its
#: largest size otherwise).
WAL_LIMIT_BYTES = 64 * 2**20
#: Seconds a connection waits for another process's lock (SQLite's busy timeout, and the WAL switch).
LOCK_WAIT_S = 30.0
#: Values bound in one ``IN (...)`` list at most (SQLite allows 32,766 variables a statement).
IN_BATCH = 500
#: The record's file in a workspace folder: what marks a folder as a workspace.
RECORD_FILE = "workspace.sqlite"
#: Meta key: the embedder, threshold and k the stored note-neighbour lists were made for.


class StoreUnusable(Exception):
    """The database file cannot be used: not SQLite, not a workbench's, or of a newer schema
    (``damaged``), or the machine refuses it now: a full disk, an I/O error (not ``damaged``)."""

    def __init__(self, message: str, damaged: bool = True):
        super().__init__(message)
        self.damaged = damaged


#: SQLite's words for a refusal of the machine (disk, permissions, another process), not damage.
_CAUSES = (("disk is full", "the disk is full"),
           ("disk i/o error", "an I/O error of the disk (a full or failing disk)"),
           ("unable to open", "the file cannot be opened (permissions, or no room for its journal)"),
           ("readonly", "the file or its folder is read-only"),
           ("locked", "another process holds it locked"),
           ("out of memory", "the machine is out of memory"))


def rows_in(db: sqlite3.Connection, sql: str, values: Sequence, *leading, repeat: int = 1) -> Iterator[tuple]:
    """The rows of ``sql``, whose ``{marks}`` stands for the list of an ``IN`` (``repeat`` times in
    it), for ``values`` asked :data:`IN_BATCH` at a time, the ``leading`` parameters bound before
    each batch's (SQLite caps the parameters of a statement)."""
    values = list(values)
    for lo in range(0, len(values), IN_BATCH):
        part = values[lo:lo + IN_BATCH]
        yield from db.execute(sql.format(marks=",".join("?" * len(part))), [*leading, *part * repeat])


def passes_check(path: Path) -> bool | None:
    """Whether the database at ``path`` passes SQLite's ``quick_check`` (None: it cannot be read to tell)."""
    try:
        probe = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return probe.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        finally:
            probe.close()
    except sqlite3.Error:
        return None


def database_error_message(path: Path, exc: BaseException) -> tuple[str, bool]:
    """One line saying why the database at ``path`` failed with ``exc``, and whether it is damaged.

    A refusal of the machine (disk full, I/O error, permissions) is named as such, with nothing
    to discard; a database is called damaged only when it fails SQLite's integrity check."""
    text = str(exc)
    cause = next((words for marker, words in _CAUSES if marker in text.lower()), None)
    healthy = passes_check(path)
    if cause is not None or healthy:
        verdict = "it passes its integrity check: nothing stored is lost" if healthy else "nothing stored is lost"
        return (f"{path}: {cause or 'SQLite refused the step'} ({text}); {verdict}. Fix the cause (free disk "
                "space, say), then run the step again: an unfinished write is completed by the next one or by "
                "`python -m workbench repair`"), False
    return f"{path} cannot be read ({text})", True


def write_ahead_logged(conn: sqlite3.Connection) -> None:
    """Put ``conn``'s database in WAL mode, waiting up to :data:`LOCK_WAIT_S` for another process.

    Switching a new database to WAL needs it alone, and SQLite answers "database is locked" at once,
    without its busy timeout, while another process creates the same file: two ``ingest`` runs
    started together into a new workspace failed so, one open in three."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, source_path TEXT NOT NULL, title TEXT NOT NULL, kind TEXT NOT NULL,
    content_hash TEXT NOT NULL, date TEXT, tags TEXT NOT NULL, relations TEXT NOT NULL,
    ingested_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source_path);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, text TEXT NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL,
    timestamp TEXT, speaker TEXT, text_hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id, ordinal);
CREATE INDEX IF NOT EXISTS chunks_text_hash ON chunks(text_hash);
CREATE TABLE IF NOT EXISTS mentions (
    chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE, surface TEXT NOT NULL,
    entity_type TEXT NOT NULL, start INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS mentions_chunk ON mentions(chunk_id);
CREATE TABLE IF NOT EXISTS triples (
    chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE, subject TEXT NOT NULL,
    relation TEXT NOT NULL, object TEXT NOT NULL, confidence REAL NOT NULL, origin TEXT NOT NULL,
    subject_type TEXT NOT NULL, object_type TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS triples_chunk ON triples(chunk_id);
CREATE INDEX IF NOT EXISTS triples_candidates ON triples(origin) WHERE origin = 'candidate';
CREATE TABLE IF NOT EXISTS chunk_mentions (
    chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE, mentions INTEGER NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunk_mentions_chunk ON chunk_mentions(chunk_id);
CREATE TABLE IF NOT EXISTS comentions (
    chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE, pairs INTEGER NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS comentions_chunk ON comentions(chunk_id);
CREATE TABLE IF NOT EXISTS aliases (alias TEXT PRIMARY KEY, canonical TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS splits (form TEXT PRIMARY KEY, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS rejected_suggestions (a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (a, b));
CREATE TABLE IF NOT EXISTS merge_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (source_path TEXT PRIMARY KEY, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS file_hashes (
    source_path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hashed_ns INTEGER NOT NULL,
    digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS embeddings (
    hash TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (hash, model));
CREATE TABLE IF NOT EXISTS note_vectors (
    note TEXT PRIMARY KEY, content_hash TEXT NOT NULL, first_chunk TEXT NOT NULL, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS note_neighbours (
    note TEXT NOT NULL, neighbour TEXT NOT NULL, similarity REAL NOT NULL, PRIMARY KEY (note, neighbour));
CREATE INDEX IF NOT EXISTS note_neighbours_neighbour ON note_neighbours(neighbour);
CREATE TABLE IF NOT EXISTS note_candidates (
    a TEXT NOT NULL, b TEXT NOT NULL, subject TEXT NOT NULL, object TEXT NOT NULL, confidence REAL NOT NULL,
    PRIMARY KEY (a, b));
CREATE INDEX IF NOT EXISTS note_candidates_b ON note_candidates(b);
CREATE TABLE IF NOT EXISTS summaries (
    kind TEXT NOT NULL, id TEXT NOT NULL, signature TEXT NOT NULL, body TEXT NOT NULL, vector BLOB,
    PRIMARY KEY (kind, id));
"""


def bump_version(db: sqlite3.Connection) -> None:
    """One new version of the record, in ``db``'s transaction: readers derive again."""
    db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
