"""The record's rows of the note-similarity step (:mod:`workbench.corpus.note_neighbours`): each
note's mean chunk vector, its nearest notes and the ``SIMILAR_TO`` candidates made from them.

:class:`NoteRows` is a part of :class:`~workbench.record.store.Store`: ``store.notes``.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np

from ..model import Triple

__all__ = ["NOTE_NEIGHBOURS_KEY", "NoteRows", "triple_row"]

#: Meta key of what the stored neighbour lists were made with (embedder, threshold, k, kinds).
NOTE_NEIGHBOURS_KEY = "note_neighbours_key"


def triple_row(t: Triple) -> tuple:
    """A triple as a row of the ``triples`` table."""
    return (t.chunk_id, t.subject, t.relation, t.object, t.confidence, t.origin, t.subject_type, t.object_type)


class RecordConnection(Protocol):
    """What these rows are read (and written) through: the store's connection."""

    @property
    def db(self) -> sqlite3.Connection: ...

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


class NoteRows:
    """The note vectors, neighbour lists and note chunks of the record."""

    def __init__(self, store: RecordConnection) -> None:
        self.store = store


    def note_documents(self, kinds: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``id -> (title, content hash)`` of the documents of ``kinds`` that have a chunk."""
        kinds = list(kinds)
        rows = self.store.db.execute(
            f"SELECT id, title, content_hash FROM documents d WHERE kind IN ({','.join('?' * len(kinds))}) "
            "AND EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)", kinds)
        return {r[0]: (r[1], r[2]) for r in rows}

    def note_vector_hashes(self) -> dict[str, str]:
        """``note -> content hash`` its stored mean vector was made from."""
        return dict(self.store.db.execute("SELECT note, content_hash FROM note_vectors"))

    def note_vectors(self, exclude: Collection[str] = ()) -> tuple[list[str], np.ndarray, dict[str, str]]:
        """The stored notes' ids, mean vectors (float32 rows) and first chunks, ``exclude`` left out."""
        ids: list[str] = []
        rows: list[np.ndarray] = []
        firsts: dict[str, str] = {}
        for note, first, blob in self.store.db.execute("SELECT note, first_chunk, vector FROM note_vectors ORDER BY note"):
            if note not in exclude:
                ids.append(note)
                rows.append(np.frombuffer(blob, dtype=np.float32))
                firsts[note] = first
        return ids, (np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)), firsts

    def note_neighbour_lists(self) -> dict[str, list[tuple[str, float]]]:
        """``note -> [(neighbour, similarity)]``, most similar first, ties by neighbour id (each
        short list sorted here, cheaper than SQLite sorting every row)."""
        lists: dict[str, list[tuple[str, float]]] = {}
        for note, neighbour, similarity in self.store.db.execute("SELECT note, neighbour, similarity FROM note_neighbours"):
            lists.setdefault(note, []).append((neighbour, similarity))
        for entries in lists.values():
            entries.sort(key=_most_similar_first)
        return lists

    def chunks_of_documents(self, ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(document id, chunk id, text)`` of the chunks of ``ids``, by document then ordinal."""
        ids = sorted(ids)
        out: list[tuple[str, str, str]] = []
        for lo in range(0, len(ids), 500):
            part = ids[lo:lo + 500]
            out.extend(self.store.db.execute(
                f"SELECT document_id, id, text FROM chunks WHERE document_id IN ({','.join('?' * len(part))}) "
                "ORDER BY document_id, ordinal", part))
        return out

    def chunk_pages_of_documents(self, ids: Sequence[str], limit: int = 1000) -> Iterator[list[tuple[str, str, str]]]:
        """:meth:`chunks_of_documents` a page of at most ``limit`` chunks at a time (a large
        document's chunks are never read at once), in the same order."""
        ids = sorted(ids)
        for lo in range(0, len(ids), 500):
            part = ids[lo:lo + 500]
            after: tuple[str, int] = ("", -1)
            while True:
                rows = self.store.db.execute(
                    f"SELECT document_id, id, text, ordinal FROM chunks WHERE document_id IN "
                    f"({','.join('?' * len(part))}) AND (document_id, ordinal) > (?, ?) "
                    "ORDER BY document_id, ordinal LIMIT ?", [*part, *after, limit]).fetchall()
                if not rows:
                    break
                after = (rows[-1][0], rows[-1][3])
                yield [(r[0], r[1], r[2]) for r in rows]

    def write_note_neighbours(self, key: str, full: bool, removed: Sequence[str],
                              vectors: Sequence[tuple[str, str, str, np.ndarray]],
                              lists: dict[str, list[tuple[str, float]]], candidates: Sequence[Triple]) -> None:
        """One transaction: drop the vectors and lists of ``removed`` (everything when ``full``),
        store ``vectors`` (note, content hash, first chunk, mean) and ``lists``, replace every
        ``SIMILAR_TO`` candidate with ``candidates`` and record the lists' ``key``."""
        with self.store.transaction() as db:
            if full:
                db.execute("DELETE FROM note_vectors")
                db.execute("DELETE FROM note_neighbours")
            gone = [(note,) for note in [*removed, *lists]]
            db.executemany("DELETE FROM note_vectors WHERE note=?", [(note,) for note in removed])
            db.executemany("DELETE FROM note_neighbours WHERE note=?", gone)
            db.executemany("INSERT OR REPLACE INTO note_vectors VALUES (?,?,?,?)",
                           [(note, digest, first, np.asarray(v, dtype=np.float32).tobytes())
                            for note, digest, first, v in vectors])
            db.executemany("INSERT INTO note_neighbours VALUES (?,?,?)",
                           [(note, other, s) for note, entries in lists.items() for other, s in entries])
            _set_note_candidates(db, [triple_row(t) for t in candidates])
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (NOTE_NEIGHBOURS_KEY, key))


def _most_similar_first(entry: tuple[str, float]) -> tuple[float, str]:
    return -entry[1], entry[0]


def _set_note_candidates(db: sqlite3.Connection, rows: Sequence[tuple]) -> None:
    """Make the ``SIMILAR_TO`` candidate rows of ``triples`` exactly ``rows`` (as :func:`triple_row`
    makes them), deleting and inserting only those that differ: a write of one note among many
    changes a few of their candidates, where deleting and inserting them all is slow."""
    wanted = Counter(rows)
    stale = []
    for rowid, *row in db.execute(
            "SELECT rowid, chunk_id, subject, relation, object, confidence, origin, subject_type, object_type "
            "FROM triples WHERE origin='candidate' AND relation='SIMILAR_TO'"):
        held = tuple(row)
        if wanted[held] > 0:
            wanted[held] -= 1
        else:
            stale.append((rowid,))
    db.executemany("DELETE FROM triples WHERE rowid=?", stale)
    db.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?)",
                   [row for row, missing in wanted.items() for _ in range(missing)])
