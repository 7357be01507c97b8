"""Retrieval results as a surface hands them on: several modes side by side
(:class:`Comparison`), and one search scoped to some documents (:class:`ScopedSearch`).

Examples
--------
>>> from workbench.model import Hit, RetrievalResult
>>> hit = lambda cid: Hit(cid, "d.md", "", 1.0, 1)
>>> both = Comparison.of("q", {"keyword": RetrievalResult("q", "keyword", "keyword", [hit("c1"), hit("c2")]),
...                           "vector": RetrievalResult("q", "vector", "vector", [hit("c2")])})
>>> both.shared
['c2']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .retrieval import RetrievalResult

__all__ = ["Comparison", "ScopedSearch"]


@dataclass
class Comparison:
    """One question asked of several retrieval modes, and the hits two or more of them returned."""

    query: str
    """The question."""
    results: dict[str, RetrievalResult]
    """Mode -> its result, in the order asked."""
    shared: list[str] = field(default_factory=list)
    """Chunk ids returned by two or more modes, sorted."""

    @classmethod
    def of(cls, query: str, results: dict[str, RetrievalResult]) -> Comparison:
        """The comparison of ``results``, its shared hits counted."""
        seen: dict[str, int] = {}
        for result in results.values():
            for chunk_id in {h.chunk_id for h in result.hits}:
                seen[chunk_id] = seen.get(chunk_id, 0) + 1
        return cls(query, dict(results), sorted(chunk_id for chunk_id, n in seen.items() if n >= 2))

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "results": {mode: r.to_json() for mode, r in self.results.items()},
                "shared": list(self.shared)}


@dataclass
class ScopedSearch:
    """One retrieval, scoped to the documents its filters name (none: the whole corpus)."""

    query: str
    """The question as asked."""
    result: RetrievalResult
    """The retrieval: seeds, walk, context and stats as the scoped workspace gave them."""
    document_filter: list[str] = field(default_factory=list)
    """Document ids or folder prefixes the search was kept to; empty for the whole corpus."""

    def to_json(self) -> dict[str, Any]:
        return {**self.result.to_json(), "query": self.query, "document_filter": list(self.document_filter)}
