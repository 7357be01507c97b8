"""A failed step never bricks a workspace (issue 25): a failure forced inside the note-similarity
step, raised in the process (out of memory, an OS error) or killing it outright (SIGKILL), is
finished by the next ingest, the next remove and the next repair: candidates recomputed, the
mark cleared, Chroma's ids equal to SQLite's, no document lost. The user sees one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import workbench.workspace.note_links as note_links
from tests.conftest import ROOT, make_corpus
from workbench.ingest.failures import StepFailed
from workbench.workspace.note_links import note_similarity_candidates
from workbench.vectors.in_step import VECTORS_IN_FLIGHT
from workbench.vectors.index import CHUNKS
from workbench.workspace import Workspace

BEFORE, ADDED = 8, 3  # documents ingested cleanly, then added by the step that fails


def _pairs(triples) -> set[tuple[str, str, str, str]]:
    return {(t.subject, t.relation, t.object, t.chunk_id) for t in triples}


def _next_step(ws: Workspace, step: str, corpus) -> int:
    """Run ``step`` as a user would after the failure; the documents it should leave."""
    if step == "ingest":
        ws.ingest([corpus])
        return BEFORE + ADDED
    if step == "remove":
        assert len(ws.remove(corpus / "svc0000.txt")) == 1
        return BEFORE + ADDED - 1
    ws.repair()
    return BEFORE + ADDED


def _assert_step_finished(ws: Workspace, documents: int, stale: set) -> None:
    assert ws.store.meta(VECTORS_IN_FLIGHT) == "0" and not ws.interrupted
    assert ws.store.count("documents") == documents
    stored = ws.candidates()
    fresh = note_similarity_candidates(ws.store, ws.embedder, ws.settings.extraction.similar_notes_threshold,
                                       vectors=ws.vectors)  # the chunks' own vectors, as the write step read them
    assert stored and _pairs(stored) == _pairs(fresh)  # recomputed on the record as it is
    assert _pairs(stored) != stale
    assert ws.vectors.ids(CHUNKS) == ws.store.chunk_ids()
    assert ws.vector_counts() == {"chunks": ws.store.count("chunks"), "entities": len(ws.graph.nx.nodes)}
    assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes)


@pytest.mark.parametrize("failure", [MemoryError, OSError])
@pytest.mark.parametrize("step", ["ingest", "remove", "repair"])
def test_a_failure_inside_the_similarity_step_is_finished_by_the_next_step(step, failure, make_workspace,
                                                                          tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "corpus", BEFORE)
    ws = make_workspace()
    ws.ingest([corpus])
    stale = _pairs(ws.candidates())
    make_corpus(corpus, ADDED, offset=BEFORE)

    def fail(*args, **kwargs):
        raise failure(28, "No space left on device") if failure is OSError else failure()

    monkeypatch.setattr(note_links, "refresh_note_neighbours", fail)
    with pytest.raises(StepFailed, match=r"the note-similarity step failed \((MemoryError|the disk is full \(ENOSPC)") as caught:
        ws.ingest([corpus])
    assert "python -m workbench repair" in str(caught.value)
    assert ws.interrupted and ws.store.count("documents") == BEFORE + ADDED  # every document kept
    assert _pairs(ws.candidates()) == stale
    monkeypatch.undo()

    documents = _next_step(ws, step, corpus)
    _assert_step_finished(ws, documents, stale)


_DIE_IN_THE_SIMILARITY_STEP = textwrap.dedent("""
    import os, signal, sys
    import workbench.workspace.note_links as ingest
    from workbench.settings import load_settings
    from workbench.workspace import Workspace

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    ingest.refresh_note_neighbours = die
    Workspace(sys.argv[1], settings=load_settings()).ingest([sys.argv[2]])
""")


@pytest.fixture(scope="module")
def killed_in_the_similarity_step(tmp_path_factory, embedder, settings):
    """A workspace whose ingest of three more documents was killed (SIGKILL, in a child process)
    inside the similarity step; ``(folder, corpus, candidates before)``, copied for each test."""
    root = tmp_path_factory.mktemp("killed")
    corpus = make_corpus(root / "corpus", BEFORE)
    ws = Workspace(root / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    stale = _pairs(ws.candidates())
    ws.close()
    make_corpus(corpus, ADDED, offset=BEFORE)
    child = subprocess.run([sys.executable, "-c", _DIE_IN_THE_SIMILARITY_STEP, str(root / "ws"), str(corpus)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1"})
    assert child.returncode == -9, child.stderr
    return root / "ws", corpus, stale


@pytest.mark.parametrize("step", ["ingest", "remove", "repair"])
def test_a_kill_inside_the_similarity_step_is_finished_by_the_next_step(step, killed_in_the_similarity_step,
                                                                       tmp_path, embedder, settings):
    folder, corpus, stale = killed_in_the_similarity_step
    copy = shutil.copytree(folder, tmp_path / "ws")
    ws = Workspace(copy, settings=settings, embedder=embedder)
    try:
        assert ws.interrupted and ws.store.count("documents") == BEFORE + ADDED  # committed before the kill
        assert _pairs(ws.candidates()) == stale
        documents = _next_step(ws, step, corpus)
        _assert_step_finished(ws, documents, stale)
    finally:
        ws.close()


_FAIL_IN_THE_CLI = textwrap.dedent("""
    import sys
    import workbench.workspace.note_links as ingest
    from workbench.cli import main

    def fail(*args, **kwargs):
        raise MemoryError()

    ingest.refresh_note_neighbours = fail
    sys.exit(main(sys.argv[1:]))
""")


def test_the_cli_says_in_one_line_how_to_finish_a_failed_step(tmp_path, make_workspace, run_cli):
    corpus = make_corpus(tmp_path / "corpus", 4)
    ws = make_workspace()
    ws.ingest([corpus])
    ws.close()
    failed = subprocess.run([sys.executable, "-c", _FAIL_IN_THE_CLI, "--workspace", str(ws.path), "remove",
                             str(corpus / "svc0000.txt")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1"})
    assert failed.returncode == 1
    assert "Traceback" not in failed.stderr
    [line] = failed.stderr.strip().splitlines()
    assert line.startswith("error: the note-similarity step failed (MemoryError); every document written "
                           "is kept") and "python -m workbench repair" in line
    repaired = run_cli("--workspace", ws.path, "repair")
    assert repaired.returncode == 0, repaired.stderr
    again = Workspace(ws.path, settings=ws.settings, embedder=ws.embedder)
    assert not again.interrupted and again.store.count("documents") == 3
    again.close()
