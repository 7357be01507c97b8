"""A read-only view of a workspace restricted to some documents.

Filtering hits after retrieval leaves the seeds, the walk, the graph context and the stats
computed from every document, and disagreeing with the hits shown. A scoped view instead
restricts the *record* every retriever reads: its chunks, mentions, triples and documents,
and chunk vector search (a Chroma ``where`` on the chunk's document). The graph derived from
it is the graph of those documents alone, so every mode, graphrag's seeds and PageRank
included, runs inside the scope.

Examples
--------
>>> document_matches("sample_corpus/incidents/a.md", ["sample_corpus/incidents/"])
True
>>> document_matches("notes/a.md#r1", ["notes/a.md"])
True
>>> document_matches("notes/ab.md", ["notes/a"]), document_matches("notes/x/ab.md", ["notes"])
(False, True)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..context_graph.canon import Canonicalizer, build_merges
from ..context_graph.graph_snapshot import snapshot_counts
from ..context_graph.name_scan import load_name_scan
from ..corpus.keyword_index import KeywordIndex
from ..model import Chunk, Triple
from .derivation import assemble_from_record
from .pinned_reads import Pins
from .workspace import Workspace, chunk_of

if TYPE_CHECKING:
    from ..embedding import Embedder
    from ..vectors.entity_vectors import EntityVectors
    from ..context_graph.graph import ContextGraph
    from ..settings import Settings
    from ..record.store import DocumentRecord, Store
    from ..corpus.summaries import Summaries
    from ..vectors.index import VectorIndex

__all__ = ["ScopedStore", "ScopedVectors", "ScopedEntityVectors", "ScopedWorkspace", "ScopeUnmatched", "document_matches",
           "resolve_filters", "Scopes", "scoped"]


def document_matches(document_id: str, filters: Sequence[str]) -> bool:
    """Whether a document id is one of ``filters`` or lies under one of them (a folder or file)."""
    for wanted in filters:
        wanted = wanted.strip()
        if not wanted:
            continue
        folder = wanted.rstrip("/")
        if document_id == wanted or document_id.startswith(folder + "/") or document_id.startswith(wanted + "#"):
            return True
    return False


class ScopeUnmatched(ValueError):
    """Document filters of which some match no stored document (the message names them)."""


def resolve_filters(ws: Workspace, filters: Sequence[str]) -> tuple[str, ...]:
    """``filters`` (document ids or folder prefixes), each checked to match a stored document: the
    one check every surface makes before it scopes a retrieval (:func:`scoped`).

    Raises
    ------
    ScopeUnmatched
        Naming every filter that matches no stored document, with a few ids that would.
    """
    known = [d.id for d in ws.store.documents()]
    unmatched = [f for f in filters if not any(document_matches(d, [f]) for d in known)]
    if unmatched:
        examples = ", ".join(sorted(known)[:5])
        raise ScopeUnmatched(f"no stored document matches {', '.join(map(repr, unmatched))}; give document ids or "
                             f"folder prefixes such as: {examples}")
    return tuple(filters)


#: Store methods that write: a scoped view refuses them.
_WRITERS = frozenset({"transaction", "set_meta", "replace_documents", "delete_documents", "record_file_digests", "record_file_hashes",
                      "replace_candidates", "record", "cache_embeddings", "replace_summaries", "close"})


class ScopedStore:
    """The reads of a :class:`~workbench.record.store.Store` that retrieval uses, limited to some documents.

    Anything else (version, aliases, splits, meta...) is the store's own.
    """

    def __init__(self, store, document_ids: Sequence[str]) -> None:
        self._store = store
        self.document_ids = frozenset(document_ids)
        self._chunk_ids: frozenset[str] | None = None

    def __getattr__(self, name):
        if name in _WRITERS:
            raise AttributeError(f"a workspace scoped to some documents is read-only: no {name}()")
        return getattr(self._store, name)

    @property
    def chunk_ids(self) -> frozenset[str]:
        if self._chunk_ids is None:
            self._chunk_ids = frozenset(c for c, (doc, _) in self._store.chunk_context().items()
                                        if doc in self.document_ids)
        return self._chunk_ids

    def documents(self):
        return [d for d in self._store.documents() if d.id in self.document_ids]

    def chunks(self, ids: Sequence[str] | None = None):
        return [c for c in self._store.chunks(ids) if c.document_id in self.document_ids]

    def chunk_ids_of(self, *args, **kwargs):
        return [c for c in self._store.chunk_ids_of(*args, **kwargs) if c in self.chunk_ids]

    def opening_chunks(self):
        return {doc: cid for doc, cid in self._store.opening_chunks().items() if doc in self.document_ids}

    def chunk_times(self, ids):
        return self._store.chunk_times([i for i in ids if i in self.chunk_ids])

    def chunk_texts(self):
        return [(cid, text) for cid, text in self._store.chunk_texts() if cid in self.chunk_ids]

    def chunk_context(self):
        return {cid: ctx for cid, ctx in self._store.chunk_context().items() if ctx[0] in self.document_ids}

    def mentions(self):
        return [m for m in self._store.mentions() if m.chunk_id in self.chunk_ids]

    def triples(self):
        return [t for t in self._store.triples() if t.chunk_id in self.chunk_ids]

    def candidate_triples(self):
        return [t for t in self._store.candidate_triples() if t.chunk_id in self.chunk_ids]

    def iter_mentions(self):
        return (m for m in self._store.iter_mentions() if m.chunk_id in self.chunk_ids)

    def iter_triples(self):
        return (t for t in self._store.iter_triples() if t.chunk_id in self.chunk_ids)

    def count(self, table: str) -> int:
        if table == "documents":
            return len(self.document_ids)
        if table == "chunks":
            return len(self.chunk_ids)
        return self._store.count(table)


class ScopedVectors:
    """Chunk vector search limited to some documents, by a Chroma ``where`` on their document."""

    def __init__(self, vectors, document_ids: Sequence[str]) -> None:
        self._vectors = vectors
        self._where = {"document": {"$in": sorted(document_ids)}}

    def __getattr__(self, name):
        if name in ("upsert", "delete"):
            raise AttributeError(f"a workspace scoped to some documents is read-only: no {name}()")
        return getattr(self._vectors, name)

    def query(self, kind: str, vector, k: int, where: dict | None = None):
        return self._vectors.query(kind, vector, k, where=where or self._where)


class ScopedEntityVectors:
    """Entity-name search limited to the entities of the scoped graph (``in_scope``)."""

    def __init__(self, entity_vectors, in_scope: Callable[[str], bool]) -> None:
        self._entity_vectors = entity_vectors
        self._in_scope = in_scope

    def __getattr__(self, name):
        if name == "sync":
            raise AttributeError("a workspace scoped to some documents is read-only: no sync()")
        return getattr(self._entity_vectors, name)

    def query(self, vector, k: int, keep: Callable[[str], bool] | None = None, space: str | None = None):
        return self._entity_vectors.query(vector, k, keep=lambda key: self._in_scope(key) and (keep is None or keep(key)),
                                          space=space)


class ScopedWorkspace:
    """A read-only :class:`~workbench.corpus.workspace_view.WorkspaceView` of a workspace holding only
    some of its documents: the workspace's settings, embedder and folder, a :class:`ScopedStore`,
    :class:`ScopedVectors` and :class:`ScopedEntityVectors`, and the graph derived from the
    scoped record alone (by the workspace's own derivation; never read from or saved to the
    workspace's snapshot). It has no write step: ingest, merges and repair are the workspace's.
    """

    #: Its graph is of the scope: never the workspace's snapshot (nor its keyword index).
    keeps_snapshot = False

    def __init__(self, workspace: Workspace, document_ids: Sequence[str], filters: Sequence[str]) -> None:
        self._workspace = workspace
        self.scope = tuple(filters)
        # The scoped reads stand in for the workspace's (their writes refused): typed as what they narrow.
        self.store = cast("Store", ScopedStore(workspace.store, document_ids))
        self.entity_vectors = cast("EntityVectors", ScopedEntityVectors(workspace.entity_vectors,
                                                                          in_scope=lambda key: key in self.graph))
        self._vectors = cast("VectorIndex", ScopedVectors(workspace.vectors, document_ids))
        self._derived: tuple[tuple, ContextGraph] | None = None
        self._derive_lock = threading.Lock()
        self.pins = Pins(self._derivation)
        #: Whether a search has started loading the vector store and the model (retrieve's prefetch).
        self._prefetched = workspace._prefetched

    @property
    def path(self) -> Path:
        return self._workspace.path

    @property
    def settings(self) -> Settings:
        return self._workspace.settings

    @property
    def embedder(self) -> Embedder:
        return self._workspace.embedder

    @property
    def vectors(self) -> VectorIndex:
        return self._vectors

    @property
    def version(self) -> int:
        """The record's version (in a :meth:`pinned` block, the version of the graph it reads)."""
        return self.pins.version(lambda: self.store.version)

    def pinned(self) -> AbstractContextManager[None]:
        """Within the block, this thread reads one graph and record version (see :class:`Pins`)."""
        return self.pins.pinned()

    def _derivation(self) -> tuple[int, ContextGraph]:
        key, graph = self._derive()
        return key[0], graph

    def _derive(self) -> tuple[tuple, ContextGraph]:
        """The scope's graph, derived again when the record or the graph settings change."""
        key = self._workspace.derivation.key()  # the record's version and the graph settings, as the workspace's
        with self._derive_lock:
            if self._derived is None or self._derived[0] != key:
                # The scoped store with the workspace's settings and canonicalizer: the scope's graph.
                graph = assemble_from_record(self.store, self.settings, self.canonicalizer(),
                                             previous_scan=load_name_scan(self.path))
                self._derived = (key, graph)
            return self._derived

    @property
    def graph(self) -> ContextGraph:
        return self.pins.read()[1]

    def preload(self) -> None:
        """Nothing: a scope's graph is derived from the record when first asked, never loaded."""

    def chunk(self, chunk_id: str) -> Chunk:
        return chunk_of(self.store, chunk_id)

    def chunks(self, ids: Sequence[str] | None = None) -> list[Chunk]:
        return self.store.chunks(ids)

    def keyword_index(self, version: int) -> KeywordIndex:
        """BM25 over the scope's chunks, built when asked: never the workspace's kept index."""
        chunks = self.store.chunks()
        return KeywordIndex.build([c.id for c in chunks], [c.text for c in chunks])

    def documents(self) -> list[DocumentRecord]:
        return self.store.documents()

    def canonicalizer(self) -> Canonicalizer:
        return self._workspace.canonicalizer()  # the aliases and splits are the workspace's

    def candidates(self) -> list[Triple]:
        return self.store.candidate_triples()

    def ensure_entity_vectors(self) -> None:
        """A view builds no index: its searches use the workspace's as it is. A read-only
        workspace (which writes nothing either) says when its index is missing, naming repair."""
        if self._workspace.read_only:
            self._workspace.ensure_entity_vectors()

    def save_derived(self, version: int, save: Callable[[], object]) -> bool:
        """Never: a view of some documents stores nothing it derives."""
        return False

    def summaries(self) -> Summaries:
        """Community reports and episodes, as :func:`~workbench.corpus.summaries.current_summaries` gives them for this view."""
        from ..corpus.summaries import current_summaries

        return current_summaries(self)

    def stats(self) -> dict:
        """The scope's counts, as :meth:`Workspace.stats <workbench.workspace.workspace.Workspace.stats>` gives a workspace's."""
        counts = {"documents": self.store.count("documents"), "chunks": self.store.count("chunks"),
                  "mentions": self.store.count("mentions"), "triples": self.store.count("triples"),
                  "user_aliases": self.store.count("aliases"), "workspace": str(self.path)}
        return {**counts, **snapshot_counts(self.graph, build_merges(self.store.iter_mentions(), self.canonicalizer()))}


def scoped(ws: Workspace, filters: Sequence[str]) -> ScopedWorkspace:
    """A read-only view of ``ws`` holding only the documents ``filters`` match (ids or folder prefixes).

    Raises ``ValueError`` naming the filters if no stored document matches them.
    """
    ids = [d.id for d in ws.store.documents() if document_matches(d.id, filters)]
    if not ids:
        raise ValueError(f"no stored document matches {', '.join(map(repr, filters))}")
    return ScopedWorkspace(ws, ids, filters)


#: Scoped views a :class:`Scopes` keeps while the record is unchanged.
VIEWS_KEPT = 8


class Scopes:
    """The one scope resolver of the surfaces, for one workspace: called with document filters, it
    gives the workspace itself when there are none, else the read-only view of the documents they
    match, each filter checked first (:func:`resolve_filters`). The last :data:`VIEWS_KEPT` views
    are kept while the record is unchanged: a server asked again for the same documents reuses
    the view (and the graph it narrowed) instead of building it anew.

    Raises :class:`ScopeUnmatched` naming every filter that matches no stored document.
    """

    def __init__(self, ws: Workspace, kept: int = VIEWS_KEPT) -> None:
        self.ws, self.kept = ws, kept
        self._views: OrderedDict[tuple, ScopedWorkspace] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, filters: Sequence[str] | None) -> Workspace | ScopedWorkspace:
        if not filters:
            return self.ws
        key = (self.ws.version, resolve_filters(self.ws, filters))
        with self._lock:
            view = self._views.get(key)
        if view is None:
            view = scoped(self.ws, key[1])
            with self._lock:
                self._views[key] = view
                while len(self._views) > self.kept:
                    self._views.popitem(last=False)
        return view
