"""The record's reads for the incremental derivation (:mod:`workbench.context_graph.derivation_rows`):
which mention and stated triple rows there are (rowids, their count and sum), those rows a page
at a time, and each document's mark (its content hash and write time).

:class:`DerivationRowReads` is a part of :class:`~workbench.record.store.Store`: ``store.rows``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np

from .schema import rows_in

__all__ = ["DerivationRowReads", "ROWS_PAGE"]

#: Rows a derivation reads from the record at a time.
ROWS_PAGE = 100_000
#: The columns a derivation reads of each table, and which rows: every mention, the stated triples
#: (no candidates), every chunk's packed mentions and co-mention pairs.
_ROWS = {"mentions": ("chunk_id, surface, entity_type", ""), "triples": (
    "chunk_id, subject, object, relation, origin, subject_type, object_type, confidence", " AND origin != 'candidate'"),
    "chunk_mentions": ("chunk_id, body", ""), "comentions": ("chunk_id, body", "")}


class RecordConnection(Protocol):
    """What these rows are read (and written) through: the store's connection."""

    @property
    def db(self) -> sqlite3.Connection: ...


class DerivationRowReads:
    """The rows a derivation follows, read from the record."""

    def __init__(self, store: RecordConnection) -> None:
        self.store = store


    def document_marks(self) -> dict[str, str]:
        """``document id -> content hash and write time``: a document written again gets a new mark
        (made by SQLite: formatting them in Python was half of the read at 61,000 documents)."""
        return dict(self.store.db.execute(
            "SELECT id, content_hash || '|' || printf('%.17g', ingested_at) FROM documents"))

    def row_ids(self, table: str, above: int = -1) -> np.ndarray:
        """The sorted rowids above ``above`` of the rows :meth:`row_batches` reads (``"mentions"``,
        ``"triples"``, ``"chunk_mentions"``, ``"comentions"``)."""
        rows = self.store.db.execute(f"SELECT rowid FROM {table} WHERE rowid > ?{_ROWS[table][1]}", (above,))
        return np.sort(np.fromiter((r[0] for r in rows), dtype=np.int64))

    def row_totals(self, table: str) -> tuple[int, int]:
        """``(count, sum of rowids)`` of the rows :meth:`row_ids` lists."""
        count, total = self.store.db.execute(f"SELECT COUNT(*), SUM(rowid) FROM {table} WHERE 1{_ROWS[table][1]}").fetchone()
        return count, total or 0

    def row_batches(self, table: str, rowids: Sequence[int] | None = None) -> Iterator[list[tuple]]:
        """``(rowid, chunk id, ...)`` of the given mention rows (surface, type), stated triple rows
        (subject, object, relation, origin, subject type, object type, confidence) or packed
        mention or co-mention rows (body), all with None:
        :data:`ROWS_PAGE` rows at a time, each page by rowid (never every row held at once)."""
        columns, stated = _ROWS[table]
        if rowids is None:
            cursor = self.store.db.execute(f"SELECT rowid, {columns} FROM {table} WHERE 1{stated} ORDER BY rowid")
            while page := cursor.fetchmany(ROWS_PAGE):
                yield page
            return
        for at in range(0, len(rowids), ROWS_PAGE):
            wanted = [int(i) for i in rowids[at:at + ROWS_PAGE]]
            yield sorted(rows_in(self.store.db, f"SELECT rowid, {columns} FROM {table} WHERE rowid IN ({{marks}})",
                                 wanted))
