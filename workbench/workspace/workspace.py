"""The workspace: one folder holding the SQLite record, the Chroma store, the entity-name index
and saved runs.

:class:`Workspace` is the facade every surface (CLI, app, notebooks, MCP server) uses. Writers
take a file lock on the folder, so two processes never write at once; a second writer waits
up to ``lock_timeout`` seconds and then gets :class:`WorkspaceBusy`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from filelock import FileLock, Timeout

from ..context_graph.assemble import LazyMapping, PassageOptions, assemble_graph, graph_of_parts, note_resolver
from ..context_graph.canon import Canonicalizer, build_merges
from ..context_graph.derivation_rows import FILE_NAME as ROWS_FILE
from ..context_graph.derivation_rows import followed_rows, rows_key
from ..text.name_keys import NAME_KEY_VERSION
from ..context_graph.passages import LINK_RULES_VERSION
from ..vectors.entity_vectors import EntityVectors, EntityVectorsDamaged, remove_stale_temporaries
from ..context_graph.graph import ContextGraph
from ..context_graph.graph_snapshot import FILE_NAME as SNAPSHOT_FILE
from ..context_graph.graph_snapshot import SnapshotUnusable, load_snapshot, read_manifest, save_snapshot, snapshot_counts
from ..context_graph.name_scan import FILE_NAME as NAME_SCAN_FILE
from ..context_graph.name_scan import load_name_scan, save_name_scan
from ..corpus.keyword_index import KeywordIndex, built_index, current_index
from ..context_graph.passages import NameScan
from ..embedding import Embedder, embedder_from_settings
from ..runtime.gc_paused import gc_paused, skip_exit_collection
from ..ingest.failures import StepFailed, describe_os_error
from ..ingest.file_formats import LoadProblem
from .note_links import refresh_candidates
from ..vectors.in_step import VECTORS_IN_FLIGHT, stale_space, vector_writes
from .ingest_pipeline import IngestReport, Progress, ingest_paths, reconcile_if_marked, reconcile_vectors, remove_documents
from ..model import Chunk, Entity, Merge, Mention
from ..settings import Settings, load_settings
from ..record.store import RECORD_FILE, DocumentRecord, Store, StoreUnusable, database_error_message
from ..vectors.compaction import compact_chunk_vectors, compaction_due
from ..vectors.index import CHUNKS, VectorIndex, VectorStoreMissing, chroma_client, space_suffix
from .pinned_reads import PinnedReads
from ..runtime.progress import ENTITY_NAMES, GRAPH, KEYWORDS, SUMMARIES
from .merges import MergeSteps
from .preload import BackgroundReads
from .identity import WorkspaceCopied, copied_message, new_identity, record_home

__all__ = ["Workspace", "WorkspaceBusy", "WorkspaceError", "WorkspaceMissing", "ChunkNotFound", "DEFAULT_WORKSPACE"]

DEFAULT_WORKSPACE = Path("workspace")
#: The keyword index kept in the folder (:mod:`workbench.corpus.keyword_index`), made by each write step.
KEYWORD_INDEX_FILE = "keywords.npz"
#: Files derived from the record that ``repair`` removes and makes again (see docs/workspace.md).
DERIVED_FILES = (SNAPSHOT_FILE, KEYWORD_INDEX_FILE, NAME_SCAN_FILE, ROWS_FILE)
#: Meta key: the workspace version whose entities the entity-name index holds.
ENTITY_VECTORS_VERSION = "entity_vectors_version"


def entity_vectors_key(space: str) -> str:
    """The meta key holding the version whose entities the entity collection of ``space`` holds."""
    return ENTITY_VECTORS_VERSION + space_suffix(space)


class WorkspaceBusy(RuntimeError):
    """Another process is writing to the workspace."""


class WorkspaceError(Exception):
    """A workspace that cannot be opened: the message names the path, the problem and the fix."""


class WorkspaceMissing(WorkspaceError, FileNotFoundError):
    """The folder holds no ingested workspace (no ``workspace.sqlite``), and none may be created."""


class ChunkNotFound(KeyError):
    """No chunk has that id."""

    def __str__(self) -> str:
        return f"no chunk with id {self.args[0]!r}"


@dataclass
class _Derived:
    version: tuple
    graph: ContextGraph
    merges: list[Merge] | None = None
    """The merge record, when the snapshot held it (else derived on first use)."""


def _open_store(path: Path, create: bool) -> Store:
    """The workspace's SQLite record; with ``create=False`` nothing is created on disk.

    Raises
    ------
    WorkspaceError
        If ``path`` is a file, its database is damaged, foreign or newer, or (``WorkspaceMissing``)
        ``create`` is False and no workspace is there.
    """
    db = path / RECORD_FILE
    if path.exists() and not path.is_dir():
        raise WorkspaceError(f"workspace {path} is a file, not a folder: give --workspace a folder "
                             "(an existing workspace, or a new folder for ingest to create)")
    if not create and not (db.is_file() and db.stat().st_size > 0):
        raise WorkspaceMissing(
            f"no workspace at {path} (no workspace.sqlite there): check --workspace, or ingest a corpus "
            f"first with `python -m workbench --workspace {path} ingest <folder>`")
    if db.exists() and not db.is_file():
        raise WorkspaceError(f"workspace {path}: {db} is not a file; move it away or give another --workspace")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(f"cannot create workspace folder {path} ({exc.strerror or exc})") from None
    try:
        return Store(db)
    except StoreUnusable as exc:
        if not exc.damaged:  # the disk or the system refused it: the database is fine, nothing to move away
            raise WorkspaceError(f"workspace {path}: {exc}") from None
        raise WorkspaceError(f"workspace {path}: {exc}; move it away or give another --workspace") from None
    except sqlite3.OperationalError as exc:  # refused while creating or opening (a full disk)
        raise WorkspaceError(f"workspace {path}: {database_error_message(db, exc)[0]}") from None


class Workspace(MergeSteps, PinnedReads, BackgroundReads):
    """A workspace folder, opened. With ``create=False`` (readers) it must already exist. Backends are passed in or made from settings.

    Example (it loads the embedding model, so it is shown rather than run)::

        ws = Workspace("workspace")
        ws.ingest(["sample_corpus"])
        ws.graph.impacted_by("redis")
    """

    def __init__(self, path: str | Path = DEFAULT_WORKSPACE, settings: Settings | None = None,
                 embedder: Embedder | None = None, chroma=None, lock_timeout: float = 10.0, create: bool = True,
                 read_only: bool = False):
        self.path = Path(path)
        #: Whether this process only reads (the MCP server): it writes no file, derived ones included.
        self.read_only = read_only
        self.settings = settings if settings is not None else load_settings()
        self.store = _open_store(self.path, create)
        self.embedder = embedder if embedder is not None else embedder_from_settings(self.settings)
        self._chroma = chroma
        self._vectors: VectorIndex | None = None
        self._vectors_checked: tuple | None = None
        self._version_seen: int | None = None  # the record version follow_writes last saw
        self.entity_vectors = EntityVectors(self.path)
        self._lock = FileLock(str(self.path / "workspace.lock"))
        self.lock_timeout = lock_timeout
        self._derived: _Derived | None = None
        self._derive_lock = threading.Lock()
        self._merges: tuple[int, list[Merge]] | None = None
        self._builder: threading.Thread | None = None
        self._names_loader: threading.Thread | None = None
        self._builder_lock = threading.Lock()
        self._merges_lock = threading.Lock()
        #: How the graph was last had: ``loaded`` from the snapshot, or ``rebuilt: <why>``.
        self.snapshot_status: str | None = None
        #: How the last derivation of this process had its rows: followed from the kept ones, or read whole.
        self.rows_status: str | None = None
        #: Whether the graph is read from and saved to the snapshot (not by a scoped view).
        self.keeps_snapshot = True
        #: Whether a search has started loading the vector store and the model (retrieve's prefetch).
        self._prefetched = False
        self._pins = threading.local()  # each thread's pinned derivation (see pinned)
        self._legacy_looked_at = False  # see _drop_legacy_entity_vectors

    # -- backends ----------------------------------------------------------------------
    @property
    def vectors(self) -> VectorIndex:
        """The Chroma collections of the embedder's vector space (see :mod:`workbench.vectors.index`)."""
        space = self.embedder.name
        if self._vectors is None:
            copied = copied_message(self.store, self.path) if self.settings.vector_store.backend == "server" else None
            if copied is not None:  # the copy and its original would share one set of collections
                raise WorkspaceCopied(copied)
            client = self._chroma if self._chroma is not None else (lambda: chroma_client(self.settings, self.path))
            self._vectors = VectorIndex(client, self.settings.vector_store.collection_prefix, self.store.workspace_id,
                                        space, guard=lambda searched: stale_space(self.store, searched),
                                        verify=self._verify_vectors, exists=self._vector_store_exists)
        elif self._vectors.space != space:  # the embedder was swapped: its own collections
            self._vectors = self._vectors.in_space(space)
        self.follow_writes()
        return self._vectors

    def follow_writes(self) -> bool:
        """Reopen the vector store when another process wrote a newer record version since this
        handle last looked; True when it was closed for the next read to open it again.

        An embedded Chroma client searches the index it loaded: vectors another process added stay
        unfound (though counted) until the client is opened again. Everything else a reader holds
        follows the record's version by itself (the graph, the merges, the retrieval indexes) or
        its file (the entity-name index). Asked by every use of :attr:`vectors`, so a notebook's
        open workspace, the app and the MCP server answer from the newer record; while this
        process holds the write lock the versions are its own."""
        version = self.store.version
        seen, self._version_seen = self._version_seen, version
        if seen is None or seen == version or self._vectors is None or self._lock.is_locked:
            return False
        if self._vectors.release():
            return True
        if self._chroma is None and self._vectors.is_open:  # a search is using it: closed by a later look
            self._version_seen = seen
        return False

    def _vector_store_exists(self) -> bool:
        """Whether the vector store is there to read: a server always, an embedded one when its
        folder exists (a reader must not create it: ``chromadb.PersistentClient`` would)."""
        return self.settings.vector_store.backend == "server" or (self.path / "chroma").is_dir()

    def _verify_vectors(self, index: VectorIndex) -> None:
        """Raise :class:`VectorStoreMissing` when the chunk vectors of ``index`` are gone or fewer or
        more than the chunks stored; checked once per record version (one count, no vectors read).
        While a write is under way (or was killed) the counts may differ: the writer's own
        reconciliation, or ``repair``, settles them, so nothing is said then."""
        checked = (self.store.version, index.space)
        if self._vectors_checked == checked or self.interrupted:
            return
        stored = self.store.count("chunks")
        where = (f"server {self.settings.vector_store.host}:{self.settings.vector_store.port}"
                 if self.settings.vector_store.backend == "server" else str(self.path / "chroma"))
        fix = f"run `python -m workbench --workspace {self.path} repair` to rebuild it from the record " \
              "(the chunks it lacks are embedded again)"
        if stored and not self._vector_store_exists():
            raise VectorStoreMissing(f"the vector store {where} is missing ({stored} chunks are stored): {fix}")
        held = index.count(CHUNKS)
        if held != stored:
            raise VectorStoreMissing(f"the vector store {where} holds {held} chunk vectors for {stored} stored "
                                     f"chunks: {fix}")
        self._vectors_checked = checked

    def _mark_if_vectors_lost(self) -> None:
        """Mark the vectors as behind when the embedded store's folder is gone while chunks are
        stored (``rm -rf chroma``), so this write step reconciles them (the report counts them
        repaired). Only the folder is looked at: a step that touches no vector never opens Chroma
        (a collection emptied inside it is found by the next search, which names ``repair``)."""
        if not self._vector_store_exists() and self.store.count("chunks"):
            self.store.set_meta(VECTORS_IN_FLIGHT, "1")

    def _write_lock(self):
        """The workspace's write lock, held for one ``with`` block (acquired exactly once)."""
        try:
            return self._lock.acquire(timeout=self.lock_timeout)
        except Timeout:
            raise WorkspaceBusy(
                f"workspace {self.path} is busy: another process is writing to it; try again when it finishes"
            ) from None

    # -- writing -------------------------------------------------------------------------
    def ingest(self, paths: Sequence[str | Path], progress: Progress | None = None) -> IngestReport:
        """Bring the workspace up to date with the files under ``paths`` (see :mod:`workbench.workspace.ingest_pipeline`),
        and everything derived from the record with it, the keyword index included: a surface calls
        this and nothing after it."""
        with self._write_lock():
            self._settle_home()
            self._mark_if_vectors_lost()
            report = ingest_paths(paths, self.store, self.vectors, self.embedder, self.settings, progress)
            if report.chunks_written or report.documents_removed:  # an unchanged ingest never opens Chroma
                self._compact_vectors_after(report)
            # Chroma keeps each collection it opened in memory: let it go before the graph is
            # derived; the next search opens it again.
            self._drop_legacy_entity_vectors()
            self.vectors.release()
            self._derive_after_write(progress, report.stage_seconds)
        return report

    def _derive_after_write(self, progress: Progress | None = None, stage: dict[str, float] | None = None) -> None:
        """The end of every write step, under its lock: the graph (and its snapshot), the
        entity-name index, the summaries and the keyword index made for the record as it is now,
        so that no surface derives anything after a write and no reader pays for it. Each stage
        is told to ``progress`` and timed into ``stage``."""
        totals: dict[str, int] = {}

        def tell(label: str, done: int, total: int) -> None:
            if progress is not None:
                totals[label] = total
                progress(label, done, total)

        steps = (("graph", GRAPH, lambda: self.graph),
                 ("entity_vectors", ENTITY_NAMES,
                  lambda: self.sync_entity_vectors(progress=lambda done, total: tell(ENTITY_NAMES, done, total))),
                 ("summaries", SUMMARIES, self.sync_summaries),
                 ("keywords", KEYWORDS, self.sync_keyword_index))
        for name, label, step in steps:  # each one told, so a long one is not taken for a hang
            tell(label, 0, 1)
            started = time.perf_counter()
            step()
            if stage is not None:
                stage[name] += time.perf_counter() - started
            tell(label, totals.get(label, 1), totals.get(label, 1))

    def sync_keyword_index(self) -> bool:
        """Keep ``keywords.npz`` made for the record as it is now (a write step's last stage);
        True when it was built. A full disk leaves it to the next reader, which builds it again."""
        path, version = self.path / KEYWORD_INDEX_FILE, self.store.version
        if KeywordIndex.kept_for(path, f"{self.store.workspace_id}:{version}"):
            return False
        built_index(path, self.store.workspace_id, version, self.store.chunks, lambda save: self.save_derived(version, save))
        return True

    def keyword_index(self, version: int) -> KeywordIndex:
        """BM25 over every chunk of the record at ``version``: the one kept in the folder, else
        built and kept there when the write lock is free (:func:`~workbench.corpus.keyword_index.current_index`)."""
        return current_index(self.path / KEYWORD_INDEX_FILE, self.store.workspace_id, version, self.store.chunks,
                             lambda save: self.save_derived(version, save))

    def documents_under(self, path: str | Path) -> list[str]:
        """Ids of the stored documents of a file, a folder or a document id (nothing is changed)."""
        p = Path(path)
        ids = self.store.documents_under(str(p.resolve())) if p.exists() or p.is_absolute() else []
        if not ids:
            key = str(path).rstrip("/")
            known = self.store.document_sources()
            ids = sorted(i for i in known if i == key or i.startswith(key + "/") or i.startswith(key + "#"))
        return ids

    @property
    def interrupted(self) -> bool:
        """Whether a write was killed midway (its next write, or ``repair``, completes it)."""
        return self.store.meta(VECTORS_IN_FLIGHT) != "0"

    def remove(self, path: str | Path | Sequence[str | Path]) -> list[str]:
        """Remove the documents of a file, a folder or a document id, or of several of them in one
        write (one vector compaction, however many). Returns the ids removed.

        A write interrupted before (a removal killed after its commit, say) is completed first,
        even when nothing is left to remove. Raises :class:`StepFailed` after the removal when the
        chunk collection, due for a rebuild, could not be rebuilt (the removal stands).
        """
        paths = [path] if isinstance(path, (str, Path)) else list(path)
        ids = sorted({i for p in paths for i in self.documents_under(p)})
        with self._write_lock():
            # A write killed midway (a removal after its commit, say) left vectors behind.
            self._mark_if_vectors_lost()
            reconcile_if_marked(self.store, self.vectors, self.embedder)
            with vector_writes(self.store):
                remove_documents(ids, self.store, self.vectors)
                refresh_candidates(self.store, self.vectors, self.embedder, self.settings.extraction.similar_notes_threshold)
            self._derive_after_write()
            failure = self._compact_vectors_or_say()[1] if ids else None
        if failure is not None:
            documents = f"{len(ids)} document" + ("s" if len(ids) != 1 else "")
            removed = ", ".join(map(str, paths))
            raise StepFailed(f"removed {removed} ({documents}); {self.path / 'chroma'} {failure}")
        return ids

    def _settle_home(self) -> None:
        """In a write step: record the folder the record lives in, the first time; an embedded
        copy (``cp -r``) takes an id of its own at once, so its derived files, keyed by the id,
        are never taken for a sibling copy's. A copy on a Chroma server waits for ``repair
        --new-identity`` (its vectors are refused until then)."""
        if copied_message(self.store, self.path) is None:
            record_home(self.store, self.path)
        elif self.settings.vector_store.backend == "embedded":
            self.new_identity()

    def new_identity(self) -> tuple[str, str, int]:
        """Give this workspace an id of its own and record its folder (after ``cp -r``: the copy
        keeps the original's id, and so its collections on a Chroma server); its vectors are
        copied into its own collections (renamed, in an embedded store), its derived files made
        again. Returns ``(old id, new id, vectors copied)``; :meth:`repair` should follow."""
        with self._write_lock():
            embedded = self.settings.vector_store.backend == "embedded"
            client = None
            if not embedded or self._vector_store_exists():
                client = self._chroma if self._chroma is not None else chroma_client(self.settings, self.path)
            found = new_identity(self.store, client, self.settings.vector_store.collection_prefix, self.path,
                                 rename=embedded)
            self._vectors, self._derived = None, None
            for derived_file in DERIVED_FILES:  # keyed by the id: made again
                (self.path / derived_file).unlink(missing_ok=True)
        return found

    def repair(self) -> int:
        """Make Chroma agree with SQLite, recompute the note-similarity candidates and derive the
        graph snapshot and the keyword index again (after a crash or a failed step: see
        :class:`~workbench.workspace.ingest_pipeline.StepFailed`); rebuild the chunk collection without the
        slots Chroma keeps for deleted vectors (and the pages its catalogue kept of them), drop
        the chunk vectors an earlier version cached in the record beside Chroma's copy and pack
        the mentions and co-mention pairs it kept a row apiece. Returns the vectors changed."""
        with self._write_lock():
            remove_stale_temporaries(self.path)
            with vector_writes(self.store):
                changed = reconcile_vectors(self.store, self.vectors, self.embedder)
                refresh_candidates(self.store, self.vectors, self.embedder, self.settings.extraction.similar_notes_threshold,
                                   full=True)
            self._compact_vectors(due=True)  # whatever was deleted, counted or before deletions were counted
            self.store.drop_cached_chunk_vectors(self.embedder.name)  # Chroma now holds every chunk
            self.store.pack_unpacked_rows()  # the mentions and pairs an earlier version kept a row apiece
            for derived_file in DERIVED_FILES:  # made again from the record, whatever state they were in
                (self.path / derived_file).unlink(missing_ok=True)
            self._derived = None
            self.sync_entity_vectors(force=True)
            self._derive_after_write()
        return changed

    def _compact_vectors_after(self, report: IngestReport) -> None:
        """Compact the chunk collection after an ingest when due; a failure (a full disk, say) is
        one of the report's problems, not the ingest's (:meth:`_compact_vectors_or_say`)."""
        started = time.perf_counter()
        report.vector_slots_freed, failure = self._compact_vectors_or_say()
        if failure is not None:
            report.problems.append(LoadProblem(str(self.path / "chroma"), failure + "; everything ingested is kept",
                                               skipped=False))
        report.stage_seconds["compact_vectors"] += time.perf_counter() - started

    def _compact_vectors_or_say(self) -> tuple[int, str | None]:
        """``(slots freed, None)``, or ``(0, what failed)``: the step's own writes are committed,
        the next write step drops the copy begun, and ``repair`` (or a write step that changes
        something) rebuilds."""
        try:
            return self._compact_vectors(), None
        except Exception as exc:  # Chroma's errors have no common base; none may undo a committed step
            reason = describe_os_error(exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
            return 0, (f"not rebuilt without the slots of its deleted vectors ({reason}): "
                       f"`python -m workbench --workspace {self.path} repair` rebuilds it")

    def _compact_vectors(self, due: bool = False) -> int:
        """Rebuild the chunk collection when its deleted vectors' slots are ``due`` or
        :func:`~workbench.vectors.compaction.compaction_due`. Returns the slots freed."""
        if not due and not compaction_due(self.vectors.deleted(CHUNKS), self.store.count("chunks")):
            return 0
        local = self.settings.vector_store.backend != "server"  # a server keeps its own files
        return compact_chunk_vectors(self.store, self.vectors, self.path / "chroma" if local else None)

    def sync_entity_vectors(self, force: bool = False, progress: Callable[[int, int], None] | None = None) -> int:
        """Keep the entity-name index equal to the graph's entities. Returns the entries changed.

        Skipped when nothing changed since the last complete sync (unless ``force``, which also
        writes the index whole, folding in its delta: ``repair``). ``progress(rows, of rows)``
        follows the rows written (a long step on a first ingest of many names).
        """
        version = str(self.store.version)
        mark = entity_vectors_key(self.embedder.name)  # each vector space is synced on its own
        if not force and self.store.meta(mark) == version and self.entity_vectors.version() == version \
                and self.entity_vectors.space() == self.embedder.name:
            return 0
        remove_stale_temporaries(self.path)  # left by a write killed or refused (disk full) before
        self._drop_legacy_entity_vectors()
        graph = self.graph
        wanted = {entity.key: entity.name for entity in graph.entities()}
        try:
            changed = self.entity_vectors.sync(wanted, version, self.embedder.name,
                                               self.embedder.embed,
                                               dimension=getattr(self.embedder, "dimension", None), whole=force,
                                               progress=progress)
        except OSError as exc:  # a full disk, an I/O error: the record is complete, this file is not
            raise StepFailed(
                f"writing {self.entity_vectors.path} failed ({describe_os_error(exc)}); every change is kept in "
                f"the record: free disk space, then run `python -m workbench --workspace {self.path} repair` "
                "(the next write step finishes it too)") from exc
        self.store.set_meta(mark, version)
        return changed

    def _drop_legacy_entity_vectors(self) -> None:
        """Remove the entity-name collection an earlier version kept in Chroma, when this workspace
        has no entity-name index yet; looked at once by this handle."""
        if not self._legacy_looked_at and self.entity_vectors.version() is None \
                and self.entity_vectors.damage() is None:
            self.vectors.drop_legacy_entities()
        self._legacy_looked_at = True

    def unfinished(self) -> str | None:
        """What a write step killed or failed midway left undone (None: nothing), which the next
        write step (``ingest``, ``remove``, an alias...) or ``repair`` completes."""
        if self.interrupted:
            return "the vector store was being written"
        version = str(self.store.version)
        if self.store.meta(entity_vectors_key(self.embedder.name)) != version:
            return f"the entity-name index ({self.entity_vectors.path.name}) was being written"
        if self.entity_index_damage() is not None:
            return f"the entity-name index ({self.entity_vectors.path.name}) is damaged"
        return None

    def entity_index_damage(self) -> str | None:
        """Why the entity-name index cannot be used (see :meth:`EntityVectors.damage`), None if it can."""
        return self.entity_vectors.damage(self.embedder.name, getattr(self.embedder, "dimension", None))

    def ensure_entity_vectors(self) -> None:
        """Build the entity-name index if the folder has none (a workspace made before it existed).

        Also rebuilt when damaged, and synced when it was made for an older record while no
        writer is at work (a step died before syncing it). Skipped when another process is writing (name search uses the
        index as it is, or none). A read-only workspace (the MCP server) writes nothing: a damaged
        index then fails the search with :class:`EntityVectorsDamaged`, naming ``repair``. An index
        of another embedder (``embedding.backend`` switched) is not rebuilt on a read: name search
        finds nothing in it, like vector search, until ``ingest`` or ``repair`` syncs the new space.
        """
        damaged = self.entity_index_damage() is not None
        built_for = self.entity_vectors.version()
        if built_for is not None and not damaged:
            if built_for != str(self.store.version) and not self.read_only and not self.interrupted \
                    and self.entity_vectors.space() == self.embedder.name and self._try_write_lock():
                # Made for an older record and no writer at work: a step died before it synced it.
                try:
                    self.sync_entity_vectors()
                except (AttributeError, OSError, StepFailed):  # a scoped view, a full disk: used as it is
                    pass
                finally:
                    self._lock.release()
            return
        if not len(self.graph):
            return
        if self.read_only:
            if damaged:  # the search itself says so, naming repair
                return
            raise EntityVectorsDamaged(f"the entity-name index {self.entity_vectors.path} is missing: run "
                                       f"`python -m workbench --workspace {self.path} repair` to build it from the record")
        try:
            with self._write_lock():
                self.sync_entity_vectors(force=True)
        except (WorkspaceBusy, AttributeError, OSError, StepFailed):  # busy, a read-only scoped view, a full disk
            pass

    def sync_summaries(self):
        """Store the community reports and episodes of the current version (see :mod:`workbench.corpus.summaries`)."""
        from ..corpus.summaries import sync_summaries

        return sync_summaries(self)

    def drop_summaries(self) -> None:
        """Forget the stored community reports and episodes; the next reader builds them again
        (what a workspace past ``communities.sync_max_passages`` meets after a write)."""
        from ..corpus.summaries import COMMUNITY, EPISODE, SUMMARIES_VERSION

        with self._write_lock():
            self.store.replace_summaries({COMMUNITY: [], EPISODE: []}, SUMMARIES_VERSION, "")

    # -- reading -------------------------------------------------------------------------
    def summaries(self):
        """Community reports and episodes of the current version, stored or built (and then stored
        when the write lock is free, see :mod:`workbench.corpus.summaries`)."""
        from ..corpus.summaries import current_summaries

        return current_summaries(self)

    def communities(self):
        """Community reports, largest community first."""
        return self.summaries().reports

    def episodes(self):
        """Episodes (sessions of the conversation logs), by start time; no community is detected
        for them (:func:`~workbench.corpus.summaries.current_episodes`)."""
        from ..corpus.summaries import current_episodes

        return current_episodes(self)

    def canonicalizer(self) -> Canonicalizer:
        c = self.settings.canonicalization
        return Canonicalizer(aliases=c.aliases, user_aliases=self.store.aliases(), splits=self.store.splits(),
                             articles=tuple(c.articles))

    def _derive_key(self) -> tuple:
        """What the derived graph depends on: the record's version and the graph settings."""
        return (self.store.version, PassageOptions.from_settings(self.settings.graph),
                tuple(self.settings.graph.impact_relations))

    def _snapshot_key(self, version: tuple) -> str:
        """The derivation key a graph snapshot is made for: this workspace, its record version and
        every setting that shapes the graph (see :mod:`workbench.context_graph.graph_snapshot`)."""
        record, options, impact = version
        shaping = {"workspace": self.store.workspace_id, "version": record, "passages": asdict(options),
                   "name_key": NAME_KEY_VERSION, "link_rules": LINK_RULES_VERSION,
                   "impact_relations": list(impact),
                   "canonicalization": self.settings.canonicalization.model_dump(mode="json")}
        return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()

    def _derive(self) -> _Derived:
        version = self._derive_key()
        with self._derive_lock:
            if self._derived is None or self._derived.version != version:
                self._derived = self._load_or_assemble(version)
                skip_exit_collection()  # a graph of millions of objects: not walked once more at exit
            return self._derived

    def _load_or_assemble(self, version: tuple) -> _Derived:
        """The graph from the snapshot made for ``version``; else assembled from the record and,
        when this thread can write, saved as the snapshot for the next process."""
        key = self._snapshot_key(version)
        if self.keeps_snapshot:
            try:
                snapshot = load_snapshot(self.path, key, key_of=self.canonicalizer().key)
                self.snapshot_status = "loaded"
                return _Derived(version, snapshot.graph, snapshot.merges)
            except SnapshotUnusable as exc:
                self.snapshot_status = f"rebuilt: {exc}"
        writing = self.keeps_snapshot and self._try_write_lock()
        try:
            current = self._derive_key() if writing else version
            if current != version:  # the record moved on before the lock was had
                version, key = current, self._snapshot_key(current)
            canonicalizer = self.canonicalizer()  # one, so each surface is resolved once
            if not writing:
                # Mentions and triples stream from SQLite (1.7 M rows for a 30 MB file are never
                # held at once); the names found in each passage last time are reused where they
                # stand (workbench.context_graph.name_scan).
                graph = self.assemble_from_record(version[1], previous_scan=load_name_scan(self.path),
                                                  canonicalizer=canonicalizer)
                return _Derived(version, graph)
            # The writer follows the record with the rows kept beside it: only rows added since
            # the last derivation are canonicalized (workbench.context_graph.derivation_rows).
            rows_file = rows_key(self.store.workspace_id, self.settings.canonicalization.model_dump(mode="json"))
            rows, chunk_context, self.rows_status = followed_rows(self.path, rows_file, self.store, canonicalizer)
            with gc_paused():
                parts, merges = rows.derive(chunk_context, canonicalizer,
                                            LazyMapping(lambda: note_resolver(self.store.documents())))
                graph = graph_of_parts(parts, chunk_context, canonicalizer,
                                       self.settings.graph.impact_relations, self.store.chunk_texts(), version[1],
                                       self.store.rejected_suggestions(), load_name_scan(self.path))
            derived = _Derived(version, graph, merges)
            try:
                save_snapshot(self.path, key, graph, merges)
                if graph.passages.scan is not None:
                    save_name_scan(self.path, graph.passages.scan)
                rows.save(self.path, rows_file)
            except OSError:  # a full disk, a read-only folder: the next write step tries again
                pass
            return derived
        finally:
            if writing:
                self._lock.release()

    def assemble_from_record(self, options: PassageOptions | None = None,
                             mentions: Iterable[Mention] | None = None,
                             previous_scan: NameScan | None = None,
                             canonicalizer: Canonicalizer | None = None) -> ContextGraph:
        """The graph derived from the record now (its ``mentions``, when read already), the snapshot
        left aside (what a write step does); ``previous_scan`` spares reading passages again."""
        return assemble_graph(
            self.store.iter_mentions() if mentions is None else mentions, self.store.iter_triples(),
            self.store.chunk_context(), canonicalizer or self.canonicalizer(),
            notes=LazyMapping(lambda: note_resolver(self.store.documents())),
            impact_relations=self.settings.graph.impact_relations,
            chunk_texts=self.store.chunk_texts(),
            passage_options=options or PassageOptions.from_settings(self.settings.graph),
            rejected=self.store.rejected_suggestions(),
            previous_scan=previous_scan,
        )

    def save_derived(self, version: int, save: Callable[[], object]) -> bool:
        """Run ``save`` under the write lock when it is free now and the record is still at
        ``version`` (see :class:`~workbench.corpus.workspace_view.WorkspaceView`); a full disk makes it
        False, the file is then derived again by the next process."""
        if not (self.keeps_snapshot and self._try_write_lock()):
            return False
        try:
            if self.store.version != version:
                return False
            save()
            return True
        except (OSError, sqlite3.Error):
            return False
        finally:
            self._lock.release()

    def _try_write_lock(self) -> bool:
        """Take the write lock if it is free now, or already this thread's (never waits); never for
        a read-only workspace, which so saves no derived file."""
        if self.read_only:
            return False
        try:
            self._lock.acquire(timeout=0)
            return True
        except (Timeout, OSError):
            return False

    @property
    def graph(self) -> ContextGraph:
        """The context graph, rebuilt when the workspace has changed since the last call (in a
        :meth:`pinned` block, the one graph the block first read)."""
        return self._pinned_or_current()[1]

    def _derivation(self) -> tuple[int, ContextGraph]:
        derived = self._derive()
        return derived.version[0], derived.graph

    @property
    def version(self) -> int:
        """The record's version (in a :meth:`pinned` block, the version of the graph it reads)."""
        return self._pinned_or_current()[0] if self._is_pinned() else self.store.version

    def documents(self) -> list[DocumentRecord]:
        return self.store.documents()

    def chunk(self, chunk_id: str) -> Chunk:
        found = self.store.chunks([chunk_id])
        if not found:
            raise ChunkNotFound(chunk_id)
        return found[0]

    def chunks(self, ids: Sequence[str] | None = None) -> list[Chunk]:
        return self.store.chunks(ids)

    def entities(self) -> list[Entity]:
        """Entities, most mentioned first."""
        graph = self.graph
        return sorted(graph.entities(), key=lambda e: (-e.mentions, e.name))

    def merges(self) -> list[Merge]:
        """Every canonical entity that folds two or more surface forms, with counts and chunks.

        Kept until the record changes: they are slow to derive on a large corpus, and the app's
        front page counts them at every rerun."""
        version = self.store.version
        with self._merges_lock:
            if self._merges is None or self._merges[0] != version:
                derived = self._derived
                if (derived is None or derived.version != self._derive_key()) and self._current_manifest() is not None:
                    derived = self._derive()  # the current snapshot keeps the merges: loading it is far
                    # cheaper than reading and canonicalizing every mention again
                kept = derived.merges if derived is not None and derived.version == self._derive_key() else None
                self._merges = (version, kept if kept is not None else
                                build_merges(self.store.iter_mentions(), self.canonicalizer()))
            return list(self._merges[1])

    def record_stats(self) -> dict:
        """The counts the record holds, without deriving the graph."""
        return {"documents": self.store.count("documents"), "chunks": self.store.count("chunks"),
                "mentions": self.store.count("mentions"), "triples": self.store.count("triples"),
                "user_aliases": self.store.count("aliases"), "workspace": str(self.path)}

    def stats(self) -> dict:
        """:meth:`record_stats` with the graph's counts: entities, edges, co-mention edges, merges.

        Read from the graph snapshot's manifest when it is current, so a fresh process answers
        without loading the graph."""
        derived = self._derived
        if derived is None or derived.version != self._derive_key():
            from_manifest = self.stats_from_snapshot()
            if from_manifest is not None:
                return from_manifest
        return {**self.record_stats(), **snapshot_counts(self.graph, self.merges())}

    def stats_from_snapshot(self) -> dict | None:
        """:meth:`stats` as the current graph snapshot's manifest keeps them, loading no graph;
        None when there is no current snapshot."""
        manifest = self._current_manifest()
        try:
            return None if manifest is None else {**self.record_stats(), **manifest["counts"]}
        except (KeyError, TypeError):
            return None

    def _current_manifest(self) -> dict | None:
        """The graph snapshot's manifest when the snapshot is made for the record and settings as
        they are now (read alone, no graph loaded); else None."""
        if not self.keeps_snapshot:
            return None
        try:
            manifest = read_manifest(self.path)
            return manifest if manifest.get("key") == self._snapshot_key(self._derive_key()) else None
        except SnapshotUnusable:
            return None

    def vector_counts(self) -> dict[str, int]:
        return {"chunks": self.vectors.count(CHUNKS), "entities": self.entity_vectors.count()}

    def close(self) -> None:
        if self._vectors is not None:
            self._vectors.release()
        self.store.close()
