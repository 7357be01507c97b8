"""The retriever protocol and the helpers every strategy shares.

A retriever takes a workspace, a query and ``k`` and returns a
:class:`~workbench.model.RetrievalResult`: hits ranked 1..n with a score and a
:class:`~workbench.model.Why` each, the mode requested and the mode used,
:class:`~workbench.model.RetrievalStats` (with ``seconds`` per stage) and a
:class:`~workbench.model.GraphContext`.

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
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..model import Hit, RetrievalResult, RetrievalStats, Why

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["Retriever", "StageTimer", "Ranked", "empty_result", "is_empty_query", "make_hits", "sort_ranked"]

#: One ranked candidate before its text is fetched: ``(chunk id, score, why)``.
Ranked = tuple[str, float, Why]


@runtime_checkable
class Retriever(Protocol):
    """What every retrieval strategy provides; register instances with :func:`workbench.retrieve.register`."""

    name: str
    """The mode name used on the command line and in results."""
    description: str
    """One line saying how the strategy finds chunks."""

    def retrieve(self, ws: WorkspaceView, query: str, k: int) -> RetrievalResult:
        """The ``k`` best chunks of workspace ``ws`` for ``query``, each explained."""
        ...


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
