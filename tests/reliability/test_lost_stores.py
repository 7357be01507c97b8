"""Issue 27, items 1, 3 and 6: a vector store deleted or emptied, an entity-name index damaged in
each way the red team tried, and a rerun of ``remove`` after a step that died while writing it.
Each is an error naming ``repair`` (never an empty answer with exit 0), and ``repair`` or the
next writer rebuilds what was lost."""

from __future__ import annotations

import errno
import json
import shutil

import numpy as np
import pytest

from workbench.runtime.array_file import TextColumn, to_text, write_array_file
from workbench.vectors.entity_vectors import FILE_NAME, EntityVectors, EntityVectorsDamaged
from workbench.ingest.failures import StepFailed
from workbench.retrieve import retrieve
from workbench.vectors.index import CHUNKS, VectorStoreMissing

QUERY = "which queue does service number 3 depend on"


@pytest.fixture
def small(tmp_path, make_workspace, write_corpus):
    """A workspace of eight one-line documents, closed so the CLI can open it."""
    ws = make_workspace()
    ws.ingest([write_corpus(tmp_path / "corpus", 8)])
    ws.close()
    return ws


def reopen(ws, **kwargs):
    return ws.__class__(ws.path, settings=ws.settings, embedder=ws.embedder, create=False, **kwargs)


# -- 1. a vector store that is gone ---------------------------------------------------------
@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_a_deleted_vector_store_is_an_error_naming_repair_not_an_empty_answer(small, run_cli, mode):
    shutil.rmtree(small.path / "chroma")
    done = run_cli("--workspace", small.path, "query", QUERY, "--mode", mode)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "is missing" in done.stderr and "repair" in done.stderr and "Traceback" not in done.stderr
    assert not (small.path / "chroma").exists()  # the reader created nothing
    assert run_cli("--workspace", small.path, "repair").returncode == 0
    again = run_cli("--workspace", small.path, "query", QUERY, "--mode", mode, "--json")
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["mode_used"] == mode and len(result["hits"]) > 0


def test_the_compare_page_says_the_store_is_missing_and_names_repair(small, monkeypatch):
    from tests.test_app import open_app, page

    shutil.rmtree(small.path / "chroma")
    at = page(open_app(monkeypatch, small.path), "compare")
    assert [e.value for e in at.error] and "repair" in at.error[0].value and "is missing" in at.error[0].value
    assert not (small.path / "chroma").exists()


def test_a_dropped_collection_is_found_by_its_count(small):
    ws = reopen(small)
    ws.vectors.client.delete_collection(ws.vectors._names[CHUNKS])
    ws.close()
    ws = reopen(small)
    with pytest.raises(VectorStoreMissing, match=r"holds 0 chunk vectors for 8 stored chunks.*repair"):
        retrieve(ws, QUERY, mode="vector")
    with pytest.raises(VectorStoreMissing):
        retrieve(ws, QUERY, mode="graphrag")  # no quiet fall back to keyword hits either
    assert ws.repair() == 8
    assert len(retrieve(ws, QUERY, mode="vector").hits) > 0
    ws.close()


def test_the_next_ingest_rebuilds_a_deleted_vector_store_and_says_so(small, tmp_path, run_cli):
    shutil.rmtree(small.path / "chroma")
    done = run_cli("--workspace", small.path, "ingest", tmp_path / "corpus")
    assert done.returncode == 0 and "8 vectors repaired" in done.stdout, (done.stdout, done.stderr)
    # Checked by new processes: this one's Chroma client still knows the collections rmtree removed.
    check = run_cli("--workspace", small.path, "chroma-check", "--json")
    assert check.returncode == 0 and json.loads(check.stdout)["chunks"] == 8
    query = run_cli("--workspace", small.path, "query", QUERY, "--mode", "vector", "--json")
    assert query.returncode == 0 and json.loads(query.stdout)["hits"]


def test_keyword_search_needs_no_vector_store(small):
    shutil.rmtree(small.path / "chroma")
    ws = reopen(small)
    assert retrieve(ws, QUERY, mode="keyword").hits
    assert not (small.path / "chroma").exists()
    ws.close()


# -- 3. a damaged entity-name index ---------------------------------------------------------
def _rewrite(path, *, keys=None, names=None, vectors=None, version=None, embedder=None, manifest=True):
    """Write ``entity_vectors.npz`` again with some arrays replaced (a consistent manifest, so
    only the validation of the contents can find the damage), or in the old format without one."""
    loaded = EntityVectors(path.parent)._current()
    assert loaded is not None and len(loaded.keys) > 3
    keys = list(loaded.keys) if keys is None else keys
    names = list(loaded.names) if names is None else names
    vectors = loaded.vectors if vectors is None else vectors
    if manifest:
        columns = dict(zip(("keys", "key_offsets"), TextColumn.arrays(keys)))
        columns.update(zip(("names", "name_offsets"), TextColumn.arrays(names)))
        write_array_file(path, "entity_vectors", 2, version or loaded.version, {**columns, "vectors": vectors},
                         extra={"embedder": embedder or loaded.embedder})
    else:
        np.savez(path, keys=to_text(keys), names=to_text(names), vectors=vectors,
                 version=np.array(loaded.version), embedder=np.array(loaded.embedder))


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


DAMAGE = {
    "wrong width": lambda v: _unit(np.random.default_rng(0).normal(size=(len(v), 16))),
    "fewer rows": lambda v: v[:-3],
    "NaN": lambda v: np.where(np.arange(v.size).reshape(v.shape) == 5, np.nan, v).astype(np.float32),
    "not unit": lambda v: v * 3,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_entity_index_is_refused_by_a_reader_and_rebuilt_by_repair(small, run_cli, damage):
    path = small.path / FILE_NAME
    _rewrite(path, vectors=DAMAGE[damage](EntityVectors(small.path)._current().vectors))
    reader = reopen(small, read_only=True)
    with pytest.raises(EntityVectorsDamaged, match="repair"):
        retrieve(reader, QUERY, mode="graphrag")
    reader.close()
    check = run_cli("--workspace", small.path, "chroma-check", "--json")
    assert check.returncode == 1 and json.loads(check.stdout)["entity_index_damaged"]
    done = run_cli("--workspace", small.path, "repair")
    assert done.returncode == 0 and "entity-name index was damaged" in done.stdout, done.stderr
    ws = reopen(small)
    assert ws.entity_vectors.damage() is None and ws.entity_vectors.ids() == set(ws.graph.keys())
    assert retrieve(ws, QUERY, mode="graphrag").mode_used == "full_graphrag"
    ws.close()


def test_a_missing_entity_index_is_an_error_for_a_read_only_reader_and_rebuilt_by_others(small):
    (small.path / FILE_NAME).unlink()
    reader = reopen(small, read_only=True)
    with pytest.raises(EntityVectorsDamaged, match="is missing.*repair"):
        retrieve(reader, QUERY, mode="graphrag")
    assert not (small.path / FILE_NAME).exists()
    reader.close()
    ws = reopen(small)
    assert retrieve(ws, QUERY, mode="graphrag").mode_used == "full_graphrag"
    assert ws.entity_vectors.ids() == set(ws.graph.keys())
    ws.close()


def test_an_index_made_for_an_older_record_is_synced_by_the_next_search(small):
    ws = reopen(small)
    ws.store.record("alias", {"alias": "queue number 3", "canonical": "queue number 4"},
                    alias=("queue number 3", "queue number 4"))  # a step killed before it synced the index
    assert ws.entity_vectors.version() != str(ws.store.version)
    ws.close()
    reader = reopen(small, read_only=True)
    retrieve(reader, QUERY, mode="graphrag")  # a read-only reader uses it as it is
    assert reader.entity_vectors.version() != str(reader.store.version)
    reader.close()
    ws = reopen(small)
    retrieve(ws, QUERY, mode="graphrag")
    assert ws.entity_vectors.version() == str(ws.store.version)
    assert ws.entity_vectors.ids() == set(ws.graph.keys()) and ws.unfinished() is None
    ws.close()


def test_random_vectors_without_a_matching_checksum_are_damage(small):
    path = small.path / FILE_NAME
    _rewrite(path, vectors=_unit(np.random.default_rng(1).normal(size=(len(EntityVectors(small.path).ids()), 384))),
             manifest=False)  # the earlier format, no manifest: cannot be told from random
    index = EntityVectors(small.path)
    assert index._current() is None and "damaged" in index.damage()


def test_the_next_writer_rebuilds_a_damaged_index(small, tmp_path, write_corpus):
    path = small.path / FILE_NAME
    _rewrite(path, vectors=DAMAGE["NaN"](EntityVectors(small.path)._current().vectors))
    ws = reopen(small)
    ws.ingest([write_corpus(tmp_path / "corpus", 9)])  # one more document
    assert ws.entity_vectors.damage() is None and ws.entity_vectors.ids() == set(ws.graph.keys())
    ws.close()


def test_a_failed_index_write_leaves_no_temporary_file_and_repair_removes_old_ones(small, monkeypatch):
    stale = small.path / f".{FILE_NAME}.999999999.tmp"  # a pid no process has: a killed writer's
    stale.write_bytes(b"half a file")
    ws = reopen(small)

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    ws.corrections.add_alias("queue number 5", "queue number 6")
    monkeypatch.setattr(np.lib.format, "write_array", full_disk)  # every member of an array file
    with pytest.raises(StepFailed, match=r"the disk is full \(ENOSPC.*every change is kept.*repair"):
        ws.corrections.add_alias("queue number 3", "queue number 4")
    assert [p.name for p in small.path.glob(".*.tmp")] == []  # this failure's and the killed writer's
    monkeypatch.undo()
    assert ws.unfinished() is not None
    ws.repair()
    assert ws.unfinished() is None and "queue number 3" in ws.store.aliases()
    ws.close()


# -- 6. a rerun of remove finishes a step that died writing the index -----------------------
def test_a_rerun_of_remove_after_the_index_write_died_completes_it_and_exits_0(small, run_cli, monkeypatch):
    ws = reopen(small)
    victim = "corpus/svc0002.txt"

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # what a kill during the write leaves: the removal committed, no new index

    monkeypatch.setattr(EntityVectors, "_write", killed)
    with pytest.raises(KeyboardInterrupt):
        ws.remove(victim)
    monkeypatch.undo()
    assert ws.documents_under(victim) == [] and ws.unfinished() is not None
    ws.close()
    done = run_cli("--workspace", small.path, "remove", victim, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["completed_interrupted_write"] is True
    again = reopen(small)
    assert again.unfinished() is None and again.entity_vectors.ids() == set(again.graph.keys())
    again.close()
    assert run_cli("--workspace", small.path, "remove", victim).returncode == 2  # now truly nothing to do
