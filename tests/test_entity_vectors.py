"""The entity-name index: exact search, incremental syncs, atomic replacement, one per embedder."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from workbench.runtime.array_file import read_manifest, to_text, write_array_file
from workbench.vectors.entity_vectors import (FILE_NAME, FORMAT, KIND, EntityVectors, EntityVectorsDamaged,
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
    from workbench.vectors.index import LEGACY_ENTITIES

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
    ws.corrections.add_alias("AuthSvc", "Auth Service")
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
    import workbench.vectors.entity_vectors as module

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
    from workbench.vectors.embedding_cache import CacheFirstEmbedder

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
    import workbench.vectors.entity_vectors as module

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


# -- the delta over a large base ------------------------------------------------------------

def random_names(rng: np.random.Generator, count: int, start: int = 0) -> dict[str, str]:
    return {f"e{i}": f"Name {int(rng.integers(0, 10 * count))}" for i in range(start, start + count)}


class Hashing:
    """Embeds any name deterministically (a unit vector seeded by the name), counting names asked."""

    def __init__(self, width: int = 8):
        self.width, self.asked = width, 0

    def __call__(self, names: list[str]) -> np.ndarray:
        self.asked += len(names)
        rows = [np.random.default_rng(zlib.crc32(n.encode())).standard_normal(self.width) for n in names]
        rows = np.asarray(rows, dtype=np.float32).reshape(len(names), self.width)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_small_change_to_a_large_index_writes_a_delta_and_leaves_the_base_as_it_was(tmp_path):
    from workbench.vectors.entity_vectors import DELTA_FILE_NAME

    index, embed = EntityVectors(tmp_path, delta_from_rows=100), Hashing()
    names = {f"e{i}": f"Name {i}" for i in range(200)}
    index.sync(names, "1", "m", embed)
    base_bytes = index.path.read_bytes()
    names.pop("e3")
    names["e5"] = "Name 5 renamed"
    names["new"] = "Newcomer"
    asked = embed.asked
    assert index.sync(names, "2", "m", embed) == 4  # one gone, one renamed (a row in, a row out), one added
    assert embed.asked - asked == 2  # only the renamed and the new name
    assert index.path.read_bytes() == base_bytes and (tmp_path / DELTA_FILE_NAME).exists()
    reader = EntityVectors(tmp_path)
    assert reader.version() == "2" and reader.ids() == set(names) and reader.count() == len(names)
    assert sorted(reader.names()) == sorted(names.values())
    (best,) = reader.query(embed(["Newcomer"])[0], 1)
    assert (best.id, best.metadata) == ("new", {"name": "Newcomer"})
    assert [m.id for m in reader.query(embed(["Name 5"])[0], len(names) + 5) if m.id in ("e3", "e5")] == ["e5"]
    names["e5"] = "Name 5"  # back to the base's row, which the delta supersedes
    asked = embed.asked
    assert index.sync(names, "3", "m", embed) == 2 and embed.asked == asked  # its vector is the base's
    assert {m.id: m.metadata["name"] for m in EntityVectors(tmp_path).query(embed(["Name 5"])[0], 1)} == {"e5": "Name 5"}


def test_a_delta_past_a_tenth_of_the_base_is_folded_into_a_base_written_whole(tmp_path):
    from workbench.vectors.entity_vectors import DELTA_FILE_NAME

    index, embed = EntityVectors(tmp_path, delta_from_rows=100), Hashing()
    names = {f"e{i}": f"Name {i}" for i in range(200)}
    index.sync(names, "1", "m", embed)
    names.update({f"n{i}": f"New {i}" for i in range(15)})
    index.sync(names, "2", "m", embed)
    assert (tmp_path / DELTA_FILE_NAME).exists()
    names.update({f"n{i}": f"New {i}" for i in range(15, 25)})  # 25 rows: past 20, a tenth of 200
    index.sync(names, "3", "m", embed)
    assert not (tmp_path / DELTA_FILE_NAME).exists()
    assert read_manifest(index.path, KIND, FORMAT)["key"] == "3" and EntityVectors(tmp_path).ids() == set(names)


def test_after_random_syncs_the_index_with_its_delta_answers_as_one_written_whole(tmp_path):
    """Every query, count and version equal to those of an index of the same names written whole."""
    rng = np.random.default_rng(11)
    embed = Hashing()
    for folder in ["delta", *(f"whole{step}" for step in range(1, 25))]:
        (tmp_path / folder).mkdir()
    index = EntityVectors(tmp_path / "delta", delta_from_rows=50)
    names = random_names(rng, 300)
    index.sync(names, "0", "m", embed)
    previous = dict(names)
    for step in range(1, 25):
        for key in rng.choice(sorted(names), size=int(rng.integers(0, 6)), replace=False):
            if rng.random() < 0.5:
                del names[key]
            else:
                names[key] = f"Name {int(rng.integers(0, 3000))}"  # renamed, often to a name held
        names.update(random_names(rng, int(rng.integers(0, 5)), start=1000 + 10 * step))
        assert index.sync(names, str(step), "m", embed) == len(set(names.items()) ^ set(previous.items()))
        previous = dict(names)
        whole = EntityVectors(tmp_path / f"whole{step}")
        whole.sync(names, str(step), "m", embed)
        reader = EntityVectors(tmp_path / "delta")
        assert reader.ids() == whole.ids() and reader.count() == whole.count() == len(names)
        assert reader.version() == str(step) and sorted(reader.names()) == sorted(whole.names())
        for probe in rng.choice(sorted(set(names.values())), size=3):
            query = embed([str(probe)])[0]
            assert reader.query(query, 7) == whole.query(query, 7)
            assert reader.query(query, 4, keep=lambda key: key.endswith("3")) == \
                whole.query(query, 4, keep=lambda key: key.endswith("3"))
        assert reader.vectors_of(names.values()).keys() == whole.vectors_of(names.values()).keys()


def test_a_delta_written_over_another_base_is_never_applied(tmp_path):
    """A sync that wrote the base whole and died before removing the delta left a stale one."""
    from workbench.vectors.entity_vectors import DELTA_FILE_NAME

    index, embed = EntityVectors(tmp_path, delta_from_rows=100), Hashing()
    names = {f"e{i}": f"Name {i}" for i in range(200)}
    index.sync(names, "1", "m", embed)
    index.sync({**names, "new": "Newcomer"}, "2", "m", embed)
    stale = (tmp_path / DELTA_FILE_NAME).read_bytes()
    index.sync(names, "3", "m", embed, whole=True)
    (tmp_path / DELTA_FILE_NAME).write_bytes(stale)
    reader = EntityVectors(tmp_path)
    assert reader.version() == "3" and "new" not in reader.ids() and reader.damage() is None


def test_a_damaged_delta_makes_the_index_damaged_and_a_sync_writes_the_base_whole_embedding_nothing(tmp_path):
    from workbench.vectors.entity_vectors import DELTA_FILE_NAME

    index, embed = EntityVectors(tmp_path, delta_from_rows=100), Hashing()
    names = {f"e{i}": f"Name {i}" for i in range(200)}
    index.sync(names, "1", "m", embed)
    index.sync({**names, "new": "Newcomer"}, "2", "m", embed)
    delta = tmp_path / DELTA_FILE_NAME
    data = bytearray(delta.read_bytes())
    data[len(data) // 3] ^= 0xFF
    delta.write_bytes(bytes(data))
    reader = EntityVectors(tmp_path)
    assert DELTA_FILE_NAME in (reader.damage() or "") and reader.version() is None
    with pytest.raises(EntityVectorsDamaged, match="repair"):
        reader.query(unit(*([1.0] * 8)), 3)
    asked = embed.asked
    reader.sync(names, "3", "m", embed)  # written whole, the intact base's vectors copied
    assert not delta.exists() and reader.damage() is None and reader.ids() == set(names)
    assert embed.asked == asked


def test_a_delta_that_supersedes_rows_the_base_does_not_have_is_damage(tmp_path):
    from workbench.vectors.entity_vectors import DELTA_FILE_NAME, DELTA_FORMAT, DELTA_KIND

    index, embed = EntityVectors(tmp_path, delta_from_rows=100), Hashing()
    index.sync({f"e{i}": f"Name {i}" for i in range(200)}, "1", "m", embed)
    index.sync({f"e{i}": f"Name {i}" for i in range(1, 200)}, "2", "m", embed)
    delta = tmp_path / DELTA_FILE_NAME
    manifest = read_manifest(delta, DELTA_KIND, DELTA_FORMAT)
    with np.load(delta, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files if name != "manifest"}
    arrays["superseded"] = np.array([0, 500], dtype=np.int64)
    write_array_file(delta, DELTA_KIND, DELTA_FORMAT, "2", arrays,
                     extra={"embedder": "m", "base": manifest["base"]})  # a valid checksum
    assert "are not distinct rows of the base" in EntityVectors(tmp_path).damage()


def test_a_reader_keeps_the_base_it_mapped_when_only_the_delta_changes(tmp_path):
    index, embed = EntityVectors(tmp_path, delta_from_rows=100), Hashing()
    names = {f"e{i}": f"Name {i}" for i in range(200)}
    index.sync(names, "1", "m", embed)
    reader = EntityVectors(tmp_path)
    base = reader._current().vectors
    index.sync({**names, "new": "Newcomer"}, "2", "m", embed)
    assert reader.version() == "2" and "new" in reader.ids()
    assert reader._current().vectors is base  # the base was not read (nor checked) again


def test_a_workspace_write_and_an_alias_go_to_the_delta_and_repair_folds_it(make_workspace):
    """The workspace's own writes over a base past ``delta_from_rows`` (one row here): the base
    stays as it was, the index follows the graph, and ``repair`` writes it whole again."""
    from workbench.vectors.entity_vectors import DELTA_FILE_NAME

    ws = make_workspace()
    notes = ws.path.parent / "notes"
    notes.mkdir()
    many = "".join(f"The Ledger {i} Service depends on the Archive {i} Store.\n" for i in range(40))
    (notes / "a.md").write_text("# Outage\n\nThe Auth Service depends on the token cache, backed by Redis.\n"
                                f"The Billing Service depends on the Auth Service and Postgres.\n{many}")
    ws.ingest([notes])
    assert ws.entity_vectors.count() > 50  # so that a note of two names is under a tenth of it
    ws.entity_vectors.delta_from_rows = 1
    base = ws.entity_vectors.path.read_bytes()
    (notes / "b.md").write_text("# Search\n\nThe Search Service depends on Elasticsearch.\n")
    ws.ingest([notes])
    assert (ws.path / DELTA_FILE_NAME).exists() and ws.entity_vectors.path.read_bytes() == base
    assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes)
    assert ws.entity_vectors.version() == str(ws.store.version) and ws.unfinished() is None
    (best,) = ws.entity_vectors.query(ws.embedder.embed(["Elasticsearch"])[0], 1)
    assert best.metadata == {"name": "Elasticsearch"}
    before = ws.entity_vectors.ids()
    ws.corrections.add_alias("Billing Service", "Auth Service")  # two entities become one
    assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes) != before
    ws.repair()
    assert not (ws.path / DELTA_FILE_NAME).exists() and ws.entity_vectors.ids() == set(ws.graph.nx.nodes)


def test_the_name_index_benchmark_times_both_ways_of_writing_each_round():
    from workbench.bench.name_index import bench_name_index_sync

    first, *rounds = bench_name_index_sync(names=500, added=5, rounds=2)
    assert first["first_write_s"] >= 0 and first["file_mib"] >= 0
    assert [(r["round"], r["written"]) for r in rounds] == [(0, "whole"), (0, "delta"), (1, "whole"), (1, "delta")]
    assert all(r["sync_s"] >= 0 and r["first_search_s"] >= 0 for r in rounds)
