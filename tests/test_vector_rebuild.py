"""Chroma keeps the slot of every vector deleted (chroma-core/chroma#2594): the count of deleted
vectors, the rebuild ``repair`` makes when there are any, and a rebuild cut short."""

from __future__ import annotations

import json
import re

import numpy as np

from tests.test_chroma_folders import free_pages
from workbench.cli import main
from workbench.vectors.in_step import VECTORS_IN_FLIGHT
from workbench.vectors.index import CHUNKS, REBUILD_SUFFIX

PARAGRAPHS = [f"Service {i} depends on the queue number {i} and the cache in region {i % 5}." for i in range(400)]


def _write(path, extra: int) -> None:
    added = [f"Note {j}: the billing service calls queue {j} for every invoice it sends." for j in range(extra)]
    path.write_text("\n\n".join(added + PARAGRAPHS) + "\n")


def _ingested(make_workspace, tmp_path, extra: int):
    """A workspace holding one note of the paragraphs, ``extra`` notes put first; and its file."""
    path = tmp_path / "c" / "notes.md"
    path.parent.mkdir(exist_ok=True)
    _write(path, extra)
    ws = make_workspace()
    ws.ingest([path.parent])
    return ws, path


def _segment_folders(ws) -> list[str]:
    return _segment_folders_in(ws.path)


def _segment_folders_in(workspace) -> list[str]:
    return [p.name for p in (workspace / "chroma").iterdir() if p.is_dir() and re.fullmatch(r"[0-9a-f-]{36}", p.name)]


def _store_bytes(ws) -> int:
    return sum(p.stat().st_size for p in (ws.path / "chroma").rglob("*") if p.is_file())


def test_repair_rebuilds_a_collection_whose_chunks_moved_and_gives_its_folders_back(make_workspace, tmp_path, capsys):
    ws, path = _ingested(make_workspace, tmp_path, 0)
    assert ws.vectors.deleted(CHUNKS) == 0
    for extra in (1, 2, 3):  # a paragraph put first each time: every chunk gets a new id
        _write(path, extra)
        assert ws.ingest([path.parent]).chunks_embedded == 1
    assert ws.vectors.deleted(CHUNKS) == 3 * 400  # the notes put first before keep their ids
    chunks = {c.id for c in ws.chunks()}
    held = ws.vectors.get_vectors(CHUNKS, sorted(chunks))
    ws.close()
    grown, folders = _store_bytes(ws), len(_segment_folders(ws))

    assert main(["--workspace", str(ws.path), "repair", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["vectors_changed"], said["deleted_vectors_freed"]) == (0, 3 * 400)
    assert said["chroma_mib"] < said["chroma_mib_before"]
    ws = make_workspace()
    assert ws.vectors.deleted(CHUNKS) == 0 and ws.vectors.ids(CHUNKS) == chunks
    copied = ws.vectors.get_vectors(CHUNKS, sorted(chunks))
    assert all(np.allclose(copied[i], held[i], atol=1e-6) for i in chunks)
    hit = ws.vectors.query(CHUNKS, held[min(chunks)], 1)[0]
    assert hit.id == min(chunks) and hit.similarity > 0.999
    ws.close()
    assert len(_segment_folders(ws)) == folders  # the old collection's folder went with it
    assert free_pages(ws.path / "chroma" / "chroma.sqlite3") == 0  # and the catalogue's pages of its rows
    assert _store_bytes(ws) * 1.5 < grown  # 403 vectors' slots instead of 1,603 (4.8 MB to 2.3 MB here)


def test_a_rebuild_cut_short_is_finished_or_undone_by_the_next_write(make_workspace, tmp_path):
    ws, path = _ingested(make_workspace, tmp_path, 0)
    chunks = sorted(c.id for c in ws.chunks())
    held = ws.vectors.get_vectors(CHUNKS, chunks)
    name = ws.vectors.existing(CHUNKS).name

    def names() -> set[str]:  # through the client open now (an ingest closes the one it used)
        return {getattr(c, "name", c) for c in ws.vectors.client.list_collections()}

    def copy_of(ids):
        copy = ws.vectors.client.create_collection(name + REBUILD_SUFFIX, configuration={"hnsw": {"space": "cosine"}},
                                        embedding_function=None)
        copy.add(ids=ids, embeddings=np.stack([held[i] for i in ids]), metadatas=[{"document": "x"}] * len(ids))

    # cut while copying: the original stands, the partial copy is dropped
    copy_of(chunks[:10])
    ws.store.set_meta(VECTORS_IN_FLIGHT, "1")  # what a step killed inside its vector writes leaves
    report = ws.ingest([path.parent])
    assert (report.vectors_repaired, report.chunks_embedded) == (0, 0)
    assert name in names() and name + REBUILD_SUFFIX not in names()
    assert ws.vectors.ids(CHUNKS) == set(chunks)

    # cut after the original was deleted: the whole copy takes its name, nothing is embedded again
    copy_of(chunks)
    ws.vectors.client.delete_collection(name)
    ws.vectors._shared.forget()
    ws.store.set_meta(VECTORS_IN_FLIGHT, "1")
    report = ws.ingest([path.parent])
    assert (report.vectors_repaired, report.chunks_embedded) == (0, 0)
    assert ws.vectors.ids(CHUNKS) == set(chunks)
    assert name + REBUILD_SUFFIX not in names()


def test_a_reader_that_opened_the_collection_before_a_rebuild_searches_the_new_one(make_workspace, tmp_path):
    writer, _ = _ingested(make_workspace, tmp_path, 1)
    reader = make_workspace()  # another handle on the same store, as the app's beside the CLI's
    question = writer.embedder.embed(["Which queue does service 7 depend on?"])[0]
    before = [m.id for m in reader.vectors.query(CHUNKS, question, 3)]
    old = reader.vectors.existing(CHUNKS).id
    writer.repair()
    assert [m.id for m in reader.vectors.query(CHUNKS, question, 3)] == before
    assert reader.vectors.existing(CHUNKS).id != old and reader.vectors.count(CHUNKS) == 401


def test_a_reader_searching_between_the_originals_deletion_and_the_copys_rename_reads_the_copy(
        make_workspace, tmp_path):
    writer, _ = _ingested(make_workspace, tmp_path, 1)
    reader = make_workspace()
    question = writer.embedder.embed(["Which queue does service 7 depend on?"])[0]
    before = [m.id for m in reader.vectors.query(CHUNKS, question, 3)]
    chunks = sorted(c.id for c in writer.chunks())
    held = writer.vectors.get_vectors(CHUNKS, chunks)
    name = writer.vectors.existing(CHUNKS).name
    client = writer.vectors.client
    copy = client.create_collection(name + REBUILD_SUFFIX, configuration={"hnsw": {"space": "cosine"}},
                                    embedding_function=None)
    copy.add(ids=chunks, embeddings=np.stack([held[i] for i in chunks]), metadatas=[{"document": "x"}] * len(chunks))
    client.delete_collection(name)  # where rebuild stands between its last two steps

    assert [m.id for m in reader.vectors.query(CHUNKS, question, 3)] == before
    assert reader.vectors.count(CHUNKS) == len(chunks)
    copy.modify(name=name)
    assert [m.id for m in reader.vectors.query(CHUNKS, question, 3)] == before
    assert reader.vectors.existing(CHUNKS).name == name


def test_a_write_step_rebuilds_the_collection_once_its_deleted_slots_outnumber_its_chunks(tmp_path, capsys,
                                                                                          monkeypatch):
    import workbench.vectors.compaction as compaction

    monkeypatch.setattr(compaction, "COMPACT_AFTER_DELETED", 10)
    path = tmp_path / "c" / "notes.md"
    path.parent.mkdir()
    workspace = ["--workspace", str(tmp_path / "ws")]
    _write(path, 0)
    assert main([*workspace, "ingest", str(path.parent)]) == 0
    assert "rebuilt" not in capsys.readouterr().out
    _write(path, 1)  # every chunk moves: 400 deleted for 401 chunks, not yet due
    assert main([*workspace, "ingest", str(path.parent), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["deleted_vectors"], said["vector_slots_freed"]) == (400, 0)
    folders = len(_segment_folders_in(tmp_path / "ws"))
    _write(path, 2)  # 800 deleted for 402 chunks: rebuilt by the ingest itself
    assert main([*workspace, "ingest", str(path.parent)]) == 0
    assert "slots of 800 deleted vectors, more than its 402 chunks, freed" in capsys.readouterr().out
    assert len(_segment_folders_in(tmp_path / "ws")) == folders  # the old collection's folder went with it
    assert main([*workspace, "query", "Which queue does service 7 depend on?", "--mode", "vector", "-k", "1",
                 "--json"]) == 0
    assert "queue number 7" in json.loads(capsys.readouterr().out)["hits"][0]["text"]

    path.write_text("\n\n".join(PARAGRAPHS[:3]) + "\n")  # every chunk's id changes: 402 deleted for 3 chunks
    assert main([*workspace, "ingest", str(path.parent), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["vector_slots_freed"], said["deleted_vectors"]) == (402, 0)
    assert main([*workspace, "ingest", str(path.parent), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted_vectors"] is None  # nothing written: Chroma not opened


def test_a_removal_that_leaves_more_deleted_slots_than_chunks_rebuilds_the_collection(make_workspace, tmp_path,
                                                                                      monkeypatch):
    import workbench.vectors.compaction as compaction

    monkeypatch.setattr(compaction, "COMPACT_AFTER_DELETED", 10)
    ws, path = _ingested(make_workspace, tmp_path, 0)
    (path.parent / "kept.md").write_text("\n\n".join(PARAGRAPHS[:20]) + "\n")
    ws.ingest([path.parent])
    kept = {c.id for c in ws.chunks() if c.document_id.endswith("kept.md")}
    assert ws.vectors.deleted(CHUNKS) == 0 and len(kept) == 20
    ws.remove(path)
    assert ws.vectors.deleted(CHUNKS) == 0 and ws.vectors.ids(CHUNKS) == kept  # 400 slots freed, 20 kept


def test_a_rebuild_that_fails_inside_an_ingest_is_a_problem_of_its_report_and_the_next_ingest_finishes_it(
        make_workspace, tmp_path, monkeypatch):
    import errno

    import workbench.vectors.compaction as compaction
    from workbench.vectors.index import VectorIndex

    monkeypatch.setattr(compaction, "COMPACT_AFTER_DELETED", 10)
    ws, path = _ingested(make_workspace, tmp_path, 0)
    rebuild = VectorIndex.rebuild

    def full_disk(self, kind):
        self.client.create_collection(self._names[kind] + REBUILD_SUFFIX, embedding_function=None)  # a copy begun
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(VectorIndex, "rebuild", full_disk)
    for extra in (1, 2):  # 800 deleted for 402 chunks: due on the second
        _write(path, extra)
        report = ws.ingest([path.parent])
    said = [str(p) for p in report.problems]
    assert len(said) == 1 and "chroma" in said[0] and "no space left on device" in said[0].lower()
    assert "everything ingested is kept" in said[0] and report.vector_slots_freed == 0
    chunks = {c.id for c in ws.chunks()}
    assert len(chunks) == 402 and ws.vectors.ids(CHUNKS) == chunks and ws.interrupted

    monkeypatch.setattr(VectorIndex, "rebuild", rebuild)
    report = ws.ingest([path.parent])  # nothing changed on disk: the interrupted write is finished
    assert not report.problems and not ws.interrupted
    assert ws.vectors.ids(CHUNKS) == chunks and ws.vectors.existing(CHUNKS).name + REBUILD_SUFFIX not in {
        getattr(c, "name", c) for c in ws.vectors.client.list_collections()}


def test_a_rebuild_that_fails_after_a_removal_says_so_and_the_removal_stands(make_workspace, tmp_path, monkeypatch,
                                                                           capsys):
    import errno

    import workbench.vectors.compaction as compaction
    from workbench.vectors.index import VectorIndex

    monkeypatch.setattr(compaction, "COMPACT_AFTER_DELETED", 10)
    ws, path = _ingested(make_workspace, tmp_path, 0)
    (path.parent / "kept.md").write_text("\n\n".join(PARAGRAPHS[:20]) + "\n")
    ws.ingest([path.parent])
    ws.close()

    def full_disk(self, kind):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(VectorIndex, "rebuild", full_disk)
    assert main(["--workspace", str(ws.path), "remove", str(path)]) == 1
    said = capsys.readouterr().err
    assert f"removed {path} (1 document);" in said and "no space left on device" in said.lower() and "repair" in said
    assert "Traceback" not in said
    ws = make_workspace()
    assert [d.id for d in ws.documents()] == ["c/kept.md"] and ws.vectors.deleted(CHUNKS) == 400
