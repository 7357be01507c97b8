"""What a graph retriever does before its walk and what it falls back to, saying why: the empty
query and the query's embedding (:func:`opening`), hybrid search without the graph
(``vector_only``) and keyword search alone (``keyword_only``), as graphrag and graphrag-seed give them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..embedding import EmbeddingUnavailable
from ..model import RetrievalResult, RetrievalStats
from ..vectors.index import VectorStoreUnavailable
from .base import StageTimer, empty_result, is_empty_query, make_hits
from .hybrid import hybrid_ranking
from .keyword import keyword_ranking
from .vector import embed_query

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["opening", "vector_only", "keyword_only"]


def opening(ws: WorkspaceView, mode: str, query: str, k: int) -> RetrievalResult | tuple[StageTimer, np.ndarray]:
    """The empty query's answer, or keyword only without embeddings; else the timer and the query vector."""
    if is_empty_query(query):
        return empty_result(query, mode)
    timer = StageTimer()
    ws.preload()  # a fresh process reads the graph and the name index while the model loads
    try:
        with timer("embed"):
            vector = embed_query(ws, query)
    except EmbeddingUnavailable as exc:
        return keyword_only(ws, mode, query, k, timer, f"embeddings unavailable: {exc}")
    return timer, vector


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
    return RetrievalResult(query=query, mode_requested=mode, mode_used="keyword_only", hits=hits, stats=stats,
                           reason=reason)
