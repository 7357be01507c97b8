"""Retrieval results explained for people: why a hit came back, how strategies overlap, and
what a graph strategy walked.

:func:`why_sentence` turns a hit's ``why`` dict (whatever the strategy put in it) into one
sentence; :func:`rank_overlap` compares the rankings of several strategies; :func:`graph_walk`
reads a result's ``graph_context`` (seeds, nodes, triples) defensively, since strategies add
keys over time.

Examples
--------
>>> why_sentence({"matched_terms": ["redis", "down"], "bm25": 1.27})
'Matched the words “redis”, “down” (BM25 1.27).'
>>> why_sentence({"rrf": 0.0323, "keyword_rank": 3, "vector_rank": 1, "similarity": 0.629})
'Fused by RRF (0.032): keyword rank 3, vector rank 1; embedding similarity 0.63.'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .model import RetrievalResult

__all__ = ["why_sentence", "rank_overlap", "GraphWalk", "graph_walk", "walk_frames"]

# Ranks that Reciprocal Rank Fusion combines, in the order they read best.
_RANK_KEYS = ("keyword_rank", "vector_rank", "hybrid_rank", "provenance_rank")


def _number(value: Any, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _names(values: Any) -> str:
    if isinstance(values, (list, tuple, set)):
        return ", ".join(f"“{v}”" for v in values)
    return f"“{values}”"


def _edge(value: Any) -> str:
    if isinstance(value, Mapping):
        text = f"{value.get('source', '?')} -{value.get('relation', '?')}-> {value.get('target', '?')}"
        if value.get("weight") is not None:
            text += f" (weight {value['weight']})"
        chunks = value.get("chunks") or value.get("chunk_ids")
        if chunks:
            text += ", stated by " + ", ".join(map(str, chunks))
        return text
    return str(value)


def why_sentence(why: Mapping[str, Any] | None) -> str:
    """One readable sentence saying why a hit came back, from its ``why`` dict.

    Known keys (similarity, matched terms, BM25, RRF and the fused ranks, the edge or path a hit
    came through, PageRank mass, entities) become phrases; unknown keys are listed at the end as
    ``key: value``, so nothing a strategy says is lost.

    Examples
    --------
    >>> why_sentence({"via": "direct", "similarity": 0.63})
    'Direct vector hit; embedding similarity 0.63.'
    >>> why_sentence({"path": ["Redis", "token cache"], "impacted": "token cache",
    ...               "hop": {"source": "token cache", "relation": "backed_by", "target": "Redis", "weight": 1,
    ...                       "chunks": ["4fbc"]}})
    'States a hop of the path Redis → token cache: token cache -backed_by-> Redis (weight 1), stated by 4fbc; token cache is impacted.'
    >>> why_sentence({})
    'No explanation given.'
    """
    why = dict(why or {})
    if not why:
        return "No explanation given."
    parts: list[str] = []
    lead = ""
    if "rrf" in why:
        ranks = [f"{k.replace('_rank', '')} rank {why.pop(k)}" for k in _RANK_KEYS if k in why]
        lead = f"Fused by RRF ({_number(why.pop('rrf'), 3)})" + (": " + ", ".join(ranks) if ranks else "")
    via = why.pop("via", None)
    if via == "direct":
        lead = lead or "Direct vector hit"
    elif via is not None:
        lead = lead or f"Reached via {_edge(via)}"
    if "edge" in why:
        parts.append("through the edge " + _edge(why.pop("edge")))
    if "path" in why:
        path = why.pop("path")
        hop = why.pop("hop", None)
        text = "states a hop of the path " + (" → ".join(map(str, path)) if isinstance(path, (list, tuple)) else str(path))
        if hop is not None:
            text += ": " + _edge(hop)
        parts.append(text)
    if "impacted" in why:
        parts.append(f"{why.pop('impacted')} is impacted")
    if "matched_terms" in why:
        terms = why.pop("matched_terms")
        text = f"matched the words {_names(terms)}" if terms else "matched no word"
        if "bm25" in why:
            text += f" (BM25 {_number(why.pop('bm25'))})"
        parts.append(text)
    if "similarity" in why:
        parts.append(f"embedding similarity {_number(why.pop('similarity'))}")
    for key in ("ppr_mass", "pagerank"):
        if key in why:
            parts.append(f"PageRank {'mass ' if key == 'ppr_mass' else ''}{_number(why.pop(key))}")
    if "confidence" in why:
        parts.append(f"confidence {_number(why.pop('confidence'))}")
    if "entities" in why:
        entities = why.pop("entities")
        parts.append(f"mentions {_names(entities)}" if entities else "mentions no graph entity")
    for key in _RANK_KEYS:
        if key in why:
            parts.append(f"{key.replace('_', ' ')} {why.pop(key)}")
    for key, value in why.items():  # whatever a strategy adds later is still shown
        if isinstance(value, Mapping):
            value = _edge(value)
        elif isinstance(value, (list, tuple)):
            value = ", ".join(map(str, value))
        parts.append(f"{key.replace('_', ' ')}: {_number(value, 3)}")
    if lead:
        sentence = lead + ("; " + "; ".join(parts) if parts else "")
    else:
        sentence = "; ".join(parts)
        sentence = sentence[:1].upper() + sentence[1:]
    return sentence + "."


def rank_overlap(results: Mapping[str, RetrievalResult]) -> pd.DataFrame:
    """One row per chunk returned by any strategy: its rank in each (blank where absent), how many
    strategies returned it, and its document; shared chunks first, then by best rank.

    Examples
    --------
    >>> from workbench.model import Hit
    >>> a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d1", "t", 1.0, 1), Hit("c2", "d2", "t", 0.5, 2)])
    >>> b = RetrievalResult("q", "b", "b", hits=[Hit("c2", "d2", "t", 1.0, 1)])
    >>> rank_overlap({"a": a, "b": b}).to_dict("records")
    [{'chunk': 'c2', 'document': 'd2', 'strategies': 2, 'a': '2', 'b': '1'}, {'chunk': 'c1', 'document': 'd1', 'strategies': 1, 'a': '1', 'b': ''}]
    """
    ranks: dict[str, dict[str, int]] = {}
    documents: dict[str, str] = {}
    for mode, result in results.items():
        for position, hit in enumerate(result.hits, 1):
            ranks.setdefault(hit.chunk_id, {}).setdefault(mode, hit.rank or position)
            documents.setdefault(hit.chunk_id, hit.document)
    order = sorted(ranks, key=lambda c: (-len(ranks[c]), min(ranks[c].values()), c))
    rows = [{"chunk": c, "document": documents[c], "strategies": len(ranks[c]),
             **{mode: str(ranks[c][mode]) if mode in ranks[c] else "" for mode in results}} for c in order]
    return pd.DataFrame(rows, columns=["chunk", "document", "strategies", *results])


@dataclass
class GraphWalk:
    """What a graph strategy walked, read from ``RetrievalResult.graph_context``."""

    seeds: list[tuple[str, float | None]] = field(default_factory=list)
    """``(entity, similarity)`` of the seed entities."""
    nodes: list[tuple[str, str, float | None]] = field(default_factory=list)
    """``(entity, type, score)`` of the entities the walk ranked highest."""
    triples: list[dict[str, Any]] = field(default_factory=list)
    """Cited triples: source, relation, target, weight, chunks, documents."""

    @property
    def empty(self) -> bool:
        return not (self.seeds or self.nodes or self.triples)


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def graph_walk(result: RetrievalResult) -> GraphWalk:
    """The seeds, walked entities and cited triples of a result; missing or odd keys are skipped.

    Examples
    --------
    >>> r = RetrievalResult("q", "graphrag", "full_graphrag", graph_context={
    ...     "seeds": [{"entity": "Redis", "similarity": 0.65}, "odd"],
    ...     "nodes": [{"name": "token cache", "type": "service", "ppr": 0.2}],
    ...     "triples": [{"source": "token cache", "relation": "backed_by", "target": "Redis", "chunks": ["c4"]}]})
    >>> w = graph_walk(r)
    >>> w.seeds, w.nodes, w.triples[0]["chunks"]
    ([('Redis', 0.65), ('odd', None)], [('token cache', 'service', 0.2)], 'c4')
    """
    context = result.graph_context if isinstance(result.graph_context, Mapping) else {}
    seeds = []
    for seed in context.get("seeds") or result.stats.get("seeds") or []:
        if isinstance(seed, Mapping):
            seeds.append((str(seed.get("entity") or seed.get("name") or seed.get("key") or "?"),
                          _float(seed.get("similarity"))))
        else:
            seeds.append((str(seed), None))
    nodes = []
    for node in context.get("nodes") or []:
        if isinstance(node, Mapping):
            score = next((_float(node[k]) for k in ("ppr", "score", "pagerank") if k in node), None)
            nodes.append((str(node.get("name") or node.get("key") or "?"), str(node.get("type") or ""), score))
        else:
            nodes.append((str(node), "", None))
    triples = []
    for triple in context.get("triples") or []:
        if not isinstance(triple, Mapping):
            continue
        chunks = triple.get("chunks") or triple.get("chunk_ids") or []
        documents = triple.get("documents") or []
        triples.append({"source": str(triple.get("source", "?")), "relation": str(triple.get("relation", "?")),
                        "target": str(triple.get("target", "?")), "weight": triple.get("weight", len(chunks)),
                        "chunks": ", ".join(map(str, chunks)), "documents": ", ".join(map(str, documents))})
    return GraphWalk(seeds, nodes, triples)


def walk_frames(walk: GraphWalk) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(walked entities, cited triples)`` of a :class:`GraphWalk` as tables."""
    nodes = pd.DataFrame([{"entity": n, "type": t, "score": None if s is None else round(s, 4)} for n, t, s in walk.nodes],
                         columns=["entity", "type", "score"])
    triples = pd.DataFrame(walk.triples, columns=["source", "relation", "target", "weight", "chunks", "documents"])
    return nodes, triples
