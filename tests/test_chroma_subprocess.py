"""The embedded Chroma store held by a helper process (``workbench.vectors.chroma_subprocess``), as
``ingest`` uses it: the same answers as a client in the process, errors said as the workspace
says them, and a helper that never outlives or disturbs its command. Each scenario runs in a
fresh Python process: the helper forks one that has not imported chromadb (this one has)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, make_corpus, run_cli
from workbench.vectors.index import CHUNKS
from workbench.workspace import Workspace

#: Run in a fresh process: every use of the helper the workspace makes, and its failures; prints JSON.
SCENARIOS = """
import json, os, signal, sys, time
import numpy as np
from workbench.vectors.chroma_subprocess import ChromaSubprocess
from workbench.vectors.index import CHUNKS, VectorIndex, VectorStoreUnavailable

folder = sys.argv[1]
out = {"usable": ChromaSubprocess.usable_for("embedded")}
helper = ChromaSubprocess(os.path.join(folder, "chroma"))
out["created_before_a_call"] = os.path.exists(os.path.join(folder, "chroma"))
index = VectorIndex(helper.client, "wb", "w1", exists=lambda: os.path.isdir(os.path.join(folder, "chroma")))
out["count_of_no_store"] = index.count(CHUNKS)
vectors = np.eye(4, dtype=np.float32)[:3]
index.upsert(CHUNKS, ["a", "b", "c"], vectors, [{"document": "d1"}, {"document": "d1"}, {"document": "d2"}])
best = index.query(CHUNKS, vectors[1], 2)
out["nearest"] = [(m.id, round(m.similarity, 4), m.metadata) for m in best]
out["read_back"] = {k: v.tolist() for k, v in index.get_vectors(CHUNKS, ["c", "zz"]).items()}
index.delete(CHUNKS, ["a"])
out["after_delete"] = [sorted(index.ids(CHUNKS)), index.deleted(CHUNKS)]
out["rebuilt"] = [index.rebuild(CHUNKS), sorted(index.ids(CHUNKS)), index.deleted(CHUNKS), index.count(CHUNKS)]
out["missing_collection"] = index.in_space("another-model").count(CHUNKS)
out["collections"] = [c.name for c in helper.client.list_collections()]

os.kill(helper._child, signal.SIGINT)  # Ctrl-C reaches the whole process group: the command handles it
time.sleep(0.3)
out["after_ctrl_c"] = index.count(CHUNKS)

child = os.fork()
if child == 0:  # the saver a command forks: never calls the helper
    try:
        index.count(CHUNKS)
        os._exit(1)
    except RuntimeError:
        os._exit(0)
out["forked_child_refused"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
out["parent_after_fork"] = index.count(CHUNKS)
out["chromadb_imported_here"] = "chromadb" in sys.modules
helper.stop()
out["helper_exit"] = helper._child
try:
    index.count(CHUNKS)
except VectorStoreUnavailable as exc:
    out["after_stop"] = str(exc)

killed = ChromaSubprocess(os.path.join(folder, "chroma"))
os.kill(killed._child, signal.SIGKILL)
try:
    VectorIndex(killed.client, "wb", "w1").count(CHUNKS)
except VectorStoreUnavailable as exc:
    out["helper_killed"] = str(exc)
killed.stop()

open(os.path.join(folder, "not-a-folder"), "w").write("x")
unopenable = ChromaSubprocess(os.path.join(folder, "not-a-folder"))
try:
    VectorIndex(unopenable.client, "wb", "w1").upsert(CHUNKS, ["a"], vectors[:1])
except VectorStoreUnavailable as exc:
    out["unopenable"] = str(exc)
unopenable.stop()
print(json.dumps(out))
"""


def _python(code: str, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    folder = tmp_path_factory.mktemp("helper")
    done = _python(SCENARIOS, folder)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_helper_is_usable_from_a_fresh_process_and_creates_no_store_before_a_call(scenarios):
    assert scenarios["usable"] is True
    assert scenarios["created_before_a_call"] is False
    assert scenarios["count_of_no_store"] == 0


def test_vectors_written_through_the_helper_are_searched_read_deleted_and_rebuilt(scenarios):
    assert scenarios["nearest"][0] == ["b", 1.0, {"document": "d1"}]
    assert len(scenarios["nearest"]) == 2
    assert scenarios["read_back"] == {"c": [0.0, 0.0, 1.0, 0.0]}
    assert scenarios["after_delete"] == [["b", "c"], 1]
    assert scenarios["rebuilt"] == [2, ["b", "c"], 0, 2]  # the slots of deleted vectors gone, the vectors kept
    assert scenarios["missing_collection"] == 0  # Chroma's "does not exist" read as no collection
    assert scenarios["collections"] == ["wb_w1_chunks"]  # collections in a list come back as handles


def test_the_command_never_imports_chromadb_and_the_helper_ignores_ctrl_c(scenarios):
    assert scenarios["chromadb_imported_here"] is False
    assert scenarios["after_ctrl_c"] == 2


def test_a_process_forked_from_the_command_cannot_call_the_helper(scenarios):
    assert scenarios["forked_child_refused"] is True
    assert scenarios["parent_after_fork"] == 2


def test_a_stopped_killed_or_unopenable_helper_is_said_as_the_store_unavailable(scenarios):
    assert "was stopped" in scenarios["after_stop"]
    assert "ended" in scenarios["helper_killed"] and "chroma" in scenarios["helper_killed"]
    assert scenarios["unopenable"].startswith("cannot open the Chroma store at ")
    assert "not-a-folder" in scenarios["unopenable"]


def test_the_helper_ends_when_its_command_is_killed_though_the_commands_saver_lives_on(tmp_path):
    code = textwrap.dedent("""
        import os, signal, sys, time
        from workbench.vectors.chroma_subprocess import ChromaSubprocess
        from workbench.vectors.index import CHUNKS, VectorIndex
        helper = ChromaSubprocess(sys.argv[1])
        VectorIndex(helper.client, "wb", "w1").count(CHUNKS)  # the store opened in the helper
        saver = os.fork()
        if saver == 0:  # a child the command forked, still saving when the command dies (its output let go)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(1, 2)
            time.sleep(120)
            os._exit(0)
        print(helper._child, saver, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = _python(code, tmp_path / "chroma")
    assert done.returncode == -signal.SIGKILL
    helper, saver = map(int, done.stdout.split())
    try:
        deadline = time.monotonic() + 20
        while _running(helper):
            assert time.monotonic() < deadline, "the helper outlived its command by 20 s"
            time.sleep(0.1)
        assert _running(saver)
    finally:
        os.kill(saver, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left for a reaper that never comes has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_ingest_from_the_command_line_writes_its_vectors_through_the_helper(tmp_path, embedder, settings):
    corpus = make_corpus(tmp_path / "corpus", 6)
    workspace = tmp_path / "ws"
    trace = ("import sys; from workbench.cli import main; code = main(sys.argv[1:]); "
             "print('chromadb imported:', 'chromadb' in sys.modules, file=sys.stderr); sys.exit(code)")
    first = _python(trace, "--workspace", workspace, "--json", "ingest", corpus)
    assert first.returncode == 0, first.stderr
    assert "chromadb imported: False" in first.stderr
    assert json.loads(first.stdout)["chunks_written"] == 6  # the helper printed nothing into the JSON
    (corpus / "svc0002.txt").write_text("The service number 2 depends on the cache number 9.\n", encoding="utf-8")
    again = run_cli("--workspace", workspace, "--json", "ingest", corpus)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["documents_updated"] == 1

    ws = Workspace(workspace, settings=settings, embedder=embedder)
    try:
        chunks = {chunk.id: chunk for chunk in ws.chunks()}
        assert ws.vectors.ids(CHUNKS) == set(chunks)
        edited = next(chunk for chunk in chunks.values() if "cache number 9" in chunk.text)
        best = ws.vectors.query(CHUNKS, embedder.embed([edited.text])[0], 1)[0]
        assert best.id == edited.id and best.similarity > 0.99
    finally:
        ws.close()
