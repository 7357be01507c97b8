"""The loaded passage layer's link maps: made entry by entry, equal to the dicts a derivation makes."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.runtime.array_file import ragged
from workbench.context_graph.passage_links import PassageLinks


def eager(chunk_ids, keys, rows):
    """The two dicts as a derivation builds them."""
    entities_of = {cid: frozenset(keys[i] for i in row) for cid, row in zip(chunk_ids, rows)}
    chunks_of = defaultdict(list)
    for cid, row in zip(chunk_ids, rows):
        for i in sorted(set(row)):
            chunks_of[keys[i]].append(cid)
    return entities_of, {key: tuple(ids) for key, ids in chunks_of.items()}


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 8).flatmap(lambda n_keys: st.lists(
    st.lists(st.integers(0, max(n_keys - 1, 0)), max_size=5 if n_keys else 0, unique=True), max_size=7).map(
        lambda rows: (n_keys, rows))))
def test_the_maps_equal_the_derived_dicts_entry_by_entry(case):
    n_keys, rows = case
    keys = [f"k{i}" for i in range(n_keys)]
    chunk_ids = [f"c{i:02d}" for i in range(len(rows))]
    flat, offsets = ragged([sorted(row) for row in rows])
    links = PassageLinks(chunk_ids, keys, flat, offsets)
    entities_of, chunks_of = eager(chunk_ids, keys, rows)
    assert links.entities_of == entities_of and dict(links.entities_of) == entities_of
    assert links.chunks_of == chunks_of and list(links.chunks_of) == [k for k in keys if k in chunks_of]
    assert len(links.chunks_of) == len(chunks_of) and len(links.entities_of) == len(chunk_ids)
    assert links.entities_of.link_count == sum(len(row) for row in rows)
    for key in keys + ["nobody", 3]:
        assert (key in links.chunks_of) == (key in chunks_of)
        assert links.chunks_of.get(key) == chunks_of.get(key)
    assert "nowhere" not in links.entities_of and links.entities_of.get("nowhere") is None
    if chunk_ids:  # an entry is made once and kept
        assert links.entities_of[chunk_ids[0]] is links.entities_of[chunk_ids[0]]


def test_links_that_do_not_fit_are_refused():
    with pytest.raises(ValueError, match="do not fit"):
        PassageLinks(["c1"], ["a"], np.array([1], dtype=np.int32), np.array([0, 1]))
    with pytest.raises(ValueError, match="do not fit"):
        PassageLinks(["c1", "c2"], ["a"], np.array([0], dtype=np.int32), np.array([0, 1]))
