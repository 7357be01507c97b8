"""One writer at a time: a second writer waits or is told "workspace busy"; readers keep working."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

from filelock import FileLock

import workbench.workspace.ingest_pipeline as ingest_module
from workbench.vectors.index import CHUNKS

from tests.conftest import ROOT


def test_second_writer_is_told_the_workspace_is_busy(tmp_path, run_cli, write_corpus):
    corpus = write_corpus(tmp_path / "corpus", 3)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FileLock(str(workspace / "workspace.lock")):  # another writer holds the workspace
        ingest = run_cli("--workspace", workspace, "ingest", corpus, env={"WORKBENCH_LOCK_TIMEOUT": "0.5"})
        alias = run_cli("--workspace", workspace, "alias", "add", "a", "b", env={"WORKBENCH_LOCK_TIMEOUT": "0.5"})
    for result in (ingest, alias):
        assert result.returncode == 1
        assert "workspace" in result.stderr and "busy" in result.stderr
        assert "Traceback" not in result.stderr
    stats = run_cli("--workspace", workspace, "stats", "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["documents"] == 0


def test_lock_timeout_that_is_not_a_number_is_named(tmp_path, run_cli):
    result = run_cli("--workspace", tmp_path / "ws", "stats", env={"WORKBENCH_LOCK_TIMEOUT": "soon"})
    assert result.returncode == 2
    assert "WORKBENCH_LOCK_TIMEOUT" in result.stderr and "Traceback" not in result.stderr


def _open_new_record(path: str, start, said) -> None:
    from workbench.record.store import Store

    start.wait()
    try:
        Store(Path(path)).close()
        said.put("ok")
    except Exception as exc:  # noqa: BLE001 - what the other process raised is the finding
        said.put(f"{type(exc).__name__}: {exc}")


def test_two_processes_creating_one_new_record_at_once_both_open_it(tmp_path):
    # Switching a new database to WAL answered "database is locked" at once, one open in three.
    context = multiprocessing.get_context("fork")
    outcomes = []
    for attempt in range(20):
        start, said = context.Barrier(2), context.Queue()
        record = str(tmp_path / f"record{attempt}.sqlite")
        processes = [context.Process(target=_open_new_record, args=(record, start, said)) for _ in range(2)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
        outcomes += [said.get(timeout=5) for _ in processes]
    assert outcomes == ["ok"] * 40


def test_two_processes_ingesting_at_once_are_serialized_into_one_clean_store(tmp_path, write_corpus, make_workspace):
    corpus = write_corpus(tmp_path / "corpus", 30)
    workspace = tmp_path / "ws"
    command = [sys.executable, "-m", "workbench", "--workspace", str(workspace), "ingest", str(corpus), "--json"]
    env = {**os.environ, "WORKBENCH_LOCK_TIMEOUT": "240", "TQDM_DISABLE": "1"}
    procs = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outputs]
    reports = sorted((json.loads(out) for out, _ in outputs), key=lambda r: r["documents_added"])
    # The one that waited found everything already written by the other.
    assert [r["documents_added"] for r in reports] == [0, 30]
    assert reports[0]["documents_unchanged"] == 30

    ws = make_workspace("ws")
    assert ws.store.integrity_ok()
    assert ws.stats()["documents"] == 30
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}


def test_readers_keep_working_while_a_writer_is_mid_ingest(tmp_path, write_corpus, make_workspace, run_cli, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus", 30)
    ws = make_workspace("ws")
    monkeypatch.setattr(ingest_module, "BATCH_CHUNKS", 10)
    monkeypatch.setattr(ingest_module, "VECTOR_BATCH", 10)  # a commit every 10 chunks
    first_batch_written, readers_done = threading.Event(), threading.Event()

    def progress(stage, done, total):
        if 0 < done < total and not first_batch_written.is_set():
            first_batch_written.set()
            readers_done.wait(timeout=120)  # hold the write lock, mid-ingest, while readers run

    writer = threading.Thread(target=ws.ingest, args=([corpus],), kwargs={"progress": progress})
    writer.start()
    try:
        assert first_batch_written.wait(timeout=120), "the ingest never committed its first batch"
        stats = run_cli("--workspace", tmp_path / "ws", "stats", "--json")
        entities = run_cli("--workspace", tmp_path / "ws", "entities", "--json")
        writer_was_running = writer.is_alive()
    finally:
        readers_done.set()
        writer.join(timeout=120)
    assert writer_was_running
    assert stats.returncode == 0, stats.stderr
    assert 0 < json.loads(stats.stdout)["documents"] < 30  # it saw the committed part, whole
    assert entities.returncode == 0 and json.loads(entities.stdout)
    assert ws.stats()["documents"] == 30
