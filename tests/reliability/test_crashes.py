"""kill -9 at random points of an ingest, an alias change and a removal.

After every kill: SQLite's integrity check passes, the workspace opens, and re-running the
step gives exactly what a clean workspace that ran it without a kill holds (stats, chunk ids,
edges, entities), with Chroma's ids equal to SQLite's. The steps run in children forked from
one server that imported the workbench once (``crash_worker.py``), and every workspace starts
with an embedding cache primed from a clean run, so no run waits for the model.
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, committed_documents, make_corpus
from workbench.record.store import Store

HERE = Path(__file__).resolve().parent
SEED = 20240817
BATCH_CHUNKS = 16  # several SQLite commits per ingest, so kills land between batches too
ALIAS = ("queue number 3", "queue number 4")


class CrashServer:
    """Client of ``crash_worker.py``: runs a step in a forked child, optionally killing it."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "crash_worker.py")], cwd=ROOT, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, bufsize=1,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def _next(self, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                return self.lines.get(timeout=0.2).split(" ", 2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise AssertionError(f"the crash worker exited with status {self.proc.returncode}") from None
        raise AssertionError(f"the crash worker said nothing for {timeout} s")

    def run(self, workspace: Path, step: str, arg=None, kill_after: float | None = None,
            kill_when=None, snapshot: bool = False, timeout: float = 180) -> dict:
        """Run ``step``; returns ``{"status", "seconds", "snapshot", "killed"}``.

        ``kill_after`` seconds after the child is ready, or as soon as ``kill_when()`` is true,
        the child gets SIGKILL. ``status`` is the exit status, ``-9`` when the kill landed.
        """
        command = {"step": step, "workspace": str(workspace), "arg": arg, "batch_chunks": BATCH_CHUNKS,
                   "snapshot": snapshot}
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        result: dict = {"killed": False, "seconds": None, "snapshot": None}
        kind, pid, *rest = self._next(timeout)
        if kind == "ready":
            pid = int(pid)
            if kill_after is not None or kill_when is not None:
                deadline = time.monotonic() + (kill_after or 0)
                while time.monotonic() < deadline or (kill_when is not None and not kill_when()):
                    if not self.lines.empty() or time.monotonic() > deadline + timeout:
                        break  # the child finished (or failed) before the kill
                    time.sleep(0.005)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                result["killed"] = True
            kind, _, *rest = self._next(timeout)
        while kind != "exit":
            if kind == "error":
                raise AssertionError(f"step {step} failed in the child:\n{json.loads(rest[0])}")
            if kind == "done":
                result["seconds"] = float(rest[0])
            if kind == "snapshot":
                result["snapshot"] = json.loads(rest[0])
            kind, _, *rest = self._next(timeout)
        result["status"] = int(rest[0])
        result["killed"] = result["status"] == -signal.SIGKILL
        return result

    def snapshot(self, workspace: Path) -> dict:
        return self.run(workspace, "snapshot")["snapshot"]

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


class CrashEnv:
    """A corpus, a primed embedding cache, the server and the clean results to compare with."""

    def __init__(self, root: Path, embedder, settings, write_corpus) -> None:
        from workbench.workspace import Workspace

        self.root = root
        self.corpus = write_corpus(root / "corpus", 130)
        self.extra = write_corpus(self.corpus / "extra", 20, offset=130)
        # Prime the cache with every chunk and entity name the steps will need.
        primer = Workspace(root / "primer", settings=settings, embedder=embedder)
        primer.ingest([self.corpus])
        primer.corrections.add_alias(*ALIAS)
        primer.corrections.remove_alias(ALIAS[0])
        primer.close()
        self.primed = root / "primed.sqlite"
        Store(self.primed).close()
        with sqlite3.connect(self.primed) as conn:
            conn.execute("ATTACH DATABASE ? AS primer", (str(root / "primer" / "workspace.sqlite"),))
            conn.execute("INSERT INTO embeddings SELECT * FROM primer.embeddings")
        self.server = CrashServer()
        self.rng = random.Random(SEED)

        clean = self.fresh("clean")
        first = self.server.run(clean, "ingest", str(self.corpus), snapshot=True)
        self.ingest_seconds, self.clean_full = first["seconds"], first["snapshot"]
        alias = self.server.run(clean, "alias", list(ALIAS), snapshot=True)
        self.alias_seconds, self.clean_alias = alias["seconds"], alias["snapshot"]
        self.server.run(clean, "unalias", ALIAS[0])
        removal = self.server.run(clean, "remove", str(self.extra), snapshot=True)
        self.remove_seconds, self.clean_without_extra = removal["seconds"], removal["snapshot"]

    def fresh(self, name: str) -> Path:
        """A new workspace folder whose SQLite record holds only the primed embedding cache."""
        folder = self.root / name
        folder.mkdir()
        shutil.copy(self.primed, folder / "workspace.sqlite")
        return folder

    def kill_and_rerun(self, workspace: Path, step: str, arg, seconds: float, **kill) -> tuple[bool, dict]:
        """Kill ``step`` at a seeded random moment, check SQLite, re-run it to the end.

        Returns whether the kill landed and the snapshot after the re-run.
        """
        if not kill:
            kill = {"kill_after": self.rng.uniform(0, 0.9 * seconds)}
        killed = self.server.run(workspace, step, arg, **kill)["killed"]
        assert _integrity(workspace / "workspace.sqlite") == "ok"
        rerun = self.server.run(workspace, step, arg, snapshot=True)
        assert rerun["status"] == 0
        return killed, rerun["snapshot"]


@pytest.fixture(scope="module")
def crash_env(tmp_path_factory, embedder, settings):
    env = CrashEnv(tmp_path_factory.mktemp("crashes"), embedder, settings, make_corpus)
    yield env
    env.server.close()


def test_clean_reference_runs_agree_with_themselves(crash_env):
    full = crash_env.clean_full
    assert full["integrity_ok"] and full["stats"]["documents"] == 150
    assert full["chunk_vectors"] == full["chunks"] and full["entity_vectors"] == full["entities"]
    assert crash_env.clean_alias["stats"]["entities"] < full["stats"]["entities"]
    assert crash_env.clean_without_extra["stats"]["documents"] == 130


def test_kill_during_ingest_then_rerun_equals_clean_ingest(crash_env):
    kills = 0
    for attempt in range(16):
        if kills == 8:
            break
        ws = crash_env.fresh(f"ingest{attempt}")
        db = ws / "workspace.sqlite"
        # Two runs are killed right after the first batch commits, so a half-done ingest is
        # certainly among the cases; the others at a random moment of the step.
        kill = {"kill_when": lambda db=db: committed_documents(db) > 0} if attempt < 2 else {}
        killed, after = crash_env.kill_and_rerun(ws, "ingest", str(crash_env.corpus), crash_env.ingest_seconds, **kill)
        kills += killed
        assert after == crash_env.clean_full
    assert kills == 8


def test_kill_after_first_batch_leaves_whole_documents_only(crash_env):
    ws = crash_env.fresh("half")
    db = ws / "workspace.sqlite"
    result = crash_env.server.run(ws, "ingest", str(crash_env.corpus), kill_when=lambda: committed_documents(db) > 0)
    assert result["killed"]
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        orphans = conn.execute("SELECT COUNT(*) FROM documents d WHERE NOT EXISTS "
                               "(SELECT 1 FROM chunks c WHERE c.document_id = d.id)").fetchone()[0]
    assert 0 < stored < 150 and orphans == 0
    after = crash_env.server.run(ws, "ingest", str(crash_env.corpus), snapshot=True)["snapshot"]
    assert after == crash_env.clean_full


def test_kill_during_alias_change_then_rerun_equals_clean_alias(crash_env):
    ws = crash_env.fresh("alias")
    crash_env.server.run(ws, "ingest", str(crash_env.corpus))
    kills = 0
    # A kill lands only if the step is still running at its random moment: on a busy machine
    # many finish first, so try until six have landed.
    for _ in range(30):
        if kills == 6:
            break
        killed, after = crash_env.kill_and_rerun(ws, "alias", list(ALIAS), crash_env.alias_seconds)
        kills += killed
        assert after == crash_env.clean_alias
        undone = crash_env.server.run(ws, "unalias", ALIAS[0], snapshot=True)["snapshot"]
        assert undone == crash_env.clean_full
    assert kills == 6


def test_kill_during_removal_then_rerun_equals_clean_removal(crash_env):
    ws = crash_env.fresh("remove")
    crash_env.server.run(ws, "ingest", str(crash_env.corpus))
    kills = 0
    # A kill lands only if the step is still running at its random moment: on a busy machine
    # many finish first, so try until six have landed.
    for _ in range(30):
        if kills == 6:
            break
        killed, after = crash_env.kill_and_rerun(ws, "remove", str(crash_env.extra), crash_env.remove_seconds)
        kills += killed
        assert after == crash_env.clean_without_extra
        restored = crash_env.server.run(ws, "ingest", str(crash_env.corpus), snapshot=True)["snapshot"]
        assert restored == crash_env.clean_full  # the removed files put back
    assert kills == 6


class _Crash(BaseException):
    """Stands for the process dying at this exact point."""


def test_crash_between_removal_commit_and_vector_delete_is_repaired_by_the_rerun(make_workspace, tmp_path, monkeypatch):
    from workbench.vectors.index import CHUNKS, VectorIndex

    corpus = make_corpus(tmp_path / "corpus", 4)
    ws = make_workspace()
    ws.ingest([corpus])
    real_delete = VectorIndex.delete

    def die(self, collection, ids):
        raise _Crash()

    # SQLite has committed the removal; the process dies before Chroma's vectors are deleted.
    monkeypatch.setattr(VectorIndex, "delete", die)
    with pytest.raises(_Crash):
        ws.remove(corpus / "svc0001.txt")
    monkeypatch.setattr(VectorIndex, "delete", real_delete)
    assert len(ws.vectors.ids(CHUNKS)) == 4 and ws.stats()["chunks"] == 3

    ws.remove(corpus / "svc0001.txt")  # the user runs the step again
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}
