"""Passage-graph retrieval: HippoRAG-style Personalized PageRank over passages and names, no LLM.

The graph (:mod:`workbench.passage_graph_index`) holds passages next to the names they mention
or are titled by. A query seeds PageRank from two sides:

- the names it mentions, each weighted by its specificity (1 / the passages that mention it);
- its most similar passages (dense retrieval), weighted by their similarity.

PageRank spreads that mass along mention edges and along direct title links: from a passage
that names a bridge entity to the passage that entity titles. Only the mass the walk *adds* is
kept (the restart share would just echo the dense seeds). The final score adds that mass,
scaled to the best passage's, to the dense similarity, so a passage that both resembles the
question and sits next to its names ranks first, and a bridge passage the question does not
resemble still gets in.

Without embeddings (the model cannot load), BM25 passages seed the walk instead of dense ones
and ``reason`` says so.

Examples
--------
>>> fuse_scores({"a": 1.0, "b": 0.5}, {"a": 0.2, "c": 0.9}, graph_weight=0.5)
[('c', 0.9), ('a', 0.7), ('b', 0.25)]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..embedding import EmbeddingUnavailable
from ..model import RetrievalResult
from ..passage_graph_index import passage_graph_for
from ..vectors import VectorStoreUnavailable
from .base import StageTimer, empty_result, is_empty_query, make_hits
from .cache import indexes_for
from .vector import embed_query, vector_ranking

__all__ = ["PassageGraphRetriever", "PassageGraphOptions", "fuse_scores", "options_from_settings"]


class PassageGraphOptions:
    """The knobs of the mode; defaults mirror ``settings.passage_graph``."""

    def __init__(self, damping: float = 0.85, dense_seeds: int = 5, dense_candidates: int = 100,
                 entity_seed_share: float = 0.8, graph_weight: float = 1.0, synonym_threshold: float = 0.8,
                 max_entity_passages: int = 200, use_entities: bool = True, use_dense_seeds: bool = True,
                 propagated_only: bool = True, title_link_weight: float = 2.0):
        self.damping = damping
        self.dense_seeds = dense_seeds
        self.dense_candidates = dense_candidates
        self.entity_seed_share = entity_seed_share
        self.graph_weight = graph_weight
        self.synonym_threshold = synonym_threshold
        self.max_entity_passages = max_entity_passages
        self.use_entities = use_entities
        self.use_dense_seeds = use_dense_seeds
        self.propagated_only = propagated_only
        self.title_link_weight = title_link_weight

    def as_dict(self) -> dict:
        return dict(vars(self))


def options_from_settings(settings) -> PassageGraphOptions:
    """Options from ``settings.passage_graph`` when the settings model has that section."""
    section = getattr(settings, "passage_graph", None)
    if section is None:
        return PassageGraphOptions()
    return PassageGraphOptions(**{k: getattr(section, k) for k in PassageGraphOptions().as_dict()
                                  if hasattr(section, k)})


def fuse_scores(graph: Mapping[str, float], dense: Mapping[str, float], graph_weight: float) -> list[tuple[str, float]]:
    """``graph_weight * graph / max(graph) + dense`` per passage, best first, ties by id."""
    top = max(graph.values(), default=0.0)
    scores = {pid: float(sim) for pid, sim in dense.items()}
    if top > 0:
        for pid, mass in graph.items():
            scores[pid] = scores.get(pid, 0.0) + graph_weight * mass / top
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


class PassageGraphRetriever:
    """Personalized PageRank over passages + names, seeded by query names and dense passages."""

    name = "passage_graph"
    description = ("PageRank over a passage + name graph (titles, proper nouns, quotes, dates), seeded by "
                   "the query's names and its top dense passages, fused with dense similarity")

    def __init__(self, options: PassageGraphOptions | None = None, name: str | None = None):
        self.options = options
        if name:
            self.name = name

    def retrieve(self, ws, query: str, k: int) -> RetrievalResult:
        if is_empty_query(query):
            return empty_result(query, self.name)
        opts = self.options or options_from_settings(ws.settings)
        timer = StageTimer()
        reason = ""
        with timer("graph"):
            index = passage_graph_for(ws, opts.synonym_threshold, opts.max_entity_passages,
                                      opts.title_link_weight)
        dense: dict[str, float] = {}
        try:
            with timer("embed"):
                vector = embed_query(ws, query)
            with timer("dense"):
                dense = {cid: sim for cid, sim, _ in vector_ranking(ws, vector, opts.dense_candidates,
                                                                    min_score=-1.0, dedupe=False)}
            seeds = sorted(dense.items(), key=lambda item: (-item[1], item[0]))[:opts.dense_seeds]
        except (EmbeddingUnavailable, VectorStoreUnavailable) as exc:
            reason = f"embeddings unavailable ({exc}); BM25 passages seed the walk"
            with timer("keyword"):
                matches = indexes_for(ws).keyword.search(query, opts.dense_candidates)
            ranked = [(m.id, float(m.score)) for m in matches if m.score > 0]
            top = max((s for _, s in ranked), default=1.0) or 1.0
            # BM25 scores scaled to [0, 1] stand in for similarities.
            dense = {cid: s / top for cid, s in ranked}
            seeds = ranked[:opts.dense_seeds]
        with timer("seed"):
            query_entities = index.entities_in(query, capitalised_only=True) if opts.use_entities else []
            ppr = index.ppr
            p = np.zeros(len(ppr))
            entity_weights = {e: 1.0 / len(index.entity_passages[e]) for e in query_entities
                              if ("e", e) in ppr.index}
            seed_passages = {cid: max(s, 0.0) for cid, s in seeds if ("p", cid) in ppr.index} \
                if opts.use_dense_seeds else {}
            for share, weights, kind in ((opts.entity_seed_share, entity_weights, "e"),
                                         (1.0 - opts.entity_seed_share, seed_passages, "p")):
                total = sum(weights.values())
                if total > 0:
                    for node, w in weights.items():
                        p[ppr.index[(kind, node)]] += share * w / total
        graph_scores: dict[str, float] = {}
        if p.sum() > 0:
            with timer("pagerank"):
                scores = ppr.run_vector(p, alpha=opts.damping)
                if opts.propagated_only:
                    # The restart share only echoes the seeds' dense ranking; keep what the walk adds.
                    scores = np.maximum(scores - (1.0 - opts.damping) * p / p.sum(), 0.0)
                ids, positions = index.passage_nodes
                mass = scores[positions]
                for pos in np.argsort(-mass, kind="stable")[:max(opts.dense_candidates, k)]:
                    if mass[pos] > 0:
                        graph_scores[ids[pos]] = float(mass[pos])
        elif not dense:
            return empty_result(query, self.name, reason=reason or "no seed: no named entity and no similar passage")
        with timer("fuse"):
            fused = fuse_scores(graph_scores, dense, opts.graph_weight)[:k]
            top_graph = max(graph_scores.values(), default=0.0) or 1.0
            ranked = [(cid, score, {"similarity": round(dense.get(cid, 0.0), 6),
                                    "pagerank": round(graph_scores.get(cid, 0.0) / top_graph, 6),
                                    "entities": sorted(index.passage_entities.get(cid, set()) & set(query_entities))})
                      for cid, score in fused]
        with timer("fetch"):
            hits = make_hits(ws, ranked)
        return RetrievalResult(
            query=query, mode_requested=self.name, mode_used=self.name, hits=hits,
            stats={"query_entities": query_entities, "dense_seeds": [cid for cid, _ in seeds],
                   "graph": index.stats(), "seconds": timer.total()},
            graph_context={"nodes": [index.names.get(e, e) for e in query_entities]},
            reason=reason,
        )


# Imported last by workbench/retrieve/__init__.py, once the registry exists.
from . import register  # noqa: E402

register(PassageGraphRetriever())
