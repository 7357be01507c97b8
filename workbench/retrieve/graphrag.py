"""GraphRAG: seed entities by name similarity, Personalized PageRank, cited graph context.

1. Embed the query and find seed entities in the entity-name collection: fetch
   ``max_seeds x vector_overfetch_multiplier`` candidates, keep those with similarity >=
   ``seed_similarity_threshold``, the best ``max_seeds``.
2. Personalized PageRank over the context graph (damping ``ppr_damping``, tol 1e-6, at most
   100 iterations), personalization = the seeds' similarities.
3. The ``ppr_top_k`` entities with the most mass give the graph context (their relation
   triples, at most ``max_triples``, each with its chunks) and the provenance chunks: first
   the chunks that state relations among them (by the mass of the edges' ends), then the
   chunks that mention them (by the summed mass of the top entities they mention).
4. Provenance and hybrid rankings are fused by RRF (k=60).

The mode used is reported: ``full_graphrag``; ``vector_only`` when no seed passes the
threshold or the graph has more than ``max_graph_nodes`` nodes; ``keyword_only`` when
embeddings (or the vector store) are unavailable.

Examples
--------
>>> rank_provenance({"c1": {"a", "b"}, "c2": {"b"}, "c3": {"z"}}, {"a": 0.5, "b": 0.3})
[('c1', 0.8, ['a', 'b']), ('c2', 0.3, ['b'])]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import numpy as np

from ..embedding import EmbeddingUnavailable
from ..model import RetrievalResult
from ..ppr import PageRankNotConverged
from ..vectors import ENTITIES, VectorStoreUnavailable
from .base import Ranked, StageTimer, empty_result, is_empty_query, make_hits
from .cache import indexes_for
from .fusion import rrf
from .hybrid import OVERFETCH, hybrid_ranking
from .keyword import keyword_ranking
from .vector import embed_query, vector_query, vector_ranking

__all__ = ["GraphRAGRetriever", "PPR_TOLERANCE", "PPR_MAX_ITERATIONS", "FUSION_K", "find_seeds",
           "seed_pagerank", "top_entities", "rank_provenance"]

PPR_TOLERANCE = 1e-6
PPR_MAX_ITERATIONS = 100
#: RRF constant fusing provenance with hybrid chunks.
FUSION_K = 60


def find_seeds(ws, vector: np.ndarray) -> tuple[list[tuple[str, float]], float | None, str | None]:
    """Seed entities for a query vector: ``([(key, similarity)], best similarity, best key)``.

    Candidates not in the graph (a stale vector) are skipped. Ties go by key.
    """
    settings = ws.settings.graphrag
    wanted = settings.max_seeds * settings.vector_overfetch_multiplier
    graph = ws.graph
    candidates = sorted(((m.id, m.similarity) for m in vector_query(ws, ENTITIES, vector, wanted) if m.id in graph),
                        key=lambda pair: (-pair[1], pair[0]))
    best_similarity = candidates[0][1] if candidates else None
    best_key = candidates[0][0] if candidates else None
    seeds = [(key, sim) for key, sim in candidates if sim >= settings.seed_similarity_threshold]
    return seeds[: settings.max_seeds], best_similarity, best_key


def seed_pagerank(ws, seeds: Mapping[str, float]) -> np.ndarray:
    """PPR scores in ``ws.graph.pagerank_index().nodelist`` order, personalized by ``seeds``."""
    index = ws.graph.pagerank_index()
    return index.run_vector(index.vector(seeds), alpha=ws.settings.graphrag.ppr_damping,
                            tol=PPR_TOLERANCE, max_iter=PPR_MAX_ITERATIONS)


def top_entities(nodelist: list[str], scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The ``k`` nodes with the most mass, best first; equal mass by key.

    >>> top_entities(["b", "a", "c"], np.array([0.2, 0.2, 0.6]), 2)
    [('c', 0.6), ('a', 0.2)]
    """
    if len(nodelist) == 0:
        return []
    keys = np.array(nodelist, dtype=object)
    if k < len(nodelist):
        # argpartition keeps the hot path linear; the boundary ties are settled below.
        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
        chosen = np.flatnonzero(scores >= cut)
    else:
        chosen = np.arange(len(nodelist))
    chosen = chosen[scores[chosen] > 0]
    ordered = sorted(((str(keys[i]), float(scores[i])) for i in chosen), key=lambda p: (-p[1], p[0]))
    return ordered[:k]


def rank_provenance(chunk_entities: Mapping[str, Iterable[str]], mass: Mapping[str, float],
                    entity_chunks: Mapping[str, Iterable[str]] | None = None,
                    relation_edges: Mapping[str, Iterable] | None = None) -> list[tuple[str, float, list[str]]]:
    """Provenance chunks of the top entities: those stating their relations first, then mentions.

    A chunk that *states* a relation between two top entities (an edge's provenance) is ranked
    by the summed mass of the ends of the edges it states; it comes before chunks that only
    *mention* top entities, which are ranked by the summed mass of the entities they mention
    (a passing mention of a central entity says less than a statement linking two of them).
    Returns ``(chunk id, mass, sorted entity keys)``, best first, equal mass by chunk id, where
    mass is the statement mass plus the mention mass. ``entity_chunks`` (entity -> chunks)
    avoids a scan of every chunk when given; ``relation_edges`` (entity -> edges) enables
    statement ranking.
    """
    if entity_chunks is not None:
        found: dict[str, set[str]] = defaultdict(set)
        for key in mass:
            for chunk_id in entity_chunks.get(key, ()):
                found[chunk_id].add(key)
    else:
        found = {chunk_id: set(keys) & mass.keys() for chunk_id, keys in chunk_entities.items()}
    stated: dict[str, float] = defaultdict(float)
    seen_edges = set()
    for key in mass if relation_edges is not None else ():
        for edge in relation_edges.get(key, ()):
            ends = (edge.source, edge.relation, edge.target)
            if ends in seen_edges or edge.source not in mass or edge.target not in mass:
                continue
            seen_edges.add(ends)
            for chunk_id in edge.chunk_ids:
                stated[chunk_id] += mass[edge.source] + mass[edge.target]
                found.setdefault(chunk_id, set()).update((edge.source, edge.target))
    ranked = [(chunk_id, round(stated.get(chunk_id, 0.0), 12), round(sum(mass[k] for k in keys), 12), sorted(keys))
              for chunk_id, keys in found.items() if keys]
    ranked.sort(key=lambda item: (-item[1], -item[2], item[0]))
    return [(chunk_id, round(s + m, 12), keys) for chunk_id, s, m, keys in ranked]


def _triples(ws, top: list[tuple[str, float]], limit: int) -> list[dict]:
    """Relation edges among the top entities, then those around them, by the mass of their ends."""
    graph = ws.graph
    mass = dict(top)
    edges = {}
    for key in mass:
        for edge in indexes_for(ws).relation_edges.get(key, ()):
            edges[(edge.source, edge.relation, edge.target)] = edge
    ranked = sorted(edges.values(), key=lambda e: (
        not (e.source in mass and e.target in mass), -(mass.get(e.source, 0) + mass.get(e.target, 0)),
        e.source, e.relation, e.target))
    return [{"source": graph.name(e.source), "relation": e.relation, "target": graph.name(e.target),
             "confidence": e.confidence, "weight": e.weight, "chunks": list(e.chunk_ids),
             "documents": list(e.documents)} for e in ranked[:limit]]


class GraphRAGRetriever:
    """Seeds by entity-name similarity, Personalized PageRank, provenance chunks fused with hybrid."""

    name = "graphrag"
    description = ("entity seeds by name similarity, Personalized PageRank, the top entities' cited triples and "
                   "provenance chunks fused with hybrid chunks by RRF")

    def retrieve(self, ws, query: str, k: int) -> RetrievalResult:
        if is_empty_query(query):
            return empty_result(query, self.name)
        timer = StageTimer()
        settings = ws.settings.graphrag
        try:
            with timer("embed"):
                vector = embed_query(ws, query)
        except EmbeddingUnavailable as exc:
            return self._keyword_only(ws, query, k, timer, f"embeddings unavailable: {exc}")
        nodes = len(ws.graph)
        if nodes > settings.max_graph_nodes:
            return self._vector_only(ws, query, vector, k, timer, {"seeds": []},
                                     f"the graph has {nodes} nodes, more than max_graph_nodes={settings.max_graph_nodes}")
        try:
            with timer("seeds"):
                seeds, best_similarity, best_key = find_seeds(ws, vector)
        except VectorStoreUnavailable as exc:
            return self._keyword_only(ws, query, k, timer, f"vector store unavailable: {exc}")
        seed_stats = [{"entity": ws.graph.name(key), "key": key, "similarity": round(sim, 6)} for key, sim in seeds]
        if not seeds:
            best = ("no entity vectors" if best_key is None
                    else f"best: {ws.graph.name(best_key)!r} at {best_similarity:.3f}")
            return self._vector_only(ws, query, vector, k, timer, {"seeds": []},
                                     f"no seed entity reached seed_similarity_threshold="
                                     f"{settings.seed_similarity_threshold} ({best})")
        try:
            with timer("ppr"):
                index = ws.graph.pagerank_index()
                scores = seed_pagerank(ws, dict(seeds))
                top = top_entities(index.nodelist, scores, settings.ppr_top_k)
        except PageRankNotConverged as exc:
            return self._vector_only(ws, query, vector, k, timer, {"seeds": seed_stats}, str(exc))
        graph = ws.graph
        with timer("context"):
            graph_context = {
                "seeds": seed_stats,
                "nodes": [{"key": key, "name": graph.name(key), "type": graph.entity(key).type, "ppr": round(m, 6)}
                          for key, m in top],
                "triples": _triples(ws, top, settings.max_triples),
            }
        with timer("provenance"):
            mass = dict(top)
            indexes = indexes_for(ws)
            provenance = rank_provenance(ws.parts.chunk_entities, mass, indexes.entity_chunks, indexes.relation_edges)
            provenance = provenance[: k * OVERFETCH]
        with timer("hybrid"):
            try:
                hybrid = hybrid_ranking(ws, query, vector, k * OVERFETCH)
            except VectorStoreUnavailable:
                hybrid = hybrid_ranking(ws, query, None, k * OVERFETCH)
        with timer("fuse"):
            provenance_rank = {chunk_id: r for r, (chunk_id, _, _) in enumerate(provenance, 1)}
            provenance_of = {chunk_id: (m, keys) for chunk_id, m, keys in provenance}
            hybrid_rank = {chunk_id: r for r, (chunk_id, _, _) in enumerate(hybrid, 1)}
            fused = sorted(rrf([list(provenance_rank), list(hybrid_rank)], k=FUSION_K), key=lambda p: (-p[1], p[0]))
            ranked: list[Ranked] = []
            for chunk_id, score in fused[:k]:
                why: dict = {"rrf": round(score, 6), "provenance_rank": provenance_rank.get(chunk_id),
                             "hybrid_rank": hybrid_rank.get(chunk_id)}
                if chunk_id in provenance_of:
                    m, keys = provenance_of[chunk_id]
                    why["ppr_mass"] = m
                    why["entities"] = [graph.name(key) for key in keys]
                ranked.append((chunk_id, score, why))
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = {
            "seeds": [{"entity": s["entity"], "similarity": s["similarity"]} for s in seed_stats],
            "entities_explored": len(top),
            "graph_nodes": nodes,
            "provenance_hits": sum(1 for h in hits if h.why.get("provenance_rank") is not None),
            "vector_hits": sum(1 for h in hits if h.why.get("hybrid_rank") is not None),
            "seconds": timer.total(),
        }
        reason = f"{len(seeds)} seed entities passed seed_similarity_threshold={settings.seed_similarity_threshold}"
        return RetrievalResult(query=query, mode_requested=self.name, mode_used="full_graphrag", hits=hits,
                               stats=stats, graph_context=graph_context, reason=reason)

    def _vector_only(self, ws, query, vector, k, timer: StageTimer, graph_context: dict, reason: str) -> RetrievalResult:
        try:
            with timer("vector"):
                ranked = vector_ranking(ws, vector, k)
        except VectorStoreUnavailable as exc:
            return self._keyword_only(ws, query, k, timer, f"vector store unavailable: {exc}")
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = {"seeds": graph_context.get("seeds", []), "entities_explored": 0, "provenance_hits": 0,
                 "vector_hits": len(hits), "seconds": timer.total()}
        return RetrievalResult(query=query, mode_requested=self.name, mode_used="vector_only", hits=hits,
                               stats=stats, graph_context=graph_context, reason=reason)

    def _keyword_only(self, ws, query, k, timer: StageTimer, reason: str) -> RetrievalResult:
        with timer("keyword"):
            ranked = keyword_ranking(ws, query, k)
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = {"seeds": [], "entities_explored": 0, "provenance_hits": 0, "vector_hits": 0,
                 "keyword_hits": len(hits), "seconds": timer.total()}
        return RetrievalResult(query=query, mode_requested=self.name, mode_used="keyword_only", hits=hits,
                               stats=stats, graph_context={}, reason=reason)
