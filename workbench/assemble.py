"""Stored mentions and triples -> canonical entities and cited edges -> a :class:`ContextGraph`.

The graph is derived, never stored: it is rebuilt from the SQLite record whenever the
workspace changes, so merges, splits and removals show at once and cannot drift.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Iterable, Mapping

from .canon import Canonicalizer, display_form, name_key
from .graph import ContextGraph
from .model import Edge, Entity, Mention, Triple
from .store import DocumentRecord

__all__ = ["GraphParts", "assemble_graph", "note_resolver"]


@dataclass
class GraphParts:
    """Everything derived from the record: entities, edges and which chunks mention what."""

    entities: dict[str, Entity]
    edges: list[Edge]
    chunk_entities: dict[str, set[str]]
    """Chunk id -> keys of the entities it mentions (the provenance used by graphrag)."""


def note_resolver(documents: Iterable[DocumentRecord]) -> dict[str, str]:
    """Map every way a note can be named (id, file name, stem, title) to its title.

    Declared relations name their target as written (``fix-token-cache.md``); this lets the
    target become the same node as the note it names.
    """
    names: dict[str, str] = {}
    for doc in documents:
        path = PurePosixPath(doc.id.split("#", 1)[0])
        for alias in (doc.id, path.name, path.stem, doc.title):
            key = name_key(alias)
            if key:
                names.setdefault(key, doc.title)
    return names


def _min(a: str | None, b: str | None) -> str | None:
    return b if a is None or (b is not None and b < a) else a


def _max(a: str | None, b: str | None) -> str | None:
    return b if a is None or (b is not None and b > a) else a


def assemble_graph(
    mentions: Iterable[Mention],
    triples: Iterable[Triple],
    chunk_context: Mapping[str, tuple[str, str | None]],
    canonicalizer: Canonicalizer,
    notes: Mapping[str, str] | None = None,
    impact_relations: Iterable[str] | None = None,
) -> tuple[ContextGraph, GraphParts]:
    """Build the context graph from stored mentions and triples.

    ``chunk_context`` maps chunk ids to ``(document id, timestamp)``. An edge's chunks are the
    distinct chunks that state it, so its weight is its corroboration.
    """
    notes = notes or {}
    key_of = canonicalizer.key
    forms: dict[str, Counter] = defaultdict(Counter)
    types: dict[str, Counter] = defaultdict(Counter)
    seen: dict[str, list] = {}
    chunk_entities: dict[str, set[str]] = defaultdict(set)

    def note(surface: str, etype: str, chunk_id: str) -> str:
        if etype == "note":
            surface = notes.get(name_key(surface), surface)
        key = key_of(surface)
        if not key:
            return ""
        forms[key][display_form(surface)] += 1
        types[key][etype] += 1
        ts = chunk_context.get(chunk_id, (None, None))[1]
        span = seen.setdefault(key, [None, None])
        span[0], span[1] = _min(span[0], ts), _max(span[1], ts)
        chunk_entities[chunk_id].add(key)
        return key

    for m in mentions:
        note(m.surface, m.entity_type, m.chunk_id)

    grouped: dict[tuple[str, str, str], dict] = {}
    for t in triples:
        if t.origin == "candidate":
            continue  # discovered, not stated: shown as a candidate, never as an edge
        if t.origin == "declared" or t.subject_type == "note":
            subject, obj = notes.get(name_key(t.subject), t.subject), notes.get(name_key(t.object), t.object)
        else:
            subject, obj = t.subject, t.object
        s, o = key_of(subject), key_of(obj)
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
        name = min(counter.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0]
        etype = min(types[key].items(), key=lambda kv: (kv[0] == "concept", -kv[1], kv[0]))[0]
        entities[key] = Entity(key=key, name=name, type=etype, mentions=sum(counter.values()),
                               first_seen=seen[key][0], last_seen=seen[key][1])
    edges = [
        Edge(source=s, relation=r, target=o, chunk_ids=tuple(sorted(g["chunks"])), documents=tuple(sorted(g["docs"])),
             confidence=g["conf"], first_seen=g["first"], last_seen=g["last"], origin=g["origin"])
        for (s, r, o), g in sorted(grouped.items())
    ]
    kwargs = {"impact_relations": tuple(impact_relations)} if impact_relations is not None else {}
    graph = ContextGraph(entities.values(), edges, key_of=canonicalizer.key, **kwargs)
    return graph, GraphParts(entities, edges, dict(chunk_entities))
