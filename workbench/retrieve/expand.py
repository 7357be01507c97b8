"""Direct retrieval plus one-hop relation expansion: the hits, then what their notes' edges lead to.

1. Direct hits: vector search, best chunk per document, ``k`` of them (the ``direct`` mode
   returns exactly these, the evaluation's baseline).
2. For each direct hit, every relation edge touching its note, in either direction: the
   relations any chunk of the note states (relation patterns, declared front-matter relations,
   accepted candidates) and the relation edges of the entity the note's title names, with
   confidence >= ``retrieval.expand_min_confidence``. Co-mention edges (names in the same chunk:
   proximity, not a relation) are followed only with ``retrieval.expand_comention`` on, or by
   the ``expand-comention`` mode, the evaluation's row for them. Each edge leads to its ends
   other than the note itself, outside the note's document: an end that titles a note (the
   runbook an incident is RESOLVED_BY, or the incident a runbook resolves) gives its note's
   opening chunk; any other end the chunk elsewhere that best states or mentions it.
3. An expanded chunk scores ``parent x expand_discount x confidence`` and says which way the
   edge was followed: ``forward`` (source to target: "A is resolved by B") or ``backward``
   ("B resolves A"). ``k`` direct plus up to ``k`` expanded hits, merged and sorted by score
   (``retrieval.expand_order: score``), or the expanded ones after the direct ones
   (``direct_first``). Not recursive. A direct hit whose note a relation of a higher direct
   hit's note leads to keeps its rank and score and names that relation in its ``why``
   (``parent``, ``edge``, ``direction``).

Examples
--------
>>> expansion_score(0.8, 0.7, 1.0)
0.56
>>> merge_order([("d1", 0.9, None), ("d2", 0.3, None)], [("e1", 0.56, None)], "score")
['d1', 'e1', 'd2']
>>> merge_order([("d1", 0.9, None), ("d2", 0.3, None)], [("e1", 0.56, None)], "direct_first")
['d1', 'd2', 'e1']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..model import COMENTION_RELATION, Edge, RetrievalResult, RetrievalStats, Why
from .base import Capabilities, Ranked, SearchSkeleton, StageTimer, make_hits, sort_ranked
from .cache import RetrievalIndexes, indexes_for
from .vector import direct_by_document

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["DirectRetriever", "ExpandRetriever", "expansion_score", "merge_order", "merged", "reached_chunks"]

#: Most (edge end, note) lookups kept per workspace version (about 20 MB).
REACHED_KEPT = 100_000


def expansion_score(parent: float, discount: float, confidence: float) -> float:
    """The score of a chunk reached over one edge from a hit scoring ``parent``."""
    return round(parent * discount * confidence, 12)


def merged(direct: Sequence[Ranked], expanded: Sequence[Ranked], order: str) -> list[Ranked]:
    """The direct and expanded hits in one list: by score (``score``; ties by chunk id) or the
    expanded ones after the direct ones (``direct_first``)."""
    if order == "direct_first":
        return list(direct) + sort_ranked(expanded)
    return sort_ranked(list(direct) + list(expanded))


def merge_order(direct, expanded, order: str) -> list[str]:
    """The chunk ids of :func:`merged`, for reading."""
    return [chunk_id for chunk_id, _, _ in merged(direct, expanded, order)]


def reached_chunks(ws: WorkspaceView, end: str, parent_document: str, indexes: RetrievalIndexes | None = None
                   ) -> list[str]:
    """The chunks an edge's end leads to, outside the parent's document: its note's opening chunk
    if it titles one, else the one chunk that best states or mentions it (the first by id among
    those stating one of its relations, else among those mentioning it). Kept per workspace
    version: one document's edges lead to the same ends again and again."""
    indexes = indexes_for(ws) if indexes is None else indexes
    kept = indexes.reached
    found = kept.get((end, parent_document))
    if found is None:
        if len(kept) >= REACHED_KEPT:  # a long-lived server's queries: begin again rather than grow
            kept.clear()
        found = kept[(end, parent_document)] = _reached(ws, indexes, end, parent_document)
    return list(found)


def _reached(ws: WorkspaceView, indexes: RetrievalIndexes, end: str, parent_document: str) -> tuple[str, ...]:
    graph = ws.graph
    documents = indexes.chunk_documents
    chunks = graph.passages.chunks_of.get(end, ())
    titled = sorted({documents[c] for c in chunks
                     if graph.passages.title_of.get(c) == end and documents.get(c, parent_document) != parent_document})
    if titled:  # the note's opening chunk: its title and first lines
        opening = indexes.opening_chunks.get(titled[0])
        return (opening,) if opening else ()
    stating = indexes.stating_chunks.get(end, frozenset())
    outside = [c for c in chunks if documents.get(c) != parent_document]
    best = min((c for c in outside if c in stating), default=None)
    if best is None:
        best = min(outside, default=None)
    return () if best is None else (best,)


def _direct_stage(ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> list[Ranked]:
    """The ``k`` direct hits, each marked ``via="direct"``."""
    return [(chunk_id, score, Why(via="direct", similarity=why.similarity))
            for chunk_id, score, why in direct_by_document(ws, query, k, timer)]


class DirectRetriever(SearchSkeleton):
    """The direct stage expansion starts from, alone: the baseline that isolates the edges."""

    name = "direct"
    description = ("vector hits, best chunk per document: exactly the direct stage expand starts from, "
                   "without its edges (the evaluation's baseline)")
    capabilities = Capabilities(vectors=True, embedder=True)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        direct = _direct_stage(ws, query, k, timer)
        with timer("fetch"):
            hits = make_hits(ws, direct)
        min_score = ws.settings.retrieval.min_vector_score
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=self.name, hits=hits,
                               stats=RetrievalStats(seconds=timer.total(), direct_hits=len(hits)),
                               reason="" if hits else f"no chunk reaches min_vector_score={min_score}")


class ExpandRetriever(SearchSkeleton):
    """Direct vector hits (one per document) plus what the relation edges of their notes lead to.

    ``comention``: whether co-mention edges are followed too; None (``expand``) takes
    ``retrieval.expand_comention``, True is the ``expand-comention`` mode.
    """

    # k direct hits and up to k expanded ones
    capabilities = Capabilities(vectors=True, embedder=True, graph=True, max_hits_per_k=2)

    def __init__(self, comention: bool | None = None) -> None:
        self.comention = comention
        if comention:
            self.name = "expand-comention"
            self.description = ("expand with the co-mention edges of the hits' notes followed as well as their "
                                "relations (retrieval.expand_comention on): the evaluation's row for co-mention "
                                "expansion")
        else:
            self.name = "expand"
            self.description = ("vector hits, best chunk per document, then the notes and chunks at the other ends "
                                "of the relation edges touching their notes, either direction, scored parent x "
                                "expand_discount x confidence and merged by score (co-mention edges with "
                                "retrieval.expand_comention)")

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        settings = ws.settings.retrieval
        comention = settings.expand_comention if self.comention is None else self.comention
        direct = _direct_stage(ws, query, k, timer)
        with timer("expand"):
            indexes = indexes_for(ws)
            documents = indexes.chunk_documents
            direct_documents = {documents.get(chunk_id) for chunk_id, _, _ in direct}
            graph = ws.graph
            expanded: dict[str, Ranked] = {}
            followed: set[tuple[str, str, str]] = set()
            # A direct hit's note that a relation of a higher hit's note leads to says so.
            position = {documents.get(chunk_id): i for i, (chunk_id, _, _) in reversed(list(enumerate(direct)))}
            linked: dict[str, tuple[str, Edge, str, str]] = {}
            for number, (parent, parent_score, _) in enumerate(direct):
                parent_document = documents.get(parent, "")
                own = indexes.note_titles.get(parent_document, frozenset())
                for edge in indexes.edges_touching_document.get(parent_document, ()):
                    if edge.confidence < settings.expand_min_confidence or (
                            not comention and edge.relation == COMENTION_RELATION):
                        continue
                    followed.add((edge.source, edge.relation, edge.target))
                    score = expansion_score(parent_score, settings.expand_discount, edge.confidence)
                    for end, direction in ((edge.target, "forward"), (edge.source, "backward")):
                        if end in own or edge.source == edge.target:
                            continue  # the note itself, or a self-loop: nothing to reach
                        for chunk_id in reached_chunks(ws, end, parent_document, indexes):
                            current = expanded.get(chunk_id)
                            document = documents.get(chunk_id, "")
                            if (document in direct_documents and position[document] > number
                                    and document not in linked and edge.relation != COMENTION_RELATION):
                                linked[document] = (parent, edge, end, direction)
                            # A note already among the direct hits is no new material.
                            if document in direct_documents or (current is not None and current[1] >= score):
                                continue
                            expanded[chunk_id] = (chunk_id, score, Why(
                                via="expansion", parent=parent, edge=graph.cited_hop(edge), reached=graph.name(end),
                                direction=direction))
            for chunk_id, _, why in direct:
                link = linked.get(documents.get(chunk_id, ""))
                if link is not None:
                    parent, edge, end, direction = link
                    why.parent, why.edge, why.reached, why.direction = (parent, graph.cited_hop(edge), graph.name(end),
                                                                        direction)
            ranked = merged(direct, sort_ranked(list(expanded.values()))[:k], settings.expand_order)
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = RetrievalStats(
            seconds=timer.total(),
            direct_hits=sum(1 for h in hits if h.why.via == "direct"),
            expanded_hits=sum(1 for h in hits if h.why.via == "expansion"),
            edges_followed=len(followed),
        )
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=self.name, hits=hits, stats=stats,
                               reason="" if hits else f"no chunk reaches min_vector_score={settings.min_vector_score}")
