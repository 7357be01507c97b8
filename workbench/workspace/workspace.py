"""The workspace: one folder holding the SQLite record, the Chroma store, the entity-name index
and saved runs.

:class:`Workspace` is the facade every surface (CLI, app, notebooks, MCP server) uses. Writers
take a file lock on the folder, so two processes never write at once; a second writer waits
up to ``lock_timeout`` seconds and then gets :class:`WorkspaceBusy`.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Callable, Sequence

from ..context_graph.canon import Canonicalizer
from ..context_graph.derivation_rows import FILE_NAME as ROWS_FILE
from ..context_graph.graph import ContextGraph
from ..context_graph.graph_snapshot import FILE_NAME as SNAPSHOT_FILE
from ..context_graph.graph_snapshot import snapshot_counts
from ..context_graph.graph_state_file import FILE_NAME as STATE_FILE
from ..context_graph.name_scan import FILE_NAME as NAME_SCAN_FILE
from ..corpus.keyword_index import KeywordIndex, built_index, current_index
from ..embedding import Embedder, embedder_from_settings
from ..ingest.failures import StepFailed, describe_os_error
from ..ingest.file_formats import LoadProblem
from ..model import Chunk, Entity, Merge, Triple
from ..record.store import RECORD_FILE, DocumentRecord, Store, StoreUnusable, database_error_message
from ..runtime.progress import ENTITY_NAMES, GRAPH, KEYWORDS, SUMMARIES
from ..settings import Settings, load_settings
from ..vectors.compaction import compact_chunk_vectors, compaction_due
from ..vectors.entity_vectors import EntityVectors, remove_stale_temporaries
from ..vectors.in_step import VECTORS_IN_FLIGHT, stale_space, vector_writes
from ..vectors.index import CHUNKS, VectorIndex, VectorStoreMissing, chroma_client
from .corrections import Corrections
from .derivation import GraphDerivation
from .identity import WorkspaceCopied, copied_message, new_identity, record_home
from .name_index import NameIndexUpkeep, entity_vectors_key
from .ingest_pipeline import IngestReport, Progress, ingest_paths, reconcile_if_marked, reconcile_vectors, remove_documents
from .note_links import CANDIDATES_BEHIND, refresh_candidates
from .pinned_reads import Pins
from .preload import BackgroundReads
from .write_lock import WorkspaceBusy, WriteLock

__all__ = ["Workspace", "WorkspaceBusy", "WorkspaceError", "WorkspaceMissing", "ChunkNotFound", "DEFAULT_WORKSPACE"]

DEFAULT_WORKSPACE = Path("workspace")
#: The keyword index kept in the folder (:mod:`workbench.corpus.keyword_index`), made by each write step.
KEYWORD_INDEX_FILE = "keywords.npz"
#: Chunks a write may add while the vector store stays open after it (a watch's batch of a few notes).
KEEP_VECTORS_OPEN_UP_TO = 1000
#: Files derived from the record that ``repair`` removes and makes again (see docs/workspace.md).
DERIVED_FILES = (SNAPSHOT_FILE, KEYWORD_INDEX_FILE, NAME_SCAN_FILE, ROWS_FILE, STATE_FILE)
class WorkspaceError(Exception):
    """A workspace that cannot be opened: the message names the path, the problem and the fix."""


class WorkspaceMissing(WorkspaceError, FileNotFoundError):
    """The folder holds no ingested workspace (no ``workspace.sqlite``), and none may be created."""


class ChunkNotFound(KeyError):
    """No chunk has that id."""

    def __str__(self) -> str:
        return f"no chunk with id {self.args[0]!r}"


def chunk_of(store: Store, chunk_id: str) -> Chunk:
    """The chunk of ``store`` with this id; :class:`ChunkNotFound` when there is none."""
    found = store.chunks([chunk_id])
    if not found:
        raise ChunkNotFound(chunk_id)
    return found[0]


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


class Workspace:
    """A workspace folder, opened. With ``create=False`` (readers) it must already exist. Backends are passed in or made from settings.

    Example (it loads the embedding model, so it is shown rather than run)::

        ws = Workspace("workspace")
        ws.ingest(["sample_corpus"])
        ws.graph.impacted_by("redis")
    """

    #: Its graph snapshot and keyword index are read from and saved to the folder (a scoped view's are not).
    keeps_snapshot = True

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
        #: The parts: the write lock, the derived graph, one graph per query (pins), the reads
        #: started in the background, the user's corrections of the graph, the entity-name index.
        self.lock = WriteLock(self.path, lock_timeout, read_only)
        self.derivation = GraphDerivation(self.path, self.store, self.settings, self.lock)
        self.pins = Pins(self._derivation)
        self.background = BackgroundReads(self.derivation, self.entity_vectors, lambda: self.graph)
        self.corrections = Corrections(self)
        self.names = NameIndexUpkeep(self)
        #: Whether a search has started loading the vector store and the model (retrieve's prefetch).
        self._prefetched = False
        #: The keyword index this process last built or loaded, and what for ("workspace id:version"):
        #: the next build starts from it instead of reading the folder's file back.
        self._keywords: tuple[str, KeywordIndex] | None = None

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
        if seen is None or seen == version or self._vectors is None or self.lock.is_locked:
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

    # -- writing -------------------------------------------------------------------------
    def ingest(self, paths: Sequence[str | Path], progress: Progress | None = None,
               within: Sequence[str | Path] | None = None, candidates: bool = True,
               when_current: Callable[[IngestReport], object] | None = None,
               detach_saves: bool = False) -> IngestReport:
        """Bring the workspace up to date with the files under ``paths`` (see :mod:`workbench.workspace.ingest_pipeline`),
        and everything derived from the record with it, the keyword index included: a surface calls
        this and nothing after it. ``within``: only these files and folders under ``paths`` changed
        (a watch's batch): the rest is not read. Without ``candidates``, the ``SIMILAR_TO``
        candidates are left for :meth:`follow_candidates` (a watch's quiet moment).
        ``when_current(report)`` is called once everything derived is current in this process,
        before the files other processes load it from (the graph snapshot, the keyword index) are
        saved, still under the write lock, so that a reader of another process waits for them
        (:meth:`GraphDerivation.saves_deferred <workbench.workspace.derivation.GraphDerivation.saves_deferred>`):
        a watch tells its batch written there. ``detach_saves`` (a command that exits once it
        wrote): a forked child saves them, the derivation state too, and builds the keyword index
        (:meth:`GraphDerivation.publish_detached <workbench.workspace.derivation.GraphDerivation.publish_detached>`)."""
        with self.lock.hold():
            self._settle_home()
            self._mark_if_vectors_lost()
            report = ingest_paths(paths, self.store, self.vectors, self.embedder, self.settings, progress, within,
                                  candidates)
            if report.chunks_written or report.documents_removed:  # an unchanged ingest never opens Chroma
                self._compact_vectors_after(report)
            # Chroma keeps each collection it opened in memory: let it go before a large write's
            # graph is derived; the next search opens it again. A small write of a process that
            # follows its graph (a watch) keeps it: opening it again is most of such a write.
            self.names.drop_legacy()
            if report.chunks_written > KEEP_VECTORS_OPEN_UP_TO or self.derivation.state is None:
                self.vectors.release()
            deferred = when_current is not None or detach_saves
            with self.derivation.saves_deferred() if deferred else nullcontext():  # detached: keywords in the child
                self.derive_after_write(progress, report.stage_seconds, keywords=not detach_saves)
            if when_current is not None:
                when_current(report)
            if detach_saves:
                self.derivation.publish_detached(then=self.sync_keyword_index)
            elif deferred:
                self.derivation.publish()
        return report

    def follow_candidates(self) -> bool:
        """Bring the ``SIMILAR_TO`` candidates up to date when a write left them behind (a watch's
        batches leave them to its quiet moments: they compare every note); True when they were."""
        if self.store.meta(CANDIDATES_BEHIND) != "1":
            return False
        with self.lock.hold():
            if self.store.meta(CANDIDATES_BEHIND) != "1":  # another process did it meanwhile
                return False
            with vector_writes(self.store):
                refresh_candidates(self.store, self.vectors, self.embedder, self.settings.extraction.similar_notes_threshold)
            self.derive_after_write()
        return True

    def derive_after_write(self, progress: Progress | None = None, stage: dict[str, float] | None = None,
                           keywords: bool = True) -> None:
        """The end of every write step, under its lock: the graph (and its snapshot), the
        entity-name index, the summaries and the keyword index made for the record as it is now,
        so that no surface derives anything after a write and no reader pays for it. Each stage
        is told to ``progress`` and timed into ``stage``; without ``keywords``, not that index."""
        totals: dict[str, int] = {}

        def tell(label: str, done: int, total: int) -> None:
            if progress is not None:
                totals[label] = total
                progress(label, done, total)

        steps = (("graph", GRAPH, lambda: self.graph),
                 ("entity_vectors", ENTITY_NAMES,
                  lambda: self.names.sync(progress=lambda done, total: tell(ENTITY_NAMES, done, total))),
                 ("summaries", SUMMARIES, self.sync_summaries),
                 ("keywords", KEYWORDS, self.sync_keyword_index))
        for name, label, step in (step for step in steps if keywords or step[0] != "keywords"):  # each one told, so a long one is not taken for a hang
            tell(label, 0, 1)
            started = time.perf_counter()
            step()
            if stage is not None:
                stage[name] += time.perf_counter() - started
            tell(label, totals.get(label, 1), totals.get(label, 1))

    def sync_keyword_index(self) -> bool:
        """Keep ``keywords.npz`` made for the record as it is now (a write step's last stage);
        True when it was built, from the index this process holds (the folder's file when it holds
        none for this workspace). A full disk leaves it to the next reader, which builds it again."""
        path, version, workspace_id = self.path / KEYWORD_INDEX_FILE, self.store.version, self.store.workspace_id
        key = f"{workspace_id}:{version}"
        if KeywordIndex.kept_for(path, key):
            return False
        current, lent = self._held_keywords(workspace_id, key)
        if current is not None:  # built here, not saved yet (a full disk, a busy lock)
            self.save_derived(version, lambda: current.save(path, key))
            return False
        index = built_index(path, workspace_id, version, self.store, lambda save: self.save_derived(version, save),
                            lent)
        self._keywords = (key, index)
        return True

    def keyword_index(self, version: int) -> KeywordIndex:
        """BM25 over every chunk of the record at ``version``: the one this process holds for it,
        else the one kept in the folder, else built (from the one this process holds) and kept
        there when the write lock is free (:func:`~workbench.corpus.keyword_index.current_index`)."""
        workspace_id = self.store.workspace_id
        key = f"{workspace_id}:{version}"
        current, lent = self._held_keywords(workspace_id, key)
        if current is not None:
            return current
        self.derivation.wait_for_saves(version)  # a writer that said it saves this version's index
        index = current_index(self.path / KEYWORD_INDEX_FILE, workspace_id, version, self.store,
                              lambda save: self.save_derived(version, save), lent)
        if self.store.version == version:  # what it was built of (the record at another version, else)
            self._keywords = (key, index)
        return index

    def _held_keywords(self, workspace_id: str, key: str) -> tuple[KeywordIndex | None, KeywordIndex | None]:
        """The keyword index this process holds, when it is for ``key`` ("workspace id:version");
        and the one a build may start from (one of this workspace)."""
        if self._keywords is None:
            return None, None
        held_for, held = self._keywords
        return (held if held_for == key else None), (held if held_for.startswith(f"{workspace_id}:") else None)

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
        with self.lock.hold():
            # A write killed midway (a removal after its commit, say) left vectors behind.
            self._mark_if_vectors_lost()
            reconcile_if_marked(self.store, self.vectors, self.embedder)
            with vector_writes(self.store):
                remove_documents(ids, self.store, self.vectors)
                refresh_candidates(self.store, self.vectors, self.embedder, self.settings.extraction.similar_notes_threshold)
            self.derive_after_write()
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
        with self.lock.hold():
            embedded = self.settings.vector_store.backend == "embedded"
            client = None
            if not embedded or self._vector_store_exists():
                client = self._chroma if self._chroma is not None else chroma_client(self.settings, self.path)
            found = new_identity(self.store, client, self.settings.vector_store.collection_prefix, self.path,
                                 rename=embedded)
            self._vectors = None
            self.derivation.forget()
            for derived_file in DERIVED_FILES:  # keyed by the id: made again
                (self.path / derived_file).unlink(missing_ok=True)
        return found

    def repair(self) -> int:
        """Make Chroma agree with SQLite, recompute the note-similarity candidates and derive the
        graph snapshot and the keyword index again (after a crash or a failed step: see
        :class:`~workbench.ingest.failures.StepFailed`); rebuild the chunk collection without the
        slots Chroma keeps for deleted vectors (and the pages its catalogue kept of them), drop
        the chunk vectors an earlier version cached in the record beside Chroma's copy and pack
        the mentions and co-mention pairs it kept a row apiece. Returns the vectors changed."""
        with self.lock.hold():
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
            self.derivation.forget()
            self.names.sync(force=True)
            self.derive_after_write()
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
        """Why the entity-name index cannot be used, None if it can (:meth:`NameIndexUpkeep.damage
        <workbench.workspace.name_index.NameIndexUpkeep.damage>`)."""
        return self.names.damage()

    def ensure_entity_vectors(self) -> None:
        """Have the entity-name index match the graph before a search reads it (:meth:`NameIndexUpkeep.ensure
        <workbench.workspace.name_index.NameIndexUpkeep.ensure>`)."""
        self.names.ensure()

    def sync_summaries(self):
        """Store the community reports and episodes of the current version (see :mod:`workbench.corpus.summaries`)."""
        from ..corpus.summaries import sync_summaries

        return sync_summaries(self)

    def drop_summaries(self) -> None:
        """Forget the stored community reports and episodes; the next reader builds them again
        (what a workspace past ``communities.sync_max_passages`` meets after a write)."""
        from ..corpus.summaries import COMMUNITY, EPISODE, SUMMARIES_VERSION

        with self.lock.hold():
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

    @property
    def graph(self) -> ContextGraph:
        """The context graph, rebuilt when the workspace has changed since the last call (in a
        :meth:`pinned` block, the one graph the block first read)."""
        return self.pins.read()[1]

    def _derivation(self) -> tuple[int, ContextGraph]:
        derived = self.derivation.current()
        return derived.version[0], derived.graph

    @property
    def version(self) -> int:
        """The record's version (in a :meth:`pinned` block, the version of the graph it reads)."""
        return self.pins.version(lambda: self.store.version)

    def pinned(self) -> AbstractContextManager[None]:
        """Within the block, this thread reads one graph and record version (:meth:`Pins.pinned
        <workbench.workspace.pinned_reads.Pins.pinned>`)."""
        return self.pins.pinned()

    def preload(self) -> None:
        """Start reading the graph and the name index in the background (:meth:`BackgroundReads.preload
        <workbench.workspace.preload.BackgroundReads.preload>`)."""
        self.background.preload()

    def canonicalizer(self) -> Canonicalizer:
        return self.derivation.canonicalizer()

    def save_derived(self, version: int, save: Callable[[], object]) -> bool:
        """Run ``save`` under the write lock when it is free and the record still at ``version``
        (:meth:`GraphDerivation.save_derived <workbench.workspace.derivation.GraphDerivation.save_derived>`)."""
        return self.derivation.save_derived(version, save)

    def merges(self) -> list[Merge]:
        """Every canonical entity that folds two or more surface forms, with counts and chunks."""
        return self.derivation.merges()

    def candidates(self) -> list[Triple]:
        """Relations discovered automatically, suggestions kept out of the graph (see
        :meth:`Corrections.candidates <workbench.workspace.corrections.Corrections.candidates>`)."""
        return self.corrections.candidates()

    def documents(self) -> list[DocumentRecord]:
        return self.store.documents()

    def chunk(self, chunk_id: str) -> Chunk:
        return chunk_of(self.store, chunk_id)

    def chunks(self, ids: Sequence[str] | None = None) -> list[Chunk]:
        return self.store.chunks(ids)

    def entities(self) -> list[Entity]:
        """Entities, most mentioned first."""
        graph = self.graph
        return sorted(graph.entities(), key=lambda e: (-e.mentions, e.name))

    def record_stats(self) -> dict:
        """The counts the record holds, without deriving the graph."""
        return {"documents": self.store.count("documents"), "chunks": self.store.count("chunks"),
                "mentions": self.store.count("mentions"), "triples": self.store.count("triples"),
                "user_aliases": self.store.count("aliases"), "workspace": str(self.path)}

    def stats(self) -> dict:
        """:meth:`record_stats` with the graph's counts: entities, edges, co-mention edges, merges.

        Read from the graph snapshot's manifest when it is current, so a fresh process answers
        without loading the graph."""
        if not self.derivation.is_current():
            counts = self.derivation.counts_from_snapshot()
            if counts is not None:
                return {**self.record_stats(), **counts}
        return {**self.record_stats(), **snapshot_counts(self.graph, self.merges())}

    def vector_counts(self) -> dict[str, int]:
        return {"chunks": self.vectors.count(CHUNKS), "entities": self.entity_vectors.count()}

    def close(self) -> None:
        if self._vectors is not None:
            self._vectors.release()
        self.store.close()
