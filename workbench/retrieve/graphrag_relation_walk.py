"""GraphRAG as seed 003 describes it, beside :mod:`~workbench.retrieve.graphrag` to compare.

1. **Seeds.** The entities whose name embedding is at least ``seed_similarity_threshold``
   similar to the query (``max_seeds x seed_candidates_per_seed`` candidates fetched, the
   best ``max_seeds`` kept), each weighted by its similarity. No names matched in the
   question, no passage seeds.
2. **Walk.** Personalized PageRank (damping ``ppr_damping``) by power iteration over the
   entity graph's directed relation edges
   (:meth:`~workbench.context_graph.graph.ContextGraph.entity_pagerank_index`): each entity's
   score is the restart share of its seed weight plus the damped sum, over the edges into it, of
   the score of the edge's source divided by that source's out-degree (its outgoing relation
   edges); a source with no outgoing edge hands its score back to the seeds. Co-mention and
   synonym edges are not walked, nor edge weights. It stops when no score moves by
   :data:`SEED_PPR_TOLERANCE` (1e-6) or after :data:`SEED_PPR_MAX_ITERATIONS` iterations,
   keeping its scores.
3. **Context.** The ``ppr_top_k`` entities with the most mass, their cited triples (at most
   ``max_triples``) and their provenance chunks (those stating relations among them first).
4. **Fusion.** The provenance chunks and the standard hybrid search's chunks
   (:func:`~workbench.retrieve.hybrid.hybrid_ranking`: keyword and vector fused) fused by
   Reciprocal Rank Fusion (``retrieval.rrf_k``, 60). Nothing is pinned above the fusion.

The three modes of the seed, always said with their reason: ``full_graphrag``;
``vector_only`` (hybrid search, no graph context) when no entity name reaches the threshold
or the entity graph has more than ``graphrag.seed_max_graph_nodes`` (the seed's 50,000)
entities; ``keyword_only`` when the embedding model or the vector store is unavailable.

Examples
--------
>>> seed_weights([("redis", 0.62), ("token cache", 0.31)])
{'redis': 0.62, 'token cache': 0.31}
>>> SEED_PPR_TOLERANCE, SEED_PPR_MAX_ITERATIONS
(1e-06, 100)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from ..model import ContextNode, GraphContext, RetrievalResult, RetrievalStats, Seed, Why
from .base import KEYWORD_ONLY, Capabilities, Ranked, StageTimer, make_hits
from .cache import indexes_for
from .fusion import rrf
from .graphrag import find_seeds, graph_triples, rank_provenance, top_entities
from .hybrid import FUSION_DEPTH, hybrid_ranking
from .fallbacks import KeywordFallback, opening, vector_only

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["GraphRAGSeedRetriever", "seed_weights", "SEED_PPR_TOLERANCE", "SEED_PPR_MAX_ITERATIONS"]

#: The seed's stop rule: the walk stops when no score moves by this much in one iteration...
SEED_PPR_TOLERANCE = 1e-6
#: ...or after this many iterations, keeping its scores.
SEED_PPR_MAX_ITERATIONS = 100


def seed_weights(seeds: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Entity key -> restart weight: its name's similarity to the query (negative ones dropped)."""
    return {key: float(similarity) for key, similarity in seeds if similarity > 0}


class GraphRAGSeedRetriever(KeywordFallback):
    """Seed 003's GraphRAG: name-embedding seeds, PageRank over the entities' directed relation
    edges, provenance and hybrid chunks fused by RRF."""

    name = "graphrag-seed"
    description = ("seed 003 as written: entity-name embedding seeds weighted by similarity, Personalized PageRank "
                   "by power iteration over the entities' directed relation edges, the top entities' provenance "
                   "chunks and the hybrid search's chunks fused by RRF")
    capabilities = Capabilities(vectors=True, embedder=True, graph=True, keyword_index=True, fallback=KEYWORD_ONLY)

    def walk_size(self, graph) -> tuple[int, str]:
        """The walk runs over entities alone."""
        return len(graph), "entities"

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        vector = opening(ws, query, timer)
        settings = ws.settings.graphrag
        graph = ws.graph
        nodes, what = self.walk_size(graph)
        if nodes > settings.seed_max_graph_nodes:
            return vector_only(ws, self.name, query, vector, k, timer,
                                     f"the walk would run over {nodes} nodes ({what}), more than "
                                     f"seed_max_graph_nodes={settings.seed_max_graph_nodes}")
        with timer("seeds"):
            similar, best_similarity, best_key = find_seeds(ws, vector)
        with timer("hybrid"):
            hybrid = hybrid_ranking(ws, query, vector, k * FUSION_DEPTH)
        weights = seed_weights(similar)
        if not weights:
            best = ("no entity vectors" if best_key is None
                    else f"best: {graph.name(best_key)!r} at {best_similarity:.3f}")
            return vector_only(ws, self.name, query, vector, k, timer,
                                     f"no entity name reached seed_similarity_threshold="
                                     f"{settings.seed_similarity_threshold} ({best})")
        seed_list = [Seed(graph.name(key), key, "similar", similarity=round(sim, 6)) for key, sim in similar]
        with timer("ppr"):
            index = graph.entity_pagerank_index()
            p = np.zeros(len(index))
            for key, weight in weights.items():
                p[index.index[key]] = weight
            scores, iterations, converged = index.walk(p, settings.ppr_damping, SEED_PPR_TOLERANCE,
                                                       SEED_PPR_MAX_ITERATIONS)
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
                                         indexes.relation_edges, limit=k * FUSION_DEPTH)
        with timer("fuse"):
            ranks = {"provenance": {cid: r for r, (cid, _, _) in enumerate(provenance, 1)},
                     "hybrid": {cid: r for r, (cid, _, _) in enumerate(hybrid, 1)}}
            fused = sorted(rrf([list(ranks["provenance"]), list(ranks["hybrid"])], rrf_k=ws.settings.retrieval.rrf_k),
                           key=lambda item: (-item[1], item[0]))
            similarity = {cid: why.similarity for cid, _, why in hybrid if why.similarity is not None}
            provenance_of = {cid: (m, keys) for cid, m, keys in provenance}
            ranked: list[Ranked] = []
            for cid, score in fused[:k]:
                why = Why(rrf=round(score, 6), ranks={name: ranks[name].get(cid) for name in ("provenance", "hybrid")},
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
            hybrid_hits=sum(1 for h in hits if h.why.ranks.get("hybrid") is not None))
        reason = (f"{len(weights)} entity names reached seed_similarity_threshold="
                  f"{settings.seed_similarity_threshold}; PageRank over the relation edges of {nodes} entities")
        if not converged:
            reason += f"; PageRank stopped after {iterations} iterations, scores kept"
        return RetrievalResult(query=query, mode_requested=self.name, mode_used="full_graphrag", hits=hits,
                               stats=stats, graph_context=graph_context, reason=reason)
