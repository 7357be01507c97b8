"""Retrieval strategies side by side: one protocol, a registry by name, one entry point.

Built-in modes, in their stable order: ``keyword``, ``vector``, ``hybrid``, ``expand``,
``graphrag``, ``paths``, ``comention``; modes registered later follow them. Each returns a :class:`~workbench.model.RetrievalResult` whose hits say why they
came back.

Examples
--------
>>> MODES[:6]
('keyword', 'vector', 'hybrid', 'expand', 'graphrag', 'paths')
>>> get_retriever("bm42")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown retrieval mode 'bm42'; modes: keyword, vector, hybrid, expand, graphrag, paths...
"""

from __future__ import annotations

from ..model import RetrievalResult
from .base import Retriever
from .comention import ComentionRetriever
from .expand import ExpandRetriever
from .graphrag import GraphRAGRetriever
from .hybrid import HybridRetriever
from .keyword import KeywordRetriever
from .paths import PathsRetriever
from .vector import VectorRetriever

__all__ = ["MODES", "RETRIEVERS", "Retriever", "get_retriever", "register", "retrieve"]

#: Every registered retriever by mode name, in registration order.
RETRIEVERS: dict[str, Retriever] = {}

#: The registered mode names, in a stable order.
MODES: tuple[str, ...] = ()


def register(retriever: Retriever) -> Retriever:
    """Add (or replace) a retriever under its ``name``; returns it."""
    global MODES
    if not getattr(retriever, "name", None) or not callable(getattr(retriever, "retrieve", None)):
        raise TypeError(f"{retriever!r} is not a Retriever: it needs a name and a retrieve(ws, query, k) method")
    RETRIEVERS[retriever.name] = retriever
    MODES = tuple(RETRIEVERS)
    return retriever


def get_retriever(name: str) -> Retriever:
    """The retriever registered as ``name``; ``ValueError`` listing the modes otherwise."""
    try:
        return RETRIEVERS[name]
    except KeyError:
        raise ValueError(f"unknown retrieval mode {name!r}; modes: {', '.join(RETRIEVERS)}") from None


def retrieve(ws, query: str, mode: str = "hybrid", k: int | None = None) -> RetrievalResult:
    """Run one retrieval mode on a workspace; ``k`` defaults to ``settings.retrieval.k``."""
    retriever = get_retriever(mode)
    k = ws.settings.retrieval.k if k is None else k
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return retriever.retrieve(ws, query, k)


for _retriever in (KeywordRetriever(), VectorRetriever(), HybridRetriever(), ExpandRetriever(),
                   GraphRAGRetriever(), PathsRetriever(), ComentionRetriever()):
    register(_retriever)
del _retriever
