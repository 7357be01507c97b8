"""The record's rows of the note-similarity step (:mod:`workbench.corpus.note_neighbours`): each
note's mean chunk vector, its nearest notes, the pairs kept as candidates (``note_candidates``, by
their notes' ids) and the ``SIMILAR_TO`` candidate triples made from them.

:class:`NoteRows` is a part of :class:`~workbench.record.store.Store`: ``store.notes``.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..model import Triple
from .schema import IN_BATCH, rows_in

__all__ = ["NOTE_MATRIX_KEY", "NOTE_NEIGHBOURS_KEY", "CandidateRecord", "NeighbourWrites", "NoteRows", "StoredNoteVectors", "triple_row"]

#: Meta key of what the stored neighbour lists were made with (embedder, threshold, k, kinds, cap).
NOTE_NEIGHBOURS_KEY = "note_neighbours_key"
#: Meta key: the token of the file of the notes' unit vectors written for the stored ones
#: (:mod:`workbench.corpus.note_matrix`).
NOTE_MATRIX_KEY = "note_vectors_file"

CandidateRecord = tuple[str, str, str, str, float]
"""A kept pair as ``note_candidates`` holds it: ``(note a, note b, a's title, b's title, confidence)``, a < b."""

#: The ``SIMILAR_TO`` candidate triples the kept pairs make: the first note's first chunk cites them.
_CANDIDATE_TRIPLES = ("SELECT v.first_chunk, c.subject, 'SIMILAR_TO', c.object, c.confidence, 'candidate', 'note', "
                      "'note' FROM note_candidates c JOIN note_vectors v ON v.note = c.a")


def triple_row(t: Triple) -> tuple:
    """A triple as a row of the ``triples`` table."""
    return (t.chunk_id, t.subject, t.relation, t.object, t.confidence, t.origin, t.subject_type, t.object_type)


@dataclass
class StoredNoteVectors:
    """The stored notes' mean vectors, by note id."""

    ids: list[str]
    """The notes, sorted."""
    hashes: list[str]
    """Each note's content hash its vector was made from."""
    means: np.ndarray
    """Their mean chunk vectors (float32 rows, in ``ids``' order)."""


@dataclass
class NeighbourWrites:
    """Everything one refresh writes (:meth:`NoteRows.write_note_neighbours`)."""

    key: str
    """What the lists were made with (the meta key :data:`NOTE_NEIGHBOURS_KEY`)."""
    full: bool
    """Whether every vector, list and kept pair is written (the stored ones all go first)."""
    removed: Sequence[str] = ()
    """Notes whose vector and list go (removed or changed)."""
    vectors: Sequence[tuple[str, str, str, np.ndarray]] = ()
    """``(note, content hash, first chunk, mean)`` of the notes embedded."""
    lists: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    """Each list written again: ``note -> [(neighbour, similarity)]``."""
    dropped: Sequence[tuple[str, str]] = ()
    """Pairs ``(a, b)`` no longer kept as they were."""
    kept: Sequence[CandidateRecord] = ()
    """Pairs newly kept (or kept with another title or confidence)."""
    matrix: str = ""
    """The token of the file of unit vectors written for the vectors as they will be."""


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

    def all_note_documents(self, kinds: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """``(ids, titles, content hashes)`` of every document of ``kinds`` (with a chunk or not)."""
        kinds = list(kinds)
        rows = self.store.db.execute(
            f"SELECT id, title, content_hash FROM documents WHERE kind IN ({','.join('?' * len(kinds))})", kinds).fetchall()
        return tuple(zip(*rows)) if rows else ((), (), ())  # type: ignore[return-value]

    def with_chunks(self, ids: Collection[str]) -> set[str]:
        """Those of ``ids`` that have a chunk."""
        return {row[0] for row in self._in_batches("SELECT DISTINCT document_id FROM chunks WHERE document_id IN ({marks})",
                                                   ids)}

    def stored_note_vectors(self) -> StoredNoteVectors:
        """Every stored note vector, read in one pass over the table."""
        rows = self.store.db.execute("SELECT note, content_hash, vector FROM note_vectors").fetchall()
        rows.sort(key=lambda row: row[0])  # stored mostly in this order already
        means = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32)
        return StoredNoteVectors([r[0] for r in rows], [r[1] for r in rows],
                                 means.reshape(len(rows), -1) if rows else np.zeros((0, 0), dtype=np.float32))

    def note_vector_count(self) -> int:
        return self.store.db.execute("SELECT COUNT(*) FROM note_vectors").fetchone()[0]

    def note_means(self, notes: Collection[str]) -> dict[str, np.ndarray]:
        """``note -> mean vector`` (float32) of the stored ``notes``."""
        return {note: np.frombuffer(blob, dtype=np.float32)
                for note, blob in self._in_batches("SELECT note, vector FROM note_vectors WHERE note IN ({marks})", notes)}

    def note_neighbour_lists(self, notes: Collection[str] | None = None) -> dict[str, list[tuple[str, float]]]:
        """``note -> [(neighbour, similarity)]`` of ``notes`` (every note when None), most similar
        first, ties by neighbour id (each short list sorted here, cheaper than SQLite sorting every row)."""
        select = "SELECT note, neighbour, similarity FROM note_neighbours"
        rows = self.store.db.execute(select) if notes is None else self._in_batches(select + " WHERE note IN ({marks})", notes)
        lists: dict[str, list[tuple[str, float]]] = {}
        for note, neighbour, similarity in rows:
            lists.setdefault(note, []).append((neighbour, similarity))
        for entries in lists.values():
            entries.sort(key=_most_similar_first)
        return lists

    def naming(self, notes: Collection[str]) -> list[tuple[str, str]]:
        """``(note, neighbour)`` of every stored list entry that names one of ``notes``."""
        return self._in_batches("SELECT note, neighbour FROM note_neighbours WHERE neighbour IN ({marks})", notes)

    def entries_of(self, notes: Collection[str]) -> list[tuple[str, str]]:
        """``(note, neighbour)`` of every stored list entry of or naming one of ``notes``."""
        return self._in_batches("SELECT note, neighbour FROM note_neighbours WHERE note IN ({marks}) UNION ALL "
                                "SELECT note, neighbour FROM note_neighbours WHERE neighbour IN ({marks})", notes, twice=True)

    def note_candidates_of(self, notes: Collection[str]) -> list[CandidateRecord]:
        """The kept pairs of ``notes`` (each once)."""
        return self._in_batches("SELECT a, b, subject, object, confidence FROM note_candidates WHERE a IN ({marks}) UNION "
                                "SELECT a, b, subject, object, confidence FROM note_candidates WHERE b IN ({marks})",
                                notes, twice=True)

    def _in_batches(self, query: str, values: Collection[str], twice: bool = False) -> list[tuple]:
        """``query`` (with ``IN ({marks})``, once or ``twice``) over ``values`` in sorted order
        (:func:`~workbench.record.schema.rows_in`)."""
        return list(rows_in(self.store.db, query, sorted(values), repeat=1 + twice))

    def chunks_of_documents(self, ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(document id, chunk id, text)`` of the chunks of ``ids``, by document then ordinal."""
        return self._in_batches("SELECT document_id, id, text FROM chunks WHERE document_id IN ({marks}) "
                                "ORDER BY document_id, ordinal", ids)

    def chunk_pages_of_documents(self, ids: Sequence[str], limit: int = 1000) -> Iterator[list[tuple[str, str, str]]]:
        """:meth:`chunks_of_documents` a page of at most ``limit`` chunks at a time (a large
        document's chunks are never read at once), in the same order."""
        ids = sorted(ids)
        for lo in range(0, len(ids), IN_BATCH):
            part = ids[lo:lo + IN_BATCH]
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

    def write_note_neighbours(self, writes: NeighbourWrites) -> None:
        """One transaction: everything in ``writes``, then the ``SIMILAR_TO`` candidate triples
        made exactly those of the kept pairs (only the rows of the pairs' first notes that
        changed; every row when a count shows others changed: a candidate accepted, a chunk
        deleted), then the lists' key."""
        w = writes
        with self.store.transaction() as db:
            if w.full:
                db.execute("DELETE FROM note_vectors")
                db.execute("DELETE FROM note_neighbours")
                db.execute("DELETE FROM note_candidates")
            db.executemany("DELETE FROM note_vectors WHERE note=?", [(note,) for note in w.removed])
            db.executemany("DELETE FROM note_neighbours WHERE note=?", [(note,) for note in [*w.removed, *w.lists]])
            db.executemany("INSERT OR REPLACE INTO note_vectors VALUES (?,?,?,?)",
                           [(note, digest, first, np.asarray(v, dtype=np.float32).tobytes())
                            for note, digest, first, v in w.vectors])
            db.executemany("INSERT INTO note_neighbours VALUES (?,?,?)",
                           [(note, other, s) for note, entries in w.lists.items() for other, s in entries])
            db.executemany("DELETE FROM note_candidates WHERE a=? AND b=?", w.dropped)
            db.executemany("INSERT OR REPLACE INTO note_candidates VALUES (?,?,?,?,?)", w.kept)
            subjects = sorted({a for a, _ in w.dropped} | {row[0] for row in w.kept} | {row[0] for row in w.vectors})
            if not w.full:
                for lo in range(0, len(subjects), IN_BATCH):
                    _mend_note_candidates(db, subjects[lo:lo + IN_BATCH])
            if w.full or _candidate_triples_count(db) != db.execute("SELECT COUNT(*) FROM note_candidates").fetchone()[0]:
                _set_note_candidates(db, [tuple(row) for row in db.execute(_CANDIDATE_TRIPLES)])
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (NOTE_NEIGHBOURS_KEY, w.key))
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (NOTE_MATRIX_KEY, w.matrix))

    def write_matrix_token(self, token: str) -> str:
        """Record ``token`` as that of the file of unit vectors made for the stored vectors; ``token``."""
        with self.store.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (NOTE_MATRIX_KEY, token))
        return token


def _most_similar_first(entry: tuple[str, float]) -> tuple[float, str]:
    return -entry[1], entry[0]


def _candidate_triples_count(db: sqlite3.Connection) -> int:
    return db.execute("SELECT COUNT(*) FROM triples WHERE origin='candidate' AND relation='SIMILAR_TO'").fetchone()[0]


def _mend_note_candidates(db: sqlite3.Connection, subjects: Sequence[str]) -> None:
    """Make the ``SIMILAR_TO`` candidate triples citing the first chunks of ``subjects`` those
    of their kept pairs, deleting and inserting only the rows that differ."""
    marks = ",".join("?" * len(subjects))
    wanted = Counter(tuple(row) for row in db.execute(f"{_CANDIDATE_TRIPLES} WHERE c.a IN ({marks})", subjects))
    held = db.execute(
        "SELECT rowid, chunk_id, subject, relation, object, confidence, origin, subject_type, object_type FROM triples "
        f"WHERE chunk_id IN (SELECT first_chunk FROM note_vectors WHERE note IN ({marks})) "
        "AND origin='candidate' AND relation='SIMILAR_TO'", subjects).fetchall()
    _replace_rows(db, wanted, held)


def _set_note_candidates(db: sqlite3.Connection, rows: Sequence[tuple]) -> None:
    """Make the ``SIMILAR_TO`` candidate rows of ``triples`` exactly ``rows`` (as :func:`triple_row`
    makes them), deleting and inserting only those that differ: a write of one note among many
    changes a few of their candidates, where deleting and inserting them all is slow."""
    held = db.execute(
        "SELECT rowid, chunk_id, subject, relation, object, confidence, origin, subject_type, object_type "
        "FROM triples WHERE origin='candidate' AND relation='SIMILAR_TO'").fetchall()
    _replace_rows(db, Counter(rows), held)


def _replace_rows(db: sqlite3.Connection, wanted: Counter, held: Sequence[tuple]) -> None:
    """Delete the ``held`` triples (``rowid`` first) not ``wanted``, insert the ``wanted`` not held."""
    stale = []
    for rowid, *row in held:
        key = tuple(row)
        if wanted[key] > 0:
            wanted[key] -= 1
        else:
            stale.append((rowid,))
    db.executemany("DELETE FROM triples WHERE rowid=?", stale)
    db.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?)",
                   [row for row, missing in wanted.items() for _ in range(missing)])
