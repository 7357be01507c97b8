"""The SQLite system of record of a workspace.

Documents, chunks, mentions, triples, user aliases and splits, the merge log, the
embedding cache and the derived summaries (community reports, conversation episodes, with
their embeddings) live in ``workspace.sqlite``. A document is replaced in one transaction, so a
crash never leaves half of one. Every change bumps ``version``, which tells readers when a
derived structure (the graph, the keyword index) must be rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np
import orjson

from .packed_rows import (pack_comentions, pack_mentions, unpack_comentions,
                          unpack_mentions)
from ..model import COMENTION_ORIGIN, COMENTION_RELATION, Chunk, DeclaredRelation, Document, Mention, Triple
from .document_writes import DocumentWrites
from .note_rows import NoteRows, triple_row
from .schema import (LOCK_WAIT_S, RECORD_FILE, SCHEMA, SCHEMA_VERSION, WAL_LIMIT_BYTES, StoreUnusable,
                     bump_version, database_error_message, passes_check, rows_in, write_ahead_logged)
from .derivation_reads import DerivationRowReads

__all__ = ["Store", "DocumentRecord", "RECORD_FILE", "StoreUnusable", "SCHEMA_VERSION", "database_error_message",
           "passes_check"]

#: A triple's columns in :class:`~workbench.model.Triple`'s order.
_TRIPLE_COLUMNS = "subject, relation, object, chunk_id, confidence, origin, subject_type, object_type"


@dataclass(frozen=True)
class DocumentRecord:
    """A stored document's metadata (its text lives in its chunks)."""

    id: str
    source_path: str
    title: str
    kind: str
    content_hash: str
    date: str | None
    tags: tuple[str, ...]
    relations: tuple[DeclaredRelation, ...]
    chunks: int = 0


class Store:
    """SQLite access for one workspace; safe to share between threads. Its parts: ``notes``
    (the note-similarity rows) and ``rows`` (the reads of the incremental derivation)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._local = threading.local()
        self.notes = NoteRows(self)
        self.rows = DerivationRowReads(self)
        self._check()  # before anything is written to the file
        with self.transaction() as db:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR IGNORE INTO meta VALUES ('workspace_id', ?)", (uuid.uuid4().hex[:12],))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('version', '0')")
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            # Schema 2 keeps mentions and co-mention pairs packed (chunk_mentions, comentions): schema 1 reads neither.
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version' AND CAST(value AS INTEGER) < ?",
                       (str(SCHEMA_VERSION), SCHEMA_VERSION))

    def _check(self) -> None:
        """Refuse a file that is not a workbench database, read-only, changing nothing in it.

        Raises
        ------
        StoreUnusable
            For random bytes, another program's SQLite database, or a newer schema.
        """
        if not self.path.exists() or self.path.stat().st_size == 0:
            return  # a new workspace
        try:
            probe = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
            try:
                tables = {r[0] for r in probe.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                meta = dict(probe.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
            finally:
                probe.close()
        except sqlite3.DatabaseError as exc:
            message, damaged = database_error_message(self.path, exc)
            if damaged:
                raise StoreUnusable(f"{self.path} is not a workbench database ({exc})") from None
            raise StoreUnusable(message, damaged=False) from None
        if tables and "workspace_id" not in meta:
            raise StoreUnusable(f"{self.path} is an SQLite database of another program (tables: "
                                f"{', '.join(sorted(tables)[:5])}), not a workbench workspace")
        try:
            version = int(meta.get("schema_version", SCHEMA_VERSION))
        except ValueError:
            raise StoreUnusable(f"{self.path}: schema_version {meta['schema_version']!r} is not a number") from None
        if version > SCHEMA_VERSION:
            raise StoreUnusable(f"{self.path} was written by a newer workbench (schema {version}; this one reads "
                                f"schema {SCHEMA_VERSION} and older): upgrade the workbench to open it")

    # -- connections -------------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=LOCK_WAIT_S, isolation_level=None, check_same_thread=False)
            write_ahead_logged(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            # The log of one large write is cut back once checkpointed, not kept at its largest.
            conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
            self._local.conn = conn
        return conn

    def connect_anew(self) -> None:
        """In a forked child: connections of its own from here on (an SQLite connection must not
        cross a fork). The parent's are dropped, never closed here: a close may checkpoint the
        write-ahead log the parent still uses."""
        self._local = threading.local()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: committed on success, rolled back on any error. Inside a write
        already open on this thread (:class:`DocumentWrites`), it joins that one."""
        db = self.db
        if db.in_transaction:
            yield db
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if db.in_transaction:  # SQLite ends it itself on some errors (a full disk)
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the original error is the one to report
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- meta --------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Record a workspace fact (not a change of content: the version stays)."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @property
    def workspace_id(self) -> str:
        return self.meta("workspace_id") or ""

    @property
    def version(self) -> int:
        return int(self.meta("version") or 0)

    @staticmethod
    def _bump(db: sqlite3.Connection) -> None:
        bump_version(db)

    # -- documents ---------------------------------------------------------------------
    def document_hashes(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT id, content_hash FROM documents"))

    def replace_documents(self, batch: Sequence[tuple[Document, Sequence[Chunk], Iterable[Mention],
                                                      Iterable[Triple], Sequence[str]]]) -> None:
        """Write documents with everything extracted from them, replacing old versions.

        ``batch`` holds ``(document, chunks, mentions, triples, chunk text hashes)``; the whole
        batch is one transaction, so each document is stored completely or not at all.
        """
        writes = DocumentWrites(self)
        try:
            for doc, chunks, mentions, triples, text_hashes in batch:
                writes.document(doc)
                writes.rows(chunks, text_hashes, mentions, triples)
        except BaseException:
            writes.rollback()
            raise
        writes.commit()

    def delete_documents(self, ids: Sequence[str]) -> None:
        with self.transaction() as db:
            # The file no longer stands whole in the store: the next ingest must read it again.
            db.executemany("DELETE FROM files WHERE source_path IN (SELECT source_path FROM documents WHERE id=?)",
                           [(i,) for i in ids])
            db.executemany("DELETE FROM documents WHERE id=?", [(i,) for i in ids])
            self._bump(db)

    def documents(self) -> list[DocumentRecord]:
        rows = self.db.execute(
            "SELECT d.id, source_path, title, kind, content_hash, date, tags, relations, "
            "(SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id) FROM documents d ORDER BY d.id"
        ).fetchall()
        # Most documents have neither tags nor declared relations: "[]" is not parsed twice a document.
        return [
            DocumentRecord(r[0], r[1], r[2], r[3], r[4], r[5], () if r[6] == "[]" else tuple(json.loads(r[6])),
                           () if r[7] == "[]" else tuple(DeclaredRelation(a, b) for a, b in json.loads(r[7])), r[8])
            for r in rows
        ]

    def document_sources(self) -> dict[str, str]:
        """``document id -> source path`` of every stored document."""
        return dict(self.db.execute("SELECT id, source_path FROM documents"))

    def text_bytes_by_source(self) -> list[tuple[str, int]]:
        """``(source path, bytes of its chunks' text)`` of every stored file."""
        return list(self.db.execute(
            "SELECT d.source_path, SUM(LENGTH(CAST(c.text AS BLOB))) FROM chunks c JOIN documents d "
            "ON c.document_id = d.id GROUP BY d.source_path"))

    def documents_under(self, source_path: str) -> list[str]:
        """Ids of documents whose source file is ``source_path`` or lies below it."""
        prefix = source_path.rstrip("/") + "/"
        rows = self.db.execute(
            "SELECT id FROM documents WHERE source_path = ? OR substr(source_path, 1, ?) = ?",
            (source_path, len(prefix), prefix),
        )
        return [r[0] for r in rows]

    # -- file fingerprints ---------------------------------------------------------------
    def file_digests(self) -> dict[str, str]:
        """Source path -> digest of the file whose documents are all stored."""
        return dict(self.db.execute("SELECT source_path, digest FROM files"))

    def record_file_digests(self, digests: dict[str, str]) -> None:
        """Remember fully ingested files; forget those with no documents left."""
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?)", list(digests.items()))
            db.execute("DELETE FROM files WHERE source_path NOT IN (SELECT source_path FROM documents)")

    def file_hashes(self) -> dict[str, tuple[int, int, int, str]]:
        """Source path -> ``(size, mtime_ns, hashed_ns, digest)``: what its file's ``stat`` showed
        when it was last hashed, and the digest (:mod:`workbench.ingest.file_hashes`)."""
        return {row[0]: tuple(row[1:]) for row in self.db.execute(
            "SELECT source_path, size, mtime_ns, hashed_ns, digest FROM file_hashes")}

    def record_file_hashes(self, hashed: Mapping[str, tuple[int, int, int, str]]) -> None:
        """Keep the files hashed by an ingest; forget those that hold no stored document."""
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?, ?)",
                           [(source, *row) for source, row in hashed.items()])
            db.execute("DELETE FROM file_hashes WHERE source_path NOT IN (SELECT source_path FROM documents)")

    # -- chunks ------------------------------------------------------------------------
    _CHUNK_COLS = 'id, document_id, ordinal, text, start, "end", timestamp, speaker'

    def chunks(self, ids: Sequence[str] | None = None) -> list[Chunk]:
        """Chunks by id (in the order asked, unknown ids left out) or all of them."""
        if ids is None:
            rows = self.db.execute(f"SELECT {self._CHUNK_COLS} FROM chunks ORDER BY document_id, ordinal")
            return [Chunk(*r) for r in rows]
        ids = list(ids)
        found = {r[0]: Chunk(*r) for r in self._rows_in(f"SELECT {self._CHUNK_COLS} FROM chunks WHERE id IN ({{marks}})",
                                                        ids)}
        return [found[i] for i in ids if i in found]

    def chunks_of_kinds(self, kinds: Sequence[str], after: tuple[str, int] | None = None,
                        limit: int = 1000) -> list[Chunk]:
        """Up to ``limit`` chunks of the documents of ``kinds``, by document id then ordinal, from
        just after the ``(document id, ordinal)`` ``after``: pages through them in bounded memory
        (each page a range of the chunks' index, so paging through all is linear)."""
        kinds = list(kinds)
        cols = ", ".join(f"c.{col.strip()}" for col in self._CHUNK_COLS.split(","))
        after_id, after_ordinal = after if after is not None else ("", -1)
        rows = self.db.execute(
            f"SELECT {cols} FROM chunks c JOIN documents d ON d.id = c.document_id "
            f"WHERE d.kind IN ({','.join('?' * len(kinds))}) AND (c.document_id, c.ordinal) > (?, ?) "
            "ORDER BY c.document_id, c.ordinal LIMIT ?", [*kinds, after_id, after_ordinal, limit])
        return [Chunk(*r) for r in rows]

    def chunk_ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT id FROM chunks")}

    def chunk_text_hashes(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT id, text_hash FROM chunks"))

    def chunks_with_texts(self, hashes: Sequence[str]) -> dict[str, str]:
        """One stored chunk id for each of ``hashes`` (text hashes) some chunk has."""
        return dict(self._rows_in("SELECT text_hash, MIN(id) FROM chunks WHERE text_hash IN ({marks}) GROUP BY text_hash",
                                  hashes))

    def chunk_hashes_of(self, document_ids: Sequence[str]) -> list[tuple[str, str]]:
        """``(chunk id, text hash)`` of every chunk of ``document_ids``."""
        return list(self._rows_in("SELECT id, text_hash FROM chunks WHERE document_id IN ({marks})", document_ids))

    def chunk_ids_of(self, document_ids: Sequence[str]) -> list[str]:
        return [chunk_id for chunk_id, _ in self.chunk_hashes_of(document_ids)]

    def _rows_in(self, sql: str, values: Sequence, *leading) -> Iterator[tuple]:
        """:func:`~workbench.record.schema.rows_in` on this record."""
        return rows_in(self.db, sql, values, *leading)

    def opening_chunks(self) -> dict[str, str]:
        """Document id -> the id of its first chunk (lowest ordinal)."""
        rows = self.db.execute("SELECT document_id, id FROM chunks c WHERE ordinal = "
                               "(SELECT MIN(ordinal) FROM chunks d WHERE d.document_id = c.document_id)")
        return dict(rows.fetchall())

    def count(self, table: str) -> int:
        assert table in {"documents", "chunks", "mentions", "triples", "aliases", "splits", "embeddings"}
        if table == "triples":
            return self.triple_count()
        if table == "mentions":
            return self.mention_count()
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    # -- mentions and triples ------------------------------------------------------------
    def chunk_texts(self) -> list[tuple[str, str]]:
        """``(chunk id, text)`` of every chunk, for linking passages to the names they write."""
        return [(r[0], r[1]) for r in self.db.execute("SELECT id, text FROM chunks")]

    def mentions(self) -> list[Mention]:
        return list(self.iter_mentions())

    def triples(self) -> list[Triple]:
        return list(self.iter_triples())

    def iter_mentions(self) -> Iterator[Mention]:
        """Every mention, a few at a time (the graph's derivation never holds them all): those an
        earlier version kept a row apiece, then those kept packed, chunk by chunk
        (:mod:`workbench.record.packed_rows`)."""
        for row in self.db.execute("SELECT surface, chunk_id, entity_type, start FROM mentions"):
            yield Mention(*row)
        for chunk_id, body in self.db.execute("SELECT chunk_id, body FROM chunk_mentions ORDER BY rowid"):
            yield from unpack_mentions(chunk_id, body)

    def mention_count(self) -> int:
        """The number of mentions :meth:`iter_mentions` gives."""
        rows, packed = self.db.execute("SELECT (SELECT COUNT(*) FROM mentions), "
                                       "(SELECT COALESCE(SUM(mentions), 0) FROM chunk_mentions)").fetchone()
        return rows + packed

    def iter_triples(self) -> Iterator[Triple]:
        """Every triple, a few at a time: those of the ``triples`` table, then the co-mention
        pairs kept packed, chunk by chunk (:mod:`workbench.record.packed_rows`)."""
        for row in self.db.execute(f"SELECT {_TRIPLE_COLUMNS} FROM triples"):
            yield Triple(*row)
        for chunk_id, body in self.db.execute("SELECT chunk_id, body FROM comentions ORDER BY rowid"):
            yield from unpack_comentions(chunk_id, body)

    def triple_count(self) -> int:
        """The number of triples :meth:`iter_triples` gives."""
        rows, pairs = self.db.execute("SELECT (SELECT COUNT(*) FROM triples), "
                                      "(SELECT COALESCE(SUM(pairs), 0) FROM comentions)").fetchone()
        return rows + pairs

    def comention_count(self) -> int:
        """The number of co-mention triples, packed or (written by schema 1) one a row."""
        rows, pairs = self.db.execute(
            "SELECT (SELECT COUNT(*) FROM triples WHERE relation = ?), (SELECT COALESCE(SUM(pairs), 0) FROM comentions)",
            (COMENTION_RELATION,)).fetchone()
        return rows + pairs

    def candidate_triples(self, relation: str | None = None) -> list[Triple]:
        """The triples stored as candidates (of ``relation`` only, when given), most confident first
        (then by subject, object and when stored), through their own index: reading every triple
        to find them slowed each assembled context on a large file."""
        which = "" if relation is None else " AND relation = ?"
        return [Triple(*row) for row in self.db.execute(
            f"SELECT {_TRIPLE_COLUMNS} FROM triples WHERE origin = 'candidate'{which} "
            "ORDER BY confidence DESC, subject, object, rowid", () if relation is None else (relation,))]

    def chunk_context(self) -> dict[str, tuple[str, str | None]]:
        """``chunk id -> (document id, timestamp)`` for building edges' provenance."""
        return {r[0]: (r[1], r[2]) for r in self.db.execute("SELECT id, document_id, timestamp FROM chunks")}

    def replace_candidates(self, triples: Sequence[Triple]) -> None:
        """Replace every ``SIMILAR_TO`` candidate between notes (the LLM's candidates belong to their
        chunks and are replaced with their document)."""
        with self.transaction() as db:
            db.execute("DELETE FROM triples WHERE origin='candidate' AND relation='SIMILAR_TO'")
            db.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?)", [triple_row(t) for t in triples])
            self._bump(db)

    def replace_superseding_candidates(self, triples: Sequence[Triple]) -> bool:
        """Replace the ``SUPERSEDES`` candidates read from notes' text
        (:mod:`workbench.ingest.superseding`); a pair already accepted stays accepted and is not
        proposed again. True when they changed (the version moves only then)."""
        with self.transaction() as db:
            accepted = {(row[0], row[1]) for triple in triples for row in db.execute(
                "SELECT subject, object FROM triples WHERE chunk_id = ? AND relation = ? AND origin = 'accepted'",
                (triple.chunk_id, triple.relation))}
            wanted = sorted(triple_row(t) for t in triples if (t.subject, t.object) not in accepted)
            stored = sorted(db.execute("SELECT chunk_id, subject, relation, object, confidence, origin, subject_type, "
                                       "object_type FROM triples WHERE origin = 'candidate' AND relation = 'SUPERSEDES'"))
            if [tuple(row) for row in stored] == [tuple(row) for row in wanted]:
                return False
            db.execute("DELETE FROM triples WHERE origin = 'candidate' AND relation = 'SUPERSEDES'")
            db.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?)", wanted)
            self._bump(db)
        return True

    def add_triples(self, triples: Sequence[Triple]) -> None:
        """Add statements to the chunks they cite (typed relation candidates), in one transaction."""
        if not triples:
            return
        with self.transaction() as db:
            db.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?)", [triple_row(t) for t in triples])
            self._bump(db)

    def accept_candidate(self, subject: str, relation: str, obj: str) -> int:
        """Turn the candidate statements of ``subject -relation-> obj`` into accepted facts (origin
        ``accepted``, confidence 1: a person checked them); the number of statements changed."""
        with self.transaction() as db:
            changed = db.execute(
                "UPDATE triples SET origin='accepted', confidence=1.0 WHERE origin='candidate' AND subject=? "
                "AND relation=? AND object=?", (subject, relation, obj)).rowcount
            if changed:
                self._bump(db)
        return changed

    # -- aliases, splits, merge log -----------------------------------------------------
    def aliases(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT alias, canonical FROM aliases ORDER BY alias"))

    def splits(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT form FROM splits")}

    def rejected_suggestions(self) -> set[tuple[str, str]]:
        return {(a, b) for a, b in self.db.execute("SELECT a, b FROM rejected_suggestions")}

    def record(self, action: str, detail: dict, *, alias: tuple[str, str] | None = None,
               unalias: str | None = None, split: str | None = None, unsplit: str | None = None,
               reject: tuple[str, str] | None = None, unreject: tuple[str, str] | None = None) -> int:
        """Apply one user canonicalization action and log it, atomically. Returns the log entry's id."""
        with self.transaction() as db:
            if alias:
                db.execute("INSERT OR REPLACE INTO aliases VALUES (?,?,?)", (*alias, time.time()))
            if unalias:
                db.execute("DELETE FROM aliases WHERE alias=?", (unalias,))
            if split:
                db.execute("INSERT OR REPLACE INTO splits VALUES (?,?)", (split, time.time()))
            if unsplit:
                db.execute("DELETE FROM splits WHERE form=?", (unsplit,))
            if reject:
                db.execute("INSERT OR IGNORE INTO rejected_suggestions VALUES (?,?)", reject)
            if unreject:
                db.execute("DELETE FROM rejected_suggestions WHERE a=? AND b=?", unreject)
            entry = db.execute("INSERT INTO merge_log (at, action, detail) VALUES (?,?,?)",
                               (time.time(), action, json.dumps(detail, ensure_ascii=False)))
            self._bump(db)
        return int(entry.lastrowid or 0)

    def merge_log(self) -> list[dict]:
        rows = self.db.execute("SELECT id, at, action, detail FROM merge_log ORDER BY id")
        return [{"id": r[0], "at": r[1], "action": r[2], **json.loads(r[3])} for r in rows]

    # -- embedding cache ------------------------------------------------------------------
    def cached_embeddings(self, hashes: Sequence[str], model: str) -> dict[str, np.ndarray]:
        rows = self._rows_in("SELECT hash, vector FROM embeddings WHERE model=? AND hash IN ({marks})", hashes, model)
        return {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}

    def has_embeddings(self, hashes: Sequence[str], model: str) -> set[str]:
        """Which of ``hashes`` the embedding cache holds for ``model`` (no vector read)."""
        return {h for (h,) in self._rows_in("SELECT hash FROM embeddings WHERE model=? AND hash IN ({marks})",
                                            hashes, model)}

    def drop_cached_chunk_vectors(self, model: str) -> int:
        """Delete ``model``'s cached vectors of stored chunk texts (earlier versions cached them
        beside Chroma's copy; call it once Chroma holds every chunk of that space) and compact the
        file (:meth:`_compact`). Returns the vectors deleted."""
        with self.transaction() as db:
            gone = db.execute("DELETE FROM embeddings WHERE model=? AND hash IN (SELECT text_hash FROM chunks)",
                              (model,)).rowcount
        if gone:
            self._compact()
        return gone

    def pack_unpacked_rows(self) -> int:
        """Pack the mentions and co-mention pairs schema 1 kept a row apiece into a row a chunk each
        (:mod:`workbench.record.packed_rows`; the same mentions and triples are read back) and compact the
        file (:meth:`_compact`). Returns the rows packed."""
        pairs_where = "FROM triples WHERE relation = ? AND origin = ? AND confidence = 1.0"
        with self.transaction() as db:
            mentions = [Mention(*row) for row in db.execute(
                "SELECT surface, chunk_id, entity_type, start FROM mentions ORDER BY rowid")]
            pairs = [Triple(*row) for row in db.execute(f"SELECT {_TRIPLE_COLUMNS} {pairs_where} ORDER BY rowid",
                                                          (COMENTION_RELATION, COMENTION_ORIGIN))]
            if not mentions and not pairs:
                return 0
            db.execute("DELETE FROM mentions")
            db.execute(f"DELETE {pairs_where}", (COMENTION_RELATION, COMENTION_ORIGIN))
            db.executemany("INSERT INTO chunk_mentions VALUES (?,?,?)", pack_mentions(mentions))
            db.executemany("INSERT INTO comentions VALUES (?,?,?)", pack_comentions(pairs))
            self._bump(db)
        self._compact()
        return len(mentions) + len(pairs)

    def _compact(self) -> None:
        """Give the file's free pages back (``VACUUM``). It needs room for a copy of the file;
        without it (or with a reader holding the file) the free pages stay and later writes reuse them."""
        try:
            self.db.execute("VACUUM")
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the compacted pages into the file itself
        except sqlite3.OperationalError:
            pass

    def size_bytes(self) -> int:
        """Bytes of the record on disk: the database file and its write-ahead log."""
        wal = self.path.with_name(self.path.name + "-wal")
        return self.path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)

    def cache_embeddings(self, hashes: Sequence[str], vectors: np.ndarray, model: str) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?,?,?)",
                           [(h, model, np.asarray(v, dtype=np.float32).tobytes()) for h, v in zip(hashes, vectors)])

    # -- summaries (community reports, episodes) -----------------------------------------
    def summaries(self, kind: str) -> list[tuple[str, str, dict, np.ndarray | None]]:
        """``(id, signature, body, vector)`` of every stored summary of ``kind``, by id."""
        rows = self.db.execute("SELECT id, signature, body, vector FROM summaries WHERE kind=? ORDER BY id", (kind,))
        return [(r[0], r[1], _json_body(r[2]), None if r[3] is None else np.frombuffer(r[3], dtype=np.float32))
                for r in rows]

    def replace_summaries(self, rows_by_kind: dict[str, Sequence[tuple[str, str, dict, np.ndarray | None]]],
                          version_key: str, version: int | str) -> None:
        """Replace every summary of each kind given and record the workspace version they
        describe (a version number, or a mark naming it), in one transaction. Derived data: the
        workspace version is not bumped."""
        with self.transaction() as db:
            for kind, rows in rows_by_kind.items():
                db.execute("DELETE FROM summaries WHERE kind=?", (kind,))
                db.executemany("INSERT INTO summaries VALUES (?,?,?,?,?)",
                               [(kind, i, sig, json.dumps(body, ensure_ascii=False),
                                 None if vec is None else np.asarray(vec, dtype=np.float32).tobytes())
                                for i, sig, body, vec in rows])
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (version_key, str(version)))

    def chunk_times(self, ids: Sequence[str]) -> dict[str, str | None]:
        """Chunk id -> its timestamp, else its document's date (None when neither is known)."""
        return dict(self._rows_in("SELECT c.id, COALESCE(c.timestamp, d.date) FROM chunks c JOIN documents d "
                                  "ON d.id = c.document_id WHERE c.id IN ({marks})", ids))

    def integrity_ok(self) -> bool:
        return self.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _json_body(text: str):
    """A stored JSON body, parsed by orjson (faster than the standard
    library on many summaries), or by the standard library where orjson refuses what it
    wrote (NaN, integers past 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
