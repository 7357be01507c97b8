"""Communities of the one context graph, in levels (themes, sub-themes), and their reports.

Detection runs on the graph the graphrag walk sees (:meth:`ContextGraph.pagerank_index`):
entities and passages, joined by cited relations (``relation_weight`` per stating chunk),
co-mentions (1 per chunk), synonym edges (1), passage-entity links (1, or ``relation_weight``
where the passage states a relation of the entity) and title links (the layer's
``title_link_weight``). Dates and names too common to link passages are left out: they would
join every theme into one. A community is its entities and the passages that fall with them.

Louvain (scikit-network's, compiled, BSD-licensed; seeded) runs on each connected component.
The nodes are numbered 0..n-1 in sorted order (entity keys, then chunk ids, then words) and
each pair's weights are summed in sorted order, so neither ``PYTHONHASHSEED`` nor the order of
files and edges can change the result. Each theme with enough entities is split again the same
way into sub-themes (``levels``), as GraphRAG's hierarchical Leiden does. networkx's Louvain,
used before, did not finish in 25 minutes on the 583k nodes of a 61k-passage corpus, where this
one takes seconds (docs/scaling.md, "Bounds at scale").

Each community gets an extractive :class:`~workbench.model.CommunityReport`: titled by its
distinctive key phrases (c-TF-IDF among the communities of its level, see
:mod:`workbench.corpus.keyphrases`), its key entities, strongest cited relations, and points: exact
sentences of its passages chosen greedily for the distinctive words they add, from distinct
documents first, each cited by chunk id.

Examples
--------
>>> from workbench.model import Edge, Entity
>>> from workbench.context_graph.graph import ContextGraph
>>> graph = ContextGraph(
...     [Entity("a", "A"), Entity("b", "B"), Entity("c", "C"), Entity("x", "X"), Entity("y", "Y"), Entity("z", "Z")],
...     [Edge("a", "uses", "b", chunk_ids=("c1",)), Edge("b", "uses", "c", chunk_ids=("c1",)),
...      Edge("a", "uses", "c", chunk_ids=("c2",)), Edge("x", "uses", "y", chunk_ids=("c3",)),
...      Edge("y", "uses", "z", chunk_ids=("c3",)), Edge("c", "uses", "x", chunk_ids=("c4",))])
>>> [sorted(c.members) for c in detect_communities(graph, seed=1, min_size=2)]
[['a', 'b', 'c'], ['x', 'y', 'z']]
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..context_graph.graph import COMENTION_RELATION, ContextGraph
from ..text.sentences import sentence_naming, split_sentences
from ..model import Chunk, CommunityReport, ReportPoint
from ..settings import CommunitySettings, setting_default
from .keyphrases import class_tfidf, content_words, key_phrases, phrase_counts, sentence_information, top_terms

if TYPE_CHECKING:  # imported where used: the CLI reaches this module for every command
    from scipy import sparse

__all__ = ["GENERIC_TYPES", "REPORT_RULES", "Community", "ReportOptions", "ReportBuild", "community_graph", "detect_communities", "title_phrase",
           "louvain", "community_signature", "build_reports", "report_id", "report_order"]

#: General entity types from the names extractor: kept in communities, weighed down in key entities.
GENERIC_TYPES = frozenset({"name", "title"})
#: Left out of community detection: a date links unrelated themes.
EXCLUDED_TYPES = frozenset({"date"})
#: Fewest topic words of a sentence a report quotes: "OK, go for the rollback." has one.
MIN_POINT_WORDS = 3
#: Phrases a report keeps of its passages' text, so a kept report is titled again without them.
_TERMS_KEPT = 300
#: The rules a report is made by (2: a sentence of wrapped prose is quoted whole, not line by line);
#: a report or stored summaries made under earlier rules are made again.
REPORT_RULES = 2
#: Key phrases a report lists (the global mode narrows to a theme whose key phrase a question writes).
_KEY_PHRASES = 12


@dataclass(frozen=True)
class ReportOptions:
    """The settings that shape detection and reports: ``settings.communities``, whose fields they
    are (built by :meth:`from_settings`; ``ReportOptions.from_settings()`` gives the defaults)."""

    resolution: float
    seed: int
    min_size: int
    levels: int
    relation_weight: float
    words_per_passage: int
    generic_title_weight: float
    key_entities: int
    title_entities: int
    max_relations: int
    sentences: int
    candidate_chunks: int

    @classmethod
    def from_settings(cls, s: CommunitySettings | None = None) -> ReportOptions:
        """The options of the settings section ``s`` (the default settings when None)."""
        s = CommunitySettings() if s is None else s
        return cls(**{name: getattr(s, name) for name in cls.__dataclass_fields__})

    def digest(self) -> str:
        return hashlib.sha1(json.dumps(self.__dict__, sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Community:
    """A group of entities and the passages that fall with them, at one level."""

    members: frozenset[str]
    """Entity keys."""
    chunks: frozenset[str]
    """Chunk ids of its passages."""
    level: int = 0
    """0 for a theme, 1 for a sub-theme of one, and so on."""
    parent: frozenset[str] | None = None
    """The members of the community it splits, for a sub-theme."""
    parent_id: str | None = None
    """``report_id(parent)``, hashed once for all the sub-themes of a theme (30k members at 61k passages)."""

    def __post_init__(self) -> None:
        if self.parent is not None and self.parent_id is None:
            object.__setattr__(self, "parent_id", report_id(self.parent))


@dataclass
class ReportBuild:
    """The reports of one detection, and how many were kept from the previous one."""

    reports: list[CommunityReport]
    built: int = 0
    """Reports written anew."""
    kept: int = 0
    """Reports whose community (members and their chunks) was unchanged."""
    seconds: dict[str, float] = field(default_factory=dict)


def report_order(report: CommunityReport) -> tuple:
    """Themes first, then sub-themes; larger first, then by first member."""
    return (report.level, -report.size, report.members[0] if report.members else "")


def passage_words(texts: Mapping[str, str], per_passage: int = 20, max_share: float = 0.25) -> dict[str, list[str]]:
    """Each passage's ``per_passage`` most distinctive words (count x log(passages / passages with
    the word)), among the words of at least two passages and at most ``max_share`` of them.

    Examples
    --------
    >>> passage_words({"a": "export schedule moved", "b": "export schedule kept", "c": "budget kept"}, 5, 0.7)
    {'a': ['export', 'schedule'], 'b': ['export', 'kept', 'schedule'], 'c': ['kept']}
    """
    counts = {cid: Counter(content_words(texts[cid])) for cid in sorted(texts)}
    spread: Counter[str] = Counter(w for c in counts.values() for w in c)
    n = len(counts)
    found = {}
    for cid, c in counts.items():
        scored = sorted(((-tf * math.log(n / spread[w]), w) for w, tf in c.items()
                         if 2 <= spread[w] <= max_share * n), key=lambda x: (x[0], x[1]))
        found[cid] = [w for _, w in scored[:per_passage]]
    return found


def community_graph(graph: ContextGraph, relation_weight: float = setting_default("communities.relation_weight"),
                    texts: Mapping[str, str] | None = None,
                    words_per_passage: int = setting_default("communities.words_per_passage"),
                    word_share: float = 0.25) -> tuple[sparse.csr_matrix, list]:
    """The undirected weighted graph communities are detected on, as a symmetric adjacency
    matrix, and its node names.

    Node ``i`` is ``names[i]``: an entity key, ``("p", chunk id)`` for a passage or ``("w", word)``
    for a word that ``texts`` (chunk id -> text) gives its passages (:func:`passage_words`).
    A passage's link to an entity or a word weighs ``1 / sqrt(passages it links)``, so a name or
    word written everywhere (a team lead's name) ties themes together less than a specific one.
    Nodes are numbered in sorted order and the weights of a pair summed in sorted order (see the
    module docstring).
    """
    layer = graph.passages
    common = layer.common
    keys = sorted(e.key for e in graph.entities() if e.type not in EXCLUDED_TYPES and e.key not in common)
    chunk_ids = sorted(layer.entities_of)
    words = passage_words({c: texts[c] for c in chunk_ids if c in texts}, words_per_passage, word_share) \
        if texts and words_per_passage > 0 else {}
    vocabulary = sorted({w for ws in words.values() for w in ws})
    names: list = [*keys, *(("p", cid) for cid in chunk_ids), *(("w", w) for w in vocabulary)]
    key_at = {key: i for i, key in enumerate(keys)}
    passage_at = {cid: len(keys) + i for i, cid in enumerate(chunk_ids)}
    word_at = {w: len(keys) + len(chunk_ids) + i for i, w in enumerate(vocabulary)}
    rows: list[int] = []
    cols: list[int] = []
    weights: list[float] = []

    def add(a: int | None, b: int | None, w: float) -> None:
        if a is not None and b is not None and a != b and w > 0:
            rows.append(a)
            cols.append(b)
            weights.append(w)

    stated: set[tuple[str, str]] = set()
    for edge in graph.edges(include_comention=True):
        scale = 1.0
        if edge.relation != COMENTION_RELATION:
            scale = relation_weight
            stated.update((cid, end) for cid in edge.chunk_ids for end in (edge.source, edge.target))
        add(key_at.get(edge.source), key_at.get(edge.target), scale * edge.weight)
    for a, b, _ in layer.synonyms:
        add(key_at.get(a), key_at.get(b), 1.0)
    chunks_of = layer.chunks_of
    for cid in chunk_ids:
        at = passage_at[cid]
        for key in layer.entities_of[cid]:
            spread = len(chunks_of.get(key, ())) or 1
            add(at, key_at.get(key), (relation_weight if (cid, key) in stated else 1.0) / math.sqrt(spread))
    for cid, target in layer.title_links:
        add(passage_at.get(cid), passage_at.get(target), layer.title_link_weight)
    spread_of = Counter(w for ws in words.values() for w in ws)
    for cid, found in words.items():
        for w in found:
            add(passage_at[cid], word_at[w], 1.0 / math.sqrt(spread_of[w]))
    return _symmetric(len(names), np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
                      np.array(weights, dtype=np.float64)), names


def _symmetric(n: int, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray) -> sparse.csr_matrix:
    """The n x n symmetric matrix of the undirected weighted pairs, each pair's weights summed
    in sorted order, so the order the pairs came in cannot change a bit of the result."""
    from scipy import sparse

    low, high = np.minimum(rows, cols), np.maximum(rows, cols)
    order = np.lexsort((weights, high, low))
    low, high, weights = low[order], high[order], weights[order]
    if len(low):
        starts = np.flatnonzero(np.r_[True, (np.diff(low) != 0) | (np.diff(high) != 0)])
        low, high, weights = low[starts], high[starts], np.add.reduceat(weights, starts)
    upper = sparse.csr_matrix((weights, (low, high)), shape=(n, n))
    return (upper + upper.T).tocsr()


def louvain(adjacency: sparse.csr_matrix, nodes: Iterable[int], resolution: float, seed: int) -> list[list[int]]:
    """Louvain (scikit-network's, compiled) on the subgraph of integer ``nodes``; parts sorted.

    The nodes are taken in sorted order and visited in the order ``seed`` shuffles them, so
    the same subgraph and seed always give the same parts.

    Examples
    --------
    >>> from scipy import sparse
    >>> ring = [(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (4, 5), (3, 5), (5, 6)]
    >>> a = _symmetric(7, *map(np.array, zip(*ring)), np.ones(len(ring)))
    >>> louvain(a, range(7), 1.0, seed=7)
    [[0, 1, 2], [3, 4, 5, 6]]
    """
    inside = np.array(sorted(nodes), dtype=np.int64)
    sub = adjacency[inside][:, inside]
    if sub.nnz == 0:
        return [[int(n)] for n in inside]
    from sknetwork.clustering import Louvain

    labels = Louvain(resolution=resolution, modularity="newman", shuffle_nodes=True, random_state=seed,
                     return_probs=False, return_aggregate=False).fit_predict(sub)
    return _groups(labels, inside)


def _groups(labels: np.ndarray, nodes: np.ndarray) -> list[list[int]]:
    """``nodes`` grouped by their ``labels``: each group in node order, the groups sorted.

    >>> _groups(np.array([1, 0, 1, 2]), np.array([10, 11, 12, 13]))
    [[10, 12], [11], [13]]
    """
    order = np.lexsort((nodes, labels))
    bounds = np.flatnonzero(np.r_[True, np.diff(labels[order]) != 0, True])
    return sorted(nodes[order[a:b]].tolist() for a, b in zip(bounds[:-1], bounds[1:]))


def detect_communities(graph: ContextGraph, *, resolution: float = setting_default("communities.resolution"),
                       seed: int = setting_default("communities.seed"),
                       min_size: int = setting_default("communities.min_size"),
                       relation_weight: float = setting_default("communities.relation_weight"),
                       levels: int = setting_default("communities.levels"), texts: Mapping[str, str] | None = None,
                       words_per_passage: int = setting_default("communities.words_per_passage")) -> list[Community]:
    """Themes and their sub-themes, each of at least ``min_size`` entities.

    Parameters
    ----------
    graph : ContextGraph
        The one context graph.
    resolution : float
        Louvain resolution: above 1 gives more, smaller communities.
    seed : int
        Louvain's seed; the same graph and seed always give the same communities.
    min_size : int
        Fewest entities of a community.
    relation_weight : float
        Weight of a cited relation per stating chunk, against 1 for a mention.
    levels : int
        1: themes only; 2: themes and sub-themes; more: split again.
    texts : mapping of chunk id to text, optional
        The passages' texts: each passage is then also linked to its most distinctive words.
    words_per_passage : int
        How many of its words (:func:`passage_words`) each passage is linked to.

    Returns
    -------
    list of Community
        Level by level; in a level, the largest first (then by first member).
    """
    adjacency, names = community_graph(graph, relation_weight, texts, words_per_passage)
    is_entity = [not isinstance(n, tuple) for n in names]

    def entities(part: Iterable[int]) -> int:
        return sum(1 for i in part if is_entity[i])

    def community(part: list[int], level: int, parent: frozenset[str] | None, parent_id: str | None = None) -> Community:
        return Community(frozenset(names[i] for i in part if is_entity[i]),
                         frozenset(names[i][1] for i in part if not is_entity[i] and names[i][0] == "p"), level, parent,
                         parent_id)

    from scipy.sparse.csgraph import connected_components

    _, component_of = connected_components(adjacency, directed=False)
    components = _groups(component_of, np.arange(len(component_of)))
    found: list[Community] = []
    current: list[list[int]] = []
    for component in components:
        if entities(component) < min_size:
            continue
        current.extend(p for p in louvain(adjacency, component, resolution, seed) if entities(p) >= min_size)
    found.extend(community(p, 0, None) for p in current)
    for level in range(1, max(levels, 1)):
        below: list[list[int]] = []
        for part in current:
            if entities(part) < 2 * min_size:
                continue
            # A sub-theme holds passages of its own when its theme has any (two, or all of them).
            needed = min(2, sum(1 for i in part if not is_entity[i] and names[i][0] == "p"))
            split = [p for p in louvain(adjacency, part, resolution, seed)
                     if entities(p) >= min_size and sum(1 for i in p if not is_entity[i] and names[i][0] == "p") >= needed]
            if len(split) >= 2:
                parent = community(part, level - 1, None).members
                parent_id = report_id(parent)
                found.extend(community(p, level, parent, parent_id) for p in split)
                below.extend(split)
        current = below
    return sorted(found, key=lambda c: (c.level, -len(c.members), min(c.members)))


def report_id(members: Iterable[str]) -> str:
    """``c-`` and 10 hex of the hash of the sorted member keys."""
    return "c-" + hashlib.sha1("\n".join(sorted(members)).encode()).hexdigest()[:10]


def community_signature(graph: ContextGraph, community: Community, options: ReportOptions) -> str:
    """Hash of the members, the passages, the chunks stating their edges, the level, the options and
    the report rules."""
    members = sorted(community.members)
    inside = set(members)
    chunks: set[str] = set(community.chunks)
    for key in members:
        for edge in graph.out_edges(key):
            if edge.target in inside:
                chunks.update(edge.chunk_ids)
    body = json.dumps([members, sorted(chunks), community.level, community.parent_id, options.digest(), REPORT_RULES])
    return hashlib.sha1(body.encode()).hexdigest()


def _centrality(graph: ContextGraph, community: Community) -> dict[str, float]:
    """Each member's links inside the community (passages and entities), the top one scaled to 1."""
    degree: Counter[str] = Counter()
    for cid in sorted(community.chunks):
        for key in graph.passages.entities_of.get(cid, ()):
            if key in community.members:
                degree[key] += 1
    for key in sorted(community.members):
        for edge in graph.out_edges(key):
            if edge.target in community.members and edge.target != key:
                degree[key] += edge.weight
                degree[edge.target] += edge.weight
    top = max(degree.values(), default=0) or 1
    return {k: degree.get(k, 0) / top for k in community.members}


def _relations(graph: ContextGraph, members: frozenset[str], n: int) -> list[dict]:
    found = [edge for key in sorted(members) for edge in graph.out_edges(key)
             if edge.target in members and edge.relation != COMENTION_RELATION and edge.target != key]
    found.sort(key=lambda e: (-e.weight, -e.confidence, e.source, e.relation, e.target))
    return [graph.cited_hop(e).to_json() for e in found[:n]]


def _candidate_chunks(graph: ContextGraph, community: Community, n: int) -> list[str]:
    """The ``n`` passages of the community linked to most of its members, best first."""
    entities_of = graph.passages.entities_of
    score = {cid: len(entities_of.get(cid, frozenset()) & community.members) for cid in community.chunks}
    return [c for c, _ in sorted(score.items(), key=lambda item: (-item[1], item[0]))[:n]]


def _points(community: Community, chunk_ids: Sequence[str], chunks: Mapping[str, Chunk],
            weights: Mapping[str, float], entity_names: Mapping[str, str], n: int) -> list[ReportPoint]:
    """Up to ``n`` sentences chosen greedily for the distinctive words they add, other documents first."""
    candidates = []  # (position, chunk id, chunk, sentence, its topic words)
    for cid in chunk_ids:
        chunk = chunks.get(cid)
        if chunk is None:
            continue
        for position, sentence in enumerate(split_sentences(chunk.text)):
            if sentence_information(sentence, {}, min_words=MIN_POINT_WORDS)[1]:
                candidates.append((position, cid, chunk, sentence, frozenset(content_words(sentence))))
    points: list[ReportPoint] = []
    covered: set[str] = set()
    documents: set[str] = set()
    texts: set[str] = set()
    while len(points) < n:
        best = None
        for position, cid, chunk, sentence, words in candidates:
            if sentence in texts:
                continue
            gain = sum(weights.get(w, 0.0) for w in words - covered)
            gain *= 0.5 if chunk.document_id in documents else 1.0
            key = (gain, -position, cid)
            if gain > 0 and (best is None or key > best[0]):
                best = (key, cid, chunk, sentence, words)
        if best is None:
            break
        (gain, _, _), cid, chunk, sentence, words = best
        covered |= words
        documents.add(chunk.document_id)
        texts.add(sentence)
        low = sentence.casefold()
        names = tuple(sorted(name for key, name in entity_names.items()
                             if key in community.members and name.casefold() in low))
        points.append(ReportPoint(sentence, cid, chunk.document_id, names, round(gain, 4), "sentence", chunk.timestamp))
    return points


def _relation_points(relations: list[dict], chunks: Mapping[str, Chunk], used: set[str],
                     weights: Mapping[str, float]) -> list[ReportPoint]:
    """The sentence stating each of the two strongest relations, when it says something."""
    points = []
    for relation in relations[:2]:
        for chunk_id in relation["chunks"]:
            chunk = chunks.get(chunk_id)
            named = sentence_naming(chunk.text, [relation["source"]]) if chunk else None
            if (chunk and named and relation["target"].casefold() in named.casefold() and named not in used
                    and sentence_information(named, weights, min_words=3)[1]):
                used.add(named)
                points.append(ReportPoint(named, chunk_id, chunk.document_id, (relation["source"], relation["target"]),
                                          float(relation["weight"]), "relation", chunk.timestamp))
                break
    return points


def _report(graph: ContextGraph, community: Community, chunks: Mapping[str, Chunk], options: ReportOptions,
            signature: str, terms: dict[str, int], weights: Mapping[str, float]) -> CommunityReport:
    members = community.members
    central = _centrality(graph, community)
    entity = {k: graph.entity(k) for k in members}

    def rank(k: str) -> float:
        return central[k] * (options.generic_title_weight if entity[k].type in GENERIC_TYPES else 1.0)

    ranked = sorted(members, key=lambda k: (-rank(k), -entity[k].mentions, entity[k].name.casefold(), k))
    key_entities = [(entity[k].name, entity[k].type, round(central[k], 4)) for k in ranked[:options.key_entities]]
    relations = _relations(graph, members, options.max_relations)
    names = {k: entity[k].name for k in members}
    points = _points(community, _candidate_chunks(graph, community, options.candidate_chunks), chunks, weights,
                     names, options.sentences)
    points += _relation_points(relations, chunks, {p.text for p in points}, weights)
    times = sorted({t for t in (graph.passages_time.get(c) for c in community.chunks) if t}
                   | {str(t) for e in entity.values() for t in (e.first_seen, e.last_seen) if t})
    documents = {graph.passages_document.get(c, "") for c in community.chunks} | {p.document for p in points}
    documents |= {d for r in relations for d in r["documents"]}
    return CommunityReport(
        id=report_id(members), title="", size=len(members), members=tuple(sorted(members)),
        key_entities=key_entities, relations=relations, points=points,
        first_seen=times[0] if times else None, last_seen=times[-1] if times else None, signature=signature,
        documents=tuple(sorted(documents - {""})), level=community.level,
        parent=community.parent_id, chunks=tuple(sorted(community.chunks)),
        terms=terms)


def title_phrase(phrases: Sequence[str]) -> str:
    """A title a person would write from a theme's best key phrases: the best of them that reads
    as a noun phrase of two words (``partner export``; not ``called accounts``, a verb's
    participle first), else the best phrase, its first letter capitalised; the key phrases
    themselves are listed beneath it.

    >>> title_phrase(["primary", "token cache", "burst"]), title_phrase(["churn", "called accounts"])
    ('Token cache', 'Churn')
    >>> title_phrase([])
    ''
    """
    def noun_phrase(phrase: str) -> bool:
        words = phrase.split(" ")
        return len(words) == 2 and not words[0].endswith(("ed", "ing")) and not words[1].endswith("ed")

    best = next((p for p in phrases if noun_phrase(p)), phrases[0] if phrases else "")
    return best[:1].upper() + best[1:]


def _titled(report: CommunityReport, weights: Mapping[str, float], options: ReportOptions,
            names: frozenset[str]) -> CommunityReport:
    """The report titled by its most representative key phrase, chosen among its best
    ``title_entities`` (:func:`title_phrase`; its most central entity when its text has none).

    A phrase that is a name or a word of one (``names``: people, places) weighs
    ``generic_title_weight`` of its c-TF-IDF and enters the title only when no other phrase
    does, so a title says what a theme is about, not who.
    """
    weights = {p: w * (options.generic_title_weight if p in names else 1.0) for p, w in weights.items()}
    ranked = sorted((p for p, w in weights.items() if w > 0 and report.terms.get(p, 0) >= 2),
                    key=lambda p: (-weights[p], p))[:_KEY_PHRASES] \
        or sorted((p for p, w in weights.items() if w > 0), key=lambda p: (-weights[p], p))[:_KEY_PHRASES]
    phrases = key_phrases(weights, 8, report.terms) or key_phrases(weights, 8)
    phrases = [p for p in phrases if p not in names] or phrases  # a name only when nothing else is said
    title = title_phrase(phrases[:options.title_entities]) \
        or ", ".join(n for n, _, _ in report.key_entities[:1])
    listed = list(dict.fromkeys([*phrases[:options.title_entities], *ranked]))[:_KEY_PHRASES]  # the title's first
    return dataclasses.replace(report, title=title, key_phrases=tuple((p, round(weights[p], 5)) for p in listed))


def _general_names(graph: ContextGraph) -> frozenset[str]:
    """The names of people and places (general names of two words or more, and persons) as
    key-phrase words: each name, and each of its words."""
    found: set[str] = set()
    for e in graph.entities():
        words = content_words(e.name)
        if (e.type == "name" and len(words) >= 2) or e.type == "person":
            found.add(" ".join(words))
            found.update(words)
    return frozenset(found)


def build_reports(graph: ContextGraph, fetch_chunks: Callable[[Sequence[str]], Iterable[Chunk]],
                  options: ReportOptions,
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
        Reports of an earlier build; a community whose signature is among them keeps its report
        (its title is chosen again: the key phrases depend on every community of its level).

    Returns
    -------
    ReportBuild
        The reports in :func:`report_order`, and how many were built and kept.
    """
    start = time.perf_counter()
    # Every passage's text, for its word links (one read of the chunks: the reports use them too).
    every = sorted(graph.passages.entities_of) if options.words_per_passage > 0 else []
    chunks = {c.id: c for c in fetch_chunks(every)} if every else {}
    communities = detect_communities(graph, resolution=options.resolution, seed=options.seed,
                                     min_size=options.min_size, relation_weight=options.relation_weight,
                                     levels=options.levels, texts={cid: c.text for cid, c in chunks.items()},
                                     words_per_passage=options.words_per_passage)
    detected = time.perf_counter()
    previous = previous or {}
    signatures = [community_signature(graph, c, options) for c in communities]
    # (A report stored before reports kept their terms has another signature: the options changed.)
    kept = {i: previous[s] for i, s in enumerate(signatures) if s in previous}
    todo = [i for i in range(len(communities)) if i not in kept]
    candidates = {i: _candidate_chunks(graph, communities[i], options.candidate_chunks) for i in todo}
    wanted = {c for ids in candidates.values() for c in ids}
    for i in todo:
        for r in _relations(graph, communities[i].members, 2):
            wanted.update(r["chunks"])
    missing = sorted(wanted - chunks.keys())
    if missing:
        chunks.update((c.id, c) for c in fetch_chunks(missing))
    terms: dict[int, dict[str, int]] = {i: r.terms for i, r in kept.items()}
    for i in todo:
        counts: Counter[str] = Counter()
        for cid in candidates[i]:
            if cid in chunks:
                counts.update(phrase_counts(chunks[cid].text))
        terms[i] = top_terms(counts, _TERMS_KEPT)
    weights: dict[int, dict[str, float]] = {}
    for level in sorted({c.level for c in communities}):
        at = [i for i, c in enumerate(communities) if c.level == level]
        weights.update(zip(at, class_tfidf([terms[i] for i in at])))
    reports: list[CommunityReport] = []
    names = _general_names(graph)
    for i, c in enumerate(communities):
        report = kept.get(i) or _report(graph, c, chunks, options, signatures[i], terms[i], weights[i])
        reports.append(_titled(report, weights[i], options, names))
    end = time.perf_counter()
    return ReportBuild(sorted(reports, key=report_order), built=len(todo), kept=len(kept),
                       seconds={"detect": round(detected - start, 6), "reports": round(end - detected, 6),
                                "total": round(end - start, 6)})
