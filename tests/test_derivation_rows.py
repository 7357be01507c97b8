"""The incremental derivation: after any sequence of writes (ingest, remove, re-ingest changed,
aliases, splits, accepted candidates), the graph a writer derives from the rows it keeps equals
the reference derivation from the whole record, field by field; and kept rows that are damaged,
stale or cannot follow the record are never used."""

from __future__ import annotations

import random
import shutil
import tempfile
from itertools import count
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.conftest import reopened
from tests.test_graph_snapshot import damage_bytes, rewrite_member
from workbench.runtime.array_file import ArrayFileUnusable
from workbench.context_graph.assemble import GraphParts, graph_parts, note_resolver
from workbench.context_graph.canon import Canonicalizer, build_merges
from workbench.context_graph.derivation_rows import FILE_NAME, DerivationRows, RowsStale, rows_key
from workbench.context_graph.parts_state import derive_parts
from workbench.model import Chunk, Document, Mention, Triple
from workbench.record.store import Store

SERVICES = ["Auth Service", "auth-service", "AuthService", "Billing Service", "the Billing service", "Redis", "redis",
            "Postgres", "PostgreSQL", "PG", "Kafka", "Token Cache", "token-cache"]
PEOPLE = ["Ann Lee", "ann lee", "Bo Chen", "Carla Diaz"]
VERBS = ["depends on", "calls", "uses", "replaces", "writes to"]


def note_text(rng: random.Random, i: int, notes: int) -> str:
    """A short note: front matter (title, date, declared links, some to no note), sentences that
    name services and people in several spellings."""
    a, b = rng.sample(SERVICES, 2)
    title = rng.choice([f"Note about {a}", f"{a} review", "Weekly review", rng.choice(SERVICES)])
    links = "".join(f"  - {{type: {rng.choice(['LEADS_TO', 'SUPERSEDES', 'RELATES_TO'])}, "
                    f"target: note-{rng.randrange(notes + 2)}.md}}\n" for _ in range(rng.randrange(3)))
    front = f'---\ntitle: "{title}"\ndate: "2024-0{rng.randrange(1, 10)}-1{rng.randrange(10)}"\n'
    front += f"relations:\n{links}" if links else ""
    sentences = [f"{rng.choice(SERVICES)} {rng.choice(VERBS)} {rng.choice(SERVICES)}." for _ in range(rng.randrange(1, 4))]
    sentences += [f"{rng.choice(PEOPLE)} owns {rng.choice(SERVICES)}." for _ in range(rng.randrange(2))]
    second = f"\n\n{b} was reviewed by {rng.choice(PEOPLE)} in week {i % 7}." if rng.random() < 0.5 else ""
    return f"{front}---\n# {title}\n\n{' '.join(sentences)}{second}\n"


def reference(ws) -> tuple[GraphParts, list]:
    """The graph's parts and the merge record from one Python pass over every row of the record."""
    canonicalizer = ws.canonicalizer()
    parts = graph_parts(ws.store.iter_mentions(), ws.store.iter_triples(), ws.store.chunk_context(), canonicalizer,
                        note_resolver(ws.store.documents()))
    return parts, build_merges(ws.store.mentions(), canonicalizer)


def kept_parts(ws) -> tuple[GraphParts, list]:
    """The parts and merges derived from the rows file the writer left."""
    key = rows_key(ws.store.workspace_id, ws.settings.canonicalization.model_dump(mode="json"))
    rows = DerivationRows.load(ws.path, key)
    return derive_parts(rows, ws.store.chunk_context(), ws.canonicalizer(), note_resolver(ws.store.documents()))


def assert_same_parts(got: GraphParts, expected: GraphParts) -> None:
    assert list(got.entities.items()) == list(expected.entities.items())  # same entities, fields and order
    assert got.edges == expected.edges
    assert {c: set(keys) for c, keys in got.chunk_entities.items()} == \
        {c: set(keys) for c, keys in expected.chunk_entities.items()}
    assert [(k, list(f.items())) for k, f in got.forms.items()] == \
        [(k, list(f.items())) for k, f in expected.forms.items()]  # the order of forms shapes the name lookup
    assert list(got.title_of.items()) == list(expected.title_of.items())


def assert_same_graph(got, expected) -> None:
    """Two context graphs equal field by field: entities, edges, passage layer, provenance."""
    assert got.entities() == expected.entities()
    assert got.edges_as_given() == expected.edges_as_given()
    assert list(got.nx.edges(keys=True, data="edge")) == list(expected.nx.edges(keys=True, data="edge"))
    a, b = got.passages, expected.passages
    assert (a.entities_of, a.chunks_of, a.title_of, a.common, a.title_links, a.synonyms) == \
        (b.entities_of, b.chunks_of, b.title_of, b.common, b.title_links, b.synonyms)
    assert a.matcher.key_of == b.matcher.key_of
    assert got.passages_document == expected.passages_document and got.passages_time == expected.passages_time


def assert_followed_exactly(ws) -> None:
    """The writer's graph (derived now if the step left it to the next reader, as accepting a
    candidate does), its merges and the parts of the rows it kept equal the reference."""
    graph = ws.graph
    parts, merges = reference(ws)
    assert parts.entities and parts.edges  # a comparison of nothing proves nothing
    assert_same_parts(kept_parts(ws)[0], parts)
    assert kept_parts(ws)[1] == merges
    assert ws.merges() == merges
    assert_same_graph(graph, ws.derivation.assemble())


def write_note(corpus, rng, i, notes):
    (corpus / f"note-{i}.md").write_text(note_text(rng, i, notes), encoding="utf-8")


def step(ws, corpus, rng: random.Random, notes: int) -> str:
    """One random write: ingest new notes, re-ingest a changed one, remove one, or change the aliases."""
    present = sorted(int(p.stem.split("-")[1]) for p in corpus.glob("note-*.md"))
    names = [e.name for e in ws.entities()]
    op = rng.choice(["ingest", "ingest", "change", "remove", "alias", "unalias", "split", "unsplit", "accept"])
    if op == "ingest" or (op in {"change", "remove"} and not present):
        absent = [i for i in range(notes) if i not in present] or [notes]
        for i in rng.sample(absent, min(len(absent), rng.randrange(1, 3))):
            write_note(corpus, rng, i, notes)
        ws.ingest([corpus])
        return "ingest"
    if op == "change":
        write_note(corpus, rng, rng.choice(present), notes)
        ws.ingest([corpus])
    elif op == "remove":
        path = corpus / f"note-{rng.choice(present)}.md"
        path.unlink()
        ws.remove(path)
    elif op == "alias":
        try:
            ws.corrections.add_alias(rng.choice(names + SERVICES), rng.choice(names + SERVICES))
        except ValueError:
            return "alias refused"
    elif op == "unalias" and ws.store.aliases():
        ws.corrections.remove_alias(rng.choice(sorted(ws.store.aliases())))
    elif op == "split":
        ws.corrections.split(rng.choice(SERVICES + PEOPLE))
    elif op == "unsplit" and ws.store.splits():
        ws.corrections.unsplit(rng.choice(sorted(ws.store.splits())))
    elif op == "accept" and ws.candidates():
        candidate = rng.choice(ws.candidates())
        ws.corrections.accept_candidate(candidate.subject, candidate.relation, candidate.object)
    else:
        return "nothing"
    return op


@pytest.mark.parametrize("seed", range(8))
def test_random_writes_derive_the_graph_of_a_full_derivation(make_workspace, tmp_path, seed, monkeypatch):
    if seed % 2:  # the record read a few rows at a time, as a large one is
        monkeypatch.setattr("workbench.record.derivation_reads.ROWS_PAGE", 3)
    rng = random.Random(seed)
    corpus = tmp_path / "notes"
    corpus.mkdir()
    notes = 8
    for i in range(4):
        write_note(corpus, rng, i, notes)
    ws = make_workspace()
    ws.ingest([corpus])
    assert ws.derivation.rows_status.startswith("read whole: no rows.npz")
    assert_followed_exactly(ws)
    done = []
    for _ in range(12):
        done.append(step(ws, corpus, rng, notes))
        if done[-1] in {"nothing", "alias refused"}:
            continue
        assert_followed_exactly(ws)
        assert ws.derivation.rows_status.startswith("followed: "), (done, ws.derivation.rows_status)
    assert len({op for op in done if op not in {"nothing", "alias refused"}}) >= 3, done


def test_an_alias_change_reads_no_rows_and_rekeys_the_entity(make_workspace, tmp_path):
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nThe Auth Service depends on Redis. PG uses Kafka.\n", encoding="utf-8")
    ws = make_workspace()
    ws.ingest([corpus])
    ws.corrections.add_alias("PG", "Kafka")
    assert ws.derivation.rows_status == "followed: 0 rows read, 0 dropped"
    assert ws.graph.entity("kafka").mentions == 2
    assert_followed_exactly(ws)
    ws.corrections.remove_alias("PG")
    assert ws.derivation.rows_status == "followed: 0 rows read, 0 dropped"
    assert_followed_exactly(ws)


def test_rows_no_extractor_writes_yet_derive_as_the_reference(notes_workspace):
    """Note-typed mentions (resolved through the notes' titles), names with no key, self-loops,
    candidates, declared links to no note, triple ends nobody mentions."""
    ws, corpus, rng = notes_workspace
    chunk = ws.chunks()[0].id
    mentions = [("note-1.md", "note"), ("Note About Redis", "note"), ("nowhere.md", "note"), ("the", "service"),
                ("...", "concept"), ("Kafka", "title"), ("kafka", "note")]
    triples = [("Redis", "uses", "redis", "pattern", "service", "service"),  # one key: a self-loop, dropped
               ("Redis", "SIMILAR_TO", "Kafka", "candidate", "note", "note"),
               ("note-2.md", "LEADS_TO", "elsewhere.md", "declared", "note", "note"),
               ("Quartz Scheduler", "calls", "the", "pattern", "service", "service"),
               ("Quartz Scheduler", "calls", "Zeta Queue", "pattern", "service", "technology"),
               ("zeta-queue", "feeds", "note-3.md", "pattern", "technology", "technology")]
    # (A note-typed end of a triple neither declared nor from a note, which no extractor writes,
    # fails assemble_graph itself: its edge names the raw key, its node the note's title.)
    with ws.store.transaction() as db:
        db.executemany("INSERT INTO mentions VALUES (?,?,?,0)", [(chunk, s, t) for s, t in mentions])
        db.executemany("INSERT INTO triples VALUES (?,?,?,?,0.5,?,?,?)", [(chunk, a, r, b, o, st, ot)
                                                                         for a, r, b, o, st, ot in triples])
        db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
    assert_followed_exactly(ws)
    assert ws.derivation.rows_status == f"followed: {len(mentions) + len(triples) - 1} rows read, 0 dropped"
    assert ws.graph.entity("zetaqueue").type == "technology"
    ws.corrections.split("zeta-queue")
    assert_followed_exactly(ws)
    path = corpus / "note-1.md"
    path.unlink()
    ws.remove(path)  # the note-typed mentions of note-1.md now resolve to no title
    assert_followed_exactly(ws)
    assert ws.derivation.rows_status.startswith("followed: 0 rows read")


def ingested_notes(make_workspace, folder, notes: int = 5, seed: int = 7):
    """``(workspace, corpus folder, rng)``: ``notes`` generated notes written into ``folder`` and ingested."""
    rng = random.Random(seed)
    folder.mkdir()
    for i in range(notes):
        write_note(folder, rng, i, notes)
    ws = make_workspace()
    ws.ingest([folder])
    return ws, folder, rng


@pytest.fixture
def notes_workspace(make_workspace, tmp_path):
    return ingested_notes(make_workspace, tmp_path / "notes")


@pytest.mark.parametrize("damage", ["bytes", "truncated", "checksum", "reference", "missing"])
def test_damaged_rows_are_detected_and_read_whole(notes_workspace, damage):
    ws, corpus, rng = notes_workspace
    path = ws.path / FILE_NAME
    key = rows_key(ws.store.workspace_id, ws.settings.canonicalization.model_dump(mode="json"))
    if damage == "bytes":
        damage_bytes(path)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    elif damage == "checksum":
        with np.load(path, allow_pickle=False) as data:
            confidence = data["triple_confidence"].copy()
        confidence[0] += 1
        rewrite_member(path, "triple_confidence", confidence)
    elif damage == "reference":  # consistent checksum, a row pointing past its table
        rows = DerivationRows.load(ws.path, key)
        rows.packed_mentions["surface"][0] = len(rows.tables["surfaces"].values) + 5
        rows.save(ws.path, key)
    else:
        path.unlink()
    if damage != "missing":
        with pytest.raises(ArrayFileUnusable, match="damaged"):
            DerivationRows.load(ws.path, key)
    write_note(corpus, rng, 9, 10)
    ws.ingest([corpus])  # the writer follows the rows it holds: the file is not read
    assert ws.derivation.rows_status.startswith("followed: ")
    assert_followed_exactly(ws)
    DerivationRows.load(ws.path, key)  # written whole again
    damage_bytes(ws.path / FILE_NAME)
    fresh = reopened(ws)  # another process reads the file
    try:
        write_note(corpus, rng, 8, 10)
        fresh.ingest([corpus])
        assert fresh.derivation.rows_status.startswith("read whole: ")
        assert_followed_exactly(fresh)
    finally:
        fresh.close()


def test_rows_of_other_settings_or_a_record_they_cannot_follow_are_read_whole(notes_workspace):
    ws, corpus, rng = notes_workspace
    changed = reopened(ws, canonicalization__articles=["the", "a"])
    try:
        write_note(corpus, rng, 8, 10)
        changed.ingest([corpus])
        assert changed.derivation.rows_status == "read whole: rows.npz was made for another version of what it indexes"
        assert_followed_exactly(changed)
    finally:
        changed.close()
    ws.close()
    fresh = reopened(ws)
    try:
        assert fresh.graph is not None and fresh.derivation.rows_status.startswith("read whole: ")  # back to its settings
        with fresh.store.transaction() as db:  # a row gone while its document stays
            db.execute("DELETE FROM chunk_mentions WHERE rowid = (SELECT MIN(rowid) FROM chunk_mentions)")
            db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
        fresh.corrections.add_alias("PG", "Postgres")
        assert fresh.derivation.rows_status == "read whole: chunk_mentions rows left the record while their documents stayed"
        assert_followed_exactly(fresh)
    finally:
        fresh.close()


def test_rows_whose_tables_outgrow_the_record_are_read_whole_to_compact(notes_workspace, monkeypatch):
    ws, corpus, rng = notes_workspace
    monkeypatch.setattr("workbench.context_graph.derivation_rows.TABLE_SLACK", 0)
    statuses = []
    for _ in range(3):  # every note written again: new chunk ids, the old ones left in the tables
        for i in range(5):
            write_note(corpus, rng, i, 5)
        ws.ingest([corpus])
        statuses.append(ws.derivation.rows_status)
        assert_followed_exactly(ws)
    assert statuses[0].startswith("followed: ")
    assert "read whole: the rows' tables hold more than twice the record's chunks" in statuses


def test_rows_copied_from_another_workspace_are_not_used(notes_workspace, make_workspace, tmp_path):
    ws, corpus, rng = notes_workspace
    other = make_workspace("other")
    shutil.copy(ws.path / FILE_NAME, other.path / FILE_NAME)
    other.ingest([corpus])
    assert other.derivation.rows_status.startswith("read whole: rows.npz was made for another version")
    assert_followed_exactly(other)


# -- the rows against the reference on a bare record, many random write sequences ------------------

NAMES = ["Auth Service", "auth-service", "Redis", "redis", "PG", "Postgres", "the", "d1", "d2.md", "Kafka", "...",
         "Note One"]
surfaces = st.sampled_from(NAMES)
mention_rows = st.lists(st.tuples(surfaces, st.sampled_from(["service", "concept", "title", "note", "person"])),
                        max_size=4)
triple_rows = st.lists(st.tuples(surfaces, st.sampled_from(["uses", "LEADS_TO"]), surfaces,
                                 st.sampled_from(["pattern", "comention", "declared", "candidate"]),
                                 st.sampled_from(["service", "note"]), st.sampled_from(["service", "note"]),
                                 st.sampled_from([0.25, 0.5, 1.0])), max_size=3)
chunk_rows = st.tuples(mention_rows, triple_rows, st.sampled_from([None, "2024-01-02", "2024-03-04"]))
document_writes = st.tuples(st.just("write"), st.integers(0, 3), surfaces, st.lists(chunk_rows, min_size=1, max_size=2))
writes = st.one_of(
    document_writes, document_writes, document_writes,  # most steps write a document
    st.tuples(st.just("delete"), st.integers(0, 3)),
    st.tuples(st.just("alias"), surfaces, surfaces),
    st.tuples(st.just("unalias"), surfaces),
    st.tuples(st.just("split"), surfaces),
    st.tuples(st.just("accept"), st.integers(0, 5)),
)


def apply(store: Store, write: tuple, ids: count) -> None:
    """One write to the record, as the workspace's steps make them."""
    kind = write[0]
    if kind == "write":
        _, doc, title, chunks = write
        n = next(ids)
        document = Document(f"d{doc}.md", f"/c/d{doc}.md", title, "note", "", f"h{n}")
        made = [Chunk(f"d{doc}-{n}-{i}", document.id, i, f"text {n} {i}", 0, 1, ts) for i, (_, _, ts) in enumerate(chunks)]
        mentions = [Mention(surface, chunk.id, etype) for chunk, (ms, _, _) in zip(made, chunks) for surface, etype in ms]
        triples = [Triple(a, r, b, chunk.id, c, o, st_, ot) for chunk, (_, ts_, _) in zip(made, chunks)
                   for a, r, b, o, st_, ot, c in ts_]
        store.replace_documents([(document, made, mentions, triples, [f"t{n}"] * len(made))])
    elif kind == "delete":
        store.delete_documents([f"d{write[1]}.md"])
    elif kind == "alias" and write[1] != write[2]:
        store.record("alias", {}, alias=(write[1], write[2]))
    elif kind == "unalias":
        store.record("unalias", {}, unalias=write[1])
    elif kind == "split":
        store.record("split", {}, split=write[1].lower())
    elif kind == "accept":
        found = store.db.execute("SELECT subject, relation, object FROM triples WHERE origin='candidate'").fetchall()
        if found:
            store.accept_candidate(*found[write[1] % len(found)])


@settings(max_examples=200, deadline=None)
@given(st.lists(writes, min_size=1, max_size=12))
# A note-typed end nobody mentions whose note's title has no key: the first empty key is a title's.
@example([("write", 1, "...", [([], [("Auth Service", "uses", "d1", "pattern", "service", "note", 0.25)], None)])])
def test_rows_followed_through_any_writes_give_the_parts_of_a_full_pass(sequence):
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "record.sqlite")
        rows, ids = DerivationRows(), count()
        try:
            for write in sequence:
                apply(store, write, ids)
                canonicalizer = Canonicalizer(user_aliases=store.aliases(), splits=store.splits())
                context = store.chunk_context()
                try:
                    rows.sync(store, canonicalizer, store.aliases(), store.splits(), context)
                except RowsStale:
                    raise AssertionError("the rows could not follow a write the workspace makes") from None
                rows.save(Path(folder), "k")
                rows = DerivationRows.load(Path(folder), "k")  # and back, each step
                notes = note_resolver(store.documents())
                parts, merges = derive_parts(rows, context, canonicalizer, notes)
                assert_same_parts(parts, graph_parts(store.iter_mentions(), store.iter_triples(), context,
                                                     canonicalizer, notes))
                assert merges == build_merges(store.iter_mentions(), canonicalizer)
        finally:
            store.close()


def test_rows_are_written_in_narrow_integers_and_read_back_as_int64(notes_workspace):
    ws, _, _ = notes_workspace
    key = rows_key(ws.store.workspace_id, ws.settings.canonicalization.model_dump(mode="json"))
    rows = DerivationRows.load(ws.path, key)
    with np.load(ws.path / FILE_NAME, allow_pickle=False) as data:
        written = {name: data[name] for name in data.files}
    assert written["packed_mention_chunk"].itemsize < 8 and written["triple_relation"].itemsize == 1
    assert written["comention_subject"].itemsize < 8
    assert written["triple_confidence"].dtype == np.float64  # compared with thresholds: kept exact
    for prefix, kept in (("mention", rows.mentions), ("packed_mention", rows.packed_mentions),
                         ("comention", rows.comentions)):
        for name, column in kept.items():
            assert column.dtype == np.int64 and np.array_equal(column, written[f"{prefix}_{name}"])
    for name, column in rows.triples.items():
        assert np.array_equal(column, written[f"triple_{name}"])
