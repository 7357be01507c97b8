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
from typing import Any, Iterable, Sequence

from filelock import FileLock, Timeout

from .assemble import LazyMapping, PassageOptions, assemble_graph, note_resolver
from .canon import (NAME_KEY_VERSION, Canonicalizer, FormTally, MergeSuggestion, SuggestionPage, build_merges,
                    combine_suggestions, cross_language_suggestions, declared_alias_suggestions, display_form,
                    lookalike_suggestions, name_key, page_of, rank_suggestions, suggest_merges)
from .embedding import Embedder, embedder_from_settings
from .entity_vectors import EntityVectors, EntityVectorsDamaged, remove_stale_temporaries
from .graph import ContextGraph
from .graph_snapshot import FILE_NAME as SNAPSHOT_FILE
from .graph_snapshot import SnapshotUnusable, load_snapshot, read_manifest, save_snapshot, snapshot_counts
from .ingest import (CacheFirstEmbedder, IngestReport, Progress, StepFailed, describe_os_error, embed_cached,
                     ingest_paths, refresh_candidates, VECTORS_IN_FLIGHT, reconcile_if_marked, reconcile_vectors,
                     remove_documents, stale_space, vector_writes)
from .model import Chunk, Entity, Merge, Mention, Triple
from .name_scan import FILE_NAME as NAME_SCAN_FILE
from .name_scan import load_name_scan, save_name_scan
from .passages import NameScan
from .settings import Settings, load_settings
from .store import DocumentRecord, Store, StoreUnusable, database_error_message
from .vectors import CHUNKS, VectorIndex, VectorStoreMissing, chroma_client, space_suffix

__all__ = ["Workspace", "WorkspaceBusy", "WorkspaceError", "WorkspaceMissing", "ChunkNotFound", "DEFAULT_WORKSPACE"]

DEFAULT_WORKSPACE = Path("workspace")
#: Above this many entities, merge suggestions compare spellings only, not name embeddings.
EMBEDDING_SUGGESTION_LIMIT = 5000
#: The keyword index kept in the folder (written and read by :mod:`workbench.retrieve.cache`).
KEYWORD_INDEX_FILE = "keywords.npz"
#: Files derived from the record that ``repair`` removes and makes again (see README, the workspace on disk).
DERIVED_FILES = (SNAPSHOT_FILE, KEYWORD_INDEX_FILE, NAME_SCAN_FILE)
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
    db = path / "workspace.sqlite"
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
        self.entity_vectors = EntityVectors(self.path)
        self._lock = FileLock(str(self.path / "workspace.lock"))
        self.lock_timeout = lock_timeout
        self._derived: _Derived | None = None
        self._derive_lock = threading.Lock()
        self._merges: tuple[int, list[Merge]] | None = None
        self._builder: threading.Thread | None = None
        self._builder_lock = threading.Lock()
        self._merges_lock = threading.Lock()
        #: How the graph was last had: ``loaded`` from the snapshot, or ``rebuilt: <why>``.
        self.snapshot_status: str | None = None
        #: Whether the graph is read from and saved to the snapshot (not by a scoped view).
        self.keeps_snapshot = True
        #: Whether a search has started loading the vector store and the model (retrieve's prefetch).
        self._prefetched = False

    # -- backends ----------------------------------------------------------------------
    @property
    def vectors(self) -> VectorIndex:
        """The Chroma collections of the embedder's vector space (see :mod:`workbench.vectors`)."""
        space = self.embedder.name
        if self._vectors is None:
            client = self._chroma if self._chroma is not None else (lambda: chroma_client(self.settings, self.path))
            self._vectors = VectorIndex(client, self.settings.vector_store.collection_prefix, self.store.workspace_id,
                                        space, guard=lambda searched: stale_space(self.store, searched),
                                        verify=self._verify_vectors, exists=self._vector_store_exists)
        elif self._vectors.space != space:  # the embedder was swapped: its own collections
            self._vectors = self._vectors.in_space(space)
        return self._vectors

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
              "(embeddings are cached: nothing is embedded again)"
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
        """Bring the workspace up to date with the files under ``paths`` (see :mod:`workbench.ingest`)."""
        with self._write_lock():
            self._mark_if_vectors_lost()
            report = ingest_paths(paths, self.store, self.vectors, self.embedder, self.settings, progress)
            stage = report.stage_seconds
            for name, step in (("graph", lambda: self.graph), ("entity_vectors", self.sync_entity_vectors),
                               ("summaries", self.sync_summaries)):
                started = time.perf_counter()
                step()
                stage[name] += time.perf_counter() - started
        return report

    def documents_under(self, path: str | Path) -> list[str]:
        """Ids of the stored documents of a file, a folder or a document id (nothing is changed)."""
        p = Path(path)
        ids = self.store.documents_under(str(p.resolve())) if p.exists() or p.is_absolute() else []
        if not ids:
            key = str(path).rstrip("/")
            known = {d.id for d in self.store.documents()}
            ids = sorted(i for i in known if i == key or i.startswith(key + "/") or i.startswith(key + "#"))
        return ids

    @property
    def interrupted(self) -> bool:
        """Whether a write was killed midway (its next write, or ``repair``, completes it)."""
        return self.store.meta(VECTORS_IN_FLIGHT) != "0"

    def remove(self, path: str | Path) -> list[str]:
        """Remove the documents of a file, a folder or a document id. Returns the ids removed.

        A write interrupted before (a removal killed after its commit, say) is completed first,
        even when nothing is left to remove.
        """
        ids = self.documents_under(path)
        with self._write_lock():
            # A write killed midway (a removal after its commit, say) left vectors behind.
            self._mark_if_vectors_lost()
            reconcile_if_marked(self.store, self.vectors, self.embedder)
            with vector_writes(self.store):
                remove_documents(ids, self.store, self.vectors)
                refresh_candidates(self.store, self.embedder, self.settings.extraction.similar_notes_threshold)
            self.sync_entity_vectors()
            self.sync_summaries()
        return ids

    def repair(self) -> int:
        """Make Chroma agree with SQLite, recompute the note-similarity candidates and derive the
        graph snapshot and the keyword index again (after a crash or a failed step: see
        :class:`~workbench.ingest.StepFailed`). Returns the vectors changed."""
        with self._write_lock():
            remove_stale_temporaries(self.path)
            with vector_writes(self.store):
                changed = reconcile_vectors(self.store, self.vectors, self.embedder)
                refresh_candidates(self.store, self.embedder, self.settings.extraction.similar_notes_threshold,
                                   full=True)
            for derived_file in DERIVED_FILES:  # made again from the record, whatever state they were in
                (self.path / derived_file).unlink(missing_ok=True)
            self._derived = None
            self.sync_entity_vectors(force=True)
            self.sync_summaries()
        return changed

    def add_alias(self, alias: str, canonical: str) -> None:
        """Merge ``alias`` into ``canonical``: from now on both are one entity."""
        if not name_key(alias) or not name_key(canonical):
            raise ValueError("an alias and its canonical name must both contain letters or digits")
        if name_key(alias) == name_key(canonical):
            # One name key, but a split may keep them apart: merging them again undoes the split.
            split = next((f for f in (alias, canonical) if display_form(f).lower() in self.store.splits()), None)
            if split is None:
                raise ValueError(f"{alias!r} and {canonical!r} are already one name")
            self.unsplit(split)
            return
        self._alias_action("alias", alias, canonical, {})

    def _alias_action(self, action: str, alias: str, canonical: str, extra: dict) -> None:
        detail = {"alias": alias, "canonical": canonical, **extra}
        current = self.store.aliases().get(alias)
        done = current == canonical  # a rerun, after a crash say: log it once
        if current is not None and not done:
            detail["replaced"] = current  # so that an undo restores it
        self._canon_action(action, detail, done, alias=(alias, canonical))

    def accept_suggestion(self, alias: str, canonical: str) -> None:
        """Accept a suggested merge: ``alias`` becomes a name of ``canonical`` (one log entry)."""
        if not name_key(alias) or not name_key(canonical) or name_key(alias) == name_key(canonical):
            raise ValueError(f"cannot merge {alias!r} into {canonical!r}: they need two different names")
        self._alias_action("accept", alias, canonical, {})

    def remove_alias(self, alias: str) -> None:
        """Undo an alias the user added."""
        aliases = self.store.aliases()
        done = False
        canonical = aliases.get(alias)
        if alias not in aliases:
            last = (self.store.merge_log() or [{}])[-1]
            if not (last.get("action") == "unalias" and last.get("alias") == alias):
                raise KeyError(f"no user alias {alias!r}; aliases: {', '.join(aliases) or 'none'}")
            done, canonical = True, last.get("canonical")  # the last step removed it: a rerun completes it
        self._canon_action("unalias", {"alias": alias, "canonical": canonical}, done, unalias=alias)

    def split(self, form: str) -> None:
        """Give a surface form an entity of its own, undoing the merge that folded it in."""
        key = display_form(form).lower()
        self._canon_action("split", {"form": display_form(form)}, key in self.store.splits(), split=key)

    def unsplit(self, form: str) -> None:
        key = display_form(form).lower()
        self._canon_action("unsplit", {"form": display_form(form)}, key not in self.store.splits(), unsplit=key)

    def reject_suggestion(self, a: str, b: str) -> None:
        pair = tuple(sorted((name_key(a), name_key(b))))
        self._canon_action("reject", {"a": a, "b": b}, pair in self.store.rejected_suggestions(), reject=pair)

    def undo(self, entry_id: int) -> int:
        """Undo one entry of the merge log by recording its inverse (itself a log entry).

        An alias is removed (or the alias it replaced restored), a removed alias comes back, a
        split is folded back in and the reverse, a rejected suggestion is suggested again.
        Returns the id of the new entry.

        Raises
        ------
        KeyError
            No entry has that id.
        ValueError
            The entry is an undo itself, was already undone, or does not say enough to invert.
        """
        log = {entry["id"]: entry for entry in self.store.merge_log()}
        entry = log.get(entry_id)
        if entry is None:
            raise KeyError(f"no merge log entry #{entry_id}; the log has {len(log)} entries")
        undone = {e.get("undoes") for e in log.values()}
        if entry_id in undone:
            raise ValueError(f"merge log entry #{entry_id} is already undone")
        if entry["action"] == "undo":
            raise ValueError(f"merge log entry #{entry_id} is an undo; make the change again instead")
        action, base = entry["action"], {"undoes": entry_id, "of": entry["action"]}
        change: dict[str, Any]
        if action in ("alias", "accept"):
            if entry.get("replaced"):
                change = {"alias": (entry["alias"], entry["replaced"])}
            else:
                change = {"unalias": entry["alias"]}
            detail = {**base, "alias": entry["alias"], "canonical": entry.get("canonical"),
                      "restored": entry.get("replaced")}
        elif action == "unalias":
            if not entry.get("canonical"):
                raise ValueError(f"merge log entry #{entry_id} does not say which name the alias pointed to; "
                                 "add the alias again instead")
            change = {"alias": (entry["alias"], entry["canonical"])}
            detail = {**base, "alias": entry["alias"], "canonical": entry["canonical"]}
        elif action in ("split", "unsplit"):
            form = display_form(entry["form"]).lower()
            change = {"unsplit": form} if action == "split" else {"split": form}
            detail = {**base, "form": entry["form"]}
        elif action == "reject":
            change = {"unreject": tuple(sorted((name_key(entry["a"]), name_key(entry["b"]))))}
            detail = {**base, "a": entry["a"], "b": entry["b"]}
        else:
            raise ValueError(f"merge log entry #{entry_id} ({action}) cannot be undone")
        undo = self._canon_action("undo", detail, **change)
        assert undo is not None  # an undo is recorded anew, never found already done
        return undo

    def _canon_action(self, action: str, detail: dict, already_done: bool = False, **change) -> int | None:
        """Apply and log one action, returning its log entry's id; one already in the record is
        only completed (entity vectors synced), so a rerun after a crash leaves one entry."""
        with self._write_lock():
            entry = None if already_done else self.store.record(action, detail, **change)
            self.sync_entity_vectors()
            self.sync_summaries()
        return entry

    def sync_entity_vectors(self, force: bool = False) -> int:
        """Keep the entity-name index equal to the graph's entities. Returns the entries changed.

        Skipped when nothing changed since the last complete sync (unless ``force``).
        """
        version = str(self.store.version)
        mark = entity_vectors_key(self.embedder.name)  # each vector space is synced on its own
        if not force and self.store.meta(mark) == version and self.entity_vectors.version() == version \
                and self.entity_vectors.space() == self.embedder.name:
            return 0
        remove_stale_temporaries(self.path)  # left by a write killed or refused (disk full) before
        if self.entity_vectors.version() is None and self.entity_vectors.damage() is None:
            self.vectors.drop_legacy_entities()
        graph = self.graph
        wanted = {entity.key: entity.name for entity in graph.entities()}
        try:
            changed = self.entity_vectors.sync(wanted, version, self.embedder.name,
                                               lambda names: embed_cached(names, self.store, self.embedder)[0],
                                               dimension=getattr(self.embedder, "dimension", None))
        except OSError as exc:  # a full disk, an I/O error: the record is complete, this file is not
            raise StepFailed(
                f"writing {self.entity_vectors.path} failed ({describe_os_error(exc)}); every change is kept in "
                f"the record: free disk space, then run `python -m workbench --workspace {self.path} repair` "
                "(the next write step finishes it too)") from exc
        self.store.set_meta(mark, version)
        return changed

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
        """Store the community reports and episodes of the current version (see :mod:`workbench.summaries`)."""
        from .summaries import sync_summaries

        return sync_summaries(self)

    # -- reading -------------------------------------------------------------------------
    def summaries(self):
        """Community reports and episodes of the current version, stored or built in memory."""
        from .summaries import current_summaries

        return current_summaries(self)

    def communities(self):
        """Community reports, largest community first."""
        return self.summaries().reports

    def episodes(self):
        """Episodes (sessions of the conversation logs), by start time."""
        return self.summaries().episodes

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
        every setting that shapes the graph (see :mod:`workbench.graph_snapshot`)."""
        record, options, impact = version
        shaping = {"workspace": self.store.workspace_id, "version": record, "passages": asdict(options),
                   "name_key": NAME_KEY_VERSION,
                   "impact_relations": list(impact),
                   "canonicalization": self.settings.canonicalization.model_dump(mode="json")}
        return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()

    def _derive(self) -> _Derived:
        version = self._derive_key()
        with self._derive_lock:
            if self._derived is None or self._derived.version != version:
                self._derived = self._load_or_assemble(version)
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
            # Mentions and triples stream from SQLite (1.7 M rows for a 30 MB file are never held
            # at once); the merge record counts the mentions as they pass. The names found in each
            # passage last time are reused where they stand (workbench.name_scan).
            canonicalizer = self.canonicalizer()  # one, so each surface is resolved once
            tally = FormTally(canonicalizer) if writing else None
            graph = self.assemble_from_record(
                version[1], mentions=tally.tap(self.store.iter_mentions()) if tally is not None else None,
                previous_scan=load_name_scan(self.path), canonicalizer=canonicalizer)
            derived = _Derived(version, graph)
            if tally is not None:
                derived.merges = tally.merges()
                try:
                    save_snapshot(self.path, key, graph, derived.merges)
                    if graph.passages.scan is not None:
                        save_name_scan(self.path, graph.passages.scan)
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
        """The context graph, rebuilt when the workspace has changed since the last call."""
        return self._derive().graph

    def graph_if_ready(self, wait: float = 0.0) -> ContextGraph | None:
        """The context graph if it is derived for the record as it is now, or once it is within
        ``wait`` seconds; else None, the graph being built meanwhile in a background thread
        (a minute on 60k passages: a page can show what the record holds in the meantime)."""
        derived = self._derived
        if derived is not None and derived.version == self._derive_key():
            return derived.graph
        with self._builder_lock:
            if self._builder is None or not self._builder.is_alive():
                self._builder = threading.Thread(target=self._derive, name="derive-graph", daemon=True)
                self._builder.start()
            builder = self._builder
        builder.join(wait)
        return None if builder.is_alive() else self.graph

    def preload(self) -> None:
        """Start reading what a first query needs from disk, the graph (from its snapshot) and the
        entity-name index, in a background thread, unless the graph is current. The caller loads
        the model meanwhile: a fresh process's first graphrag query does the two at once."""
        derived = self._derived
        if derived is not None and derived.version == self._derive_key():
            return

        def load() -> None:
            try:
                self._derive()
                self.entity_vectors.version()
            except Exception:  # noqa: BLE001 - the caller's own read does it again and reports what failed
                pass

        with self._builder_lock:
            if self._builder is None or not self._builder.is_alive():
                self._builder = threading.Thread(target=load, name="preload", daemon=True)
                self._builder.start()

    @property
    def version(self) -> int:
        return self.store.version

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

        Kept until the record changes: on the 61k-passage run they take 16 s to derive, and the
        app's front page counts them at every rerun."""
        version = self.store.version
        with self._merges_lock:
            if self._merges is None or self._merges[0] != version:
                derived = self._derived
                kept = derived.merges if derived is not None and derived.version == self._derive_key() else None
                self._merges = (version, kept if kept is not None else
                                build_merges(self.store.iter_mentions(), self.canonicalizer()))
            return list(self._merges[1])

    def accept_candidate(self, subject: str, relation: str, obj: str) -> int:
        """Accept a candidate relation as a graph fact (it is stated by its chunks from now on).

        Raises
        ------
        ValueError
            When no candidate ``subject -relation-> obj`` is stored; the message lists a few that are.
        """
        with self._write_lock():
            changed = self.store.accept_candidate(subject, relation, obj)
        if not changed:
            known = [f"{t.subject} -{t.relation}-> {t.object}" for t in self.candidates()[:5]]
            raise ValueError(f"no candidate {subject} -{relation}-> {obj}; candidates: {', '.join(known) or 'none'}")
        return changed

    def candidates(self) -> list[Triple]:
        """Relations discovered automatically (``SIMILAR_TO`` between similar notes), with their
        confidence: suggestions for a person to check, kept out of the graph."""
        found = [t for t in self.store.triples() if t.origin == "candidate"]
        return sorted(found, key=lambda t: (-t.confidence, t.subject, t.object))

    def merge_log(self) -> list[dict]:
        return self.store.merge_log()

    def suggestions(self, use_embeddings: bool = True) -> list[MergeSuggestion]:
        """Names that look like one entity but are not yet, each with why, minus those the user
        rejected, ranked by evidence (:func:`~workbench.canon.rank_suggestions`): pairs a note or a
        glossary record declares (``A (B)``, ``A, also called B``), then look-alikes (a name mixing
        Latin with Cyrillic or Greek letters and the name it imitates), then a Chinese name whose
        gloss is an English one (backed by shared neighbours), then similar meaning, then similar
        spelling alone. Numbers, years and dates are never suggested."""
        graph = self.graph
        names = [e.name for e in self.entities()]
        rejected = self.store.rejected_suggestions()
        # Every pair of name embeddings is compared: past a few thousand names that matrix
        # alone takes gigabytes, so large graphs rely on spelling and the synonym edges.
        use_embeddings = use_embeddings and len(names) <= EMBEDDING_SUGGESTION_LIMIT
        similar = suggest_merges(names, CacheFirstEmbedder(self.embedder, self.store) if use_embeddings else None,
                                 self.settings.canonicalization.suggest_threshold)
        # The synonym edges the walk follows, so accepting or rejecting one changes retrieval.
        synonyms = [MergeSuggestion(graph.name(a), graph.name(b), score,
                                    f"near-identical names (trigram similarity {score:.2f}; a synonym edge in the walk)")
                    for a, b, score in graph.passages.synonyms]
        neighbours = {graph.name(key): {graph.name(other) for other in graph.nx.successors(key)}
                      | {graph.name(other) for other in graph.nx.predecessors(key)} for key in graph.nx.nodes}
        translated = cross_language_suggestions(names, neighbours)
        declared = declared_alias_suggestions(names, ((c.document_id, c.text) for c in self.store.chunks()))
        lookalikes = lookalike_suggestions(names, tuple(self.settings.canonicalization.articles))
        found = rank_suggestions(combine_suggestions(lookalikes, declared, translated, similar, synonyms))
        return [s for s in found if tuple(sorted((name_key(s.a), name_key(s.b)))) not in rejected]

    def suggestion_page(self, page: int = 1, per_page: int = 12, use_embeddings: bool = True) -> SuggestionPage:
        """Page ``page`` (from 1) of :meth:`suggestions`, with their total; ``ValueError`` naming the
        pages there are for a page past the last."""
        return page_of(self.suggestions(use_embeddings), page, per_page)

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
        version = self._derive_key()
        if self.keeps_snapshot and (derived is None or derived.version != version):
            try:
                manifest = read_manifest(self.path)
                if manifest.get("key") == self._snapshot_key(version):
                    return {**self.record_stats(), **manifest["counts"]}
            except (SnapshotUnusable, KeyError, TypeError):
                pass
        return {**self.record_stats(), **snapshot_counts(self.graph, self.merges())}

    def vector_counts(self) -> dict[str, int]:
        return {"chunks": self.vectors.count(CHUNKS), "entities": self.entity_vectors.count()}

    def close(self) -> None:
        self.store.close()

