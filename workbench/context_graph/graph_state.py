"""What a writing process keeps of the graph it derived last, so that its next write derives only
what the write changed.

A :class:`GraphState` holds the rows kept beside the record
(:class:`~workbench.context_graph.derivation_rows.DerivationRows`), the parts aggregated from them
(:class:`~workbench.context_graph.parts_state.PartsState`) and the passage layer linked from those
(:class:`~workbench.context_graph.passage_state.PassageState`). :func:`follow_record` brings it up
to the record: the rows are synced in memory (no file read), the parts of the keys and chunks
whose rows changed are aggregated again, and only the passages those touch are linked again.
Without a state (a fresh process, or rows that cannot follow the record) the same functions
derive everything, so a warm and a fresh derivation are one code path; the result equals
:func:`~workbench.context_graph.assemble.assemble_graph`'s (tested after random sequences of writes).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..model import Merge
from ..record.store import Store
from ..runtime.gc_paused import gc_paused
from .assemble import PassageOptions, graph_of_layer
from .canon import Canonicalizer
from .derivation_rows import DerivationRows, followed_rows
from .graph import ContextGraph
from .passage_state import LinkOptions, PassageState
from .passages import NameScan
from .parts_state import PartsState

__all__ = ["Followed", "GraphState", "follow_record"]


@dataclass
class GraphState:
    """The rows, parts and passage layer of a writer's last derivation."""

    rows_key: str
    """What the rows are valid for (:func:`~workbench.context_graph.derivation_rows.rows_key`)."""
    rows: DerivationRows
    parts: PartsState
    passages: PassageState


@dataclass
class Followed:
    """One derivation by :func:`follow_record`."""

    graph: ContextGraph
    merges: list[Merge]
    state: GraphState
    """What the next derivation follows from."""
    rows_status: str
    """How the rows were had: ``followed: ...`` (from the state or the file) or ``read whole: <why>``."""
    touched: str
    """What was aggregated again: ``everything``, or counts of keys, edge groups and chunks."""


@gc_paused()  # a derivation makes many acyclic objects: collecting them only cost time
def follow_record(store: Store, folder: Path, rows_key: str, canonicalizer: Canonicalizer,
                  options: PassageOptions, impact_relations: Collection[str], notes: Mapping[str, str],
                  previous: GraphState | None = None,
                  previous_scan: Callable[[], NameScan | None] = lambda: None) -> Followed:
    """The graph of the record in ``store`` now, and the state to follow it from next time.

    ``previous`` is this process's state of the last derivation (None: the rows are read from the
    file in ``folder``, and every part and passage derived); ``notes`` maps a note's names to its
    title (:func:`~workbench.context_graph.assemble.note_resolver`); ``previous_scan()`` gives the
    names found in each passage by an earlier process (:mod:`~workbench.context_graph.name_scan`),
    asked only when every passage is linked.
    """
    held = previous.rows if previous is not None and previous.rows_key == rows_key else None
    rows, chunk_context, rows_status = followed_rows(folder, rows_key, store, canonicalizer, held)
    same_rows = held is not None and rows is held
    parts = PartsState.derive(rows, chunk_context, canonicalizer, notes,
                              previous.parts if same_rows and previous is not None else None)
    derived = parts.parts()
    link = LinkOptions(options.max_entity_passages, options.title_link_weight, options.synonym_threshold,
                       options.relation_weight)
    touched = parts.touched

    def texts_of(ids: Collection[str] | None):
        return store.chunk_texts() if ids is None else [(c.id, c.text) for c in store.chunks(list(ids))]

    passages, layer = PassageState.link(
        texts_of, list(chunk_context), derived.chunk_entities, derived.forms, derived.title_of,
        parts.names(), link,
        previous=previous.passages if same_rows and previous is not None else None,
        touched_keys=touched.keys if touched is not None else None,
        touched_chunks=touched.chunks if touched is not None else (),
        previous_scan=previous_scan() if touched is None else None)
    graph = graph_of_layer(derived, layer, chunk_context, canonicalizer, impact_relations, store.rejected_suggestions())
    said = "everything" if touched is None else \
        f"{len(touched.keys)} keys, {touched.edges} edge groups, {len(touched.chunks)} chunks"
    return Followed(graph, parts.merge_record(), GraphState(rows_key, rows, parts, passages), rows_status, said)
