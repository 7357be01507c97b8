"""Keyword retrieval: BM25 over every chunk, with the script-aware tokenizer.

Examples
--------
>>> KeywordRetriever.name
'keyword'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import RetrievalResult, RetrievalStats, Why
from .base import Capabilities, Ranked, SearchSkeleton, StageTimer, make_hits
from .cache import indexes_for

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["KeywordRetriever", "keyword_ranking"]


def keyword_ranking(ws: WorkspaceView, query: str, n: int) -> list[Ranked]:
    """The ``n`` best chunks by BM25, zero scores dropped: ``(chunk id, score, why)``."""
    matches = indexes_for(ws).keyword.search(query, n)
    return [(m.id, m.score, Why(matched_terms=list(m.matched_terms), bm25=round(m.score, 6))) for m in matches]


class KeywordRetriever(SearchSkeleton):
    """BM25 (bm25s) over chunks; jieba for Chinese, literal identifiers for the rest."""

    name = "keyword"
    description = "BM25 over chunks: jieba for Chinese, lower-cased words and literal identifiers otherwise"
    capabilities = Capabilities(keyword_index=True)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        with timer("index"):
            indexes_for(ws).keyword  # noqa: B018  (built once per workspace version)
        with timer("search"):
            ranked = keyword_ranking(ws, query, k)
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        return RetrievalResult(
            query=query, mode_requested=self.name, mode_used=self.name, hits=hits,
            stats=RetrievalStats(seconds=timer.total(), keyword_hits=len(hits)),
            reason="" if hits else "no chunk shares a term with the query",
        )
