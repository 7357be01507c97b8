"""Communities of the context graph and their extractive reports (no language model).

Communities are found with networkx's Louvain method (seeded, so deterministic) on the one
context graph: entities joined by cited relation edges (weighted ``relation_weight`` per
stating chunk) and co-mention edges (1 per chunk). Dates and names too common to link
passages are left out: they would join every theme into one. Louvain runs per connected
component, so a change inside one component leaves every other component's communities
exactly as they were, and their reports are kept.

Each community gets a :class:`~workbench.model.CommunityReport`: a title from its most central
entities (general ``name``/``title`` entities count ``generic_title_weight`` of their centrality),
its key entities with types, its strongest cited relations, representative sentences chosen
greedily by the centrality of the entities they name that no earlier sentence named (each an
exact sentence of a cited chunk), and its time span.

Examples
--------
>>> from workbench.model import Edge, Entity
>>> from workbench.graph import ContextGraph
>>> graph = ContextGraph(
...     [Entity("a", "A"), Entity("b", "B"), Entity("c", "C"), Entity("x", "X"), Entity("y", "Y"), Entity("z", "Z")],
...     [Edge("a", "uses", "b", chunk_ids=("c1",)), Edge("b", "uses", "c", chunk_ids=("c1",)),
...      Edge("a", "uses", "c", chunk_ids=("c2",)), Edge("x", "uses", "y", chunk_ids=("c3",)),
...      Edge("y", "uses", "z", chunk_ids=("c3",)), Edge("c", "uses", "x", chunk_ids=("c4",))])
>>> [sorted(c) for c in detect_communities(graph, seed=1, min_size=2)]
[['a', 'b', 'c'], ['x', 'y', 'z']]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

from .graph import COMENTION_RELATION, ContextGraph
from .model import Chunk, CommunityReport, ReportPoint
from .sentences import sentence_naming, split_sentences

__all__ = ["GENERIC_TYPES", "ReportOptions", "ReportBuild", "community_graph", "detect_communities",
           "community_signature", "build_reports", "report_id"]

#: General entity types from the names extractor: kept in communities, weighed down in titles.
GENERIC_TYPES = frozenset({"name", "title"})
#: Left out of community detection: a date links unrelated themes.
EXCLUDED_TYPES = frozenset({"date"})
_MIN_SENTENCE_WORDS = 4


@dataclass(frozen=True)
class ReportOptions:
    """The settings that shape detection and reports (see ``settings.communities``)."""

    resolution: float = 1.0
    seed: int = 42
    min_size: int = 3
    relation_weight: float = 2.0
    generic_title_weight: float = 0.25
    key_entities: int = 8
    title_entities: int = 3
    max_relations: int = 5
    sentences: int = 4
    candidate_chunks: int = 30

    @classmethod
    def from_settings(cls, s) -> "ReportOptions":
        return cls(**{name: getattr(s, name) for name in cls.__dataclass_fields__})

    def digest(self) -> str:
        return hashlib.sha1(json.dumps(self.__dict__, sort_keys=True).encode()).hexdigest()[:12]


@dataclass
class ReportBuild:
    """The reports of one detection, and how many were kept from the previous one."""

    reports: list[CommunityReport]
    built: int = 0
    """Reports written anew."""
    kept: int = 0
    """Reports whose community (members and their chunks) was unchanged."""
    seconds: dict[str, float] = field(default_factory=dict)


def _long_enough(sentence: str) -> bool:
    """Four words, or eight characters of a script written without spaces (Chinese)."""
    return len(sentence.split()) >= _MIN_SENTENCE_WORDS or (len(sentence) >= 8 and not sentence.isascii())


def community_graph(graph: ContextGraph, relation_weight: float = 2.0) -> nx.Graph:
    """The undirected weighted entity graph communities are detected on, in sorted order."""
    common = graph.passages.common
    keep = sorted(k for k, e in graph.nx.nodes(data="entity")
                  if e.type not in EXCLUDED_TYPES and k not in common)
    g = nx.Graph()
    g.add_nodes_from(keep)
    weights: dict[tuple[str, str], float] = {}
    for u, v, rel, edge in graph.nx.edges(keys=True, data="edge"):
        if u == v or u not in g or v not in g:
            continue
        pair = (u, v) if u < v else (v, u)
        w = edge.weight * (1.0 if rel == COMENTION_RELATION else relation_weight)
        weights[pair] = weights.get(pair, 0.0) + w
    g.add_weighted_edges_from((u, v, w) for (u, v), w in sorted(weights.items()) if w > 0)
    return g


def detect_communities(graph: ContextGraph, *, resolution: float = 1.0, seed: int = 42, min_size: int = 3,
                       relation_weight: float = 2.0) -> list[frozenset[str]]:
    """Communities of at least ``min_size`` entities, largest first (then by first key).

    Louvain (:func:`networkx.community.louvain_communities`) runs on each connected component
    with the same ``seed``, so the communities of an unchanged component never move.
    """
    g = community_graph(graph, relation_weight)
    found: list[frozenset[str]] = []
    for component in sorted((sorted(c) for c in nx.connected_components(g) if len(c) >= min_size)):
        sub = g.subgraph(component)
        if len(component) <= 3 or sub.number_of_edges() == len(component) * (len(component) - 1) // 2:
            found.append(frozenset(component))  # a clique (or a tiny component) is one community
            continue
        parts = nx.community.louvain_communities(sub, weight="weight", resolution=resolution, seed=seed)
        found.extend(frozenset(p) for p in parts if len(p) >= min_size)
    return sorted(found, key=lambda c: (-len(c), min(c)))


def report_id(members: Iterable[str]) -> str:
    """``c-`` and 10 hex of the hash of the sorted member keys."""
    return "c-" + hashlib.sha1("\n".join(sorted(members)).encode()).hexdigest()[:10]


def community_signature(graph: ContextGraph, members: Iterable[str], options: ReportOptions) -> str:
    """Hash of the members, the chunks that mention them or state their edges, and the options."""
    members = sorted(members)
    inside = set(members)
    chunks: set[str] = set()
    for key in members:
        chunks.update(graph.passages.chunks_of.get(key, ()))
        for _, other, edge in graph.nx.out_edges(key, data="edge"):
            if other in inside:
                chunks.update(edge.chunk_ids)
    body = json.dumps([members, sorted(chunks), options.digest()])
    return hashlib.sha1(body.encode()).hexdigest()


def _centrality(g: nx.Graph, members: frozenset[str]) -> dict[str, float]:
    """Weighted degree inside the community, scaled so the most central member has 1."""
    degree = dict(g.subgraph(members).degree(weight="weight"))
    top = max(degree.values(), default=0.0) or 1.0
    return {k: degree.get(k, 0.0) / top for k in members}


def _relations(graph: ContextGraph, members: frozenset[str], n: int) -> list[dict]:
    found = []
    for key in sorted(members):
        for _, other, rel, edge in graph.nx.out_edges(key, keys=True, data="edge"):
            if other in members and rel != COMENTION_RELATION and other != key:
                found.append(edge)
    found.sort(key=lambda e: (-e.weight, -e.confidence, e.source, e.relation, e.target))
    return [graph.cited_hop(e).to_json() for e in found[:n]]


def _report(graph: ContextGraph, g: nx.Graph, members: frozenset[str], chunks: Mapping[str, Chunk],
            options: ReportOptions, signature: str) -> CommunityReport:
    central = _centrality(g, members)
    entity = {k: graph.entity(k) for k in members}

    def title_score(k: str) -> float:
        return central[k] * (options.generic_title_weight if entity[k].type in GENERIC_TYPES else 1.0)

    ranked = sorted(members, key=lambda k: (-title_score(k), -entity[k].mentions, entity[k].name.casefold(), k))
    key_entities = [(entity[k].name, entity[k].type, round(central[k], 4)) for k in ranked[:options.key_entities]]
    title = ", ".join(entity[k].name for k in ranked[:options.title_entities])
    relations = _relations(graph, members, options.max_relations)

    # Candidate sentences from the chunks naming the most central members.
    entities_of = graph.passages.entities_of
    points: list[ReportPoint] = []
    covered: set[str] = set()
    candidates: list[tuple[float, int, str, str, tuple[str, ...]]] = []
    for chunk_id in _candidate_chunks(graph, members, central, options.candidate_chunks):
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        named_here = [k for k in sorted(entities_of.get(chunk_id, ())) if k in members]
        for position, sentence in enumerate(split_sentences(chunk.text)):
            if not _long_enough(sentence):
                continue
            low = sentence.casefold()
            names = tuple(k for k in named_here if entity[k].name.casefold() in low)
            if names:
                candidates.append((0.0, position, chunk_id, sentence, names))
    used_texts: set[str] = set()
    while len(points) < options.sentences and candidates:
        best = max(candidates, key=lambda c: (sum(title_score(k) for k in c[4] if k not in covered),
                                              len(c[4]), -c[1], c[2]))
        gain = sum(title_score(k) for k in best[4] if k not in covered)
        if gain <= 0:
            break
        candidates.remove(best)
        if best[3] in used_texts:
            continue
        used_texts.add(best[3])
        covered.update(best[4])
        chunk = chunks[best[2]]
        points.append(ReportPoint(best[3], best[2], chunk.document_id, tuple(entity[k].name for k in best[4]),
                                  round(gain, 4), "sentence", chunk.timestamp))
    # The sentence stating each of the two strongest relations, when a chunk at hand holds one.
    for relation in relations[:2]:
        for chunk_id in relation["chunks"]:
            chunk = chunks.get(chunk_id)
            named = sentence_naming(chunk.text, [relation["source"]]) if chunk else None
            if chunk and named and relation["target"].casefold() in named.casefold() and named not in used_texts:
                used_texts.add(named)
                points.append(ReportPoint(named, chunk_id, chunk.document_id,
                                          (relation["source"], relation["target"]), float(relation["weight"]),
                                          "relation", chunk.timestamp))
                break
    firsts = [str(entity[k].first_seen) for k in members if entity[k].first_seen]
    lasts = [str(entity[k].last_seen) for k in members if entity[k].last_seen]
    documents = sorted({p.document for p in points} | {d for r in relations for d in r["documents"]})
    return CommunityReport(id=report_id(members), title=title, size=len(members), members=tuple(sorted(members)),
                           key_entities=key_entities, relations=relations, points=points,
                           first_seen=min(firsts, default=None), last_seen=max(lasts, default=None),
                           signature=signature, documents=tuple(documents))


def _candidate_chunks(graph: ContextGraph, members: frozenset[str], central: Mapping[str, float], n: int) -> list[str]:
    """The ``n`` chunks whose named members are most central together, best first."""
    score: dict[str, float] = {}
    for key in members:
        for chunk_id in graph.passages.chunks_of.get(key, ()):
            score[chunk_id] = score.get(chunk_id, 0.0) + central[key]
    for key in members:  # the chunks stating the community's relations count too
        for _, other, rel, edge in graph.nx.out_edges(key, keys=True, data="edge"):
            if other in members and rel != COMENTION_RELATION:
                for chunk_id in edge.chunk_ids:
                    score.setdefault(chunk_id, central[key] + central[other])
    return [c for c, _ in sorted(score.items(), key=lambda item: (-item[1], item[0]))[:n]]


def build_reports(graph: ContextGraph, fetch_chunks: Callable[[Sequence[str]], Iterable[Chunk]],
                  options: ReportOptions = ReportOptions(),
                  previous: Mapping[str, CommunityReport] | None = None) -> ReportBuild:
    """Detect the communities of ``graph`` and report on each, keeping unchanged reports.

    Parameters
    ----------
    graph : ContextGraph
        The one context graph.
    fetch_chunks : callable
        Chunk ids -> chunks (``store.chunks``); asked only for communities that need a new report.
    options : ReportOptions
        Detection and report settings.
    previous : mapping of signature to CommunityReport, optional
        Reports of an earlier build; a community whose signature is among them keeps its report.

    Returns
    -------
    ReportBuild
        The reports, largest community first, and how many were built and kept.
    """
    import time

    start = time.perf_counter()
    communities = detect_communities(graph, resolution=options.resolution, seed=options.seed,
                                     min_size=options.min_size, relation_weight=options.relation_weight)
    detected = time.perf_counter()
    previous = previous or {}
    g = community_graph(graph, options.relation_weight)
    reports: list[CommunityReport] = []
    todo: list[tuple[int, frozenset[str], str]] = []
    for i, members in enumerate(communities):
        signature = community_signature(graph, members, options)
        if signature in previous:
            reports.append(previous[signature])
        else:
            reports.append(None)  # type: ignore[arg-type]
            todo.append((i, members, signature))
    wanted: set[str] = set()
    for _, members, _ in todo:
        wanted.update(_candidate_chunks(graph, members, _centrality(g, members), options.candidate_chunks))
        for r in _relations(graph, members, 2):
            wanted.update(r["chunks"])
    chunks = {c.id: c for c in fetch_chunks(sorted(wanted))} if wanted else {}
    for i, members, signature in todo:
        reports[i] = _report(graph, g, members, chunks, options, signature)
    end = time.perf_counter()
    return ReportBuild(reports, built=len(todo), kept=len(communities) - len(todo),
                       seconds={"detect": round(detected - start, 6), "reports": round(end - detected, 6),
                                "total": round(end - start, 6)})
