"""Co-mention expansion: documents found by vector search, then the documents of the entities
named beside theirs.

The co-mention design's own retrieval pattern:

1. vector search finds documents (best chunk per document, ``k`` of them);
2. the entities those chunks name are taken (common names aside);
3. the graph is walked ``retrieval.comention_hops`` hops (1 or 2) along co-mention and relation
   edges, the strongest ``retrieval.comention_fanout`` edges of each entity first;
4. for every entity reached, the chunk outside the direct documents that names it most
   specifically (fewest other entities) is fetched, scored ``parent x expand_discount^hops``;
5. direct hits first, then up to ``k`` added ones, each saying which entity and edge brought it.

Examples
--------
>>> round(comention_score(0.8, 0.7, 2), 6)
0.392
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import Edge, RetrievalResult, RetrievalStats, Why
from .base import Capabilities, Ranked, SearchSkeleton, StageTimer, make_hits, sort_ranked
from .cache import indexes_for
from .vector import direct_by_document

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["ComentionRetriever", "comention_score"]


def comention_score(parent: float, discount: float, hops: int) -> float:
    """The score of a chunk reached ``hops`` edges away from a hit scoring ``parent``."""
    return round(parent * discount ** hops, 12)


class ComentionRetriever(SearchSkeleton):
    """Vector hits, then the chunks of the entities co-mentioned (or related) with theirs."""

    name = "comention"
    description = ("vector hits, then the documents of the entities named beside theirs: a 1-2 hop walk over "
                   "co-mention and relation edges, each added hit with the entity and edge that brought it")
    # k direct hits and up to k more after them
    capabilities = Capabilities(vectors=True, embedder=True, graph=True, max_hits_per_k=2)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        settings = ws.settings.retrieval
        direct = direct_by_document(ws, query, k, timer)
        with timer("walk"):
            indexes = indexes_for(ws)
            documents = indexes.chunk_documents
            direct_documents = {documents.get(chunk_id) for chunk_id, _, _ in direct}
            graph = ws.graph
            layer = graph.passages
            links = indexes.entity_links
            added: dict[str, Ranked] = {}
            reached_entities = 0
            for parent, parent_score, _ in direct:
                start = sorted(k2 for k2 in layer.entities_of.get(parent, ()) if k2 not in layer.common and k2 in links)
                seen = set(start)
                frontier = list(start)
                for hop in range(1, settings.comention_hops + 1):
                    following: list[tuple[str, Edge]] = []
                    for key in frontier:
                        for other, edge in links.get(key, ())[: settings.comention_fanout]:
                            if other in seen:
                                continue
                            seen.add(other)
                            following.append((other, edge))
                    reached_entities += len(following)
                    score = comention_score(parent_score, settings.expand_discount, hop)
                    for other, edge in following:
                        holders = [c for c in layer.chunks_of.get(other, ()) if documents.get(c) not in direct_documents]
                        if not holders:
                            continue
                        best = min(holders, key=lambda c: (len(layer.entities_of.get(c, ())), c))
                        current = added.get(best)
                        if current is None or current[1] < score:
                            added[best] = (best, score, Why(via="comention", parent=parent, reached=graph.name(other),
                                                            hops=hop, edge=graph.cited_hop(edge)))
                    frontier = [other for other, _ in following]
            more = sort_ranked(list(added.values()))[:k]
            ranked = [(chunk_id, score, Why(via="direct", similarity=why.similarity))
                      for chunk_id, score, why in direct] + more
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = RetrievalStats(seconds=timer.total(), direct_hits=sum(1 for h in hits if h.why.via == "direct"),
                               comention_hits=sum(1 for h in hits if h.why.via == "comention"),
                               entities_reached=reached_entities, hops=settings.comention_hops)
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=self.name, hits=hits, stats=stats,
                               reason="" if hits else f"no chunk reaches min_vector_score={settings.min_vector_score}")
