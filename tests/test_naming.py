"""Which entities a question names: word n-grams, and display names inside text without spaces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.retrieve.naming import _names_within, find_entities

LETTERS = st.text(alphabet="ab认证 -", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.sets(LETTERS, max_size=8), st.text(alphabet="ab认证 -x", max_size=30))
def test_the_names_within_a_text_are_those_a_search_for_each_would_find(names, text):
    table = {name: ("key",) for name in names}
    lengths = sorted({len(name) for name in names}, reverse=True)
    expected = sorted((name for name in names if name in text), key=lambda name: (-len(name), name))
    assert _names_within(text, table, lengths) == expected


def test_a_chinese_question_names_the_entities_written_inside_it(sample_workspace):
    assert find_entities(sample_workspace, "如果Redis宕机，哪些服务会受影响？") == ["redis"]
    assert find_entities(sample_workspace, "如果Redisson宕机") == []  # a name inside a longer Latin word is not it


def test_a_display_name_several_entities_show_leads_to_all_of_their_keys_sorted():
    from workbench.context_graph.graph import ContextGraph
    from workbench.model import Entity
    from workbench.retrieve.cache import RetrievalIndexes

    entities = [Entity("redis2", "Redis"), Entity("auth", "Auth"), Entity("redis1", "REDIS"), Entity("redis2b", "redis")]

    class View:  # a workspace's graph alone (the indexes hold their workspace by a weak reference)
        graph = ContextGraph(entities, [])

    ws = View()
    names = RetrievalIndexes(ws, 1).entity_names  # type: ignore[arg-type]
    assert names == {"redis": ("redis1", "redis2", "redis2b"), "auth": ("auth",)}
