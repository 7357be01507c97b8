"""A loaded graph's entity table: the same entities as the list it was written from, made on read,
and columns that do not fit together are refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.runtime.array_file import to_text, write_array_file
from workbench.runtime.array_file import TextColumn
from workbench.context_graph.entity_table import EntityTable, entity_columns
from workbench.context_graph.graph import ContextGraph, EntityNotFound
from workbench.context_graph.graph_snapshot import (FILE_NAME, FORMAT, KIND, SnapshotUnusable, _graph_arrays,
                                                    load_snapshot, save_snapshot)
from workbench.context_graph.passages import NameMatcher, PassageLayer
from workbench.model import Edge, Entity

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
entity_lists = st.lists(
    st.builds(Entity, key=texts, name=texts, type=st.sampled_from(["concept", "person", "date", "技术"]),
              mentions=st.integers(0, 2**40), first_seen=st.none() | texts, last_seen=st.none() | texts),
    max_size=12, unique_by=lambda e: e.key)


def table_of(entities: list[Entity]) -> EntityTable:
    keys = [e.key for e in entities]
    return EntityTable.from_arrays(keys, {key: i for i, key in enumerate(keys)}, entity_columns(entities))


@settings(max_examples=200, deadline=None)
@given(entity_lists, texts)
def test_the_table_holds_the_entities_it_was_written_from(entities, other):
    table = table_of(entities)
    assert list(table.values()) == entities and list(table) == [e.key for e in entities]
    assert dict(table.items()) == {e.key: e for e in entities} == dict(table)
    assert all(table[e.key] == e and e.key in table for e in entities) and len(table) == len(entities)
    assert (other in table) == any(e.key == other for e in entities)


def test_keys_past_the_entities_are_not_in_the_table():
    entities = [Entity("a", "A"), Entity("b", "B")]
    table = EntityTable.from_arrays(["a", "b"], {"a": 0, "b": 1, "linked-only": 2}, entity_columns(entities))
    assert "linked-only" not in table and table.position("linked-only") is None
    with pytest.raises(KeyError):
        table["linked-only"]
    assert list(table) == ["a", "b"] and len(table) == 2


def test_a_graph_over_the_table_answers_as_over_the_list():
    entities = [Entity("authservice", "Auth Service", "technology", 4), Entity("redis", "Redis", "technology", 2),
                Entity("loginflow", "login flow")]
    edges = [Edge("loginflow", "depends_on", "authservice", chunk_ids=("c1",)),
             Edge("authservice", "backed_by", "redis", chunk_ids=("c2",))]
    listed, tabled = ContextGraph(entities, edges), ContextGraph(table_of(entities), edges)
    assert tabled.entities() == listed.entities() and tabled.keys() == listed.keys()
    assert tabled.resolve("the auth-service") == listed.resolve("the auth-service") == "authservice"
    assert tabled.entity("redis") == listed.entity("redis") and "redis" in tabled
    assert list(tabled.nx.nodes(data="entity")) == list(listed.nx.nodes(data="entity"))
    assert tabled.impacted_by("Redis").impacted == listed.impacted_by("Redis").impacted
    with pytest.raises(EntityNotFound, match="did you mean: Redis"):
        tabled.entity("redsi")


@pytest.mark.parametrize("damage", ["offsets past the buffer", "code past the values", "short column", "key twice",
                                    "name key negative", "name key past the keys"])
def test_columns_that_do_not_fit_make_the_snapshot_unusable(tmp_path, damage):
    """Entity columns and name-table keys written with a valid checksum but not fitting together:
    refused on load, never used."""
    layer = PassageLayer({"c1": frozenset({"a"})}, {"a": ("c1",)}, {}, frozenset(), (), (),
                         NameMatcher({"a": ["Alpha"], "b": ["Beta"]}))
    graph = ContextGraph([Entity("a", "Alpha"), Entity("b", "Beta", "person")], [Edge("a", "uses", "b", chunk_ids=("c1",))],
                         passages=layer)
    save_snapshot(tmp_path, "key", graph, [])
    arrays = _graph_arrays(graph, [])
    if damage == "offsets past the buffer":
        arrays["entity_name_offsets"] = arrays["entity_name_offsets"] + 1
    elif damage == "code past the values":
        arrays["entity_type_codes"] = np.array([0, 7], dtype=np.int32)
    elif damage == "short column":
        arrays["entity_mentions"] = arrays["entity_mentions"][:1]
    elif damage == "key twice":
        arrays["table_entities"] = to_text({"key": ["a", "a"], "extra_keys": []})
    else:
        arrays["matcher_keys"] = np.full_like(arrays["matcher_keys"], -1 if damage == "name key negative" else 2)
    assert load_snapshot(tmp_path, "key").graph.passages.matcher.find("Alpha met Beta") == ["a", "b"]
    write_array_file(tmp_path / FILE_NAME, KIND, FORMAT, "key", arrays)
    with pytest.raises(SnapshotUnusable, match="damaged"):
        load_snapshot(tmp_path, "key")


def test_a_text_column_decodes_each_string_as_written():
    written = ["Zürich", "", "北京", "a\x00b"]
    column = TextColumn(*TextColumn.arrays(written))
    assert [column[i] for i in range(len(written))] == list(column) == written
