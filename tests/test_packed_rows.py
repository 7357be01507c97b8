"""Mentions and co-mention pairs kept packed, a row a chunk each: unpacked to the same mentions
and triples in the same order; a record of schema 1 (a row apiece) read to the same graph,
followed by later writes and packed by ``repair``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import reopened
from tests.test_derivation_rows import assert_followed_exactly, assert_same_graph, ingested_notes, write_note
from workbench.record.packed_rows import is_packable, pack_comentions, pack_mentions, unpack_comentions, unpack_mentions
from workbench.model import COMENTION_ORIGIN, COMENTION_RELATION, Mention, Triple
from workbench.record.store import SCHEMA_VERSION
from workbench.record.note_rows import triple_row

names = st.text(min_size=1, max_size=6)
pair = st.tuples(st.sampled_from(["c1", "c2", "c3"]), names, names, st.sampled_from(["service", "person", "note"]),
                 st.sampled_from(["service", "technology"]))


def assert_unpacked_as_given(items, pack, unpack) -> None:
    """``pack(items)`` gives a row a chunk, in order of first item, that ``unpack`` reads back to
    that chunk's items in their order."""
    packed = pack(items)
    assert [chunk for chunk, _, _ in packed] == list(dict.fromkeys(item.chunk_id for item in items))
    for chunk, count, body in packed:
        expected = [item for item in items if item.chunk_id == chunk]
        assert count == len(expected)
        assert unpack(chunk, body) == expected


@given(st.lists(pair, max_size=40))
def test_packed_pairs_unpack_to_the_same_triples_in_the_same_order_per_chunk(pairs):
    assert_unpacked_as_given([Triple(a, COMENTION_RELATION, b, chunk, 1.0, COMENTION_ORIGIN, at, bt)
                              for chunk, a, b, at, bt in pairs], pack_comentions, unpack_comentions)


mention = st.tuples(st.sampled_from(["c1", "c2", "c3"]), names, st.sampled_from(["service", "person", "note"]),
                    st.integers(0, 10**6))


@given(st.lists(mention, max_size=40))
def test_packed_mentions_unpack_to_the_same_mentions_in_the_same_order_per_chunk(fields):
    assert_unpacked_as_given([Mention(surface, chunk, kind, start) for chunk, surface, kind, start in fields],
                             pack_mentions, unpack_mentions)


def test_only_the_extractors_co_mention_pairs_are_packed():
    pair = Triple("A", COMENTION_RELATION, "B", "c1", 1.0, COMENTION_ORIGIN, "service", "service")
    assert is_packable(pair)
    for other in (Triple("A", "depends_on", "B", "c1", 1.0, COMENTION_ORIGIN, "service", "service"),
                  Triple("A", COMENTION_RELATION, "B", "c1", 0.5, COMENTION_ORIGIN, "service", "service"),
                  Triple("A", COMENTION_RELATION, "B", "c1", 1.0, "llm", "service", "service")):
        assert not is_packable(other)


@pytest.mark.parametrize("body", ["", "[1", '{"a": 1}', '[["A","service"],[0,3]]', '[["A"],[0,0]]',
                                  '[["A","service"],[-1,0]]'])
def test_a_damaged_packed_pair_row_is_a_value_error_naming_it(body):
    with pytest.raises(ValueError, match="damaged co-mention row of chunk 'c1'"):
        unpack_comentions("c1", body)


@pytest.mark.parametrize("body", ["", "[1", '{"a": 1}', '[["service"],["A",1,0]]', '[["service"],["A",0]]',
                                  '[["service"],[3,0,0]]', '[["service"],["A",-1,0]]'])
def test_a_damaged_packed_mention_row_is_a_value_error_naming_it(body):
    with pytest.raises(ValueError, match="damaged mention row of chunk 'c1'"):
        unpack_mentions("c1", body)


@pytest.fixture
def notes(make_workspace, tmp_path):
    return ingested_notes(make_workspace, tmp_path / "notes", notes=6, seed=11)


def test_an_ingest_keeps_mentions_and_co_mention_pairs_a_row_a_chunk_and_none_a_row_apiece(notes):
    ws, _, _ = notes
    db = ws.store.db
    assert db.execute("SELECT COUNT(*) FROM mentions").fetchone()[0] == 0
    packed = db.execute("SELECT chunk_id, mentions FROM chunk_mentions").fetchall()
    assert len(packed) == len({chunk for chunk, _ in packed}) > 1
    assert ws.store.count("mentions") == sum(n for _, n in packed) == len(ws.store.mentions()) > len(packed)
    assert db.execute("SELECT COUNT(*) FROM triples WHERE relation = ?", (COMENTION_RELATION,)).fetchone()[0] == 0
    rows = db.execute("SELECT chunk_id, pairs, body FROM comentions").fetchall()
    assert len(rows) == len({chunk for chunk, _, _ in rows}) > 1
    pairs = [t for t in ws.store.iter_triples() if t.relation == COMENTION_RELATION]
    assert len(pairs) == sum(n for _, n, _ in rows) == ws.store.comention_count()
    assert ws.store.count("triples") == len(ws.store.triples()) > len(pairs)
    assert ws.graph.edges(relation=COMENTION_RELATION)


def _as_schema_1(ws) -> None:
    """The record as schema 1 wrote it: every mention a row of ``mentions``, every co-mention pair a
    row of ``triples``."""
    with ws.store.transaction() as db:
        mentions = db.execute("SELECT chunk_id, body FROM chunk_mentions ORDER BY rowid").fetchall()
        db.executemany("INSERT INTO mentions VALUES (?,?,?,?)", [(m.chunk_id, m.surface, m.entity_type, m.start)
                                                                 for chunk, body in mentions
                                                                 for m in unpack_mentions(chunk, body)])
        db.execute("DELETE FROM chunk_mentions")
        packed = db.execute("SELECT chunk_id, body FROM comentions ORDER BY rowid").fetchall()
        db.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?,?)",
                       [triple_row(t) for chunk, body in packed for t in unpack_comentions(chunk, body)])
        db.execute("DELETE FROM comentions")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")


def test_a_schema_1_record_gives_the_same_graph_and_later_writes_are_followed_exactly(notes):
    ws, corpus, rng = notes
    graph = ws.graph
    _as_schema_1(ws)
    for kept in ("rows.npz", "graph.npz"):
        (ws.path / kept).unlink(missing_ok=True)
    old = reopened(ws)
    try:
        assert old.store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == \
            str(SCHEMA_VERSION) == "2"  # an older workbench now refuses it rather than miss the packed pairs
        assert_same_graph(old.graph, graph)
        write_note(corpus, rng, 6, 8)
        write_note(corpus, rng, 2, 8)  # written again: its unpacked rows go with it
        old.ingest([corpus])
        db = old.store.db
        assert db.execute("SELECT COUNT(*) FROM triples WHERE relation = ?", (COMENTION_RELATION,)).fetchone()[0]
        assert db.execute("SELECT COUNT(*) FROM comentions").fetchone()[0]  # both layouts in one record
        assert db.execute("SELECT COUNT(*) FROM mentions").fetchone()[0]
        assert db.execute("SELECT COUNT(*) FROM chunk_mentions").fetchone()[0]
        assert_followed_exactly(old)
    finally:
        old.close()


def test_repair_packs_a_schema_1_records_rows_to_the_same_mentions_and_triples_and_a_smaller_file(notes):
    ws, corpus, rng = notes
    for i in range(6, 80):  # pages enough for the packing to show in the file's size
        write_note(corpus, rng, i, 80)
    ws.ingest([corpus])
    graph, triples = ws.graph, sorted(map(triple_row, ws.store.iter_triples()))
    mentions = sorted((m.chunk_id, m.surface, m.entity_type, m.start) for m in ws.store.iter_mentions())
    _as_schema_1(ws)
    ws.store._compact()
    unpacked = ws.store.path.stat().st_size
    pairs = ws.store.comention_count()
    ws.repair()
    db = ws.store.db
    assert db.execute("SELECT COUNT(*) FROM triples WHERE relation = ?", (COMENTION_RELATION,)).fetchone()[0] == 0
    assert ws.store.comention_count() == pairs > 0
    assert sorted(map(triple_row, ws.store.iter_triples())) == triples
    assert db.execute("SELECT COUNT(*) FROM mentions").fetchone()[0] == 0
    assert sorted((m.chunk_id, m.surface, m.entity_type, m.start) for m in ws.store.iter_mentions()) == mentions
    assert ws.store.path.stat().st_size < unpacked
    assert db.execute("PRAGMA freelist_count").fetchone()[0] == 0  # compacted
    assert_same_graph(ws.graph, graph)
