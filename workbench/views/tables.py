"""Tables of the corpus and the graph for the pages and notebooks: documents, an entity's
neighbours and the chunks behind its edges, communities, timelines.

Names and texts from documents pass through :func:`~workbench.text.safe_text.printable` (chunk texts
keep their newlines), so a table shows what is stored and obeys nothing in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from ..context_graph.graph import COMENTION_RELATION, ContextGraph, Neighborhood
from ..corpus.community_listing import nested_order
from ..text.safe_text import printable
from ..model import Edge
from .chunks import human_date

__all__ = ["documents_frame", "neighbours_frame", "edges_at_frame", "edge_chunks_frame", "communities_frame", "nested_order", "timeline_frame"]


def documents_frame(records: Iterable) -> pd.DataFrame:
    """One row per stored document (a :class:`~workbench.record.store.DocumentRecord`)."""
    rows = [{"document": printable(r.id), "title": printable(r.title), "kind": r.kind, "date": printable(human_date(r.date)),
             "chunks": r.chunks, "tags": printable(", ".join(r.tags))} for r in records]
    return pd.DataFrame(rows, columns=["document", "title", "kind", "date", "chunks", "tags"])


def neighbours_frame(neighborhood: Neighborhood, graph: ContextGraph | None = None) -> pd.DataFrame:
    """The entities around a center. With ``graph``: one row per edge at the center, with the
    relation, its direction as seen from the center, and its weight."""
    if graph is None:
        return pd.DataFrame([{"entity": printable(name), "hops": d} for name, d in neighborhood.entities],
                            columns=["entity", "hops"])
    center = neighborhood.keys[0] if neighborhood.keys else graph.resolve(neighborhood.center)
    return edges_at_frame(graph, center, neighborhood.edges)


def edges_at_frame(graph: ContextGraph, center: str, edges: Iterable[Edge]) -> pd.DataFrame:
    """One row per edge at ``center`` (an entity key): the other end, the relation, its direction
    as seen from the center, its weight and the other end's type; heaviest first."""
    rows: list[dict[str, Any]] = []
    for edge in edges:
        if center not in (edge.source, edge.target):
            continue
        outgoing = edge.source == center
        other = edge.target if outgoing else edge.source
        if edge.relation == COMENTION_RELATION:
            direction = "— (no direction)"
        else:
            direction = "→ out" if outgoing else "← in"
        rows.append({"entity": printable(graph.name(other)), "relation": printable(edge.relation),
                     "direction": direction, "weight": edge.weight, "type": printable(graph.entity(other).type)})
    rows.sort(key=lambda r: (-r["weight"], r["entity"].casefold(), r["relation"]))
    return pd.DataFrame(rows, columns=["entity", "relation", "direction", "weight", "type"])


def edge_chunks_frame(graph: ContextGraph, edges: Iterable[Edge], chunk_text: Mapping[str, object]) -> pd.DataFrame:
    """One row per (edge, stating chunk): the evidence behind each edge.

    ``chunk_text`` maps chunk id -> :class:`~workbench.model.Chunk`.
    """
    rows = []
    for edge in edges:
        for chunk_id in edge.chunk_ids:
            chunk = chunk_text.get(chunk_id)
            rows.append({"source": printable(graph.name(edge.source)), "relation": printable(edge.relation),
                         "target": printable(graph.name(edge.target)), "chunk": chunk_id,
                         "document": printable(getattr(chunk, "document_id", "")),
                         "text": printable(getattr(chunk, "text", ""), keep_newlines=True)})
    return pd.DataFrame(rows, columns=["source", "relation", "target", "chunk", "document", "text"])


_LEVELS = {0: "theme", 1: "sub-theme"}


def communities_frame(reports: Iterable) -> pd.DataFrame:
    """One row per community report, each theme followed by its sub-themes: id, level, theme,
    size, title (key phrases), passages, time span, key entities."""
    reports = list(reports)
    titles = {r.id: r.title for r in reports}
    ordered = nested_order(reports)
    return pd.DataFrame([{"id": r.id, "level": _LEVELS.get(r.level, f"level {r.level}"),
                          "theme": printable(titles.get(r.parent or "", r.title)), "size": r.size,
                          "title": printable(r.title), "passages": len(r.chunks),
                          "from": human_date(r.first_seen), "to": human_date(r.last_seen),
                          "key entities": printable(", ".join(f"{n} ({t})" for n, t, _ in r.key_entities))}
                         for r in ordered],
                        columns=["id", "level", "theme", "size", "title", "passages", "from", "to", "key entities"])




def timeline_frame(entries: Iterable) -> pd.DataFrame:
    """An entity's timeline entries as a table, oldest first."""
    return pd.DataFrame([{"time": printable(human_date(e.time, with_time=True) or "(undated)"), "kind": e.kind,
                          "text": printable(e.text, keep_newlines=True), "chunk": e.chunk_id,
                          "document": printable(e.document)} for e in entries],
                        columns=["time", "kind", "text", "chunk", "document"])
