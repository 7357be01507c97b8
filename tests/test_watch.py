"""``watch PATH...`` keeps a workspace in step with a folder: adds, edits, deletes, renames and
bursts, each batch one write step; a kill mid-batch is completed by the next watch."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import pytest

from tests.conftest import ROOT, committed_documents

from workbench.vectors.index import CHUNKS
from workbench.workspace.watch import touched_roots


@contextmanager
def watched_in_a_thread(ws, folder: Path) -> Iterator[list]:
    """:func:`watch_workspace` of ``folder`` in a thread, caught up; yields the batches it tells.
    Stopped (after the batch under way) on leaving the block."""
    from workbench.workspace.watch import watch_workspace

    told: list = []
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=watch_workspace, args=(ws, [folder], told.append),
                              kwargs={"stop": stop, "ready": ready.set, "quiet_ms": 100})
    thread.start()
    try:
        assert ready.wait(timeout=120)
        yield told
    finally:
        stop.set()
        thread.join(timeout=60)


class Watcher:
    """``python -m workbench watch --json`` on a folder, its output lines read as they come."""

    def __init__(self, workspace: Path, folder: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workbench", "--workspace", str(workspace), "watch", str(folder), "--json",
             "--quiet-ms", "150"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
            env={**os.environ, "TQDM_DISABLE": "1"})
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def until(self, done: Callable[[dict], bool], timeout: float = 180) -> dict:
        """The first line from now on for which ``done(line)`` holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                stderr = self.proc.stderr.read() if self.proc.stderr else ""
                pytest.fail(f"watch exited ({self.proc.wait()}): {self.seen} {stderr}")
            self.seen.append(line)
            if done(line):
                return line
        pytest.fail(f"timed out; lines seen: {self.seen[-5:]}")

    def written_until(self, holds: Callable[[], bool], timeout: float = 180) -> None:
        """Wait through written batches until ``holds()``."""
        deadline = time.monotonic() + timeout
        while not holds():
            self.until(lambda line: line.get("state") == "written", max(1.0, deadline - time.monotonic()))

    def stop(self, sig=signal.SIGINT) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=120)


@pytest.fixture
def reader(embedder, settings):
    from workbench.workspace import Workspace

    opened = []

    def open_(path: Path):
        ws = Workspace(path, settings=settings, embedder=embedder, create=False)
        opened.append(ws)
        return ws

    yield open_
    for ws in opened:
        ws.close()


def _texts(ws) -> str:
    return "\n".join(c.text for c in ws.chunks())


def test_watch_follows_adds_edits_renames_deletes_and_a_burst_of_1000_files(tmp_path, reader):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The portal depends on the auth service.\n", encoding="utf-8")
    watcher = Watcher(tmp_path / "ws", notes)
    try:
        first = watcher.until(lambda line: line.get("batch") == 0 and line["state"] == "written")
        assert first["documents_added"] == 1
        watcher.until(lambda line: line.get("state") == "watching")
        ws = reader(tmp_path / "ws")
        ids = lambda: set(ws.store.document_sources())  # noqa: E731

        (notes / "b.md").write_text("Billing calls the ledger service.\n", encoding="utf-8")
        watcher.written_until(lambda: "notes/b.md" in ids())
        assert "Billing calls the ledger service." in _texts(ws)

        (notes / "b.md").write_text("Billing calls the payments gateway.\n", encoding="utf-8")
        watcher.written_until(lambda: "payments gateway" in _texts(ws))
        assert "ledger service" not in _texts(ws)

        (notes / "b.md").rename(notes / "c.md")
        watcher.written_until(lambda: ids() == {"notes/a.md", "notes/c.md"})
        assert ws.store.document_sources()["notes/c.md"] == str((notes / "c.md").resolve())

        (notes / "c.md").unlink()
        watcher.written_until(lambda: ids() == {"notes/a.md"})
        assert "payments gateway" not in _texts(ws)

        burst = notes / "burst"
        burst.mkdir()
        for i in range(1000):
            (burst / f"n{i:04d}.md").write_text(f"Service {i} depends on queue {i % 13}.\n", encoding="utf-8")
        watcher.written_until(lambda: len(ids()) == 1001, timeout=400)
        assert ws.store.count("chunks") == 1001
        assert watcher.stop() == 0
    finally:
        if watcher.proc.poll() is None:
            watcher.proc.kill()
    assert watcher.until(lambda line: line.get("state") == "stopped")["batches"] >= 5
    batches = [line for line in watcher.seen if line.get("state") == "written"]
    assert all(line["seconds"] >= 0 and line["version"] for line in batches)
    assert ws.unfinished() is None
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}
    assert ws.store.integrity_ok()


def test_a_watcher_killed_mid_batch_is_completed_by_the_next_watch(tmp_path, reader):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The portal depends on the auth service.\n", encoding="utf-8")
    workspace = tmp_path / "ws"
    watcher = Watcher(workspace, notes)
    try:
        watcher.until(lambda line: line.get("state") == "watching")
        for i in range(300):
            (notes / f"n{i:03d}.md").write_text(f"Service {i} depends on queue {i % 11}.\n", encoding="utf-8")
        watcher.until(lambda line: line.get("batch") == 1 and line["state"] == "writing")
        watcher.proc.send_signal(signal.SIGKILL)
        assert watcher.proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if watcher.proc.poll() is None:
            watcher.proc.kill()
    assert committed_documents(workspace / "workspace.sqlite") < 301  # killed before the batch was written

    again = Watcher(workspace, notes)
    try:
        caught_up = again.until(lambda line: line.get("batch") == 0 and line["state"] == "written")
        assert caught_up["documents"] == 301
        again.until(lambda line: line.get("state") == "watching")
        assert again.stop(signal.SIGTERM) == 0
    finally:
        if again.proc.poll() is None:
            again.proc.kill()
    ws = reader(workspace)
    assert ws.unfinished() is None and ws.store.integrity_ok()
    assert ws.store.count("documents") == 301 == ws.store.count("chunks")
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}


def test_changes_inside_the_workspace_or_under_hidden_names_start_no_batch(tmp_path):
    notes, other = tmp_path / "notes", tmp_path / "other"
    changed = [notes / ".obsidian" / "workspace.json", notes / "ws" / "workspace.sqlite", other / "x.md",
               notes / "sub" / "a.md"]
    assert touched_roots([notes, other], changed, notes / "ws") == [notes, other]
    assert touched_roots([notes], changed[:2], notes / "ws") == []


def test_ctrl_c_during_a_batch_stops_once_the_batch_is_written(tmp_path, reader):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The portal depends on the auth service.\n", encoding="utf-8")
    watcher = Watcher(tmp_path / "ws", notes)
    try:
        watcher.until(lambda line: line.get("state") == "watching")
        for i in range(200):
            (notes / f"n{i:03d}.md").write_text(f"Service {i} depends on queue {i % 11}.\n", encoding="utf-8")
        watcher.until(lambda line: line.get("batch") == 1 and line["state"] == "writing")
        watcher.proc.send_signal(signal.SIGINT)
        written = watcher.until(lambda line: line.get("batch") == 1 and line["state"] != "writing")
        assert written["state"] == "written" and written["documents_added"] > 0
        assert watcher.until(lambda line: line.get("state") == "stopped")["batches"] == 1
        assert watcher.proc.wait(timeout=60) == 0
    finally:
        if watcher.proc.poll() is None:
            watcher.proc.kill()
    ws = reader(tmp_path / "ws")
    assert ws.store.count("documents") == written["documents"] == 1 + written["documents_added"]
    assert ws.unfinished() is None
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}


@pytest.mark.parametrize("refusal", ["busy", "step failed"])
def test_a_batch_refused_or_failed_is_written_when_tried_again(make_workspace, tmp_path, monkeypatch, refusal):
    import workbench.workspace.watch as watching
    from workbench.ingest.failures import StepFailed
    from workbench.workspace import WorkspaceBusy
    from workbench.workspace.watch import FAILED, SAVED, WRITTEN

    monkeypatch.setattr(watching, "_RETRY_SECONDS", 0.5)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The portal depends on the auth service.\n", encoding="utf-8")
    ws = make_workspace()
    real, refusals = ws.ingest, []

    def busy_once(paths, progress=None, **given):
        if len(refusals) < 1 and (notes / "b.md").exists():
            refusals.append(given["within"])
            if refusal == "busy":
                raise WorkspaceBusy(f"workspace {ws.path} is busy: another process is writing to it")
            raise StepFailed(f"writing {ws.path / 'entities.npz'} failed (no space left on device)")
        return real(paths, progress=progress, **given)

    monkeypatch.setattr(ws, "ingest", busy_once)
    with watched_in_a_thread(ws, notes) as told:
        (notes / "b.md").write_text("Billing calls the ledger service.\n", encoding="utf-8")
        deadline = time.monotonic() + 120
        while not any(b.number == 1 and b.state == WRITTEN for b in told) and time.monotonic() < deadline:
            time.sleep(0.1)
    batch_one = [b.state for b in told if b.number == 1]
    assert batch_one == ["writing", FAILED, "writing", WRITTEN, SAVED]  # retried with no further change
    said = {"busy": "is busy", "step failed": "no space left"}[refusal]
    assert said in next(b.message for b in told if b.state == FAILED)
    assert ws.store.count("documents") == 2
    assert refusals == [[str((notes / "b.md").resolve())]]  # the batch read the file it changed, not the folder


def test_batches_leave_the_candidates_to_a_quiet_moment(make_workspace, tmp_path, monkeypatch):
    """A batch reads only what changed and leaves the SIMILAR_TO candidates (which compare every
    note) behind; once the folder is quiet they are what a full refresh makes."""
    import workbench.workspace.watch as watching
    from workbench.corpus.note_neighbours import NEIGHBOURS_KEY
    from workbench.workspace.note_links import CANDIDATES_BEHIND
    from workbench.workspace.watch import WRITTEN

    monkeypatch.setattr(watching, "_CANDIDATES_AFTER_SECONDS", 1.0)
    notes = tmp_path / "notes"
    notes.mkdir()
    said = "The Billing Service calls the Ledger Service over gRPC with a 40 ms budget."
    for i in range(3):
        (notes / f"n{i}.md").write_text(f"# Billing note {i}\n\n{said}\n", encoding="utf-8")
    ws = make_workspace()
    with watched_in_a_thread(ws, notes) as told:
        assert ws.store.meta(CANDIDATES_BEHIND) != "1" and len(ws.candidates()) == 3
        (notes / "n3.md").write_text(f"# Billing note 3\n\n{said}\n", encoding="utf-8")
        deadline = time.monotonic() + 120
        while not any(b.number == 1 and b.state == WRITTEN for b in told) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ws.store.meta(CANDIDATES_BEHIND) == "1"  # the batch left them behind
        while ws.store.meta(CANDIDATES_BEHIND) == "1" and time.monotonic() < deadline:
            time.sleep(0.1)
    assert ws.store.meta(CANDIDATES_BEHIND) == "0"
    followed = sorted((c.subject, c.object) for c in ws.candidates())
    ws.store.set_meta(NEIGHBOURS_KEY, "")  # every list made again
    ws.ingest([notes])  # an ingest with nothing new, after a forced full refresh, gives the same candidates
    ws.repair()
    assert sorted((c.subject, c.object) for c in ws.candidates()) == followed and len(followed) > 3


def test_a_written_batch_is_one_line_for_people_with_its_problems_below():
    from workbench.cli.watch import _batch_text
    from workbench.workspace.ingest_pipeline import IngestReport
    from workbench.workspace.watch import WRITING, WRITTEN, WatchBatch

    report = IngestReport(documents_added=1, documents_removed=1, chunks_embedded=1,
                          extraction_problems=["notes/b.md: name '---' has no letter or digit: no entity made for it"])
    written = WatchBatch(2, WRITTEN, 2, report, documents=1, version=5, seconds=0.333).to_json()
    assert _batch_text(written) == (
        "batch 2 (2 changes): 1 added, 0 updated, 1 removed, 1 chunk embedded; 1 document, version 5, 0.33 s\n"
        "  notes/b.md: name '---' has no letter or digit: no entity made for it")
    assert _batch_text(WatchBatch(3, WRITING, 1).to_json()) is None  # said once written
