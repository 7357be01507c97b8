"""Each note's nearest notes, kept in the record and updated by what a write changed.

The ``SIMILAR_TO`` candidates between notes come from each note's :data:`NEAREST_NOTES` most
similar notes (:func:`~workbench.extract.notes.similar_note_candidates` finds them for a whole
corpus at once). Doing that again at every write cost an ingest of one note into a vault of
20,000 a full pass over every note's chunks and a product of every note with every other.
Here the record keeps, beside the documents:

- ``note_vectors``: each note's mean chunk vector (float32), the content hash it was made from,
  and the note's first chunk (the one a candidate cites);
- ``note_neighbours``: each note's nearest notes above the threshold (at most ``k``), with the
  float32 similarity they were ranked by;
- ``note_candidates``: the pairs kept as candidates, by their notes' ids, with their titles and
  similarity;

and a file beside it holds every note's unit vector (:mod:`workbench.corpus.note_matrix`), so a
write reads one array rather than a row per note.

A write then touches only what changed. Notes removed or changed leave every list they were in;
a list that was full (``k`` entries) and lost one is computed again, since its next neighbour is
not known. Notes added or changed get their own list from one row of products against every
note, and enter the lists of the notes they are near. The candidates are the pairs of notes at
least ``threshold`` similar one of which has the other among its ``k`` nearest, then at most
``max_per_note`` a title, best pairs first: only the titles whose pairs the write changed, and
those the change reaches along kept pairs, are decided again
(:func:`~workbench.corpus.note_pairs.rekeep`), and only their rows written (tested equal to the
whole-corpus search after random sequences of additions, changes and removals).

The lists are kept for one embedder, threshold, ``k`` and ``max_per_note`` (the meta key
:data:`NEIGHBOURS_KEY`); when any of them changes, every list is made again. Everything a
refresh writes to the record (vectors, lists, kept pairs, candidates and that key) is one
transaction, so a refresh that fails leaves the record as it was and the next one finds the same
work to do.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..extract.notes import BLOCK_ELEMENTS, NEAREST_NOTES, SLACK, unit_rows
from ..model import Triple
from ..record.note_rows import NOTE_MATRIX_KEY, NeighbourWrites, NoteRows, StoredNoteVectors
from ..record.note_rows import NOTE_NEIGHBOURS_KEY as NEIGHBOURS_KEY
from ..record.store import Store
from ..runtime.gc_paused import gc_paused
from .note_matrix import HeldMatrix, NoteMatrix, read_note_matrix, write_note_matrix
from .note_pairs import CandidateRow, Pair, keep_best, rekeep

__all__ = ["NEIGHBOURS_KEY", "NeighbourRefresh", "NoteChanges", "refresh_note_neighbours", "best_per_note",
           "nearest_in_rows"]

_FORMAT = 2
#: Chunks (and their vectors) read at once while averaging the notes' vectors.
MEAN_PAGE_CHUNKS = 1000
#: Note pairs whose exact cosine is computed at once: small enough that their two gathered rows
#: stay in the CPU cache for the products (larger slices were slower, with the same cosines).
PAIRS_AT_ONCE = 1024
#: Notes whose unit vectors are made at once (a block's float64 copy stays in the CPU cache).
UNIT_BLOCK = 2048

VectorsOf = Callable[[Sequence[str]], np.ndarray]
"""``vectors_of(texts)``: the chunk vectors of ``texts`` (float32 rows), cached or computed."""


@dataclass(frozen=True)
class NoteChanges:
    """The notes a refresh found changed since the stored vectors' last state."""

    before: str | None
    """The token of the state it started from (None when unknown: every note counts as changed)."""
    after: str | None
    """The token of the state it left."""
    leaving: frozenset[str] = frozenset()
    """Notes whose chunks went: removed or changed."""
    fresh: tuple[str, ...] = ()
    """Notes whose chunks are new: added or changed."""


@dataclass
class NeighbourRefresh:
    """What one refresh did and how much it had to compute."""

    notes: int
    """Notes in the record."""
    removed: int
    """Notes whose stored vector went (removed or changed; 0 when every list was made again)."""
    embedded: int
    """Notes whose mean vector was made (added, changed, or every note after a key change)."""
    rows: int
    """Notes whose nearest-note list was computed against every note."""
    decided: int
    """Note pairs above the threshold whose keeping was decided (only those of the titles touched)."""
    full: bool
    """Whether every list was made again (no lists yet, or another embedder, threshold, k or cap)."""
    changes: NoteChanges
    """The notes found changed."""


@gc_paused()  # tens of thousands of acyclic rows read: collecting them only cost time
def refresh_note_neighbours(store: Store, vectors_of: VectorsOf, space: str, threshold: float,
                            kinds: Sequence[str], max_per_note: int, k: int = NEAREST_NOTES,
                            full: bool = False) -> NeighbourRefresh:
    """Bring the stored neighbour lists and the ``SIMILAR_TO`` candidates up to date with the
    notes (documents of ``kinds``) in the record; ``full`` makes every list again.

    ``space`` names the embedder whose vectors ``vectors_of`` gives; ``threshold`` and ``k``
    are those of :func:`~workbench.extract.notes.similar_note_candidates`, ``max_per_note``
    the candidates a title takes part in at most.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    key = json.dumps([_FORMAT, space, repr(float(threshold)), k, sorted(kinds), max_per_note])
    if full or store.meta(NEIGHBOURS_KEY) != key:
        return _refresh_all(store, vectors_of, key, threshold, kinds, max_per_note, k)
    ids, titles, hashes = store.notes.all_note_documents(kinds)
    token, count = store.meta(NOTE_MATRIX_KEY), store.notes.note_vector_count()
    held_matrix = read_note_matrix(store.path, token, count) or _matrix_of(store.notes.stored_note_vectors())
    # Notes and hashes compared as sets of pairs (a note changed is in both differences). A note
    # whose document kept its hash kept its chunks: only the others are asked for one.
    held, present = held_matrix.hashes(), dict(zip(ids, hashes))
    gone = {note for note, _ in held.items() - present.items()}
    digest_of = dict(present.items() - held.items())
    fresh = sorted(store.notes.with_chunks(digest_of))
    if not (gone or fresh):
        after = token if held_matrix.token else store.notes.write_matrix_token(write_note_matrix(store.path,
                                                                                                  held_matrix.base))
        return NeighbourRefresh(count, 0, 0, 0, 0, False, NoteChanges(token, after))

    leaving = gone | set(fresh)  # notes that leave every list and pair (a changed one comes back)
    made = _mean_vectors(store, vectors_of, fresh)
    unit = _unit32(np.vstack([mean for _, mean in made.values()])) if made else np.zeros((0, 1), np.float32)
    matrix = held_matrix.after(leaving, {note: (digest_of[note], row) for note, row in zip(made, unit)})
    notes = _Notes(matrix, made, store.notes, keep_units=True)
    lists, computed = _follow_lists(store.notes, notes, leaving, made, k, float(np.float32(threshold - SLACK)))

    left = store.notes.note_candidates_of(leaving)  # kept pairs that go, under their titles before
    book = _PairBook(store.notes, notes, lists, dict(zip(ids, titles)), threshold, left)
    # Titles whose pairs may have changed: those of every list written again, of the entries it
    # lost (a pair may have gone) and of the kept pairs of the notes that left.
    touched = {book.title(note) for note in lists.now}
    touched |= {book.title(other) for note in lists.now if note not in leaving
                for other, _ in lists.before.get(note, ()) if notes.has(other)}
    touched |= {name for record in left for name in record[2:4]}
    before, now = rekeep(book, touched, max_per_note)
    dropped = sorted(pair for pair, row in before.items() if now.get(pair) != row)
    kept = [(*pair, row.subject, row.object, row.confidence) for pair, row in sorted(now.items())
            if before.get(pair) != row]
    after = write_note_matrix(store.path, matrix, held_matrix, leaving)
    store.notes.write_note_neighbours(NeighbourWrites(
        key, False, removed=sorted(gone),
        vectors=[(note, digest_of[note], first, mean) for note, (first, mean) in made.items()],
        lists={note: lists.now[note] for note in sorted(lists.now)}, dropped=dropped, kept=kept, matrix=after))
    return NeighbourRefresh(len(notes.ids), len(gone), len(made), len(computed), book.decided, False,
                            NoteChanges(token, after, frozenset(leaving), tuple(fresh)))


def _follow_lists(rows: NoteRows, notes: _Notes, leaving: set[str], made: Mapping[str, object], k: int,
                  floor: float) -> tuple[_Lists, list[int]]:
    """The lists after a write, and the rows computed against every note: ``leaving`` notes leave
    every list (a list that was full and lost one is computed again, since its next neighbour is
    not known); ``made`` notes get their own list and enter the lists they are near."""
    lists = _Lists(rows, leaving)
    refill: set[str] = set()
    holders = {note for note, _ in rows.naming(leaving)} - leaving
    lists.read(holders)
    for note in holders:
        entries = lists.get(note)
        lists.set(note, [(other, s) for other, s in entries if other not in leaving])
        if len(entries) >= k:
            refill.add(note)
    computed = sorted(notes.row(i) for i in made.keys() | refill)
    for row, (cols, sims) in nearest_in_rows(notes.unit32, computed, k, floor).items():
        lists.set(notes.ids[row], [(notes.ids[c], s) for c, s in zip(cols, sims)])
    entering = entries_beyond(notes.unit32, sorted(notes.row(i) for i in made), computed, floor)
    lists.read({notes.ids[other] for _, other, _ in entering})
    for row, other, similarity in entering:
        note, entry = notes.ids[other], (notes.ids[row], similarity)
        entries = lists.get(note)
        if len(entries) >= k and _rank(entry) > _rank(entries[-1]):
            continue
        lists.set(note, sorted([*entries, entry], key=_rank)[:k])
    return lists, computed


def _refresh_all(store: Store, vectors_of: VectorsOf, key: str, threshold: float, kinds: Sequence[str],
                 max_per_note: int, k: int) -> NeighbourRefresh:
    """Every note's vector, list and kept pairs made again, as a write of them all."""
    docs = store.notes.note_documents(kinds)  # id -> (title, content hash)
    made = _mean_vectors(store, vectors_of, sorted(docs))
    ids = sorted(made)
    matrix = NoteMatrix(ids, [docs[note][1] for note in ids],
                        _unit32(np.vstack([made[note][1] for note in ids])) if ids else np.zeros((0, 1), np.float32))
    notes = _Notes(matrix, made, store.notes)
    floor = float(np.float32(threshold - SLACK))
    lists = {notes.ids[row]: [(notes.ids[c], s) for c, s in zip(cols, sims)]
             for row, (cols, sims) in nearest_in_rows(notes.unit32, range(len(notes.ids)), k, floor).items()}
    pairs = _pairs(((note, other) for note, entries in lists.items() for other, _ in entries), notes,
                   lambda note: docs[note][0], threshold)
    kept = keep_best(pairs, max_per_note)
    after = write_note_matrix(store.path, matrix)
    store.notes.write_note_neighbours(NeighbourWrites(
        key, True, vectors=[(note, docs[note][1], first, mean) for note, (first, mean) in made.items()],
        lists=lists, kept=[(*pair, row.subject, row.object, row.confidence) for pair, row in sorted(kept.items())],
        matrix=after))
    return NeighbourRefresh(len(notes.ids), 0, len(made), len(notes.ids), len(pairs), True, NoteChanges(None, after))


def _matrix_of(stored: StoredNoteVectors) -> HeldMatrix:
    """The matrix of the vectors read from the record."""
    return HeldMatrix(NoteMatrix(stored.ids, stored.hashes, _unit32(stored.means)))


class _Notes:
    """The notes a refresh leaves in the record: sorted ids, unit vectors, and mean vectors read
    from the record when first asked. With ``keep_units`` (a write of a few notes, whose chain
    of titles meets the same notes again and again) each note's float64 unit vector is kept once
    made."""

    def __init__(self, matrix: NoteMatrix, made: Mapping[str, tuple[str, np.ndarray]], rows: NoteRows,
                 keep_units: bool = False) -> None:
        self.matrix, self.ids, self.unit32, self.rows = matrix, matrix.ids, matrix.unit32, rows
        self.means: dict[str, np.ndarray] = {note: mean for note, (_, mean) in made.items()}
        self.units: dict[str, np.ndarray] | None = {} if keep_units else None
        self.present: set[str] | None = None

    def row(self, note: str) -> int:
        """The row of a note that is in the record."""
        n = self.matrix.row(note)
        assert n is not None, note
        return n

    def has(self, note: str) -> bool:
        if self.present is None:
            self.present = set(self.ids)
        return note in self.present

    def unit64_of(self, notes: Sequence[str]) -> np.ndarray:
        """The float64 unit vectors of ``notes`` (rows, in that order): each made alone from its
        mean, so it is the same whichever notes come with it."""
        if self.units is None:
            return unit_rows(self._means_of(notes).astype(np.float64))
        missing = list(dict.fromkeys(note for note in notes if note not in self.units))
        if missing:
            self.units.update(zip(missing, unit_rows(self._means_of(missing).astype(np.float64))))
        return np.vstack([self.units[note] for note in notes])

    def _means_of(self, notes: Sequence[str]) -> np.ndarray:
        """The mean vectors of ``notes`` (float32 rows, in that order)."""
        missing = {note for note in notes if note not in self.means}
        if missing:
            self.means.update(self.rows.note_means(missing))
        return np.vstack([self.means[note] for note in notes])


def _unit32(means: np.ndarray) -> np.ndarray:
    """``means`` as unit rows: made in float64, a block at a time (each row is made alone, so
    blocks change nothing), kept in float32."""
    unit = np.empty(means.shape, dtype=np.float32)
    for lo in range(0, len(means), UNIT_BLOCK):
        unit[lo:lo + UNIT_BLOCK] = unit_rows(means[lo:lo + UNIT_BLOCK].astype(np.float64))
    return unit


def _pairs(near: Iterable[tuple[str, str]], notes: _Notes, title: Callable[[str], str],
           threshold: float) -> dict[Pair, CandidateRow]:
    """The pairs of ``near`` (two notes, one listing the other) at least ``threshold`` similar in
    float64, as candidate rows (confidence at most 1). Each note's vector is made a unit vector
    alone, so a pair's cosine is the same whichever pairs come with it."""
    pairs = list(dict.fromkeys((min(x, y), max(x, y)) for x, y in near if x != y))
    similarity = np.empty(len(pairs))
    for lo in range(0, len(pairs), PAIRS_AT_ONCE):  # a slice of pairs at a time, in the CPU cache
        part = pairs[lo:lo + PAIRS_AT_ONCE]
        similarity[lo:lo + len(part)] = np.einsum("ij,ij->i", notes.unit64_of([a for a, _ in part]),
                                                  notes.unit64_of([b for _, b in part]))
    return {(a, b): CandidateRow(title(a), title(b), min(s, 1.0))
            for (a, b), s in zip(pairs, similarity.tolist()) if s >= threshold}


class _Lists:
    """The neighbour lists as a write leaves them: those it writes again, the others read from
    the record when first asked (a leaving note's list is empty unless written again)."""

    def __init__(self, rows: NoteRows, leaving: set[str]) -> None:
        self.rows, self.leaving = rows, leaving
        self.before: dict[str, list[tuple[str, float]]] = {}  # stored lists read
        self.now: dict[str, list[tuple[str, float]]] = {}  # lists written again

    def read(self, notes: Iterable[str]) -> None:
        """Read the stored lists of ``notes`` not read yet, at once."""
        missing = {note for note in notes if note not in self.before and note not in self.leaving}
        if missing:
            found = self.rows.note_neighbour_lists(missing)
            self.before.update({note: found.get(note, []) for note in missing})

    def get(self, note: str) -> list[tuple[str, float]]:
        if note in self.now:
            return self.now[note]
        if note in self.leaving:
            return []
        self.read([note])
        return self.before[note]

    def set(self, note: str, entries: list[tuple[str, float]]) -> None:
        self.now[note] = entries


class _PairBook:
    """The pairs :func:`~workbench.corpus.note_pairs.rekeep` reads: now from the lists and the
    vectors, before from the record's kept pairs (``left``: those of the leaving notes)."""

    def __init__(self, rows: NoteRows, notes: _Notes, lists: _Lists, titles: Mapping[str, str],
                 threshold: float, left: Sequence[tuple[str, str, str, str, float]]) -> None:
        self.rows, self.notes, self.lists, self.titles, self.threshold, self.left = \
            rows, notes, lists, titles, threshold, left
        names = [titles[note] for note in notes.ids]
        self.only: dict[str, str] = dict(zip(names, notes.ids))  # title -> its note
        self.shared: dict[str, list[str]] = {}  # title -> its notes, when several notes have it
        if len(self.only) < len(names):
            for name, count in Counter(names).items():
                if count > 1:
                    self.shared[name] = [note for note in notes.ids if titles[note] == name]
        self.named_now: defaultdict[str, set[str]] = defaultdict(set)  # note -> notes whose rewritten list names it
        for note, entries in lists.now.items():
            for other, _ in entries:
                self.named_now[other].add(note)
        self.kept: dict[str, dict[Pair, CandidateRow]] = {}  # title -> its pairs kept before
        self.kept_of: dict[str, list[tuple[str, str, str, str, float]]] = {}  # note -> its pairs kept before
        self.decided = 0

    def title(self, note: str) -> str:
        return self.titles[note]

    def members(self, title: str) -> list[str]:
        """The notes of ``title``."""
        return self.shared.get(title) or ([self.only[title]] if title in self.only else [])

    def pairs_of(self, title: str) -> dict[Pair, CandidateRow]:
        members = self.members(title)
        now, leaving = self.lists.now, self.lists.leaving
        # The stored lists of the members and those naming them, unless written again (or gone).
        near = [(note, other) for note, other in self.rows.entries_of(members) if note not in now and note not in leaving]
        near += [(note, other) for note in members if note in now for other, _ in now[note]]
        near += [(holder, note) for note in members for holder in self.named_now.get(note, ())]
        near = [(a, b) for a, b in near if self.notes.has(a) and self.notes.has(b)]
        self._read_kept({note for pair in near for note in pair})  # the next titles the chain asks for
        found = _pairs(near, self.notes, self.title, self.threshold)
        self.decided += len(found)
        return found

    def kept_before(self, title: str) -> dict[Pair, CandidateRow]:
        if title not in self.kept:
            members = self.members(title)
            self._read_kept(members)
            records = [*(record for note in members for record in self.kept_of[note]), *self.left]
            self.kept[title] = {(a, b): CandidateRow(s, o, c) for a, b, s, o, c in records if title in (s, o)}
        return self.kept[title]

    def _read_kept(self, notes: Iterable[str]) -> None:
        """Read the kept pairs of ``notes`` not read yet, at once."""
        missing = {note for note in notes if note not in self.kept_of}
        if missing:
            self.kept_of.update({note: [] for note in missing})
            for record in self.rows.note_candidates_of(missing):
                for note in record[:2]:
                    if note in missing:
                        self.kept_of[note].append(record)


def _rank(entry: tuple[str, float]) -> tuple[float, str]:
    """A list's order: most similar first, then by note id (as the whole-corpus search breaks ties)."""
    return -entry[1], entry[0]


def nearest_in_rows(unit32: np.ndarray, rows: Sequence[int], k: int,
                    floor: float) -> dict[int, tuple[list[int], list[float]]]:
    """For each row index in ``rows``, its at most ``k`` most similar other rows of ``unit32``
    (unit vectors) at or above ``floor``: ``row -> (columns, similarities)``, best first, ties
    by column. Computed a block of rows at a time (about :data:`BLOCK_ELEMENTS` similarities).

    Examples
    --------
    >>> unit = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
    >>> found = nearest_in_rows(unit, [0, 2], k=1, floor=0.5)
    >>> found[0][0], found[2][0]
    ([1], [1])
    """
    n = len(unit32)
    out: dict[int, tuple[list[int], list[float]]] = {}
    if not rows or n < 2:
        return {row: ([], []) for row in rows}
    step = max(1, min(1024, BLOCK_ELEMENTS // n))
    best = min(k, n - 1)
    for lo in range(0, len(rows), step):
        part = np.asarray(rows[lo:lo + step])
        block = unit32[part] @ unit32.T
        block[np.arange(len(part)), part] = -np.inf  # not a note's own neighbour
        top = np.argpartition(-block, best - 1, axis=1)[:, :best] if best < n else np.argsort(-block, axis=1)
        for i, row in enumerate(part.tolist()):
            cols = top[i][block[i, top[i]] >= floor]
            sims = block[i, cols]
            keep = np.lexsort((cols, -sims))
            out[row] = (cols[keep].tolist(), sims[keep].tolist())
    return out


def entries_beyond(unit32: np.ndarray, rows: Sequence[int], computed: Sequence[int],
                   floor: float) -> list[tuple[int, int, float]]:
    """``(row, other, similarity)`` for each row of ``rows`` and each other row not in
    ``computed`` at least ``floor`` similar to it (float32, as the lists are ranked), a block of
    rows at a time. When every row was computed there is nothing to enter (a first ingest).

    Examples
    --------
    >>> unit = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
    >>> [(r, o) for r, o, _ in entries_beyond(unit, [0], [0], 0.5)]
    [(0, 1)]
    """
    n = len(unit32)
    if not rows or len(computed) >= n:
        return []
    step = max(1, min(1024, BLOCK_ELEMENTS // n))
    found: list[tuple[int, int, float]] = []
    for lo in range(0, len(rows), step):
        part = np.asarray(rows[lo:lo + step])
        block = unit32[part] @ unit32.T  # every column, not a gathered copy of the others
        block[:, list(computed)] = -np.inf
        r, c = np.nonzero(block >= floor)
        found += zip(part[r].tolist(), c.tolist(), block[r, c].tolist())
    return found


def best_per_note(found: Sequence[Triple], max_per_note: int) -> list[Triple]:
    """The candidates kept, best pairs first (as ``found`` comes), each note in at most
    ``max_per_note`` of them, so near-identical notes stay linear.

    Examples
    --------
    >>> found = [Triple("A", "SIMILAR_TO", "B", "", 0.9, "candidate"), Triple("A", "SIMILAR_TO", "C", "", 0.8, "candidate")]
    >>> [(t.subject, t.object) for t in best_per_note(found, 1)]
    [('A', 'B')]
    """
    kept = []
    per_note: defaultdict[str, int] = defaultdict(int)
    for triple in found:
        if per_note[triple.subject] < max_per_note and per_note[triple.object] < max_per_note:
            per_note[triple.subject] += 1
            per_note[triple.object] += 1
            kept.append(triple)
    return kept


def _mean_vectors(store: Store, vectors_of: VectorsOf, notes: Sequence[str]) -> dict[str, tuple[str, np.ndarray]]:
    """``note -> (first chunk id, mean chunk vector)`` for ``notes``, a page of chunks at a time
    (a note of 200,000 chunks holds one page of vectors, not all of them). The mean is summed in
    float64 chunk by chunk and kept in float32, as the whole-corpus step makes it."""
    out: dict[str, tuple[str, np.ndarray]] = {}
    total: np.ndarray | None = None
    count, current, first = 0, "", ""
    for chunks in store.notes.chunk_pages_of_documents(notes, MEAN_PAGE_CHUNKS):  # by document, then ordinal
        vectors = vectors_of([text for _, _, text in chunks])
        for (document, chunk_id, _), vector in zip(chunks, vectors.astype(np.float64)):
            if document != current:
                if total is not None:
                    out[current] = (first, (total / count).astype(np.float32))
                current, first, total, count = document, chunk_id, vector.copy(), 1
            else:
                total += vector
                count += 1
    if total is not None:
        out[current] = (first, (total / count).astype(np.float32))
    return out
