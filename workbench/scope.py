"""A read-only view of a workspace restricted to some documents.

Filtering hits after retrieval leaves the seeds, the walk, the graph context and the stats
computed from every document, and disagreeing with the hits shown. A scoped view instead
restricts the *record* every retriever reads: its chunks, mentions, triples and documents,
and chunk vector search (a Chroma ``where`` on the chunk's document). The graph derived from
it is the graph of those documents alone, so every mode, graphrag's seeds and PageRank
included, runs inside the scope.

Examples
--------
>>> document_matches("sample_corpus/incidents/a.md", ["sample_corpus/incidents/"])
True
>>> document_matches("notes/a.md#r1", ["notes/a.md"])
True
>>> document_matches("notes/ab.md", ["notes/a"]), document_matches("notes/x/ab.md", ["notes"])
(False, True)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence


__all__ = ["ScopedStore", "ScopedVectors", "document_matches", "scoped"]


def document_matches(document_id: str, filters: Sequence[str]) -> bool:
    """Whether a document id is one of ``filters`` or lies under one of them (a folder or file)."""
    for wanted in filters:
        wanted = wanted.strip()
        if not wanted:
            continue
        folder = wanted.rstrip("/")
        if document_id == wanted or document_id.startswith(folder + "/") or document_id.startswith(wanted + "#"):
            return True
    return False


#: Store methods that write: a scoped view refuses them.
_WRITERS = frozenset({"transaction", "set_meta", "replace_documents", "delete_documents", "record_file_digests", "record_file_hashes",
                      "replace_candidates", "record", "cache_embeddings", "replace_summaries", "close"})


class ScopedStore:
    """The reads of a :class:`~workbench.store.Store` that retrieval uses, limited to some documents.

    Anything else (version, aliases, splits, meta...) is the store's own.
    """

    def __init__(self, store, document_ids: Sequence[str]) -> None:
        self._store = store
        self.document_ids = frozenset(document_ids)
        self._chunk_ids: frozenset[str] | None = None

    def __getattr__(self, name):
        if name in _WRITERS:
            raise AttributeError(f"a workspace scoped to some documents is read-only: no {name}()")
        return getattr(self._store, name)

    @property
    def chunk_ids(self) -> frozenset[str]:
        if self._chunk_ids is None:
            self._chunk_ids = frozenset(c for c, (doc, _) in self._store.chunk_context().items()
                                        if doc in self.document_ids)
        return self._chunk_ids

    def documents(self):
        return [d for d in self._store.documents() if d.id in self.document_ids]

    def chunks(self, ids: Sequence[str] | None = None):
        return [c for c in self._store.chunks(ids) if c.document_id in self.document_ids]

    def chunk_ids_of(self, *args, **kwargs):
        return [c for c in self._store.chunk_ids_of(*args, **kwargs) if c in self.chunk_ids]

    def opening_chunks(self):
        return {doc: cid for doc, cid in self._store.opening_chunks().items() if doc in self.document_ids}

    def chunk_times(self, ids):
        return self._store.chunk_times([i for i in ids if i in self.chunk_ids])

    def chunk_texts(self):
        return [(cid, text) for cid, text in self._store.chunk_texts() if cid in self.chunk_ids]

    def chunk_context(self):
        return {cid: ctx for cid, ctx in self._store.chunk_context().items() if ctx[0] in self.document_ids}

    def mentions(self):
        return [m for m in self._store.mentions() if m.chunk_id in self.chunk_ids]

    def triples(self):
        return [t for t in self._store.triples() if t.chunk_id in self.chunk_ids]

    def iter_mentions(self):
        return (m for m in self._store.iter_mentions() if m.chunk_id in self.chunk_ids)

    def iter_triples(self):
        return (t for t in self._store.iter_triples() if t.chunk_id in self.chunk_ids)

    def count(self, table: str) -> int:
        if table == "documents":
            return len(self.document_ids)
        if table == "chunks":
            return len(self.chunk_ids)
        return self._store.count(table)


class ScopedVectors:
    """Chunk vector search limited to some documents, by a Chroma ``where`` on their document."""

    def __init__(self, vectors, document_ids: Sequence[str]) -> None:
        self._vectors = vectors
        self._where = {"document": {"$in": sorted(document_ids)}}

    def __getattr__(self, name):
        if name in ("upsert", "delete"):
            raise AttributeError(f"a workspace scoped to some documents is read-only: no {name}()")
        return getattr(self._vectors, name)

    def query(self, kind: str, vector, k: int, where: dict | None = None):
        return self._vectors.query(kind, vector, k, where=where or self._where)


class ScopedEntityVectors:
    """Entity-name search limited to the entities of the scoped graph (``in_scope``)."""

    def __init__(self, entity_vectors, in_scope: Callable[[str], bool]) -> None:
        self._entity_vectors = entity_vectors
        self._in_scope = in_scope

    def __getattr__(self, name):
        if name == "sync":
            raise AttributeError("a workspace scoped to some documents is read-only: no sync()")
        return getattr(self._entity_vectors, name)

    def query(self, vector, k: int, keep: Callable[[str], bool] | None = None, space: str | None = None):
        return self._entity_vectors.query(vector, k, keep=lambda key: self._in_scope(key) and (keep is None or keep(key)),
                                          space=space)


def scoped(ws, filters: Sequence[str]):
    """A read-only workspace holding only the documents ``filters`` match (ids or folder prefixes).

    Raises ``ValueError`` naming the filters if no stored document matches them.
    """
    from .workspace import Workspace

    ids = [d.id for d in ws.store.documents() if document_matches(d.id, filters)]
    if not ids:
        raise ValueError(f"no stored document matches {', '.join(map(repr, filters))}")
    view = Workspace.__new__(Workspace)
    view.__dict__.update({k: v for k, v in ws.__dict__.items() if k not in ("_derived", "_derive_lock")})
    view.__dict__.update({
        "_derived": None, "_derive_lock": threading.Lock(), "store": ScopedStore(ws.store, ids),
        "keeps_snapshot": False,  # its graph is of the scope: never the workspace's snapshot
        "_vectors": ScopedVectors(ws.vectors, ids),
        "entity_vectors": ScopedEntityVectors(ws.entity_vectors, in_scope=lambda key: key in view.graph),
        "scope": tuple(filters)})
    return view
