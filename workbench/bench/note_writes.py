"""One note added, edited and removed in a vault of many: what a write costs as a watch follows
the folder, and as ``ingest`` run again in a fresh process.

Each is measured on a copy of the vault's workspace made once (``cp -r``) and settled at its own
path (its first write gives it an id of its own and derives its files again: not a cost of the
write measured), restored before each series and written out to disk before it is timed. The watch is
:func:`~workbench.workspace.watch.watch_workspace` in a child process with the model loaded and the
folder caught up; each change is timed from the file written to the batch written (``seconds``:
the file events' debounce included; the watch's process answers with it from then on), to the
files other processes load it from saved (``saved_s``), and the write step alone (``step_s``, the
:meth:`~workbench.workspace.workspace.Workspace.ingest` of the batch up to its telling), with its stages. A first
series on another note comes before (``first``): a process's first writes to the vector store
cost more than the ones after. The fresh
series runs ``python -m workbench ingest --json`` as a user does, the machine left idle for
:data:`QUIET_SECONDS` before, timed end to end (the
interpreter, the imports and the model's load included), with the stages the ingest reports, and
to its files saved by the child it leaves them to (``saved_s``, waited for before the next change).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..workspace.write_lock import WriteLock

__all__ = ["CHANGES", "bench_note_writes"]

#: Seconds the machine is left idle before each fresh ingest, as a user's command finds it: one
#: started at once after the last command's saves or a copy of the workspace ran slower in every
#: stage alike (3.1 to 3.7 s at 20,000 notes, where the same add after 15 s idle took 2.7 s).
QUIET_SECONDS = 10

#: The changes measured, in order: the note added, then edited, then removed.
CHANGES = ("add", "edit", "remove")
#: The name of the note the series adds, edits and removes.
NOTE = "note-written.md"
#: The note a watch's first series writes: what the first changes after a start cost beside later ones
#: (the vector store's first write and first update in a process cost more).
FIRST = "note-first.md"


def _change(corpus: Path, change: str, text: str, name: str = NOTE) -> None:
    path = corpus / name
    if change == "add":
        path.write_text(text, encoding="utf-8")
    elif change == "edit":
        path.write_text(text + "\n\nThe Billing Service now reads from Kafka, says @ana.\n", encoding="utf-8")
    else:
        path.unlink()


def _restore(base: Path, folder: Path) -> None:
    """``folder`` as ``base`` holds it, the folder itself kept: a new folder (another inode) is a
    copy of the workspace to its next write, which takes an id of its own and derives every file
    again (not a cost of the write measured)."""
    for item in folder.iterdir():
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item)
        else:
            item.unlink()
    shutil.copytree(base, folder, symlinks=True, dirs_exist_ok=True)
    _written_out()


def _written_out() -> None:
    """What was written so far on disk before a write is timed (the system does it within 30 s):
    else the write's first fsync of the record also flushes a copy just made (109 MB of
    ``workspace.sqlite`` at 20,000 notes) or the last write's saves, a cost of the harness's pace."""
    getattr(os, "sync", lambda: None)()


def _fresh_ingest(corpus: Path, folder: Path, settings_path: Path | None) -> dict[str, Any]:
    """``python -m workbench ingest --json`` of ``corpus`` into ``folder``: seconds end to end, and its stages."""
    command = [sys.executable, "-m", "workbench", "ingest", "--workspace", str(folder), "--json", str(corpus)]
    if settings_path is not None:
        command[4:4] = ["--settings", str(settings_path)]
    # As a user's Python runs it, keeping the compiled modules: with PYTHONDONTWRITEBYTECODE set (as
    # on the machines the figures come from) every run compiled the workbench's modules again, 0.2 s.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**env, "TQDM_DISABLE": "1"})
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"ingest failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    # The command returns once it wrote; a child it forked saves the derived files and the derivation
    # state under the write lock: saved once the lock is free (the next change waits for that too).
    WriteLock(folder, timeout=0).wait_free(600)
    saved = time.perf_counter() - started
    _written_out()
    report = json.loads(done.stdout)
    return {"seconds": round(seconds, 2), "saved_s": round(saved, 2), "ingest_s": report["seconds"],
            "per_stage_s": {k: round(v, 2) for k, v in report["stage_seconds"].items()}}


def _watched_writes(corpus: Path, folder: Path, settings, text: str) -> dict[str, Any]:
    """In this process (a child): the watch caught up, then each change to the written batch."""
    from ..workspace.watch import FAILED, SAVED, WRITTEN, WRITING, WatchBatch, watch_workspace
    from ..workspace.workspace import Workspace

    ws = Workspace(folder, settings=settings)
    ws.embedder.embed(["the model loaded and warm, as in a watch that runs"])
    told: list[tuple[float, WatchBatch]] = []
    stop, ready = threading.Event(), threading.Event()
    started = time.perf_counter()
    thread = threading.Thread(target=watch_workspace, args=(ws, [corpus], lambda b: told.append((time.perf_counter(), b))),
                              kwargs={"stop": stop, "ready": ready.set}, daemon=True)
    thread.start()
    out: dict[str, Any] = {}
    try:
        if not ready.wait(timeout=3600):
            raise RuntimeError("the watch did not catch up within an hour")
        out["catch_up_s"] = round(time.perf_counter() - started, 2)
        series = [("first", change) for change in CHANGES] + [("then", change) for change in CHANGES]
        for number, (when, change) in enumerate(series, start=1):
            time.sleep(1.0)  # the next change is its own batch
            changed_at = time.perf_counter()
            _change(corpus, change, text, FIRST if when == "first" else NOTE)
            deadline = changed_at + 600
            while not any(b.number == number and b.state in (WRITTEN, FAILED) for _, b in told):
                if time.perf_counter() > deadline or not thread.is_alive():
                    raise RuntimeError(f"the watch wrote no batch for the {change} within 10 minutes")
                time.sleep(0.01)
            begun = next(at for at, b in told if b.number == number and b.state == WRITING)
            at, batch = next((at, b) for at, b in told if b.number == number and b.state in (WRITTEN, FAILED))
            if batch.state == FAILED or batch.report is None:
                raise RuntimeError(f"the watch's batch for the {change} failed: {batch.message}")
            while not any(b.number == number and b.state == SAVED for _, b in told):
                if time.perf_counter() > deadline or not thread.is_alive():
                    raise RuntimeError(f"the watch saved no files for the {change} within 10 minutes")
                time.sleep(0.01)
            saved_at = next(at for at, b in told if b.number == number and b.state == SAVED)
            figures = {"seconds": round(at - changed_at, 2), "step_s": round(at - begun, 2),
                       "saved_s": round(saved_at - changed_at, 2),
                       "per_stage_s": {k: round(v, 3) for k, v in batch.report.stage_seconds.items()},
                       "derived": getattr(getattr(ws, "derivation", None), "touched", None)}
            if when == "first":
                out.setdefault("first", {})[change] = figures
            else:
                out[change] = figures
    finally:
        stop.set()
        thread.join(timeout=120)
        ws.close()
    return out


def bench_note_writes(corpus: Path, built: Path, settings, text: str, settings_path: Path | None = None,
                      progress: Callable[[str], None] = lambda said: None) -> dict[str, Any]:
    """A note of ``text`` added, edited and removed in ``corpus``, whose workspace is ``built``:
    by a watch (a warm process) and by ``ingest`` in fresh processes (see the module docstring).
    ``corpus`` is left as it was."""
    import multiprocessing

    root = Path(built).parent / "note-writes"
    folder, base = root / "ws", root / "ws.base"
    for name in (NOTE, FIRST):
        (Path(corpus) / name).unlink(missing_ok=True)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    shutil.copytree(built, folder, symlinks=True)
    progress("settling the copy of the workspace")
    _fresh_ingest(corpus, folder, settings_path)  # a copy takes an id of its own at its first write
    shutil.copytree(folder, base, symlinks=True)
    _written_out()
    out: dict[str, Any] = {}
    try:
        progress("the watch: add, edit, remove")
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            out["watch"] = pool.apply(_watched_writes, (corpus, folder, settings, text))
        _restore(base, folder)
        fresh: dict[str, Any] = {}
        for change in CHANGES:
            progress(f"a fresh ingest: {change}")
            _change(corpus, change, text)
            time.sleep(QUIET_SECONDS)
            fresh[change] = _fresh_ingest(corpus, folder, settings_path)
        out["fresh_ingest"] = fresh
    finally:
        for name in (NOTE, FIRST):
            (Path(corpus) / name).unlink(missing_ok=True)
        shutil.rmtree(root, ignore_errors=True)
    return out
