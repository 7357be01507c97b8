"""Documents written into one open transaction of the record, committed once."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Iterable, Sequence

from ..model import Chunk, Document, Mention, Triple
from .note_rows import triple_row
from .packed_rows import is_packable, pack_comentions, pack_mentions
from .schema import bump_version

__all__ = ["DocumentWrites"]


class DocumentWrites:
    """Documents written into one open transaction, a window of rows at a time, and committed
    once (``commit``), so a large document is never held whole and is still stored completely
    or not at all. Until then other connections see none of it; this thread's other writes
    (the embedding cache) join the transaction. One at a time per thread.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from workbench.model import Chunk, Document, Mention
    >>> from workbench.record.store import Store
    >>> store = Store(Path(tempfile.mkdtemp()) / "w.sqlite")
    >>> writes = DocumentWrites(store)
    >>> writes.document(Document("d", "/d", "d", "text", "Hello.", "h"))
    >>> writes.rows([Chunk("c1", "d", 0, "Hello.", 0, 6)], ["t1"], [Mention("Hello", "c1")], [])
    >>> writes.rollback()
    >>> store.count("chunks"), store.version
    (0, 0)
    """

    def __init__(self, store) -> None:  # a Store (which imports this module)
        self.db: sqlite3.Connection = store.db
        self.db.execute("BEGIN IMMEDIATE")

    def document(self, doc: Document) -> None:
        """Replace ``doc``'s row (its old chunks, mentions and triples go with it)."""
        self.db.execute("DELETE FROM documents WHERE id=?", (doc.id,))
        self.db.execute(
            "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?)",
            (doc.id, doc.source_path, doc.title, doc.kind, doc.content_hash, doc.date,
             json.dumps(list(doc.tags)), json.dumps([[r.relation, r.target] for r in doc.relations]), time.time()),
        )

    def rows(self, chunks: Sequence[Chunk], text_hashes: Sequence[str], mentions: Iterable[Mention],
             triples: Iterable[Triple]) -> None:
        """Add chunks (with their text hashes), mentions and triples of documents written here (the
        mentions and the co-mention pairs packed, a row a chunk each)."""
        self.db.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?)",
                            [(c.id, c.document_id, c.ordinal, c.text, c.start, c.end, c.timestamp, c.speaker, h)
                             for c, h in zip(chunks, text_hashes)])
        self.db.executemany("INSERT INTO chunk_mentions VALUES (?,?,?)", pack_mentions(mentions))
        triples = list(triples)
        self.db.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?)",
                            [triple_row(t) for t in triples if not is_packable(t)])
        self.db.executemany("INSERT INTO comentions VALUES (?,?,?)", pack_comentions(t for t in triples if is_packable(t)))

    def commit(self) -> None:
        """Make everything written visible at once, as one new version of the record."""
        bump_version(self.db)
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        """Forget everything written here."""
        self.db.execute("ROLLBACK")
