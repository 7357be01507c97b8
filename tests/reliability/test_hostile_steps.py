"""The smaller points of issue 19: warnings for phantom notes and nameless names, reruns after a
crash that complete the step, a removal that empties the workspace asked for, chroma-check by ids."""

from __future__ import annotations

import json

import numpy as np

from workbench.vectors.in_step import VECTORS_IN_FLIGHT
from workbench.vectors.index import CHUNKS



def test_a_relation_to_a_note_that_does_not_exist_is_named(tmp_path, make_workspace):
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "outage.md").write_text("---\nrelations:\n  - {type: RESOLVED_BY, target: fix-ttl.md}\n"
                                      "  - {type: REFERENCES, target: runbook.md}\n---\nThe outage.\n")
    (corpus / "runbook.md").write_text("# Runbook\n\nRestart the cache.\n")
    report = make_workspace().ingest([corpus])
    lines = [p for p in report.extraction_problems if "no stored note" in p]
    assert lines == ["notes/outage.md: relation RESOLVED_BY names 'fix-ttl.md', which is no stored note: kept as "
                     "an entity of its own (check the name, or ingest that note)"]


def test_a_name_made_only_of_punctuation_is_named_not_dropped_silently(tmp_path, make_workspace):
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "marks.md").write_text("---\nrelations:\n  DEPENDS_ON: ['???']\n---\nThe marks note.\n")
    report = make_workspace().ingest([corpus])
    assert "notes/marks.md: name '???' has no letter or digit: no entity made for it" in report.extraction_problems


def test_a_rerun_of_remove_after_a_crash_completes_it_and_exits_0(small, run_cli):
    ws = small.__class__(small.path, settings=small.settings, embedder=small.embedder)
    victim = "corpus/svc0002.txt"
    # The crash: SQLite committed the removal, the vectors were never deleted, the mark stayed.
    ws.store.set_meta(VECTORS_IN_FLIGHT, "1")
    ws.store.delete_documents([victim])
    assert len(ws.vectors.ids(CHUNKS)) == ws.store.count("chunks") + 1
    ws.close()
    done = run_cli("--workspace", small.path, "remove", victim, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["completed_interrupted_write"] is True
    again = small.__class__(small.path, settings=small.settings, embedder=small.embedder)
    assert again.vectors.ids(CHUNKS) == again.store.chunk_ids()
    assert run_cli("--workspace", small.path, "remove", victim).returncode == 2  # now truly nothing there
    again.close()


def test_a_rerun_of_alias_add_after_a_crash_logs_it_once(small, run_cli):
    ws = small.__class__(small.path, settings=small.settings, embedder=small.embedder)
    alias = ("queue number 3", "queue number 4")
    ws.store.record("alias", {"alias": alias[0], "canonical": alias[1]}, alias=alias)  # killed before the sync
    ws.close()
    done = run_cli("--workspace", small.path, "alias", "add", *alias)
    assert done.returncode == 0, done.stderr
    again = small.__class__(small.path, settings=small.settings, embedder=small.embedder)
    assert [e["action"] for e in again.corrections.merge_log()] == ["alias"]
    assert again.entity_vectors.ids() == set(again.graph.nx.nodes)
    again.close()


def test_remove_of_everything_asks_first(small, run_cli):
    refused = run_cli("--workspace", small.path, "remove", "/")
    assert refused.returncode == 2 and "pass --yes" in refused.stderr and "all 6 documents" in refused.stderr
    assert json.loads(run_cli("--workspace", small.path, "stats", "--json").stdout)["documents"] == 6
    done = run_cli("--workspace", small.path, "remove", "/", "--yes")
    assert done.returncode == 0 and "removed 6 documents" in done.stdout


def test_chroma_check_compares_ids_not_counts(small, run_cli):
    ws = small.__class__(small.path, settings=small.settings, embedder=small.embedder)
    gone = sorted(ws.vectors.ids(CHUNKS))[0]
    ws.vectors.delete(CHUNKS, [gone])
    ws.vectors.upsert(CHUNKS, ["not-a-chunk"], np.ones((1, ws.embedder.dimension), dtype=np.float32),
                      [{"document": "nowhere"}])
    assert ws.vectors.count(CHUNKS) == ws.store.count("chunks")  # the counts agree
    ws.close()
    done = run_cli("--workspace", small.path, "chroma-check", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["in_step"] is False
    assert (report["chunk_vectors_missing"], report["chunk_vectors_extra"]) == (1, 1)
