"""GraphRAG over the one context graph: seeds, Personalized PageRank, cited context, fusion.

1. **Seeds.** The entities the query *names*, whole (the graph's name lookup) or in part ("the
   Stanford gene therapy trial": :mod:`~workbench.retrieve.partial_names`), each weighted by its
   specificity, 1 / the passages that mention it, and the entities whose name embedding is most
   similar to the query (``max_seeds x seed_candidates_per_seed`` candidates, those at
   ``seed_similarity_threshold`` or above, the best ``max_seeds``; weighted specificity x
   similarity x ``similar_seed_weight``) share ``entity_seed_share`` of the restart mass; the
   ``dense_seeds`` passages most similar to the query share the rest.
2. **Walk.** Personalized PageRank (damping ``ppr_damping``) over the whole graph: entities,
   relation, co-mention and synonym edges, and passages linked to the entities they mention
   and to the passages whose titles they name. It stops when no score moves by
   :data:`PPR_TOLERANCE` (1e-5) or after 100 iterations, and keeps its scores either way. Only
   the mass the walk *adds* is kept for passages (the restart share would only echo the dense
   seeds).
3. **Context.** The ``ppr_top_k`` entities with the most mass give the graph context: their
   cited triples (at most ``max_triples``) and their provenance chunks, those that state
   relations among them first.
4. **Fusion.** Passages ranked by ``dense similarity + graph_weight x walk mass / best mass``,
   the provenance chunks and the hybrid ranking are fused by Reciprocal Rank Fusion
   (``retrieval.rrf_k``).
5. **Chain.** The passages the question starts at (the first ``chain_starts`` of the fusion
   titled by a name it writes) are followed by the passages whose titles they name that best
   answer what the question asks beside its names (:mod:`~workbench.retrieve.bridges`,
   ``bridges_per_start`` each): the second hop of a two-hop question.
6. **Structure.** When the question has a structural reading
   (:mod:`~workbench.retrieve.questions`: what breaks if X fails, who owns X...), one chunk per
   hop of its cited paths, longest path first, leads the hits (at most half of them), each
   saying which hop it states; the cited paths join the graph context.

The mode used is reported: ``full_graphrag``; ``vector_only`` (hybrid search, no graph
context) when no seed entity is found or the walk's graph has more than ``max_graph_nodes``
nodes (entities and passages); ``keyword_only`` when embeddings or the vector store are
unavailable.

Examples
--------
>>> rank_provenance({"c1": {"a", "b"}, "c2": {"b"}, "c3": {"z"}}, {"a": 0.5, "b": 0.3})
[('c1', 0.8, ['a', 'b']), ('c2', 0.3, ['b'])]
>>> walk_ranking({"a": 0.2, "c": 0.4}, {"a": 0.9, "b": 0.5}, graph_weight=1.0)
[('a', 1.4), ('c', 1.0), ('b', 0.5)]
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from ..context_graph.passage_links import ChunksOf
from ..model import (ContextNode, GraphContext, GraphPath, Hop, PassageMass, PathStep, RetrievalResult, RetrievalStats,
                     Seed, Why)
from ..vectors.index import CHUNKS, VectorStoreUnavailable
from .base import KEYWORD_ONLY, Capabilities, Ranked, StageTimer, make_hits
from .bridges import asked_beside_names, chain_order, chain_starts
from .partial_names import partial_name_seeds
from .cache import indexes_for
from .fusion import rrf
from .hybrid import FUSION_DEPTH, hybrid_ranking
from .fallbacks import KeywordFallback, opening, vector_only
from .questions import read_question
from .vector import embed_query, entity_query, vector_ranking

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["GraphRAGRetriever", "PPR_TOLERANCE", "PPR_MAX_ITERATIONS", "Seeds", "find_seeds", "name_seeds",
           "personalization", "top_entities", "rank_provenance", "walk_ranking", "path_chunks", "too_large",
           "graph_triples"]

#: The walk stops when no score moves by this much in one iteration (seed 003 says 1e-6, which
#: graphrag-seed keeps; this one gives the same top 10 in fewer iterations)...
PPR_TOLERANCE = 1e-5
#: ...or after this many iterations, keeping its scores.
PPR_MAX_ITERATIONS = 100


@dataclass
class Seeds:
    """Where the walk restarts: entities named or evoked by the query, and similar passages."""

    named: dict[str, float]
    """Entity key -> specificity, for the entities the query names."""
    similar: dict[str, float]
    """Entity key -> name-embedding similarity, for the entity-name seeds."""
    passages: dict[str, float]
    """Chunk id -> similarity, for the dense passage seeds."""

    def entity_weights(self, specificity, similar_weight: float = 1.0) -> dict[str, float]:
        """Entity key -> restart weight: its specificity; for an entity the query only evokes,
        its specificity x its similarity x ``similar_weight``."""
        weights = {key: s for key, s in self.named.items()}
        for key, similarity in self.similar.items():
            evoked = similar_weight * specificity(key) * max(similarity, 0.0)
            weights[key] = max(weights.get(key, 0.0), evoked)
        return {key: w for key, w in weights.items() if w > 0}


def too_large(nodes: int, what: str, limit: int) -> str:
    """The reason given when the walk's graph is over ``max_graph_nodes``.

    >>> too_large(12, "entities", 10)
    'the walk would run over 12 nodes (entities), more than max_graph_nodes=10'
    """
    return f"the walk would run over {nodes} nodes ({what}), more than max_graph_nodes={limit}"


def find_seeds(ws: WorkspaceView, vector: np.ndarray) -> tuple[list[tuple[str, float]], float | None, str | None]:
    """Entity-name seeds for a query vector: ``([(key, similarity)], best similarity, best key)``.

    Candidates not in the graph (a stale vector) are skipped. Ties go by key.
    """
    settings = ws.settings.graphrag
    wanted = settings.max_seeds * settings.seed_candidates_per_seed
    graph = ws.graph
    candidates = sorted(((m.id, m.similarity) for m in entity_query(ws, vector, wanted) if m.id in graph),
                        key=lambda pair: (-pair[1], pair[0]))
    best_similarity = candidates[0][1] if candidates else None
    best_key = candidates[0][0] if candidates else None
    seeds = [(key, sim) for key, sim in candidates if sim >= settings.seed_similarity_threshold]
    return seeds[: settings.max_seeds], best_similarity, best_key


def name_seeds(graph, query: str) -> dict[str, float]:
    """Entities the query names (capitalised, as the text writes them) -> their specificity."""
    layer = graph.passages
    return {key: layer.specificity(key) or 1.0 for key in layer.matcher.find(query) if key in graph}


def personalization(graph, seeds: Seeds, entity_share: float, similar_weight: float = 1.0) -> np.ndarray:
    """The restart vector in :meth:`~workbench.context_graph.graph.ContextGraph.pagerank_index` order.

    ``entity_share`` of the mass goes to the entity seeds by weight, the rest to the passage
    seeds by similarity; a side with no seed leaves its share to the other.
    """
    index = graph.pagerank_index()
    p = np.zeros(len(index))
    entity = seeds.entity_weights(graph.passages.specificity, similar_weight)
    passages = {("p", cid): max(s, 0.0) for cid, s in seeds.passages.items() if ("p", cid) in index.index}
    for share, weights in ((entity_share, entity), (1.0 - entity_share, passages)):
        total = sum(weights.values())
        if total > 0:
            for node, w in weights.items():
                p[index.index[node]] += share * w / total
    return p


def top_entities(nodelist: list[str], scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The ``k`` nodes with the most mass, best first; equal mass by key.

    >>> top_entities(["b", "a", "c"], np.array([0.2, 0.2, 0.6]), 2)
    [('c', 0.6), ('a', 0.2)]
    """
    if len(nodelist) == 0:
        return []
    if k < len(nodelist):
        # argpartition keeps the hot path linear; the boundary ties are settled below.
        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
        chosen = np.flatnonzero(scores >= cut)
    else:
        chosen = np.arange(len(nodelist))
    chosen = chosen[scores[chosen] > 0]
    ordered = sorted(((str(nodelist[i]), float(scores[i])) for i in chosen), key=lambda p: (-p[1], p[0]))
    return ordered[:k]


def top_positions(values: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` largest values, largest first, equal values by position: the first
    ``n`` of a stable descending argsort, found in linear time (every passage is scored per query).

    >>> top_positions(np.array([0.1, 0.5, 0.3, 0.5, 0.3]), 3).tolist()
    [1, 3, 2]
    """
    if n >= len(values):
        return np.argsort(-values, kind="stable")
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    cut = np.partition(values, len(values) - n)[len(values) - n]
    above = np.flatnonzero(values > cut)
    chosen = np.concatenate([above, np.flatnonzero(values == cut)[:n - len(above)]])
    return chosen[np.argsort(-values[chosen], kind="stable")]


#: Less than a mass can move between two chunks when rounded to 12 places, more than the sums differ
#: in by the order of their additions.
_ROUNDING_MARGIN = 1e-9


def _mention_masses(chunk_entities: Mapping[str, Iterable[str]], mass: Mapping[str, float],
                    entity_chunks: Mapping[str, Iterable[str]] | None, limit: int | None) -> dict[str, float]:
    """Chunk -> the summed mass of the top entities it mentions. With ``limit``, only the chunks
    whose mass is within :data:`_ROUNDING_MARGIN` of the ``limit``-th largest or above: no other
    chunk that states no edge can be among the first ``limit`` (at least ``limit`` chunks come
    before it), and those that state one are added by the caller."""
    if isinstance(entity_chunks, ChunksOf):  # a loaded snapshot's: summed over chunk positions
        positions, sums = entity_chunks.summed(mass)
        if limit is not None and len(sums) > limit:
            cut = np.partition(sums, len(sums) - limit)[len(sums) - limit] - _ROUNDING_MARGIN if limit else np.inf
            kept = np.flatnonzero(sums >= cut)
            positions, sums = positions[kept], sums[kept]
        return dict(zip(entity_chunks.chunk_ids_at(positions), sums.tolist()))
    summed: dict[str, float] = defaultdict(float)
    if entity_chunks is not None:
        for key, m in mass.items():
            for chunk_id in entity_chunks.get(key, ()):
                summed[chunk_id] += m
    else:
        for chunk_id, keys in chunk_entities.items():
            named = [key for key in keys if key in mass]
            if named:
                summed[chunk_id] = sum(mass[key] for key in named)
    if limit is not None and len(summed) > limit:
        cut = heapq.nlargest(limit, summed.values())[-1] - _ROUNDING_MARGIN if limit else math.inf
        return {chunk_id: m for chunk_id, m in summed.items() if m >= cut}
    return summed


def rank_provenance(chunk_entities: Mapping[str, Iterable[str]], mass: Mapping[str, float],
                    entity_chunks: Mapping[str, Iterable[str]] | None = None,
                    relation_edges: Mapping[str, Iterable] | None = None,
                    limit: int | None = None) -> list[tuple[str, float, list[str]]]:
    """Provenance chunks of the top entities: those stating their relations first, then mentions.

    A chunk that *states* a relation between two top entities (an edge's provenance) is ranked
    by the summed mass of the ends of the edges it states; it comes before chunks that only
    *mention* top entities, which are ranked by the summed mass of the entities they mention.
    Returns ``(chunk id, mass, sorted entity keys)``, best first, equal mass by chunk id; with
    ``limit``, the first ``limit`` of them, picked without sorting the rest (a name said in a
    large share of a long chat log brings a large share of its chunks to every query).
    ``entity_chunks`` (entity -> chunks, the inverse of ``chunk_entities``) avoids a scan of
    every chunk when given; ``relation_edges`` (entity -> edges) enables statement ranking.
    """
    summed = _mention_masses(chunk_entities, mass, entity_chunks, limit)
    stated: dict[str, float] = defaultdict(float)
    ends: dict[str, set[str]] = defaultdict(set)
    seen_edges = set()
    edges_of: Mapping[str, Iterable] = relation_edges or {}
    for key in mass:
        for edge in edges_of.get(key, ()):
            triple = (edge.source, edge.relation, edge.target)
            if triple in seen_edges or edge.source not in mass or edge.target not in mass:
                continue
            seen_edges.add(triple)
            for chunk_id in edge.chunk_ids:
                stated[chunk_id] += mass[edge.source] + mass[edge.target]
                ends[chunk_id].update((edge.source, edge.target))

    def keys_of(chunk_id: str) -> set[str]:
        return {key for key in chunk_entities.get(chunk_id, ()) if key in mass} | ends.get(chunk_id, set())

    for chunk_id in ends:  # the ends it states count once each, mentioned or not
        summed[chunk_id] = sum(mass[key] for key in keys_of(chunk_id))
    order = ((-round(stated[chunk_id], 12) if chunk_id in stated else 0.0, -round(m, 12), chunk_id)
             for chunk_id, m in summed.items())
    head = sorted(order) if limit is None else heapq.nsmallest(limit, order)
    return [(chunk_id, round(-s - m, 12), sorted(keys_of(chunk_id))) for s, m, chunk_id in head]


def walk_ranking(walk: Mapping[str, float], dense: Mapping[str, float], graph_weight: float) -> list[tuple[str, float]]:
    """Passages by ``dense similarity + graph_weight x walk mass / best mass``, best first, ties by id."""
    top = max(walk.values(), default=0.0)
    scores = {cid: float(sim) for cid, sim in dense.items()}
    if top > 0:
        for cid, mass in walk.items():
            scores[cid] = scores.get(cid, 0.0) + graph_weight * mass / top
    return sorted(((cid, round(s, 12)) for cid, s in scores.items()), key=lambda item: (-item[1], item[0]))


def path_chunks(paths: list[GraphPath], limit: int, reading: str | None = None,
                document_of: Mapping[str, str] | None = None) -> list[tuple[str, PathStep]]:
    """One chunk per hop along the paths, in path order, each chunk once, at most ``limit``; with
    ``document_of`` (chunk id -> document), each document once: a chain of documents (relate).

    >>> hop = lambda *chunks: Hop("a", "co_mentioned", "b", weight=1, chunks=chunks, documents=())
    >>> path = GraphPath(nodes=["a", "b", "c", "d"], hops=[hop("c1"), hop("c2"), hop("c3")])
    >>> [cid for cid, _ in path_chunks([path], 3, "relate", {"c1": "x.md", "c2": "x.md", "c3": "y.md"})]
    ['c1', 'c3']
    """
    found: list[tuple[str, PathStep]] = []
    seen: set[str] = set()
    documents: set[str] = set()
    for number, path in enumerate(paths, 1):
        for hop_number, hop in enumerate(path.hops, 1):
            fresh = [cid for cid in hop.chunks if cid not in seen
                     and (document_of is None or document_of.get(cid) not in documents)]
            if not fresh or len(found) >= limit:
                continue
            seen.add(fresh[0])
            if document_of is not None:
                documents.add(document_of.get(fresh[0], ""))
            found.append((fresh[0], PathStep(path=tuple(path.nodes), path_rank=number, hop_number=hop_number, hop=hop,
                                             reading=reading)))
    return found


def graph_triples(ws: WorkspaceView, top: list[tuple[str, float]], limit: int) -> list[Hop]:
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
    return [graph.cited_hop(e) for e in ranked[:limit]]


class GraphRAGRetriever(KeywordFallback):
    """Seeds from the query's names and name embeddings, PageRank over entities and passages,
    cited triples, fused with hybrid search."""

    name = "graphrag"
    description = ("seed entities the query names or evokes, Personalized PageRank over entities and passages, "
                   "the top entities' cited triples and provenance chunks, fused with hybrid chunks by RRF")
    capabilities = Capabilities(vectors=True, embedder=True, graph=True, keyword_index=True, fallback=KEYWORD_ONLY)

    def walk_size(self, graph) -> tuple[int, str]:
        """The nodes the walk runs over and what they are, as ``graphrag.max_graph_nodes`` counts them."""
        return len(graph) + len(graph.passages.entities_of), "entities and passages"

    def _refused_walk(self, ws: WorkspaceView, query: str, vector: np.ndarray, k: int,
                      timer: StageTimer) -> RetrievalResult | None:
        """The walk-size guard: vector only when the walk would run over more than
        ``graphrag.max_graph_nodes`` nodes, else None."""
        nodes, what = self.walk_size(ws.graph)
        limit = ws.settings.graphrag.max_graph_nodes
        return vector_only(ws, self.name, query, vector, k, timer, too_large(nodes, what, limit)) if nodes > limit else None

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        vector = opening(ws, query, timer)
        settings = ws.settings.graphrag
        # The graph's no part: a fresh process runs them while the graph's snapshot loads.
        with timer("dense"):
            dense = {cid: sim for cid, sim, _ in vector_ranking(ws, vector, settings.dense_candidates,
                                                                min_score=-1.0, dedupe=False)}
        with timer("hybrid"):
            hybrid = hybrid_ranking(ws, query, vector, k * FUSION_DEPTH)
        refused = self._refused_walk(ws, query, vector, k, timer)
        if refused is not None:
            return refused
        graph = ws.graph
        nodes = len(graph)
        with timer("seeds"):
            named = name_seeds(graph, query)
            # Where the query writes names whole: the rest is what it asks (bridges), or names in part.
            whole = [(start, end) for _, start, end in graph.passages.matcher.find_spans(query)]
            # A name written in part ("the Stanford gene therapy trial") names its entity too.
            if settings.partial_names:
                for key in partial_name_seeds(ws, query, whole):
                    named.setdefault(key, graph.passages.specificity(key) or 1.0)
            similar, best_similarity, best_key = find_seeds(ws, vector)
        dense_seeds = sorted(dense.items(), key=lambda item: (-item[1], item[0]))[:settings.dense_seeds]
        seeds = Seeds(named, dict(similar), dict(dense_seeds))
        seed_list = ([Seed(graph.name(key), key, "named", specificity=round(s, 6))
                      for key, s in sorted(named.items(), key=lambda item: (-item[1], item[0]))]
                     + [Seed(graph.name(key), key, "similar", similarity=round(sim, 6)) for key, sim in similar])
        if not seeds.entity_weights(graph.passages.specificity, settings.similar_seed_weight):
            best = ("no entity vectors" if best_key is None
                    else f"best: {graph.name(best_key)!r} at {best_similarity:.3f}")
            return vector_only(ws, self.name, query, vector, k, timer,
                                     f"the query names no entity of the graph and no entity name reached "
                                     f"seed_similarity_threshold={settings.seed_similarity_threshold} ({best})")
        with timer("ppr"):
            index = graph.pagerank_index()
            p = personalization(graph, seeds, settings.entity_seed_share, settings.similar_seed_weight)
            scores, iterations, converged = index.walk(p, settings.ppr_damping, PPR_TOLERANCE, PPR_MAX_ITERATIONS)
            # The restart share only echoes the seeds; keep what the walk adds.
            added = np.maximum(scores - (1.0 - settings.ppr_damping) * p / p.sum(), 0.0)
            top = top_entities(cast("list[str]", index.nodelist[:nodes]), scores[:nodes], settings.ppr_top_k)  # keys first
            chunk_ids, positions = graph.passage_positions()
            mass = added[positions]
            walk: dict[str, float] = {}
            for pos in top_positions(mass, max(settings.dense_candidates, k)):
                if mass[pos] > 0:
                    walk[chunk_ids[pos]] = float(mass[pos])
        with timer("context"):
            graph_context = GraphContext(
                seeds=seed_list,
                nodes=[ContextNode(graph.name(key), key=key, type=graph.entity(key).type, ppr=round(m, 6))
                       for key, m in top],
                triples=graph_triples(ws, top, settings.max_triples),
                passages=[PassageMass(cid, round(m, 6))
                          for cid, m in sorted(walk.items(), key=lambda item: (-item[1], item[0]))[:k]],
            )
        with timer("provenance"):
            indexes = indexes_for(ws)
            provenance = rank_provenance(ws.graph.passages.entities_of, dict(top), indexes.entity_chunks,
                                         indexes.relation_edges, limit=k * FUSION_DEPTH)
        with timer("fuse"):
            walked = walk_ranking(walk, dense, settings.graph_weight)[: k * FUSION_DEPTH]
            ranks = {name: {cid: r for r, cid in enumerate(ids, 1)} for name, ids in (
                ("walk", [cid for cid, _ in walked]), ("provenance", [cid for cid, _, _ in provenance]),
                ("hybrid", [cid for cid, _, _ in hybrid]))}
            fused = sorted(rrf([list(ranks["walk"]), list(ranks["provenance"]), list(ranks["hybrid"])],
                               rrf_k=ws.settings.retrieval.rrf_k), key=lambda item: (-item[1], item[0]))
            provenance_of = {cid: (m, keys) for cid, m, keys in provenance}
            top_walk = max(walk.values(), default=0.0) or 1.0
            rrf_of = dict(fused)
        with timer("bridges"):
            fused, bridged_from = self._bridged(ws, query, fused, named, whole)
        with timer("fuse"):
            # A question with a structural reading (what breaks, who owns...) has cited paths
            # for an answer: the chunks stating them lead (at most half of the hits), the
            # fused ranking follows. A long chain holds the short ones: longest first.
            reading = read_question(ws, query)
            paths = sorted(reading.paths, key=lambda p: -len(p.hops)) if reading else []
            # A relate question's answer is the chain of documents: one chunk from each.
            stated = dict(path_chunks(paths, (k + 1) // 2, reading.kind if reading else None,
                                      indexes_for(ws).chunk_documents if reading and reading.kind == "relate" else None))
            if reading:
                graph_context.reading = reading.kind
                graph_context.entities = list(reading.entities)
                graph_context.paths = paths[:settings.max_triples]
                graph_context.impact = reading.impact
            top_score = fused[0][1] if fused else 0.0
            fused = [(cid, round(top_score + len(stated) - i, 6)) for i, cid in enumerate(stated)] + \
                [(cid, score) for cid, score in fused if cid not in stated]
            ranked: list[Ranked] = []
            for cid, score in fused[:k]:
                # A chunk only a cited path brought has no fused score to show.
                why = Why(rrf=round(rrf_of[cid], 6) if cid in rrf_of else None,
                          ranks={name: ranks[name].get(cid) for name in ("walk", "provenance", "hybrid")},
                          similarity=round(dense.get(cid, 0.0), 6), pagerank=round(walk.get(cid, 0.0) / top_walk, 6),
                          cited_path=stated.get(cid))
                if cid in provenance_of:
                    m, keys = provenance_of[cid]
                    why.ppr_mass, why.entities = m, [graph.name(key) for key in keys]
                if cid in bridged_from:
                    why.via, why.parent = "bridge", bridged_from[cid]
                ranked.append((cid, score, why))
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        stats = RetrievalStats(
            seconds=timer.total(),
            seeds=seed_list,
            dense_seeds=[cid for cid, _ in dense_seeds],
            top_entities=len(top),
            walk_nodes=self.walk_size(graph)[0],
            graph=graph.passages.stats(),
            ppr_iterations=iterations,
            ppr_converged=converged,
            walk_hits=sum(1 for h in hits if h.why.ranks.get("walk") is not None),
            provenance_hits=sum(1 for h in hits if h.why.ranks.get("provenance") is not None),
            hybrid_hits=sum(1 for h in hits if h.why.ranks.get("hybrid") is not None),
        )
        reason = (f"{len(named)} entities named in the query, {len(similar)} entity names reached "
                  f"seed_similarity_threshold={settings.seed_similarity_threshold}")
        if not converged:
            reason += f"; PageRank stopped after {iterations} iterations, scores kept"
        if reading:
            reason += f"; {reading.summary}, their chunks first"
        return RetrievalResult(query=query, mode_requested=self.name, mode_used="full_graphrag", hits=hits,
                               stats=stats, graph_context=graph_context, reason=reason)

    def _bridged(self, ws: WorkspaceView, query: str, fused: list[tuple[str, float]], named: Mapping[str, float],
                 whole: list[tuple[int, int]]) -> tuple[list[tuple[str, float]], dict[str, str]]:
        """``fused`` in :func:`~workbench.retrieve.bridges.chain_order`: the chain's starts, their
        bridges, the rest; each place keeps the score the fused ranking had there. ``whole``: where
        the query writes names whole. Returns it and bridge chunk -> the start it bridges from."""
        settings = ws.settings.graphrag
        if settings.bridges_per_start == 0 or not fused:
            return fused, {}
        indexes = indexes_for(ws)
        titled = {cid for key in named for cid in indexes.titled_chunks.get(key, ())}
        ranked = [cid for cid, _ in fused]
        starts = chain_starts(ranked, titled, settings.chain_starts)
        linked = sorted({cid for start in starts for cid in indexes.title_links_from.get(start, ())} - set(starts))
        if not linked:
            return fused, {}
        asked = embed_query(ws, asked_beside_names(query, whole) or query)
        try:
            vectors = ws.vectors.get_vectors(CHUNKS, linked)
        except VectorStoreUnavailable:  # the hits stand without their bridges
            return fused, {}
        similarity = {cid: float(np.dot(v, asked) / ((np.linalg.norm(v) * np.linalg.norm(asked)) or 1.0))
                      for cid, v in vectors.items()}
        order = chain_order(ranked, indexes.title_links_from, similarity, starts, settings.bridges_per_start)
        scores = [score for _, score in fused]
        placed = [(cid, scores[min(i, len(scores) - 1)]) for i, (cid, _) in enumerate(order)]
        return placed, {cid: start for cid, start in order if start is not None}
