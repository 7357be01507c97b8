"""GraphRAG as seed 003 describes it, beside :mod:`~workbench.retrieve.graphrag` to compare.

1. **Seeds.** The entities whose name embedding is at least ``seed_similarity_threshold``
   similar to the query (``max_seeds x vector_overfetch_multiplier`` candidates fetched, the
   best ``max_seeds`` kept), each weighted by its similarity. No names matched in the
   question, no passage seeds.
2. **Walk.** Personalized PageRank (damping ``ppr_damping``) over the entities alone
   (:meth:`~workbench.context_graph.graph.ContextGraph.entity_pagerank_index`): relation, co-mention and
   synonym edges. It stops when no score moves by 1e-6 or after 100 iterations, keeping its
   scores.
3. **Context.** The ``ppr_top_k`` entities with the most mass, their cited triples (at most
   ``max_triples``) and their provenance chunks (those stating relations among them first).
4. **Fusion.** The provenance chunks and the vector chunks fused by Reciprocal Rank Fusion
   (``retrieval.rrf_k``, 60). Nothing is pinned above the fusion.

The three modes of the seed, always said with their reason: ``full_graphrag``;
``vector_only`` (hybrid search, no graph context) when no entity name reaches the threshold
or the entity graph has more than ``max_graph_nodes`` nodes; ``keyword_only`` when the
embedding model or the vector store is unavailable.

Examples
--------
>>> seed_weights([("redis", 0.62), ("token cache", 0.31)])
{'redis': 0.62, 'token cache': 0.31}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from ..model import ContextNode, GraphContext, RetrievalResult, RetrievalStats, Seed, Why
from ..vectors import VectorStoreUnavailable
from .base import Ranked, make_hits
from .cache import indexes_for
from .fusion import rrf
from .graphrag import (PPR_MAX_ITERATIONS, PPR_TOLERANCE, GraphRAGRetriever, find_seeds, graph_triples,
                       rank_provenance, top_entities)
from .hybrid import OVERFETCH
from .vector import vector_ranking

if TYPE_CHECKING:
    from ..workspace_view import WorkspaceView

__all__ = ["GraphRAGSeedRetriever", "seed_weights"]


def seed_weights(seeds: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Entity key -> restart weight: its name's similarity to the query (negative ones dropped)."""
    return {key: float(similarity) for key, similarity in seeds if similarity > 0}


class GraphRAGSeedRetriever(GraphRAGRetriever):
    """Seed 003's GraphRAG: name-embedding seeds, PageRank over entities, provenance and vector
    chunks fused by RRF. Its fallbacks are graphrag's."""

    name = "graphrag-seed"
    description = ("seed 003 as written: entity-name embedding seeds weighted by similarity, Personalized PageRank "
                   "over entities, the top entities' provenance chunks and vector chunks fused by RRF")

    def walk_size(self, graph) -> tuple[int, str]:
        """The walk runs over entities alone."""
        return len(graph), "entities"

    def retrieve(self, ws: WorkspaceView, query: str, k: int) -> RetrievalResult:
        opened = self._opening(ws, query, k)
        if isinstance(opened, RetrievalResult):
            return opened
        timer, vector = opened
        refused = self._refused_walk(ws, query, vector, k, timer)
        if refused is not None:
            return refused
        settings = ws.settings.graphrag
        graph = ws.graph
        nodes = len(graph)
        try:
            with timer("seeds"):
                similar, best_similarity, best_key = find_seeds(ws, vector)
            with timer("vector"):
                vectors = vector_ranking(ws, vector, k * OVERFETCH)
        except VectorStoreUnavailable as exc:
            return self._keyword_only(ws, query, k, timer, f"vector store unavailable: {exc}")
        weights = seed_weights(similar)
        if not weights:
            best = ("no entity vectors" if best_key is None
                    else f"best: {graph.name(best_key)!r} at {best_similarity:.3f}")
            return self._vector_only(ws, query, vector, k, timer,
                                     f"no entity name reached seed_similarity_threshold="
                                     f"{settings.seed_similarity_threshold} ({best})")
        seed_list = [Seed(graph.name(key), key, "similar", similarity=round(sim, 6)) for key, sim in similar]
        with timer("ppr"):
            index = graph.entity_pagerank_index()
            p = np.zeros(len(index))
            for key, weight in weights.items():
                p[index.index[key]] = weight
            scores, iterations, converged = index.walk(p, settings.ppr_damping, PPR_TOLERANCE, PPR_MAX_ITERATIONS)
            top = top_entities(cast("list[str]", index.nodelist), scores, settings.ppr_top_k)  # entity keys only
        with timer("context"):
            graph_context = GraphContext(
                seeds=seed_list,
                nodes=[ContextNode(graph.name(key), key=key, type=graph.entity(key).type, ppr=round(m, 6))
                       for key, m in top],
                triples=graph_triples(ws, top, settings.max_triples))
        with timer("provenance"):
            indexes = indexes_for(ws)
            provenance = rank_provenance(ws.graph.passages.entities_of, dict(top), indexes.entity_chunks,
                                         indexes.relation_edges, limit=k * OVERFETCH)
        with timer("fuse"):
            ranks = {"provenance": {cid: r for r, (cid, _, _) in enumerate(provenance, 1)},
                     "vector": {cid: r for r, (cid, _, _) in enumerate(vectors, 1)}}
            fused = sorted(rrf([list(ranks["provenance"]), list(ranks["vector"])], k=ws.settings.retrieval.rrf_k),
                           key=lambda item: (-item[1], item[0]))
            similarity = {cid: sim for cid, sim, _ in vectors}
            provenance_of = {cid: (m, keys) for cid, m, keys in provenance}
            ranked: list[Ranked] = []
            for cid, score in fused[:k]:
                why = Why(rrf=round(score, 6), ranks={name: ranks[name].get(cid) for name in ("provenance", "vector")},
                          similarity=round(similarity[cid], 6) if cid in similarity else None)
                if cid in provenance_of:
                    mass, keys = provenance_of[cid]
                    why.ppr_mass, why.entities = mass, [graph.name(key) for key in keys]
                ranked.append((cid, score, why))
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = RetrievalStats(
            seconds=timer.total(), seeds=seed_list, top_entities=len(top), walk_nodes=nodes,
            ppr_iterations=iterations, ppr_converged=converged,
            provenance_hits=sum(1 for h in hits if h.why.ranks.get("provenance") is not None),
            vector_hits=sum(1 for h in hits if h.why.ranks.get("vector") is not None))
        reason = (f"{len(weights)} entity names reached seed_similarity_threshold="
                  f"{settings.seed_similarity_threshold}; PageRank over {nodes} entities")
        if not converged:
            reason += f"; PageRank stopped after {iterations} iterations, scores kept"
        return RetrievalResult(query=query, mode_requested=self.name, mode_used="full_graphrag", hits=hits,
                               stats=stats, graph_context=graph_context, reason=reason)
