"""Reports on the communities of the context graph: each community gets an extractive
:class:`~workbench.model.CommunityReport`, titled by its distinctive key phrases (c-TF-IDF among
the communities of its level, see :mod:`workbench.corpus.keyphrases`), with its key entities,
strongest cited relations, and points: exact sentences of its passages chosen greedily for the
distinctive words they add, from distinct documents first, each cited by chunk id.

:func:`build_reports` detects the communities (:mod:`workbench.corpus.communities`, started from
the previous detection's partition when there is one) and keeps the report of every community
whose signature (members, passages, the chunks stating their relations, the options) is
unchanged: only the communities a write changed are reported on again.

Examples
--------
>>> title_phrase(["primary", "token cache", "burst"])
'Token cache'
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..context_graph.graph import COMENTION_RELATION, ContextGraph
from ..model import Chunk, CommunityReport, ReportPoint
from ..settings import CommunitySettings
from ..text.sentences import sentence_naming, split_sentences
from .communities import Community, detect, report_id
from .community_partition import Partition
from .keyphrases import class_tfidf, content_words, key_phrases, phrase_counts, sentence_information, top_terms

__all__ = ["GENERIC_TYPES", "REPORT_RULES", "ReportOptions", "ReportBuild", "title_phrase", "community_signature",
           "build_reports", "report_order"]

#: General entity types from the names extractor: kept in communities, weighed down in key entities.
GENERIC_TYPES = frozenset({"name", "title"})
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

    def detection(self) -> dict[str, float | int]:
        """The options :func:`~workbench.corpus.communities.detect` takes."""
        return {"resolution": self.resolution, "seed": self.seed, "min_size": self.min_size,
                "relation_weight": self.relation_weight, "levels": self.levels,
                "words_per_passage": self.words_per_passage}

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
    partition: Partition | None = None
    """Where the detection left every node (what the next build starts from)."""
    changed: int | None = None
    """Nodes new or with other neighbours since the partition started from (None: detected from scratch)."""
    kept_themes: int = 0
    """Themes of that partition kept whole by the detection."""


def report_order(report: CommunityReport) -> tuple:
    """Themes first, then sub-themes; larger first, then by first member."""
    return (report.level, -report.size, report.members[0] if report.members else "")


def community_signature(graph: ContextGraph, community: Community, options: ReportOptions) -> str:
    """Hash of the members, the passages, the chunks stating their edges, the level, the options and
    the report rules (not the community it is a part of: a sub-theme's report does not read it)."""
    members = sorted(community.members)
    inside = set(members)
    chunks: set[str] = set(community.chunks)
    for key in members:
        for edge in graph.out_edges(key):
            if edge.target in inside:
                chunks.update(edge.chunk_ids)
    body = json.dumps([members, sorted(chunks), community.level, options.digest(), REPORT_RULES])
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
        if e.type not in ("name", "person"):
            continue
        words = content_words(e.name)
        if e.type == "person" or len(words) >= 2:
            found.add(" ".join(words))
            found.update(words)
    return frozenset(found)


def build_reports(graph: ContextGraph, fetch_chunks: Callable[[Sequence[str]], Iterable[Chunk]],
                  options: ReportOptions, previous: Mapping[str, CommunityReport] | None = None,
                  partition: Partition | None = None) -> ReportBuild:
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
        Reports of an earlier build; a community whose signature is among them keeps its report,
        title and key phrases included.
    partition : Partition, optional
        The partition of that build: detection starts from it (:func:`~workbench.corpus.communities.detect`),
        so the communities no change touched, and their reports, are kept.

    Returns
    -------
    ReportBuild
        The reports in :func:`report_order`, how many were built and kept, and the partition.
    """
    start = time.perf_counter()
    # Every passage's text, for its word links (one read of the chunks: the reports use them too).
    every = sorted(graph.passages.entities_of) if options.words_per_passage > 0 else []
    chunks = {c.id: c for c in fetch_chunks(every)} if every else {}
    detection = detect(graph, **options.detection(), texts={cid: c.text for cid, c in chunks.items()},  # type: ignore[arg-type]
                       previous=partition)
    communities = detection.communities
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
    # A kept report keeps its title and key phrases (and so its vector): they were weighed among the
    # communities of its level when it was built, and a write elsewhere moves those weights a little.
    titling = set(todo) | {i for i, r in kept.items() if not r.key_phrases}
    weights: dict[int, dict[str, float]] = {}
    for level in sorted({c.level for c in communities}):
        at = [i for i, c in enumerate(communities) if c.level == level]
        weights.update(zip(at, class_tfidf([terms[i] for i in at], only=[j for j, i in enumerate(at) if i in titling])))
    reports: list[CommunityReport] = []
    names = _general_names(graph) if titling else frozenset()
    for i, c in enumerate(communities):
        report = kept.get(i) or _report(graph, c, chunks, options, signatures[i], terms[i], weights[i])
        if report.parent != c.parent_id:  # a kept sub-theme of a theme that changed
            report = dataclasses.replace(report, parent=c.parent_id)
        reports.append(_titled(report, weights[i], options, names) if i in titling else report)
    end = time.perf_counter()
    return ReportBuild(sorted(reports, key=report_order), built=len(todo), kept=len(kept),
                       seconds={**{f"detect_{k}": v for k, v in detection.seconds.items()},
                                "detect": round(detected - start, 6), "reports": round(end - detected, 6),
                                "total": round(end - start, 6)},
                       partition=detection.partition, changed=detection.changed, kept_themes=detection.kept)
