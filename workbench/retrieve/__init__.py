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

import re
import threading

from ..model import RetrievalResult, WindowUse
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


def _prefetch(ws) -> threading.Thread | None:
    """On a workspace's first search, open the vector store and load the embedding model in a
    background thread while this one loads the graph: in a fresh process the three overlap
    (importing Chroma alone takes most of a second). Returns the thread, for the search to join
    before it returns: a process must not exit while a native library is loading in it."""
    if getattr(ws, "_prefetched", True):  # set by Workspace; absent on stand-ins
        return None
    ws._prefetched = True
    vectors, embedder = ws.vectors, ws.embedder

    def load() -> None:
        try:
            vectors.warm()
            embedder.embed(["warm-up"])
        except Exception:  # noqa: BLE001 - the search itself meets and reports the same failure
            pass

    thread = threading.Thread(target=load, name="prefetch-search", daemon=True)
    thread.start()
    return thread


def retrieve(ws, query: str, mode: str = "hybrid", k: int | None = None, *, since=None, until=None,
             as_of=None) -> RetrievalResult:
    """Run one retrieval mode on a workspace; ``k`` defaults to ``settings.retrieval.k``.

    Every mode takes a time window: ``since`` / ``until`` (days, inclusive) or a phrase of the
    question ("last month", "in February", "since the outage"), resolved against ``as_of``
    (default today; see :mod:`workbench.retrieve.timewindow`). Under a window the retriever
    is asked for more hits until ``k`` fall in it; explicit bounds keep only dated hits inside
    them, a phrase drops the hits dated outside it and keeps undated ones. ``reason`` and
    ``stats.time_window`` say which window was used. Every hit carries its chunk's ``time``.
    """
    retriever = get_retriever(mode)
    # keyword is the one mode that needs neither the vectors nor the model
    prefetch = _prefetch(ws) if mode != "keyword" else None
    try:
        return _retrieve(ws, retriever, query, k, since, until, as_of)
    finally:
        if prefetch is not None:
            prefetch.join()


def _retrieve(ws, retriever, query: str, k: int | None, since, until, as_of) -> RetrievalResult:
    from .timewindow import anchor_from_documents, in_window, resolve_window

    k = ws.settings.retrieval.k if k is None else k
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    # The documents are read only for a "since the <event>" phrase, not on every query.
    window, text = resolve_window(query, since, until, as_of,
                                  anchor=lambda phrase: anchor_from_documents(ws.store.documents())(phrase))
    if window is None:
        result = retriever.retrieve(ws, query, k)
        _stamp_times(ws, result.hits)
        return result
    # A year the question names ("in 1930", "since 2004") may describe what it asks about rather
    # than when its sources were written: such a window drops the hits dated outside it, keeps
    # the undated ones, and the whole question is searched. Relative phrases ("last month") and
    # explicit bounds keep dated hits inside the window only.
    from_phrase = since is None and until is None and re.search(r"\b\d{4}\b", window.phrase or "") is not None
    if from_phrase:
        text = query
    total = max(1, ws.store.count("chunks"))
    asked = min(total, k * ws.settings.time.overfetch)
    while True:
        result = retriever.retrieve(ws, text, asked)
        _stamp_times(ws, result.hits)
        kept = [hit for hit in result.hits if in_window(hit.time, window) or (from_phrase and not hit.time)]
        if len(kept) >= k or len(result.hits) < asked or asked >= total:
            break
        asked = min(total, asked * ws.settings.time.overfetch)
    if not kept and since is None and until is None:
        # Nothing the question's time phrase points at is dated in the corpus: the phrase was
        # about the subject, not a filter on the sources. Say so and answer without it.
        result = retriever.retrieve(ws, query, k)
        _stamp_times(ws, result.hits)
        note = f"time window {window.describe()} matched no dated source; searched without it"
        result.reason = f"{result.reason}; {note}" if result.reason else note
        result.stats.time_window = WindowUse(window, in_window=0, ignored=True)
        return result
    for rank, hit in enumerate(kept[:k], 1):
        hit.rank = rank
    fetched = len(result.hits)
    note = f"time window {window.describe()}: {len(kept)} of {fetched} hits fall in it"
    result.query, result.hits = query, kept[:k]
    result.reason = f"{result.reason}; {note}" if result.reason else note
    result.stats.time_window = WindowUse(window, in_window=len(kept), asked=asked, fetched=fetched,
                                         kept=len(result.hits), searched_text=text)
    return result


def _stamp_times(ws, hits) -> None:
    """Give each hit its chunk's time (timestamp, else its document's date)."""
    times = ws.store.chunk_times([hit.chunk_id for hit in hits])
    for hit in hits:
        hit.time = times.get(hit.chunk_id)


for _retriever in (KeywordRetriever(), VectorRetriever(), HybridRetriever(), ExpandRetriever(),
                   GraphRAGRetriever(), PathsRetriever(), ComentionRetriever()):
    register(_retriever)
del _retriever
from . import global_search  # noqa: E402,F401  (registers the global mode)
