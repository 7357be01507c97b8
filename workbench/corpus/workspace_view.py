"""What retrieval, answering and the views read of a workspace: :class:`WorkspaceView`.

A :class:`~workbench.workspace.workspace.Workspace` is one; so is the read-only view of some of its
documents that :func:`workbench.workspace.scoped_view.scoped` makes. Functions that only read take a
``WorkspaceView``; those that write (ingest, merges, repair) take a ``Workspace``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..context_graph.canon import Canonicalizer
    from .keyword_index import KeywordIndex
    from ..embedding import Embedder
    from ..vectors.entity_vectors import EntityVectors
    from ..context_graph.graph import ContextGraph
    from ..model import Chunk, Triple
    from ..settings import Settings
    from ..record.store import DocumentRecord, Store
    from ..vectors.index import VectorIndex

__all__ = ["WorkspaceView"]


class WorkspaceView(Protocol):
    """The reads of a workspace: its settings, record, graph, vectors and embedder."""

    @property
    def path(self) -> Path:
        """The workspace folder (derived indexes are kept there)."""

    @property
    def settings(self) -> Settings:
        """The settings it was opened with."""

    @property
    def store(self) -> Store:
        """The SQLite record (a scoped view's answers only for its documents, and refuses writes)."""

    @property
    def embedder(self) -> Embedder:
        """The embedder of queries and names."""

    @property
    def entity_vectors(self) -> EntityVectors:
        """The entity-name vectors."""

    @property
    def keeps_snapshot(self) -> bool:
        """Whether derived files (graph snapshot, keyword index) are read and saved for it."""

    @property
    def vectors(self) -> VectorIndex:
        """The chunk vectors."""

    @property
    def graph(self) -> ContextGraph:
        """The context graph of the record as it is now."""

    @property
    def version(self) -> int:
        """The record's version: it changes with every write."""

    def keyword_index(self, version: int) -> KeywordIndex:
        """BM25 over its chunks at ``version`` (a workspace's is kept in its folder by each write step)."""
        ...

    def chunk(self, chunk_id: str) -> Chunk:
        """One chunk; :class:`~workbench.workspace.workspace.ChunkNotFound` when there is none."""
        ...

    def chunks(self, ids: Sequence[str] | None = None) -> list[Chunk]:
        """The chunks of ``ids`` (all when None)."""
        ...

    def documents(self) -> list[DocumentRecord]:
        """The documents of the record."""
        ...

    def save_derived(self, version: int, save: Callable[[], object]) -> bool:
        """Run ``save`` (a reader storing something it derived) under the write lock, when the lock
        is free now and the record is still at ``version``; whether it ran. Never for a scoped view
        or a read-only workspace, whose reads are all they do."""
        ...

    def canonicalizer(self) -> Canonicalizer:
        """Names -> entity keys, with the settings' and the user's aliases and splits."""
        ...

    def candidates(self) -> list[Triple]:
        """Relations proposed (by the LLM, or note similarity) and not yet accepted."""
        ...

    def ensure_entity_vectors(self) -> None:
        """Have the entity-name vectors match the graph before a search reads them."""
        ...

    def preload(self) -> None:
        """Start reading what a first query needs (the graph, the name index) in the background."""
        ...

    def pinned(self) -> AbstractContextManager[None]:
        """A block in which this thread reads one graph and its record version (a query's reads)."""
        ...
