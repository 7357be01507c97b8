"""Retrieval strategies side by side: one protocol, a registry by name, one entry point.

Built-in modes, in their stable order: ``keyword``, ``vector``, ``hybrid``, ``expand``,
``graphrag``, ``paths``, ``comention``, ``direct``, ``graphrag-seed``, ``global``,
``expand-comention``; modes registered later follow them. Each returns a
:class:`~workbench.model.RetrievalResult` whose hits say why they came back.

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
from typing import TYPE_CHECKING

from ..model import COMENTION_RELATION, RetrievalResult, WindowUse
from ..vectors.index import VectorStoreUnavailable
from .base import KEYWORD_ONLY, Capabilities, Retriever
from .comention import ComentionRetriever
from .expand import DirectRetriever, ExpandRetriever
from .global_search import GlobalRetriever
from .graphrag import GraphRAGRetriever
from .graphrag_relation_walk import GraphRAGSeedRetriever
from .hybrid import HybridRetriever
from .keyword import KeywordRetriever
from .paths import PathsRetriever
from .vector import VectorRetriever, store_failures

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["KEYWORD_ONLY", "MODES", "RETRIEVERS", "Capabilities", "Retriever", "get_retriever", "modes_falling_back_to",
           "register", "retrieve", "undated_policy"]

#: Every registered retriever by mode name, in registration order.
RETRIEVERS: dict[str, Retriever] = {}

#: The registered mode names, in a stable order.
MODES: tuple[str, ...] = ()


def register(retriever: Retriever) -> Retriever:
    """Add (or replace) a retriever under its ``name``; returns it."""
    global MODES
    if not getattr(retriever, "name", None) or not callable(getattr(retriever, "retrieve", None)) \
            or not isinstance(getattr(retriever, "capabilities", None), Capabilities):
        raise TypeError(f"{retriever!r} is not a Retriever: it needs a name, a retrieve(ws, query, k) method and "
                        "its capabilities (workbench.retrieve.base.Capabilities)")
    RETRIEVERS[retriever.name] = retriever
    MODES = tuple(RETRIEVERS)
    return retriever


def get_retriever(name: str) -> Retriever:
    """The retriever registered as ``name``; ``ValueError`` listing the modes otherwise."""
    try:
        return RETRIEVERS[name]
    except KeyError:
        raise ValueError(f"unknown retrieval mode {name!r}; modes: {', '.join(RETRIEVERS)}") from None


def modes_falling_back_to(fallback: str | None) -> tuple[str, ...]:
    """The registered modes that declare ``fallback`` (:data:`KEYWORD_ONLY`, or None: no hits)
    for a failing vector store or model, in registration order.

    >>> modes_falling_back_to(KEYWORD_ONLY)
    ('hybrid', 'graphrag', 'graphrag-seed')
    """
    return tuple(name for name, retriever in RETRIEVERS.items() if retriever.capabilities.fallback == fallback)


def _prefetch(ws: WorkspaceView) -> threading.Thread | None:
    """On a workspace's first search, open the vector store and load the embedding model in a
    background thread while this one loads the graph: in a fresh process the three overlap
    (importing Chroma alone takes most of a second). Returns the thread, for the search to join
    before it returns: a process must not exit while a native library is loading in it."""
    from ..workspace.scoped_view import ScopedWorkspace
    from ..workspace.workspace import Workspace

    if not isinstance(ws, Workspace | ScopedWorkspace) or ws._prefetched:  # stand-ins have nothing to load
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


def retrieve(ws: WorkspaceView, query: str, mode: str = "hybrid", k: int | None = None, *, since=None, until=None,
             as_of=None, allow_fallback: bool = True) -> RetrievalResult:
    """Run one retrieval mode on a workspace; ``k`` defaults to ``settings.retrieval.k``.

    Every mode takes a time window: ``since`` / ``until`` (days, inclusive) or a phrase of the
    question ("last month", "in February", "since the outage"), resolved against ``as_of``
    (default today; see :mod:`workbench.retrieve.timewindow`). Under a window the retriever
    is asked for more hits until ``k`` fall in it; explicit bounds keep only dated hits inside
    them, a phrase drops the hits dated outside it; undated hits follow :func:`undated_policy`.
    ``reason`` and ``stats.time_window`` say which window was used, and a phrase that looks
    like time but was not understood is named in ``reason`` and
    ``stats.time_phrases_not_understood``. Every hit carries its chunk's ``time``.

    A mode whose vector store fails falls back (hybrid and graphrag to the keyword ranking, the
    others to no hits) and says so in ``reason``; with ``allow_fallback=False`` the failure is
    raised instead, as :class:`~workbench.vectors.index.VectorStoreUnavailable`.
    """
    retriever = get_retriever(mode)
    prefetch = _prefetch(ws) if retriever.capabilities.needs_vector_store_or_model else None
    try:
        with ws.pinned(), store_failures() as failed:  # one graph for the whole query, whatever a writer commits
            result = _retrieve(ws, retriever, query, k, since, until, as_of)
    finally:
        if prefetch is not None:
            prefetch.join()
    if failed and not allow_fallback:
        raise VectorStoreUnavailable(failed[0])
    return result


def _retrieve(ws: WorkspaceView, retriever, query: str, k: int | None, since, until, as_of) -> RetrievalResult:
    from .timewindow import anchor_from_documents, read_time

    k = ws.settings.retrieval.k if k is None else k
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    # The documents are read only for a "since the <event>" phrase, not on every query.
    reading = read_time(query, since, until, as_of,
                        anchor=lambda phrase: anchor_from_documents(ws.store.documents())(phrase))
    window, text = reading.window, reading.text
    if window is None:
        result = retriever.retrieve(ws, query, k)
        _stamp_times(ws, result.hits)
        return _name_unread(result, reading.not_understood)
    # A year the question names ("in 1930", "since 2004") may describe what it asks about rather
    # than when its sources were written: such a window drops the hits dated outside it, keeps
    # the undated ones, and the whole question is searched. Relative phrases ("last month") and
    # explicit bounds keep dated hits inside the window only.
    from_phrase = since is None and until is None and re.search(r"\b\d{4}\b", window.phrase or "") is not None
    if from_phrase:
        text = query
    total = max(1, ws.store.count("chunks"))
    asked = min(total, k * ws.settings.time.window_depth)
    while True:
        result = retriever.retrieve(ws, text, asked)
        _stamp_times(ws, result.hits)
        kept = undated_policy(result.hits, window, keep_undated=from_phrase,
                              related=lambda chunk_ids: _related_documents(ws, chunk_ids))
        if len(kept) >= k or len(result.hits) < asked or asked >= total:
            break
        asked = min(total, asked * ws.settings.time.window_depth)
    if not kept and since is None and until is None:
        # Nothing the question's time phrase points at is dated in the corpus: the phrase was
        # about the subject, not a filter on the sources. Say so and answer without it.
        result = retriever.retrieve(ws, query, k)
        _stamp_times(ws, result.hits)
        note = f"time window {window.describe()} matched no dated source; searched without it"
        result.reason = f"{result.reason}; {note}" if result.reason else note
        result.stats.time_window = WindowUse(window, in_window=0, ignored=True)
        return _name_unread(result, reading.not_understood)
    # A mode that adds reached hits after its direct ones (expand) keeps room for them.
    kept = kept[:k * max(1, retriever.capabilities.max_hits_per_k)]
    for rank, hit in enumerate(kept, 1):
        hit.rank = rank
    fetched = len(result.hits)
    from .timewindow import in_window

    dated = sum(1 for hit in kept if in_window(hit.time, window))
    undated = sum(1 for hit in kept if not hit.time)
    outside = len(kept) - dated - undated
    note = f"time window {window.describe()}: {dated} of {fetched} hits fall in it"
    if outside:
        note += f"; {outside} dated outside it kept after them, a relation from a hit in it leading to each"
    if undated:
        note += f"; {undated} undated kept after them"
    result.query, result.hits = query, kept
    result.reason = f"{result.reason}; {note}" if result.reason else note
    result.stats.time_window = WindowUse(window, in_window=dated, asked=asked, fetched=fetched,
                                         kept=len(result.hits), searched_text=text, undated_kept=undated,
                                         outside_kept=outside or None)
    return _name_unread(result, reading.not_understood)


def undated_policy(hits: list, window, keep_undated: bool = False, related=None) -> list:
    """The hits a time window keeps, in order: the dated hits inside it (in their order), then
    the hits the mode reached over a relation from a kept hit (``why.parent`` and ``why.edge``:
    the runbook an in-window incident is RESOLVED_BY, written the year before), whatever their
    own date; the undated hits any link from a kept hit reached, or whose note a relation stated
    by a kept hit leads to (``related(kept chunk ids)`` gives ``{document: (chunk id, relation as
    a sentence)}``), each saying so in ``why.kept_by_window``; then, with ``keep_undated`` (a year
    the question names), every other undated hit. A dated hit a mode found by itself (a vector or
    keyword hit, however related its note) is kept only inside the window.

    >>> from workbench.model import Hit, Hop, TimeWindow, Why
    >>> fixed = Hop("incident", "RESOLVED_BY", "fix", 1, ("c2",), ())
    >>> hits = [Hit("c1", "runbook.md", "", 0.9, 1, why=Why(via="expansion", parent="c2")),
    ...         Hit("c2", "incident.md", "", 0.8, 2, time="2024-02-14"),
    ...         Hit("c3", "old.md", "", 0.7, 3, time="2023-02-01"), Hit("c4", "notes.md", "", 0.6, 4),
    ...         Hit("c5", "fix.md", "", 0.5, 5, time="2023-11-20",
    ...             why=Why(via="direct", parent="c2", edge=fixed, direction="forward"))]
    >>> window = TimeWindow("2024-02-01", "2024-02-29")
    >>> [h.chunk_id for h in undated_policy(hits, window)]
    ['c2', 'c1', 'c5']
    >>> hits[4].why.kept_by_window
    'dated 2023-11-20, outside the time window, kept after the hits in it: incident is resolved by fix (chunk c2)'
    >>> [h.chunk_id for h in undated_policy(hits, window, keep_undated=True)]
    ['c2', 'c1', 'c5', 'c4']
    >>> leads = lambda ids: {"notes.md": ("c2", "incident is resolved by notes"), "old.md": ("c2", "x")}
    >>> [h.chunk_id for h in undated_policy(hits, window, related=leads)]  # old.md is dated: not for a relation
    ['c2', 'c1', 'c4', 'c5']
    """
    from .timewindow import in_window

    inside = [hit for hit in hits if in_window(hit.time, window)]
    kept_ids = [hit.chunk_id for hit in inside]
    outside = [hit for hit in hits if not in_window(hit.time, window)]
    wanted = related is not None and kept_ids and any(not hit.time for hit in outside)
    documents = related(kept_ids) if wanted else {}
    reached = []
    for hit in outside:
        why = hit.why
        # A dated hit is kept for a relation only; an undated one for any link from a kept hit.
        related_edge = why.edge is not None and why.edge.relation != COMENTION_RELATION
        if why.parent is not None and why.parent in kept_ids and (related_edge or not hit.time):
            relation = (why.edge.reads(backward=why.direction == "backward") if why.edge is not None
                        else "reached from it")
            source = why.parent
        elif not hit.time and hit.document in documents:
            source, relation = documents[hit.document]
        else:
            continue
        when = f"dated {hit.time[:10]}" if hit.time else "undated"
        why.kept_by_window = f"{when}, outside the time window, kept after the hits in it: {relation} (chunk {source})"
        reached.append(hit)
    reached_ids = {hit.chunk_id for hit in reached}
    rest = [hit for hit in outside if keep_undated and not hit.time and hit.chunk_id not in reached_ids]
    return inside + reached + rest


def _related_documents(ws: WorkspaceView, chunk_ids) -> dict[str, tuple[str, str]]:
    """Document -> (the kept chunk, the relation as a sentence) for the documents the relations
    stated by ``chunk_ids`` lead to: the notes their ends title, else the chunk that best states
    or mentions each end (as ``expand`` follows them); the first chunk's relation for each."""
    from .cache import indexes_for
    from .expand import reached_chunks

    indexes = indexes_for(ws)
    documents = indexes.chunk_documents
    graph = ws.graph
    found: dict[str, tuple[str, str]] = {}
    for chunk_id in chunk_ids:
        for edge in indexes.edges_stated_by.get(chunk_id, ()):
            if edge.relation == COMENTION_RELATION:
                continue
            for end in (edge.source, edge.target):
                for reached in reached_chunks(ws, end, documents.get(chunk_id, "")):
                    found.setdefault(documents.get(reached, ""),
                                     (chunk_id, graph.cited_hop(edge).reads(backward=end == edge.source)))
    return found


def _name_unread(result: RetrievalResult, phrases: tuple[str, ...]) -> RetrievalResult:
    """Name the time-like phrases no window was read from, in the reason and the stats."""
    if phrases:
        quoted = ", ".join(f'"{p}"' for p in phrases)
        note = f"time phrase {quoted} not understood: no window set from it"
        result.reason = f"{result.reason}; {note}" if result.reason else note
        result.stats.time_phrases_not_understood = list(phrases)
    return result


def _stamp_times(ws: WorkspaceView, hits) -> None:
    """Give each hit its chunk's time (timestamp, else its document's date)."""
    times = ws.store.chunk_times([hit.chunk_id for hit in hits])
    for hit in hits:
        hit.time = times.get(hit.chunk_id)


for _retriever in (KeywordRetriever(), VectorRetriever(), HybridRetriever(), ExpandRetriever(),
                   GraphRAGRetriever(), PathsRetriever(), ComentionRetriever(), DirectRetriever(),
                   GraphRAGSeedRetriever(), GlobalRetriever(), ExpandRetriever(comention=True)):
    register(_retriever)
del _retriever
