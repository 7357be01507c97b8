"""The retriever protocol and the helpers every strategy shares.

A retriever takes a workspace, a query and ``k`` and returns a
:class:`~workbench.model.RetrievalResult`: hits ranked 1..n with a score and a
:class:`~workbench.model.Why` each, the mode requested and the mode used,
:class:`~workbench.model.RetrievalStats` (with ``seconds`` per stage) and a
:class:`~workbench.model.GraphContext`. It declares what it reads and what it answers with
when the vector store or the model fails (:class:`Capabilities`), so the registry and the
surfaces ask the declaration, not the mode's name.

:class:`SearchSkeleton` is what every built-in strategy shares, written once: an empty query
gets an empty result, the stages are timed, and a failing vector store or embedding model ends
in the strategy's declared fallback; each strategy writes only its own ``search`` step.

Examples
--------
>>> result = empty_result("  ", "keyword")
>>> result.reason, result.hits
('empty query', [])
>>> timer = StageTimer()
>>> with timer("search"):
...     pass
>>> list(timer.seconds)
['search']
>>> Capabilities(vectors=True, embedder=True, fallback=KEYWORD_ONLY).reads()
('chunk vectors', 'the embedding model')
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..embedding import EmbeddingUnavailable
from ..model import Hit, RetrievalResult, RetrievalStats, Why
from ..vectors.index import VectorStoreUnavailable

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["KEYWORD_ONLY", "Capabilities", "Retriever", "SearchSkeleton", "StageTimer", "Ranked", "empty_result",
           "is_empty_query", "make_hits", "sort_ranked", "unavailable"]

#: One ranked candidate before its text is fetched: ``(chunk id, score, why)``.
Ranked = tuple[str, float, Why]

#: The mode a strategy answers in when it falls back to the keyword ranking alone.
KEYWORD_ONLY = "keyword_only"


@dataclass(frozen=True)
class Capabilities:
    """What a retrieval strategy reads, and what it answers with when a part it reads fails."""

    vectors: bool = False
    """It searches the chunk vector store (Chroma)."""
    embedder: bool = False
    """It embeds the query with the workspace's model."""
    graph: bool = False
    """It walks or reads the context graph."""
    keyword_index: bool = False
    """It reads the BM25 keyword index."""
    community_reports: bool = False
    """It reads the community reports."""
    fallback: str | None = None
    """The mode it answers in when the vector store or the model fails (:data:`KEYWORD_ONLY`: the
    keyword ranking alone, saying so); None: no hits, saying why."""
    max_hits_per_k: int = 1
    """Most hits it returns per hit wanted: 2 for a mode that adds up to ``k`` reached hits after
    its ``k`` direct ones."""

    def reads(self) -> tuple[str, ...]:
        """What it reads, in words."""
        parts = (("chunk vectors", self.vectors), ("the embedding model", self.embedder),
                 ("the context graph", self.graph), ("the keyword index", self.keyword_index),
                 ("the community reports", self.community_reports))
        return tuple(name for name, used in parts if used)

    @property
    def needs_vector_store_or_model(self) -> bool:
        """Whether a search opens the vector store or loads the embedding model."""
        return self.vectors or self.embedder


@runtime_checkable
class Retriever(Protocol):
    """What every retrieval strategy provides; register instances with :func:`workbench.retrieve.register`."""

    name: str
    """The mode name used on the command line and in results."""
    description: str
    """One line saying how the strategy finds chunks."""
    capabilities: Capabilities
    """What it reads and what it falls back to."""

    def retrieve(self, ws: WorkspaceView, query: str, k: int) -> RetrievalResult:
        """The ``k`` best chunks of workspace ``ws`` for ``query``, each explained."""
        ...


class SearchSkeleton:
    """The steps every strategy shares, once: the empty query's empty result, the stage timer,
    and the declared fallback when the vector store or the embedding model fails (raised as
    :class:`~workbench.vectors.index.VectorStoreUnavailable` or
    :class:`~workbench.embedding.EmbeddingUnavailable` by the strategy's own :meth:`search`).

    A subclass sets ``name``, ``description`` and ``capabilities`` and writes :meth:`search`;
    one that declares :data:`KEYWORD_ONLY` answers so, in its step (hybrid keeps the keyword half of
    its fusion) or through :class:`~workbench.retrieve.fallbacks.KeywordFallback`.
    """

    name: str
    description: str
    capabilities: Capabilities = Capabilities()

    def retrieve(self, ws: WorkspaceView, query: str, k: int) -> RetrievalResult:
        if is_empty_query(query):
            return empty_result(query, self.name)
        timer = StageTimer()
        try:
            return self.search(ws, query, k, timer)
        except (EmbeddingUnavailable, VectorStoreUnavailable) as exc:
            return self.fall_back(ws, query, k, timer, exc)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        """The strategy's own step, for a query that is not empty; ``timer`` times its stages."""
        raise NotImplementedError

    def fall_back(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer, exc: Exception) -> RetrievalResult:
        """The answer when the vector store or the model failed: no hits, saying why
        (:class:`~workbench.retrieve.fallbacks.KeywordFallback` answers with the keyword ranking)."""
        return unavailable(query, self.name, exc, timer)


class StageTimer:
    """Seconds spent per named stage, for :attr:`RetrievalStats.seconds`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start

    def total(self) -> dict[str, float]:
        """The stages plus ``total``, rounded to microseconds."""
        out = {stage: round(s, 6) for stage, s in self.seconds.items()}
        out["total"] = round(sum(self.seconds.values()), 6)
        return out


def is_empty_query(query: str | None) -> bool:
    """True for ``None``, ``""`` and whitespace."""
    return query is None or not str(query).strip()


def empty_result(query: str, mode: str, reason: str = "empty query", mode_used: str | None = None) -> RetrievalResult:
    """A result with no hits that says why."""
    return RetrievalResult(query=query or "", mode_requested=mode, mode_used=mode_used or mode, hits=[],
                           stats=RetrievalStats(seconds={"total": 0.0}), reason=reason)


def unavailable(query: str, mode: str, exc: Exception, timer: StageTimer) -> RetrievalResult:
    """The empty result of a mode whose vector search cannot run, saying why."""
    result = empty_result(query, mode, reason=f"vector search unavailable: {exc}")
    result.stats.seconds = timer.total()
    return result


def sort_ranked(ranked: Sequence[Ranked]) -> list[Ranked]:
    """Best score first; equal scores by chunk id, so results never depend on hash order."""
    return sorted(ranked, key=lambda item: (-item[1], item[0]))


def make_hits(ws: WorkspaceView, ranked: Sequence[Ranked]) -> list[Hit]:
    """Hits ranked 1..n from ``ranked`` (already in order), texts fetched in one SQL query.

    Chunks the record no longer holds (a stale vector) are left out.
    """
    chunks = {c.id: c for c in ws.store.chunks([chunk_id for chunk_id, _, _ in ranked])}
    hits: list[Hit] = []
    for chunk_id, score, why in ranked:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        hits.append(Hit(chunk_id=chunk_id, document=chunk.document_id, text=chunk.text, score=float(score),
                        rank=len(hits) + 1, why=why))
    return hits
