"""Keep a workspace in step with folders as they change (``workbench watch PATH...``).

The paths are ingested once first (what changed while nothing watched them, or a step killed
before), then followed with the ``watchfiles`` library (the system's file events; polling where
there are none). The changes of a burst are gathered until ``quiet_ms`` pass without another (at
most ``max_wait_ms``), and each gathering is written as one step: :meth:`Workspace.ingest` of the
watched paths it touched, reading only the files and folders it changed (a large vault is not
listed again for one edit). So a batch has an ingest's guarantees: its documents are stored whole
or not at all, a kill leaves what the next write step (``ingest``, ``watch``, ``repair``)
completes, an unchanged file is not read again, a removed one is removed, and a renamed one is a
removal and an add whose chunks keep their vectors (read back, not embedded again).

A batch is told written once this process answers with it; the files other processes load it from
(the graph snapshot, the keyword index) are saved right after, still under the write lock, and a
reader of another process that meets the new record before them waits for them.

Changes inside the workspace folder, hidden files and folders (a name starting with ``.``) and
what ``watchfiles`` leaves out by default (``.git``, ``__pycache__``, editors' swap files) start
no batch.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from ..ingest.loaders import LoadError
from .ingest_pipeline import IngestReport, Progress

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = ["WRITING", "WRITTEN", "SAVED", "FAILED", "FolderWatch", "WatchBatch", "WatchStarted", "WatchStopped",
           "follow_candidates", "touched_roots", "watch_workspace"]

#: The states a batch is told in: its write begun, done (this process answers with it), or refused
#: (the message says why); then, after a batch written (the catch-up aside), the files other
#: processes load it from saved.
WRITING, WRITTEN, FAILED, SAVED = "writing", "written", "failed", "saved"
#: How often the watcher wakes when nothing changes, to see whether it was asked to stop.
_TICK_MS = 400
#: Seconds the folder stays quiet after a batch before the SIMILAR_TO candidates, which compare
#: every note, are brought up to date (a batch leaves them behind).
_CANDIDATES_AFTER_SECONDS = 2.0
#: Seconds before a failed batch is written again when no change comes first.
_RETRY_SECONDS = 5.0
#: Least seconds between two saves of the derivation state at quiet moments (it is saved at stop
#: too): pickling it costs about 0.5 s at 20,000 notes, more than a batch.
_STATE_EVERY_SECONDS = 600.0


@dataclass
class WatchBatch:
    """One batch of changes, told when its write begins and again when it is written."""

    number: int
    """0 for the ingest that catches up on start, then 1, 2, ..."""
    state: str
    """:data:`WRITING`, :data:`WRITTEN`, :data:`FAILED` or :data:`SAVED`."""
    changes: int
    """File events gathered into the batch (0 for the catch-up)."""
    report: IngestReport | None = None
    """What the write did, once written."""
    documents: int | None = None
    """Documents the workspace holds after the write."""
    version: int | None = None
    """The record's version after the write."""
    seconds: float = 0.0
    """From the batch's first change gathered to its write done (to its files saved, when :data:`SAVED`)."""
    message: str | None = None
    """Why a batch failed (it is written again with the next change)."""

    def to_json(self) -> dict:
        out = {"batch": self.number, "state": self.state, "changes": self.changes}
        if self.report is not None:
            report = self.report.to_json()
            out.update({key: report[key] for key in (
                "documents_added", "documents_updated", "documents_removed", "documents_unchanged",
                "chunks_written", "chunks_embedded", "vectors_repaired", "problems", "extraction_problems")})
        if self.state != WRITING:
            out.update({"documents": self.documents, "version": self.version, "seconds": round(self.seconds, 3)})
        if self.message is not None:
            out["message"] = self.message
        return out


@dataclass(frozen=True)
class WatchStarted:
    """The watch is under way: the catch-up ingest is done and every later change is seen."""

    paths: tuple[str, ...]
    """The files and folders watched, as given."""
    workspace: str
    """The workspace kept in step with them."""

    def to_json(self) -> dict:
        return {"state": "watching", "paths": list(self.paths), "workspace": self.workspace}


@dataclass(frozen=True)
class WatchStopped:
    """The watch stopped, after the batch under way."""

    batches: int
    """Batches of changes written (the catch-up ingest not counted)."""

    def to_json(self) -> dict:
        return {"state": "stopped", "batches": self.batches}


def touched_roots(roots: Sequence[Path], changed: Iterable[str | Path], workspace: Path) -> list[Path]:
    """The watched ``roots`` under which a change in ``changed`` lies, leaving out changes inside
    the ``workspace`` folder and under a hidden name (relative to its root).

    >>> roots = [Path("/n/a"), Path("/n/b")]
    >>> touched_roots(roots, ["/n/b/x.md", "/n/b/.obsidian/w.json", "/n/a/ws/workspace.sqlite"], Path("/n/a/ws"))
    [PosixPath('/n/b')]
    """
    found: list[Path] = []
    for raw in changed:
        path = Path(raw)
        if path == workspace or workspace in path.parents:
            continue
        for root in roots:
            if path == root or root in path.parents:
                inside = path.relative_to(root).parts
                if not any(part.startswith(".") for part in inside) and root not in found:
                    found.append(root)
                break
    return sorted(found, key=roots.index)


def watch_workspace(ws: Workspace, paths: Sequence[str | Path], tell: Callable[[WatchBatch], None], *,
                    stop: threading.Event | None = None, ready: Callable[[], None] | None = None,
                    progress: Progress | None = None, quiet_ms: int = 50, max_wait_ms: int = 5000,
                    force_polling: bool | None = None) -> int:
    """Keep ``ws`` in step with ``paths`` until ``stop`` is set. Returns the batches of changes
    written (the catch-up ingest, batch 0, not counted).

    A batch leaves the ``SIMILAR_TO`` candidates behind; they are brought up to date once the
    folders are quiet for a moment, and when the watch stops.

    ``tell(batch)`` hears of each batch twice (writing, written) or once more when it failed;
    ``ready()`` is called once the catch-up ingest is done and every later change is seen;
    ``progress`` follows the catch-up ingest. A write refused because another process is writing
    (:class:`~workbench.workspace.workspace.WorkspaceBusy`) or a path is gone, or one whose step failed after
    its commit (:class:`~workbench.ingest.failures.StepFailed`, a full disk), is told as failed and
    tried again with the next change or a few seconds later; a stop asked for during a write takes
    effect after it.

    Raises
    ------
    LoadError
        When a path does not exist at the start.
    """
    from watchfiles import DefaultFilter, watch

    from ..ingest.failures import StepFailed
    from .workspace import WorkspaceBusy

    stop = stop if stop is not None else threading.Event()
    roots = [Path(p).resolve() for p in paths]
    missing = [str(p) for p, root in zip(paths, roots) if not root.exists()]
    if missing:
        raise LoadError(f"no such file or folder: {', '.join(missing)}; give existing files or folders to watch")
    workspace = ws.path.resolve()
    changes = watch(*roots, watch_filter=DefaultFilter(ignore_paths=[workspace]), debounce=max_wait_ms,
                    step=quiet_ms, stop_event=stop, rust_timeout=_TICK_MS, yield_on_timeout=True,
                    raise_interrupt=False, force_polling=force_polling)
    written = 0

    def write(number: int, touched: list[Path], events: int, since: float, follow: Progress | None,
              within: list[str] | None = None) -> bool:
        tell(WatchBatch(number, WRITING, events))

        def current(report: IngestReport) -> None:  # this process answers with the batch from here on
            tell(WatchBatch(number, WRITTEN, events, report, ws.store.count("documents"), ws.store.version,
                            time.perf_counter() - since))

        try:
            report = ws.ingest(touched, progress=follow, within=within, candidates=number == 0,
                               when_current=current if number else None)
        except (WorkspaceBusy, LoadError, StepFailed) as exc:  # StepFailed: the record is whole, the next write ends it
            tell(WatchBatch(number, FAILED, events, seconds=time.perf_counter() - since, message=str(exc)))
            return False
        if number:
            tell(WatchBatch(number, SAVED, events, None, ws.store.count("documents"), ws.store.version,
                            time.perf_counter() - since))
        else:
            current(report)
        return True

    next(changes, None)  # the watcher runs from here on: nothing changed after this goes unseen
    caught_up = write(0, roots, 0, time.perf_counter(), progress)  # batch 0, not counted
    ws.derivation.prime()  # from here on, a batch derives only what it changes
    ws.derivation.scans_wait = True  # and leaves the names found in passages for a quiet moment
    if ready is not None:
        ready()
    pending: list[Path] = [] if caught_up else list(roots)  # else tried again as batch 1
    # The files and folders a batch changed: only they are read (None: every root, after a failed catch-up).
    changed: set[str] | None = set() if caught_up else None
    events = 0
    since = time.perf_counter()
    retry_at = since + (0 if caught_up else _RETRY_SECONDS)
    last_write = state_kept = time.perf_counter()
    for found in changes:
        if not found and not pending and time.perf_counter() - last_write >= _CANDIDATES_AFTER_SECONDS:
            keep_state = time.perf_counter() - state_kept >= _STATE_EVERY_SECONDS
            follow_candidates(ws, keep_state)  # the folder is quiet: the candidates the batches left behind
            last_write = float("inf")
            state_kept = time.perf_counter() if keep_state else state_kept
        seen = [path for _, path in found if touched_roots(roots, [path], workspace)]
        touched = touched_roots(roots, seen, workspace)
        if touched and not pending:
            since = time.perf_counter()
        pending += [root for root in touched if root not in pending]
        if changed is not None:
            changed.update(seen)
        events += len(seen)
        if pending and not stop.is_set() and (touched or time.perf_counter() >= retry_at):
            if write(written + 1, sorted(pending, key=roots.index), events, since, None,
                     sorted(changed) if changed is not None else None):
                written += 1
                pending, events, changed = [], 0, set()
                last_write = time.perf_counter()
            else:  # tried again with the next change, or in a few seconds
                retry_at = time.perf_counter() + _RETRY_SECONDS
        if stop.is_set():
            break
    follow_candidates(ws, keep_state=True)  # stopped: nothing is left behind (the next ingest would do it otherwise)
    return written


def follow_candidates(ws: Workspace, keep_state: bool = False) -> bool:
    """What the batches left for a quiet moment: :meth:`Workspace.follow_candidates` (unless
    another process writes or the step fails: the next write does it then), and the names found in
    the passages saved for a later process (:meth:`GraphDerivation.save_scan`); with
    ``keep_state``, the derivation state too (:meth:`GraphDerivation.save_state`). True when the
    candidates were brought up to date."""
    from ..ingest.failures import StepFailed
    from .workspace import WorkspaceBusy

    try:
        followed = ws.follow_candidates()
    except (WorkspaceBusy, StepFailed):
        followed = False
    if ws.lock.try_take():
        try:
            ws.derivation.save_scan()
            if keep_state:
                ws.derivation.save_state()  # what the next fresh process's first write follows
        except OSError:  # a full disk: the next full derivation reads more passages, nothing else
            pass
        finally:
            ws.lock.release()
    return followed


class FolderWatch:
    """:func:`watch_workspace` run in a thread of its own (the app's Corpus page), keeping the
    last batches it told: :meth:`start`, then :attr:`running`, :meth:`status`, :meth:`stop`."""

    def __init__(self, ws: Workspace, paths: Sequence[str | Path], keep: int = 20, **options):
        self.ws, self.paths, self.options = ws, [Path(p) for p in paths], options
        self.batches: deque[WatchBatch] = deque(maxlen=keep)
        self.ready = threading.Event()
        self.error: str | None = None
        """Why the watch ended on its own (a path gone at the start, the store unreachable...)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="workbench-watch", daemon=True)

    def start(self) -> FolderWatch:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            watch_workspace(self.ws, self.paths, self.batches.append, stop=self._stop, ready=self.ready.set,
                            **self.options)
        except Exception as exc:  # a thread's error would be lost: kept for the page to show
            self.error = f"{type(exc).__name__}: {exc}"

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the batch under way, waiting up to ``timeout`` seconds for it."""
        self._stop.set()
        self._thread.join(timeout)

    def status(self) -> str:
        """One line for people: what is watched and the last batch written or failed."""
        where = ", ".join(map(str, self.paths))
        if self.error is not None:
            return f"stopped watching {where}: {self.error}"
        if not self.running:
            return f"stopped watching {where}"
        if not self.ready.is_set():
            return f"catching up with {where}..."
        told = next((b for b in reversed(self.batches) if b.state in (WRITTEN, FAILED)), None)
        if told is None or told.number == 0:
            return f"watching {where}: no change yet"
        if told.state == FAILED:
            return f"watching {where}: batch {told.number} not written yet ({told.message})"
        report = told.report
        assert report is not None
        return (f"watching {where}: batch {told.number} written, {report.documents_added} added, "
                f"{report.documents_updated} updated, {report.documents_removed} removed; "
                f"{told.documents:,} documents")
