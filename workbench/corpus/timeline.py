"""An entity's timeline: its dated mentions, relations and decisions, in time order.

Examples
--------
>>> entries = [TimelineEntry(None, "mention", "x", "c3", "d"), TimelineEntry("2024-06-10", "decision", "y", "c2", "d"),
...            TimelineEntry("2023-11-20", "mention", "z", "c1", "d")]
>>> [e.chunk_id for e in in_time_order(entries)]
['c1', 'c2', 'c3']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..context_graph.graph import COMENTION_RELATION
from ..text.sentences import sentence_naming, states_decision
from ..model import Timeline, TimelineEntry

if TYPE_CHECKING:
    from .workspace_view import WorkspaceView

__all__ = ["timeline", "in_time_order"]


def in_time_order(entries: Iterable[TimelineEntry]) -> list[TimelineEntry]:
    """Dated entries oldest first, then the undated; ties by kind and chunk."""
    return sorted(entries, key=lambda e: (e.time is None, e.time or "", e.kind, e.chunk_id, e.text))


def timeline(ws: WorkspaceView, name: str) -> Timeline:
    """The :class:`~workbench.model.Timeline` of the entity called ``name``: its display name and entries.

    Each chunk that mentions it gives one entry: the first sentence naming it, a ``decision``
    when that sentence (or another of the chunk naming it) states one, else a ``mention``. Each
    cited relation touching it gives a ``relation`` entry per stating chunk.

    Raises
    ------
    workbench.context_graph.graph.EntityNotFound
        With the nearest names, when no entity answers to ``name``.
    """
    graph = ws.graph
    key = graph.resolve(name)
    entity = graph.entity(key)
    forms = [entity.name]
    chunk_ids = set(graph.passages.chunks_of.get(key, ()))
    relations = []
    for _, _, rel, edge in list(graph.nx.out_edges(key, keys=True, data="edge")) + \
            list(graph.nx.in_edges(key, keys=True, data="edge")):
        if rel != COMENTION_RELATION:
            relations.append(edge)
    chunks = {c.id: c for c in ws.store.chunks(sorted(chunk_ids | {c for e in relations for c in e.chunk_ids}))}
    times = ws.store.chunk_times(list(chunks))
    entries: list[TimelineEntry] = []
    for chunk_id in sorted(chunk_ids):
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        sentence = sentence_naming(chunk.text, forms) or " ".join(chunk.text.split())[:200]
        kind = "decision" if states_decision(sentence) else "mention"
        entries.append(TimelineEntry(times.get(chunk_id), kind, sentence, chunk_id, chunk.document_id))
    for edge in relations:
        text = f"{graph.name(edge.source)} -{edge.relation}-> {graph.name(edge.target)}"
        for chunk_id in edge.chunk_ids:
            if chunk_id in chunks:
                entries.append(TimelineEntry(times.get(chunk_id), "relation", text, chunk_id,
                                             chunks[chunk_id].document_id))
    return Timeline(entity.name, in_time_order(entries))
