"""A long first ingest resumes: interrupted (Ctrl-C, kill -9), the next ingest embeds only the
chunks whose vectors were not yet stored, and progress is told as text becomes durable."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

import workbench.workspace.ingest_pipeline as ingest_module
from workbench.workspace.ingest_pipeline import VECTOR_BATCH
from workbench.runtime.progress import DOCUMENTS
from workbench.vectors.index import CHUNKS

#: Two sends of VECTOR_BATCH chunks: the first is durable half way through the one file.
PARAGRAPHS = 2 * VECTOR_BATCH
#: The batch sizes of the in-process tests (the subprocess test keeps the real ones).
SMALL_BATCH, SMALL_VECTOR_BATCH = 16, 64


@pytest.fixture
def small_batches(monkeypatch):
    """Windows of SMALL_BATCH chunks, vectors sent SMALL_VECTOR_BATCH at a time: the same steps, fewer chunks."""
    monkeypatch.setattr(ingest_module, "BATCH_CHUNKS", SMALL_BATCH)
    monkeypatch.setattr(ingest_module, "VECTOR_BATCH", SMALL_VECTOR_BATCH)


def write_handbook(folder: Path, paragraphs: int = PARAGRAPHS) -> Path:
    """One Markdown file of ``paragraphs`` short, all-different paragraphs (a chunk each)."""
    folder.mkdir(parents=True, exist_ok=True)
    teams = ["billing", "search", "ledger", "portal", "payments", "identity", "reports"]
    lines = [f"Rule {i}: the {teams[i % 7]} team reviews change {i * 7919 % 100003} before week {i % 52}."
             for i in range(paragraphs)]
    (folder / "handbook.md").write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_an_ingest_interrupted_half_way_embeds_only_the_rest_when_run_again(make_workspace, tmp_path, small_batches):
    corpus = write_handbook(tmp_path / "c", 2 * SMALL_VECTOR_BATCH)
    ws = make_workspace()
    told: list[tuple[int, int]] = []

    def interrupt_half_way(stage: str, done: int, total: int) -> None:
        if stage == DOCUMENTS:
            told.append((done, total))
            if 0 < done < total:  # the first SMALL_VECTOR_BATCH vectors are stored: half the file
                raise KeyboardInterrupt  # what Ctrl-C raises

    with pytest.raises(KeyboardInterrupt):
        ws.ingest([corpus], progress=interrupt_half_way)
    assert ws.store.count("chunks") == 0  # the document is stored whole or not at all
    assert ws.unfinished() is not None
    # progress moved inside the one file, in characters of text
    assert told[0] == (0, told[0][1]) and len(told) == 2 and 0.45 < told[-1][0] / told[-1][1] < 0.55

    report = ws.ingest([corpus])
    assert report.chunks_written == 2 * SMALL_VECTOR_BATCH
    assert report.chunks_embedded == SMALL_VECTOR_BATCH  # the first half is read back
    assert ws.unfinished() is None
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}
    # the vectors read back are the ones the model gives
    some = ws.chunks()[:3]
    held = ws.vectors.get_vectors(CHUNKS, [c.id for c in some])
    fresh = ws.embedder.embed([c.text for c in some])
    assert all(abs(float(held[c.id] @ v) - 1.0) < 1e-4 for c, v in zip(some, fresh))


def test_vectors_of_an_interrupted_ingest_no_chunk_claims_are_deleted(make_workspace, tmp_path, small_batches):
    corpus = write_handbook(tmp_path / "c", SMALL_VECTOR_BATCH + 40)
    ws = make_workspace()

    def interrupt_once_durable(stage: str, done: int, total: int) -> None:
        if stage == DOCUMENTS and 0 < done < total:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ws.ingest([corpus], progress=interrupt_once_durable)
    assert ws.vectors.count(CHUNKS) == SMALL_VECTOR_BATCH  # sent before the interrupt, named by no row
    (corpus / "handbook.md").write_text("The portal depends on the auth service.\n", encoding="utf-8")
    report = ws.ingest([corpus])
    assert report.chunks_written == 1 and report.vectors_repaired == SMALL_VECTOR_BATCH
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}
    assert ws.unfinished() is None


def test_a_first_ingest_killed_half_way_embeds_under_55_percent_when_run_again(tmp_path):
    corpus = write_handbook(tmp_path / "c")
    workspace = tmp_path / "ws"
    env = {key: value for key, value in os.environ.items() if key != "TQDM_DISABLE"}
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "--workspace", str(workspace), "ingest", str(corpus)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    seen: list[str] = []
    deadline = time.monotonic() + 300
    assert proc.stderr is not None
    for line in proc.stderr:  # stderr is a pipe: plain progress lines, not a bar
        seen.append(line)
        found = re.match(r"ingest: ([\d,]+) of ([\d,]+) characters of text \((\d+)%\)", line)
        if found and 0 < int(found.group(3)) < 100:  # the first VECTOR_BATCH vectors are stored: half the file
            os.kill(proc.pid, signal.SIGKILL)
            break
        assert time.monotonic() < deadline, seen
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "".join(seen)  # killed half way, not finished
    assert "left" in "".join(seen)  # the time left, from the measured rate

    done = subprocess.run([sys.executable, "-m", "workbench", "--workspace", str(workspace), "--json",
                           "ingest", str(corpus)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**env, "TQDM_DISABLE": "1"})
    assert done.returncode == 0, done.stderr
    import json

    report = json.loads(done.stdout)
    assert report["chunks_written"] == PARAGRAPHS == report["stats"]["chunks"]
    assert 0 < report["chunks_embedded"] < 0.55 * PARAGRAPHS, report
