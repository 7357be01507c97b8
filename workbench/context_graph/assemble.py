"""Stored mentions and triples -> canonical entities and cited edges -> a :class:`ContextGraph`.

The graph is derived from the SQLite record, never edited: each write step derives it again, so
merges, splits and removals show at once and cannot drift, and :mod:`workbench.context_graph.graph_snapshot`
keeps it for the next process.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Callable, Collection, Iterable, Iterator, Mapping

from ..extract.names import GENERIC_TYPES, title_surface
from ..runtime.gc_paused import gc_paused
from ..model import Edge, Entity, Mention, Triple
from ..settings import setting_default
from ..record.store import DocumentRecord
from .canon import Canonicalizer
from ..text.name_keys import display_form, name_key
from .graph import DEFAULT_IMPACT_RELATIONS, ContextGraph
from .passages import NameScan, PassageLayer, link_passages

__all__ = ["GraphParts", "LazyMapping", "PassageOptions", "assemble_graph", "graph_of_parts", "graph_parts", "note_resolver",
           "type_rank"]


@dataclass(frozen=True)
class PassageOptions:
    """How passages are linked into the graph: the ``graph`` settings that shape the walk."""

    max_entity_passages: int = setting_default("graph.max_entity_passages")
    title_link_weight: float = setting_default("graph.title_link_weight")
    synonym_threshold: float = setting_default("graph.synonym_threshold")
    relation_weight: float = setting_default("graph.relation_weight")

    @classmethod
    def from_settings(cls, graph_settings) -> PassageOptions:
        return cls(graph_settings.max_entity_passages, graph_settings.title_link_weight,
                   graph_settings.synonym_threshold, graph_settings.relation_weight)


def type_rank(entity_type: str) -> int:
    """Which type an entity keeps when extractors disagree: typed patterns, then ``concept``,
    then the general ``title``, ``name``, ``date``.

    >>> sorted(["name", "service", "concept", "title"], key=type_rank)
    ['service', 'concept', 'title', 'name']
    """
    if entity_type in GENERIC_TYPES:
        return 2 + GENERIC_TYPES.index(entity_type)
    return 1 if entity_type == "concept" else 0


class LazyMapping(Mapping[str, str]):
    """A mapping made by ``make`` when first read: the derivation asks the note resolver only for
    note-typed mentions and declared links, which many corpora never have (every write
    spared reading every note).

    >>> made = []
    >>> lazy = LazyMapping(lambda: made.append(1) or {"a": "A"})
    >>> len(made)
    0
    >>> lazy.get("a"), lazy.get("b", "b"), len(made)
    ('A', 'b', 1)
    """

    def __init__(self, make: Callable[[], Mapping[str, str]]) -> None:
        self._make = make
        self._made: Mapping[str, str] | None = None

    def _mapping(self) -> Mapping[str, str]:
        if self._made is None:
            self._made = self._make()
        return self._made

    def __getitem__(self, key: str) -> str:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())


def note_resolver(documents: Iterable[DocumentRecord]) -> dict[str, str]:
    """Map every way a note can be named (id, file name, stem, title) to its title's name.

    Declared relations name their target as written (``fix-token-cache.md``); this lets the
    target become the same node as the note it names, which is also the node its title
    mentions give (:func:`~workbench.extract.names.title_surface`).
    """
    names: dict[str, str] = {}
    for doc in documents:
        path = PurePosixPath(doc.id.split("#", 1)[0])
        title = title_surface(doc.id, doc.title) or doc.title
        for alias in (doc.id, path.name, path.stem, doc.title):
            key = name_key(alias)
            if key:
                names.setdefault(key, title)
    return names


def _min(a: str | None, b: str | None) -> str | None:
    return b if a is None or (b is not None and b < a) else a


def _max(a: str | None, b: str | None) -> str | None:
    return b if a is None or (b is not None and b > a) else a


@gc_paused()  # a derivation makes millions of acyclic objects: collecting them only cost time
def assemble_graph(
    mentions: Iterable[Mention],
    triples: Iterable[Triple],
    chunk_context: Mapping[str, tuple[str, str | None]],
    canonicalizer: Canonicalizer,
    notes: Mapping[str, str] | None = None,
    impact_relations: Iterable[str] | None = None,
    chunk_texts: Iterable[tuple[str, str]] | None = None,
    passage_options: PassageOptions | None = None,
    rejected: Collection[tuple[str, str]] = (),
    previous_scan: NameScan | None = None,
) -> ContextGraph:
    """Build the context graph from stored mentions and triples.

    ``chunk_context`` maps chunk ids to ``(document id, timestamp)``. An edge's chunks are the
    distinct chunks that state it, so its weight is its corroboration. With ``chunk_texts``
    (``(chunk id, text)``) the graph gets its passage layer
    (:func:`~workbench.context_graph.passages.link_passages`, which reuses ``previous_scan``, the names an
    earlier derivation found in each passage, where they stand); synonym pairs the user
    ``rejected`` (sorted name-key pairs) are left out of it.
    """
    return graph_of_parts(graph_parts(mentions, triples, chunk_context, canonicalizer, notes), chunk_context,
                          canonicalizer, impact_relations, chunk_texts, passage_options, rejected, previous_scan)


@dataclass
class GraphParts:
    """What a derivation aggregates from the rows, before the passage layer and the graph."""

    entities: dict[str, Entity]
    """Key -> entity: mention keys in order of first mention, then keys only triples name."""
    edges: list[Edge]
    """One edge per (subject, relation, object), sorted by them."""
    chunk_entities: Mapping[str, set[str]]
    """Chunk id -> keys of the entities mentioned in it."""
    forms: Mapping[str, Mapping[str, int]]
    """Key -> its display forms and their counts, in order of first use (the name lookup)."""
    title_of: dict[str, str]
    """Chunk id -> key of its document's title."""


def graph_parts(
    mentions: Iterable[Mention],
    triples: Iterable[Triple],
    chunk_context: Mapping[str, tuple[str, str | None]],
    canonicalizer: Canonicalizer,
    notes: Mapping[str, str] | None = None,
) -> GraphParts:
    """The entities, edges and passage inputs of stored mentions and triples, one Python pass over
    every row: the reference the incremental derivation
    (:mod:`workbench.context_graph.derivation_rows`) is tested against."""
    notes = {} if notes is None else notes
    key_of = canonicalizer.key
    forms: dict[str, Counter] = defaultdict(Counter)
    written: dict[str, Counter] = defaultdict(Counter)  # the forms outside titles, for the display name
    types: dict[str, Counter] = defaultdict(Counter)
    seen: dict[str, list] = {}
    chunk_entities: dict[str, set[str]] = defaultdict(set)

    resolved: dict[tuple[str, bool], tuple[str, str]] = {}  # (key, display form): a surface recurs often

    def note(surface: str, etype: str, chunk_id: str) -> str:
        found = resolved.get((surface, etype == "note"))
        if found is None:
            written_as = notes.get(name_key(surface), surface) if etype == "note" else surface
            found = resolved[(surface, etype == "note")] = (key_of(written_as), display_form(written_as))
        key, shown = found
        if not key:
            return ""
        forms[key][shown] += 1
        if etype != "title":  # a title is repeated on every chunk of its document: not how prose writes it
            written[key][shown] += 1
        types[key][etype] += 1
        ts = chunk_context.get(chunk_id, (None, None))[1]
        span = seen.setdefault(key, [None, None])
        span[0], span[1] = _min(span[0], ts), _max(span[1], ts)
        chunk_entities[chunk_id].add(key)
        return key

    title_of: dict[str, str] = {}
    for m in mentions:
        key = note(m.surface, m.entity_type, m.chunk_id)
        if key and m.entity_type == "title":
            title_of[m.chunk_id] = key

    grouped: dict[tuple[str, str, str], dict] = {}
    keys_of: dict[str, str] = {}  # a triple's ends recur: each surface is resolved once
    for t in triples:
        if t.origin == "candidate":
            continue  # discovered, not stated: shown as a candidate, never as an edge
        if t.origin == "declared" or t.subject_type == "note":
            subject, obj = notes.get(name_key(t.subject), t.subject), notes.get(name_key(t.object), t.object)
        else:
            subject, obj = t.subject, t.object
        s, o = keys_of.get(subject), keys_of.get(obj)
        if s is None:
            s = keys_of[subject] = key_of(subject)
        if o is None:
            o = keys_of[obj] = key_of(obj)
        if not s or not o or s == o:
            continue
        for key, surface, etype in ((s, subject, t.subject_type), (o, obj, t.object_type)):
            if key not in forms:  # a triple endpoint nobody mentioned still becomes a node
                note(surface, etype, t.chunk_id)
        doc, ts = chunk_context.get(t.chunk_id, (None, None))
        g = grouped.setdefault((s, t.relation, o), {"chunks": set(), "docs": set(), "conf": 0.0,
                                                     "first": None, "last": None, "origin": t.origin})
        g["chunks"].add(t.chunk_id)
        if doc:
            g["docs"].add(doc)
        g["conf"] = max(g["conf"], t.confidence)
        g["first"], g["last"] = _min(g["first"], ts), _max(g["last"], ts)

    entities = {}
    for key, counter in forms.items():
        # Most frequent surface form; ties go to the longest, then alphabetical, for stability.
        name = min((written.get(key) or counter).items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0]
        etype = min(types[key].items(), key=lambda kv: (type_rank(kv[0]), -kv[1], kv[0]))[0]
        entities[key] = Entity(key=key, name=name, type=etype, mentions=sum(counter.values()),
                               first_seen=seen[key][0], last_seen=seen[key][1])
    edges = [
        Edge(source=s, relation=r, target=o, chunk_ids=tuple(sorted(g["chunks"])), documents=tuple(sorted(g["docs"])),
             confidence=g["conf"], first_seen=g["first"], last_seen=g["last"], origin=g["origin"])
        for (s, r, o), g in sorted(grouped.items())
    ]
    return GraphParts(entities, edges, chunk_entities, forms, title_of)


@gc_paused()
def graph_of_parts(
    parts: GraphParts,
    chunk_context: Mapping[str, tuple[str, str | None]],
    canonicalizer: Canonicalizer,
    impact_relations: Iterable[str] | None = None,
    chunk_texts: Iterable[tuple[str, str]] | None = None,
    passage_options: PassageOptions | None = None,
    rejected: Collection[tuple[str, str]] = (),
    previous_scan: NameScan | None = None,
) -> ContextGraph:
    """The :class:`ContextGraph` of the ``parts`` aggregated from the rows: what
    :func:`assemble_graph` and the incremental derivation
    (:mod:`workbench.context_graph.derivation_rows`) both end with."""
    layer = None
    if chunk_texts is not None:
        options = passage_options or PassageOptions()
        layer = link_passages(chunk_texts, parts.chunk_entities, parts.forms, parts.title_of, options.max_entity_passages,
                              options.title_link_weight, options.synonym_threshold,
                              names={key: e.name for key, e in parts.entities.items()},
                              relation_weight=options.relation_weight, previous=previous_scan)
    return graph_of_layer(parts, layer, chunk_context, canonicalizer, impact_relations, rejected)


def graph_of_layer(parts: GraphParts, layer: PassageLayer | None, chunk_context: Mapping[str, tuple[str, str | None]],
                   canonicalizer: Canonicalizer, impact_relations: Iterable[str] | None = None,
                   rejected: Collection[tuple[str, str]] = ()) -> ContextGraph:
    """The :class:`ContextGraph` of the ``parts`` and their passage ``layer`` (its synonym pairs the
    user ``rejected`` left out)."""
    if layer is not None and rejected:
        layer = replace(layer, synonyms=tuple(pair for pair in layer.synonyms if pair[:2] not in rejected))
    return ContextGraph(parts.entities, parts.edges,
                        DEFAULT_IMPACT_RELATIONS if impact_relations is None else tuple(impact_relations),
                        key_of=canonicalizer.key, passages=layer,
                        passage_documents={cid: doc for cid, (doc, _) in chunk_context.items() if doc},
                        passage_times={cid: ts for cid, (_, ts) in chunk_context.items() if ts}, checked=False)
