"""The workspace facade: write lock, aliases and splits, stats."""

from __future__ import annotations

import pytest
from filelock import FileLock

from tests.conftest import reopened

from workbench.workspace import WorkspaceBusy


def test_write_lock_is_released_after_each_write(make_workspace, tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The search service depends on Elasticsearch.\n")
    ws = make_workspace()
    ws.ingest([corpus])
    other = FileLock(str(ws.path / "workspace.lock"))
    other.acquire(timeout=0)  # another writer gets in at once: nothing was left held
    other.release()


def test_second_writer_gets_workspace_busy(make_workspace, tmp_path):
    ws = make_workspace()
    ws.lock.timeout = 0.2
    holder = FileLock(str(ws.path / "workspace.lock"), thread_local=False)
    holder.acquire()
    try:
        with pytest.raises(WorkspaceBusy, match="busy"):
            ws.corrections.add_alias("pg", "PostgreSQL")
    finally:
        holder.release()


def test_alias_merges_two_entities_and_remove_alias_undoes_it(make_workspace, tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The billing service is backed by Mongo.\n\nThe ledger is backed by MongoDB.\n")
    ws = make_workspace()
    ws.ingest([corpus])
    assert {"mongo", "mongodb"} <= set(ws.graph.nx.nodes)
    assert "MongoDB" not in {m.canonical for m in ws.merges()}  # read before the alias: kept until the record changes
    ws.corrections.add_alias("Mongo", "MongoDB")
    assert "mongo" not in ws.graph.nx.nodes
    impacted = {name for name, _ in ws.graph.impacted_by("mongodb").impacted}
    assert impacted == {"billing service", "ledger"}
    merged = {m.canonical: m for m in ws.merges()}["MongoDB"]
    assert {f.form for f in merged.surface_forms} == {"Mongo", "MongoDB"}
    ws.corrections.remove_alias("Mongo")
    assert {"mongo", "mongodb"} <= set(ws.graph.nx.nodes)
    assert "MongoDB" not in {m.canonical for m in ws.merges()}
    assert [entry["action"] for entry in ws.corrections.merge_log()] == ["alias", "unalias"]


def test_split_gives_a_surface_form_its_own_entity(make_workspace, tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The login flow depends on the auth service.\n\nThe portal depends on AuthService.\n")
    ws = make_workspace()
    ws.ingest([corpus])
    assert len(ws.graph.impacted_by("auth service").impacted) == 2
    ws.corrections.split("AuthService")
    assert [name for name, _ in ws.graph.impacted_by("auth service").impacted] == ["login flow"]
    ws.corrections.unsplit("AuthService")
    assert len(ws.graph.impacted_by("auth service").impacted) == 2


def test_stats_count_documents_chunks_entities_and_edges(sample_workspace):
    stats = sample_workspace.stats()
    assert stats["documents"] == len(sample_workspace.documents())
    assert stats["chunks"] == len(sample_workspace.chunks())
    assert stats["entities"] == len(sample_workspace.graph)
    assert stats["edges"] == len(sample_workspace.graph.edges())


def test_similar_notes_become_candidates_not_graph_edges(sample_workspace):
    everything = sample_workspace.candidates()
    # Beside similar notes, a note whose text says it replaces another is a SUPERSEDES candidate.
    assert {t.relation for t in everything} <= {"SIMILAR_TO", "SUPERSEDES"}
    candidates = [t for t in everything if t.relation == "SIMILAR_TO"]
    pairs = {frozenset((t.subject, t.object)) for t in candidates}
    assert frozenset(("Decision: keep web sessions in PostgreSQL", "Decision: move web sessions to Redis")) in pairs
    assert all(t.origin == "candidate" and 0.75 <= t.confidence <= 1 for t in candidates)
    assert not [e for e in sample_workspace.graph.edges(include_comention=True) if e.relation == "SIMILAR_TO"]


def test_cli_lists_candidates_with_their_confidence(sample_workspace, capsys):
    import json

    from workbench.cli import main

    assert main(["--workspace", str(sample_workspace.path), "candidates", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed and "SIMILAR_TO" in {c["relation"] for c in listed}
    assert [c["confidence"] for c in listed] == sorted((c["confidence"] for c in listed), reverse=True)


def test_graph_if_ready_builds_in_the_background_and_never_waits_longer_than_asked(make_workspace, tmp_path,
                                                                                  monkeypatch):
    import threading
    import time

    import workbench.workspace.derivation as workspace_module

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The login flow depends on the auth service.\n", encoding="utf-8")
    written = make_workspace()
    written.ingest([corpus])
    (written.path / "graph.npz").unlink()  # a workspace with no graph snapshot (made before it, say)
    ws = reopened(written)  # a process opening the workspace: no graph derived yet
    # The process can take the write lock, so it follows the record from the kept rows (follow_record).
    release, real, calls = threading.Event(), workspace_module.follow_record, []

    def slow(*args, **kwargs):
        calls.append(1)
        release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(workspace_module, "follow_record", slow)
    started = time.perf_counter()
    assert ws.background.graph_if_ready() is None and ws.background.graph_if_ready(wait=0.3) is None
    assert time.perf_counter() - started < 5
    release.set()
    graph = ws.background.graph_if_ready(wait=30)
    assert graph is not None and "loginflow" in graph.nx.nodes and graph is ws.graph
    assert calls == [1]  # one background build served every call
    ws.close()
    again = reopened(written)  # the next process finds the snapshot that build saved: no wait at all
    assert again.background.graph_if_ready(wait=30) is not None and again.derivation.snapshot_status == "loaded"
    again.close()
