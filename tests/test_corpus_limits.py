"""A corpus too large for the configured limit is refused before any work starts, in one line,
and nothing stored is lost or half-written."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import SAMPLE, reopened, run_cli
from workbench.ingest.corpus_limits import CorpusTooLarge, limit_bytes, machine_memory_bytes, projected_text_bytes


def test_without_a_setting_the_limit_is_what_this_machines_memory_holds():
    memory = machine_memory_bytes()
    assert memory > 0
    assert limit_bytes(None) == int((memory * 0.8 - 500_000_000) / 150)
    assert limit_bytes(2) == 2_000_000


def test_files_ingested_again_count_once():
    stored = [("/c/a.md", 300), ("/c/b.md", 200)]
    assert projected_text_bytes({"/c/a.md": 310}, stored) == 510
    assert projected_text_bytes({"/d/new.md": 50}, stored) == 550


def test_an_ingest_over_the_limit_is_refused_and_writes_nothing(make_workspace, settings, tmp_path):
    corpus = tmp_path / "sample_corpus"
    shutil.copytree(SAMPLE, corpus)
    small = settings.model_copy(deep=True)
    small.ingest.max_corpus_mb = 0.001
    ws = make_workspace(settings=small)
    with pytest.raises(CorpusTooLarge, match=r"sample_corpus: the workspace would hold 0\.\d MB of text, over the "
                                             r"limit of 0\.0 MB \(ingest\.max_corpus_mb\); nothing was ingested"):
        ws.ingest([corpus])
    assert ws.record_stats()["documents"] == 0


def test_a_stored_workspace_keeps_everything_when_more_is_refused(sample_copy, tmp_path):
    ws, corpus = sample_copy
    before = ws.record_stats()
    held = sum(n for _, n in ws.store.text_bytes_by_source())
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "big.md").write_text("# Big\n\n" + "The Auth Service depends on Redis. " * 3000)
    limited = reopened(ws, ingest__max_corpus_mb=(held + 50_000) / 1e6)
    try:
        limited.ingest([corpus])  # the same files again: counted once, within the limit
        with pytest.raises(CorpusTooLarge, match="it holds"):
            limited.ingest([extra])
        assert limited.record_stats() == before
        assert limited.graph.entities() == ws.graph.entities()
    finally:
        limited.close()


def test_the_cli_says_it_in_one_line(tmp_path):
    corpus = tmp_path / "sample_corpus"
    shutil.copytree(SAMPLE, corpus)
    (tmp_path / "settings.yaml").write_text("ingest:\n  max_corpus_mb: 0.001\n")
    result = run_cli("--workspace", str(tmp_path / "ws"), "--settings", str(tmp_path / "settings.yaml"),
                     "ingest", str(corpus))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "over the limit" in lines[0] and "Traceback" not in result.stderr


def test_a_workspace_and_hidden_files_inside_the_notes_are_not_counted_as_text(make_workspace, settings, tmp_path):
    notes = tmp_path / "notes"
    shutil.copytree(SAMPLE, notes)
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "cache.bin").write_bytes(b"\0" * 2_000_000)  # left out by the load, so here too
    text = sum(p.stat().st_size for p in notes.rglob("*.*") if ".obsidian" not in p.parts)
    limited = settings.model_copy(deep=True)
    limited.ingest.max_corpus_mb = (text + 50_000) / 1e6
    ws = make_workspace("notes/workspace", settings=limited)  # `ingest .` from inside the notes
    ws.ingest([notes])
    assert sum(p.stat().st_size for p in (notes / "workspace").rglob("*") if p.is_file()) > 1_000_000
    (notes / "later.md").write_text("# Later\n\nThe billing service depends on Redis.\n", encoding="utf-8")
    report = ws.ingest([notes])  # the workspace's own megabytes are no text of the corpus
    assert report.documents_added == 1
