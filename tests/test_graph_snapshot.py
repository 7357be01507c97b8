"""The persisted graph: a fresh process loads what the writer derived, identical to a derivation
from the record, and never uses a snapshot that is stale, damaged or of another workspace."""

from __future__ import annotations

import json
import shutil
import zipfile
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REDIS_QUESTION, make_corpus, reopened
from workbench.context_graph.canon import build_merges
from workbench.corpus.keyword_index import KeywordIndex
from workbench.context_graph.graph_snapshot import (FILE_NAME, SnapshotUnusable, _id_lists, _id_lists_read, load_snapshot,
                                                    read_manifest)
from workbench.retrieve import retrieve
from workbench.workspace.scoped_view import scoped


def derived_fresh(ws):
    """The graph derived from the record in this process, the snapshot left aside."""
    return SimpleNamespace(graph=ws.derivation.assemble())


def test_ingest_leaves_a_snapshot_for_the_record_as_it_is(sample_private):
    ws = sample_private
    manifest = read_manifest(ws.path)
    assert manifest["key"] == ws.derivation.snapshot_key()
    assert manifest["counts"]["entities"] == len(ws.graph) > 100


def test_a_fresh_process_loads_the_snapshot_identical_to_a_derivation(sample_private):
    ws = sample_private
    fresh = reopened(ws)
    try:
        loaded = fresh.graph
        assert fresh.derivation.snapshot_status == "loaded"
        derived = derived_fresh(fresh)
        assert loaded.entities() == derived.graph.entities()
        assert list(loaded.nx.edges(keys=True, data="edge")) == list(derived.graph.nx.edges(keys=True, data="edge"))
        assert list(loaded.nx.in_edges("redis", keys=True)) == list(derived.graph.nx.in_edges("redis", keys=True))
        a, b = loaded.passages, derived.graph.passages
        assert (a.entities_of, a.chunks_of, a.title_of, a.common, a.title_links, a.synonyms) == \
            (b.entities_of, b.chunks_of, b.title_of, b.common, b.title_links, b.synonyms)
        assert a.matcher.find("Redis backs the token cache of the Auth Service") == \
            b.matcher.find("Redis backs the token cache of the Auth Service")
        assert a.matcher.key_of == b.matcher.key_of and a.stats() == b.stats()
        index = loaded.pagerank_index()
        assert index.reversible and derived.graph.pagerank_index().reversible  # an undirected walk: Chebyshev
        assert dict(index.index) == {node: i for i, node in enumerate(index.nodelist)}
        assert ("p", "no such chunk") not in index.index and ("q", index.nodelist[-1][1]) not in index.index
        assert loaded.passages_document == derived.graph.passages_document
        assert loaded.passages_time == derived.graph.passages_time
        expected_merges = build_merges(fresh.store.mentions(), fresh.canonicalizer())
        assert fresh.merges() == expected_merges and expected_merges
        assert loaded.edges_as_given() == derived.graph.edges_as_given()
        seeds = {"redis": 1.0}
        assert loaded.personalized_pagerank(seeds) == derived.graph.personalized_pagerank(seeds)
        impact = loaded.impacted_by("Redis")
        assert impact.impacted and impact.impacted == derived.graph.impacted_by("Redis").impacted
    finally:
        fresh.close()


def test_graphrag_answers_the_same_from_the_snapshot(sample_private):
    ws = sample_private
    before = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5)
    fresh = reopened(ws)
    try:
        after = retrieve(fresh, REDIS_QUESTION, mode="graphrag", k=5)
        assert fresh.derivation.snapshot_status == "loaded"
        assert before.hits and [(h.chunk_id, h.score) for h in after.hits] == [(h.chunk_id, h.score) for h in before.hits]
        assert after.mode_used == before.mode_used
    finally:
        fresh.close()


def test_stats_of_a_fresh_process_come_from_the_manifest_without_loading_the_graph(sample_private):
    ws = sample_private
    expected = ws.stats()
    fresh = reopened(ws)
    try:
        assert fresh.stats() == expected == {**fresh.record_stats(), **fresh.derivation.counts_from_snapshot()}
        assert fresh.derivation.derived is None
        fresh.corrections.add_alias("Token Cache Service", "Redis")  # the writer derives again and replaces the snapshot
        assert {**fresh.record_stats(), **fresh.derivation.counts_from_snapshot()} == fresh.stats() != expected
        assert fresh.stats()["user_aliases"] == expected["user_aliases"] + 1
        (fresh.path / FILE_NAME).unlink()
        assert fresh.derivation.counts_from_snapshot() is None  # no current snapshot: the caller derives or waits
    finally:
        fresh.close()


def test_an_ingest_alias_or_removal_replaces_the_snapshot(sample_copy, tmp_path):
    ws, corpus = sample_copy
    first = read_manifest(ws.path)["key"]
    make_corpus(corpus / "extra", 3)
    ws.ingest([corpus])
    after_ingest = read_manifest(ws.path)
    assert after_ingest["key"] != first and after_ingest["key"] == ws.derivation.snapshot_key()
    ws.corrections.add_alias("the cache of tokens", "token cache")
    assert read_manifest(ws.path)["key"] == ws.derivation.snapshot_key()
    ws.remove(corpus / "extra")
    fresh = reopened(ws)
    try:
        assert fresh.graph is not None and fresh.derivation.snapshot_status == "loaded"
        assert not any(k.startswith("servicenumber") for k in fresh.graph.nx)
    finally:
        fresh.close()


def test_a_changed_graph_setting_rebuilds_the_snapshot(sample_private):
    ws = sample_private
    changed = reopened(ws, graph__max_entity_passages=3)
    try:
        graph = changed.graph
        assert changed.derivation.snapshot_status.startswith("rebuilt: ") and "another record version or graph settings" in \
            changed.derivation.snapshot_status
        assert graph.passages.common  # the new limit is applied, not the old snapshot's
        assert read_manifest(ws.path)["key"] == changed.derivation.snapshot_key()
    finally:
        changed.close()


def damage_bytes(path):
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(64)
    path.write_bytes(bytes(data))


def rewrite_member(path, name, array):
    """The snapshot with one member replaced (its manifest left as it was)."""
    with np.load(path, allow_pickle=False) as data:
        members = {n: data[n] for n in data.files}
    members[name] = array
    with open(path, "wb") as out:
        np.savez(out, **members)


@settings(max_examples=200, deadline=None)
@given(lists=st.lists(st.lists(st.text(max_size=6))))
def test_an_edges_id_lists_come_back_as_written_with_each_id_kept_once(lists):
    arrays = _id_lists(lists, "edge_chunks")
    assert _id_lists_read(arrays, "edge_chunks") == [tuple(ids) for ids in lists]
    assert arrays["edge_chunks_id_offsets"].size == len({i for ids in lists for i in ids}) + 1


@pytest.mark.parametrize("damage", ["bytes", "truncated", "checksum", "shape", "format", "pickle"])
def test_a_damaged_snapshot_is_detected_and_rebuilt_never_used(sample_private, damage):
    ws = sample_private
    path = ws.path / FILE_NAME
    key = ws.derivation.snapshot_key()
    if damage == "bytes":
        damage_bytes(path)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    elif damage == "checksum":  # same shape, other numbers: only the checksum tells
        with np.load(path, allow_pickle=False) as data:
            mentions = data["entity_mentions"].copy()
        mentions[0] += 1
        rewrite_member(path, "entity_mentions", mentions)
    elif damage == "shape":
        with np.load(path, allow_pickle=False) as data:
            order = data["ppr_order"][:-1].copy()
        rewrite_member(path, "ppr_order", order)
    elif damage == "format":
        manifest = read_manifest(ws.path)
        manifest["format"] = 999
        rewrite_member(path, "manifest", np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8))
    elif damage == "pickle":  # an object array would run code on load with allow_pickle=True
        with np.load(path, allow_pickle=False) as data:
            members = {n: data[n] for n in data.files}
        members["entity_mentions"] = np.array([{"x": 1}], dtype=object)
        with open(path, "wb") as out:
            np.savez(out, **members)
    with pytest.raises(SnapshotUnusable, match="damaged|another format"):
        load_snapshot(ws.path, key)
    fresh = reopened(ws)
    try:
        graph = fresh.graph
        assert fresh.derivation.snapshot_status.startswith("rebuilt: ")
        assert graph.entities() == ws.graph.entities()
        assert fresh.stats() == ws.stats()
        load_snapshot(ws.path, key)  # rewritten whole by the reader, which could take the lock
    finally:
        fresh.close()


def test_a_snapshot_copied_from_another_workspace_is_not_used(sample_private, make_workspace, tmp_path):
    ws = sample_private
    other = make_workspace("other")
    other.ingest([make_corpus(tmp_path / "small", 4)])
    shutil.copy(ws.path / FILE_NAME, other.path / FILE_NAME)
    fresh = reopened(other)
    try:
        assert len(fresh.graph) == len(other.graph)
        assert fresh.derivation.snapshot_status.startswith("rebuilt: ")
    finally:
        fresh.close()


def test_a_reader_that_cannot_take_the_lock_derives_without_writing(sample_private):
    ws = sample_private
    assert len(ws.graph)  # the writer holds its graph, as after its ingest
    (ws.path / FILE_NAME).unlink()
    fresh = reopened(ws)
    try:
        with ws.lock.hold():  # another writer holds the workspace
            assert len(fresh.graph) == len(ws.graph)
        assert fresh.derivation.snapshot_status == "rebuilt: no graph snapshot yet"
        assert not (ws.path / FILE_NAME).exists()
    finally:
        fresh.close()


def test_a_scoped_view_neither_reads_nor_writes_the_snapshot(sample_private):
    ws = sample_private
    stamp = (ws.path / FILE_NAME).stat().st_mtime_ns
    view = scoped(ws, ["sample_corpus/incidents"])
    assert len(view.graph) < len(ws.graph)
    assert (ws.path / FILE_NAME).stat().st_mtime_ns == stamp
    assert view.stats()["entities"] == len(view.graph)


def test_snapshot_file_is_a_plain_zip_of_arrays_with_no_pickled_member(sample_private):
    ws = sample_private
    with zipfile.ZipFile(ws.path / FILE_NAME) as archive:
        names = archive.namelist()
    assert "manifest.npy" in names and "ppr_data.npy" in names
    with np.load(ws.path / FILE_NAME, allow_pickle=False) as data:
        assert all(data[name].dtype != object for name in data.files)


def test_a_first_graphrag_query_from_the_snapshot_never_builds_the_networkx_graph(sample_private):
    ws = sample_private
    fresh = reopened(ws)
    try:
        result = retrieve(fresh, REDIS_QUESTION, mode="graphrag", k=5)
        assert result.hits and fresh.derivation.snapshot_status == "loaded"
        assert fresh.graph._nx is None  # lookups, the walk and the question's edges need no networkx graph
        assert fresh.graph.nx.number_of_nodes() == len(fresh.graph)  # built when a traversal asks for it
    finally:
        fresh.close()


def test_merges_asked_first_in_a_fresh_process_come_from_the_snapshot(sample_private, monkeypatch):
    ws = sample_private
    expected = build_merges(ws.store.mentions(), ws.canonicalizer())
    fresh = reopened(ws)
    try:
        def reading(*args, **kwargs):
            raise AssertionError("every mention read and canonicalized again (16-24 s at 61k passages)")

        monkeypatch.setattr(fresh.store, "iter_mentions", reading)
        assert fresh.merges() == expected and expected
        assert fresh.derivation.snapshot_status == "loaded"
    finally:
        fresh.close()


def test_the_graph_pages_facts_and_views_from_the_snapshot_equal_the_derived_ones_without_networkx(sample_private):
    from workbench.views.graph import COMENTION, RELATIONS, GraphFilters, graph_facts, select_view

    ws = sample_private
    fresh = reopened(ws)
    try:
        loaded, derived = fresh.graph, derived_fresh(fresh).graph
        facts = graph_facts(loaded)
        assert facts == graph_facts(derived)
        assert len(facts.types) > 1 and facts.dates and facts.names["redis"] == "Redis"
        assert [facts.names[key].casefold() for key in facts.keys_by_name] == sorted(facts.folded_by_name)
        for view in (RELATIONS, COMENTION):
            for filters in (GraphFilters(), GraphFilters(types=facts.types[:1]),
                            GraphFilters(time_range=(facts.dates[0], facts.dates[0]), top_n=5)):
                a, b = select_view(loaded, view, filters), select_view(derived, view, filters)
                assert (a.nodes, a.edges, a.sizes, a.hidden, a.note) == (b.nodes, b.edges, b.sizes, b.hidden, b.note)
        assert select_view(loaded, RELATIONS, GraphFilters(types=facts.types[:1])).hidden["type"] > 0
        assert loaded._nx is None  # 412k nodes at 61k passages: the page drew in 9.7 s building it, 2.3 s without
    finally:
        fresh.close()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Ann", "Lee", "Oslo", "the", "New", "York", "City", "of", "ann", "2004", "Fc",
                                  "Zürich", "北京", "Øresund", "Bridge", "Zurich"]),
                max_size=90))
def test_a_loaded_name_matcher_finds_what_the_built_one_finds_in_short_and_long_texts(words):
    from workbench.runtime.array_file import TextColumn
    from workbench.context_graph.passages import NameMatcher, NameTable

    built = NameMatcher({"annlee": ["Ann Lee"], "oslo": ["Oslo"], "ny": ["New York"], "nyc": ["New York City"],
                         "cityofoslo": ["The City of Oslo"], "y2004": ["2004"], "fc": ["FC Oslo 2004"],
                         "zurich": ["Zürich"], "beijing": ["北京"], "oe": ["Øresund Bridge"]})
    sorted_words, keys = built.sorted_names()
    loaded = NameMatcher.over_table(NameTable(TextColumn(*TextColumn.arrays(sorted_words)), keys,
                                              np.arange(len(keys))), built.max_words)
    assert dict(loaded.key_of.items()) == dict(built.key_of)
    text = " ".join(words)
    assert loaded.find(text) == built.find(text)
    assert loaded.find(text, capitalised_only=False) == built.find(text, capitalised_only=False)


def test_after_a_write_the_keyword_index_tokenizes_only_the_chunks_it_did_not_hold(make_workspace, tmp_path,
                                                                                monkeypatch):
    import workbench.corpus.keyword_index as keyword_index
    from workbench.text.tokenize import tokenize

    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "a.md").write_text("\n\n".join(f"Service {i} depends on queue {i}." for i in range(30)) + "\n")
    ws = make_workspace()
    ws.ingest([corpus])  # keeps the keyword index
    added = "The ledger service writes to Cassandra."
    (corpus / "b.md").write_text(added + "\n")
    texts: list[str] = []
    monkeypatch.setattr(keyword_index, "tokenize", lambda text: texts.append(text) or tokenize(text))
    ws.ingest([corpus])
    assert texts == [added]  # the 30 chunks it held keep their tokens
    question = "ledger cassandra"
    hits = retrieve(ws, question, mode="keyword", k=3).hits
    assert [ws.store.chunk_context()[h.chunk_id][0] for h in hits] == ["notes/b.md"]


def test_repair_derives_the_snapshot_and_the_keyword_index_again(sample_private):
    ws = sample_private
    retrieve(ws, "redis", mode="keyword", k=3)  # the first search keeps the keyword index
    assert (ws.path / "keywords.npz").exists()
    damage_bytes(ws.path / FILE_NAME)
    (ws.path / "keywords.npz").write_bytes(b"not an index")
    ws.repair()
    assert load_snapshot(ws.path, ws.derivation.snapshot_key()).graph.entities() == ws.graph.entities()
    assert KeywordIndex.kept_for(ws.path / "keywords.npz", f"{ws.store.workspace_id}:{ws.store.version}")  # made again
    assert retrieve(ws, "redis", mode="keyword", k=3).hits


def test_preload_reads_the_snapshot_and_the_name_index_in_a_thread(sample_private):
    ws = sample_private
    fresh = reopened(ws)
    try:
        assert fresh.derivation.derived is None and fresh.entity_vectors._loaded is None
        fresh.preload()
        fresh.background._builder.join(60)
        fresh.background._names_loader.join(60)
        assert fresh.derivation.snapshot_status == "loaded" and fresh.derivation.derived is not None  # no caller asked for the graph
        assert fresh.entity_vectors._loaded is not None
        thread = fresh.background._builder
        fresh.preload()  # current now: nothing started again
        assert fresh.background._builder is thread
    finally:
        fresh.close()


def test_preload_of_an_unreadable_snapshot_leaves_the_error_to_the_caller(sample_private, capfd):
    ws = sample_private
    fresh = reopened(ws)
    try:
        fresh.derivation.current = lambda: (_ for _ in ()).throw(RuntimeError("disk gone"))  # the thread's read fails
        fresh.preload()
        fresh.background._builder.join(60)
        fresh.background._names_loader.join(60)
        assert "Traceback" not in capfd.readouterr().err  # the caller's own read reports it
    finally:
        fresh.close()
