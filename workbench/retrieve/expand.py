"""Direct retrieval plus one-hop relation expansion: the hits, then what their edges lead to.

1. Direct hits: vector search, best chunk per document, ``k`` of them.
2. For each direct hit, the edges its chunk states (relation patterns, declared front-matter
   relations and co-mentions) with confidence >= ``retrieval.expand_min_confidence``. Each
   edge leads to the notes and chunks on its ends other than the hit's own document: a note
   (an end that titles a document, such as the runbook an incident is RESOLVED_BY) gives its
   note's text; any other end gives the chunk elsewhere that best states or mentions it
   (stating one of its relations before merely mentioning it).
3. Expanded chunks score ``parent x expand_discount x confidence`` and come *after* the
   direct hits: ``k`` direct plus up to ``k`` expanded, both counts reported, each expanded hit
   with the full directed edge that brought it and the end it reached. Not recursive.

Examples
--------
>>> expansion_score(0.8, 0.7, 1.0)
0.56
"""

from __future__ import annotations

from ..embedding import EmbeddingUnavailable
from ..model import RetrievalResult, RetrievalStats, Why
from ..vectors import VectorStoreUnavailable
from .base import Ranked, StageTimer, empty_result, is_empty_query, make_hits, sort_ranked
from .cache import indexes_for
from .vector import direct_by_document, unavailable

__all__ = ["ExpandRetriever", "expansion_score", "reached_chunks"]


def expansion_score(parent: float, discount: float, confidence: float) -> float:
    """The score of a chunk reached over one edge from a hit scoring ``parent``."""
    return round(parent * discount * confidence, 12)


def reached_chunks(ws, end: str, parent_document: str) -> list[str]:
    """The chunks an edge's end leads to, outside the parent's document: its note's chunks if it
    titles one, else the one chunk that best states or mentions it."""
    graph = ws.graph
    indexes = indexes_for(ws)
    documents = indexes.chunk_documents
    titled = sorted(c for c in graph.passages.chunks_of.get(end, ()) if graph.passages.title_of.get(c) == end
                    and documents.get(c) != parent_document)
    if titled:
        return titled[:1]  # the note's opening chunk: its title and first lines
    stating = {c for e in indexes.relation_edges.get(end, ()) for c in e.chunk_ids}
    candidates = [c for c in graph.passages.chunks_of.get(end, ()) if documents.get(c) != parent_document]
    candidates.sort(key=lambda c: (c not in stating, c))
    return candidates[:1]


class ExpandRetriever:
    """Direct vector hits (one per document) plus what their stated edges lead to."""

    name = "expand"
    description = ("vector hits, best chunk per document, then the notes and chunks on the other ends of the edges "
                   "they state, scored parent x expand_discount x confidence")

    #: Returns ``k`` direct hits and up to ``k`` more after them.
    max_hits_per_k = 2

    def retrieve(self, ws, query: str, k: int) -> RetrievalResult:
        if is_empty_query(query):
            return empty_result(query, self.name)
        settings = ws.settings.retrieval
        timer = StageTimer()
        try:
            direct = direct_by_document(ws, query, k, timer)
        except (EmbeddingUnavailable, VectorStoreUnavailable) as exc:
            return unavailable(query, self.name, exc, timer)
        with timer("expand"):
            indexes = indexes_for(ws)
            documents = indexes.chunk_documents
            direct_documents = {documents.get(chunk_id) for chunk_id, _, _ in direct}
            graph = ws.graph
            stated = indexes.edges_stated_by
            expanded: dict[str, Ranked] = {}
            edges_followed = 0
            for parent, parent_score, _ in direct:
                parent_document = documents.get(parent, "")
                for edge in stated.get(parent, ()):
                    if edge.confidence < settings.expand_min_confidence:
                        continue
                    edges_followed += 1
                    score = expansion_score(parent_score, settings.expand_discount, edge.confidence)
                    for end in (edge.source, edge.target):
                        for chunk_id in reached_chunks(ws, end, parent_document):
                            current = expanded.get(chunk_id)
                            # A note already among the direct hits is no new material.
                            if documents.get(chunk_id) in direct_documents or (
                                    current is not None and current[1] >= score):
                                continue
                            expanded[chunk_id] = (chunk_id, score, Why(
                                via="expansion", parent=parent, edge=graph.cited_hop(edge), reached=graph.name(end)))
            more = sort_ranked(list(expanded.values()))[:k]
            ranked = [(chunk_id, score, Why(via="direct", similarity=why.similarity))
                      for chunk_id, score, why in direct] + more
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = RetrievalStats(
            seconds=timer.total(),
            direct_hits=sum(1 for h in hits if h.why.via == "direct"),
            expanded_hits=sum(1 for h in hits if h.why.via == "expansion"),
            edges_followed=edges_followed,
        )
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=self.name, hits=hits, stats=stats,
                               reason="" if hits else f"no chunk reaches min_vector_score={settings.min_vector_score}")
