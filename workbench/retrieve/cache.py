"""Indexes derived from a workspace for retrieval, built once per ``ws.version``.

Every retriever asks :func:`indexes_for` for what it needs: the BM25 index over all chunks,
the chunk -> document map, entity -> chunks, each entity's relation edges, and the entity
names used to spot entities in a query. Each is built on first use and kept until the
workspace changes (its ``version`` moves), so a query never rebuilds anything.

Examples
--------
>>> class FakeStore:
...     version = 1
>>> class FakeWorkspace:
...     store = FakeStore()
...     version = 1
>>> ws = FakeWorkspace()
>>> indexes_for(ws) is indexes_for(ws)
True
"""

from __future__ import annotations

import threading
import weakref
from collections import defaultdict
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from ..corpus.outdated import OUTDATING_RELATIONS, outdated_documents
from ..model import Edge

if TYPE_CHECKING:
    from ..corpus.keyword_index import KeywordIndex
    from ..record.store import DocumentRecord
    from ..corpus.workspace_view import WorkspaceView


__all__ = ["RetrievalIndexes", "indexes_for", "warm"]



class RetrievalIndexes:
    """The derived indexes of one workspace version; each built lazily, once."""

    def __init__(self, ws: WorkspaceView, version: int) -> None:
        self._ws = weakref.ref(ws)
        self.version = version
        self._lock = threading.RLock()

    @property
    def ws(self) -> WorkspaceView:
        ws = self._ws()
        if ws is None:  # pragma: no cover - the workspace outlives its queries
            raise RuntimeError("the workspace these indexes belong to was closed")
        return ws

    @cached_property
    def keyword(self) -> KeywordIndex:
        """BM25 over every chunk of this version (:meth:`~workbench.corpus.workspace_view.WorkspaceView.keyword_index`:
        a workspace's write step keeps it in the folder)."""
        # cached_property alone is not thread-safe: the lock keeps two builds from racing.
        with self._lock:
            return self.ws.keyword_index(self.version)

    @cached_property
    def chunk_documents(self) -> dict[str, str]:
        """Chunk id -> document id."""
        with self._lock:
            return {chunk_id: doc for chunk_id, (doc, _) in self.ws.store.chunk_context().items()}

    @cached_property
    def entity_chunks(self) -> Mapping[str, tuple[str, ...]]:
        """Entity key -> the chunks that mention it, sorted: the passage layer's own map (a
        snapshot loads it, so a fresh process's first query does not build it again)."""
        with self._lock:
            return self.ws.graph.passages.chunks_of

    @cached_property
    def relation_edges(self) -> dict[str, tuple[Edge, ...]]:
        """Entity key -> its relation edges in either direction (co-mention left out)."""
        with self._lock:
            out: dict[str, list[Edge]] = defaultdict(list)
            for edge in self.ws.graph.edges():  # co-mention left out
                out[edge.source].append(edge)
                if edge.target != edge.source:
                    out[edge.target].append(edge)
            return {key: tuple(sorted(edges, key=lambda e: (e.source, e.relation, e.target)))
                    for key, edges in out.items()}

    @cached_property
    def stating_chunks(self) -> dict[str, frozenset[str]]:
        """Entity key -> the chunks stating one of its relation edges (co-mention left out)."""
        with self._lock:
            return {key: frozenset(c for edge in edges for c in edge.chunk_ids)
                    for key, edges in self.relation_edges.items()}

    @cached_property
    def reached(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """``(edge end, parent document) -> chunks`` of :func:`~workbench.retrieve.expand.reached_chunks`,
        filled as they are asked for."""
        return {}

    @cached_property
    def entity_links(self) -> dict[str, tuple[tuple[str, Edge], ...]]:
        """Entity key -> ``(other end, edge)`` over relation and co-mention edges (derived ones
        included), strongest edge first, then by key."""
        with self._lock:
            graph = self.ws.graph
            out: dict[str, list[tuple[str, Edge]]] = defaultdict(list)
            for edge in list(graph.edges()) + graph.comention_edges():
                out[edge.source].append((edge.target, edge))
                out[edge.target].append((edge.source, edge))
            return {key: tuple(sorted(pairs, key=lambda p: (-p[1].weight, p[0], p[1].relation)))
                    for key, pairs in out.items()}

    @cached_property
    def edges_stated_by(self) -> dict[str, tuple[Edge, ...]]:
        """Chunk id -> the edges (co-mention included) it is provenance of."""
        with self._lock:
            out: dict[str, list[Edge]] = defaultdict(list)
            for edge in self.ws.graph.edges(include_comention=True):
                for chunk_id in edge.chunk_ids:
                    out[chunk_id].append(edge)
            return {chunk_id: tuple(edges) for chunk_id, edges in out.items()}

    @cached_property
    def title_links_from(self) -> dict[str, tuple[str, ...]]:
        """Chunk id -> the chunks whose titles it names (the passage layer's title links)."""
        with self._lock:
            out: dict[str, list[str]] = defaultdict(list)
            for chunk_id, target in self.ws.graph.passages.title_links:
                out[chunk_id].append(target)
            return {chunk_id: tuple(targets) for chunk_id, targets in out.items()}

    @cached_property
    def titled_chunks(self) -> dict[str, tuple[str, ...]]:
        """Entity key -> the chunks of the documents it titles."""
        with self._lock:
            out: dict[str, list[str]] = defaultdict(list)
            for chunk_id, key in sorted(self.ws.graph.passages.title_of.items()):
                out[key].append(chunk_id)
            return {key: tuple(chunks) for key, chunks in out.items()}

    @cached_property
    def opening_chunks(self) -> dict[str, str]:
        """Document id -> its first chunk (its title and first lines)."""
        with self._lock:
            return self.ws.store.opening_chunks()

    @cached_property
    def note_titles(self) -> dict[str, frozenset[str]]:
        """Document id -> the entity keys its title names (the note as an entity)."""
        with self._lock:
            documents = self.chunk_documents
            out: dict[str, set[str]] = defaultdict(set)
            for chunk_id, key in self.ws.graph.passages.title_of.items():
                if chunk_id in documents:
                    out[documents[chunk_id]].add(key)
            return {doc: frozenset(keys) for doc, keys in out.items()}

    @cached_property
    def edges_touching_document(self) -> dict[str, tuple[Edge, ...]]:
        """Document id -> every edge touching its note, each once: the edges any of its chunks
        states (co-mention included; a declared relation cites only the declaring note's first
        chunk) and the relation edges of the entities its title names, in either direction (so
        the runbook an incident is ``RESOLVED_BY`` reaches back to the incident)."""
        with self._lock:
            documents = self.chunk_documents
            out: dict[str, dict[tuple[str, str, str], Edge]] = defaultdict(dict)
            for chunk_id, edges in self.edges_stated_by.items():
                document = documents.get(chunk_id)
                if document is not None:
                    for edge in edges:
                        out[document][(edge.source, edge.relation, edge.target)] = edge
            for document, keys in self.note_titles.items():
                for key in keys:
                    for edge in self.relation_edges.get(key, ()):
                        out[document][(edge.source, edge.relation, edge.target)] = edge
            return {document: tuple(edges[k] for k in sorted(edges)) for document, edges in out.items()}

    @cached_property
    def documents(self) -> dict[str, DocumentRecord]:
        """Document id -> its record, read once per version (every answer's context read them
        twice)."""
        with self._lock:
            return {document.id: document for document in self.ws.store.documents()}

    @cached_property
    def outdated(self) -> dict[str, tuple[str, ...]]:
        """Document id -> the notes that make it outdated
        (:func:`~workbench.corpus.outdated.outdated_documents`)."""
        with self._lock:
            # Relations between notes in the graph too: a SUPERSEDES candidate a person accepted.
            graph = self.ws.graph
            stated = [(graph.name(edge.source), edge.relation, graph.name(edge.target))
                      for edge in graph.edges() if edge.relation.upper() in OUTDATING_RELATIONS]
            return outdated_documents(list(self.documents.values()), stated)

    @cached_property
    def key_of(self):
        """The canonicalizer's name -> key function (aliases and splits applied)."""
        with self._lock:
            return self.ws.canonicalizer().key

    @cached_property
    def entity_names(self) -> dict[str, tuple[str, ...]]:
        """Casefolded display name -> the keys of the entities shown by it, sorted: a text's names
        are found by looking up its substrings of the lengths names have (:attr:`name_lengths`),
        not by searching it for every name, which grows with the names."""
        with self._lock:
            out: dict[str, tuple[str, ...]] = {}
            shared: dict[str, list[str]] = {}  # names several entities show
            for key, shown in self.ws.graph.names().items():  # a loaded graph's name column: no entity made
                name = shown.casefold()
                if name in out:
                    shared.setdefault(name, list(out[name])).append(key)
                else:
                    out[name] = (key,)
            out.update((name, tuple(sorted(set(keys)))) for name, keys in shared.items())
            return out

    @cached_property
    def name_lengths(self) -> tuple[int, ...]:
        """The lengths of the casefolded display names, longest first."""
        with self._lock:
            return tuple(sorted({len(name) for name in self.entity_names}, reverse=True))


_cache: "weakref.WeakKeyDictionary[object, dict[int, RetrievalIndexes]]" = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()
#: Versions kept per workspace: a query pinned to the version before a write (see
#: ``Workspace.pinned``) finishes on its indexes while the next query builds the new ones.
KEPT_VERSIONS = 2


def indexes_for(ws: WorkspaceView) -> RetrievalIndexes:
    """The retrieval indexes of ``ws`` at its version (its pinned one inside ``ws.pinned()``: the
    version of the graph the query reads, so the indexes agree with that graph)."""
    version = ws.version
    with _cache_lock:
        kept = _cache.setdefault(ws, {})
        current = kept.get(version)
        if current is None:
            current = kept[version] = RetrievalIndexes(ws, version)
            for old in sorted(kept)[:-KEPT_VERSIONS]:
                del kept[old]
        return current


def warm(ws: WorkspaceView) -> RetrievalIndexes:
    """Build everything a first query needs (graph, PageRank matrix, keyword and entity
    indexes) now, so the first question asked does not pay for it. The display names are left
    to the first question written without spaces: an English one never
    reads them."""
    with ws.pinned():
        indexes = indexes_for(ws)
        ws.graph.pagerank_index()
        for name in ("keyword", "chunk_documents", "entity_chunks", "relation_edges", "key_of"):
            getattr(indexes, name)
        return indexes
