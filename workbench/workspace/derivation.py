"""The graph derived from the record, a part of the workspace: loaded from its snapshot when
one is made for the record and settings as they are, else followed from the rows kept beside
the record (a writer) or assembled from it (a reader), and kept in memory for that version.

:class:`GraphDerivation` also keeps the merge record (what canonicalization folded) and reads
the snapshot's counts without loading the graph.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..context_graph.assemble import LazyMapping, PassageOptions, assemble_graph, note_resolver
from ..context_graph.canon import Canonicalizer, build_merges
from ..context_graph.derivation_rows import rows_key
from ..context_graph.graph import ContextGraph
from ..context_graph.graph_state import GraphState, follow_record
from ..context_graph.graph_state_file import StateUnusable, kept_version, load_graph_state, save_graph_state
from ..context_graph.graph_snapshot import SnapshotUnusable, load_snapshot, read_manifest, save_snapshot
from ..context_graph.name_scan import load_name_scan, save_name_scan
from ..context_graph.passages import LINK_RULES_VERSION, NameScan
from ..model import Merge, Mention
from ..record.store import Store
from ..runtime.detached import detach_from_terminal
from ..runtime.gc_paused import skip_exit_collection
from ..settings import Settings
from ..text.name_keys import NAME_KEY_VERSION
from .write_lock import WriteLock

__all__ = ["SNAPSHOT_FOLLOWS", "Derived", "GraphDerivation", "KeysChanged", "assemble_from_record", "canonicalizer_of"]

#: Meta key: the record version whose derived files the writer holding the lock saves once its
#: step is told done (a watch's batch): a reader of that version waits for them.
SNAPSHOT_FOLLOWS = "derived_files_follow"
#: Seconds a reader waits for a writer to save the derived files it said follow.
WRITER_SAVE_WAIT_SECONDS = 120.0


@dataclass
class Derived:
    version: tuple
    graph: ContextGraph
    merges: list[Merge] | None = None
    """The merge record, when the snapshot held it (else derived on first use)."""


@dataclass(frozen=True)
class KeysChanged:
    """What a derivation that followed the one before it changed: the keys whose entities it
    aggregated again (gone ones included), and the record versions it went between. A part kept
    for the record at ``since`` is brought to ``version`` by these keys alone."""

    since: int
    version: int
    keys: frozenset[str]


def canonicalizer_of(store: Store, settings: Settings) -> Canonicalizer:
    """The canonicalizer of a record: the configured aliases, the user's aliases and splits."""
    c = settings.canonicalization
    return Canonicalizer(aliases=c.aliases, user_aliases=store.aliases(), splits=store.splits(),
                         articles=tuple(c.articles))


def assemble_from_record(store: Store, settings: Settings, canonicalizer: Canonicalizer,
                         options: PassageOptions | None = None, mentions: Iterable[Mention] | None = None,
                         previous_scan: NameScan | None = None) -> ContextGraph:
    """The graph derived from ``store`` now (its ``mentions``, when read already), no snapshot
    read or written; ``previous_scan`` spares reading passages again. A scoped view passes its
    narrowed store and derives the scope's graph."""
    return assemble_graph(
        store.iter_mentions() if mentions is None else mentions, store.iter_triples(),
        store.chunk_context(), canonicalizer,
        notes=LazyMapping(lambda: note_resolver(store.documents())),
        impact_relations=settings.graph.impact_relations,
        chunk_texts=store.chunk_texts(),
        passage_options=options or PassageOptions.from_settings(settings.graph),
        rejected=store.rejected_suggestions(),
        previous_scan=previous_scan,
    )


class GraphDerivation:
    """The workspace's derived graph (see the module docstring)."""

    def __init__(self, path: Path, store: Store, settings: Settings, lock: WriteLock) -> None:
        self.path, self.store, self.settings, self.lock = path, store, settings, lock
        self.derived: Derived | None = None
        self._derive_lock = threading.Lock()
        self._merges: tuple[int, list[Merge]] | None = None
        self._merges_lock = threading.Lock()
        #: How the graph was last had: ``loaded`` from the snapshot, or ``rebuilt: <why>``.
        self.snapshot_status: str | None = None
        #: How the last derivation of this process had its rows: followed from the kept ones, or read whole.
        self.rows_status: str | None = None
        #: What the last derivation of this process aggregated again (``everything``, or counts).
        self.touched: str | None = None
        #: What this writer derived last, which its next write follows (workbench.context_graph.graph_state).
        self.state: GraphState | None = None
        self._state_version: int | None = None  # the record version self.state was derived for
        self._state_saved: int | None = None  # the version of the state last kept on disk by this process
        #: How the last writer's derivation of this process started: from its own state, the kept one, or none.
        self.state_status: str | None = None
        #: The keys the last derivation of this process changed, when it followed the one before.
        self.keys_changed: KeysChanged | None = None
        #: Whether a derivation that followed the state leaves its names scan to :meth:`save_scan` (a watch).
        self.scans_wait = False
        self.unsaved_scan: NameScan | None = None
        # The saves a step of this thread left for publish(): (record version, save), in order.
        self._deferred: list[tuple[int, Callable[[], object]]] = []
        self._deferring: int | None = None  # the thread whose step defers its saves

    def canonicalizer(self) -> Canonicalizer:
        return canonicalizer_of(self.store, self.settings)

    def key(self) -> tuple:
        """What the derived graph depends on: the record's version and the graph settings."""
        return (self.store.version, PassageOptions.from_settings(self.settings.graph),
                tuple(self.settings.graph.impact_relations))

    def snapshot_key(self, version: tuple | None = None) -> str:
        """The derivation key a graph snapshot is made for: this workspace, its record version and
        every setting that shapes the graph (see :mod:`workbench.context_graph.graph_snapshot`)."""
        record, options, impact = self.key() if version is None else version
        shaping = {"workspace": self.store.workspace_id, "version": record, "passages": asdict(options),
                   "name_key": NAME_KEY_VERSION, "link_rules": LINK_RULES_VERSION,
                   "impact_relations": list(impact),
                   "canonicalization": self.settings.canonicalization.model_dump(mode="json")}
        return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()

    def assemble(self, options: PassageOptions | None = None) -> ContextGraph:
        """The graph derived from the record now, every passage read, no snapshot read or written."""
        return assemble_from_record(self.store, self.settings, self.canonicalizer(), options)

    def is_current(self) -> bool:
        """Whether the graph held in memory is derived for the record and settings as they are."""
        derived = self.derived
        return derived is not None and derived.version == self.key()

    def current(self) -> Derived:
        """The graph for the record as it is now: the one held, else loaded or derived."""
        version = self.key()
        with self._derive_lock:
            if self.derived is None or self.derived.version != version:
                self.derived = self._load_or_assemble(version)
                skip_exit_collection()  # a graph of millions of objects: not walked once more at exit
            return self.derived

    def save_scan(self) -> bool:
        """Save the names found in each passage by the last derivation, if not saved yet (a
        watch's batches leave them to its quiet moments: only a later process's full derivation
        reads them, and a scan a few writes old still spares it most passages). True when saved."""
        scan, self.unsaved_scan = self.unsaved_scan, None
        if scan is None:
            return False
        save_name_scan(self.path, scan)
        return True

    def prime(self) -> bool:
        """Derive the state a writer follows when this process holds none (a watch, once caught up
        with its folders, whose graph came from the snapshot): its next write then aggregates and
        links only what it changes. False when another process is writing (the first write
        derives it then)."""
        if self.state is not None:
            return True
        if not self.lock.try_take():
            return False
        try:
            version = self.key()
            rows_file = rows_key(self.store.workspace_id, self.settings.canonicalization.model_dump(mode="json"))
            followed = follow_record(self.store, self.path, rows_file, self.canonicalizer(), version[1],
                                     self.settings.graph.impact_relations,
                                     LazyMapping(lambda: note_resolver(self.store.documents())), None,
                                     lambda: load_name_scan(self.path))
            self.state, self.rows_status, self.touched = followed.state, followed.rows_status, followed.touched
            self._state_version, self.keys_changed = version[0], None
            followed.state.passages.followable()  # made now, not by the first write that follows
            followed.state.passages.keep_texts(self.store.chunk_texts())
            if not self.is_current():
                self.derived = Derived(version, followed.graph, followed.merges)
            return True
        finally:
            self.lock.release()

    def state_key(self) -> str:
        """What a kept derivation state is valid for: the snapshot's key less the record version."""
        _, options, impact = self.key()
        return self.snapshot_key((None, options, impact))

    def _kept_state(self, version: int) -> tuple[GraphState | None, int | None]:
        """The state kept on disk (:mod:`~workbench.context_graph.graph_state_file`) and its
        version, when it can be followed to record ``version``; else ``(None, None)``."""
        try:
            since, state = load_graph_state(self.path, self.state_key())
        except StateUnusable as exc:
            self.state_status = f"derived whole: {exc}"
            return None, None
        if since > version:  # a record restored from before the state: nothing to follow from
            self.state_status = f"derived whole: the kept state is of version {since}, the record of {version}"
            return None, None
        self.state_status = f"followed the kept state of version {since}"
        self._state_saved = since
        return state, since

    def save_state(self) -> bool:
        """Keep the state this writer followed last on disk, for a later process's first write
        (a watch's quiet moment, a command's saves after it returns); True when saved now.
        A full disk leaves it: the next fresh process derives the graph whole."""
        state, version = self.state, self._state_version
        if state is None or version is None or self._state_saved == version:
            return False
        key = self.state_key()
        kept = kept_version(self.path, key)
        if kept is not None and version <= kept <= self.store.version:
            return False  # a later writer kept its own (a watch stopping after an ingest of another process)
        try:
            save_graph_state(self.path, key, version, state)
        except OSError:
            return False
        self._state_saved = version
        return True

    def forget(self) -> None:
        """Drop the graph held (its files were removed): the next read derives it again, and
        the state is saved again when asked."""
        self.derived = None
        self._state_saved = None

    def _load_or_assemble(self, version: tuple) -> Derived:
        """The graph from the snapshot made for ``version``; else assembled from the record and,
        when this thread can write, saved as the snapshot for the next process."""
        key = self.snapshot_key(version)
        try:
            snapshot = load_snapshot(self.path, key, key_of=self.canonicalizer().key)
            self.snapshot_status = "loaded"
            return Derived(version, snapshot.graph, snapshot.merges)
        except SnapshotUnusable as exc:
            self.snapshot_status = f"rebuilt: {exc}"
        if self.wait_for_saves(version[0]):
            try:
                snapshot = load_snapshot(self.path, key, key_of=self.canonicalizer().key)
                self.snapshot_status = "loaded, once its writer saved it"
                return Derived(version, snapshot.graph, snapshot.merges)
            except SnapshotUnusable:
                pass
        writing = self.lock.try_take()
        try:
            current = self.key() if writing else version
            if current != version:  # the record moved on before the lock was had
                version, key = current, self.snapshot_key(current)
            canonicalizer = self.canonicalizer()  # one, so each surface is resolved once
            if not writing:
                # Mentions and triples stream from SQLite (a large file's millions of rows are
                # never held at once); the names found in each passage last time are reused where
                # they stand (workbench.context_graph.name_scan).
                graph = assemble_from_record(self.store, self.settings, canonicalizer, version[1],
                                             previous_scan=load_name_scan(self.path))
                return Derived(version, graph)
            # The writer follows the record with the rows kept beside it: only rows added since
            # the last derivation are canonicalized (workbench.context_graph.derivation_rows).
            # A writing process keeps what it derived (workbench.context_graph.graph_state): its next
            # write aggregates and links only what the write changed.
            rows_file = rows_key(self.store.workspace_id, self.settings.canonicalization.model_dump(mode="json"))
            previous, self.state = self.state, None  # dropped should the derivation fail midway
            since, self._state_version, self.keys_changed = self._state_version, None, None
            if previous is None:  # a fresh process: the state a process before it kept, if any
                previous, since = self._kept_state(version[0])
            else:
                self.state_status = "held"
            followed = follow_record(self.store, self.path, rows_file, canonicalizer, version[1],
                                     self.settings.graph.impact_relations,
                                     LazyMapping(lambda: note_resolver(self.store.documents())), previous,
                                     lambda: load_name_scan(self.path))
            self.state, self.rows_status, self.touched = followed.state, followed.rows_status, followed.touched
            self._state_version = version[0]
            touched = followed.state.parts.touched
            if previous is not None and touched is not None and since is not None:
                self.keys_changed = KeysChanged(since, version[0], touched.keys)
            graph, merges = followed.graph, followed.merges
            derived = Derived(version, graph, merges)
            scans_wait = self.scans_wait and previous is not None and followed.touched != "everything"
            rows = followed.state.rows

            def save() -> None:
                save_snapshot(self.path, key, graph, merges)
                self.unsaved_scan = graph.passages.scan
                if not scans_wait:
                    self.save_scan()
                rows.save(self.path, rows_file)

            if self._defers():
                self._deferred.append((version[0], save))
            else:
                try:
                    save()
                except OSError:  # a full disk, a read-only folder: the next write step tries again
                    pass
            return derived
        finally:
            if writing:
                self.lock.release()

    def save_derived(self, version: int, save: Callable[[], object]) -> bool:
        """Run ``save`` under the write lock when it is free now and the record is still at
        ``version`` (see :class:`~workbench.corpus.workspace_view.WorkspaceView`); a full disk makes it
        False, the file is then derived again by the next process."""
        if self._defers():
            self._deferred.append((version, save))
            return True
        if not self.lock.try_take():
            return False
        try:
            if self.store.version != version:
                return False
            save()
            return True
        except (OSError, sqlite3.Error):
            return False
        finally:
            self.lock.release()

    # -- saves left for after a step ------------------------------------------------------------
    @contextmanager
    def saves_deferred(self):
        """Within the block, this thread's derivations and :meth:`save_derived` keep what they would
        save for other processes (the graph snapshot, the rows, the keyword index...) for
        :meth:`publish`, and the record says they follow (:data:`SNAPSHOT_FOLLOWS`): a watch tells
        its batch written, answering from memory, before it saves them."""
        self._deferring = threading.get_ident()
        try:
            yield
            if self._deferred:
                self.store.set_meta(SNAPSHOT_FOLLOWS, str(self.store.version))
        finally:
            self._deferring = None

    def _defers(self) -> bool:
        return self._deferring == threading.get_ident()

    def publish(self) -> int:
        """Save what the steps of :meth:`saves_deferred` left, under the write lock, each when the
        record is still at the version it was made for (a later write saves its own); returns the
        saves made. A full disk leaves a file to the next write step, as a save in the step would.
        The step that deferred them calls it before it gives the lock back."""
        pending, self._deferred = self._deferred, []
        if not pending:
            return 0
        with self.lock.hold():
            return self._saved(pending)

    def _saved(self, pending: list[tuple[int, Callable[[], object]]]) -> int:
        """Run the ``pending`` saves (under the write lock) made for the record's version now."""
        saved = 0
        for version, save in pending:
            if self.store.version != version:
                continue
            try:
                save()
                saved += 1
            except (OSError, sqlite3.Error):
                pass
        return saved

    def publish_detached(self, then: Callable[[], object] | None = None) -> bool:
        """What :meth:`publish` saves, and the state (:meth:`save_state`), saved by a forked child
        once it holds the write lock after this step gives it back, so the command that wrote
        returns meanwhile (git's automatic gc detaches the same way); ``then()`` is called there
        after them (the keyword index's build). Readers of the new version wait for the child as
        for any writer that said its files follow (:meth:`wait_for_saves`); a child that dies
        leaves them to be derived again, as a writer that died would. Where there is no ``fork``,
        or nothing to save, they are made here. True when a child took them."""
        pending = self._deferred
        unsaved = self.state is not None and self._state_saved != self._state_version
        if not hasattr(os, "fork") or self.lock.read_only or not (pending or unsaved):
            self.publish()
            self.save_state()
            if then is not None:
                then()
            return False
        version = self.store.version
        self._deferred = []
        gc.freeze()  # the child's collector would write to every page it shares with this process
        child = os.fork()
        if child:
            gc.unfreeze()
            # reaped once done when this process lives on (a notebook, a test); a command exits first
            threading.Thread(target=os.waitpid, args=(child, 0), name="reap-saver", daemon=True).start()
            return True
        code = 1
        try:
            detach_from_terminal()
            self.store.connect_anew()
            with self.lock.held_after_parent(WRITER_SAVE_WAIT_SECONDS) as had:
                if had and self.store.version == version:  # else a later write saves its own
                    self._saved(pending)
                    self.save_state()
                    if then is not None:
                        then()
            code = 0
        finally:
            os._exit(code)  # nothing of the parent's (atexit, open files' buffers) runs twice

    def wait_for_saves(self, version: int) -> bool:
        """Wait for the writer holding the lock when it said it saves the derived files of record
        ``version`` (up to :data:`WRITER_SAVE_WAIT_SECONDS`); True when it may have saved them."""
        if self._defers() or self.store.meta(SNAPSHOT_FOLLOWS) != str(version):
            return False
        return self.lock.wait_free(WRITER_SAVE_WAIT_SECONDS)

    def merges(self) -> list[Merge]:
        """Every canonical entity that folds two or more surface forms, with counts and chunks.

        Kept until the record changes: they are slow to derive on a large corpus, and the app's
        front page counts them at every rerun."""
        version = self.store.version
        with self._merges_lock:
            if self._merges is None or self._merges[0] != version:
                derived = self.derived if self.is_current() else None
                if derived is None and self.current_manifest() is not None:
                    derived = self.current()  # the current snapshot keeps the merges: loading it is far
                    # cheaper than reading and canonicalizing every mention again
                kept = derived.merges if derived is not None and derived.version == self.key() else None
                self._merges = (version, kept if kept is not None else
                                build_merges(self.store.iter_mentions(), self.canonicalizer()))
            return list(self._merges[1])

    def current_manifest(self) -> dict | None:
        """The graph snapshot's manifest when the snapshot is made for the record and settings as
        they are now (read alone, no graph loaded); else None."""
        try:
            manifest = read_manifest(self.path)
            return manifest if manifest.get("key") == self.snapshot_key() else None
        except SnapshotUnusable:
            return None

    def counts_from_snapshot(self) -> dict | None:
        """The graph's counts as the current snapshot's manifest keeps them, loading no graph;
        None when there is no current snapshot."""
        manifest = self.current_manifest()
        try:
            return None if manifest is None else dict(manifest["counts"])
        except (KeyError, TypeError):
            return None
