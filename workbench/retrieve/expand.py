"""One-hop expansion: direct vector hits plus the chunks that state their relations.

For each direct hit (vector search, best chunk per document) the entities its chunk mentions
are looked up; every relation edge at those entities (either direction, co-mention left out)
with confidence >= ``retrieval.expand_min_confidence`` brings in the chunks that state it,
scored ``parent x expand_discount x confidence``. Not recursive: expanded hits are not
expanded again. A chunk reached twice keeps its best score.

Examples
--------
>>> expansion_score(0.8, 0.7, 1.0)
0.56
"""

from __future__ import annotations

from ..embedding import EmbeddingUnavailable
from ..model import Edge, RetrievalResult
from ..vectors import VectorStoreUnavailable
from .base import Ranked, StageTimer, empty_result, is_empty_query, make_hits, sort_ranked
from .cache import indexes_for
from .hybrid import OVERFETCH
from .vector import best_per_document, embed_query, vector_ranking

__all__ = ["ExpandRetriever", "expansion_score"]


def expansion_score(parent: float, discount: float, confidence: float) -> float:
    """The score of a chunk reached over one edge from a hit scoring ``parent``."""
    return round(parent * discount * confidence, 12)


def _edge_json(graph, edge: Edge) -> dict:
    return {"source": graph.name(edge.source), "relation": edge.relation, "target": graph.name(edge.target),
            "confidence": edge.confidence, "chunks": list(edge.chunk_ids)}


class ExpandRetriever:
    """Direct vector hits (one per document) plus their one-hop relation neighbours."""

    name = "expand"
    description = ("vector hits, best chunk per document, plus the chunks stating their one-hop relations, "
                   "scored parent x expand_discount x confidence")

    def retrieve(self, ws, query: str, k: int) -> RetrievalResult:
        if is_empty_query(query):
            return empty_result(query, self.name)
        settings = ws.settings.retrieval
        timer = StageTimer()
        try:
            with timer("embed"):
                vector = embed_query(ws, query)
            with timer("search"):
                direct = vector_ranking(ws, vector, k * OVERFETCH, dedupe=False)
        except (EmbeddingUnavailable, VectorStoreUnavailable) as exc:
            result = empty_result(query, self.name, reason=f"vector search unavailable: {exc}")
            result.stats["seconds"] = timer.total()
            return result
        with timer("expand"):
            indexes = indexes_for(ws)
            direct = best_per_document(direct, indexes.chunk_documents)[:k]
            best: dict[str, Ranked] = {
                chunk_id: (chunk_id, score, {"via": "direct", "similarity": why["similarity"]})
                for chunk_id, score, why in direct
            }
            graph = ws.graph
            chunk_entities = ws.parts.chunk_entities
            edges_seen = 0
            for parent, parent_score, _ in direct:
                for key in sorted(chunk_entities.get(parent, ())):
                    for edge in indexes.relation_edges.get(key, ()):
                        if edge.confidence < settings.expand_min_confidence:
                            continue
                        edges_seen += 1
                        score = expansion_score(parent_score, settings.expand_discount, edge.confidence)
                        for chunk_id in edge.chunk_ids:
                            current = best.get(chunk_id)
                            if current is not None and current[1] >= score:
                                continue
                            best[chunk_id] = (chunk_id, score, {
                                "via": "expansion", "parent": parent, "edge": _edge_json(graph, edge)})
            ranked = sort_ranked(list(best.values()))[:k]
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = {
            "direct_hits": sum(1 for h in hits if h.why["via"] == "direct"),
            "expanded_hits": sum(1 for h in hits if h.why["via"] == "expansion"),
            "edges_followed": edges_seen,
            "seconds": timer.total(),
        }
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=self.name, hits=hits, stats=stats,
                               reason="" if hits else f"no chunk reaches min_vector_score={settings.min_vector_score}")
