"""The entity-name index: exact search, incremental syncs, atomic replacement, one per embedder."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.array_file import read_manifest, to_text, write_array_file
from workbench.context_graph.entity_vectors import (FILE_NAME, FORMAT, KIND, EntityVectors, EntityVectorsDamaged,
                                                     similarities)


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


VECTORS = {"Redis": unit(1, 0, 0), "Auth Service": unit(0, 1, 0), "token cache": unit(1, 1, 0),
           "Kafka": unit(0, 0, 1)}


class Recorder:
    """Embeds names from VECTORS, recording which it was asked for."""

    def __init__(self):
        self.asked: list[list[str]] = []

    def __call__(self, names: list[str]) -> np.ndarray:
        self.asked.append(list(names))
        return np.stack([VECTORS[n] for n in names])


@pytest.fixture
def index(tmp_path):
    return EntityVectors(tmp_path)


def test_query_is_exact_cosine_best_first(index):
    names = {"redis": "Redis", "auth service": "Auth Service", "token cache": "token cache", "kafka": "Kafka"}
    index.sync(names, "1", "m", Recorder())
    query = unit(1, 0.2, 0)
    found = index.query(query, 3)
    expected = sorted(names, key=lambda k: -float(VECTORS[names[k]] @ query))[:3]
    assert [m.id for m in found] == expected
    assert found[0].similarity == pytest.approx(float(VECTORS["Redis"] @ query), abs=1e-6)
    assert found[0].metadata == {"name": "Redis"}


def test_query_keeps_only_what_keep_accepts(index):
    index.sync({"redis": "Redis", "kafka": "Kafka", "token cache": "token cache"}, "1", "m", Recorder())
    found = index.query(unit(1, 0, 0), 2, keep=lambda key: key != "redis")
    assert [m.id for m in found] == ["token cache", "kafka"]


def test_a_sync_embeds_only_new_or_renamed_entities_and_drops_the_gone(index):
    recorder = Recorder()
    assert index.sync({"redis": "Redis", "kafka": "Kafka"}, "1", "m", recorder) == 2
    changed = index.sync({"redis": "Redis", "auth service": "Auth Service"}, "2", "m", recorder)
    assert changed == 2  # one added, one gone
    assert recorder.asked == [["Kafka", "Redis"], ["Auth Service"]]
    assert index.ids() == {"redis", "auth service"} and index.version() == "2"
    assert index.sync({"redis": "Redis", "auth service": "Auth Service"}, "2", "m", recorder) == 0
    assert len(recorder.asked) == 2


def test_another_embedder_rebuilds_every_row(index):
    recorder = Recorder()
    index.sync({"redis": "Redis", "kafka": "Kafka"}, "1", "minilm", recorder)
    index.sync({"redis": "Redis", "kafka": "Kafka"}, "1", "minilm-onnx", recorder)
    assert recorder.asked[-1] == ["Kafka", "Redis"]


def test_a_reader_sees_a_writers_replacement_and_no_temporary_file_is_left(tmp_path):
    writer, reader = EntityVectors(tmp_path), EntityVectors(tmp_path)
    assert reader.count() == 0 and reader.query(unit(1, 0, 0), 3) == []
    writer.sync({"redis": "Redis"}, "1", "m", Recorder())
    assert reader.ids() == {"redis"}
    writer.sync({"redis": "Redis", "kafka": "Kafka"}, "2", "m", Recorder())
    assert reader.ids() == {"redis", "kafka"} and reader.version() == "2"
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]


def test_the_workspace_index_follows_an_alias_and_replaces_a_legacy_collection(make_workspace):
    from workbench.vectors import LEGACY_ENTITIES

    ws = make_workspace()
    legacy = f"{ws.settings.vector_store.collection_prefix}_{ws.store.workspace_id}_{LEGACY_ENTITIES}"
    ws.vectors.client.get_or_create_collection(legacy, embedding_function=None)
    doc = ws.path.parent / "notes" / "a.md"
    doc.parent.mkdir()
    doc.write_text("# Outage\n\nThe Auth Service depends on the token cache. The AuthSvc team owns it.\n")
    ws.ingest([doc.parent])
    assert legacy not in {c.name for c in ws.vectors.client.list_collections()}
    assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes)
    assert ws.entity_vectors.version() == str(ws.store.version)
    before = ws.entity_vectors.ids()
    ws.add_alias("AuthSvc", "Auth Service")
    assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes) != before


def _outage_workspace(make_workspace):
    """A workspace of one note naming three entities, ingested."""
    ws = make_workspace()
    doc = ws.path.parent / "notes" / "a.md"
    doc.parent.mkdir()
    doc.write_text("# Outage\n\nThe Auth Service depends on the token cache, backed by Redis.\n")
    ws.ingest([doc.parent])
    return ws


def test_a_workspace_without_the_index_builds_it_on_its_first_name_search(make_workspace):
    from workbench.retrieve import retrieve

    ws = _outage_workspace(make_workspace)
    ws.entity_vectors.path.unlink()  # as a workspace from before the index existed
    result = retrieve(ws, "What does the Auth Service depend on?", mode="graphrag", k=3)
    assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes)
    assert any(seed.source == "similar" for seed in result.graph_context.seeds)


def test_a_sync_embeds_in_slices_and_puts_each_vector_on_its_row(index, monkeypatch):
    import workbench.context_graph.entity_vectors as module

    monkeypatch.setattr(module, "SYNC_BATCH", 2)
    recorder = Recorder()
    names = {"redis": "Redis", "auth service": "Auth Service", "token cache": "token cache", "kafka": "Kafka"}
    index.sync(names, "1", "m", recorder)
    assert [len(batch) for batch in recorder.asked] == [2, 2]
    for key, name in names.items():
        (best,) = index.query(VECTORS[name], 1)
        assert best.id == key and best.similarity == pytest.approx(1.0, abs=1e-6)


def test_long_names_do_not_widen_every_row_of_the_file(index):
    """Keys and names are stored as text, not as a fixed-width array as wide as the longest."""
    names = {f"entity {i}": f"Entity {i}" for i in range(2000)}
    names["x" * 5000] = "X" * 5000
    index.sync(names, "1", "m", lambda batch: np.tile(unit(1, 0, 0), (len(batch), 1)))
    assert index.path.stat().st_size < 200_000


def test_a_damaged_index_file_is_refused_by_a_search_and_the_next_sync_replaces_it(index):
    index.path.write_bytes(b"not an npz file")
    assert index.version() is None and "is damaged" in index.damage()
    with pytest.raises(EntityVectorsDamaged, match="repair"):  # never an empty answer
        index.query(unit(1, 0, 0), 3)
    index.sync({"redis": "Redis"}, "1", "m", Recorder())
    assert index.ids() == {"redis"}


def test_a_renamed_key_keeps_the_vector_its_name_had_and_nothing_is_embedded(index):
    recorder = Recorder()
    index.sync({"auth service": "Auth Service", "authsvc": "AuthSvc"}, "1", "m",
               lambda names: np.stack([unit(0, 1, 0) if n == "Auth Service" else unit(1, 0, 1) for n in names]))
    # an alias re-keys the entity: same name, another key
    assert index.sync({"auth-service": "Auth Service", "redis": "Redis"}, "2", "m", recorder) == 4
    assert recorder.asked == [["Redis"]]
    (best,) = index.query(unit(0, 1, 0), 1)
    assert best.id == "auth-service" and best.similarity == pytest.approx(1.0, abs=1e-6)


def test_a_name_shared_by_two_keys_is_embedded_once(index):
    recorder = Recorder()
    index.sync({"redis": "Redis", "redis (db)": "Redis", "kafka": "Kafka"}, "1", "m", recorder)
    assert recorder.asked == [["Kafka", "Redis"]]
    assert {m.id for m in index.query(VECTORS["Redis"], 2)} == {"redis", "redis (db)"}


def test_names_are_kept_in_their_index_only_and_read_from_it_by_a_cache_first_embedder(make_workspace):
    from workbench.embedding import text_hash
    from workbench.ingest.embedding_cache import CacheFirstEmbedder

    ws = _outage_workspace(make_workspace)
    names = ws.entity_vectors.names()
    assert "Redis" in names
    cached = ws.store.has_embeddings([text_hash(n) for n in names], ws.embedder.name)
    chunk_texts = {text_hash(c.text) for c in ws.chunks()}
    assert cached <= chunk_texts  # a name is cached only when it is a chunk's whole text

    class Refusing:
        name, dimension = ws.embedder.name, ws.embedder.dimension

        def embed(self, texts):
            raise AssertionError(f"asked to embed {texts}")

    reader = CacheFirstEmbedder(Refusing(), ws.store, ws.entity_vectors)
    vectors = reader.embed(["Redis", "Auth Service"])
    assert np.allclose(vectors, ws.embedder.embed(["Redis", "Auth Service"]), atol=1e-5)
    assert reader.missed == 0


def test_a_served_benchmark_workspace_gets_its_name_vectors_cached_once(make_workspace):
    from workbench.bench.common import cache_name_vectors
    from workbench.embedding import text_hash

    ws = _outage_workspace(make_workspace)
    names = ws.entity_vectors.names()
    added = cache_name_vectors(ws.path)
    assert added == len({text_hash(n) for n in names} - {text_hash(c.text) for c in ws.chunks()}) > 0
    assert cache_name_vectors(ws.path) == 0
    found = ws.store.cached_embeddings([text_hash("Redis")], ws.embedder.name)
    assert np.allclose(found[text_hash("Redis")], ws.embedder.embed(["Redis"])[0], atol=1e-5)


@pytest.mark.parametrize("block_rows", [50_000, 7])  # one block; blocks on the shared pool
def test_similarities_are_the_product_in_row_order_however_the_rows_are_split(monkeypatch, block_rows):
    import workbench.context_graph.entity_vectors as module

    monkeypatch.setattr(module, "_BLOCK_ROWS", block_rows)
    monkeypatch.setattr(module, "usable_cores", lambda: 3)
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((100, 16)).astype(np.float32)
    query = rng.standard_normal(16).astype(np.float32)
    scores = similarities(vectors, query)
    assert scores.shape == (100,) and scores.dtype == np.float32
    assert np.allclose(scores, vectors.astype(np.float64) @ query.astype(np.float64), atol=1e-5)
    assert similarities(vectors[:0], query).shape == (0,)


def test_an_index_of_the_first_format_is_still_read_and_the_next_sync_writes_the_current_one(index):
    """Keys and names as JSON text (format 1): read as they are, nothing embedded again."""
    names = {"redis": "Redis", "auth service": "Auth Service", "token cache": "token cache", "kafka": "Kafka"}
    index.sync(names, "1", "m", Recorder())
    query = unit(1, 0.2, 0)
    before = index.query(query, 3)
    loaded = index._current()
    write_array_file(index.path, KIND, 1, "1", {"keys": to_text(list(loaded.keys)), "names": to_text(list(loaded.names)),
                                                "vectors": np.array(loaded.vectors)}, extra={"embedder": "m"})
    earlier = EntityVectors(index.path.parent)
    assert read_manifest(index.path, KIND, 1)["format"] == 1
    assert earlier.query(query, 3) == before and earlier.ids() == set(names) and earlier.damage() is None
    recorder = Recorder()
    earlier.sync(names, "2", "m", recorder)
    assert recorder.asked == [] and read_manifest(index.path, KIND, FORMAT)["format"] == FORMAT == 2
    assert EntityVectors(index.path.parent).query(query, 3) == before


def test_text_columns_that_do_not_divide_their_buffer_make_the_index_damaged(index):
    index.sync({"redis": "Redis", "kafka": "Kafka"}, "1", "m", Recorder())
    with np.load(index.path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files if name != "manifest"}
    arrays["name_offsets"] = arrays["name_offsets"] + 1
    write_array_file(index.path, KIND, FORMAT, "1", arrays, extra={"embedder": "m"})  # a valid checksum
    fresh = EntityVectors(index.path.parent)
    assert "is damaged" in fresh.damage()
    with pytest.raises(EntityVectorsDamaged, match="repair"):
        fresh.query(unit(1, 0, 0), 1)
