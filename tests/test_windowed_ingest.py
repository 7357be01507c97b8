"""A large document streamed in windows of chunks: the same extraction, the same record, atomic."""

from __future__ import annotations

import pytest

from tests.conftest import SAMPLE

import workbench.workspace.ingest_pipeline as ingest_module
from workbench.bench.sizes import write_big_markdown
from workbench.ingest.chunking import chunk_document
from workbench.extract import extract_all, extract_windows, extractors_from_settings
from workbench.ingest.loaders import load_paths
from workbench.record.note_rows import triple_row
from workbench.vectors.index import CHUNKS


def _found(extractions) -> tuple[list[str], list[str], list[str]]:
    mentions, triples, problems = [], [], []
    for found in extractions:
        mentions += map(repr, found.mentions)
        triples += map(repr, found.triples)
        problems += found.problems
    return sorted(mentions), sorted(triples), sorted(problems)


def _assert_windows_equal_whole(documents, extractors, max_chars: int, sizes) -> None:
    for doc in documents:
        chunks = chunk_document(doc, max_chars)
        whole = _found([extract_all(doc, chunks, extractors)])
        for size in sizes:
            windows = list(extract_windows(doc, chunks, extractors, size))
            assert [c for window, _ in windows for c in window] == chunks
            assert _found(found for _, found in windows) == whole, (doc.id, size)


def test_extraction_over_windows_equals_extraction_of_the_whole_sample_corpus(settings):
    documents = load_paths([SAMPLE]).documents
    assert any(doc.relations for doc in documents)  # the declared relations' first chunk is exercised
    extractors = extractors_from_settings(settings.extraction)
    _assert_windows_equal_whole(documents, extractors, settings.chunking.max_chars, sizes=(1, 2, 5))


def test_declared_relations_are_cited_once_from_the_first_chunk_whatever_the_windows(settings):
    doc = next(d for d in load_paths([SAMPLE]).documents if d.relations and len(chunk_document(d)) > 1)
    chunks = chunk_document(doc, settings.chunking.max_chars)
    extractors = extractors_from_settings(settings.extraction)
    declared = [t for _, found in extract_windows(doc, chunks, extractors, 1) for t in found.triples
                if t.origin == "declared"]
    assert len(declared) == len(doc.relations) and {t.chunk_id for t in declared} == {chunks[0].id}


def test_extraction_over_windows_equals_extraction_of_a_generated_large_file(tmp_path, settings):
    path = write_big_markdown(tmp_path / "corpus" / "big.md", 0.25)
    (doc,) = load_paths([path.parent]).documents
    # the co-mention cap is hit, so its one problem line is counted over every window
    extraction = settings.extraction.model_copy(update={"max_comention_pairs": 2})
    extractors = extractors_from_settings(extraction)
    assert len(chunk_document(doc, settings.chunking.max_chars)) > 700
    _assert_windows_equal_whole([doc], extractors, settings.chunking.max_chars, sizes=(64, 256))
    problems = _found([extract_all(doc, chunk_document(doc, settings.chunking.max_chars), extractors)])[2]
    assert sum("co-mention capped" in p for p in problems) == 1


def test_a_window_of_no_chunk_is_refused(settings):
    (doc,) = [d for d in load_paths([SAMPLE]).documents][:1]
    with pytest.raises(ValueError, match="at least one chunk"):
        list(extract_windows(doc, chunk_document(doc), extractors_from_settings(settings.extraction), 0))


def _record(ws) -> dict:
    db = ws.store.db
    return {"chunks": sorted(db.execute("SELECT id, document_id, ordinal, text_hash FROM chunks")),
            "mentions": sorted((m.chunk_id, m.surface, m.entity_type, m.start) for m in ws.store.iter_mentions()),
            "triples": sorted(map(triple_row, ws.store.iter_triples())),
            "vectors": sorted(ws.vectors.ids(CHUNKS)),
            "edges": sorted((e.source, e.relation, e.target, e.chunk_ids) for e in ws.graph.edges(include_comention=True)),
            "entities": sorted((e.key, e.name) for e in ws.graph.entities())}


def test_a_document_written_in_small_windows_equals_one_written_whole(make_workspace, tmp_path, monkeypatch):
    path = write_big_markdown(tmp_path / "corpus" / "big.md", 0.03)
    whole = make_workspace("whole")
    whole.ingest([path.parent])
    monkeypatch.setattr(ingest_module, "BATCH_CHUNKS", 7)
    windowed = make_workspace("windowed")
    report = windowed.ingest([path.parent])
    assert report.chunks_written > 7 * 10 and report.documents_added == 1
    assert _record(windowed) == _record(whole)
    assert windowed.store.version == whole.store.version  # one commit for the document, as before


def test_a_failure_in_a_later_window_stores_none_of_the_document_and_the_next_ingest_mends_it(
        make_workspace, tmp_path, monkeypatch):
    path = write_big_markdown(tmp_path / "corpus" / "big.md", 0.03)
    (tmp_path / "corpus" / "small.md").write_text("# Small\n\nThe auth service depends on Redis.\n", encoding="utf-8")
    monkeypatch.setattr(ingest_module, "BATCH_CHUNKS", 8)
    monkeypatch.setattr(ingest_module, "VECTOR_BATCH", 8)  # each window's vectors sent as it is embedded
    ws = make_workspace("failing")
    real = ingest_module.embed_cached
    calls = []

    def failing(texts, *args):
        calls.append(len(texts))
        if len(calls) == 4:  # windows of the large document are already upserted and inserted
            raise MemoryError("forced in the fourth window")
        return real(texts, *args)

    monkeypatch.setattr(ingest_module, "embed_cached", failing)
    with pytest.raises(MemoryError):
        ws.ingest([path.parent])
    db = ws.store.db
    assert not db.in_transaction
    assert db.execute("SELECT COUNT(*) FROM documents WHERE id LIKE '%big.md%'").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM chunks WHERE document_id LIKE '%big.md%'").fetchone()[0] == 0
    for table in ("mentions", "chunk_mentions", "triples", "comentions"):
        assert db.execute(f"SELECT COUNT(*) FROM {table} WHERE chunk_id NOT IN (SELECT id FROM chunks)").fetchone()[0] == 0
    left = len(ws.vectors.ids(CHUNKS)) - ws.store.count("chunks")
    assert left > 0  # the upserted windows are left in Chroma
    assert ws.interrupted

    monkeypatch.setattr(ingest_module, "embed_cached", real)
    report = ws.ingest([path.parent])
    assert report.vectors_repaired == 0  # each one read back by the chunk it was made for, none embedded again
    assert report.chunks_embedded == report.chunks_written - left
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}
    clean = make_workspace("clean")
    clean.ingest([path.parent])
    assert _record(ws) == _record(clean)
    assert ws.store.integrity_ok()


def test_vectors_reach_chroma_in_upserts_of_vector_batch_each_before_its_commit(make_workspace, tmp_path, monkeypatch):
    path = write_big_markdown(tmp_path / "corpus" / "big.md", 0.03)
    (tmp_path / "corpus" / "small.md").write_text("# Small\n\nThe auth service depends on Redis.\n", encoding="utf-8")
    monkeypatch.setattr(ingest_module, "BATCH_CHUNKS", 8)
    monkeypatch.setattr(ingest_module, "VECTOR_BATCH", 24)
    ws = make_workspace()
    events: list[tuple[str, int]] = []
    upsert, commit = ws.vectors.upsert, ingest_module.DocumentWrites.commit

    def counted_upsert(kind, ids, *args, **kwargs):
        events.append(("upsert", len(ids)))
        return upsert(kind, ids, *args, **kwargs)

    def counted_commit(writes):
        events.append(("commit", 0))
        return commit(writes)

    monkeypatch.setattr(ws.vectors, "upsert", counted_upsert)
    monkeypatch.setattr(ingest_module.DocumentWrites, "commit", counted_commit)
    report = ws.ingest([path.parent])
    sizes = [n for event, n in events if event == "upsert"]
    assert sum(sizes) == report.chunks_written == ws.store.count("chunks") > 3 * 24
    # Each upsert holds VECTOR_BATCH vectors or more, except the one a commit sends before it.
    for i, (event, n) in enumerate(events):
        if event == "upsert" and n < 24:
            assert events[i + 1] == ("commit", 0)
    assert events[-1] == ("commit", 0) and events[-2][0] == "upsert"
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()}


def test_a_document_of_many_windows_edited_embeds_only_its_changed_chunk(make_workspace, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest_module, "BATCH_CHUNKS", 8)  # the document's old chunks leave the record after window 1
    path = tmp_path / "corpus" / "notes.md"
    path.parent.mkdir()
    paragraphs = [f"Service {i} depends on the queue number {i} and the cache in region {i % 5}." for i in range(40)]
    path.write_text("\n\n".join(paragraphs) + "\n")
    ws = make_workspace()
    first = ws.ingest([path.parent])
    assert first.chunks_embedded == 40
    edited = ["The billing service calls every queue it finds in its region.", *paragraphs]
    path.write_text("\n\n".join(edited) + "\n")  # every chunk moves: new ordinals, new ids
    again = ws.ingest([path.parent])
    assert again.documents_updated == 1 and again.chunks_embedded == 1
    assert ws.vectors.ids(CHUNKS) == {c.id for c in ws.chunks()} and len(ws.chunks()) == 41


def test_the_log_of_a_large_write_is_cut_back_once_checkpointed(tmp_path, monkeypatch):
    import numpy as np

    import workbench.record.store as store_module
    from workbench.record.store import Store

    monkeypatch.setattr(store_module, "WAL_LIMIT_BYTES", 2**20)
    store = Store(tmp_path / "workspace.sqlite")
    wal = tmp_path / "workspace.sqlite-wal"
    rng = np.random.default_rng(0)
    store.cache_embeddings([f"h{i}" for i in range(6000)], rng.normal(size=(6000, 384)).astype(np.float32), "m")
    store.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    grown = wal.stat().st_size
    store.set_meta("after", "1")  # the next write starts the log again, cut back to the limit
    assert grown > 8 * 2**20 and wal.stat().st_size <= 2**20
    store.close()
