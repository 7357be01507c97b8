"""Vector retrieval: cosine search over the Chroma chunk collection.

Hits below ``retrieval.min_vector_score`` are dropped; with ``retrieval.dedupe_by_document``
only the best chunk of each document is kept. Query embeddings are remembered per embedder
(a small LRU), so comparing modes embeds a question once.

Examples
--------
>>> from workbench.model import Why
>>> kept = best_per_document([("c1", 0.9, Why()), ("c2", 0.8, Why()), ("c3", 0.7, Why())],
...                          {"c1": "a", "c2": "a", "c3": "b"})
>>> [(chunk_id, score) for chunk_id, score, _ in kept]
[('c1', 0.9), ('c3', 0.7)]
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import numpy as np

from ..model import RetrievalResult, RetrievalStats, Why
from ..vectors.index import CHUNKS, NeedsRepair, VectorMatch, VectorStoreUnavailable
from .base import Capabilities, Ranked, SearchSkeleton, StageTimer, make_hits, sort_ranked
from .cache import indexes_for
from .literal import boost_literal, identifiers

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["VectorRetriever", "embed_query", "vector_query", "vector_ranking", "best_per_document", "store_failures",
           "DEDUPE_DEPTH", "LITERAL_DEPTH"]

#: A ranking kept to one chunk per document is read this many times deeper than the hits
#: wanted: the chunks of documents already in it are thrown away.
DEDUPE_DEPTH = 3
#: A ranking the literal-identifier boost reorders is read this many times deeper than the hits
#: wanted, so a chunk holding the identifier below the first ``k`` can rise into them.
LITERAL_DEPTH = 3

_QUERY_CACHE_SIZE = 256
_query_vectors: "weakref.WeakKeyDictionary[object, OrderedDict[str, np.ndarray]]" = weakref.WeakKeyDictionary()
_query_lock = threading.Lock()


def embed_query(ws: WorkspaceView, query: str) -> np.ndarray:
    """The query's unit vector; :class:`EmbeddingUnavailable` if the model cannot run."""
    embedder = ws.embedder
    with _query_lock:
        try:
            seen = _query_vectors.setdefault(embedder, OrderedDict())
        except TypeError:  # an embedder that cannot be weakly referenced: no cache
            seen = OrderedDict()
        if query in seen:
            seen.move_to_end(query)
            return seen[query]
    vector = np.asarray(embedder.embed([query]), dtype=np.float32)[0]
    with _query_lock:
        seen[query] = vector
        while len(seen) > _QUERY_CACHE_SIZE:
            seen.popitem(last=False)
    return vector


#: The vector-store failures met in this context since :func:`store_failures` began: the modes
#: catch them to fall back (keyword ranking, an empty answer), so they are also noted here.
_failures: ContextVar[list[str] | None] = ContextVar("vector_store_failures", default=None)


@contextmanager
def store_failures() -> Iterator[list[str]]:
    """The messages of the vector-store failures met inside the block (in this thread), whatever
    the mode made of them: how :func:`~workbench.retrieve.retrieve` tells a fallback a failure caused."""
    failures: list[str] = []
    token = _failures.set(failures)
    try:
        yield failures
    finally:
        _failures.reset(token)


def vector_query(ws: WorkspaceView, kind: str, vector: np.ndarray, n: int) -> list[VectorMatch]:
    """Nearest ids in a collection; any failure of the store becomes :class:`VectorStoreUnavailable`."""
    try:
        return ws.vectors.query(kind, vector, n)
    except NeedsRepair:
        raise
    except VectorStoreUnavailable as exc:
        _note_failure(str(exc))
        raise
    except Exception as exc:  # a server gone away, a broken collection: the store is unusable
        message = f"vector search in the {kind} collection failed: {exc}"
        _note_failure(message)
        raise VectorStoreUnavailable(message) from exc


def _note_failure(message: str) -> None:
    failures = _failures.get()
    if failures is not None:
        failures.append(message)


def entity_query(ws: WorkspaceView, vector: np.ndarray, n: int) -> list[VectorMatch]:
    """The ``n`` entities whose names are nearest ``vector`` (the workspace's entity-name index)."""
    ws.ensure_entity_vectors()
    return ws.entity_vectors.query(vector, n, space=ws.embedder.name)


def literal_boosted(ws: WorkspaceView, ranked: Sequence[Ranked], found: Sequence[str]) -> list[Ranked]:
    """``ranked`` with the literal-match boost (``retrieval.literal_boost``) for ``found`` identifiers."""
    if not found:
        return list(ranked)
    texts = {c.id: c.text for c in ws.store.chunks([chunk_id for chunk_id, _, _ in ranked])}
    return boost_literal(ranked, texts, found, ws.settings.retrieval.literal_boost)


def direct_by_document(ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> list[Ranked]:
    """The ``k`` most similar chunks of distinct documents: the direct hits expansion modes add to.

    Raises :class:`EmbeddingUnavailable` or :class:`VectorStoreUnavailable` as vector search does.
    """
    with timer("embed"):
        vector = embed_query(ws, query)
    with timer("search"):
        ranked = vector_ranking(ws, vector, k * DEDUPE_DEPTH, dedupe=False)
    return best_per_document(ranked, indexes_for(ws).chunk_documents)[:k]


def best_per_document(ranked: Sequence[Ranked], chunk_documents: Mapping[str, str]) -> list[Ranked]:
    """Keep the first (best) chunk of each document, in order."""
    seen: set[str] = set()
    out: list[Ranked] = []
    for item in ranked:
        document = chunk_documents.get(item[0], item[0])
        if document not in seen:
            seen.add(document)
            out.append(item)
    return out


def vector_ranking(ws: WorkspaceView, vector: np.ndarray, n: int, min_score: float | None = None,
                   dedupe: bool | None = None) -> list[Ranked]:
    """The ``n`` most similar chunks at or above ``min_score``: ``(chunk id, similarity, why)``.

    ``min_score`` and ``dedupe`` default to the workspace's retrieval settings.
    """
    settings = ws.settings.retrieval
    min_score = settings.min_vector_score if min_score is None else min_score
    dedupe = settings.dedupe_by_document if dedupe is None else dedupe
    matches = vector_query(ws, CHUNKS, vector, n * DEDUPE_DEPTH if dedupe else n)
    ranked = sort_ranked([(m.id, m.similarity, Why(similarity=round(m.similarity, 6)))
                          for m in matches if m.similarity >= min_score])
    if dedupe:
        ranked = best_per_document(ranked, indexes_for(ws).chunk_documents)
    return ranked[:n]


class VectorRetriever(SearchSkeleton):
    """Cosine similarity between the query and chunk embeddings (Chroma)."""

    name = "vector"
    description = "Chroma cosine search over chunk embeddings, with a minimum score and optional best chunk per document"
    capabilities = Capabilities(vectors=True, embedder=True)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        with timer("embed"):
            vector = embed_query(ws, query)
        with timer("search"):
            found = identifiers(query)
            ranked = vector_ranking(ws, vector, k * LITERAL_DEPTH if found else k)
        with timer("literal"):
            ranked = literal_boosted(ws, ranked, found)[:k]
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        return RetrievalResult(
            query=query, mode_requested=self.name, mode_used=self.name, hits=hits,
            stats=RetrievalStats(seconds=timer.total(), vector_hits=len(hits), literal_terms=found),
            reason="" if hits else f"no chunk reaches min_vector_score={ws.settings.retrieval.min_vector_score}",
        )
