"""The ingest pipeline against the real model and a real Chroma store."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.conftest import ROOT, SAMPLE, committed_documents, make_corpus

from workbench.vectors.index import CHUNKS


def write_corpus(folder: Path, n: int, offset: int = 0) -> Path:
    """``n`` two-paragraph documents (see :func:`tests.conftest.make_corpus`)."""
    return make_corpus(folder, n, offset, reviewed=True)


def snapshot(ws) -> dict:
    """What must equal between two workspaces holding the same corpus."""
    stats = ws.stats()
    stats.pop("workspace")
    chunk_ids = sorted(c.id for c in ws.chunks())
    return {"stats": stats, "chunks": chunk_ids, "vectors": sorted(ws.vectors.ids(CHUNKS)),
            "edges": sorted((e.source, e.relation, e.target, e.chunk_ids) for e in ws.graph.edges(include_comention=True))}


def test_second_ingest_of_unchanged_corpus_embeds_nothing(make_workspace, tmp_path):
    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    ws = make_workspace()
    first = ws.ingest([corpus])
    second = ws.ingest([corpus])
    assert first.chunks_embedded > 0 and first.documents_added == first.documents_seen
    assert second.chunks_embedded == 0
    assert second.documents_unchanged == first.documents_seen
    assert second.chunks_written == 0


def test_changed_file_replaces_its_chunks(make_workspace, tmp_path):
    corpus = write_corpus(tmp_path / "c", 3)
    ws = make_workspace()
    ws.ingest([corpus])
    before = {c.id for c in ws.chunks()}
    (corpus / "svc0001.txt").write_text("The billing service is backed by PostgreSQL.\n", encoding="utf-8")
    report = ws.ingest([corpus])
    after = ws.chunks()
    assert report.documents_updated == 1 and report.documents_unchanged == 2
    texts = [c.text for c in after if c.document_id.endswith("svc0001.txt")]
    assert texts == ["The billing service is backed by PostgreSQL."]
    assert {c.id for c in after} != before
    assert ws.vectors.ids(CHUNKS) == {c.id for c in after}
    assert ("billingservice", "backed_by", "postgresql") in {(e.source, e.relation, e.target) for e in ws.graph.edges()}


def test_removing_a_file_drops_edges_only_it_supported_and_lowers_shared_weight(make_workspace, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("The login flow depends on the auth service.\n\nThe auth service depends on the token cache.\n")
    (corpus / "b.md").write_text("AuthService depends on the token cache.\n")
    ws = make_workspace()
    ws.ingest([corpus])
    edges = {(e.source, e.target): e for e in ws.graph.edges()}
    assert edges[("authservice", "tokencache")].weight == 2

    (corpus / "a.md").unlink()
    report = ws.ingest([corpus])
    edges = {(e.source, e.target): e for e in ws.graph.edges()}
    assert report.documents_removed == 1
    assert ("loginflow", "authservice") not in edges
    assert edges[("authservice", "tokencache")].weight == 1
    assert edges[("authservice", "tokencache")].documents == ("corpus/b.md",)
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}


def test_remove_command_path_removes_documents_and_vectors(make_workspace, tmp_path):
    corpus = write_corpus(tmp_path / "c", 4)
    ws = make_workspace()
    ws.ingest([corpus])
    removed = ws.remove(corpus / "svc0002.txt")
    assert removed == ["c/svc0002.txt"]
    assert ws.stats()["documents"] == 3
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}


def test_bad_files_are_reported_and_good_ones_ingested(make_workspace, tmp_path):
    corpus = tmp_path / "mixed"
    corpus.mkdir()
    (corpus / "good.md").write_text("The search service depends on Elasticsearch.\n")
    (corpus / "empty.txt").write_text("")
    (corpus / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (corpus / "chat.jsonl").write_text('{"speaker": "@ana", "text": "redis is down"}\n{broken\n')
    report = make_workspace().ingest([corpus])
    problems = [str(p) for p in report.problems]
    assert report.documents_added == 2
    assert any("empty.txt" in p for p in problems)
    assert any("logo.png" in p for p in problems)
    assert any("chat.jsonl" in p and "line 2" in p for p in problems)


def _ingest_process(workspace: Path, corpus: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "--workspace", str(workspace), "ingest", str(corpus)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def test_kill_during_ingest_then_ingest_again_equals_clean_ingest(make_workspace, tmp_path):
    corpus = write_corpus(tmp_path / "big", 1200)  # several commits of VECTOR_BATCH chunks
    target = tmp_path / "killed"
    proc = _ingest_process(target, corpus)
    deadline = time.monotonic() + 240
    # Kill once the first batch is committed, so the kill lands mid-ingest.
    while committed_documents(target / "workspace.sqlite") == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the ingest finished before it could be killed; make the corpus larger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = committed_documents(target / "workspace.sqlite")
    assert 0 < partial < 1200

    resumed = make_workspace("killed")
    report = resumed.ingest([corpus])
    assert report.documents_unchanged == partial
    clean = make_workspace("clean")
    clean.ingest([corpus])
    assert snapshot(resumed) == snapshot(clean)
    assert resumed.store.integrity_ok()


def test_unchanged_reingest_touches_no_vectors_unless_a_write_was_interrupted(make_workspace, tmp_path):
    import numpy as np

    from workbench.vectors.in_step import VECTORS_IN_FLIGHT

    corpus = write_corpus(tmp_path / "c", 3)
    ws = make_workspace()
    ws.ingest([corpus])

    def listing_forbidden(kind):
        raise AssertionError("an unchanged re-ingest listed the vector store")

    real_ids = ws.vectors.ids
    ws.vectors.ids = listing_forbidden
    assert ws.ingest([corpus]).documents_unchanged == 3
    ws.vectors.ids = real_ids

    # A write that died midway leaves the mark and a stray vector: the next ingest repairs it.
    ws.vectors.upsert(CHUNKS, ["stray"], np.ones((1, ws.embedder.dimension), dtype=np.float32))
    ws.store.set_meta(VECTORS_IN_FLIGHT, "1")
    report = ws.ingest([corpus])
    assert report.vectors_repaired == 1
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}
    assert ws.store.meta(VECTORS_IN_FLIGHT) == "0"


def test_unchanged_files_are_not_even_parsed_on_reingest(make_workspace, tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "c", 3)
    ws = make_workspace()
    ws.ingest([corpus])
    parsed = []
    import workbench.ingest.loaders as loaders

    real = loaders.load_file
    monkeypatch.setattr(loaders, "load_file", lambda path, root: parsed.append(path.name) or real(path, root))
    (corpus / "svc0001.txt").write_text("The ledger is backed by PostgreSQL.\n", encoding="utf-8")
    report = ws.ingest([corpus])
    assert parsed == ["svc0001.txt"]
    assert (report.documents_unchanged, report.documents_updated) == (2, 1)


def test_changed_extraction_settings_reextract_every_document(make_workspace, tmp_path, settings):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The portal leans on the auth service.\n")
    ws = make_workspace()
    ws.ingest([corpus])
    assert ws.graph.edges() == []
    changed = settings.model_copy(deep=True)
    changed.extraction.relations[0].phrases.append("leans on")
    again = make_workspace(settings=changed)
    report = again.ingest([corpus])
    assert report.documents_updated == 1 and report.chunks_embedded == 0
    assert [(e.source, e.relation, e.target) for e in again.graph.edges()] == [("portal", "depends_on", "authservice")]
    assert again.vectors.ids(CHUNKS) == {c.id for c in again.chunks()}


def test_packing_paragraphs_chunks_every_document_again_and_unpacking_gives_the_chunks_back(make_workspace, tmp_path,
                                                                                            settings):
    corpus = make_corpus(tmp_path / "c", 6, reviewed=True)  # two paragraphs a document
    ws = make_workspace()
    assert ws.ingest([corpus]).documents_added == 6
    paragraphs = sorted((c.id, c.text) for c in ws.chunks())
    assert len(paragraphs) == 12
    assert ws.ingest([corpus]).documents_updated == 0  # the setting off changes no document's fingerprint
    packed = settings.model_copy(deep=True)
    packed.chunking.pack_paragraphs = True
    report = make_workspace(settings=packed).ingest([corpus])
    assert report.documents_updated == 6
    joined = make_workspace(settings=packed).chunks()
    assert len(joined) == 6 and all("\n\nService" in c.text for c in joined)
    assert make_workspace(settings=packed).vectors.ids(CHUNKS) == {c.id for c in joined}
    assert make_workspace().ingest([corpus]).documents_updated == 6
    assert sorted((c.id, c.text) for c in make_workspace().chunks()) == paragraphs


def test_a_document_of_pack_from_chars_or_more_has_its_paragraphs_packed_and_a_shorter_one_does_not(
        make_workspace, tmp_path, settings):
    corpus = make_corpus(tmp_path / "c", 3, reviewed=True)  # two paragraphs, about 110 characters
    paragraphs = (f"The worker {i} depends on the queue {i} and reports to the scheduler." for i in range(12))
    (corpus / "big.txt").write_text("\n\n".join(paragraphs))
    threshold = settings.model_copy(deep=True)
    threshold.chunking.pack_from_chars = 300
    ws = make_workspace(settings=threshold)
    ws.ingest([corpus])
    by_document = {d.id: [c.text for c in ws.chunks() if c.document_id == d.id] for d in ws.documents()}
    assert [len(by_document[f"c/svc{i:04d}.txt"]) for i in range(3)] == [2, 2, 2]
    big = (corpus / "big.txt").read_text()
    assert by_document["c/big.txt"] == [big]  # twelve paragraphs, one chunk: they fit in max_chars
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}
    assert ws.ingest([corpus]).documents_updated == 0
    never = settings.model_copy(deep=True)
    never.chunking.pack_from_chars = None
    again = make_workspace(settings=never)
    (corpus / "svc0000.txt").write_text("The service number 0 depends on the queue number 5.\n")
    report = again.ingest([corpus])
    assert report.documents_updated == 4  # another chunking: every document redone
    assert report.files_redone_for_settings == 3  # the edited file is redone for its own sake
    assert len([c for c in again.chunks() if c.document_id == "c/big.txt"]) == 12
    packed = settings.model_copy(deep=True)
    packed.chunking.pack_paragraphs = True
    make_workspace(settings=packed).ingest([corpus])
    packed.chunking.pack_from_chars = 300
    assert make_workspace(settings=packed).ingest([corpus]).documents_updated == 0  # all packed already


def test_a_removed_record_comes_back_when_its_file_is_ingested_again(make_workspace, tmp_path):
    records = tmp_path / "kb"
    records.mkdir()
    (records / "glossary.jsonl").write_text(
        '{"id": "a", "title": "Redis", "text": "Redis is an in-memory store."}\n'
        '{"id": "b", "title": "Kafka", "text": "Kafka is a log."}\n', encoding="utf-8")
    ws = make_workspace()
    ws.ingest([records])
    assert ws.remove("kb/glossary.jsonl#b") == ["kb/glossary.jsonl#b"]
    report = ws.ingest([records])
    assert (report.documents_added, report.documents_unchanged) == (1, 1)
    assert ws.stats()["documents"] == 2


def test_ingest_reports_each_stage_after_the_documents_so_a_long_one_is_not_taken_for_a_hang(make_workspace, tmp_path):
    ws = make_workspace()
    calls: list[tuple[str, int, int]] = []
    ws.ingest([make_corpus(tmp_path / "c", 5)], progress=lambda stage, done, total: calls.append((stage, done, total)))
    stages = list(dict.fromkeys(stage for stage, _, _ in calls))
    assert stages == ["ingest", "context graph", "entity names", "summaries", "keyword index"]
    for stage in stages:
        mine = [(done, total) for s, done, total in calls if s == stage]
        assert mine[-1][0] == mine[-1][1] > 0, (stage, mine)  # each one ends done
    names = [(done, total) for s, done, total in calls if s == "entity names"]
    assert names[-1][1] == len(ws.graph.entities()) > 5  # the entity names count rows, not one step
    calls.clear()
    ws.ingest([make_corpus(tmp_path / "c", 5)], progress=lambda stage, done, total: calls.append((stage, done, total)))
    assert "entity names" in {s for s, _, _ in calls}  # said, though nothing changed to embed


def test_the_terminal_bar_starts_again_for_each_stage(monkeypatch):
    import io

    from workbench.runtime.progress import tqdm_progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    progress = tqdm_progress()
    for stage, done, total in [("ingest", 0, 3_000_000), ("ingest", 3_000_000, 3_000_000), ("context graph", 0, 1),
                               ("context graph", 1, 1), ("entity names", 4096, 9000), ("entity names", 9000, 9000)]:
        progress(stage, done, total)
    drawn = screen.getvalue()
    assert "ingest: 100%" in drawn and "3.00M/3.00M [" in drawn  # characters of text, so one large file moves it
    assert "context graph: 100%" in drawn and "step/s" not in drawn
    assert "entity names:  46%" in drawn and "9000/9000 [" in drawn


#: Three paragraphs, a chunk each, in one file; a paragraph put first moves every chunk (new ids).
PARAGRAPHS = ["The portal depends on the auth service for every login.",
              "The auth service runs on Kubernetes in both regions.",
              "The token cache is backed by Redis with one replica."]


def _written(corpus: Path, *paragraphs: str) -> Path:
    corpus.mkdir(exist_ok=True)
    (corpus / "a.md").write_text("\n\n".join(paragraphs) + "\n")
    return corpus


def test_a_chunk_vector_is_kept_once_and_a_moved_chunk_is_read_back_not_embedded(make_workspace, tmp_path):
    from workbench.embedding import text_hash

    paragraphs = PARAGRAPHS
    corpus = _written(tmp_path / "c", *paragraphs)
    ws = make_workspace()
    ws.ingest([corpus])
    before = {c.text: c.id for c in ws.chunks()}
    assert len(before) == 3
    # Chroma holds the vectors; the record's cache holds none of them
    assert ws.store.cached_embeddings(sorted(text_hash(t) for t in before), ws.embedder.name) == {}
    stored = ws.vectors.get_vectors(CHUNKS, list(before.values()))

    # a paragraph put first moves every chunk (new ordinals, new ids): only the new one is embedded
    _written(corpus, "Billing calls the portal for each invoice it sends.", *paragraphs)
    report = ws.ingest([corpus])
    after = {c.text: c.id for c in ws.chunks()}
    assert report.documents_updated == 1 and report.chunks_embedded == 1
    assert not set(after.values()) & set(before.values())
    assert ws.vectors.ids(CHUNKS) == set(after.values())
    moved = ws.vectors.get_vectors(CHUNKS, [after[t] for t in paragraphs])
    # Read back, not embedded (one chunk was): the cosine store keeps a vector normalised, so one
    # written again may move by a float32 rounding (an embedding in another batch moves as little,
    # which is why chunks_embedded is the test of it).
    assert all(np.allclose(moved[after[t]], stored[before[t]], rtol=0, atol=1e-6) for t in paragraphs)


def test_a_fresh_process_embeds_a_few_moved_chunks_with_a_new_one_rather_than_load_chromas_vectors(make_workspace,
                                                                                                  tmp_path):
    paragraphs = PARAGRAPHS
    corpus = _written(tmp_path / "c", *paragraphs)
    first = make_workspace()
    first.ingest([corpus])
    stored = first.vectors.get_vectors(CHUNKS, [c.id for c in first.chunks()])
    before = {c.text: stored[c.id] for c in first.chunks()}
    first.close()

    _written(corpus, "Billing calls the portal for each invoice it sends.", *paragraphs)
    fresh = make_workspace()  # a new process's workspace: it has read no vector
    report = fresh.ingest([corpus])
    assert report.documents_updated == 1 and report.chunks_embedded == 4  # the three moved ones with the new one
    after = {c.text: c.id for c in fresh.chunks()}
    assert fresh.vectors.ids(CHUNKS) == set(after.values())
    again = fresh.vectors.get_vectors(CHUNKS, [after[t] for t in paragraphs])
    assert all(np.allclose(again[after[t]], before[t], rtol=0, atol=1e-5) for t in paragraphs)  # the same model

    # the collection read (above), a moved chunk is read back again
    _written(corpus, "Invoices wait in the queue overnight.", *paragraphs)
    assert fresh.ingest([corpus]).chunks_embedded == 1


def test_repair_drops_the_chunk_vectors_an_earlier_version_cached_and_gives_the_space_back(make_workspace, tmp_path,
                                                                                          capsys):
    import json

    from workbench.cli import main
    from workbench.embedding import text_hash

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("\n\n".join(f"Service {i} depends on the queue number {i} in region {i % 7}."
                                             for i in range(300)) + "\n")
    ws = make_workspace()
    ws.ingest([corpus])
    chunks = ws.chunks()
    hashes = [text_hash(c.text) for c in chunks]
    # what an earlier version left: every chunk vector cached in the record too, and one other text
    ws.store.cache_embeddings(hashes, ws.embedder.embed([c.text for c in chunks]), ws.embedder.name)
    ws.store.cache_embeddings([text_hash("a community report")], ws.embedder.embed(["a community report"]),
                              ws.embedder.name)
    before = ws.store.size_bytes()
    held = ws.vectors.get_vectors(CHUNKS, [c.id for c in chunks])

    ws.close()
    assert main(["--workspace", str(ws.path), "repair", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["vectors_changed"] == 0 and said["record_mib"] < said["record_mib_before"]
    ws = make_workspace()
    assert ws.store.cached_embeddings(hashes, ws.embedder.name) == {}
    assert list(ws.store.cached_embeddings([text_hash("a community report")], ws.embedder.name)) == \
        [text_hash("a community report")]
    assert ws.store.size_bytes() < before - 300 * 1536  # the pages went back, not only the rows
    after = ws.vectors.get_vectors(CHUNKS, [c.id for c in chunks])
    # the rebuilt collection holds the same vectors (Chroma normalises what it is given again: the last bit may move)
    assert len(chunks) >= 290 and all(np.allclose(after[i], v, atol=1e-6) for i, v in held.items())


def test_a_renamed_file_is_written_under_its_new_name_without_embedding_again(make_workspace, tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "old.md").write_text("The portal depends on the auth service for every login.\n\n"
                                   "The auth service runs on Kubernetes in both regions.\n")
    ws = make_workspace()
    ws.ingest([corpus])
    (corpus / "old.md").rename(corpus / "new.md")
    report = ws.ingest([corpus])
    assert (report.documents_added, report.documents_removed, report.chunks_embedded) == (1, 1, 0)
    assert [d.id for d in ws.documents()] == ["c/new.md"]
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()} and len(ws.chunks()) == 2


def test_the_cli_says_why_unchanged_files_are_written_again_after_a_chunking_change(tmp_path, capsys):
    from workbench.cli import main

    corpus = make_corpus(tmp_path / "c", 2, reviewed=True)
    workspace = ["--workspace", str(tmp_path / "ws")]
    assert main([*workspace, "ingest", str(corpus)]) == 0
    assert "chunked and extracted again" not in capsys.readouterr().out
    settings_file = tmp_path / "packed.yaml"
    settings_file.write_text("chunking:\n  pack_from_chars: 50\n")
    assert main([*workspace, "--settings", str(settings_file), "ingest", str(corpus)]) == 0
    said = capsys.readouterr().out
    assert "2 updated" in said and "2 unchanged files chunked and extracted again: the chunking or extraction settings" in said


def test_a_command_closes_its_workspace_so_no_write_ahead_log_is_left(tmp_path, capsys):
    from workbench.cli import main

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The portal depends on the auth service for every login.\n")
    assert main(["--workspace", str(tmp_path / "ws"), "ingest", str(corpus)]) == 0
    assert main(["--workspace", str(tmp_path / "ws"), "stats"]) == 0
    assert "1 document" in capsys.readouterr().out
    assert not (tmp_path / "ws" / "workspace.sqlite-wal").exists()  # folded into the record, then deleted
