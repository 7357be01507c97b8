"""The note-similarity step follows only what a write changed (issue 25: adding one note to a
vault of 20,000 compared every note with every other again), and its candidates stay exactly
those of the whole-corpus search (:func:`workbench.workspace.note_links.note_similarity_candidates`)."""

from __future__ import annotations

import zlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.embedding import text_hash
from workbench.vectors.embedding_cache import embed_cached
from workbench.workspace.note_links import MAX_CANDIDATES_PER_NOTE, NOTE_KINDS, note_similarity_candidates
from workbench.model import Chunk, Document
from workbench.corpus import note_matrix
from workbench.corpus.note_matrix import matrix_files, read_note_matrix
from workbench.corpus.note_neighbours import refresh_note_neighbours
from workbench.extract.notes import unit_rows
from workbench.ingest.superseding import chunk_texts, cue_chunks, notes_for_superseding, superseding_candidates
from workbench.record.note_rows import NOTE_MATRIX_KEY
from workbench.workspace.note_links import refresh_superseding
from workbench.record.store import Store


class SeededVectors:
    """Each text's vector is a fixed random direction seeded by the text (a few dimensions, so
    many notes are near one another, lists fill up and ties of rank are rare but possible)."""

    name = "seeded-4"
    dimension = 4

    def embed(self, texts):
        return np.array([np.random.default_rng(zlib.crc32(t.encode())).normal(size=self.dimension) for t in texts],
                        dtype=np.float32).reshape(len(texts), self.dimension)


def _write(store: Store, note: int, version: int, chunks: int = 2, title: str | None = None,
           said: str = "", date: str | None = None, digest: str | None = None) -> None:
    """Note ``note`` in its ``version``: ``chunks`` chunks, the last saying ``said`` too."""
    doc_id = f"n{note:03d}.md"
    texts = [f"note {note} v{version} part {p}" for p in range(chunks)]
    texts[-1] += f" {said}" if said else ""
    doc = Document(doc_id, f"/vault/{doc_id}", title or f"Note {note}", "markdown", " ".join(texts), digest or f"h{note}-{version}",
                   date=date)
    rows = [Chunk(f"{doc_id}#{version}-{p}", doc_id, p, t, 0, len(t)) for p, t in enumerate(texts)]
    store.replace_documents([(doc, rows, [], [], [text_hash(t) for t in texts])])


def vault(folder, notes: int) -> tuple[Store, SeededVectors]:
    """A record of ``notes`` two-chunk notes (first versions) and the embedder of their vectors."""
    store = Store(folder / "record.sqlite")
    for note in range(notes):
        _write(store, note, 1)
    return store, SeededVectors()


def _refresh(store: Store, embedder, threshold: float, k: int, full: bool = False, cap: int = MAX_CANDIDATES_PER_NOTE):
    return refresh_note_neighbours(store, lambda texts: embed_cached(texts, store, embedder)[0], embedder.name,
                                   threshold, NOTE_KINDS, cap, k=k, full=full)


def _key(triples):
    return [(t.subject, t.object, t.chunk_id) for t in triples]


def _stored_candidates(store: Store) -> list:
    """The stored SIMILAR_TO candidates, best first (ties by subject's then object's title)."""
    found = [t for t in store.triples() if t.relation == "SIMILAR_TO" and t.origin == "candidate"]
    return sorted(found, key=lambda t: (-t.confidence, t.subject, t.object, t.chunk_id))


def _candidate_rows(store: Store) -> tuple[list, list]:
    """The kept pairs and the candidate triples exactly as stored (confidences unrounded)."""
    return (store.db.execute("SELECT * FROM note_candidates ORDER BY a, b").fetchall(),
            sorted(store.db.execute("SELECT * FROM triples WHERE relation = 'SIMILAR_TO'").fetchall()))


def _as_made_whole(store: Store, embedder, threshold: float, k: int, folder, cap: int) -> tuple[list, list]:
    """:func:`_candidate_rows` of a copy of the record whose lists are all made again."""
    path = folder / f"whole-{store.version}-{len(list(folder.iterdir()))}.sqlite"
    store.db.execute("VACUUM INTO ?", (str(path),))
    copy = Store(path)
    try:
        _refresh(copy, embedder, threshold, k, full=True, cap=cap)
        return _candidate_rows(copy)
    finally:
        copy.close()


def _matrix_is_the_record(store: Store) -> bool:
    """Whether the file of unit vectors holds exactly the stored note vectors."""
    held = read_note_matrix(store.path, store.meta(NOTE_MATRIX_KEY), store.notes.note_vector_count())
    if held is None:
        return False
    matrix, stored = held.after(set(), {}), store.notes.stored_note_vectors()
    return (matrix.ids, matrix.hashes) == (stored.ids, stored.hashes) and \
        np.array_equal(matrix.unit32, unit_rows(stored.means.astype(np.float64)).astype(np.float32))


def _superseding_as_read_whole(store: Store) -> list:
    """The SUPERSEDES candidates read from every chunk of every note, as the stored ones read."""
    return sorted((t.subject, t.object, t.chunk_id, t.confidence) for t in superseding_candidates(
        notes_for_superseding(store.db), chunk_texts(store.db, cue_chunks(store.db))))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.5, 0.9]), st.integers(1, 4), st.sampled_from([0.05, 1.0]),
       st.sampled_from([1, MAX_CANDIDATES_PER_NOTE]))
def test_incremental_candidates_equal_the_whole_corpus_search_after_any_writes(tmp_path_factory, seed, threshold, k,
                                                                              share, cap):
    """Random additions, changes (some of the title too, some to a title other notes have, which
    then share their candidates) and removals; the file of unit vectors written whole or as a
    delta; at most 1 candidate a note (long chains of pairs kept and dropped) or 3 (the search
    compared with); some notes saying they replace others, by title or by month."""
    rng = np.random.default_rng(seed)
    folder = tmp_path_factory.mktemp("notes")
    store = Store(folder / "record.sqlite")
    embedder = SeededVectors()
    present: dict[int, int] = {}
    try:
        for step in range(6):
            for note in rng.choice(40, size=int(rng.integers(1, 12)), replace=False).tolist():
                action = rng.random()
                if note in present and action < 0.35:
                    store.delete_documents([f"n{note:03d}.md"])
                    del present[note]
                else:
                    present[note] = present.get(note, 0) + 1
                    title = [None, f"Note {note} v{present[note]}", "Shared", "Shared too"][int(rng.integers(0, 4))]
                    month = int(rng.integers(1, 4))
                    said = ["", f"This replaces Note {int(rng.integers(0, 40))}.",
                            f"It supersedes the {['January', 'February', 'March'][month - 1]} 2024 plan."][
                        int(rng.integers(0, 3))]
                    _write(store, note, present[note], chunks=int(rng.integers(1, 4)), title=title, said=said,
                           date=f"2024-{month:02d}-{int(rng.integers(10, 29))}" if rng.random() < 0.7 else None)
            with mock.patch.object(note_matrix, "DELTA_SHARE", share):
                done = _refresh(store, embedder, threshold, k, full=step == 3, cap=cap)  # repair makes every list again
            refresh_superseding(store, done.changes)
            assert done.full == (step in (0, 3))  # the first refresh makes every list
            if cap == MAX_CANDIDATES_PER_NOTE:
                stored = _stored_candidates(store)
                expected = note_similarity_candidates(store, embedder, threshold, k=k)
                assert _key(stored) == _key(expected), f"step {step}"
                assert [t.confidence for t in stored] == pytest.approx([t.confidence for t in expected], abs=1e-9)
            if not done.full:
                assert _candidate_rows(store) == _as_made_whole(store, embedder, threshold, k, folder, cap)
            assert _matrix_is_the_record(store)
            assert sorted((t.subject, t.object, t.chunk_id, t.confidence) for t in store.triples()
                          if t.relation == "SUPERSEDES") == _superseding_as_read_whole(store)
    finally:
        store.close()


def test_adding_one_note_compares_only_that_note_with_the_others(tmp_path):
    store, embedder = vault(tmp_path, 300)
    first = _refresh(store, embedder, 0.5, 4)
    assert first.full and first.embedded == 300 and first.rows == 300
    _write(store, 300, 1)
    added = _refresh(store, embedder, 0.5, 4)
    assert not added.full and added.embedded == 1 and added.rows == 1
    assert 0 < added.decided < first.decided // 4  # the pairs of the titles it touched, not all of them
    unchanged = _refresh(store, embedder, 0.5, 4)
    assert (unchanged.removed, unchanged.embedded, unchanged.decided) == (0, 0, 0)  # nothing changed: nothing done
    store.close()


def test_a_write_rewrites_only_the_candidates_that_changed(tmp_path, monkeypatch):
    # Deleting and inserting all 28,000 candidates took 0.9 s of adding one note to 20,000; reading
    # them all to compare, 0.1 s.
    import workbench.record.note_rows as note_rows

    store, embedder = vault(tmp_path, 300)
    query = ("SELECT rowid, chunk_id, subject, object, confidence FROM triples "
             "WHERE relation='SIMILAR_TO' AND origin='candidate'")
    _refresh(store, embedder, 0.5, 4)
    before = {row[1:]: row[0] for row in store.db.execute(query)}
    _write(store, 300, 1)
    _write(store, 12, 2)

    def every_row(*args):
        raise AssertionError("every candidate row compared")

    monkeypatch.setattr(note_rows, "_set_note_candidates", every_row)
    _refresh(store, embedder, 0.5, 4)
    after = {row[1:]: row[0] for row in store.db.execute(query)}
    assert any("Note 300" in (row[1], row[2]) for row in after)
    kept = store.db.execute("SELECT COUNT(*) FROM note_candidates").fetchone()[0]
    assert len(store.db.execute(query).fetchall()) == len(after) == kept  # no row twice
    kept = before.keys() & after.keys()
    assert len(kept) > len(after) // 2 and all(before[row] == after[row] for row in kept)  # left where they were
    assert max(before[row] for row in kept) < min(after[row] for row in after.keys() - before.keys())  # only the new inserted

    _write(store, 5, 1, digest="h5-1-tagged")  # its text as it was: its pairs as they were, its chunks new
    _refresh(store, embedder, 0.5, 4)
    again = {row[1:]: row[0] for row in store.db.execute(query)}
    assert again.keys() == after.keys() and any(row[0] == "n005.md#1-0" for row in again)
    store.close()


def test_a_removed_note_refills_only_the_full_lists_it_was_in(tmp_path):
    store, embedder = vault(tmp_path, 200)
    _refresh(store, embedder, 0.0, 3)
    lists = store.notes.note_neighbour_lists()
    holders = [note for note, entries in lists.items() if "n007.md" in {other for other, _ in entries}]
    assert holders
    store.delete_documents(["n007.md"])
    done = _refresh(store, embedder, 0.0, 3)
    assert done.embedded == 0 and done.rows == len(holders)  # at threshold 0 every list is full
    assert "n007.md" not in store.notes.note_neighbour_lists()
    assert all("n007.md" not in {other for other, _ in entries} for entries in store.notes.note_neighbour_lists().values())
    store.close()


def test_another_threshold_or_embedder_makes_every_list_again(tmp_path):
    store, embedder = vault(tmp_path, 50)
    _refresh(store, embedder, 0.5, 4)
    assert _refresh(store, embedder, 0.6, 4).full
    assert not _refresh(store, embedder, 0.6, 4).full

    class Other(SeededVectors):
        name = "seeded-other-4"

    assert _refresh(store, Other(), 0.6, 4).full
    store.close()


def test_a_failed_refresh_leaves_the_record_as_it_was_and_the_next_one_finishes(tmp_path):
    store, embedder = vault(tmp_path, 30)
    _refresh(store, embedder, 0.5, 4)
    before = (store.notes.note_neighbour_lists(), _candidate_rows(store), _key(store.triples()), store.version)
    _write(store, 30, 1)
    version = store.version

    def fail(texts):
        raise MemoryError

    with pytest.raises(MemoryError):
        refresh_note_neighbours(store, fail, embedder.name, 0.5, NOTE_KINDS, MAX_CANDIDATES_PER_NOTE, k=4)
    assert (store.notes.note_neighbour_lists(), _candidate_rows(store), _key(store.triples())) == before[:3]
    assert store.version == version
    done = _refresh(store, embedder, 0.5, 4)
    assert done.embedded == 1 and "n030.md" in store.notes.stored_note_vectors().ids
    store.close()


def test_lists_naming_a_note_without_a_stored_vector_are_mended(tmp_path):
    """A record whose lists name a note whose vector row is missing (written by hand, or a
    damaged record): the note is compared again, never listed twice."""
    store, embedder = vault(tmp_path, 40)
    _refresh(store, embedder, 0.0, 3)
    store.db.execute("DELETE FROM note_vectors WHERE note = 'n005.md'")
    done = _refresh(store, embedder, 0.0, 3)
    assert done.embedded == 1
    assert _key(_stored_candidates(store)) == _key(note_similarity_candidates(store, embedder, 0.0, k=3))
    store.close()


def test_a_note_longer_than_a_page_has_the_mean_of_all_its_chunks(tmp_path, monkeypatch):
    import workbench.corpus.note_neighbours as neighbours

    store = Store(tmp_path / "record.sqlite")
    embedder = SeededVectors()
    for note, chunks in enumerate((7, 1, 5)):
        _write(store, note, 1, chunks=chunks)
    seen: list[int] = []
    monkeypatch.setattr(neighbours, "MEAN_PAGE_CHUNKS", 3)  # notes cross pages; no page holds more than 3

    def vectors_of(texts):
        seen.append(len(texts))
        return embed_cached(texts, store, embedder)[0]

    means = neighbours._mean_vectors(store, vectors_of, ["n000.md", "n001.md", "n002.md"])
    assert max(seen) == 3 and sum(seen) == 13
    for note, chunks in enumerate((7, 1, 5)):
        texts = [f"note {note} v1 part {p}" for p in range(chunks)]
        expected = embedder.embed(texts).astype(np.float64).sum(axis=0) / chunks
        first, mean = means[f"n{note:03d}.md"]
        assert first == f"n{note:03d}.md#1-0"
        np.testing.assert_allclose(mean, expected.astype(np.float32), rtol=1e-6)
    store.close()


def _supersedes(store: Store) -> set[tuple[str, str]]:
    return {(t.subject, t.object) for t in store.triples() if t.relation == "SUPERSEDES" and t.origin == "candidate"}


def test_a_write_searches_only_the_chunks_of_the_notes_it_changed_for_superseding_verbs(tmp_path, monkeypatch):
    import workbench.ingest.superseding as superseding

    store, embedder = vault(tmp_path, 30)
    _write(store, 30, 1, said="This replaces Note 3.")
    refresh_superseding(store, _refresh(store, embedder, 0.5, 4).changes)
    assert _supersedes(store) == {("Note 30", "Note 3")}
    searched: list = []
    search = superseding.cue_chunks
    monkeypatch.setattr(superseding, "cue_chunks", lambda db, documents=None: searched.append(documents) or
                        search(db, documents))

    _write(store, 31, 1, said="It supersedes Note 4.")
    store.delete_documents(["n030.md"])
    refresh_superseding(store, _refresh(store, embedder, 0.5, 4).changes)
    assert searched == [("n031.md",)] and _supersedes(store) == {("Note 31", "Note 4")}
    searched.clear()
    refresh_superseding(store, _refresh(store, embedder, 0.5, 4).changes)  # nothing changed
    assert searched == [()] and _supersedes(store) == {("Note 31", "Note 4")}

    store.set_meta(superseding.CUES_KEY, "{}")  # a step that died before keeping what it found
    searched.clear()
    _write(store, 4, 2, title="Note four")
    refresh_superseding(store, _refresh(store, embedder, 0.5, 4).changes)
    assert searched == [None] and _supersedes(store) == set()  # every chunk searched; "Note 4" is no title now
    store.close()


def test_a_write_of_one_note_writes_its_row_beside_the_file_of_every_note(tmp_path):
    store, embedder = vault(tmp_path, 100)
    _refresh(store, embedder, 0.5, 4)
    base, delta = matrix_files(store.path)
    written = base.stat()
    _write(store, 100, 1)
    _write(store, 7, 2)
    _refresh(store, embedder, 0.5, 4)
    held = read_note_matrix(store.path, store.meta(NOTE_MATRIX_KEY), 101)
    assert held is not None and held.delta is not None and held.delta.ids == ["n007.md", "n100.md"]
    assert (base.stat().st_ino, base.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    assert _matrix_is_the_record(store)
    store.close()


@pytest.mark.parametrize("damage", ["a flipped bit", "another token", "a row deleted from the record"])
def test_a_damaged_or_stale_file_of_unit_vectors_is_made_again_from_the_record(tmp_path, damage):
    store, embedder = vault(tmp_path, 50)
    _refresh(store, embedder, 0.5, 4)
    base, _ = matrix_files(store.path)
    if damage == "a flipped bit":
        data = bytearray(base.read_bytes())
        data[-3] ^= 0x10  # in the last row
        base.write_bytes(bytes(data))
    elif damage == "another token":
        store.notes.write_matrix_token("0123456789abcdef")
    else:
        store.db.execute("DELETE FROM note_vectors WHERE note = 'n049.md'")
    assert read_note_matrix(store.path, store.meta(NOTE_MATRIX_KEY), store.notes.note_vector_count()) is None
    _write(store, 50, 1)
    _refresh(store, embedder, 0.5, 4)
    assert _key(_stored_candidates(store)) == _key(note_similarity_candidates(store, embedder, 0.5, k=4))
    assert _matrix_is_the_record(store)
    store.close()


def test_a_candidate_accepted_is_proposed_again_by_the_next_write_as_before(tmp_path):
    # The candidates stored are those of the lists after every write that changed a note, whatever
    # happened to them between (as when every write rewrote them all); here the write is of a
    # note near no other, so that only the count of the rows finds the accepted one.
    class Apart(SeededVectors):
        def embed(self, texts):
            vectors = super().embed(texts)
            vectors[:, 3] = 0.0
            vectors[[n for n, text in enumerate(texts) if text.startswith("note 60 ")]] = [0, 0, 0, 1]
            return vectors

    store, embedder = vault(tmp_path, 60)
    embedder = Apart()
    _refresh(store, embedder, 0.5, 4)
    first = _stored_candidates(store)[0]
    assert store.accept_candidate(first.subject, "SIMILAR_TO", first.object) == 1
    assert _key(_stored_candidates(store)) != _key(note_similarity_candidates(store, embedder, 0.5, k=4))
    _write(store, 60, 1)
    assert _refresh(store, embedder, 0.5, 4).decided == 0  # no pair of the note written
    assert _key(_stored_candidates(store)) == _key(note_similarity_candidates(store, embedder, 0.5, k=4))
    store.close()


def test_a_pair_pushed_out_of_a_list_frees_its_note_for_its_next_pair(tmp_path):
    """Six notes on a sphere, one nearest note each (k = 1), one candidate a note: y's pair with
    x is kept, so z's with y is not. Then m, nearer x than y is, takes y's place in x's list, and
    the pair x-y goes (y's nearest is w): y is free again, and z's pair with it is kept."""
    def at(theta: float, tilt: float = 0.0) -> list[float]:
        theta, tilt = np.radians(theta), np.radians(tilt)
        return [np.cos(theta) * np.cos(tilt), np.sin(theta) * np.cos(tilt), np.sin(tilt)]

    places = {"u": at(0), "w": at(4), "y": at(10), "x": at(17), "z": at(10, 8), "m": at(19)}

    class Sphere(SeededVectors):
        name, dimension = "sphere-3", 3

        def embed(self, texts):
            return np.array([places[text.split()[0]] for text in texts], dtype=np.float32)

    store, embedder = Store(tmp_path / "record.sqlite"), Sphere()

    def write(note: str) -> None:
        doc = Document(f"{note}.md", f"/vault/{note}.md", note.upper(), "markdown", f"{note} note", f"h-{note}")
        store.replace_documents([(doc, [Chunk(f"{note}.md#0", doc.id, 0, f"{note} note", 0, 6)], [], [],
                                  [text_hash(f"{note} note")])])

    for note in "uwyxz":
        write(note)
    _refresh(store, embedder, 0.5, 1, cap=1)
    assert {(t.subject, t.object) for t in _stored_candidates(store)} == {("U", "W"), ("X", "Y")}
    write("m")
    _refresh(store, embedder, 0.5, 1, cap=1)
    assert {(t.subject, t.object) for t in _stored_candidates(store)} == {("M", "X"), ("U", "W"), ("Y", "Z")}
    assert _candidate_rows(store) == _as_made_whole(store, embedder, 0.5, 1, tmp_path, 1)
    store.close()


def test_the_first_notes_of_a_record_that_held_none_are_written_beside_its_empty_file(tmp_path):
    """A record of passages and no note (a corpus of records), then notes: the file of no vectors
    takes their rows (its empty rows have no width of theirs: this failed the write once)."""
    store, embedder = vault(tmp_path, 0)
    _refresh(store, embedder, 0.5, 4)  # no note: the file holds no row
    _write(store, 1, 1)
    _write(store, 2, 1)
    _refresh(store, embedder, 0.5, 4)
    assert _matrix_is_the_record(store)
    _write(store, 3, 1)
    _refresh(store, embedder, 0.5, 4)
    assert _matrix_is_the_record(store)
    store.close()
