"""Hybrid retrieval: Reciprocal Rank Fusion of the keyword and the vector rankings.

Each ranking is fetched deeper than ``k`` (three times) so a chunk ranked modestly by both can
still win. Without embeddings the mode falls back to keywords and says so.

Examples
--------
>>> from workbench.model import Why
>>> [(c, round(s, 4), w.ranks) for c, s, w in fuse_rankings(
...     [("a", 3.0, Why()), ("b", 1.0, Why())], [("b", 0.9, Why()), ("c", 0.5, Why())], rrf_k=60)]
[('b', 0.0325, {'keyword': 2, 'vector': 1}), ('a', 0.0164, {'keyword': 1, 'vector': None}), ('c', 0.0161, {'keyword': None, 'vector': 2})]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..embedding import EmbeddingUnavailable
from ..model import RetrievalResult, RetrievalStats, Why
from ..settings import setting_default
from ..vectors.index import VectorStoreUnavailable
from .base import KEYWORD_ONLY, Capabilities, Ranked, SearchSkeleton, StageTimer, make_hits
from .fusion import rrf
from .keyword import keyword_ranking
from .literal import identifiers
from .vector import LITERAL_DEPTH, embed_query, literal_boosted, vector_ranking

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["HybridRetriever", "fuse_rankings", "hybrid_ranking", "FUSION_DEPTH"]

#: Each ranking fused is read this many times deeper than the hits wanted, so that a hit ranked
#: low by one ranking and high by the other is still fused.
FUSION_DEPTH = 3


def fuse_rankings(keyword: Sequence[Ranked], vector: Sequence[Ranked],
                  rrf_k: int = setting_default("retrieval.rrf_k")) -> list[Ranked]:
    """RRF of a keyword and a vector ranking; ``why`` gives the fused score, both ranks, the
    matched terms and the similarity."""
    keyword_rank = {chunk_id: rank for rank, (chunk_id, _, _) in enumerate(keyword, 1)}
    vector_rank = {chunk_id: rank for rank, (chunk_id, _, _) in enumerate(vector, 1)}
    keyword_why = {chunk_id: why for chunk_id, _, why in keyword}
    vector_why = {chunk_id: why for chunk_id, _, why in vector}
    fused = rrf([list(keyword_rank), list(vector_rank)], rrf_k=rrf_k)
    out: list[Ranked] = []
    for chunk_id, score in sorted(fused, key=lambda pair: (-pair[1], pair[0])):
        by_keyword, by_vector = keyword_why.get(chunk_id), vector_why.get(chunk_id)
        why = Why(rrf=round(score, 6),
                  ranks={"keyword": keyword_rank.get(chunk_id), "vector": vector_rank.get(chunk_id)},
                  matched_terms=(by_keyword.matched_terms or []) if by_keyword else None,
                  similarity=by_vector.similarity if by_vector else None)
        out.append((chunk_id, score, why))
    return out


def hybrid_ranking(ws: WorkspaceView, query: str, vector: np.ndarray | None, n: int) -> list[Ranked]:
    """The ``n`` best chunks by RRF of keyword and vector search (keywords alone if ``vector`` is None)."""
    depth = n * FUSION_DEPTH
    keyword = keyword_ranking(ws, query, depth)
    by_vector = vector_ranking(ws, vector, depth) if vector is not None else []
    return fuse_rankings(keyword, by_vector, ws.settings.retrieval.rrf_k)[:n]


class HybridRetriever(SearchSkeleton):
    """Keyword and vector rankings fused by Reciprocal Rank Fusion."""

    name = "hybrid"
    description = "Reciprocal Rank Fusion (retrieval.rrf_k) of the keyword and the vector rankings"
    capabilities = Capabilities(vectors=True, embedder=True, keyword_index=True, fallback=KEYWORD_ONLY)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        # Its fallback keeps the keyword half of the fusion (the vector half empty), inside the step.
        mode_used, reason = self.name, ""
        try:
            with timer("embed"):
                vector = embed_query(ws, query)
        except EmbeddingUnavailable as exc:
            vector, mode_used, reason = None, KEYWORD_ONLY, f"embeddings unavailable ({exc}); keyword ranking alone"
        found = identifiers(query)
        depth = k * LITERAL_DEPTH if found else k
        with timer("search"):
            try:
                ranked = hybrid_ranking(ws, query, vector, depth)
            except VectorStoreUnavailable as exc:
                mode_used, reason = KEYWORD_ONLY, f"vector store unavailable ({exc}); keyword ranking alone"
                ranked = hybrid_ranking(ws, query, None, depth)
        with timer("literal"):
            ranked = literal_boosted(ws, ranked, found)[:k]
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = RetrievalStats(
            seconds=timer.total(),
            keyword_hits=sum(1 for h in hits if h.why.ranks.get("keyword") is not None),
            vector_hits=sum(1 for h in hits if h.why.ranks.get("vector") is not None),
            literal_terms=found,
        )
        if not hits and not reason:
            reason = "neither keyword nor vector search found a chunk"
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=mode_used, hits=hits,
                               stats=stats, reason=reason)
