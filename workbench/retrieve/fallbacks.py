"""What a graph retriever does before its walk and what it falls back to, saying why: the query's
embedding while the graph loads (:func:`opening`), hybrid search without the graph
(``vector_only``) and keyword search alone (``keyword_only``, the fallback
:class:`~workbench.retrieve.base.SearchSkeleton` gives a strategy that declares it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..embedding import EmbeddingUnavailable
from ..model import RetrievalResult, RetrievalStats
from ..vectors.index import VectorStoreUnavailable
from .base import KEYWORD_ONLY, SearchSkeleton, StageTimer, make_hits
from .hybrid import hybrid_ranking
from .keyword import keyword_ranking
from .vector import embed_query

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["KeywordFallback", "opening", "vector_only", "keyword_only"]


class KeywordFallback(SearchSkeleton):
    """A strategy whose answer, when the vector store or the embedding model fails, is the keyword
    ranking alone (``mode_used`` :data:`~workbench.retrieve.base.KEYWORD_ONLY`), saying which failed."""

    def fall_back(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer, exc: Exception) -> RetrievalResult:
        failed = "embeddings" if isinstance(exc, EmbeddingUnavailable) else "vector store"
        return keyword_only(ws, self.name, query, k, timer, f"{failed} unavailable: {exc}")


def opening(ws: WorkspaceView, query: str, timer: StageTimer) -> np.ndarray:
    """The query's vector, timed as ``embed``; a fresh process reads the graph and the name index
    meanwhile. Raises :class:`~workbench.embedding.EmbeddingUnavailable` as the model does."""
    ws.preload()
    with timer("embed"):
        return embed_query(ws, query)


def vector_only(ws: WorkspaceView, mode: str, query: str, vector: np.ndarray, k: int, timer: StageTimer,
                reason: str) -> RetrievalResult:
    """Hybrid search (semantic + keyword), no graph context; keyword only when the store fails."""
    with timer("hybrid"):
        try:
            ranked = hybrid_ranking(ws, query, vector, k)
        except VectorStoreUnavailable as exc:
            return keyword_only(ws, mode, query, k, timer, f"vector store unavailable: {exc}")
    with timer("fetch"):
        hits = make_hits(ws, ranked[:k])
    stats = RetrievalStats(seconds=timer.total(), seeds=[], top_entities=0, provenance_hits=0, hybrid_hits=len(hits))
    return RetrievalResult(query=query, mode_requested=mode, mode_used="vector_only", hits=hits, stats=stats,
                           reason=reason)


def keyword_only(ws: WorkspaceView, mode: str, query: str, k: int, timer: StageTimer, reason: str) -> RetrievalResult:
    """Keyword search alone (no embeddings or no vector store)."""
    with timer("keyword"):
        ranked = keyword_ranking(ws, query, k)
    with timer("fetch"):
        hits = make_hits(ws, ranked)
    stats = RetrievalStats(seconds=timer.total(), seeds=[], top_entities=0, provenance_hits=0, vector_hits=0,
                           keyword_hits=len(hits))
    return RetrievalResult(query=query, mode_requested=mode, mode_used=KEYWORD_ONLY, hits=hits, stats=stats,
                           reason=reason)
